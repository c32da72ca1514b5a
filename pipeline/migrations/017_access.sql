-- 017_access: access control that PostgreSQL enforces.
--
-- Each person or robot connects as its own database role. access_grants
-- says which teams' services a role (or any role it is a member of) may
-- see, whether it may read heap and alloc profiles whole (`heap`), and
-- whether it is an admin (every service, every write; the job roles:
-- nightly, workers, serve). The role that owns the schema (the one that
-- ran the migrations: the private cluster's single user) is always an
-- admin, and as the tables' owner it is not subject to row security, so
-- the embedded default works with no setup.
--
-- Row-level security is enabled on every table that holds service data;
-- the policies keep the rows of services whose team the current role
-- may see. Policies reach services through `services` itself, whose own
-- policy filters by team, so each table's policy is one semi-join.
-- Reading a capture whole, a snapshot, or a capture's numbers goes
-- through profreg_read / profreg_read_snapshot (SECURITY DEFINER): they
-- check the heap permission and write the audit row in the database, so
-- the check and the audit cannot be separated.
--
-- Owner of access_grants, the functions below and the audit_log columns
-- added here: jobs/access.c.

create table access_grants (
	role name not null check (length(role) between 1 and 63),
	-- '' only for an admin grant that names no team
	team text not null default '' check (length(team) <= 256),
	heap boolean not null default false,
	admin boolean not null default false,
	granted_at timestamptz not null default now(),
	granted_by text not null default session_user,
	primary key (role, team),
	check (team <> '' or admin)
);

-- Whether role r has the schema owner's privileges or an admin grant
-- (directly or through a role it is a member of). A superuser is a
-- member of every role.
create function profreg_role_is_admin(r name) returns boolean
	language sql stable
	as $$
	select pg_has_role(r, (select c.relowner from pg_class c
			       where c.oid = 'access_grants'::regclass), 'USAGE')
	    or exists (select 1 from access_grants g join pg_roles gr on gr.rolname = g.role
		       where g.admin and pg_has_role(r, gr.oid, 'USAGE'))
	$$;

-- Whether role r may see the services of team t.
create function profreg_role_sees_team(r name, t text) returns boolean
	language sql stable
	as $$
	select profreg_role_is_admin(r)
	    or exists (select 1 from access_grants g join pg_roles gr on gr.rolname = g.role
		       where g.team = t and pg_has_role(r, gr.oid, 'USAGE'))
	$$;

-- Whether role r may read team t's heap and alloc profiles whole.
create function profreg_role_heap(r name, t text) returns boolean
	language sql stable
	as $$
	select profreg_role_is_admin(r)
	    or exists (select 1 from access_grants g join pg_roles gr on gr.rolname = g.role
		       where g.team = t and g.heap and pg_has_role(r, gr.oid, 'USAGE'))
	$$;

create function profreg_is_admin() returns boolean
	language sql stable
	as $$ select profreg_role_is_admin(current_user) $$;

create function profreg_visible_team(t text) returns boolean
	language sql stable
	as $$ select profreg_role_sees_team(current_user, t) $$;

-- Whether the current role sees service `sid` (services' own policy decides).
create function profreg_visible_service(sid bigint) returns boolean
	language sql stable
	as $$ select exists (select 1 from services s where s.id = sid) $$;

-- The profile types whose whole profile needs the heap permission.
create function profreg_heap_type(t text) returns boolean
	language sql immutable
	as $$ select t in ('heap', 'alloc') $$;

-- ---- row security ----------------------------------------------------

alter table services enable row level security;
create policy services_team on services
	using (profreg_visible_team(team)) with check (profreg_visible_team(team));

do $$
declare
	t text;
begin
	foreach t in array array['profiles', 'profile_functions', 'baselines', 'findings',
				 'deploys', 'pages', 'incidents', 'collect_slots',
				 'finding_groups'] loop
		execute format('alter table %I enable row level security', t);
		execute format('create policy %I on %I'
			       ' using (service_id in (select s.id from services s))'
			       ' with check (service_id in (select s.id from services s))',
			       t || '_team', t);
	end loop;
	foreach t in array array['run_findings', 'finding_states', 'finding_looks'] loop
		execute format('alter table %I enable row level security', t);
		execute format('create policy %I on %I'
			       ' using (finding_id in (select f.id from findings f))'
			       ' with check (finding_id in (select f.id from findings f))',
			       t || '_team', t);
	end loop;
end $$;

-- Runs without a service (a nightly over every service) are run records
-- only; what they found is in findings and run_findings, filtered above.
alter table runs enable row level security;
create policy runs_team on runs
	using (service_id is null or service_id in (select s.id from services s))
	with check (service_id is null or service_id in (select s.id from services s));

alter table baseline_functions enable row level security;
create policy baseline_functions_team on baseline_functions
	using (baseline_id in (select b.id from baselines b))
	with check (baseline_id in (select b.id from baselines b));

alter table capture_pins enable row level security;
create policy capture_pins_team on capture_pins
	using (profile_id in (select p.id from profiles p))
	with check (profile_id in (select p.id from profiles p));

-- A snapshot names its service by name; one without a service is an admin's.
alter table snapshots enable row level security;
create policy snapshots_team on snapshots
	using (profreg_is_admin() or service in (select s.name from services s))
	with check (profreg_is_admin() or service in (select s.name from services s));

-- Function names are interned once for every service: a role sees the
-- names its visible captures use.
alter table functions enable row level security;
create policy functions_team on functions
	using (profreg_is_admin() or exists (select 1 from profile_functions pf
					     where pf.function_id = functions.id))
	with check (profreg_is_admin());

alter table blob_sweep enable row level security;
create policy blob_sweep_admin on blob_sweep
	using (profreg_is_admin()) with check (profreg_is_admin());

-- ---- the audit log ---------------------------------------------------

-- Who, besides `actor` (the operating-system user the client reports):
-- the database role the row is for, the role that logged in, the
-- command, the captures, the client's address (NULL on a Unix socket)
-- and the host name the client reports. Filled by the trigger below, so
-- a direct insert cannot forge the role or the address.
alter table audit_log
	add column db_role text,
	add column session_role text,
	add column command text check (length(command) <= 256),
	add column capture_ids bigint[],
	add column client_addr inet,
	add column client_host text check (length(client_host) <= 256);
create index audit_log_role_at on audit_log (db_role, at);
create index audit_log_captures on audit_log using gin (capture_ids);

create function profreg_audit_fill() returns trigger
	language plpgsql
	as $$
begin
	new.session_role := session_user;
	new.client_addr := inet_client_addr();
	-- Only the schema owner (profreg_read, running as it) names another role.
	if new.db_role is null or not pg_has_role(current_user,
			(select c.relowner from pg_class c where c.oid = 'audit_log'::regclass),
			'USAGE') then
		new.db_role := current_user;
	end if;
	new.command := coalesce(new.command,
				left(nullif(current_setting('profreg.command', true), ''), 256));
	if new.capture_ids is null and new.object ~ '^capture:[0-9]{1,18}$' then
		new.capture_ids := array[substr(new.object, 9)::bigint];
	end if;
	new.client_host := coalesce(new.client_host,
				    left(nullif(current_setting('profreg.host', true), ''), 256));
	return new;
end $$;
create trigger audit_log_fill before insert on audit_log
	for each row execute function profreg_audit_fill();

-- Audit rows are never changed or deleted, except by the schema owner.
create function profreg_audit_frozen() returns trigger
	language plpgsql
	as $$
begin
	if not pg_has_role(current_user, (select c.relowner from pg_class c
					  where c.oid = 'audit_log'::regclass), 'USAGE') then
		raise exception 'audit rows cannot be changed or deleted'
			using errcode = '42501';
	end if;
	return case when tg_op = 'DELETE' then old else new end;
end $$;
create trigger audit_log_frozen before update or delete on audit_log
	for each row execute function profreg_audit_frozen();
create trigger audit_log_frozen_truncate before truncate on audit_log
	for each statement execute function profreg_audit_frozen();

alter table audit_log enable row level security;
create policy audit_log_read on audit_log for select
	using (profreg_is_admin() or db_role = current_user::text);
create policy audit_log_insert on audit_log for insert
	with check (profreg_is_admin());
create policy audit_log_change on audit_log for update
	using (profreg_is_admin());
create policy audit_log_delete on audit_log for delete
	using (profreg_is_admin());

-- ---- reads that are checked and audited by the database --------------

-- Read the captures `ids` (whole: their blobs, else their numbers) for
-- role `invoker` (the caller's current_user by default; the session's
-- login role must be a member of it). Writes one audit row, whether the
-- read is allowed or not. refused is NULL when allowed, else 'not_found'
-- (a capture that does not exist or that the role may not see: the same
-- answer, so existence does not leak) or 'heap'; message says why.
create function profreg_read(action text, ids bigint[], whole boolean, object text default null,
			     invoker name default current_user,
			     out refused text, out message text)
	language plpgsql security definer
	as $$
declare
	c record;
begin
	if not pg_has_role(session_user, invoker, 'MEMBER') then
		raise exception 'role "%" cannot read as "%"', session_user, invoker
			using errcode = '42501';
	end if;
	if action is null or action !~ '^[a-z][a-z0-9._-]{0,63}$' then
		raise exception 'bad audit action' using errcode = '22023';
	end if;
	for c in select x.id, p.id as pid, p.profile_type, s.name, s.team
		 from unnest(ids) x(id)
		 left join profiles p on p.id = x.id
		 left join services s on s.id = p.service_id
		 order by x.id loop
		if c.pid is null or not profreg_role_sees_team(invoker, c.team) then
			refused := 'not_found';
			message := format('capture %s not found', c.id);
			exit;
		end if;
		if whole and profreg_heap_type(c.profile_type)
		   and not profreg_role_heap(invoker, c.team) then
			refused := 'heap';
			message := format('capture %s is a %s profile of service ''%s'': reading it'
					  ' whole needs the heap permission (profreg access grant'
					  ' %s --team %s --heap)', c.id, c.profile_type, c.name,
					  invoker, coalesce(c.team, '(none)'));
			exit;
		end if;
	end loop;
	insert into audit_log (actor, action, object, detail, db_role, capture_ids)
	values (coalesce(left(nullif(current_setting('profreg.os_user', true), ''), 128),
			 session_user),
		action,
		coalesce(object, 'captures:' || array_to_string(ids[1:20], ',')
				 || case when cardinality(ids) > 20 then ',...' else '' end),
		case when refused is null then jsonb_build_object('whole', whole)
		     else jsonb_build_object('whole', whole, 'refused', refused) end,
		invoker, ids);
end $$;

-- The same for one stored snapshot (always whole: it holds process
-- state): visible to the teams of its service, readable with their heap
-- permission; a snapshot without a service is an admin's.
create function profreg_read_snapshot(action text, snapshot_id bigint,
				      invoker name default current_user,
				      out refused text, out message text)
	language plpgsql security definer
	as $$
declare
	svc text;
	svc_team text;
	found_it boolean;
begin
	if not pg_has_role(session_user, invoker, 'MEMBER') then
		raise exception 'role "%" cannot read as "%"', session_user, invoker
			using errcode = '42501';
	end if;
	if action is null or action !~ '^[a-z][a-z0-9._-]{0,63}$' then
		raise exception 'bad audit action' using errcode = '22023';
	end if;
	select true, sn.service, s.team into found_it, svc, svc_team
		from snapshots sn left join services s on s.name = sn.service
		where sn.id = snapshot_id;
	if found_it is null or not (profreg_role_is_admin(invoker)
				    or (svc is not null and profreg_role_sees_team(invoker, svc_team))) then
		refused := 'not_found';
		message := format('snapshot %s not found', snapshot_id);
	elsif not profreg_role_heap(invoker, svc_team) then
		refused := 'heap';
		message := format('snapshot %s of service ''%s'': reading it needs the heap'
				  ' permission (profreg access grant %s --team %s --heap)',
				  snapshot_id, svc, invoker, coalesce(svc_team, '(none)'));
	end if;
	insert into audit_log (actor, action, object, detail, db_role)
	values (coalesce(left(nullif(current_setting('profreg.os_user', true), ''), 128),
			 session_user),
		action, 'snapshot:' || snapshot_id,
		case when refused is null then '{}'::jsonb
		     else jsonb_build_object('refused', refused) end,
		invoker);
end $$;

-- Grant a role what profreg's commands need on every table (row
-- security decides which rows): read-only for team roles; reads and
-- writes for admins. Role creation and login are the DBA's.
create function profreg_access_apply(r name, is_admin boolean) returns void
	language plpgsql
	as $$
declare
	sch text := (select n.nspname from pg_class c join pg_namespace n on n.oid = c.relnamespace
		     where c.oid = 'access_grants'::regclass);
begin
	execute format('grant usage on schema %I to %I', sch, r);
	execute format('grant select on all tables in schema %I to %I', sch, r);
	execute format('grant execute on function profreg_read(text, bigint[], boolean, text, name),'
		       ' profreg_read_snapshot(text, bigint, name) to %I', r);
	if is_admin then
		execute format('grant insert, update, delete on all tables in schema %I to %I',
			       sch, r);
		execute format('grant usage, select on all sequences in schema %I to %I', sch, r);
	end if;
end $$;

-- Take back what profreg_access_apply gave, once a role has no grant left.
create function profreg_access_drop(r name) returns void
	language plpgsql
	as $$
declare
	sch text := (select n.nspname from pg_class c join pg_namespace n on n.oid = c.relnamespace
		     where c.oid = 'access_grants'::regclass);
begin
	execute format('revoke all on all tables in schema %I from %I', sch, r);
	execute format('revoke all on all sequences in schema %I from %I', sch, r);
	execute format('revoke execute on function profreg_read(text, bigint[], boolean, text, name),'
		       ' profreg_read_snapshot(text, bigint, name) from %I', r);
	execute format('revoke usage on schema %I from %I', sch, r);
end $$;

-- The reading functions run as the owner: pin their search path, and
-- let only granted roles (and the owner) call them.
do $$
begin
	execute format('alter function profreg_read(text, bigint[], boolean, text, name)'
		       ' set search_path = %I, pg_temp', current_schema());
	execute format('alter function profreg_read_snapshot(text, bigint, name)'
		       ' set search_path = %I, pg_temp', current_schema());
end $$;
revoke execute on function profreg_read(text, bigint[], boolean, text, name) from public;
revoke execute on function profreg_read_snapshot(text, bigint, name) from public;
