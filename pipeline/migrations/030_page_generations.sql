-- 030_page_generations: a regression found again after its finding was
-- closed pages again, and the earlier page is kept.
--
-- 005 made (dedup_key, target, event) unique over the whole outbox: once
-- a trigger was sent, the same regression (same service, type, function,
-- file and release) could never page that target again, even after its
-- finding was closed (went away, fixed, resolved by hand), its page
-- resolved, and a later night found it again as a new finding. On-call
-- was told "resolved" while it was back.
--
-- Now the key is unique among the rows still in use only. When a new
-- finding of the regression pages after the earlier finding was closed,
-- the earlier finding's rows for that key and target are set aside
-- (retired_at is set; nothing else of them changes but a pending one,
-- which is cancelled) and the new finding gets rows of its own: the same
-- dedup key, a new trigger, later its own resolve. A re-run that sees
-- the same open finding still finds its row and sends nothing twice.
-- Owner: jobs/pager.c.

alter table pages add column retired_at timestamptz;
alter table pages drop constraint pages_once;
create unique index pages_once on pages (dedup_key, target, event) where retired_at is null;
