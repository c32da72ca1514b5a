-- 037_deleted_captures: bytes retention deleted stay deleted.
--
-- Why: a capture retention deleted left nothing behind, so the next
-- collect found its file still in the drop folder (or an s3 object
-- uploaded again) and stored it as a new capture, which the next
-- retention deleted again: every night, with an audit row each way. Over
-- a month a night stored 936 captures of which 60 were new, and the
-- nightly grew from 4 s to 67 s.
--
-- Retention records each capture it deletes here, in the transaction
-- that deletes it: the service, the key of its bytes and its time.
-- Ingest takes bytes recorded here for that service as handled: not
-- stored again (`profreg ingest --again` stores them all the same). A
-- capture cut to a summary keeps its row, so it needs no record.
--
-- seen_at is the last time ingest met the bytes (at most once a day);
-- retention forgets a record once no ingest has met its bytes for as
-- long as the service keeps captures (summary_days): the table holds
-- what the sources still offer, not every capture ever deleted.
--
-- Owner: pipeline/db.c (retention writes and prunes through it).

create table deleted_captures (
	service_id bigint not null references services (id) on delete cascade,
	blob_key text not null check (blob_key ~ '^[0-9a-f]{64}$'),
	captured_at timestamptz not null,
	deleted_at timestamptz not null default now(),
	seen_at timestamptz not null default now(),
	primary key (service_id, blob_key)
);

-- A team role sees the records of its teams' services, as it sees their captures.
alter table deleted_captures enable row level security;
create policy deleted_captures_team on deleted_captures
	using (service_id in (select s.id from services s))
	with check (service_id in (select s.id from services s));

-- Roles granted access (017) keep on the new table what they have on
-- profiles: every role reads, an admin that ingests or runs retention
-- writes.
do $$
declare
	g record;
begin
	for g in select grantee, privilege_type from information_schema.role_table_grants
		  where table_schema = current_schema() and table_name = 'profiles'
		    and grantee <> current_user
		    and privilege_type in ('SELECT', 'INSERT', 'UPDATE', 'DELETE') loop
		execute format('grant %s on deleted_captures to %I', g.privilege_type, g.grantee);
	end loop;
end $$;
