-- Row-level security for the tables of capture on demand (migration 014),
-- made after access control (017) was written: a capture request and an
-- elevated session are service data, seen only by the roles of the
-- service's team (services is itself filtered by team, so the policy is
-- one semi-join); tokens and rate counters are the server's own and
-- only admins see them.
alter table capture_requests enable row level security;
create policy capture_requests_team on capture_requests
	using (profreg_is_admin() or service_id in (select s.id from services s))
	with check (profreg_is_admin());

alter table elevated_sessions enable row level security;
create policy elevated_sessions_team on elevated_sessions
	using (profreg_is_admin() or service_id in (select s.id from services s))
	with check (profreg_is_admin());

alter table api_tokens enable row level security;
create policy api_tokens_admin on api_tokens
	using (profreg_is_admin()) with check (profreg_is_admin());

alter table rate_counters enable row level security;
create policy rate_counters_admin on rate_counters
	using (profreg_is_admin()) with check (profreg_is_admin());
