-- 005_pages: the paging outbox gets one row per (dedup key, target, event).
--
-- A finding that pages writes one 'trigger' row per target in the same
-- transaction as the finding; resolving it writes one 'resolve' row per
-- target that was paged. The unique key makes a re-run, a retry or a
-- crash between the two transactions enqueue nothing twice. The row holds
-- what the page says (detail), never a secret: routing keys and tokens
-- are read from the environment or a file when the page is sent.
--
-- status: pending (to send; next_attempt_at says when), sent, failed
-- (a permanent refusal such as HTTP 400, with the response kept), or
-- cancelled (a trigger never sent whose finding was resolved first).

alter table pages drop constraint if exists pages_dedup_key_key;
alter table pages
	add column target text not null default '',
	add column event text not null default 'trigger'
		check (event in ('trigger', 'resolve')),
	add column run_id bigint references runs (id) on delete set null,
	add column attempts int not null default 0 check (attempts >= 0),
	add column next_attempt_at timestamptz not null default now(),
	add column last_attempt_at timestamptz,
	add column http_status int,
	add column last_error text check (length(last_error) <= 4096),
	add column response text check (length(response) <= 4096),
	add column refreshed_at timestamptz,
	add column refreshes int not null default 0,
	add column updated_at timestamptz not null default now();
alter table pages add constraint pages_status_check
	check (status in ('pending', 'sent', 'failed', 'cancelled'));
alter table pages add constraint pages_once unique (dedup_key, target, event);

drop index if exists pages_pending;
create index pages_pending on pages (next_attempt_at, id) where status = 'pending';
create index pages_finding on pages (finding_id);
