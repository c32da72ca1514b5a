-- 031_carried_findings: a regression carried into the releases after
-- the one that brought it pages once.
--
-- A release is judged against the captures of the days before its first
-- one, whatever release ran then. A regression that release v2 brought,
-- found and paged, is still in v3 deployed the next day, and v3's
-- baseline is still mostly from before v2: v3 was a new finding of the
-- same function under a new dedup key (the key names the release), and
-- paged again, and so did every release after it until the baseline
-- window had moved past v2. A service deploying daily paged one
-- regression every day for two weeks.
--
-- A finding of a later release whose rise an open, paged finding of an
-- earlier release of the same service, type and function already covers
-- (its rise not beyond that finding's estimate) is carried: it names
-- that finding here and does not page. Owner: baselines/findings.c.

alter table findings add column carried_from bigint references findings (id) on delete set null;
