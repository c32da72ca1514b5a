-- 032_deploy_rollouts: every rollout of a deploy, for the warm-up.
--
-- A deploy already recorded (the same service, release and commit) that
-- is reported again is the same build rolled out once more: a canary,
-- then the whole fleet; a rollback undone; a retried CI job. Its
-- processes start again, and their first minutes are a warm-up the
-- analysis leaves out (analysis.warmup_s) around the deploy's time.
-- Until now only the first report's time was kept, so the captures of a
-- later rollout's warm-up were judged, and could fail the gate and page.
-- The deploy stays one row, its time and commit range the first
-- report's; deploy_rollouts holds the time of each later report.
--
-- A table rather than an array on the deploy: the warm-up looks a
-- capture's rollouts up by time, and an index finds them in a range
-- however many deploys a release name has had (an array had every
-- deploy of the release unnested for every capture: 16 s for 100,000
-- captures of a release deployed 2,000 times). Owner: jobs/deploys.c.

create table deploy_rollouts (
	deploy_id bigint not null references deploys (id) on delete cascade,
	service_id bigint not null references services (id),
	release text not null,
	rolled_out_at timestamptz not null,
	primary key (deploy_id, rolled_out_at)
);
create index deploy_rollouts_release on deploy_rollouts (service_id, release, rolled_out_at);

alter table deploy_rollouts enable row level security;
create policy deploy_rollouts_team on deploy_rollouts
	using (service_id in (select s.id from services s))
	with check (service_id in (select s.id from services s));

-- Roles granted access (017) have on it what they have on deploys.
do $$
declare
	g record;
begin
	for g in select grantee, privilege_type from information_schema.role_table_grants
		  where table_schema = current_schema() and table_name = 'deploys'
		    and grantee <> current_user loop
		execute format('grant %s on deploy_rollouts to %I', g.privilege_type, g.grantee);
	end loop;
end $$;
