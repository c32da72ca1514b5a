-- A role reads only its own access grants; admins read them all.
--
-- 017 left access_grants readable by every role it grants to: a team
-- role could list every other role, the teams each one sees, who may
-- read heap profiles whole, and who is an admin, which tells someone
-- with a team role whose credentials are worth the most. Row security
-- now keeps, for a role that is no admin, the grants of the roles it is
-- a member of (itself included): the very rows 017's functions read to
-- decide what the current role sees, so every other policy keeps its
-- answers. Admins (the schema owner, who is not subject to row
-- security, and admin grants) read and write every row as before.
-- Owner: jobs/access.c.

-- Whether `invoker` is an admin, read past this table's row security
-- (a policy that read access_grants through its own policy would
-- recurse). Only for the caller's own role or one it is a member of, so
-- it cannot be used to ask about anyone else.
create function profreg_grants_admin(invoker name) returns boolean
	language plpgsql stable security definer
	as $$
begin
	if not pg_has_role(session_user, invoker, 'MEMBER') then
		return false;
	end if;
	return profreg_role_is_admin(invoker);
end $$;

do $$
begin
	execute format('alter function profreg_grants_admin(name)'
		       ' set search_path = %I, pg_temp', current_schema());
end $$;

alter table access_grants enable row level security;
create policy access_grants_own on access_grants for select
	using (exists (select 1 from pg_roles gr
		       where gr.rolname = access_grants.role
			 and pg_has_role(current_user, gr.oid, 'USAGE')));
create policy access_grants_admin on access_grants for all
	using (profreg_grants_admin(current_user))
	with check (profreg_grants_admin(current_user));
