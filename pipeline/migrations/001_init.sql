-- 001_init: the index of captures and the tables later work extends.
--
-- Applied by db_migrate in one transaction. Timestamps are timestamptz
-- throughout; profreg's sessions run with TimeZone UTC. Payloads never
-- land here: a capture row points at its blob by key.

-- db_migrate creates this table itself before it can read it; the same
-- definition stays here so the schema reads whole in one place.
create table if not exists schema_migrations (
	version int primary key,
	name text not null,
	applied_at timestamptz not null default now()
);

create table services (
	id bigserial primary key,
	name text not null unique
		check (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
	team text,
	enabled boolean not null default false,
	config jsonb not null default '{}' check (jsonb_typeof(config) = 'object'),
	created_at timestamptz not null default now(),
	updated_at timestamptz not null default now()
);

create table profiles (
	id bigserial primary key,
	service_id bigint not null references services (id),
	profile_type text not null check (length(profile_type) between 1 and 64),
	release text not null check (length(release) between 1 and 256),
	commit_sha text check (length(commit_sha) <= 256),
	host text check (length(host) <= 256),
	captured_at timestamptz not null,
	duration_ns bigint check (duration_ns >= 0),
	period bigint,
	period_type text,
	period_unit text,
	value_type text not null,
	value_unit text not null,
	total_value bigint not null check (total_value >= 0),
	sample_count bigint not null check (sample_count >= 0),
	function_count int check (function_count >= 0),
	-- SHA-256 of the original bytes, as the blob store names it.
	blob_key text not null check (blob_key ~ '^[0-9a-f]{64}$'),
	blob_bytes bigint check (blob_bytes >= 0),
	format text not null check (length(format) between 1 and 32),
	retention_class text not null default 'hot'
		check (retention_class in ('hot', 'summary', 'forensic')),
	retain_until timestamptz,
	tags jsonb not null default '{}' check (jsonb_typeof(tags) = 'object'),
	ingested_at timestamptz not null default now(),
	unique (service_id, blob_key)
);
create index profiles_service_type_time on profiles (service_id, profile_type, captured_at);
create index profiles_service_release on profiles (service_id, release);
create index profiles_blob_key on profiles (blob_key);
create index profiles_retain_until on profiles (retain_until) where retain_until is not null;

-- Interned function names. A name may be up to 64 KiB, far past what a
-- btree index row holds (about 2.7 KB), so uniqueness of (name, file) is
-- enforced on a SHA-256 of the pair instead. The key function is declared
-- immutable: convert_to is only stable because of the database encoding,
-- which never changes for an existing database.
create function profreg_function_key(name text, file text) returns bytea
	language sql immutable strict parallel safe
	as $$ select sha256(convert_to(name, 'UTF8') || decode('00', 'hex') || convert_to(file, 'UTF8')) $$;

create table functions (
	id bigserial primary key,
	name text not null,
	file text not null default '',
	key bytea generated always as (profreg_function_key(name, file)) stored,
	constraint functions_key unique (key)
);

-- One row per (capture, function): the per-function numbers written at
-- ingest. captured_at, service_id and profile_type are copied from the
-- capture so "every capture where X exceeded Y% self" is one index scan.
-- Partitioning by captured_at later needs captured_at in the primary key;
-- every column it needs is already here.
create table profile_functions (
	profile_id bigint not null references profiles (id) on delete cascade,
	function_id bigint not null references functions (id),
	self_value bigint not null check (self_value >= 0),
	total_value bigint not null check (total_value >= 0),
	self_share double precision,
	total_share double precision,
	captured_at timestamptz not null,
	service_id bigint not null,
	profile_type text not null,
	primary key (profile_id, function_id)
);
create index profile_functions_function_time on profile_functions (function_id, captured_at);
create index profile_functions_service_type_time on profile_functions (service_id, profile_type, captured_at);

-- The tables below start minimal; the work that fills them adds columns.

create table baselines (
	id bigserial primary key,
	service_id bigint not null references services (id),
	profile_type text not null,
	created_at timestamptz not null default now(),
	detail jsonb not null default '{}'
);
create index baselines_service_type on baselines (service_id, profile_type, created_at);

create table runs (
	id bigserial primary key,
	kind text not null,
	service_id bigint references services (id),
	status text not null default 'running',
	started_at timestamptz not null default now(),
	finished_at timestamptz,
	created_at timestamptz not null default now(),
	detail jsonb not null default '{}'
);
create index runs_service_started on runs (service_id, started_at);

create table findings (
	id bigserial primary key,
	run_id bigint references runs (id),
	service_id bigint not null references services (id),
	created_at timestamptz not null default now(),
	detail jsonb not null default '{}'
);
create index findings_service_created on findings (service_id, created_at);

create table deploys (
	id bigserial primary key,
	service_id bigint not null references services (id),
	release text not null,
	commit_sha text,
	deployed_at timestamptz not null default now(),
	created_at timestamptz not null default now(),
	detail jsonb not null default '{}'
);
create index deploys_service_deployed on deploys (service_id, deployed_at);

-- The paging outbox: written in the same transaction as the finding, sent
-- afterwards; the dedup key makes a retry or a re-run page once.
create table pages (
	id bigserial primary key,
	service_id bigint not null references services (id),
	finding_id bigint references findings (id),
	dedup_key text not null unique,
	status text not null default 'pending',
	created_at timestamptz not null default now(),
	sent_at timestamptz,
	detail jsonb not null default '{}'
);
create index pages_pending on pages (created_at) where status = 'pending';

create table incidents (
	id bigserial primary key,
	service_id bigint not null references services (id),
	started_at timestamptz,
	ended_at timestamptz,
	created_at timestamptz not null default now(),
	detail jsonb not null default '{}'
);
create index incidents_service on incidents (service_id, started_at);

create table audit_log (
	id bigserial primary key,
	at timestamptz not null default now(),
	actor text not null,
	action text not null,
	object text not null,
	detail jsonb not null default '{}' check (jsonb_typeof(detail) = 'object')
);
create index audit_log_at on audit_log (at);
