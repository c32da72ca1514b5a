-- 034_synthetic_functions_visible: every role sees the synthetic functions.
--
-- Retention cuts a summary capture to its top functions plus the
-- synthetic "(other functions)" row (006), and records no pair of it in
-- service_functions (033): a team role stopped seeing that row's name,
-- so its analysis failed ("1 function names missing") and a cut
-- capture's functions read back without the rest. A synthetic row is a
-- label profreg writes, not a name from anyone's profile: every role
-- that sees functions at all may see it.

drop policy functions_team on functions;
create policy functions_team on functions
	using (profreg_is_admin() or synthetic
	       or exists (select 1 from service_functions sf where sf.function_id = functions.id))
	with check (profreg_is_admin());
