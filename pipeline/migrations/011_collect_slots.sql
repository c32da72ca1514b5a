-- 011_collect_slots: what collection fetched from profile sources, so
-- that collecting the same window twice asks no one twice and stores
-- nothing new, and so that a host's CPU profiles keep their cooldown
-- across runs and processes. Owned by jobs/collect.c.
create table collect_slots (
	service_id bigint not null references services (id) on delete cascade,
	-- the source ("pprof_http", "pyroscope http://h:4040", "parca ...")
	source text not null check (length(source) between 1 and 1024),
	-- what was asked: a target's host:port, or the source's query
	target text not null check (length(target) between 1 and 2048),
	profile_type text not null check (length(profile_type) between 1 and 64),
	slot_start timestamptz not null,
	slot_end timestamptz not null,
	-- the host a CPU profile ran on (pprof_http), for the cooldown
	host text,
	outcome text not null check (outcome in ('stored', 'already', 'empty')),
	capture_id bigint references profiles (id) on delete set null,
	fetched_at timestamptz not null default now(),
	primary key (service_id, source, target, profile_type, slot_start)
);
create index collect_slots_cpu_host on collect_slots (host, fetched_at)
	where profile_type = 'cpu' and host is not null;
