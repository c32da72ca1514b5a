-- 006_retention: what tiered retention needs (jobs/retention.c).
--
-- Every existing row stays valid: a capture without blob_deleted_at still
-- has its blob, and every existing function is a real one.

-- A summary capture keeps its top functions by self value and one
-- synthetic "(other)" row holding the rest, so a capture's self values
-- still add up to its total. Synthetic functions are never analysed.
alter table functions add column synthetic boolean not null default false;
insert into functions (name, file, synthetic)
	values ('(other functions)', '(profreg summary)', true)
	on conflict (key) do update set synthetic = true;

-- Set when the capture stopped keeping its blob (it moved to the summary
-- tier). The blob file itself goes once no row without blob_deleted_at
-- names its key; blob_key stays, so re-ingesting the same file is still
-- recognised as already stored.
-- forensic_*: who made a capture forensic by hand, when and why
-- (`profreg capture pin`); a finding's evidence is tagged by the finding.
alter table profiles
	add column blob_deleted_at timestamptz,
	add column forensic_reason text check (length(forensic_reason) <= 1024),
	add column forensic_by text,
	add column forensic_at timestamptz;

-- The retention scans, oldest first: captures that may be deleted by age,
-- and those that may still move to summary (a separate index, so that a
-- scan never walks past the captures already summarised); and the
-- captures that still keep a blob (the budget and the blob sweep). The
-- queries in jobs/retention.c repeat these predicates word for word so
-- the planner can use them.
create index profiles_retention_age on profiles (captured_at, id)
	where retention_class <> 'forensic' or retain_until is not null;
create index profiles_retention_hot on profiles (captured_at, id)
	where retention_class = 'hot' or (retention_class = 'forensic' and retain_until is not null);
create index profiles_live_blob on profiles (blob_key) where blob_deleted_at is null;

-- Blobs to delete once nothing live names them: written in the same
-- transaction that moved or deleted the captures, emptied as the files
-- go, so an interrupted run leaves its work here for the next one.
create table blob_sweep (
	blob_key text primary key check (blob_key ~ '^[0-9a-f]{64}$'),
	queued_at timestamptz not null default now()
);
