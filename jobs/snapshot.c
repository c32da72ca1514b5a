/*
 * snapshot.c: incident snapshots (see snapshot.h). This module is the only
 * one that reads or writes table `snapshots`.
 */
#define _GNU_SOURCE
#include "jobs/snapshot.h"
#include "jobs/access.h"
#include "common/fileio.h"
#include "common/timeutil.h"
#include "pipeline/ingest.h"
#include "pipeline/procfs.h"
#include "pipeline/tarzst.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef PROFREG_VERSION
#define PROFREG_VERSION "0.0.0"
#endif

/* Linux's I/O priorities (linux/ioprio.h is not in every libc's headers). */
#define IOPRIO_WHO_THREAD 1
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_CLASS_SHIFT 13

/* Capability bits (linux/capability.h). */
#define CAP_BIT_DAC_READ_SEARCH 2
#define CAP_BIT_SYS_PTRACE 19
#define CAP_BIT_SYS_ADMIN 21
#define CAP_BIT_SYSLOG 34
#define CAP_BIT_PERFMON 38
#define CAP_BIT_BPF 39

/* What a tar member costs besides its content: its header, padding to 512. */
#define TAR_BLOCK 512
/* Blocked tasks described at most (all are counted). */
#define MAX_BLOCKED 200
/* Processes listed in summary.json at most, by CPU, then memory, then descriptors. */
#define MAX_PROC_LIST 2000
/* Distinct cgroups whose pressure is read at most. */
#define MAX_CGROUPS 16
/* A stat, wchan or cgroup file is small. */
#define SMALL_FILE 4096
/* The manifest of an archive from outside is at most this large. */
#define MANIFEST_MAX (1u << 20)

/* ---- the collector ------------------------------------------------------ */

typedef struct member {
	char *path;
	buf data;
} member;

typedef struct task {
	int pid, tid;
	uint64_t start;        /* starttime: with tid, names the task */
	uint64_t ticks;        /* utime + stime */
	uint64_t blkio;        /* delayacct_blkio_ticks */
	int64_t delta;         /* ticks over the interval; -1 unknown */
	int processor;
	char state;
	char comm[PROCFS_COMM_MAX + 1];
} task;

typedef struct proc {
	int pid;
	uint64_t start;
	char comm[PROCFS_COMM_MAX + 1];
	char state;
	int64_t threads;
	int64_t rss;           /* pages */
	int64_t fds;           /* -1: not counted */
	int64_t delta;         /* CPU ticks of its threads over the interval; -1 unknown */
	uint64_t blkio_delta;
} proc;

typedef struct scan {
	task *t;
	size_t nt, capt;
	proc *p;
	size_t np, capp;
	double from, to;       /* monotonic seconds */
	bool complete;         /* every task read, within the budget and max_tasks */
	size_t gone;           /* processes or tasks that exited while being read */
	size_t refused;        /* stat files we were not allowed to read */
} scan;

typedef struct blocked {
	int pid, tid;
	uint64_t start;
	char comm[PROCFS_COMM_MAX + 1];
	char *wchan;           /* NULL: unknown */
	char *stack_member;    /* NULL: not read */
	const char *stack_why; /* why not, or NULL */
	bool at_start, at_end;
} blocked;

typedef struct col {
	const config_snapshot *cs;
	const config *cfg;
	const snapshot_opts *o;
	int procfd;
	int self;              /* our pid */
	double t0, dl_collect, dl_extras, dl_sample;
	int64_t taken_at_us;
	size_t size_budget, raw_limit, raw;
	member *m;
	size_t nm, capm;
	json_t *items;
	json_t *summary;
	bool oom;
	buf tmp, tmp2;
	long tick, page;
	scan s1, s2;
	blocked *bl;
	size_t nbl, nblocked_all;
	size_t blocked_stack_refused;
	uint64_t caps;
	struct rusage ru0;
	json_t *pressure_start;
	procfs_kv *stat0, *meminfo0, *vmstat0;
	size_t nstat0, nmeminfo0, nvmstat0;
	buf psi0[3];
	char host[SNAPSHOT_HOST_MAX + 1];
	char lasterr[PR_ERROR_MSG_MAX]; /* why the last grab failed */
	/* The thread's priority before, and when it was given back to keep the budget. */
	int old_nice, old_io;
	bool lowered, restored;
	double restored_at;
} col;

static const char *const psi_names[3] = {"cpu", "memory", "io"};

static double since(const col *c)
{
	return time_mono() - c->t0;
}

static void keep_pace(col *c);

static json_t *jset(col *c, json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v) < 0) {
		c->oom = true;
		return NULL;
	}
	return v;
}

static void jpush(col *c, json_t *arr, json_t *v)
{
	if (!v || json_array_append_new(arr, v) < 0)
		c->oom = true;
}

/* A JSON string of bytes a process chose, made safe (procfs_clean). */
static json_t *jclean(col *c, const char *s, size_t len)
{
	json_t *v;

	buf_reset(&c->tmp2);
	if (procfs_clean(&c->tmp2, s, len) < 0) {
		c->oom = true;
		return NULL;
	}
	v = json_stringn(c->tmp2.ptr, c->tmp2.len);
	if (!v)
		c->oom = true;
	return v;
}

/* A new item of `layer`: collected until something says otherwise. */
static json_t *item(col *c, const char *layer, const char *name, const char *source,
		    const char *needs)
{
	json_t *it = json_pack("{s:s,s:s,s:s,s:s,s:s?,s:[]}", "layer", layer, "name", name,
			       "status", "collected", "source", source, "needs", needs, "files");

	if (!it || json_array_append_new(c->items, it) < 0) {
		c->oom = true;
		return NULL;
	}
	return it;
}

/*
 * Say why an item is not whole. "missing" (nothing of it) wins over
 * "partial"; the first reason is kept, later ones are counted.
 */
static void item_status(col *c, json_t *it, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void item_status(col *c, json_t *it, const char *status, const char *fmt, ...)
{
	const char *now;
	char why[512];
	va_list ap;

	if (!it)
		return;
	now = json_string_value(json_object_get(it, "status"));
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (now && strcmp(now, "missing") == 0 && strcmp(status, "partial") == 0)
		return;
	if (!json_object_get(it, "reason") || (strcmp(status, "missing") == 0 &&
					       strcmp(now, "missing") != 0))
		jset(c, it, "reason", json_string(why));
	jset(c, it, "status", json_string(status));
}

static void item_ms(col *c, json_t *it, double from)
{
	if (it)
		jset(c, it, "ms", json_real((double)(int64_t)((time_mono() - from) * 10000) / 10));
}

/* What a member costs in the tar stream. */
static size_t tar_cost(size_t len)
{
	return TAR_BLOCK + (len + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
}

/*
 * Add a member unless the size budget is spent: 1 and the item marked
 * partial when it is, 0 when added, PR_ENOMEM.
 */
static int add_member(col *c, json_t *it, const char *path, const void *data, size_t len)
{
	member *mb;

	if (c->raw + tar_cost(len) > c->raw_limit) {
		item_status(c, it, "partial", "the size budget of %zu bytes is spent: '%s' and "
			    "what follows left out", c->size_budget, path);
		return 1;
	}
	if (c->nm == c->capm) {
		size_t ncap = c->capm ? c->capm * 2 : 64;
		member *g = realloc(c->m, ncap * sizeof(*g));
		if (!g)
			return PR_ENOMEM;
		c->m = g;
		c->capm = ncap;
	}
	mb = &c->m[c->nm];
	buf_init(&mb->data, SIZE_MAX);
	if (!(mb->path = strdup(path)) || (len && buf_put(&mb->data, data, len) < 0)) {
		free(mb->path);
		buf_release(&mb->data);
		return PR_ENOMEM;
	}
	c->nm++;
	c->raw += tar_cost(len);
	if (it)
		jpush(c, json_object_get(it, "files"), json_string(path));
	return 0;
}

/* Why a kernel file is not there, in words for the manifest. */
static const char *why_code(int code)
{
	switch (code) {
	case PR_EREFUSED:
		return "permission denied";
	case PR_ENOTFOUND:
		return "not there";
	case PR_ELIMIT:
		return "over a limit";
	default:
		return "cannot be read";
	}
}

/*
 * Read /proc file `path` into member `mpath` (the same path under "proc/"
 * when NULL). Returns 0, or the PR_E* code when it could not be read (the
 * caller says what that means for its item); PR_ENOMEM stops the snapshot.
 * The contents stay in c->tmp.
 */
static int grab(col *c, json_t *it, const char *path, const char *mpath, bool *cut)
{
	pr_error e = PR_ERROR_INIT;
	char mp[512];
	bool trunc = false;
	int rc;

	if (cut)
		*cut = false;
	if ((rc = procfs_read(&c->tmp, c->procfd, path, c->cs->file_max_bytes, &trunc, NULL,
			      &e)) < 0) {
		snprintf(c->lasterr, sizeof(c->lasterr), "%s", e.msg);
		return rc;
	}
	if (trunc) {
		item_status(c, it, "partial", "'%s' is longer than the %" PRIu64 "-byte cap per "
			    "file (snapshot.file_max_bytes): cut there", path,
			    c->cs->file_max_bytes);
		if (cut)
			*cut = true;
	}
	if (!mpath) {
		snprintf(mp, sizeof(mp), "proc/%s", path);
		mpath = mp;
	}
	rc = add_member(c, it, mpath, c->tmp.ptr, c->tmp.len);
	return rc == PR_ENOMEM ? rc : 0;
}

/* ---- the task scans ----------------------------------------------------- */

static int push_task(scan *s, const task *t)
{
	if (s->nt == s->capt) {
		size_t ncap = s->capt ? s->capt * 2 : 1024;
		task *g = realloc(s->t, ncap * sizeof(*g));
		if (!g)
			return PR_ENOMEM;
		s->t = g;
		s->capt = ncap;
	}
	s->t[s->nt++] = *t;
	return 0;
}

static int push_proc(scan *s, const proc *p)
{
	if (s->np == s->capp) {
		size_t ncap = s->capp ? s->capp * 2 : 256;
		proc *g = realloc(s->p, ncap * sizeof(*g));
		if (!g)
			return PR_ENOMEM;
		s->p = g;
		s->capp = ncap;
	}
	s->p[s->np++] = *p;
	return 0;
}

static void scan_release(scan *s)
{
	free(s->t);
	free(s->p);
	memset(s, 0, sizeof(*s));
}

static blocked *blocked_find(col *c, int tid, uint64_t start)
{
	for (size_t i = 0; i < c->nbl; i++)
		if (c->bl[i].tid == tid && c->bl[i].start == start)
			return &c->bl[i];
	return NULL;
}

/* A task in D state: what it waits on and its kernel stack, read now. */
static int note_blocked(col *c, json_t *stacks_it, const task *t, bool at_end)
{
	blocked *b = blocked_find(c, t->tid, t->start);
	pr_error e = PR_ERROR_INIT;
	char path[96];
	int rc;

	if (b) {
		b->at_end |= at_end;
		return 0;
	}
	c->nblocked_all++;
	if (c->nbl == MAX_BLOCKED)
		return 0;
	if (!c->bl && !(c->bl = calloc(MAX_BLOCKED, sizeof(*c->bl))))
		return PR_ENOMEM;
	b = &c->bl[c->nbl++];
	b->pid = t->pid;
	b->tid = t->tid;
	b->start = t->start;
	memcpy(b->comm, t->comm, sizeof(b->comm));
	b->at_start = !at_end;
	b->at_end = at_end;
	snprintf(path, sizeof(path), "%d/task/%d/wchan", t->pid, t->tid);
	/* "0" is what the kernel shows when it will not say (no ptrace access) or cannot. */
	if (procfs_read(&c->tmp, c->procfd, path, SMALL_FILE, NULL, NULL, &e) == 0 &&
	    c->tmp.len && strcmp(c->tmp.ptr, "0") != 0) {
		buf_reset(&c->tmp2);
		if (procfs_clean(&c->tmp2, c->tmp.ptr, c->tmp.len) < 0 ||
		    !(b->wchan = strdup(c->tmp2.ptr)))
			return PR_ENOMEM;
	}
	pr_error_clear(&e);
	snprintf(path, sizeof(path), "%d/task/%d/stack", t->pid, t->tid);
	rc = procfs_read(&c->tmp, c->procfd, path, c->cs->file_max_bytes, NULL, NULL, &e);
	if (rc == 0) {
		char mp[128];
		snprintf(mp, sizeof(mp), "proc/%d/task/%d/stack", t->pid, t->tid);
		if ((rc = add_member(c, stacks_it, mp, c->tmp.ptr, c->tmp.len)) == PR_ENOMEM)
			return rc;
		if (rc == 0 && !(b->stack_member = strdup(mp)))
			return PR_ENOMEM;
		if (rc == 1)
			b->stack_why = "size budget";
	} else if (rc == PR_EREFUSED) {
		b->stack_why = "permission denied";
		c->blocked_stack_refused++;
	} else {
		b->stack_why = rc == PR_ENOTFOUND ? "the task exited" : why_code(rc);
	}
	return 0;
}

/*
 * Read every task's stat. Stops at the deadline or at max_tasks (then
 * s->complete is false). Blocked tasks are described as they are seen.
 */
static int scan_tasks(col *c, scan *s, json_t *stacks_it, bool at_end, double deadline)
{
	pr_error e = PR_ERROR_INIT;
	int *pids = NULL, *tids = NULL;
	size_t np = 0, nt = 0;
	bool complete, seen;
	char path[96];
	int rc;

	s->from = time_mono();
	s->complete = true;
	if ((rc = procfs_list_ids_until(&pids, &np, c->procfd, ".", SIZE_MAX, deadline, &complete,
					NULL, &e)) < 0)
		goto out;
	s->complete = complete;
	for (size_t i = 0; i < np; i++) {
		bool cut = false;
		proc pr;

		if ((i & 15) == 0)
			keep_pace(c);
		if ((i & 15) == 0 && time_mono() > deadline) {
			s->complete = false;
			break;
		}
		free(tids);
		tids = NULL;
		pr_error_clear(&e);
		snprintf(path, sizeof(path), "%d/task", pids[i]);
		/* One process may have more threads than the budget has time for. */
		if ((rc = procfs_list_ids_until(&tids, &nt, c->procfd, path,
						c->cs->max_tasks - s->nt, deadline, &complete, NULL,
						&e)) < 0) {
			if (rc == PR_ENOMEM)
				goto out;
			rc = 0;
			s->gone++;
			continue;
		}
		memset(&pr, 0, sizeof(pr));
		seen = false;
		pr.pid = pids[i];
		pr.fds = -1;
		pr.delta = -1;
		for (size_t k = 0; k < nt; k++) {
			procfs_stat st;
			task t;
			if (s->nt >= c->cs->max_tasks ||
			    ((k & 31) == 31 && time_mono() > deadline)) {
				cut = true;
				break;
			}
			pr_error_clear(&e);
			snprintf(path, sizeof(path), "%d/task/%d/stat", pids[i], tids[k]);
			if ((rc = procfs_read(&c->tmp, c->procfd, path, SMALL_FILE, NULL, NULL,
					      &e)) < 0) {
				if (rc == PR_ENOMEM)
					goto out;
				if (rc == PR_EREFUSED)
					s->refused++;
				else
					s->gone++;
				rc = 0;
				continue;
			}
			if (procfs_stat_parse(&st, c->tmp.ptr, c->tmp.len, NULL) < 0) {
				s->gone++;
				continue;
			}
			memset(&t, 0, sizeof(t));
			t.pid = pids[i];
			t.tid = tids[k];
			t.start = st.starttime;
			t.ticks = st.utime + st.stime;
			t.blkio = st.blkio_ticks;
			t.delta = -1;
			t.processor = st.processor;
			t.state = st.state;
			memcpy(t.comm, st.comm, sizeof(t.comm));
			if ((rc = push_task(s, &t)) < 0)
				goto out;
			/*
			 * The leader's stat names the process (another thread's until
			 * it is read: the first read); rss and threads are its too. The name may be
			 * empty (prctl(PR_SET_NAME, "")): the process is kept all the
			 * same, nameless.
			 */
			if (tids[k] == pids[i] || !seen) {
				memcpy(pr.comm, st.comm, sizeof(pr.comm));
				pr.state = st.state;
				pr.start = st.starttime;
			}
			seen = true;
			pr.threads = st.num_threads;
			pr.rss = st.rss;
			if (st.state == 'D' && (rc = note_blocked(c, stacks_it, &t, at_end)) < 0)
				goto out;
		}
		if (seen && (rc = push_proc(s, &pr)) < 0)
			goto out;
		if (cut || !complete || s->nt >= c->cs->max_tasks) {
			s->complete = false;
			break;
		}
	}
out:
	s->to = time_mono();
	free(pids);
	free(tids);
	return rc;
}

static int task_cmp(const void *a, const void *b)
{
	const task *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int proc_cmp(const void *a, const void *b)
{
	const proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static const task *task_find(const scan *s, int tid)
{
	task key;

	key.tid = tid;
	return s->nt ? bsearch(&key, s->t, s->nt, sizeof(*s->t), task_cmp) : NULL;
}

static proc *proc_find(const scan *s, int pid)
{
	proc key;

	key.pid = pid;
	return s->np ? bsearch(&key, s->p, s->np, sizeof(*s->p), proc_cmp) : NULL;
}

/* Deltas of the second scan against the first: per thread, then per process. */
static void deltas(col *c)
{
	scan *a = &c->s1, *b = &c->s2;

	/* qsort and bsearch may not be given NULL, even for no elements. */
	if (a->nt)
		qsort(a->t, a->nt, sizeof(*a->t), task_cmp);
	if (a->np)
		qsort(a->p, a->np, sizeof(*a->p), proc_cmp);
	if (b->np)
		qsort(b->p, b->np, sizeof(*b->p), proc_cmp);
	for (size_t i = 0; i < b->nt; i++) {
		task *t = &b->t[i];
		const task *o = task_find(a, t->tid);
		proc *p = proc_find(b, t->pid);
		uint64_t blk = 0;
		if (o && o->start == t->start && t->ticks >= o->ticks) {
			t->delta = (int64_t)(t->ticks - o->ticks);
			blk = t->blkio >= o->blkio ? t->blkio - o->blkio : 0;
		} else if (!o && a->complete) {
			t->delta = (int64_t)t->ticks; /* born during the interval */
			blk = t->blkio;
		}
		if (p && t->delta >= 0) {
			p->delta = (p->delta < 0 ? 0 : p->delta) + t->delta;
			p->blkio_delta += blk;
		}
	}
	/* Descriptors were counted between the scans: carry them over. */
	for (size_t i = 0; i < b->np; i++) {
		proc *o = proc_find(a, b->p[i].pid);
		if (o && o->start == b->p[i].start)
			b->p[i].fds = o->fds;
	}
}

/* ---- the kernel files ----------------------------------------------------- */

static const char *kernel_needs_psi =
	"CONFIG_PSI (and psi=1 on the kernel command line where it is off by default)";

/* Pressure files and the other small files read at both ends of the interval. */
static int read_ends(col *c, bool end, json_t *its[])
{
	static const char *const files[] = {"stat", "meminfo", "vmstat", "schedstat"};
	procfs_kv **kv[] = {&c->stat0, &c->meminfo0, &c->vmstat0, NULL};
	size_t *nkv[] = {&c->nstat0, &c->nmeminfo0, &c->nvmstat0, NULL};
	char path[64], mp[64];
	int rc;

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "pressure/%s", psi_names[i]);
		snprintf(mp, sizeof(mp), "proc/pressure/%s.%s", psi_names[i],
			 end ? "end" : "start");
		rc = grab(c, its[0], path, mp, NULL);
		if (rc == PR_ENOMEM)
			return rc;
		if (rc < 0) {
			if (rc == PR_ENOTFOUND)
				item_status(c, its[0], "missing", "/proc/pressure is not in this "
					    "kernel (needs %s)", kernel_needs_psi);
			else
				item_status(c, its[0], "missing", "%s", c->lasterr);
			continue;
		}
		if (!end && buf_put(&c->psi0[i], c->tmp.ptr, c->tmp.len) < 0)
			return PR_ENOMEM;
		if (end) {
			procfs_psi a, b;
			if (procfs_psi_parse(&a, c->psi0[i].ptr, c->psi0[i].len, NULL) == 0 &&
			    procfs_psi_parse(&b, c->tmp.ptr, c->tmp.len, NULL) == 0) {
				json_t *o = json_object_get(c->pressure_start, psi_names[i]);
				double secs = c->s2.from - c->s1.from;
				if (o && secs > 0) {
					jset(c, o, "some_interval_pct",
					     json_real((double)(b.some.total_us - a.some.total_us) /
						       1e4 / secs));
					if (b.full.present)
						jset(c, o, "full_interval_pct",
						     json_real((double)(b.full.total_us -
									a.full.total_us) /
							       1e4 / secs));
				}
			}
		} else {
			procfs_psi p;
			if (procfs_psi_parse(&p, c->tmp.ptr, c->tmp.len, NULL) == 0) {
				json_t *o = json_pack("{s:f,s:f,s:f}", "some_avg10", p.some.avg10,
						      "some_avg60", p.some.avg60, "some_avg300",
						      p.some.avg300);
				if (o && p.full.present) {
					json_object_set_new(o, "full_avg10",
							    json_real(p.full.avg10));
					json_object_set_new(o, "full_avg60",
							    json_real(p.full.avg60));
				}
				jset(c, c->pressure_start, psi_names[i], o);
			} else {
				item_status(c, its[0], "partial", "/proc/pressure/%s: not in the "
					    "expected format", psi_names[i]);
			}
		}
	}
	for (int i = 0; i < 4; i++) {
		json_t *it = its[1 + i];
		snprintf(mp, sizeof(mp), "proc/%s.%s", files[i], end ? "end" : "start");
		rc = grab(c, it, files[i], mp, NULL);
		if (rc == PR_ENOMEM)
			return rc;
		if (rc < 0) {
			if (i == 3 && rc == PR_ENOTFOUND)
				item_status(c, it, "missing",
					    "/proc/schedstat is not in this kernel "
					    "(needs CONFIG_SCHEDSTATS)");
			else
				item_status(c, it, "missing", "%s", c->lasterr);
			continue;
		}
		if (!end && kv[i] &&
		    procfs_kv_parse(kv[i], nkv[i], c->tmp.ptr, c->tmp.len, 10000, NULL) < 0)
			return PR_ENOMEM;
	}
	return 0;
}

/* {"name": end - start} for every line that changed, first value only. */
static json_t *kv_delta(col *c, const procfs_kv *a, size_t na, const char *text, size_t len)
{
	procfs_kv *b = NULL;
	size_t nb = 0;
	json_t *o = json_object();

	if (!o || procfs_kv_parse(&b, &nb, text, len, 10000, NULL) < 0) {
		c->oom = true;
		json_decref(o);
		return NULL;
	}
	for (size_t i = 0; i < nb; i++) {
		const procfs_kv *x = procfs_kv_find(a, na, b[i].name);
		if (x && x->v[0] != b[i].v[0] && strncmp(b[i].name, "cpu", 3) != 0)
			jset(c, o, b[i].name, json_integer(b[i].v[0] - x->v[0]));
	}
	free(b);
	return o;
}

/* The CPU figures of /proc/stat over the interval, and the run queue now. */
static json_t *cpu_summary(col *c, const char *text, size_t len)
{
	procfs_kv *b = NULL;
	size_t nb = 0;
	const procfs_kv *x, *y, *r, *bl;
	json_t *o = json_object();
	double secs = c->s2.from - c->s1.from;
	long ncpu = 0;

	if (!o || procfs_kv_parse(&b, &nb, text, len, 10000, NULL) < 0) {
		c->oom = true;
		json_decref(o);
		return NULL;
	}
	for (size_t i = 0; i < nb; i++)
		ncpu += strncmp(b[i].name, "cpu", 3) == 0 && b[i].name[3] >= '0' &&
			b[i].name[3] <= '9';
	jset(c, o, "cpus", json_integer(ncpu));
	x = procfs_kv_find(c->stat0, c->nstat0, "cpu");
	y = procfs_kv_find(b, nb, "cpu");
	if (x && y && x->nv >= 8 && y->nv >= 8) {
		int64_t d[8], total = 0;
		for (int k = 0; k < 8; k++) {
			d[k] = y->v[k] - x->v[k];
			total += d[k];
		}
		if (total > 0) {
			/* user nice system idle iowait irq softirq steal */
			jset(c, o, "busy_pct", json_real(100.0 * (double)(total - d[3] - d[4]) /
							 (double)total));
			jset(c, o, "user_pct", json_real(100.0 * (double)(d[0] + d[1]) /
							 (double)total));
			jset(c, o, "system_pct", json_real(100.0 * (double)(d[2] + d[5] + d[6]) /
							   (double)total));
			jset(c, o, "iowait_pct", json_real(100.0 * (double)d[4] / (double)total));
			jset(c, o, "steal_pct", json_real(100.0 * (double)d[7] / (double)total));
		}
	}
	if ((x = procfs_kv_find(c->stat0, c->nstat0, "ctxt")) &&
	    (y = procfs_kv_find(b, nb, "ctxt")) && secs > 0)
		jset(c, o, "context_switches_per_s", json_real((double)(y->v[0] - x->v[0]) / secs));
	if ((x = procfs_kv_find(c->stat0, c->nstat0, "processes")) &&
	    (y = procfs_kv_find(b, nb, "processes")))
		jset(c, o, "forks", json_integer(y->v[0] - x->v[0]));
	if ((r = procfs_kv_find(b, nb, "procs_running")))
		jset(c, o, "procs_running", json_integer(r->v[0]));
	if ((bl = procfs_kv_find(b, nb, "procs_blocked")))
		jset(c, o, "procs_blocked", json_integer(bl->v[0]));
	free(b);
	return o;
}

static int collect_end_files(col *c, json_t *its[])
{
	int rc;
	json_t *mem;

	if ((rc = read_ends(c, true, its)) < 0)
		return rc;
	/* The end files are the members just added: their text is in the archive's members. */
	for (size_t i = 0; i < c->nm; i++) {
		const member *mb = &c->m[i];
		if (strcmp(mb->path, "proc/stat.end") == 0)
			jset(c, c->summary, "cpu", cpu_summary(c, mb->data.ptr, mb->data.len));
		else if (strcmp(mb->path, "proc/meminfo.end") == 0) {
			procfs_kv *kv = NULL;
			size_t n = 0;
			static const char *const keys[] = {"MemTotal", "MemFree", "MemAvailable",
							   "Cached", "Dirty", "Writeback",
							   "SwapTotal", "SwapFree", "Committed_AS",
							   "AnonPages", "Shmem", "Slab", NULL};
			mem = json_object();
			jset(c, c->summary, "memory_kb", mem);
			if (mem && procfs_kv_parse(&kv, &n, mb->data.ptr, mb->data.len, 10000,
						   NULL) == 0) {
				for (int k = 0; keys[k]; k++) {
					const procfs_kv *x = procfs_kv_find(kv, n, keys[k]);
					if (x)
						jset(c, mem, keys[k], json_integer(x->v[0]));
				}
			}
			free(kv);
			jset(c, c->summary, "meminfo_delta_kb",
			     kv_delta(c, c->meminfo0, c->nmeminfo0, mb->data.ptr, mb->data.len));
		} else if (strcmp(mb->path, "proc/vmstat.end") == 0) {
			jset(c, c->summary, "vmstat_delta",
			     kv_delta(c, c->vmstat0, c->nvmstat0, mb->data.ptr, mb->data.len));
		}
	}
	return 0;
}

/* ---- process details ------------------------------------------------------ */

/* Which configured service a process belongs to, by comm or cgroup; NULL: none. */
static const config_snapshot_service *service_of(const col *c, const char *comm,
						 const char *cgroup)
{
	for (size_t i = 0; i < c->cs->nservices; i++) {
		const config_snapshot_service *s = &c->cs->services[i];
		size_t n = s->cgroup ? strlen(s->cgroup) : 0;
		for (size_t k = 0; k < s->nprocesses; k++)
			if (strcmp(s->processes[k], comm) == 0)
				return s;
		if (s->cgroup && cgroup &&
		    ((strcmp(s->cgroup, "/") == 0) || (strncmp(cgroup, s->cgroup, n) == 0 &&
						       (cgroup[n] == '\0' || cgroup[n] == '/'))))
			return s;
	}
	return NULL;
}

static int by_cpu(const void *a, const void *b)
{
	const proc *x = a, *y = b;

	if (x->delta != y->delta)
		return x->delta > y->delta ? -1 : 1;
	if (x->rss != y->rss)
		return x->rss > y->rss ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int by_rss(const void *a, const void *b)
{
	const proc *x = a, *y = b;

	if (x->rss != y->rss)
		return x->rss > y->rss ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int by_task_cpu(const void *a, const void *b)
{
	const task *x = a, *y = b;

	if (x->delta != y->delta)
		return x->delta > y->delta ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static double pct(const col *c, int64_t ticks)
{
	double secs = c->s2.from - c->s1.from;

	return ticks < 0 || secs <= 0 ? 0 : 100.0 * (double)ticks / (double)c->tick / secs;
}

/* Round to 0.1 for the JSON. */
static json_t *jr1(double v)
{
	return json_real((double)(int64_t)(v * 10 + (v < 0 ? -0.5 : 0.5)) / 10);
}

/*
 * The command line of one process: name and count, or all of it when
 * allowed. Whose it is was decided on the scan's comm and starttime, read
 * earlier: the process may since have run another program (exec keeps the
 * pid) or exited and left its pid to another, and then the command line
 * read now is not the one the configuration allowed. So the stat is read
 * again after the command line: unless comm and starttime are still the
 * scan's, nothing of the command line is kept. Returns 1 when it was left
 * out for that reason, else 0.
 */
static int cmdline_json(col *c, json_t *o, const proc *p, const config_snapshot_service *svc,
			json_t *it)
{
	char path[64], name[256];
	pr_error e = PR_ERROR_INIT;
	procfs_stat st;
	size_t argc = 0;
	int rc;

	snprintf(path, sizeof(path), "%d/cmdline", p->pid);
	if ((rc = procfs_read(&c->tmp, c->procfd, path, 65536, NULL, NULL, &e)) < 0) {
		item_status(c, it, "partial", "a command line could not be read: %s",
			    why_code(rc));
		return 0;
	}
	/*
	 * argv[0] is not the executable's name (a process may rewrite it, and
	 * some put their state there): the exe link says it, else the comm.
	 */
	procfs_cmdline_parse(name, sizeof(name), &argc, c->tmp.ptr, c->tmp.len);
	if (procfs_exe_name(name, sizeof(name), c->procfd, p->pid, NULL) < 0)
		name[0] = '\0';
	/*
	 * The kernel sets the new comm before the new command line can be
	 * read (it is empty until the program's arguments are in place), so a
	 * command line of another program always comes with another comm here.
	 */
	snprintf(path, sizeof(path), "%d/stat", p->pid);
	pr_error_clear(&e);
	if (procfs_read(&c->tmp2, c->procfd, path, SMALL_FILE, NULL, NULL, &e) < 0 ||
	    procfs_stat_parse(&st, c->tmp2.ptr, c->tmp2.len, NULL) < 0 ||
	    st.starttime != p->start || strcmp(st.comm, p->comm) != 0) {
		jset(c, o, "cmdline_missing",
		     json_string("the process ran another program or exited while it was read"));
		return 1;
	}
	if (name[0])
		jset(c, o, "exe", jclean(c, name, strlen(name)));
	jset(c, o, "argc", json_integer((json_int_t)argc));
	if (svc && svc->full_cmdline) {
		json_t *argv = json_array();
		const char *a = c->tmp.ptr, *end = c->tmp.ptr + c->tmp.len;
		jset(c, o, "cmdline", argv);
		while (argv && a < end) {
			const char *z = memchr(a, '\0', (size_t)(end - a));
			size_t n = z ? (size_t)(z - a) : (size_t)(end - a);
			jpush(c, argv, jclean(c, a, n));
			a += n + 1;
		}
	}
	return 0;
}

/* The cgroup v2 path of a process into c->tmp2 ("" when unknown). */
static void cgroup_of(col *c, int pid, buf *out)
{
	pr_error e = PR_ERROR_INIT;
	char path[64];

	buf_reset(out);
	snprintf(path, sizeof(path), "%d/cgroup", pid);
	if (procfs_read(&c->tmp, c->procfd, path, SMALL_FILE, NULL, NULL, &e) == 0)
		(void)procfs_cgroup2_path(out, c->tmp.ptr, c->tmp.len, &e);
	if (out->len && out->ptr[out->len - 1] == '\n')
		out->ptr[--out->len] = '\0';
}

typedef struct cgset {
	char *path[MAX_CGROUPS];
	size_t n;
} cgset;

static void cgset_add(cgset *s, const char *path)
{
	if (!path || !*path || s->n == MAX_CGROUPS)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->path[i], path) == 0)
			return;
	s->path[s->n] = strdup(path);
	if (s->path[s->n])
		s->n++;
}

static void cgset_release(cgset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->path[i]);
	s->n = 0;
}

/*
 * The top processes by CPU and by memory: status, smaps_rollup, command
 * line, cgroup, descriptors; their cgroups go into `cgs`.
 */
static int top_processes(col *c, json_t *it, cgset *cgs)
{
	scan *s = &c->s2;
	proc *cpu = NULL, *mem = NULL;
	json_t *arr = json_array();
	size_t k = c->cs->top_processes, n = 0, refused = 0, gone = 0, changed = 0;
	int chosen[2 * 1000];
	buf cg = BUF_INIT;
	int rc = 0;

	jset(c, c->summary, "top_processes", arr);
	if (!arr || !s->np)
		return 0;
	if (!(cpu = malloc(s->np * sizeof(*cpu))) || !(mem = malloc(s->np * sizeof(*mem)))) {
		rc = PR_ENOMEM;
		goto out;
	}
	memcpy(cpu, s->p, s->np * sizeof(*cpu));
	memcpy(mem, s->p, s->np * sizeof(*mem));
	qsort(cpu, s->np, sizeof(*cpu), by_cpu);
	qsort(mem, s->np, sizeof(*mem), by_rss);
	for (size_t i = 0; i < k && i < s->np; i++) {
		for (int w = 0; w < 2; w++) {
			int pid = w ? mem[i].pid : cpu[i].pid;
			bool dup = false;
			for (size_t j = 0; j < n; j++)
				dup |= chosen[j] == pid;
			if (!dup && n < sizeof(chosen) / sizeof(chosen[0]))
				chosen[n++] = pid;
		}
	}
	for (size_t j = 0; j < n; j++) {
		const proc *p = proc_find(s, chosen[j]);
		const config_snapshot_service *svc;
		json_t *o;
		char path[64], mp[80];
		bool in_cpu = false, in_mem = false;

		keep_pace(c);
		if (time_mono() > c->dl_collect) {
			item_status(c, it, "partial",
				    "the time budget of %u ms was spent after %zu "
				    "of %zu top processes",
				    c->cs->time_budget_ms, j, n);
			break;
		}
		for (size_t i = 0; i < k && i < s->np; i++) {
			in_cpu |= cpu[i].pid == p->pid;
			in_mem |= mem[i].pid == p->pid;
		}
		cgroup_of(c, p->pid, &cg);
		svc = service_of(c, p->comm, cg.ptr);
		o = json_pack("{s:i,s:o,s:s%,s:I,s:o,s:I,s:o,s:[]}", "pid", p->pid, "name",
			      jclean(c, p->comm, strlen(p->comm)), "state", &p->state, (size_t)1,
			      "threads", (json_int_t)p->threads, "cpu_pct", jr1(pct(c, p->delta)),
			      "rss_bytes", (json_int_t)(p->rss * c->page), "fds",
			      p->fds >= 0 ? json_integer(p->fds) : json_null(), "top_by");
		if (!o) {
			rc = PR_ENOMEM;
			goto out;
		}
		jpush(c, arr, o);
		if (in_cpu)
			jpush(c, json_object_get(o, "top_by"), json_string("cpu"));
		if (in_mem)
			jpush(c, json_object_get(o, "top_by"), json_string("memory"));
		if (svc)
			jset(c, o, "service", json_string(svc->name));
		if (cg.len) {
			jset(c, o, "cgroup", jclean(c, cg.ptr, cg.len));
			cgset_add(cgs, cg.ptr);
		}
		changed += (size_t)cmdline_json(c, o, p, svc, it);
		for (int f = 0; f < 2; f++) {
			const char *file = f ? "smaps_rollup" : "status";
			snprintf(path, sizeof(path), "%d/%s", p->pid, file);
			snprintf(mp, sizeof(mp), "proc/%d/%s", p->pid, file);
			rc = grab(c, it, path, mp, NULL);
			if (rc == PR_ENOMEM)
				goto out;
			if (rc == PR_EREFUSED)
				refused++;
			else if (rc < 0)
				gone++;
			if (rc == 0)
				jset(c, o, file, json_string(mp));
			rc = 0;
		}
	}
	if (refused)
		item_status(c, it, "partial", "%zu status or smaps_rollup files: permission "
			    "denied (another user's processes need CAP_SYS_PTRACE)", refused);
	if (gone)
		item_status(c, it, "partial", "%zu status or smaps_rollup files: the process "
			    "exited", gone);
	if (changed)
		item_status(c, it, "partial",
			    "%zu command lines left out: the process ran "
			    "another program or exited while it was read",
			    changed);
out:
	buf_release(&cg);
	free(cpu);
	free(mem);
	return rc;
}

/* The top threads by CPU over the interval. */
static int top_threads(col *c)
{
	scan *s = &c->s2;
	json_t *arr = json_array();
	task *t;

	jset(c, c->summary, "top_threads", arr);
	if (!arr || !s->nt)
		return 0;
	if (!(t = malloc(s->nt * sizeof(*t))))
		return PR_ENOMEM;
	memcpy(t, s->t, s->nt * sizeof(*t));
	qsort(t, s->nt, sizeof(*t), by_task_cpu);
	for (size_t i = 0; i < s->nt && i < c->cs->top_threads && t[i].delta > 0; i++) {
		const proc *p = proc_find(s, t[i].pid);
		json_t *o = json_pack("{s:i,s:i,s:o,s:o,s:s%,s:o,s:I,s:i}", "pid", t[i].pid,
				      "tid", t[i].tid, "comm",
				      jclean(c, t[i].comm, strlen(t[i].comm)), "process",
				      p ? jclean(c, p->comm, strlen(p->comm)) : json_null(),
				      "state", &t[i].state, (size_t)1, "cpu_pct",
				      jr1(pct(c, t[i].delta)), "cpu_ms",
				      (json_int_t)(t[i].delta * 1000 / c->tick), "processor",
				      t[i].processor);
		jpush(c, arr, o);
	}
	free(t);
	return 0;
}

/* Every process with its descriptors, threads, memory and CPU (bounded). */
static void process_list(col *c)
{
	scan *s = &c->s2;
	json_t *arr = json_array();
	proc *p;
	int64_t fds_total = 0;

	jset(c, c->summary, "processes", arr);
	if (!arr || !s->np || !(p = malloc(s->np * sizeof(*p))))
		return;
	memcpy(p, s->p, s->np * sizeof(*p));
	qsort(p, s->np, sizeof(*p), by_cpu);
	for (size_t i = 0; i < s->np; i++) {
		if (p[i].fds > 0)
			fds_total += p[i].fds;
		if (i >= MAX_PROC_LIST)
			continue;
		jpush(c, arr, json_pack("{s:i,s:o,s:s%,s:I,s:o,s:I,s:o,s:I}", "pid", p[i].pid,
					"name", jclean(c, p[i].comm, strlen(p[i].comm)), "state",
					&p[i].state, (size_t)1, "threads",
					(json_int_t)p[i].threads, "cpu_pct",
					jr1(pct(c, p[i].delta)), "rss_kb",
					(json_int_t)(p[i].rss * c->page / 1024), "fds",
					p[i].fds >= 0 ? json_integer(p[i].fds) : json_null(),
					"blkio_ms", (json_int_t)(p[i].blkio_delta * 1000 /
								 (uint64_t)c->tick)));
	}
	if (s->np > MAX_PROC_LIST)
		jset(c, c->summary, "processes_left_out",
		     json_integer((json_int_t)(s->np - MAX_PROC_LIST)));
	jset(c, c->summary, "fds_counted", json_integer(fds_total));
	free(p);
}

/* Open descriptors of every process of the first scan. */
static void count_fds(col *c, json_t *it)
{
	size_t refused = 0, cut = 0, done = 0;
	char path[64];

	for (size_t i = 0; i < c->s1.np; i++) {
		pr_error e = PR_ERROR_INIT;
		uint64_t n = 0;
		bool complete = true;
		int rc;
		if ((i & 7) == 0)
			keep_pace(c);
		if ((i & 7) == 0 && time_mono() > c->dl_extras) {
			item_status(c, it, "partial", "the time budget ran out after %zu of %zu "
				    "processes", i, c->s1.np);
			break;
		}
		snprintf(path, sizeof(path), "%d/fd", c->s1.p[i].pid);
		rc = procfs_count_entries(&n, c->procfd, path, 10000000, c->dl_extras, &complete,
					  NULL, &e);
		if (rc == PR_EREFUSED) {
			refused++;
			continue;
		}
		if (rc < 0)
			continue;
		c->s1.p[i].fds = (int64_t)n;
		done++;
		cut += !complete;
	}
	if (refused)
		item_status(c, it, "partial", "%zu of %zu processes: permission denied (another "
			    "user's descriptors need CAP_SYS_PTRACE)", refused, c->s1.np);
	if (cut)
		item_status(c, it, "partial", "%zu processes' descriptors counted in part "
			    "(time budget)", cut);
	jset(c, c->summary, "fds_processes_counted", json_integer((json_int_t)done));
}

static void blocked_json(col *c, json_t *it, json_t *stacks_it)
{
	json_t *arr = json_array();
	size_t unknown_wchan = 0;

	jset(c, c->summary, "blocked_tasks", arr);
	jset(c, c->summary, "blocked_count", json_integer((json_int_t)c->nblocked_all));
	for (size_t i = 0; arr && i < c->nbl; i++) {
		const blocked *b = &c->bl[i];
		json_t *o = json_pack("{s:i,s:i,s:o,s:s?,s:s,s:s?,s:s?}", "pid", b->pid, "tid",
				      b->tid, "comm", jclean(c, b->comm, strlen(b->comm)), "wchan",
				      b->wchan, "seen",
				      b->at_start && b->at_end ? "start and end"
				      : b->at_start	       ? "start"
							       : "end",
				      "stack", b->stack_member, "stack_missing", b->stack_why);
		jpush(c, arr, o);
		unknown_wchan += !b->wchan;
	}
	if (c->nblocked_all > c->nbl)
		item_status(c, it, "partial", "%zu blocked tasks, the first %d described",
			    c->nblocked_all, MAX_BLOCKED);
	if (unknown_wchan)
		item_status(c, it, "partial", "%zu blocked tasks do not say what they wait on "
			    "(wchan needs ptrace access: the same user or CAP_SYS_PTRACE)",
			    unknown_wchan);
	if (c->blocked_stack_refused)
		item_status(c, stacks_it, "missing", "%zu kernel stacks: permission denied "
			    "(/proc/PID/stack needs CAP_SYS_ADMIN)", c->blocked_stack_refused);
}

/* ---- cgroups, BPF, the kernel log ------------------------------------------- */

static void cgroup_pressure(col *c, json_t *it, cgset *cgs)
{
	pr_error e = PR_ERROR_INIT;
	buf mnt = BUF_INIT;
	json_t *arr = json_array();
	char path[64];
	int root = -1, rc;

	jset(c, c->summary, "cgroups", arr);
	snprintf(path, sizeof(path), "%d/mountinfo", c->self);
	if ((rc = procfs_read(&c->tmp, c->procfd, path, c->cs->file_max_bytes, NULL, NULL,
			      &e)) < 0 ||
	    (rc = procfs_cgroup2_mount(&mnt, c->tmp.ptr, c->tmp.len, &e)) < 0) {
		item_status(c, it, "missing", "%s", rc == PR_ENOTFOUND
				   ? "no cgroup v2 hierarchy is mounted" : e.msg);
		goto out;
	}
	if (procfs_dir_open(&root, AT_FDCWD, mnt.ptr, NULL, &e) < 0) {
		item_status(c, it, "missing", "%s", e.msg);
		goto out;
	}
	if (cgs->n == 0)
		item_status(c, it, "missing", "no cgroup known: no --service with a configured "
			    "cgroup, and the top processes are in none");
	for (size_t i = 0; i < cgs->n; i++) {
		json_t *o = json_pack("{s:o,s:{}}", "cgroup",
				      jclean(c, cgs->path[i], strlen(cgs->path[i])), "files");
		jpush(c, arr, o);
		for (int k = 0; k < 3 && o; k++) {
			char file[1100], mp[96];
			bool trunc;
			pr_error e2 = PR_ERROR_INIT;
			if (strcmp(cgs->path[i], "/") == 0)
				snprintf(file, sizeof(file), "%s.pressure", psi_names[k]);
			else
				snprintf(file, sizeof(file), "%s/%s.pressure", cgs->path[i] + 1,
					 psi_names[k]);
			rc = procfs_read(&c->tmp, root, file, c->cs->file_max_bytes, &trunc, NULL,
					 &e2);
			if (rc < 0) {
				item_status(c, it, "partial", "%s", e2.msg);
				continue;
			}
			snprintf(mp, sizeof(mp), "cgroup/%zu/%s.pressure", i, psi_names[k]);
			if (add_member(c, it, mp, c->tmp.ptr, c->tmp.len) == 0)
				jset(c, json_object_get(o, "files"), psi_names[k], json_string(mp));
		}
	}
out:
	if (root >= 0)
		close(root);
	buf_release(&mnt);
}

static void bpf_programs(col *c, json_t *it)
{
	pr_error e = PR_ERROR_INIT;
	procfs_bpf_prog *p = NULL;
	size_t n = 0;
	bool complete = true, stats = false;
	json_t *doc, *arr;
	int rc;

	if (procfs_read(&c->tmp, c->procfd, "sys/kernel/bpf_stats_enabled", SMALL_FILE, NULL,
			NULL, &e) == 0)
		stats = c->tmp.ptr[0] == '1';
	pr_error_clear(&e);
	if ((rc = procfs_bpf_progs(&p, &n, 100000, c->dl_extras, &complete, NULL, &e)) < 0) {
		if (rc == PR_EREFUSED)
			item_status(c, it, "missing", "permission denied: listing BPF programs "
				    "needs CAP_SYS_ADMIN");
		else
			item_status(c, it, "missing", "%s", e.msg);
		return;
	}
	if (!complete)
		item_status(c, it, "partial", "the time budget ran out after %zu programs", n);
	if (!stats)
		jset(c, it, "note", json_string("run time and count are 0: "
						"kernel.bpf_stats_enabled is 0"));
	doc = json_pack("{s:b,s:[]}", "stats_enabled", stats, "programs");
	arr = json_object_get(doc, "programs");
	for (size_t i = 0; arr && i < n; i++)
		jpush(c, arr, json_pack("{s:I,s:s,s:o,s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "id",
					(json_int_t)p[i].id, "type", p[i].type, "name",
					jclean(c, p[i].name, strlen(p[i].name)), "tag", p[i].tag,
					"run_time_ns", (json_int_t)p[i].run_time_ns, "run_cnt",
					(json_int_t)p[i].run_cnt, "recursion_misses",
					(json_int_t)p[i].recursion_misses, "uid",
					(json_int_t)p[i].uid, "maps", (json_int_t)p[i].nr_map_ids,
					"verified_insns", (json_int_t)p[i].verified_insns));
	jset(c, c->summary, "bpf_programs", json_integer((json_int_t)n));
	if (doc) {
		char *text = json_dumps(doc, JSON_INDENT(1));
		if (!text || add_member(c, it, "kernel/bpf_programs.json", text, strlen(text)) < 0)
			c->oom = true;
		free(text);
	} else {
		c->oom = true;
	}
	json_decref(doc);
	free(p);
}

static void kernel_log(col *c, json_t *it)
{
	const char *path = c->o->kmsg_path ? c->o->kmsg_path : "/dev/kmsg";
	pr_error e = PR_ERROR_INIT;
	procfs_kmsg_info info;
	buf log = BUF_INIT;
	/* At most half of the room left, so the files after it still fit. */
	size_t room = c->raw < c->raw_limit ? (c->raw_limit - c->raw) / 2 : 0;
	size_t keep = c->cs->kmsg_bytes < room ? (size_t)c->cs->kmsg_bytes : room;
	int rc;

	if (c->cs->kmsg_bytes == 0) {
		item_status(c, it, "missing", "turned off (snapshot.kmsg_bytes is 0)");
		return;
	}
	rc = procfs_kmsg_tail(&log, &info, path, keep, c->dl_extras, NULL, &e);
	if (rc == PR_EREFUSED) {
		bool restricted = procfs_read(&c->tmp, c->procfd, "sys/kernel/dmesg_restrict",
					      SMALL_FILE, NULL, NULL, NULL) == 0 &&
				  c->tmp.ptr[0] == '1';
		item_status(c, it, "missing", "permission denied%s", restricted
			    ? ": kernel.dmesg_restrict is 1, which needs CAP_SYSLOG" : "");
		return;
	}
	if (rc < 0) {
		item_status(c, it, "missing", "%s", e.msg);
		return;
	}
	if (!info.complete)
		item_status(c, it, "partial", "the time budget ran out before the end of the log: "
			    "the tail kept ends %.0f ms into the snapshot", since(c) * 1000);
	if (info.lost)
		item_status(c, it, "partial", "%" PRIu64 " records were overwritten by the kernel "
			    "while the log was read", info.lost);
	if (keep < c->cs->kmsg_bytes && info.bytes > log.len)
		item_status(c, it, "partial",
			    "the size budget of %zu bytes leaves room for the last "
			    "%zu bytes of the log only",
			    c->size_budget, keep);
	jset(c, c->summary, "kmsg", json_pack("{s:I,s:I,s:I,s:b,s:I}", "records_read",
					      (json_int_t)info.records, "bytes_read",
					      (json_int_t)info.bytes, "lost", (json_int_t)info.lost,
					      "complete", info.complete, "bytes_kept",
					      (json_int_t)log.len));
	if (add_member(c, it, "kernel/kmsg", log.ptr, log.len) == PR_ENOMEM)
		c->oom = true;
	buf_release(&log);
}

/* ---- the manifest and the archive ------------------------------------------- */

static bool text_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	{
		json_t *v = json_string(s); /* NULL when it is not valid UTF-8 */
		bool ok = v != NULL;
		json_decref(v);
		return ok;
	}
}

static int check_opts(const snapshot_opts *o, pr_error *err)
{
	if (o->incident && !text_ok(o->incident, SNAPSHOT_INCIDENT_MAX))
		return pr_error_set(err, PR_EUSAGE, "incident '%.300s': expected 1 to %d bytes of "
				    "printable UTF-8", o->incident, SNAPSHOT_INCIDENT_MAX);
	if (o->reason && !text_ok(o->reason, SNAPSHOT_REASON_MAX))
		return pr_error_set(err, PR_EUSAGE, "reason: expected 1 to %d bytes of printable "
				    "UTF-8", SNAPSHOT_REASON_MAX);
	if (o->service && !db_service_name_valid(o->service))
		return pr_error_set(err, PR_EUSAGE, "service '%.200s': not a valid service name",
				    o->service);
	if (o->trigger) {
		size_t n = strlen(o->trigger);
		bool ok = n >= 1 && n <= 32 && o->trigger[0] >= 'a' && o->trigger[0] <= 'z';
		for (size_t i = 0; ok && i < n; i++)
			ok = (o->trigger[i] >= 'a' && o->trigger[i] <= 'z') ||
			     (o->trigger[i] >= '0' && o->trigger[i] <= '9') ||
			     o->trigger[i] == '_' || o->trigger[i] == '-';
		if (!ok)
			return pr_error_set(err, PR_EUSAGE, "trigger '%.64s': expected 1 to 32 "
					    "lower-case letters, digits, '_' or '-'", o->trigger);
	}
	return 0;
}

int snapshot_hostname(char out[SNAPSHOT_HOST_MAX + 1], pr_error *err)
{
	if (gethostname(out, SNAPSHOT_HOST_MAX) < 0)
		return pr_error_set(err, PR_EIO, "cannot read the host name: %s", strerror(errno));
	out[SNAPSHOT_HOST_MAX] = '\0';
	if (!out[0])
		snprintf(out, SNAPSHOT_HOST_MAX + 1, "localhost");
	return 0;
}

static json_t *caps_json(uint64_t caps)
{
	return json_pack("{s:b,s:b,s:b,s:b,s:b,s:b}", "CAP_SYS_ADMIN",
			 (int)(caps >> CAP_BIT_SYS_ADMIN & 1), "CAP_SYSLOG",
			 (int)(caps >> CAP_BIT_SYSLOG & 1), "CAP_SYS_PTRACE",
			 (int)(caps >> CAP_BIT_SYS_PTRACE & 1), "CAP_DAC_READ_SEARCH",
			 (int)(caps >> CAP_BIT_DAC_READ_SEARCH & 1), "CAP_BPF",
			 (int)(caps >> CAP_BIT_BPF & 1), "CAP_PERFMON",
			 (int)(caps >> CAP_BIT_PERFMON & 1));
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Highlights for `snapshot show` and reports, from the summary. */
static json_t *highlights(col *c)
{
	json_t *h = json_object(), *tt = json_array(), *v;
	size_t i;

	if (!h || !tt) {
		json_decref(h);
		json_decref(tt);
		c->oom = true;
		return NULL;
	}
	if ((v = json_object_get(c->summary, "pressure")))
		jset(c, h, "pressure", json_deep_copy(v));
	if ((v = json_object_get(c->summary, "loadavg")))
		jset(c, h, "loadavg", json_deep_copy(v));
	if ((v = json_object_get(c->summary, "cpu")))
		jset(c, h, "cpu", json_deep_copy(v));
	jset(c, h, "blocked_tasks", json_incref(json_object_get(c->summary, "blocked_count")));
	jset(c, h, "top_threads", tt);
	json_array_foreach(json_object_get(c->summary, "top_threads"), i, v) {
		if (i == 5)
			break;
		jpush(c, tt, json_pack("{s:O,s:O,s:O,s:O}", "tid", json_object_get(v, "tid"),
				       "comm", json_object_get(v, "comm"), "process",
				       json_object_get(v, "process"), "cpu_pct",
				       json_object_get(v, "cpu_pct")));
	}
	return h;
}

static int loadavg(col *c, json_t *it)
{
	double a, b, d;
	int run, tot, rc;

	if ((rc = grab(c, it, "loadavg", NULL, NULL)) == PR_ENOMEM)
		return rc;
	if (rc < 0) {
		item_status(c, it, "missing", "%s", c->lasterr);
		return 0;
	}
	if (sscanf(c->tmp.ptr, "%lf %lf %lf %d/%d", &a, &b, &d, &run, &tot) == 5)
		jset(c, c->summary, "loadavg", json_pack("{s:f,s:f,s:f,s:i,s:i}", "1m", a, "5m", b,
							 "15m", d, "runnable", run, "tasks", tot));
	return 0;
}

static void members_release(col *c)
{
	for (size_t i = 0; i < c->nm; i++) {
		free(c->m[i].path);
		buf_release(&c->m[i].data);
	}
	free(c->m);
	c->m = NULL;
	c->nm = c->capm = 0;
}

static void col_release(col *c)
{
	members_release(c);
	json_decref(c->items);
	json_decref(c->summary);
	buf_release(&c->tmp);
	buf_release(&c->tmp2);
	for (int i = 0; i < 3; i++)
		buf_release(&c->psi0[i]);
	scan_release(&c->s1);
	scan_release(&c->s2);
	for (size_t i = 0; i < c->nbl; i++) {
		free(c->bl[i].wchan);
		free(c->bl[i].stack_member);
	}
	free(c->bl);
	free(c->stat0);
	free(c->meminfo0);
	free(c->vmstat0);
	if (c->procfd >= 0)
		close(c->procfd);
}

void snapshot_archive_release(snapshot_archive *a)
{
	buf_release(&a->data);
	json_decref(a->manifest);
	a->manifest = NULL;
}

/* Count items not whole. */
static size_t not_whole(json_t *items)
{
	size_t i, n = 0;
	json_t *it;

	json_array_foreach(items, i, it)
		n += strcmp(json_string_value(json_object_get(it, "status")), "collected") != 0;
	return n;
}

static void lower_priority(col *c, json_t *who, int *old_nice, int *old_io, bool *changed)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int now;

	*changed = false;
	errno = 0;
	*old_nice = getpriority(PRIO_PROCESS, (id_t)tid);
	*old_io = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_THREAD, tid);
	if (!c->o->keep_priority) {
		if (*old_nice < (int)c->cs->nice)
			(void)setpriority(PRIO_PROCESS, (id_t)tid, (int)c->cs->nice);
		(void)syscall(SYS_ioprio_set, IOPRIO_WHO_THREAD, tid,
			      IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT);
		*changed = true;
	}
	errno = 0;
	now = getpriority(PRIO_PROCESS, (id_t)tid);
	jset(c, who, "nice", json_integer(now));
	now = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_THREAD, tid);
	jset(c, who, "io_class", json_string(now < 0 ? "unknown"
					     : (now >> IOPRIO_CLASS_SHIFT) == IOPRIO_CLASS_IDLE
						     ? "idle"
					     : (now >> IOPRIO_CLASS_SHIFT) == 1 ? "realtime"
										 : "best-effort"));
}

static void restore_priority(int old_nice, int old_io)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	/* Raising the priority back needs CAP_SYS_NICE: without it, it stays low. */
	(void)setpriority(PRIO_PROCESS, (id_t)tid, old_nice);
	if (old_io >= 0)
		(void)syscall(SYS_ioprio_set, IOPRIO_WHO_THREAD, tid, old_io);
}

/*
 * Gentle first, bounded always: on a host whose CPUs are saturated (the
 * incident), a thread at nice 19 gets about 1.5% of a core and would
 * overrun the time budget many times over for 50 ms of work. Once 30% of
 * the budget is gone (on a host with CPU to spare a snapshot is all but
 * done by then, asleep in its sampling interval), the priority it had is
 * given back for the rest, where the process may raise it again (root).
 */
static void keep_pace(col *c)
{
	if (!c->lowered || c->restored || since(c) < 0.3 * c->cs->time_budget_ms / 1000.0)
		return;
	restore_priority(c->old_nice, c->old_io);
	c->restored = true;
	c->restored_at = since(c);
}

/* Drop the last raw file and say so in the item that named it. */
static void drop_last(col *c)
{
	json_t *it;
	size_t i;

	c->nm--;
	c->raw -= tar_cost(c->m[c->nm].data.len);
	json_array_foreach(c->items, i, it) {
		json_t *files = json_object_get(it, "files"), *f;
		size_t k;
		json_array_foreach(files, k, f) {
			if (strcmp(json_string_value(f), c->m[c->nm].path) == 0) {
				item_status(c, it, "partial",
					    "the size budget of %zu bytes is spent: "
					    "'%s' left out",
					    c->size_budget, c->m[c->nm].path);
				json_array_remove(files, k);
				break;
			}
		}
	}
	free(c->m[c->nm].path);
	buf_release(&c->m[c->nm].data);
}

/*
 * Build manifest.json and summary.json and the archive. The raw files
 * were kept within the size budget before compression, so the archive
 * almost always fits; when it does not (the JSON documents on a tiny
 * budget), raw files are dropped from the end, the least important
 * first, until it does.
 */
static int build_archive(col *c, snapshot_archive *out, json_t *base, pr_error *err)
{
	tarzst_member *tm = NULL;
	char *mtext = NULL, *stext = NULL;
	json_t *members;
	int rc = 0;

	if (!(tm = calloc(c->nm + 2, sizeof(*tm)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		pr_error e2 = PR_ERROR_INIT;

		free(mtext);
		free(stext);
		mtext = stext = NULL;
		members = json_array();
		for (size_t i = 0; members && i < c->nm; i++)
			jpush(c, members, json_pack("{s:s,s:I}", "path", c->m[i].path, "bytes",
						    (json_int_t)c->m[i].data.len));
		jset(c, base, "members", members);
		jset(c, base, "items", json_incref(c->items));
		jset(c, base, "not_collected", json_integer((json_int_t)not_whole(c->items)));
		if (c->oom || !(stext = json_dumps(c->summary, JSON_INDENT(1))) ||
		    !(mtext = json_dumps(base, JSON_INDENT(1)))) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		tm[0] = (tarzst_member){"manifest.json", mtext, strlen(mtext)};
		tm[1] = (tarzst_member){"summary.json", stext, strlen(stext)};
		for (size_t i = 0; i < c->nm; i++)
			tm[i + 2] = (tarzst_member){c->m[i].path, c->m[i].data.ptr,
						    c->m[i].data.len};
		rc = tarzst_write(&out->data, tm, c->nm + 2, c->taken_at_us / 1000000,
				  c->size_budget, &e2);
		if (rc != PR_ELIMIT || c->nm == 0) {
			if (rc < 0)
				pr_error_set(err, rc, "%s", e2.msg);
			break;
		}
		/* An eighth at a time: a few compressions at most. */
		for (size_t k = c->nm / 8 + 1; k > 0 && c->nm > 0; k--)
			drop_last(c);
	}
	if (rc == 0)
		out->manifest = json_incref(base);
out:
	free(tm);
	free(mtext);
	free(stext);
	return rc;
}

int snapshot_take(snapshot_archive *out, const config *cfg, const snapshot_opts *o,
		  pr_error *err)
{
	col c;
	struct utsname un;
	struct rusage ru1;
	json_t *base = NULL, *who = NULL, *its[5], *stacks_it, *blocked_it, *fds_it;
	json_t *threads_it, *procs_it, *cg_it, *bpf_it, *kmsg_it, *load_it;
	const char *root = o->proc_root ? o->proc_root : "/proc";
	char when[TIME_FMT_MAX];
	double budget, sample, t_start;
	int rc;
	cgset cgs = {{0}, 0};
	memset(out, 0, sizeof(*out));
	buf_init(&out->data, SIZE_MAX);
	memset(&c, 0, sizeof(c));
	c.procfd = -1;
	buf_init(&c.tmp, SIZE_MAX);
	buf_init(&c.tmp2, SIZE_MAX);
	for (int i = 0; i < 3; i++)
		buf_init(&c.psi0[i], SIZE_MAX);
	if ((rc = check_opts(o, err)) < 0)
		return rc;
	c.cs = &cfg->snapshot;
	c.cfg = cfg;
	c.o = o;
	c.t0 = time_mono();
	c.taken_at_us = time_now_us();
	c.self = getpid();
	c.tick = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	c.page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
	getrusage(RUSAGE_THREAD, &c.ru0);
	budget = c.cs->time_budget_ms / 1000.0;
	/* The archive gets the last tenth of the time; the interval at most 40% of it. */
	c.dl_collect = c.t0 + 0.9 * budget;
	sample = c.cs->sample_ms / 1000.0;
	if (sample > 0.4 * budget)
		sample = 0.4 * budget;
	c.dl_sample = c.t0 + sample;
	c.dl_extras = c.t0 + (sample > 0.45 * budget ? sample : 0.45 * budget);
	c.size_budget = (size_t)c.cs->size_budget_bytes;
	c.raw_limit = c.size_budget;
	if ((rc = snapshot_hostname(c.host, err)) < 0)
		goto out;
	if (!(c.items = json_array()) || !(c.summary = json_object()) ||
	    !(base = json_object()) || !(who = json_object())) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = procfs_dir_open(&c.procfd, AT_FDCWD, root, NULL, err)) < 0)
		goto out;
	time_format(when, c.taken_at_us);
	uname(&un);
	if (procfs_caps(&c.caps, NULL) < 0)
		c.caps = 0;
	lower_priority(&c, who, &c.old_nice, &c.old_io, &c.lowered);
	jset(&c, base, "kind", json_string(SNAPSHOT_KIND));
	jset(&c, base, "schema_version", json_integer(SNAPSHOT_SCHEMA_VERSION));
	jset(&c, base, "host", jclean(&c, c.host, strlen(c.host)));
	jset(&c, base, "taken_at", json_string(when));
	jset(&c, base, "taken_at_us", json_integer(c.taken_at_us));
	jset(&c, base, "kernel", json_pack("{s:s,s:s,s:s,s:s}", "sysname", un.sysname, "release",
					   un.release, "version", un.version, "machine",
					   un.machine));
	jset(&c, base, "incident", o->incident ? json_string(o->incident) : json_null());
	jset(&c, base, "reason", o->reason ? json_string(o->reason) : json_null());
	jset(&c, base, "service", o->service ? json_string(o->service) : json_null());
	jset(&c, base, "trigger", json_string(o->trigger ? o->trigger : "manual"));
	jset(&c, base, "profreg_version", json_string(PROFREG_VERSION));
	if (procfs_read(&c.tmp, c.procfd, "sys/kernel/random/boot_id", SMALL_FILE, NULL, NULL,
			NULL) == 0 && c.tmp.len > 1)
		jset(&c, base, "boot_id", json_stringn(c.tmp.ptr, c.tmp.len - 1));
	if (procfs_read(&c.tmp, c.procfd, "uptime", SMALL_FILE, NULL, NULL, NULL) == 0)
		jset(&c, base, "uptime_s", json_real(strtod(c.tmp.ptr, NULL)));
	jset(&c, who, "uid", json_integer((json_int_t)getuid()));
	jset(&c, who, "euid", json_integer((json_int_t)geteuid()));
	jset(&c, who, "capabilities", caps_json(c.caps));
	jset(&c, base, "collector", who);
	jset(&c, base, "budget", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "time_ms",
					   (json_int_t)c.cs->time_budget_ms, "size_bytes",
					   (json_int_t)c.cs->size_budget_bytes, "sample_ms",
					   (json_int_t)(sample * 1000), "file_max_bytes",
					   (json_int_t)c.cs->file_max_bytes, "kmsg_bytes",
					   (json_int_t)c.cs->kmsg_bytes, "max_tasks",
					   (json_int_t)c.cs->max_tasks));
	jset(&c, c.summary, "schema_version", json_integer(SNAPSHOT_SCHEMA_VERSION));
	c.pressure_start = jset(&c, c.summary, "pressure", json_object());

	/* Every item is listed up front, so none can go missing silently. */
	its[0] = item(&c, "kernel", "pressure", "/proc/pressure/{cpu,memory,io}",
		      kernel_needs_psi);
	load_it = item(&c, "kernel", "loadavg", "/proc/loadavg", NULL);
	its[1] = item(&c, "kernel", "run_queue", "/proc/stat (procs_running, procs_blocked, cpu)",
		      NULL);
	its[4] = item(&c, "kernel", "schedstat", "/proc/schedstat", "CONFIG_SCHEDSTATS");
	bpf_it = item(&c, "kernel", "bpf_programs", "bpf(BPF_PROG_GET_NEXT_ID) through libbpf",
		      "CAP_SYS_ADMIN; run time and count need kernel.bpf_stats_enabled=1");
	stacks_it = item(&c, "kernel", "blocked_stacks", "/proc/PID/task/TID/stack of D-state "
			 "tasks", "CAP_SYS_ADMIN");
	cg_it = item(&c, "kernel", "cgroup_pressure", "<cgroup2>/PATH/{cpu,memory,io}.pressure "
		     "of the service and the top processes", "cgroup v2 and CONFIG_PSI");
	fds_it = item(&c, "contention", "file_descriptors", "/proc/PID/fd of every process",
		      "CAP_SYS_PTRACE for other users' processes");
	blocked_it = item(&c, "contention", "blocked_tasks", "/proc/PID/task/TID/{stat,wchan} "
			  "of D-state tasks", "CAP_SYS_PTRACE for other users' wchan");
	its[2] = item(&c, "contention", "meminfo", "/proc/meminfo at both ends of the interval",
		      NULL);
	its[3] = item(&c, "contention", "vmstat", "/proc/vmstat at both ends of the interval",
		      NULL);
	threads_it = item(&c, "process", "top_threads", "/proc/PID/task/TID/stat at both ends "
			  "of the interval", NULL);
	procs_it = item(&c, "process", "top_processes", "/proc/PID/{status,smaps_rollup,cmdline,"
			"cgroup} of the top processes by CPU and by memory",
			"CAP_SYS_PTRACE for other users' smaps_rollup");
	kmsg_it = item(&c, "process", "kernel_log", "/dev/kmsg (its tail)",
		       "CAP_SYSLOG when kernel.dmesg_restrict is 1");
	if (c.oom) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}

	/* 1. The start: every task, the files read at both ends. */
	t_start = time_mono();
	if ((rc = scan_tasks(&c, &c.s1, stacks_it, false, c.dl_collect)) == PR_ENOMEM ||
	    (rc = read_ends(&c, false, its)) == PR_ENOMEM || (rc = loadavg(&c, load_it)) < 0)
		goto oom;
	item_ms(&c, threads_it, t_start);
	if (!c.s1.complete)
		item_status(&c, threads_it, "partial", c.s1.nt >= c.cs->max_tasks
			    ? "more threads than snapshot.max_tasks: the first %zu read"
			    : "the time budget ran out after %zu threads", c.s1.nt);

	/* 2. During the interval: what takes time but needs no second look. */
	t_start = time_mono();
	kernel_log(&c, kmsg_it);
	item_ms(&c, kmsg_it, t_start);
	t_start = time_mono();
	bpf_programs(&c, bpf_it);
	item_ms(&c, bpf_it, t_start);
	t_start = time_mono();
	count_fds(&c, fds_it);
	item_ms(&c, fds_it, t_start);
	if (grab(&c, fds_it, "sys/fs/file-nr", NULL, NULL) == PR_ENOMEM)
		goto oom;
	if (c.oom)
		goto oom;
	while (time_mono() < c.dl_sample) {
		double left = c.dl_sample - time_mono();
		struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
		if (left <= 0 || nanosleep(&ts, NULL) == 0)
			break;
	}

	/* 3. The end: the tasks again, the end files, then the details of the top ones. */
	t_start = time_mono();
	if (time_mono() > c.dl_collect) {
		item_status(&c, threads_it, "missing", "the time budget of %u ms was spent before "
			    "the second look at the threads", c.cs->time_budget_ms);
	} else {
		if ((rc = scan_tasks(&c, &c.s2, stacks_it, true, c.dl_collect)) == PR_ENOMEM)
			goto oom;
		if (!c.s2.complete)
			item_status(&c, threads_it, "partial", "the second look at the threads was "
				    "cut short after %zu (time budget or snapshot.max_tasks)",
				    c.s2.nt);
		if ((rc = collect_end_files(&c, its)) == PR_ENOMEM)
			goto oom;
		deltas(&c);
		if ((rc = top_threads(&c)) < 0)
			goto oom;
		if (c.s1.refused || c.s2.refused)
			item_status(&c, threads_it, "partial", "%zu thread stat files not read: "
				    "permission denied, or a symbolic link (never followed)",
				    c.s1.refused + c.s2.refused);
		jset(&c, c.summary, "interval_ms",
		     json_integer((json_int_t)((c.s2.from - c.s1.from) * 1000)));
		jset(&c, c.summary, "tasks", json_pack("{s:I,s:I,s:b}", "processes",
						       (json_int_t)c.s2.np, "threads",
						       (json_int_t)c.s2.nt, "complete",
						       c.s1.complete && c.s2.complete));
	}
	item_ms(&c, threads_it, t_start);
	t_start = time_mono();
	if (c.s2.np && (rc = top_processes(&c, procs_it, &cgs)) < 0)
		goto oom;
	if (!c.s2.np)
		item_status(&c, procs_it, "missing", "no second look at the processes (time "
			    "budget)");
	item_ms(&c, procs_it, t_start);
	process_list(&c);
	blocked_json(&c, blocked_it, stacks_it);
	if (!c.nblocked_all)
		jset(&c, stacks_it, "note", json_string("no task was blocked (D state)"));
	t_start = time_mono();
	if (o->service) {
		const config_snapshot_service *svc = config_snapshot_service_find(cfg, o->service);
		if (svc && svc->cgroup) {
			/* The service's own cgroup first, ahead of the top processes'. */
			cgset first = {{0}, 0};
			cgset_add(&first, svc->cgroup);
			for (size_t i = 0; i < cgs.n; i++)
				cgset_add(&first, cgs.path[i]);
			cgset_release(&cgs);
			cgs = first;
		}
	}
	if (time_mono() > c.dl_collect)
		item_status(&c, cg_it, "missing", "the time budget of %u ms was spent before it",
			    c.cs->time_budget_ms);
	else
		cgroup_pressure(&c, cg_it, &cgs);
	item_ms(&c, cg_it, t_start);
	rc = 0;
	keep_pace(&c);
	if (c.restored)
		jset(&c, who, "priority_restored_at_ms",
		     json_integer((json_int_t)(c.restored_at * 1000)));
	jset(&c, base, "highlights", highlights(&c));
	getrusage(RUSAGE_THREAD, &ru1);
	jset(&c, base, "cost", json_pack("{s:I,s:I,s:I,s:I}", "collect_wall_ms",
					 (json_int_t)(since(&c) * 1000), "collect_cpu_user_ms",
					 (json_int_t)((tv_s(ru1.ru_utime) - tv_s(c.ru0.ru_utime)) *
						      1000),
					 "collect_cpu_sys_ms",
					 (json_int_t)((tv_s(ru1.ru_stime) - tv_s(c.ru0.ru_stime)) *
						      1000),
					 "raw_bytes", (json_int_t)c.raw));
	if ((rc = build_archive(&c, out, base, err)) < 0)
		goto out;
	snprintf(out->host, sizeof(out->host), "%s", c.host);
	out->taken_at_us = c.taken_at_us;
	out->not_collected = not_whole(c.items);
	getrusage(RUSAGE_THREAD, &ru1);
	out->wall_s = since(&c);
	out->cpu_user_s = tv_s(ru1.ru_utime) - tv_s(c.ru0.ru_utime);
	out->cpu_sys_s = tv_s(ru1.ru_stime) - tv_s(c.ru0.ru_stime);
	goto out;
oom:
	rc = pr_error_set(err, PR_ENOMEM, "out of memory while taking a snapshot");
out:
	if (c.lowered && !c.restored)
		restore_priority(c.old_nice, c.old_io);
	cgset_release(&cgs);
	json_decref(base);
	col_release(&c);
	if (rc < 0)
		snapshot_archive_release(out);
	return rc;
}

/* ---- checking archives from outside ----------------------------------------- */

typedef struct check_state {
	const char *name;
	size_t members;
	json_t *manifest;
} check_state;

static int check_visit(void *arg, const char *path, const void *data, size_t len, pr_error *err)
{
	check_state *s = arg;
	json_error_t jerr;

	if (s->members++ > 0)
		return 0; /* read through, so a truncated or corrupt archive fails */
	if (strcmp(path, "manifest.json") != 0)
		return pr_error_set(err, PR_EDATA,
				    "cannot read '%s': its first member is '%.200s', "
				    "not manifest.json",
				    s->name, path);
	if (len > MANIFEST_MAX)
		return pr_error_set(err, PR_ELIMIT,
				    "cannot read '%s': manifest.json is larger than "
				    "%u bytes",
				    s->name, MANIFEST_MAX);
	if (!(s->manifest = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr)))
		return pr_error_set(err, PR_EDATA, "cannot read '%s': manifest.json: line %d: %s",
				    s->name, jerr.line, pr_json_reason(jerr.text));
	return 0;
}

/* A manifest string field: absent or null is NULL; else text within bounds. */
static int manifest_text(const char **out, json_t *m, const char *key, size_t max,
			 bool required, const char *name, pr_error *err)
{
	json_t *v = json_object_get(m, key);

	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return pr_error_set(err, PR_EDATA, "cannot read '%s': manifest.json has no "
					    "'%s'", name, key);
		return 0;
	}
	if (!json_is_string(v) || !text_ok(json_string_value(v), max))
		return pr_error_set(err, PR_EDATA, "cannot read '%s': manifest.json '%s' is not 1 "
				    "to %zu bytes of printable text", name, key, max);
	*out = json_string_value(v);
	return 0;
}

int snapshot_check(json_t **manifest, const void *data, size_t len, const char *name,
		   pr_error *err)
{
	check_state s = {name, 0, NULL};
	const char *host, *text;
	json_t *v, *it;
	size_t i;
	int rc;

	*manifest = NULL;
	if (len > SNAPSHOT_ARCHIVE_MAX)
		return pr_error_set(err, PR_ELIMIT, "cannot read '%s': larger than %u bytes", name,
				    SNAPSHOT_ARCHIVE_MAX);
	if ((rc = tarzst_read(data, len, name, SNAPSHOT_ARCHIVE_MAX, SNAPSHOT_UNPACKED_MAX,
			      check_visit, &s, err)) < 0)
		goto out;
	v = json_object_get(s.manifest, "kind");
	if (!json_is_object(s.manifest) || !json_is_string(v) ||
	    strcmp(json_string_value(v), SNAPSHOT_KIND) != 0) {
		rc = pr_error_set(err, PR_EDATA, "cannot read '%s': manifest.json is not a profreg "
				  "snapshot's (kind is not \"%s\")", name, SNAPSHOT_KIND);
		goto out;
	}
	v = json_object_get(s.manifest, "schema_version");
	if (!json_is_integer(v) || json_integer_value(v) != SNAPSHOT_SCHEMA_VERSION) {
		rc = pr_error_set(err, PR_EDATA,
				  "cannot read '%s': manifest.json schema_version is "
				  "not %d",
				  name, SNAPSHOT_SCHEMA_VERSION);
		goto out;
	}
	if ((rc = manifest_text(&host, s.manifest, "host", SNAPSHOT_HOST_MAX, true, name,
				err)) < 0 ||
	    (rc = manifest_text(&text, s.manifest, "incident", SNAPSHOT_INCIDENT_MAX, false, name,
				err)) < 0 ||
	    (rc = manifest_text(&text, s.manifest, "reason", SNAPSHOT_REASON_MAX, false, name,
				err)) < 0 ||
	    (rc = manifest_text(&text, s.manifest, "service", 128, false, name, err)) < 0)
		goto out;
	if (text && !db_service_name_valid(text)) {
		rc = pr_error_set(err, PR_EDATA, "cannot read '%s': manifest.json service is not a "
				  "valid service name", name);
		goto out;
	}
	if ((rc = manifest_text(&text, s.manifest, "trigger", 32, false, name, err)) < 0)
		goto out;
	if (text) {
		snapshot_opts o = {0};
		o.trigger = text;
		if (check_opts(&o, NULL) < 0) {
			rc = pr_error_set(err, PR_EDATA,
					  "cannot read '%s': manifest.json trigger is "
					  "not a trigger name",
					  name);
			goto out;
		}
	}
	v = json_object_get(s.manifest, "taken_at_us");
	if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
	    json_integer_value(v) > 253402300799000000LL) {
		rc = pr_error_set(err, PR_EDATA,
				  "cannot read '%s': manifest.json taken_at_us is not "
				  "a time",
				  name);
		goto out;
	}
	/*
	 * A host's newest snapshot starts its cooldown and heads every list:
	 * one dated years ahead would refuse that host's snapshots until then.
	 */
	if (json_integer_value(v) > time_now_us() + SNAPSHOT_MAX_AHEAD_US) {
		char when[TIME_FMT_MAX];

		time_format(when, json_integer_value(v));
		rc = pr_error_set(err, PR_EDATA,
				  "cannot read '%s': manifest.json taken_at_us %s is more "
				  "than a day ahead of this machine's clock",
				  name, when);
		goto out;
	}
	/*
	 * Items are what show lists: a layer and a name of printable text and
	 * one of the statuses a snapshot writes, so an upload cannot put
	 * anything else there.
	 */
	v = json_object_get(s.manifest, "items");
	json_array_foreach(v, i, it)
	{
		const char *st = json_string_value(json_object_get(it, "status"));
		const char *layer = json_string_value(json_object_get(it, "layer"));
		const char *iname = json_string_value(json_object_get(it, "name"));
		if (!st || (strcmp(st, "collected") != 0 && strcmp(st, "partial") != 0 &&
			    strcmp(st, "missing") != 0)) {
			rc = pr_error_set(err, PR_EDATA,
					  "cannot read '%s': manifest.json item %zu: "
					  "its status is not collected, partial or missing",
					  name, i);
			goto out;
		}
		if (!layer || !iname || !text_ok(layer, 64) || !text_ok(iname, 64)) {
			rc = pr_error_set(
				err, PR_EDATA,
				"cannot read '%s': manifest.json item %zu: "
				"its layer or name is not 1 to 64 bytes of printable text",
				name, i);
			goto out;
		}
	}
	if (!json_is_array(v)) {
		rc = pr_error_set(err, PR_EDATA, "cannot read '%s': manifest.json has no items",
				  name);
		goto out;
	}
	*manifest = s.manifest;
	s.manifest = NULL;
out:
	json_decref(s.manifest);
	return rc;
}

/* ---- the table ---------------------------------------------------------------- */

#define SNAPSHOT_COLS \
	"s.id, s.host, " DB_TS_TO_US("s.taken_at") ", s.incident, s.reason, s.service," \
	" s.trigger, s.blob_key, s.archive_bytes, s.not_collected, " DB_TS_TO_US("s.stored_at")

static json_t *row_json(const PGresult *res, int row)
{
	char taken[TIME_FMT_MAX], stored[TIME_FMT_MAX];
	const char *inc = db_get_text(res, row, 3), *why = db_get_text(res, row, 4);
	const char *svc = db_get_text(res, row, 5);

	time_format(taken, db_get_i64(res, row, 2));
	time_format(stored, db_get_i64(res, row, 10));
	return json_pack("{s:I,s:s,s:s,s:I,s:s?,s:s?,s:s?,s:s,s:s,s:I,s:I,s:s}", "id",
			 (json_int_t)db_get_i64(res, row, 0), "host", db_get_text(res, row, 1),
			 "taken_at", taken, "taken_at_us", (json_int_t)db_get_i64(res, row, 2),
			 "incident", inc, "reason", why, "service", svc, "trigger",
			 db_get_text(res, row, 6), "blob_key", db_get_text(res, row, 7), "bytes",
			 (json_int_t)db_get_i64(res, row, 8), "not_collected",
			 (json_int_t)db_get_i64(res, row, 9), "stored_at", stored);
}

int snapshot_store(int64_t *id, bool *existed, const job_env *env, const void *data, size_t len,
		   const char *name, const char *via, pr_error *err)
{
	static const char ins[] =
		"insert into snapshots (host, taken_at, incident, reason, service, trigger,"
		" blob_key, archive_bytes, not_collected, manifest, stored_by)"
		" values ($1, " DB_US_TO_TS("$2")
		", $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11)"
						  " on conflict (blob_key) do nothing returning id";
	static const char sel[] = "select id from snapshots where blob_key = $1";
	json_t *m = NULL, *it, *audit = NULL;
	char key[BLOB_KEY_HEX + 1], at[24], bytes[24], nc[24], object[48];
	char *mtext = NULL, *atext = NULL;
	const char *trig;
	PGresult *res = NULL;
	size_t i, not_collected = 0;
	bool created = false;
	int rc;

	*id = 0;
	*existed = false;
	if ((rc = snapshot_check(&m, data, len, name, err)) < 0)
		return rc;
	if ((rc = blob_key_of(key, data, len)) < 0) {
		rc = pr_error_set(err, PR_ERR, "cannot hash '%s'", name);
		goto out;
	}
	json_array_foreach(json_object_get(m, "items"), i, it)
		not_collected += strcmp(json_string_value(json_object_get(it, "status")),
					"collected") != 0;
	trig = json_string_value(json_object_get(m, "trigger"));
	snprintf(at, sizeof(at), "%" JSON_INTEGER_FORMAT,
		 json_integer_value(json_object_get(m, "taken_at_us")));
	snprintf(bytes, sizeof(bytes), "%zu", len);
	snprintf(nc, sizeof(nc), "%zu", not_collected);
	if (!(mtext = json_dumps(m, JSON_COMPACT))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = db_begin(env->d, err)) < 0)
		goto out;
	/* Shared with ingests: retention deletes the file only once no row keeps it. */
	if ((rc = db_blob_lock(env->d, key, false, err)) < 0)
		goto out;
	{
		char lit[BLOB_KEY_HEX + 3];
		snprintf(lit, sizeof(lit), "{%s}", key);
		if ((rc = ingest_check_delete_doubt(env->d, env->bs, lit, err)) < 0)
			goto out;
	}
	{
		const char *p[1] = {key};
		if ((rc = db_exec(env->d, &res, err, "looking up a snapshot", sel, 1, p)) < 0)
			goto out;
	}
	if (db_rows(res) == 1) {
		*id = db_get_i64(res, 0, 0);
		*existed = true;
		db_rollback(env->d);
		goto out;
	}
	db_result_free(res);
	res = NULL;
	if ((rc = blob_put(env->bs, key, data, len, &created, err)) < 0)
		goto out;
	{
		const char *p[11] = {json_string_value(json_object_get(m, "host")), at,
				     json_string_value(json_object_get(m, "incident")),
				     json_string_value(json_object_get(m, "reason")),
				     json_string_value(json_object_get(m, "service")),
				     trig ? trig : "manual", key, bytes, nc, mtext,
				     db_actor(env->d)};
		if ((rc = db_exec(env->d, &res, err, "storing a snapshot", ins, 11, p)) < 0)
			goto out;
	}
	if (db_rows(res) == 0) { /* stored by someone else since we looked */
		const char *p[1] = {key};
		db_result_free(res);
		if ((rc = db_exec(env->d, &res, err, "looking up a snapshot", sel, 1, p)) < 0)
			goto out;
		*existed = true;
	}
	*id = db_get_i64(res, 0, 0);
	snprintf(object, sizeof(object), "snapshot:%" PRId64, *id);
	audit = json_pack("{s:O,s:O,s:O,s:s,s:s,s:I}", "host", json_object_get(m, "host"),
			  "incident", json_object_get(m, "incident"), "taken_at",
			  json_object_get(m, "taken_at"), "blob_key", key, "via",
			  via ? via : "taken", "bytes", (json_int_t)len);
	if (!audit || !(atext = json_dumps(audit, JSON_COMPACT))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if (!*existed && (rc = db_audit(env->d, "snapshot.store", object, atext, err)) < 0)
		goto out;
	rc = db_commit(env->d, err);
out:
	if (rc < 0) {
		db_rollback(env->d);
		*id = 0;
		*existed = false;
	}
	db_result_free(res);
	json_decref(m);
	json_decref(audit);
	free(mtext);
	free(atext);
	return rc;
}

void snapshot_result_release(snapshot_result *r)
{
	snapshot_archive_release(&r->a);
	free(r->unsent);
	r->unsent = NULL;
	job_notes_release(&r->notes);
}

/* Keep an archive that could not be stored under <home>/snapshots/unsent/. */
static int keep_unsent(char **out, const char *home, const snapshot_archive *a, pr_error *err)
{
	char when[TIME_FMT_MAX], host[SNAPSHOT_HOST_MAX + 1];
	buf dir = BUF_INIT, path = BUF_INIT;
	size_t k = 0;
	int rc;

	*out = NULL;
	time_format(when, a->taken_at_us);
	for (const char *p = a->host; *p && k < sizeof(host) - 1; p++)
		host[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'
			    ? *p
			    : '_';
	host[k] = '\0';
	for (char *p = when; *p; p++)
		if (*p == ':')
			*p = '-';
	if (buf_printf(&dir, "%s/snapshots/unsent", home ? home : ".") < 0 ||
	    buf_printf(&path, "%s/%s-%s.tar.zst", dir.ptr, host, when) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = fileio_mkdirs(dir.ptr, 0700, err)) < 0 ||
	    (rc = fileio_write_atomic(path.ptr, a->data.ptr, a->data.len, 0600, err)) < 0)
		goto out;
	*out = buf_detach(&path, NULL);
out:
	buf_release(&dir);
	buf_release(&path);
	return rc;
}

/* Refuse a snapshot when this host's last one is younger than the cooldown. */
static int cooldown_check(const job_env *env, const char *host, int64_t cooldown_us,
			  pr_error *err)
{
	static const char sql[] =
		"select id, " DB_TS_TO_US("taken_at") " from snapshots where host = $1"
		" order by taken_at desc, id desc limit 1";
	const char *p[1] = {host};
	PGresult *res = NULL;
	int rc;

	if ((rc = db_exec(env->d, &res, err, "reading the last snapshot", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res) == 1) {
		int64_t last = db_get_i64(res, 0, 1), now = job_now(env);
		if (now - last < cooldown_us) {
			char next[TIME_FMT_MAX];
			time_format(next, last + cooldown_us);
			rc = pr_error_set(err, PR_EREFUSED,
					  "host '%s' had a snapshot (%" PRId64 ") "
					  "%" PRId64 " s ago, within the cooldown of %" PRId64
					  " s: "
					  "the next may be taken from %s",
					  host, db_get_i64(res, 0, 0), (now - last) / 1000000,
					  cooldown_us / 1000000, next);
		}
	}
	db_result_free(res);
	return rc;
}

int snapshot_run(snapshot_result *out, const job_env *env, const snapshot_opts *o,
		 pr_error *err)
{
	char self[SNAPSHOT_HOST_MAX + 1], lock[SNAPSHOT_HOST_MAX + 32];
	pr_error e2 = PR_ERROR_INIT;
	job_env e = *env;
	double t0 = time_mono();
	bool locked = false, opened = e.d != NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	buf_init(&out->a.data, SIZE_MAX);
	if ((rc = snapshot_hostname(self, err)) < 0)
		return rc;
	if (o->for_host && strcmp(o->for_host, self) != 0)
		return pr_error_set(err, PR_EREFUSED,
				    "snapshot of host '%.256s' refused: this agent "
				    "takes snapshots of its own host '%s' only",
				    o->for_host, self);
	if (o->cooldown_us > 0) {
		if (!e.d && o->open_store && (rc = o->open_store(o->open_store_arg, &e.d, &e.bs,
								 err)) < 0)
			return rc;
		if (!e.d)
			return pr_error_set(err, PR_EUSAGE, "a cooldown needs the database");
		opened = true;
		snprintf(lock, sizeof(lock), "profreg-snapshot:%s", self);
		if ((rc = db_try_advisory_lock(e.d, lock, &locked, err)) < 0)
			return rc;
		if (!locked)
			return pr_error_set(err, PR_ELOCKED,
					    "a snapshot of host '%s' is being taken "
					    "right now",
					    self);
		if ((rc = cooldown_check(&e, self, o->cooldown_us, err)) < 0)
			goto out;
	}
	if ((rc = snapshot_take(&out->a, env->cfg, o, err)) < 0)
		goto out;
	if (blob_key_of(out->key, out->a.data.ptr, out->a.data.len) < 0)
		out->key[0] = '\0';
	if (!opened && o->open_store)
		rc = o->open_store(o->open_store_arg, &e.d, &e.bs, &e2);
	if (rc == 0 && (!e.d || !e.bs))
		rc = pr_error_set(&e2, PR_EUSAGE, "no database or blob store to store it in");
	if (rc == 0)
		rc = snapshot_store(&out->id, &out->existed, &e, out->a.data.ptr, out->a.data.len,
				    "the snapshot just taken", "taken", &e2);
	if (rc < 0) {
		/* The snapshot is the evidence: never lose it because the store is away. */
		pr_error e3 = PR_ERROR_INIT;
		if (keep_unsent(&out->unsent, env->home, &out->a, &e3) < 0)
			rc = pr_error_set(err, rc, "%s; the archive could not be kept either: %s",
					  e2.msg, e3.msg);
		else
			rc = pr_error_set(err, rc, "%s; the archive is kept in '%s': store it with "
					  "'profreg snapshot upload %s'", e2.msg, out->unsent,
					  out->unsent);
	}
out:
	if (locked)
		db_advisory_unlock(e.d, lock);
	out->wall_s = time_mono() - t0;
	return rc;
}

int snapshot_upload(int64_t *id, bool *existed, const job_env *env, const char *path,
		    pr_error *err)
{
	buf b = BUF_INIT;
	int rc;

	*id = 0;
	*existed = false;
	if ((rc = fileio_read(&b, path, SNAPSHOT_ARCHIVE_MAX, err)) < 0)
		return rc;
	rc = snapshot_store(id, existed, env, b.ptr, b.len, path, "upload", err);
	buf_release(&b);
	return rc;
}

int snapshot_list(json_t **out, db *d, const snapshot_filter *f, pr_error *err)
{
	static const char sql[] =
		"select " SNAPSHOT_COLS " from snapshots s"
		" where ($1 = '' or s.host = $1) and ($2 = '' or s.incident = $2)"
		"   and ($3 = '' or s.service = $3)"
		"   and ($4::bigint = 0 or s.taken_at >= " DB_US_TO_TS("$4") ")"
		"   and ($5::bigint = 0 or s.taken_at < " DB_US_TO_TS("$5") ")"
		" order by s.taken_at desc, s.id desc limit $6";
	char since[24], until[24], lim[24];
	const char *p[6] = {f && f->host ? f->host : "", f && f->incident ? f->incident : "",
			    f && f->service ? f->service : "", since, until, lim};
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	snprintf(since, sizeof(since), "%" PRId64, f ? f->since_us : 0);
	snprintf(until, sizeof(until), "%" PRId64, f ? f->until_us : 0);
	snprintf(lim, sizeof(lim), "%zu", f && f->limit ? f->limit : 100);
	if ((rc = db_exec(d, &res, err, "listing snapshots", sql, 6, p)) < 0)
		return rc;
	if (!(*out = json_array()))
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	for (int i = 0; rc == 0 && i < db_rows(res); i++)
		if (json_array_append_new(*out, row_json(res, i)) < 0)
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	db_result_free(res);
	if (rc < 0) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

int snapshot_get(json_t **out, db *d, int64_t id, pr_error *err)
{
	static const char sql[] =
		"select " SNAPSHOT_COLS ", s.manifest::text from snapshots s where s.id = $1";
	char sid[24];
	const char *p[1] = {sid};
	PGresult *res = NULL;
	json_t *m;
	int rc;

	*out = NULL;
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	if ((rc = db_exec(d, &res, err, "reading a snapshot", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res) != 1) {
		rc = pr_error_set(err, PR_ENOTFOUND, "snapshot %" PRId64 " not found", id);
		goto out;
	}
	m = json_loads(db_get_text(res, 0, 11), 0, NULL);
	if (!(*out = row_json(res, 0)) || !m || json_object_set_new(*out, "manifest", m) < 0) {
		json_decref(*out);
		*out = NULL;
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	}
out:
	db_result_free(res);
	return rc;
}

int snapshot_read(buf *out, const job_env *env, int64_t id, pr_error *err)
{
	static const char sql[] = "select blob_key, host from snapshots where id = $1";
	char sid[24];
	const char *p[1] = {sid};
	PGresult *res = NULL;
	int rc;

	buf_release(out);
	snprintf(sid, sizeof(sid), "%" PRId64, id);
	/* Checked and audited by the database before anything is read. */
	if ((rc = access_read_snapshot(env->d, "snapshot.extract", id, err)) < 0 ||
	    (rc = db_exec(env->d, &res, err, "reading a snapshot", sql, 1, p)) < 0)
		return rc;
	if (db_rows(res) != 1) {
		rc = pr_error_set(err, PR_ENOTFOUND, "snapshot %" PRId64 " not found", id);
		goto out;
	}
	rc = blob_get(env->bs, db_get_text(res, 0, 0), out, SNAPSHOT_ARCHIVE_MAX, err);
out:
	if (rc < 0)
		buf_release(out);
	db_result_free(res);
	return rc;
}

int snapshot_extract_dir(const job_env *env, int64_t id, const char *dir, pr_error *err)
{
	buf b = BUF_INIT;
	char name[48];
	int rc;

	struct stat st;

	snprintf(name, sizeof(name), "snapshot %" PRId64, id);
	/* Refused before the evidence is read: nothing is written over. */
	if (lstat(dir, &st) == 0)
		return pr_error_set(err, PR_EEXISTS, "cannot extract into '%s': it exists; name a "
				    "new folder", dir);
	if ((rc = snapshot_read(&b, env, id, err)) == 0)
		rc = tarzst_extract(b.ptr, b.len, name, dir, SNAPSHOT_ARCHIVE_MAX,
				    SNAPSHOT_UNPACKED_MAX, err);
	buf_release(&b);
	return rc;
}

int snapshot_near(json_t **out, db *d, const char *const *hosts, size_t nhosts, int64_t from_us,
		  int64_t to_us, const char *team, const char *service, pr_error *err)
{
	/*
	 * A snapshot of no service is the host's, for admins only
	 * (profreg_read_snapshot): neither filter keeps it. A service's team
	 * is its own when it has none.
	 */
	static const char sql[] =
		"select " SNAPSHOT_COLS " from snapshots s"
		" where s.host in (select jsonb_array_elements_text($1::jsonb))"
		"   and s.taken_at >= " DB_US_TO_TS("$2") " and s.taken_at <= " DB_US_TO_TS("$3")
		"   and ($4::text is null or s.service in"
		"        (select v.name from services v where v.team = $4))"
		"   and ($5::text is null or s.service = $5 or s.service in"
		"        (select v.name from services v join services o on o.team = v.team"
		"          where o.name = $5))"
		" order by s.taken_at, s.id limit 1000";
	json_t *h = json_array();
	char from[24], to[24], *text = NULL;
	const char *p[5] = {NULL, from, to, team, service};
	PGresult *res = NULL;
	int rc = 0;

	*out = NULL;
	for (size_t i = 0; h && i < nhosts; i++)
		if (hosts[i] && json_array_append_new(h, json_string(hosts[i])) < 0)
			rc = -1;
	if (!h || rc < 0 || !(text = json_dumps(h, JSON_COMPACT))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	p[0] = text;
	snprintf(from, sizeof(from), "%" PRId64, from_us);
	snprintf(to, sizeof(to), "%" PRId64, to_us);
	if ((rc = db_exec(d, &res, err, "finding snapshots near captures", sql, 5, p)) < 0)
		goto out;
	if (!(*out = json_array()))
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
	for (int i = 0; rc == 0 && i < db_rows(res); i++)
		if (json_array_append_new(*out, row_json(res, i)) < 0)
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
out:
	if (rc < 0) {
		json_decref(*out);
		*out = NULL;
	}
	db_result_free(res);
	json_decref(h);
	free(text);
	return rc;
}
