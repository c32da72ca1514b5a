/*
 * snapshot.h: incident snapshots, and the owner of table `snapshots`.
 *
 * A snapshot captures what explains a host's bottleneck while it lasts,
 * from /proc and the kernel's own interfaces only (no tool is run):
 *
 *   kernel      pressure stall information, load, run queue (/proc/stat,
 *               /proc/schedstat), loaded BPF programs, kernel stacks of
 *               blocked (D-state) tasks, the pressure of the cgroups of
 *               the service and of the top processes;
 *   contention  open descriptors per process, blocked tasks and what they
 *               wait on (wchan), /proc/meminfo and /proc/vmstat at both
 *               ends of a short interval and their deltas;
 *   process     the threads that used the most CPU over that interval
 *               (from each task's stat, what top reads), the top
 *               processes by CPU and by memory with their status and
 *               smaps_rollup, the tail of the kernel log (/dev/kmsg).
 *
 * What cannot be read (no permission, not compiled into the kernel, cut
 * by a budget) is recorded in the manifest with the reason and what it
 * needs; the snapshot still succeeds with the rest. It runs at low CPU
 * and I/O priority (nice 19 and the idle I/O class, on the calling thread
 * only: Linux keeps both per thread; restored afterwards where the
 * process may raise them again), within a time budget (5 s: collection,
 * then the archive) and a size budget (16 MiB: the archive), reads each
 * file with a size cap, never follows a symbolic link out of /proc, and
 * writes nothing but its archive.
 *
 * Command lines can carry secrets: of a process only the executable's
 * name and the argument count are kept, unless the configuration lets a
 * service keep full command lines (snapshot.services.NAME.full_cmdline)
 * and the process is that service's, and is still the process its scan
 * saw (same comm and start time) after its command line was read.
 *
 * The archive is a .tar.zst (pipeline/tarzst.h) whose first member is
 * manifest.json: host, time, kernel, incident, who took it with which
 * capabilities, the budgets, what it cost, and every item with its status.
 * Then summary.json (the figures a person reads first) and the raw files.
 *
 * Stored, the archive is a blob (content-addressed, verified on read) and
 * a row of `snapshots`; retention never deletes it (SNAPSHOT_KEEPS_BLOB).
 */
#ifndef PR_SNAPSHOT_H
#define PR_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "jobs/config.h"
#include "jobs/job.h"

struct json_t;

#define SNAPSHOT_SCHEMA_VERSION 1
#define SNAPSHOT_KIND "profreg-snapshot"
/* An archive from outside (upload) is at most this large. */
#define SNAPSHOT_ARCHIVE_MAX (256u << 20)
/*
 * ... and unpacks to at most this, in all: what a snapshot collects is
 * held to snapshot.size_budget_bytes (at most 256 MiB), its manifest and
 * summary beside it. A small archive that unpacks to gigabytes is a bomb.
 */
#define SNAPSHOT_UNPACKED_MAX ((size_t)SNAPSHOT_ARCHIVE_MAX + (16u << 20))
#define SNAPSHOT_INCIDENT_MAX 256
#define SNAPSHOT_REASON_MAX 1024
#define SNAPSHOT_HOST_MAX 256
/* How far ahead of the clock an archive's time may be (clocks drift). */
#define SNAPSHOT_MAX_AHEAD_US (86400LL * 1000000)

/*
 * SQL for retention: true when a snapshot keeps the blob whose key is
 * the expression `k`. Retention deletes a blob only when no capture and
 * no snapshot keeps it.
 */
#define SNAPSHOT_KEEPS_BLOB(k) "exists (select 1 from snapshots sn where sn.blob_key = " k ")"

typedef struct snapshot_opts {
	const char *incident;   /* NULL: none; 1 to 256 printable characters */
	const char *reason;     /* NULL: none; at most 1024 bytes of printable text */
	const char *service;    /* the service the incident is about (its cgroup), or NULL */
	const char *trigger;    /* how it was asked for: NULL is "manual"; "alertmanager" */
	/*
	 * snapshot_run: the host a request names. An agent takes snapshots of
	 * its own host only: another name is PR_EREFUSED. NULL: this host.
	 */
	const char *for_host;
	/*
	 * snapshot_run: refuse (PR_EREFUSED) when this host's last stored
	 * snapshot is younger than this, so a flapping alert does not take a
	 * snapshot a minute. 0: no cooldown (a person asked).
	 */
	int64_t cooldown_us;
	/*
	 * snapshot_run: how to reach the database and the blob store when
	 * env->d is NULL. Called after the snapshot is taken (before it when
	 * there is a cooldown to check), so an unreachable database never
	 * delays it; the caller closes what it opens.
	 */
	int (*open_store)(void *arg, db **d, blob_store **bs, pr_error *err);
	void *open_store_arg;
	bool keep_priority;     /* leave the thread's priority alone */
	/* Where the kernel's files are: NULL for "/proc" and "/dev/kmsg" (tests use others). */
	const char *proc_root;
	const char *kmsg_path;
} snapshot_opts;

/* A snapshot taken: the archive and what it says about itself. */
typedef struct snapshot_archive {
	buf data;                     /* the .tar.zst */
	struct json_t *manifest;      /* as written first in the archive */
	char host[SNAPSHOT_HOST_MAX + 1];
	int64_t taken_at_us;
	size_t not_collected;         /* items missing or cut short */
	double wall_s;                /* what taking it cost, the archive included */
	double cpu_user_s, cpu_sys_s; /* CPU time of the calling thread */
} snapshot_archive;

void snapshot_archive_release(snapshot_archive *a);

/*
 * Take a snapshot of this host with the budgets of `cfg->snapshot`. Needs
 * no database. Fails only when nothing useful can be done (no /proc, out
 * of memory, a bad option: PR_EUSAGE for an incident, reason or service
 * name that is not acceptable); every item that cannot be read is
 * recorded instead. Release *out with snapshot_archive_release, also
 * after a failure.
 */
int snapshot_take(snapshot_archive *out, const config *cfg, const snapshot_opts *o,
		  pr_error *err);

/*
 * Check an archive from outside and read its manifest: a .tar.zst of at
 * most SNAPSHOT_ARCHIVE_MAX bytes whose first member is a manifest.json
 * of this kind and schema (host, time, optional incident, reason and
 * service in range; the time at most a day ahead of the clock), every
 * member readable within bounds. `name` names it in messages. *manifest
 * is the caller's (json_decref).
 */
int snapshot_check(struct json_t **manifest, const void *data, size_t len, const char *name,
		   pr_error *err);

/*
 * Store an archive (checked with snapshot_check first): a blob and its
 * row, in one transaction under the blob key's shared lock (as an ingest
 * stores a capture), audited as "snapshot.store" with `via` ("taken",
 * "upload"). The row takes host, time, incident, reason, service and
 * trigger from the manifest. The same archive stored again is the same
 * snapshot: *existed true and *id the stored one.
 */
int snapshot_store(int64_t *id, bool *existed, const job_env *env, const void *data, size_t len,
		   const char *name, const char *via, pr_error *err);

typedef struct snapshot_result {
	int64_t id;
	bool existed;
	char key[BLOB_KEY_HEX + 1];
	snapshot_archive a;
	double wall_s;         /* taking and storing */
	char *unsent;          /* where the archive was kept when it could not be stored */
	job_notes notes;
} snapshot_result;

/*
 * The job a command or an agent calls: check the request's host, take the
 * per-host cooldown lock and check the cooldown (when asked), take the
 * snapshot, store it. When storing fails the archive is not lost: it is
 * written to <home>/snapshots/unsent/ and the error names the file to
 * upload later. Release *out with snapshot_result_release, also after a
 * failure.
 */
int snapshot_run(snapshot_result *out, const job_env *env, const snapshot_opts *o,
		 pr_error *err);
void snapshot_result_release(snapshot_result *r);

/*
 * Store an archive file taken earlier (snapshot --out, or one kept in
 * unsent/), via "upload". The file is read whole up to
 * SNAPSHOT_ARCHIVE_MAX bytes and checked with snapshot_check.
 */
int snapshot_upload(int64_t *id, bool *existed, const job_env *env, const char *path,
		    pr_error *err);

typedef struct snapshot_filter {
	const char *host;
	const char *incident;
	const char *service;
	int64_t since_us, until_us;   /* 0: open; until exclusive */
	size_t limit;                 /* 0: 100 */
} snapshot_filter;

/*
 * Stored snapshots, newest first, as a JSON array of objects with id,
 * host, taken_at, incident, reason, service, trigger, blob_key, bytes and
 * not_collected. *out is the caller's.
 */
int snapshot_list(struct json_t **out, db *d, const snapshot_filter *f, pr_error *err);

/* One snapshot as snapshot_list gives it plus "manifest"; PR_ENOTFOUND when absent. */
int snapshot_get(struct json_t **out, db *d, int64_t id, pr_error *err);

/*
 * The archive of snapshot `id`, byte for byte as it was stored (the blob
 * store verifies it against its key), audited as "snapshot.extract".
 * The caller owns `out`.
 */
int snapshot_read(buf *out, const job_env *env, int64_t id, pr_error *err);

/* Extract snapshot `id` into a new folder `dir` (tarzst_extract). Audited. */
int snapshot_extract_dir(const job_env *env, int64_t id, const char *dir, pr_error *err);

/*
 * Snapshots of any of `hosts` taken from `from_us` to `to_us`
 * (inclusive), oldest first, as snapshot_list gives them: what a report
 * shows next to the captures taken on the same hosts at the same time.
 * With `team` (NULL: any), only snapshots of that team's services; with
 * `service` (NULL: any), only snapshots of that service or of another
 * service of its team. Either leaves out the host's own snapshots (of
 * no service), which only admins may read.
 */
int snapshot_near(struct json_t **out, db *d, const char *const *hosts, size_t nhosts,
		  int64_t from_us, int64_t to_us, const char *team, const char *service,
		  pr_error *err);

/* This host's name as snapshots record it (gethostname), into out. */
int snapshot_hostname(char out[SNAPSHOT_HOST_MAX + 1], pr_error *err);

#endif
