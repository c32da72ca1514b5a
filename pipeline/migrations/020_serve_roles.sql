-- 020_serve_roles: the trigger API (profreg serve) under each token's
-- database role, and an audit row for every call.
--
-- A token may name the database role its requests run as
-- (`profreg token create --team T --role R`). serve takes that role with
-- SET LOCAL ROLE for the SQL that reads service data on the request's
-- behalf, so row-level security (migration 017) decides what the token
-- sees exactly as it would for R's own connection. The role must see the
-- token's team when the token is made; the server's login role must be a
-- member of it (GRANT R TO serve_login). A token without a role runs as
-- the server's own role (the embedded default: one owner, no roles).
-- Owner of the column: jobs/tokens.c.
alter table api_tokens add column role name
	check (role is null or length(role) between 1 and 63);

-- The audit row of one API call, for `invoker` (the token's role): written
-- as the schema owner, so the row names the role the call ran as rather
-- than the server's login. Only an admin session (the serve job role)
-- may write one, and only for a role it is a member of. Owner:
-- jobs/access.c, with the other audit columns.
create function profreg_audit_as(invoker name, action text, object text, detail jsonb,
				 ids bigint[]) returns void
	language plpgsql security definer
	as $$
begin
	if not profreg_role_is_admin(session_user)
	   or not pg_has_role(session_user, invoker, 'MEMBER') then
		raise exception 'role "%" cannot write audit rows as "%"', session_user, invoker
			using errcode = '42501';
	end if;
	if action is null or action !~ '^[a-z][a-z0-9._-]{0,63}$' then
		raise exception 'bad audit action' using errcode = '22023';
	end if;
	insert into audit_log (actor, action, object, detail, db_role, capture_ids)
	values (coalesce(left(nullif(current_setting('profreg.os_user', true), ''), 128),
			 session_user),
		action, left(coalesce(object, ''), 300), coalesce(detail, '{}'::jsonb), invoker,
		ids);
end $$;

do $$
begin
	execute format('alter function profreg_audit_as(name, text, text, jsonb, bigint[])'
		       ' set search_path = %I, pg_temp', current_schema());
end $$;
