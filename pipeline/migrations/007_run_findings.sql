-- 007_run_findings: which findings each run reported.
--
-- A finding still open is updated in place by every later run that sees
-- it again, and its run_id moves to the latest. The report of an earlier
-- run (`profreg report --run ID`, `profreg run show ID`) still lists what
-- that run found through this table.
create table run_findings (
	run_id bigint not null references runs (id) on delete cascade,
	finding_id bigint not null references findings (id) on delete cascade,
	primary key (run_id, finding_id)
);
create index run_findings_finding on run_findings (finding_id);

insert into run_findings (run_id, finding_id)
	select run_id, id from findings where run_id is not null
	on conflict do nothing;
