-- Evidence behind findings. The current captures of a regression become
-- forensic (kept past retention); the baseline captures it was compared
-- with are pinned for as long as the finding is open, so the comparison
-- can always be reproduced.
create table capture_pins (
	profile_id bigint not null references profiles (id) on delete cascade,
	finding_id bigint not null references findings (id) on delete cascade,
	created_at timestamptz not null default now(),
	primary key (profile_id, finding_id)
);
create index capture_pins_finding on capture_pins (finding_id);

alter table findings add column resolved_at timestamptz,
	add column resolution_note text;
