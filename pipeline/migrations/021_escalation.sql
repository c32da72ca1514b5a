-- 021_escalation: profreg escalate. The signals it reads from Prometheus
-- for each host (kept, so that later runs build each host's band from
-- them and a backtest can replay them), and each host's escalation level.
-- The sessions and captures that escalation opens are capture_requests and
-- elevated_sessions (014), admitted under the same safeguards as serve's.

-- One value of one signal of one host, as a run of escalate read it.
-- `outside`: above the host's band when it was read; such samples are
-- kept out of later bands, so that a long incident does not become the
-- host's normal. Owned by jobs/signals.c.
create table signal_samples (
	id bigserial primary key,
	service_id bigint not null references services (id) on delete cascade,
	host text not null check (length(host) between 1 and 256),
	signal text not null check (signal ~ '^[a-z0-9_]{1,64}$'),
	at timestamptz not null,
	value double precision not null check (value = value
		and value < 'infinity'::float8 and value > '-infinity'::float8),
	outside boolean not null default false
);
create index signal_samples_series on signal_samples (service_id, signal, host, at);
create index signal_samples_at on signal_samples (at);

-- Each host's escalation level: 0 normal schedule, 1 a signal crossed
-- its band (longer, more frequent captures), 2 it persists or is large
-- (back-to-back CPU and a heap profile, until level2_until). A host above
-- 0 has an open elevated session (session_id); when that session ends
-- (expiry, de-escalation) the host is back at 0. Owned by jobs/escalate.c.
create table escalation_hosts (
	service_id bigint not null references services (id) on delete cascade,
	host text not null check (length(host) between 1 and 256),
	level int not null default 0 check (level between 0 and 2),
	changed_at timestamptz not null,
	-- consecutive runs that found the host outside its band
	out_runs int not null default 0 check (out_runs >= 0),
	-- since when the host has been back inside its band (de-escalation cooldown)
	in_band_since timestamptz,
	level2_until timestamptz,
	-- level 2 is used once per session
	level2_used boolean not null default false,
	last_capture_at timestamptz,
	session_id bigint,
	primary key (service_id, host),
	check ((level = 0) = (session_id is null))
);

alter table signal_samples enable row level security;
create policy signal_samples_team on signal_samples
	using (profreg_is_admin() or service_id in (select s.id from services s))
	with check (profreg_is_admin());

alter table escalation_hosts enable row level security;
create policy escalation_hosts_team on escalation_hosts
	using (profreg_is_admin() or service_id in (select s.id from services s))
	with check (profreg_is_admin());
