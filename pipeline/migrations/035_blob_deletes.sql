-- 035_blob_deletes: deletes sent to an object store that may still land.
--
-- Why: a DELETE that timed out or lost its connection may have reached
-- the store and be carried out later (a request queued behind a stalled
-- server or proxy). Retention rolled back and released the key's lock;
-- an ingest of the same bytes then found the object (HEAD), committed
-- its row, and the late DELETE removed the blob under it: a capture
-- whose evidence was gone.
--
-- Retention records each key before it sends the DELETE, committed,
-- until the time the store's settings say a request can still land
-- (pipeline/blob.h, blob_delete_linger_us), and drops the record when the
-- store answered. A put under the key's lock while a record is live is
-- refused, to be tried again once it is past (db_blob_delete_doubt): the
-- object it finds, or writes, may be removed behind it. A local folder's
-- delete is over when it returns, and writes none.
--
-- Read through profreg_blob_delete_doubt: a role that ingests learns
-- only about the keys of bytes it holds, and is granted nothing here.

create table blob_deletes (
	blob_key text primary key check (blob_key ~ '^[0-9a-f]{64}$'),
	until timestamptz not null
);

alter table blob_deletes enable row level security;
create policy blob_deletes_admin on blob_deletes
	using (profreg_is_admin()) with check (profreg_is_admin());

-- The latest time a delete of one of `keys` may still land, null when
-- none may.
create function profreg_blob_delete_doubt(keys text[], out blob_key text, out until timestamptz)
	language sql stable security definer
	as $$
	select d.blob_key, d.until from blob_deletes d
	 where d.blob_key = any(keys) and d.until > now()
	 order by d.until desc limit 1
	$$;
do $$
begin
	execute format('alter function profreg_blob_delete_doubt(text[])'
		       ' set search_path = %I, pg_temp', current_schema());
end
$$;

-- Roles granted access (017) keep on the new table what they had on the
-- sweep queue: an admin role that runs retention records its deletes.
do $$
declare
	g record;
begin
	for g in select grantee, privilege_type from information_schema.role_table_grants
		  where table_schema = current_schema() and table_name = 'blob_sweep'
		    and grantee <> current_user
		    and privilege_type in ('SELECT', 'INSERT', 'UPDATE', 'DELETE') loop
		execute format('grant %s on blob_deletes to %I', g.privilege_type, g.grantee);
	end loop;
end $$;
