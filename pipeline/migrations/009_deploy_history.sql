-- 009_deploy_history: a deploy's commit range is fixed when it is
-- recorded; suspect commits are stored with the run that computed them;
-- every database has an instance id, so report files of two databases
-- in one shared folder never collide.

-- The start of the deploy's commit range (--previous, else the commit of
-- the service's deploy before it in deploy time), kept so that a re-run
-- of the same post-deploy sees the same range.
alter table deploys add column previous_commit_sha text;
create index deploys_service_release on deploys (service_id, release, deployed_at);

-- Per finding and run: the suspect commits that run computed, with the
-- range they came from, or a note saying why there are none.
alter table run_findings add column suspects jsonb;

create table instance (
	singleton boolean primary key default true check (singleton),
	id uuid not null default gen_random_uuid(),
	created_at timestamptz not null default now()
);
insert into instance default values;

-- The database session that runs a job: a run still "running" whose
-- session is gone was killed, and the next run of its kind says so.
alter table runs add column backend_pid integer;
alter table runs add column backend_start timestamptz;
