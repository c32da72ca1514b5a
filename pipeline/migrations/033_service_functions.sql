-- 033_service_functions: which functions each service's captures use,
-- one row a pair, in place of the GIN index on profile_vectors' ids.
--
-- Why: the GIN index (024) held an entry for every function of every
-- capture, and keeping it was the largest single cost of ingest: 1,280
-- captures of 200 functions spent 70-110 ms of the writing connection's
-- 270 ms of function rows on it. Row security and the function query
-- only ever ask which captures may hold a function, and a service's
-- captures use much the same functions night after night, so a pair
-- (function, service) is written once, when a capture first brings it,
-- and costs an index probe after that.
--
-- What readers see is unchanged: a role sees the function names of the
-- services it sees (017), the function query still checks each capture
-- for the function itself. A pair stays when the captures that used the
-- function are cut or deleted by retention: the name stays visible to
-- the service's team, as it was when they were taken.
--
-- Derived data, like the index it replaces: written by ingest
-- (pipeline/db.c) in the transaction of the capture rows. No foreign
-- keys: neither services nor functions are ever deleted, and their
-- checks cost more than the insert (45 ms for 7,000 pairs).

create table service_functions (
	function_id bigint not null,
	service_id bigint not null,
	primary key (function_id, service_id)
);

insert into service_functions (function_id, service_id)
select distinct u.id, v.service_id
  from profile_vectors v cross join lateral unnest(v.function_ids) as u(id);

alter table service_functions enable row level security;
create policy service_functions_team on service_functions
	using (service_id in (select s.id from services s))
	with check (service_id in (select s.id from services s));

drop policy functions_team on functions;
create policy functions_team on functions
	using (profreg_is_admin() or exists (select 1 from service_functions sf
					     where sf.function_id = functions.id))
	with check (profreg_is_admin());

drop index profile_vectors_functions;

-- Roles granted access (017) have on it what they have on profile_vectors.
do $$
declare
	g record;
begin
	for g in select grantee, privilege_type from information_schema.role_table_grants
		  where table_schema = current_schema() and table_name = 'profile_vectors'
		    and grantee <> current_user loop
		execute format('grant %s on service_functions to %I', g.privilege_type, g.grantee);
	end loop;
end $$;
