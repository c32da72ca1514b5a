-- A capture's function ids and self values once more, as one string of
-- bytes that the server sends as it holds it: self_pairs is, for each
-- place of function_ids in order, the id then the self value, each a
-- big-endian int8 (int8send), 16 bytes a function.
--
-- Why: an analysis reads the ids and self values of every capture it
-- compares, 32,000 captures of about 500 functions on a night of 1,000
-- services. Sent as arrays, even in binary, the server formats every
-- element on its own: 2.4 s of server time to send 28,000 captures'
-- two arrays, against 0.5 s for the same numbers as one bytea each,
-- on the same rows. The arrays stay: the GIN index and the function
-- query work on them, retention rewrites them, and profile_functions
-- reads them.
--
-- Null where a row was written without it (before this migration, or
-- by hand): readers then use the arrays, which are the truth. Rows are
-- not filled in here, as that costs about 2 ms a capture in SQL; new
-- captures carry the pairs from ingest. An update of the arrays
-- recomputes the pairs, so the two never disagree.

alter table profile_vectors add column self_pairs bytea;

-- Compressed with lz4 where the server has it: with pglz, writing 4,000
-- captures' rows of 500 functions took 10.2 to 10.5 s of server time
-- with the pairs against 3.7 to 5.9 s without; with lz4, 3.7 to 4.0 s,
-- and the pairs read back faster, at about twice pglz's size (4 KB more
-- a capture of 500 functions). A server built without lz4 keeps pglz.
do $$
begin
	alter table profile_vectors alter column self_pairs set compression lz4;
exception when feature_not_supported then
	null;
end
$$;
alter table profile_vectors add constraint profile_vectors_pairs_length
	check (self_pairs is null or octet_length(self_pairs) = 16 * cardinality(function_ids));

create function profreg_vector_pairs() returns trigger language plpgsql as $$
begin
	new.self_pairs := (select coalesce(string_agg(int8send(u.f) || int8send(u.s), ''::bytea
					     order by u.o), ''::bytea)
			     from unnest(new.function_ids, new.self_values)
			       with ordinality as u(f, s, o));
	return new;
end
$$;

create trigger profile_vectors_pairs before update of function_ids, self_values
	on profile_vectors for each row execute function profreg_vector_pairs();
