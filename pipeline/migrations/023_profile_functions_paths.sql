-- Storing a capture's function rows is most of what ingest costs the
-- server, and two things on profile_functions cost about half of it
-- while guarding nothing a query needs:
--
-- The foreign key to profiles: every row paid a lookup of its capture.
-- The rows are written in the transaction that writes their capture
-- (pipeline/db.c) and deleted in the statement that deletes it (jobs/
-- retention.c, the only place captures are deleted), so the check could
-- never fail. Like the key to functions (003), it goes.
--
-- The index on (service_id, profile_type, captured_at): no query reads
-- the table by service and time (analysis reads by capture, the function
-- query by function), so every row paid for an index nothing used.
alter table profile_functions drop constraint if exists profile_functions_profile_id_fkey;
drop index if exists profile_functions_service_type_time;

-- The function query ("every capture where X passed Y% self") read a
-- function's rows by (function_id, captured_at). Each of those rows lies
-- on a table page of its own (rows are written a capture at a time), so
-- on 10 million rows it read 20,000 pages for one function and took
-- seconds. With the columns it needs in the index it reads the index
-- alone, and with the share as the second key a threshold reads only the
-- rows above it (a time window is then a filter: a function has one row
-- per capture kept, which retention bounds). service_id is there for
-- row-level security's policy, which reads it. An index-only scan needs
-- pages marked all-visible, which vacuum does: an insert-only table is
-- vacuumed after 20% growth by default, so a large store would read its
-- newest fifth from the table; 2% keeps that small.
drop index if exists profile_functions_function_time;
create index profile_functions_function_share on profile_functions (function_id, self_share)
	include (captured_at, total_share, profile_id, service_id);
alter table profile_functions set (autovacuum_vacuum_insert_scale_factor = 0.02);
