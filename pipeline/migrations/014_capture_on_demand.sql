-- 014_capture_on_demand: captures asked for when they matter (profreg
-- serve, its Alertmanager webhook, profreg escalate), and the safeguards
-- that keep the profiler from becoming the incident, enforced here so
-- that they hold across every serve and escalate process.

-- Bearer tokens of the trigger API. Only the SHA-256 of a token is kept
-- (the token is shown once, when created). Owned by jobs/tokens.c.
create table api_tokens (
	id bigserial primary key,
	team text not null check (length(team) between 1 and 128),
	-- the services it may trigger, all of the team's when null
	services text[] check (services is null or cardinality(services) between 1 and 256),
	token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
	-- the token's first characters, to tell tokens apart in a list
	hint text not null check (length(hint) between 1 and 16),
	created_at timestamptz not null default now(),
	created_by text not null,
	expires_at timestamptz,
	revoked_at timestamptz,
	revoked_by text
);

-- What was asked: capture `types` for `seconds` on `hosts` of a service.
-- A row is claimed by whichever serve process is free (state running,
-- a lease); one whose lease ran out (its process died) is claimed again.
-- Owned by jobs/capreq.c.
create table capture_requests (
	id bigserial primary key,
	service_id bigint not null references services (id) on delete cascade,
	hosts text[] not null check (cardinality(hosts) between 1 and 64),
	seconds int not null check (seconds between 1 and 600),
	types text[] not null check (cardinality(types) between 1 and 4),
	reason text not null check (length(reason) between 1 and 1024),
	source text not null check (source in ('api', 'alertmanager', 'escalate')),
	-- the incident it belongs to: "req-<id>" or the alert's fingerprint
	incident text check (length(incident) between 1 and 256),
	token_id bigint references api_tokens (id) on delete set null,
	requested_by text not null check (length(requested_by) between 1 and 256),
	state text not null default 'queued'
		check (state in ('queued', 'running', 'done', 'refused', 'failed')),
	created_at timestamptz not null default now(),
	started_at timestamptz,
	lease_until timestamptz,
	finished_at timestamptz,
	worker text,
	attempts int not null default 0,
	capture_ids bigint[] not null default '{}',
	error text check (length(error) <= 4096)
);
create index capture_requests_queued on capture_requests (id) where state in ('queued', 'running');
create index capture_requests_hosts on capture_requests using gin (hosts);
create index capture_requests_created on capture_requests (created_at);

-- Elevated sessions: a host profiled more than its normal schedule, at
-- level 1 or 2, until expires_at at the latest whatever the signal does.
-- A host has at most one open session. Owned by jobs/capreq.c.
create table elevated_sessions (
	id bigserial primary key,
	service_id bigint not null references services (id) on delete cascade,
	host text not null check (length(host) between 1 and 256),
	level int not null check (level in (1, 2)),
	source text not null check (source in ('api', 'alertmanager', 'escalate')),
	reason text not null check (length(reason) between 1 and 1024),
	incident text check (length(incident) between 1 and 256),
	started_at timestamptz not null default now(),
	expires_at timestamptz not null,
	ended_at timestamptz,
	end_reason text check (end_reason in ('expired', 'resolved', 'deescalated')),
	check (expires_at > started_at)
);
create unique index elevated_sessions_open on elevated_sessions (host) where ended_at is null;
create index elevated_sessions_host_started on elevated_sessions (host, started_at);

-- Request counters of the rate limits: one row per key ("token:<id>",
-- "global") and window, incremented in one statement. Owned by
-- jobs/capreq.c.
create table rate_counters (
	key text not null check (length(key) between 1 and 128),
	window_start timestamptz not null,
	n bigint not null check (n >= 0),
	primary key (key, window_start)
);
