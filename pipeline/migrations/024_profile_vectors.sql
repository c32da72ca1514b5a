-- A capture's per-function values as one row: profile_vectors holds,
-- for each capture, its function ids in ascending order and, at the same
-- places, each function's self and total value. It replaces the table
-- profile_functions, which held one row per capture and function.
--
-- Why: at fleet scale those rows were nearly all the database's work.
-- A night of 1,000 services wrote 2 million of them into two indexes
-- (the key and the function query's covering index, whose inserts land
-- on random pages), and the analysis read back some 16 million through
-- the key, one row at a time. As one row per capture, ingest writes one
-- row and one index entry a capture plus the function index below, and
-- the analysis reads a service's captures as a few dozen rows.
--
-- The function query and row security find a function's captures
-- through a GIN index on the ids: its inserts go to a pending list
-- that is merged in bulk, so they cost little at ingest.
--
-- profile_functions stays, as a view with the same columns, for every
-- reader that wants rows: a capture's top functions, a finding's
-- evidence, the counts of retention. Its shares are computed from the
-- values and the capture's total exactly as ingest computed the stored
-- ones (value / total as doubles, 0 when the total is 0), so they are
-- the same to the last bit. It runs with the reader's rights, so the row
-- security of profile_vectors and profiles applies through it.

create table profile_vectors (
	profile_id bigint primary key references profiles (id) on delete cascade,
	service_id bigint not null,
	function_ids bigint[] not null,
	self_values bigint[] not null,
	total_values bigint[] not null,
	check (cardinality(self_values) = cardinality(function_ids)
	       and cardinality(total_values) = cardinality(function_ids)),
	check (0 <= all (self_values) and 0 <= all (total_values))
);

insert into profile_vectors (profile_id, service_id, function_ids, self_values, total_values)
select pf.profile_id, p.service_id, array_agg(pf.function_id order by pf.function_id),
       array_agg(pf.self_value order by pf.function_id),
       array_agg(pf.total_value order by pf.function_id)
  from profile_functions pf join profiles p on p.id = pf.profile_id
 group by pf.profile_id, p.service_id;

create index profile_vectors_functions on profile_vectors using gin (function_ids);

-- Roles granted access (017) keep what they had on the table, on both
-- the new table and the view.
create temporary table profreg_024_grants on commit drop as
	select grantee, privilege_type from information_schema.role_table_grants
	 where table_schema = current_schema() and table_name = 'profile_functions'
	   and grantee <> current_user;

alter table profile_vectors enable row level security;
create policy profile_vectors_team on profile_vectors
	using (service_id in (select s.id from services s))
	with check (service_id in (select s.id from services s));

-- A role sees the function names its visible captures use (017), now
-- found through the GIN index.
drop policy functions_team on functions;
create policy functions_team on functions
	using (profreg_is_admin() or exists (select 1 from profile_vectors v
					     where v.function_ids @> array[functions.id]))
	with check (profreg_is_admin());

drop table profile_functions;

create view profile_functions with (security_invoker = true) as
select v.profile_id, u.function_id, u.self_value, u.total_value,
       coalesce(u.self_value::float8 / nullif(p.total_value, 0), 0) as self_share,
       coalesce(u.total_value::float8 / nullif(p.total_value, 0), 0) as total_share,
       p.captured_at, p.service_id, p.profile_type
  from profile_vectors v join profiles p on p.id = v.profile_id
 cross join lateral unnest(v.function_ids, v.self_values, v.total_values)
       as u(function_id, self_value, total_value);

do $$
declare
	g record;
begin
	for g in select * from profreg_024_grants loop
		execute format('grant %s on profile_vectors to %I', g.privilege_type, g.grantee);
		if g.privilege_type = 'SELECT' then
			execute format('grant select on profile_functions to %I', g.grantee);
		end if;
	end loop;
end $$;
