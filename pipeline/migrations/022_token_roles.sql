-- A token may name the database role that its requests to the comparison
-- page of profreg serve run as (SET LOCAL ROLE inside each request's
-- transaction): row-level security and the heap permission then apply to
-- them exactly as to that role's own connection, and the audit rows name
-- that role. NULL: the server's own role, with the token's team scope
-- enforced by the server and heap and alloc captures refused.
-- Owner of the column: jobs/tokens.c. The trigger API's own use of the
-- column (migration 020 on another branch) adds it with the same
-- definition, hence "if not exists": whichever runs first makes it.
alter table api_tokens add column if not exists role name
	check (role is null or length(role) between 1 and 63);
