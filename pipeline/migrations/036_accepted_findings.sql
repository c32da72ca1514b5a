-- 036_accepted_findings: a rise accepted by hand is the new level.
--
-- A release that costs more on purpose (a new check on every payment)
-- was resolved by hand and still stayed out of every later baseline, so
-- the next release with the same cost was judged against the level
-- before it, found and paged again, and so was every release after it
-- until the window had moved past the old level; then no eligible
-- captures were left and the gate said "insufficient baseline".
--
-- `finding resolve ID --accept` resolves the finding and marks its rise
-- accepted: its release goes back into later baselines, and a later
-- finding of the same service, type, function and kind whose rise is not
-- beyond the accepted one is carried from it (carried_from): it neither
-- pages nor fails a gate, nor keeps its release out of baselines.
-- Owner: baselines/findings.c.

alter table findings add column accepted boolean not null default false;
