-- A run's detail to the roles of one team (017 left it whole).
--
-- A run without a service (the nightly over every service, retention,
-- escalate) is visible to every team role (017: "run records only"), but
-- its detail names every service it looked at: each one's status and
-- failure or skip reason, per-service counts, errors. Row security cannot
-- hide part of a row, so team roles lose the column and read it through
-- profreg_run_detail, which keeps, for a run without a service, only the
-- entries of "services" whose service the role sees and the top-level
-- numbers; a run of one service is whole to the roles that see it.
-- Admins read the column as before. Owner: jobs/runs.c.

create function profreg_run_detail(run_id bigint, invoker name default current_user)
	returns jsonb
	language plpgsql stable security definer
	as $$
declare
	d jsonb;
	sid bigint;
	t text;
begin
	if not pg_has_role(session_user, invoker, 'MEMBER') then
		raise exception 'role "%" cannot read as "%"', session_user, invoker
			using errcode = '42501';
	end if;
	select r.detail, r.service_id, s.team into d, sid, t
		from runs r left join services s on s.id = r.service_id where r.id = run_id;
	if d is null or profreg_role_is_admin(invoker) then
		return d;
	end if;
	if sid is not null then
		return case when profreg_role_sees_team(invoker, t) then d end;
	end if;
	return (select coalesce(jsonb_object_agg(e.k, e.v), '{}') from jsonb_each(d) e(k, v)
		 where jsonb_typeof(e.v) in ('number', 'boolean'))
	    || case when jsonb_typeof(d -> 'services') = 'object' then
			jsonb_build_object('services',
				(select coalesce(jsonb_object_agg(e.k, e.v), '{}')
				   from jsonb_each(d -> 'services') e(k, v)
				   join services s on s.name = e.k
				  where profreg_role_sees_team(invoker, s.team)))
		    else '{}' end;
end $$;

do $$
begin
	execute format('alter function profreg_run_detail(bigint, name)'
		       ' set search_path = %I, pg_temp', current_schema());
end $$;
revoke execute on function profreg_run_detail(bigint, name) from public;

-- As 017's, and a role that is no admin reads every column of runs but detail.
create or replace function profreg_access_apply(r name, is_admin boolean) returns void
	language plpgsql
	as $$
declare
	sch text := (select n.nspname from pg_class c join pg_namespace n on n.oid = c.relnamespace
		     where c.oid = 'access_grants'::regclass);
begin
	execute format('grant usage on schema %I to %I', sch, r);
	execute format('grant select on all tables in schema %I to %I', sch, r);
	execute format('grant execute on function profreg_read(text, bigint[], boolean, text, name),'
		       ' profreg_read_snapshot(text, bigint, name),'
		       ' profreg_run_detail(bigint, name) to %I', r);
	if is_admin then
		execute format('grant insert, update, delete on all tables in schema %I to %I',
			       sch, r);
		execute format('grant usage, select on all sequences in schema %I to %I', sch, r);
	end if;
	if not is_admin and not profreg_role_is_admin(r) then
		execute format('revoke select on runs from %I', r);
		execute format('grant select (id, kind, service_id, status, started_at, finished_at,'
			       ' created_at, backend_pid, backend_start) on runs to %I', r);
	end if;
end $$;

create or replace function profreg_access_drop(r name) returns void
	language plpgsql
	as $$
declare
	sch text := (select n.nspname from pg_class c join pg_namespace n on n.oid = c.relnamespace
		     where c.oid = 'access_grants'::regclass);
begin
	execute format('revoke all on all tables in schema %I from %I', sch, r);
	execute format('revoke all on all sequences in schema %I from %I', sch, r);
	execute format('revoke execute on function profreg_read(text, bigint[], boolean, text, name),'
		       ' profreg_read_snapshot(text, bigint, name),'
		       ' profreg_run_detail(bigint, name) from %I', r);
	execute format('revoke usage on schema %I from %I', sch, r);
end $$;

-- The roles granted before this migration get the same.
do $$
declare
	g record;
begin
	for g in select a.role, bool_or(a.admin) as admin from access_grants a
		   join pg_roles pr on pr.rolname = a.role group by a.role loop
		perform profreg_access_apply(g.role, g.admin);
	end loop;
end $$;
