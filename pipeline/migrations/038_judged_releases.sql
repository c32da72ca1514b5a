-- 038_judged_releases: a release no run has judged is no baseline.
--
-- Why: a regression never becomes its own baseline only once its release
-- has a finding. A release deployed without a gate (by hand, or its CI
-- step ran out of time) and running a few hours had none, so the gate of
-- the next release, which carried the same regression, judged it against
-- a baseline holding the first one's regressed captures: a medium rise
-- instead of a high one, and the gate passed. A nightly that judged two
-- new releases of one service judged the later against the earlier's
-- captures the same way, before the earlier one's finding was stored.
--
-- Each stored analysis records here every release it judged whole (the
-- first time, with the analysis' "now"). A baseline takes a capture of
-- another release only if that release was judged by then, or if the
-- capture was taken before the service and type were first judged at
-- all (the history profreg found when it started, and every capture of
-- a database upgraded to this version: nothing was recorded before).
--
-- Owner: baselines/findings.c (written with the findings, read by
-- baselines/baseline.c's eligibility rule).

create table judged_releases (
	service_id bigint not null references services (id) on delete cascade,
	profile_type text not null,
	release text not null,
	judged_at timestamptz not null,
	primary key (service_id, profile_type, release)
);

-- The first judgement of a service and type, for the history rule.
create index judged_releases_first on judged_releases (service_id, profile_type, judged_at);

-- A team role sees the records of its teams' services, as it sees their findings.
alter table judged_releases enable row level security;
create policy judged_releases_team on judged_releases
	using (service_id in (select s.id from services s))
	with check (service_id in (select s.id from services s));

-- Roles granted access (017) keep on the new table what they have on
-- findings: every role reads, one that stores findings writes.
do $$
declare
	g record;
begin
	for g in select grantee, privilege_type from information_schema.role_table_grants
		  where table_schema = current_schema() and table_name = 'findings'
		    and grantee <> current_user
		    and privilege_type in ('SELECT', 'INSERT', 'UPDATE', 'DELETE') loop
		execute format('grant %s on judged_releases to %I', g.privilege_type, g.grantee);
	end loop;
end $$;
