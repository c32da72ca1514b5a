-- 015_tasks: a nightly spread over worker processes on several machines.
--
-- The coordinating nightly queues one task per service of its run; any
-- process (a `profreg worker`, or the coordinator itself while it waits)
-- claims one with FOR UPDATE SKIP LOCKED and holds it for lease_until,
-- renewing the lease while it works. A worker that dies stops renewing:
-- once lease_until has passed the task is claimed again, at most
-- max_attempts times in all. result holds what the coordinator needs (the
-- service's outcome and its analysis part, before the run-wide FDR); the
-- coordinator clears it once it has merged the run.
-- Owner: jobs/tasks.c.

create table tasks (
	id bigserial primary key,
	run_id bigint not null references runs (id) on delete cascade,
	service_id bigint not null references services (id) on delete cascade,
	service text not null,
	kind text not null check (kind in ('nightly')),
	params jsonb not null default '{}',
	state text not null default 'queued'
		check (state in ('queued', 'leased', 'done', 'failed')),
	lease_until timestamptz,
	worker text,
	attempts integer not null default 0,
	result jsonb,
	error text,
	created_at timestamptz not null default now(),
	updated_at timestamptz not null default now(),
	unique (run_id, service_id, kind),
	check ((state = 'leased') = (lease_until is not null))
);
create index tasks_open on tasks (id) where state in ('queued', 'leased');
