/*
 * collect.h: the collect job: pull new captures from every source of
 * every enabled service (drop folders, Go pprof endpoints, Pyroscope,
 * Parca, object-store drops) and ingest them as files are ingested.
 *
 * Object-store drops (s3_prefix) are read as a drop folder is: every
 * object under the prefix with its sidecar OBJECT.json becomes a capture
 * (the sidecar's release, commit, host, time, type and tags; the time
 * falls back on the object's LastModified). Sizes come from the listing,
 * so neither an object over the input limit nor a sidecar over
 * INGEST_JSON_MAX is downloaded. A key with a control character, a
 * backslash, an empty, "." or ".." segment, a leading '/' or over 1024
 * bytes is refused and reported. An object without its sidecar is left
 * for a later run and reported under "waiting" (the sidecar is written
 * last). Each object taken is recorded in collect_slots (source
 * "s3_prefix ENDPOINT/BUCKET/PREFIX", target its key, type "object",
 * slot its LastModified), so collecting again downloads nothing; an
 * object written again under the same key is taken again (and stored
 * only when its bytes are new).
 *
 * Units of work. A Pyroscope or Parca source cuts the window into slots
 * (slot_s, one hour by default, aligned to the epoch); each slot of each
 * profile type is one request and one capture. A pprof_http target
 * gives only the present: one request per target and profile type in the
 * current slot, and none for a window that ended before it. Every unit
 * fetched is recorded (table collect_slots, owned here), so collecting the
 * same window again sends no request and stores nothing new.
 *
 * Safety. Only registered, enabled services are contacted. At most
 * max_concurrent requests of one service are in flight (which spreads CPU
 * profiles over its hosts instead of profiling them all at once) and
 * max_concurrent_fleet in all; a host is CPU-profiled again only after
 * cooldown_s since its last CPU profile, in this run or any earlier one;
 * every request has connect and total timeouts and a body cap (the input
 * limit); the whole collection stops starting requests after budget_s.
 * A busy CPU profiler, 503 and 429 are tried again (retries, after
 * retry_s doubled each time, or the server's Retry-After) within the
 * budget. Secrets come from the environment or 0600 files and only ever
 * go into the request's secret header. One collection at a time collects
 * a service: it holds the advisory lock "profreg-collect:NAME" (collect_run,
 * over many services, "profreg-collect"; see collect_opts.lock).
 *
 * Release and commit of a capture, first that applies:
 *   1. the source says: a pprof_http target's release and commit labels
 *      (file_sd), a Pyroscope series' version label (version_label,
 *      "service_git_ref" by default);
 *   2. the deploy history: the service's latest recorded deploy at or
 *      before the capture (post-deploy records each deploy; post-deploy
 *      passes its own deploy while it waits, before it records it);
 *   3. none: release "unknown". A slot with a deploy inside it is
 *      "unknown" too: it holds two releases.
 * Tags: "source" (dir sources excepted: their sidecars say) and
 * "release_from" (label, deploy, none). Labels are never stored.
 *
 * A target that fails (no answer, 401, 5xx, too large, malformed, bad
 * TLS) is reported with its name and one-line reason, stores nothing, and
 * never stops the other targets. A bad file_sd file (missing, unreadable,
 * not the format) is one failure naming it and why: its own targets are
 * not profiled, those of the source's other files are, whichever order
 * the files are listed in. Only the database or memory failing fails the
 * job.
 */
#ifndef PR_COLLECT_H
#define PR_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/job.h"
#include "pipeline/source.h"

struct json_t;

#define COLLECT_LOCK "profreg-collect"

typedef struct collect_opts {
	const char *const *only; /* only these services (none: every enabled one) */
	size_t nonly;
	int64_t since_us; /* window of Pyroscope and Parca slots; 0: until - 24 h */
	int64_t until_us; /* 0: now */
	bool dry_run;     /* plan only: contact no one, store nothing */
	/* post-deploy: its deploy, counted as deployed at deploy_at_us */
	const char *deploy_release;
	const char *deploy_commit;
	int64_t deploy_at_us;
	/* captures taken for an incident: tagged {"incident": ID} (a plain id) */
	const char *incident;
	/*
	 * The advisory lock the collection holds; NULL: the service's own,
	 * "profreg-collect:NAME", for collect_service (a nightly's service, a
	 * gate, a worker's task) and collect_run of one named service,
	 * COLLECT_LOCK for collect_run of more. A service's lock is taken
	 * under COLLECT_LOCK held shared: collections of different services
	 * go on at once (a gate beside the nightly once made the nightly
	 * collect nothing at all), none beside a collection of many. The
	 * fleet-wide request cap is per process.
	 */
	const char *lock;
	/*
	 * How long to wait for the lock when another collection holds it,
	 * trying again every 200 ms; 0: not at all. A gate holds its service's
	 * lock for a round of collection, then lets go until its next poll.
	 */
	int64_t lock_wait_us;
	/*
	 * collect_service: the lock held elsewhere is PR_ELOCKED, for the
	 * caller to try again later (a worker's task), instead of the
	 * service's failure (out->failed).
	 */
	bool busy_is_error;
	/*
	 * A live capture (pprof_http) taken after until_us is stamped 15
	 * minutes before it: a nightly whose night ends as it starts
	 * collects just after, and stamped when taken its captures fell in
	 * no night's window (this one's ends at its start, the next one's
	 * begins there). Not when a deploy of the service lies after that
	 * time or within its warm-up before it; its release is found by when
	 * it was taken either way.
	 */
	bool live_in_window;
} collect_opts;

typedef struct collect_result {
	int64_t run_id; /* 0 for a dry run */
	int64_t since_us, until_us;
	/* name -> {stored, already_stored, deleted_by_retention, already_collected, empty,
	 *          deferred, failed, not_tried, requests,
	 *          failures: [{source, target, type, reason}]} */
	struct json_t *services;
	/* dry run: [{service, source, target, type, start, end, requests}] */
	struct json_t *plan;
	size_t stored, already, failed, requests, skipped_services;
	size_t deleted; /* bytes of captures retention deleted: offered again, not stored */
	job_notes notes;
} collect_result;

/* Whether a configured service has anything to collect from. */
bool collect_has_sources(const config_service *cs);

/*
 * Collect every enabled service (or `o->only`), record one run (kind
 * "collect") with each service's counts and failures. Unknown services
 * in `only` are PR_ENOTFOUND, a disabled one PR_EREFUSED; another
 * collection holding the lock is PR_ELOCKED. Release *out with
 * collect_result_release, also after a failure.
 */
int collect_run(collect_result *out, const job_env *env, const collect_opts *o, pr_error *err);
void collect_result_release(collect_result *r);

/*
 * Collect one (enabled) service, for nightly and post-deploy: its counts
 * into *out (stored, already, deleted: bytes of captures retention
 * deleted, not stored again; waiting: deferred by a cooldown or the
 * lock, failed, first_error: the failures in one line, a single one as
 * it is), and when `failures` is not NULL a new JSON array of them
 * ({source, target, type, reason}; the caller decrefs it). Returns < 0
 * only when the database or memory failed, or with o->busy_is_error when
 * another collection holds the lock (PR_ELOCKED).
 */
int collect_service(source_report *out, struct json_t **failures, const job_env *env,
		    const db_service *svc, const collect_opts *o, pr_error *err);

/*
 * On-demand captures (jobs/serve.h): one profile of one host, now,
 * through the same client, credentials, limits, ingest and release
 * attribution as a collection, recorded in collect_slots (so the host's
 * CPU cooldown counts it) and tagged {"incident": o->incident}, which
 * keeps it out of baselines.
 */
typedef struct collect_one {
	const char *host;     /* a pprof_http target: its host:port, host part or host label */
	const char *type;     /* a profile type the target's source pulls ("cpu", "heap") */
	uint32_t seconds;     /* CPU profile length; 0: the source's */
	const char *incident; /* required: the request or alert id */
} collect_one;

/*
 * The host (into `out`, n bytes: the host part of the address, as
 * collect_slots records it) of the pprof_http target of `cs` that `host`
 * names (its host:port, host part or host label). A bad file_sd file is
 * passed over: the host is looked for in the other files. PR_ENOTFOUND
 * when no target names it; the message names the host and the service,
 * and the bad file_sd files with their reasons, since one of them may
 * list it.
 */
int collect_target_find(char *out, size_t n, const config_service *cs, const char *host,
			pr_error *err);

/*
 * Whether `host` is a pprof_http target of `cs` that pulls profiles of
 * `type` ("heap" of a source that takes CPU profiles only is not).
 */
bool collect_target_pulls(const config_service *cs, const char *host, const char *type);

/*
 * The hosts of every pprof_http target of `cs` (their host parts, as
 * collect_target_find gives them), each once, in byte order: a new array
 * of *n strings into *out (NULL when none), freed with
 * collect_target_hosts_free. A bad file_sd file adds no host and hides
 * none of the other files'; PR_EDATA, naming the bad files, only when
 * they leave no host at all.
 */
int collect_target_hosts(char ***out, size_t *n, const config_service *cs, pr_error *err);
void collect_target_hosts_free(char **v, size_t n);

/*
 * The longest one capture of profile `type` (CPU profiles of `seconds`,
 * 0: the source's) from a pprof_http target of `cs` may wait on its
 * target, in milliseconds: the request's total timeout, plus the
 * profile's length and a margin for CPU. The capture's lease must
 * outlast it (capreq_renew).
 */
uint64_t collect_one_bound_ms(const config_service *cs, const char *type, uint32_t seconds);

/*
 * Take one capture as `o` says and store it: *capture_id the capture
 * (stored now or found stored before; 0 when the endpoint had nothing).
 * A target that fails is its code from pprof_http.h with a one-line
 * message naming it; PR_EDB and PR_ENOMEM are the database or memory;
 * PR_ENOTFOUND when the host or type is not one of the service's targets;
 * PR_ELOCKED, nothing asked, when another process is CPU-profiling the
 * host now; PR_EREFUSED when the service is not enabled.
 */
int collect_one_capture(int64_t *capture_id, const job_env *env, const db_service *svc,
			const config_service *cs, const collect_one *o, pr_error *err);

#endif
