-- Row-level security for the workers' tasks (migration 015), made after
-- access control (017): a task is one service's night, seen by the roles
-- of the service's team; only admins (the coordinator and the workers)
-- write them.
alter table tasks enable row level security;
create policy tasks_team on tasks
	using (profreg_is_admin() or service_id in (select s.id from services s))
	with check (profreg_is_admin());
