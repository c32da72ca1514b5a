-- Rolling baselines and findings: what `profreg analyze` stores.

alter table baselines
	add column window_start timestamptz,
	add column window_end timestamptz,
	add column captures int not null default 0,
	add column capture_set text,          -- sha256 of the sorted capture ids
	add column releases text[] not null default '{}';
create index baselines_capture_set on baselines (service_id, profile_type, capture_set);

-- Per function: the robust summary of its self share over the baseline.
create table baseline_functions (
	baseline_id bigint not null references baselines (id) on delete cascade,
	function_id bigint not null references functions (id),
	n int not null,
	mean_share double precision not null,
	median_share double precision not null,
	mad_share double precision not null,
	ewma_share double precision not null,
	mean_vst double precision not null,
	var_vst double precision,
	var_floor double precision not null,
	mean_rate double precision,           -- self value per second, or per capture
	primary key (baseline_id, function_id)
);

alter table findings
	add column profile_type text,
	add column function_id bigint references functions (id),
	add column function text,
	add column direction text
		check (direction in ('regression', 'improvement', 'relative_shift')),
	add column baseline_share double precision,
	add column current_share double precision,
	add column delta double precision,
	add column rel_delta double precision,
	add column ci_low double precision,
	add column ci_high double precision,
	add column p_value double precision,
	add column q_value double precision,
	add column mw_p double precision,
	add column score double precision,
	add column severity text,
	add column baseline_captures int,
	add column current_captures int,
	add column current_release text,
	add column baseline_releases text[],
	add column baseline_id bigint references baselines (id) on delete set null,
	add column status text not null default 'open'
		check (status in ('open', 'resolved', 'dismissed')),
	add column fingerprint text,
	add column updated_at timestamptz not null default now();

-- One open finding per service, type, function and analysed selection:
-- re-running an analysis updates it instead of adding a second.
create unique index findings_open_fingerprint on findings (fingerprint)
	where status = 'open';
create index findings_open_release on findings (service_id, profile_type, current_release)
	where status = 'open' and direction = 'regression';
