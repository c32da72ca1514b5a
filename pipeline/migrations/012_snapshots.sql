-- 012_snapshots: incident snapshots of a host's kernel and process state,
-- kept as forensic evidence. The archive (a tar.zst) is a blob; this row
-- indexes it by host, time and incident, with the archive's manifest.
-- Written only by jobs/snapshot.c. A snapshot is never deleted by
-- retention: its blob counts as kept, like a capture's.

create table snapshots (
	id bigserial primary key,
	host text not null check (length(host) between 1 and 256),
	taken_at timestamptz not null,
	-- The incident it belongs to, as whoever asked named it (an Alertmanager
	-- group key, a ticket); free text, not a row of `incidents`.
	incident text check (length(incident) between 1 and 256),
	reason text check (length(reason) <= 1024),
	service text check (service ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
	trigger text not null default 'manual' check (trigger ~ '^[a-z][a-z0-9_-]{0,31}$'),
	blob_key text not null unique check (blob_key ~ '^[0-9a-f]{64}$'),
	archive_bytes bigint not null check (archive_bytes >= 0),
	-- Items of the manifest not collected whole (missing or cut short).
	not_collected int not null default 0 check (not_collected >= 0),
	manifest jsonb not null check (jsonb_typeof(manifest) = 'object'),
	stored_at timestamptz not null default now(),
	stored_by text not null
);
create index snapshots_host_taken on snapshots (host, taken_at);
create index snapshots_taken on snapshots (taken_at);
create index snapshots_incident on snapshots (incident, taken_at) where incident is not null;
