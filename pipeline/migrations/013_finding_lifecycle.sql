-- 013_finding_lifecycle: findings with a life across nights.
--
-- A finding is stored once and its numbers never change; what happens to
-- it afterwards is recorded beside it:
--   state          where it is now: candidate (significant, not yet on
--                  enough looks), confirmed (pages), went_away (no longer
--                  significant once more captures came), fixed (a later
--                  release is back inside the baseline band; fixed_by
--                  names it), resolved (closed by hand). status stays
--                  'open' for candidate and confirmed, 'resolved' after.
--   finding_states every change of state, with the run and the reason.
--   finding_looks  every later look at the finding's release: the test of
--                  its function with all the captures so far.
-- Owner: baselines/findings.c.

alter table findings
	add column state text not null default 'confirmed'
		check (state in ('candidate', 'confirmed', 'went_away', 'fixed', 'resolved')),
	add column kind text not null default 'share' check (kind in ('share', 'cost')),
	add column fixed_by text;
update findings
	set state = case when status = 'open' then 'confirmed' else 'resolved' end;
create index findings_open_service on findings (service_id, profile_type)
	where status = 'open';

create table finding_states (
	id bigserial primary key,
	finding_id bigint not null references findings (id) on delete cascade,
	state text not null
		check (state in ('candidate', 'confirmed', 'went_away', 'fixed', 'resolved')),
	at timestamptz not null default now(),
	run_id bigint references runs (id) on delete set null,
	reason text not null default '' check (length(reason) <= 1024)
);
create index finding_states_finding on finding_states (finding_id, id);

insert into finding_states (finding_id, state, at, run_id, reason)
	select id, state, created_at, run_id, 'stored before finding states were kept'
	from findings;

create table finding_looks (
	finding_id bigint not null references findings (id) on delete cascade,
	look int not null check (look >= 1),
	analysed_at timestamptz not null,     -- the analysis' "now" (--at)
	run_id bigint references runs (id) on delete set null,
	significant boolean not null,
	p_value double precision,
	p_seq double precision,
	q_value double precision,
	current_share double precision,
	delta double precision,
	ci_low double precision,
	ci_high double precision,
	current_captures int,
	created_at timestamptz not null default now(),
	primary key (finding_id, analysed_at)
);

-- One root cause, one incident: regressions of one service, type and
-- release that share a call path, or a suspect commit, are members of
-- one incident; its lead pages for all of them, and the report shows
-- them as one entry.
create table finding_groups (
	id bigserial primary key,
	service_id bigint not null references services (id),
	profile_type text not null,
	release text not null,
	lead_finding_id bigint references findings (id) on delete set null,
	reason text not null check (length(reason) <= 1024),
	created_at timestamptz not null default now()
);
alter table findings add column incident_id bigint references finding_groups (id)
	on delete set null;
create index findings_incident on findings (incident_id) where incident_id is not null;
