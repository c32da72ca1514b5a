/*
 * test_snapshot.c: incident snapshots (jobs/snapshot), on this machine.
 *
 * Children of the test make the state a snapshot must see: threads that
 * burn CPU under known names, a process holding 512 MiB, a task blocked in
 * D state (a parent waiting on its vfork child), 5,000 idle threads. The
 * kernel log is the real /dev/kmsg, or a 64 GiB (sparse) file standing for
 * a log too large to read within the budget. An unprivileged snapshot is
 * taken by a child that dropped to nobody. Stored snapshots go through
 * the real blob store and PostgreSQL (tests/run's server).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/timeutil.h"
#include "jobs/retention.h"
#include "jobs/snapshot.h"
#include "pipeline/tarzst.h"
#include "tests/support/testdb.h"

static char tmpdir[4096];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void make_tmp(void)
{
	const char *base = getenv("PROFREG_TEST_TMP");

	snprintf(tmpdir, sizeof(tmpdir), "%s/snapshot.XXXXXX", base ? base : "/tmp");
	assert_non_null(mkdtemp(tmpdir));
}

static void drop_tmp(void)
{
	nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The defaults, with a short interval so the suite stays quick. */
static void test_config(config *cfg)
{
	assert_int_equal(config_load(cfg, NULL, NULL), 0);
	cfg->snapshot.sample_ms = 400;
}

/* ---- children that make state to see ---- */

static volatile int spin_stop;

static void *burn(void *name)
{
	volatile unsigned long x = 0;

	pthread_setname_np(pthread_self(), name);
	while (!spin_stop)
		x++;
	return NULL;
}

static void *idle(void *name)
{
	pthread_setname_np(pthread_self(), name);
	for (;;)
		pause();
	return NULL;
}

/* Fork a child that runs `body` and says it is ready on a pipe; returns its pid. */
static pid_t child(void (*body)(int ready), const char *comm)
{
	int p[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		prctl(PR_SET_NAME, comm);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		body(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void burner_body(int ready)
{
	pthread_t t;

	pthread_create(&t, NULL, burn, "snapburn-a");
	pthread_create(&t, NULL, burn, "snapburn-b");
	pthread_create(&t, NULL, idle, "snapidle");
	(void)!write(ready, "r", 1);
}

static void memory_body(int ready)
{
	size_t n = (size_t)512 << 20;
	volatile char *m = malloc(n);

	/* Every page written through a volatile pointer: resident, not just reserved. */
	for (size_t i = 0; m && i < n; i += 4096)
		m[i] = 0x5a;
	(void)!write(ready, m ? "r" : "x", 1);
}

static int vfork_child(void *arg)
{
	int ready = *(int *)arg;

	/* The parent now waits for us in D state until we exit. */
	(void)!write(ready, "r", 1);
	sleep(6);
	_exit(0);
}

static void blocked_body(int ready)
{
	static char stack[256 * 1024];

	clone(vfork_child, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &ready);
}

static void many_body(int ready)
{
	pthread_attr_t a;
	pthread_t t;
	int ok = 0;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	for (int i = 0; i < 5000; i++)
		ok += pthread_create(&t, &a, idle, "snapmany") == 0;
	(void)!write(ready, ok == 5000 ? "r" : "x", 1);
}

/* ---- reading what a snapshot holds ---- */

typedef struct unpacked {
	json_t *files;      /* path -> text */
	json_t *manifest, *summary;
	char first[64];
} unpacked;

static int keep_member(void *arg, const char *path, const void *data, size_t len,
		       pr_error *err)
{
	unpacked *u = arg;

	(void)err;
	if (!u->first[0])
		snprintf(u->first, sizeof(u->first), "%s", path);
	json_object_set_new(u->files, path, json_stringn_nocheck(data, len));
	return 0;
}

static void unpack(unpacked *u, const buf *archive)
{
	pr_error e = PR_ERROR_INIT;

	memset(u, 0, sizeof(*u));
	u->files = json_object();
	assert_int_equal(tarzst_read(archive->ptr, archive->len, "snapshot", 64 << 20, 256 << 20,
				     keep_member, u, &e), 0);
	assert_string_equal(u->first, "manifest.json");
	assert_non_null(u->manifest = json_loads(json_string_value(json_object_get(
							 u->files, "manifest.json")), 0, NULL));
	assert_non_null(u->summary = json_loads(json_string_value(json_object_get(
							u->files, "summary.json")), 0, NULL));
}

static void unpacked_release(unpacked *u)
{
	json_decref(u->files);
	json_decref(u->manifest);
	json_decref(u->summary);
}

static json_t *item_of(const unpacked *u, const char *name)
{
	json_t *it;
	size_t i;

	json_array_foreach(json_object_get(u->manifest, "items"), i, it)
		if (strcmp(json_string_value(json_object_get(it, "name")), name) == 0)
			return it;
	fail_msg("no item '%s' in the manifest", name);
	return NULL;
}

static const char *status_of(const unpacked *u, const char *name)
{
	return json_string_value(json_object_get(item_of(u, name), "status"));
}

static const char *reason_of(const unpacked *u, const char *name)
{
	const char *r = json_string_value(json_object_get(item_of(u, name), "reason"));
	return r ? r : "";
}

static void take(snapshot_archive *a, const config *cfg, const snapshot_opts *o)
{
	pr_error e = PR_ERROR_INIT;
	int rc = snapshot_take(a, cfg, o, &e);

	if (rc < 0)
		fail_msg("snapshot_take: %s", e.msg);
}

/* ---- what a snapshot sees ---- */

static void test_every_layer_is_listed_with_a_status(void **state)
{
	static const char *const items[][2] = {
		{"kernel", "pressure"}, {"kernel", "loadavg"}, {"kernel", "run_queue"},
		{"kernel", "schedstat"}, {"kernel", "bpf_programs"}, {"kernel", "blocked_stacks"},
		{"kernel", "cgroup_pressure"}, {"contention", "file_descriptors"},
		{"contention", "blocked_tasks"}, {"contention", "meminfo"},
		{"contention", "vmstat"}, {"process", "top_threads"},
		{"process", "top_processes"}, {"process", "kernel_log"},
	};
	config cfg;
	snapshot_opts o = {0};
	snapshot_archive a;
	unpacked u;
	json_t *it, *m;
	size_t i;
	char host[SNAPSHOT_HOST_MAX + 1];
	int prio0 = getpriority(PRIO_PROCESS, 0); /* the suite may run under nice */

	(void)state;
	test_config(&cfg);
	o.incident = "INC-4821";
	o.reason = "checkout p99 at 3 s";
	take(&a, &cfg, &o);
	unpack(&u, &a.data);
	m = u.manifest;
	assert_string_equal(json_string_value(json_object_get(m, "kind")), SNAPSHOT_KIND);
	assert_int_equal(snapshot_hostname(host, NULL), 0);
	assert_string_equal(json_string_value(json_object_get(m, "host")), host);
	assert_string_equal(json_string_value(json_object_get(m, "incident")), "INC-4821");
	assert_string_equal(json_string_value(json_object_get(m, "trigger")), "manual");
	assert_non_null(json_string_value(json_object_get(json_object_get(m, "kernel"),
							  "release")));
	assert_int_equal(json_array_size(json_object_get(m, "items")),
			 sizeof(items) / sizeof(items[0]));
	for (i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		const char *st;
		it = item_of(&u, items[i][1]);
		assert_string_equal(json_string_value(json_object_get(it, "layer")), items[i][0]);
		st = json_string_value(json_object_get(it, "status"));
		assert_true(strcmp(st, "collected") == 0 || strcmp(st, "partial") == 0 ||
			    strcmp(st, "missing") == 0);
		/* Whatever is not whole says why. */
		if (strcmp(st, "collected") != 0)
			assert_true(strlen(reason_of(&u, items[i][1])) > 10);
		/* Every file an item names is in the archive. */
		json_t *f;
		size_t k;
		json_array_foreach(json_object_get(it, "files"), k, f)
			assert_non_null(json_object_get(u.files, json_string_value(f)));
	}
	/* What this machine has: PSI, /proc/stat, no schedstat (CONFIG_SCHEDSTATS is off). */
	assert_string_equal(status_of(&u, "pressure"), "collected");
	assert_non_null(json_object_get(u.files, "proc/pressure/cpu.start"));
	assert_non_null(json_object_get(u.files, "proc/meminfo.end"));
	assert_non_null(json_object_get(json_object_get(u.summary, "cpu"), "procs_running"));
	if (access("/proc/schedstat", F_OK) != 0) {
		assert_string_equal(status_of(&u, "schedstat"), "missing");
		assert_non_null(strstr(reason_of(&u, "schedstat"), "CONFIG_SCHEDSTATS"));
	}
	/* It ran at low priority and says what it cost. */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "collector"),
							    "nice")), 19);
	assert_string_equal(json_string_value(json_object_get(json_object_get(m, "collector"),
							      "io_class")), "idle");
	assert_true(json_integer_value(json_object_get(json_object_get(m, "cost"),
						       "collect_wall_ms")) >= 300);
	assert_int_equal(a.not_collected, json_integer_value(json_object_get(m, "not_collected")));
	/* The thread's priority is back where it was (root may raise it again). */
	if (geteuid() == 0)
		assert_int_equal(getpriority(PRIO_PROCESS, 0), prio0);
	unpacked_release(&u);
	snapshot_archive_release(&a);
	config_release(&cfg);
}

static const json_t *thread_named(const unpacked *u, const char *comm, size_t *rank)
{
	const json_t *t;
	size_t i;

	json_array_foreach(json_object_get(u->summary, "top_threads"), i, t)
		if (strcmp(json_string_value(json_object_get(t, "comm")), comm) == 0) {
			if (rank)
				*rank = i;
			return t;
		}
	return NULL;
}

static void test_threads_burning_cpu_are_at_the_top(void **state)
{
	config cfg;
	snapshot_opts o = {0};
	snapshot_archive a;
	unpacked u;
	const json_t *ta, *tb;
	size_t ra = 99, rb = 99;
	pid_t pid;

	(void)state;
	test_config(&cfg);
	cfg.snapshot.sample_ms = 1000;
	/* A budget a loaded machine (or a sanitizer build) cannot cut the scans short with. */
	cfg.snapshot.time_budget_ms = 20000;
	/*
	 * Every thread that ran: beside another test's busy services (the
	 * demo's twelve Go processes) two dozen threads burn alike, and the
	 * first 20 need not hold these two.
	 */
	cfg.snapshot.top_threads = 10000;
	pid = child(burner_body, "snapburner");
	take(&a, &cfg, &o);
	stop(pid);
	unpack(&u, &a.data);
	assert_non_null(ta = thread_named(&u, "snapburn-a", &ra));
	assert_non_null(tb = thread_named(&u, "snapburn-b", &rb));
	assert_int_equal(json_integer_value(json_object_get(ta, "pid")), pid);
	assert_string_equal(json_string_value(json_object_get(ta, "process")), "snapburner");
	/*
	 * Two busy loops get at least the share of any other runnable thread,
	 * but on this shared 2-core machine other tests' busy threads may share
	 * it with them: "at the top" is that the list is in order of CPU, and
	 * nothing above them used less.
	 */
	print_message("snapburn-a %.1f%% (rank %zu), snapburn-b %.1f%% (rank %zu)\n",
		      json_number_value(json_object_get(ta, "cpu_pct")), ra,
		      json_number_value(json_object_get(tb, "cpu_pct")), rb);
	assert_true(json_number_value(json_object_get(ta, "cpu_pct")) > 0);
	assert_true(json_number_value(json_object_get(tb, "cpu_pct")) > 0);
	{
		const json_t *top = json_object_get(u.summary, "top_threads"), *t;
		double last = 1e300;
		size_t i;
		json_array_foreach(top, i, t)
		{
			double ms = (double)json_integer_value(json_object_get(t, "cpu_ms"));
			assert_true(ms <= last);
			last = ms;
		}
	}
	/* Their sleeping sibling used no CPU and is not listed. */
	assert_null(thread_named(&u, "snapidle", NULL));
	unpacked_release(&u);
	snapshot_archive_release(&a);
	config_release(&cfg);
}

static void ready_body(int ready)
{
	(void)!write(ready, "r", 1);
}

static void nameless_body(int ready)
{
	pthread_t t;

	pthread_create(&t, NULL, burn, "snapnameless-w");
	(void)!write(ready, "r", 1);
}

/* A process may name itself "" (prctl(PR_SET_NAME, "")): it is still evidence. */
static void test_a_nameless_process_is_kept(void **state)
{
	config cfg;
	snapshot_opts o = {0};
	snapshot_archive a;
	unpacked u;
	const json_t *t, *p;
	size_t i;
	pid_t pid, alone;
	bool listed = false, top = false, alone_listed = false;

	(void)state;
	test_config(&cfg);
	cfg.snapshot.time_budget_ms = 20000;
	cfg.snapshot.top_processes = 10;
	pid = child(nameless_body, "");
	/* Nameless with one thread: no other thread's name to take. */
	alone = child(ready_body, "");
	take(&a, &cfg, &o);
	stop(pid);
	stop(alone);
	unpack(&u, &a.data);
	assert_non_null(t = thread_named(&u, "snapnameless-w", NULL));
	assert_int_equal(json_integer_value(json_object_get(t, "pid")), pid);
	assert_string_equal(json_string_value(json_object_get(t, "process")), "");
	json_array_foreach(json_object_get(u.summary, "processes"), i, p)
	{
		if (json_integer_value(json_object_get(p, "pid")) == pid) {
			assert_string_equal(json_string_value(json_object_get(p, "name")), "");
			listed = true;
		}
		if (json_integer_value(json_object_get(p, "pid")) == alone) {
			assert_string_equal(json_string_value(json_object_get(p, "name")), "");
			alone_listed = true;
		}
	}
	json_array_foreach(json_object_get(u.summary, "top_processes"), i, p)
	{
		top |= json_integer_value(json_object_get(p, "pid")) == pid;
	}
	assert_true(listed);
	assert_true(alone_listed);
	assert_true(top);
	unpacked_release(&u);
	snapshot_archive_release(&a);
	config_release(&cfg);
}

static void test_a_process_holding_memory_is_among_the_top(void **state)
{
	config cfg;
	snapshot_opts o = {0};
	snapshot_archive a;
	unpacked u;
	const json_t *p;
	size_t i;
	bool found = false;
	char status[64];
	pid_t pid;

	(void)state;
	test_config(&cfg);
	cfg.snapshot.top_processes = 10;
	pid = child(memory_body, "snapmem");
	take(&a, &cfg, &o);
	stop(pid);
	unpack(&u, &a.data);
	json_array_foreach(json_object_get(u.summary, "top_processes"), i, p) {
		if (json_integer_value(json_object_get(p, "pid")) != pid)
			continue;
		found = true;
		assert_string_equal(json_string_value(json_object_get(p, "name")), "snapmem");
		assert_true(json_integer_value(json_object_get(p, "rss_bytes")) >= (512 << 20));
		assert_string_equal(json_string_value(json_array_get(
					    json_object_get(p, "top_by"),
					    json_array_size(json_object_get(p, "top_by")) - 1)),
				    "memory");
		/* Its status and smaps_rollup are in the archive; its command line is not. */
		snprintf(status, sizeof(status), "proc/%d/smaps_rollup", pid);
		assert_non_null(
			strstr(json_string_value(json_object_get(u.files, status)), "Rss:"));
		assert_null(json_object_get(p, "cmdline"));
		assert_true(json_integer_value(json_object_get(p, "argc")) >= 1);
	}
	if (!found)
		fail_msg("pid %d not among the top processes: %s", pid,
			 json_dumps(json_object_get(u.summary, "top_processes"), JSON_COMPACT));
	unpacked_release(&u);
	snapshot_archive_release(&a);
	config_release(&cfg);
}

static void test_blocked_tasks_with_what_they_wait_on(void **state)
{
	config cfg;
	snapshot_opts o = {0};
	snapshot_archive a;
	unpacked u;
	const json_t *b;
	size_t i;
	bool found = false;
	pid_t pid;

	(void)state;
	test_config(&cfg);
	pid = child(blocked_body, "snapvfork");
	/*
	 * The kernel shows wchan "0" at a moment it cannot say (the task
	 * briefly runnable), which a busy machine hit now and then: a few
	 * snapshots, until one catches it waiting.
	 */
	for (int tries = 0;; tries++) {
		bool said = false;
		take(&a, &cfg, &o);
		unpack(&u, &a.data);
		json_array_foreach(json_object_get(u.summary, "blocked_tasks"), i, b) said =
			said || (json_integer_value(json_object_get(b, "pid")) == pid &&
				 json_string_value(json_object_get(b, "wchan")));
		if (said || geteuid() != 0 || tries == 4)
			break;
		unpacked_release(&u);
		snapshot_archive_release(&a);
	}
	stop(pid);
	assert_true(json_integer_value(json_object_get(u.summary, "blocked_count")) >= 1);
	json_array_foreach(json_object_get(u.summary, "blocked_tasks"), i, b) {
		const char *stack = json_string_value(json_object_get(b, "stack"));
		if (json_integer_value(json_object_get(b, "pid")) != pid)
			continue;
		found = true;
		assert_string_equal(json_string_value(json_object_get(b, "comm")), "snapvfork");
		if (geteuid() != 0)
			continue;
		/* As root: what it waits on, and its kernel stack. */
		assert_non_null(json_string_value(json_object_get(b, "wchan")));
		assert_non_null(stack);
		assert_non_null(
			strstr(json_string_value(json_object_get(u.files, stack)), "clone"));
	}
	assert_true(found);
	assert_string_equal(status_of(&u, "blocked_stacks"), "collected");
	unpacked_release(&u);
	snapshot_archive_release(&a);
	config_release(&cfg);
}

/* A snapshot taken by a child running as nobody, its archive back through a pipe. */
static void take_as_nobody(buf *out, const config *cfg)
{
	int p[2];
	char chunk[65536];
	ssize_t n;
	int status;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		snapshot_opts o = {0};
		snapshot_archive a;
		pr_error e = PR_ERROR_INIT;
		close(p[0]);
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		if (snapshot_take(&a, cfg, &o, &e) < 0) {
			fprintf(stderr, "%s\n", e.msg);
			_exit(3);
		}
		_exit(write(p[1], a.data.ptr, a.data.len) == (ssize_t)a.data.len ? 0 : 4);
	}
	close(p[1]);
	buf_release(out);
	while ((n = read(p[0], chunk, sizeof(chunk))) > 0)
		assert_int_equal(buf_put(out, chunk, (size_t)n), 0);
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_without_privileges_it_records_what_is_missing(void **state)
{
	config cfg;
	buf arch = BUF_INIT;
	unpacked u;
	json_t *caps;
	pid_t pid;

	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	test_config(&cfg);
	/*
	 * Time enough to reach every process: on a loaded machine (under make
	 * asan beside a full run) the 5 s default's share for the extras ran
	 * out first, and the descriptors' reason was the budget's, not the
	 * permission this test is about.
	 */
	cfg.snapshot.time_budget_ms = 60000;
	pid = child(blocked_body, "snapvfork"); /* root's blocked task: nobody may not look */
	take_as_nobody(&arch, &cfg);
	stop(pid);
	unpack(&u, &arch);
	caps = json_object_get(json_object_get(u.manifest, "collector"), "capabilities");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(u.manifest,
									    "collector"),
							    "euid")),
			 65534);
	assert_false(json_is_true(json_object_get(caps, "CAP_SYS_ADMIN")));
	/* What needs privileges is named, with why; the rest is there. */
	assert_string_equal(status_of(&u, "bpf_programs"), "missing");
	assert_non_null(strstr(reason_of(&u, "bpf_programs"), "CAP_SYS_ADMIN"));
	assert_string_equal(status_of(&u, "blocked_stacks"), "missing");
	assert_non_null(strstr(reason_of(&u, "blocked_stacks"), "CAP_SYS_ADMIN"));
	assert_string_equal(status_of(&u, "file_descriptors"), "partial");
	assert_non_null(strstr(reason_of(&u, "file_descriptors"), "permission denied"));
	if (access("/proc/sys/kernel/dmesg_restrict", R_OK) == 0) {
		FILE *f = fopen("/proc/sys/kernel/dmesg_restrict", "r");
		int v = f ? fgetc(f) : 0;
		if (f)
			fclose(f);
		if (v == '1') {
			assert_string_equal(status_of(&u, "kernel_log"), "missing");
			assert_non_null(strstr(reason_of(&u, "kernel_log"), "CAP_SYSLOG"));
		}
	}
	assert_string_equal(status_of(&u, "pressure"), "collected");
	assert_string_equal(status_of(&u, "meminfo"), "collected");
	assert_true(json_array_size(json_object_get(u.summary, "top_threads")) +
		    json_array_size(json_object_get(u.summary, "processes")) > 0);
	unpacked_release(&u);
	buf_release(&arch);
	config_release(&cfg);
}

static void test_budgets_hold_with_5000_threads_and_a_huge_log(void **state)
{
	config cfg;
	snapshot_opts o = {0};
	snapshot_archive a;
	unpacked u;
	char huge[4200];
	double t0, took;
	pid_t pid;
	int fd;

	(void)state;
	make_tmp();
	/* 64 GiB of log (sparse): more than any budget can read. */
	snprintf(huge, sizeof(huge), "%s/kmsg", tmpdir);
	assert_true((fd = open(huge, O_WRONLY | O_CREAT, 0600)) >= 0);
	assert_int_equal(ftruncate(fd, (off_t)64 << 30), 0);
	close(fd);
	o.kmsg_path = huge;
	test_config(&cfg);
	cfg.snapshot.sample_ms = 1000;
	cfg.snapshot.time_budget_ms = 3000;
	pid = child(many_body, "snapmany");
	t0 = time_mono();
	take(&a, &cfg, &o);
	took = time_mono() - t0;
	unpack(&u, &a.data);
	/* The time budget holds: the log is cut, the snapshot ends. */
	print_message("3000 ms budget, 5000 threads, 64 GiB log: %.2f s, %zu bytes\n", took,
		      a.data.len);
	assert_true(took < 3.0 + 1.5);
	assert_string_equal(status_of(&u, "kernel_log"), "partial");
	assert_non_null(strstr(reason_of(&u, "kernel_log"), "time budget"));
	assert_true(a.data.len <= cfg.snapshot.size_budget_bytes);
	/* The 5,000 threads were seen (unless the budget cut the scan, which says so). */
	if (strcmp(status_of(&u, "top_threads"), "collected") == 0)
		assert_true(json_integer_value(json_object_get(json_object_get(u.summary, "tasks"),
							       "threads")) >= 5000);
	unpacked_release(&u);
	snapshot_archive_release(&a);

	/* The size budget holds: 64 KiB for everything, a 1 MiB log tail asked for. */
	cfg.snapshot.size_budget_bytes = 64 * 1024;
	cfg.snapshot.kmsg_bytes = 1 << 20;
	/*
	 * Time enough that only the size budget cuts: on a loaded machine the
	 * 5,000 threads took more than 5 s to list, and the items that cut
	 * said "time budget".
	 */
	cfg.snapshot.time_budget_ms = 30000;
	o.kmsg_path = NULL;
	take(&a, &cfg, &o);
	stop(pid);
	unpack(&u, &a.data);
	print_message("64 KiB budget: %zu bytes, %zu items not whole\n", a.data.len,
		      a.not_collected);
	assert_true(a.data.len <= 64 * 1024);
	assert_true(a.not_collected >= 1);
	{
		/* Whatever was cut says it was the size budget. */
		json_t *it;
		size_t i;
		bool said = false;
		json_array_foreach(json_object_get(u.manifest, "items"), i, it) {
			const char *r = json_string_value(json_object_get(it, "reason"));
			said |= r && strstr(r, "size budget") != NULL;
		}
		assert_true(said);
	}
	unpacked_release(&u);
	snapshot_archive_release(&a);
	config_release(&cfg);
	drop_tmp();
}

static void test_links_out_of_proc_are_never_followed(void **state)
{
	config cfg;
	snapshot_opts o = {0};
	snapshot_archive a;
	unpacked u;
	char root[4200], path[4300];
	const char *k;
	json_t *v;
	FILE *f;

	(void)state;
	make_tmp();
	/* A /proc whose pressure file and one task's stat point at secrets. */
	snprintf(root, sizeof(root), "%s/proc", tmpdir);
	assert_int_equal(mkdir(root, 0700), 0);
	snprintf(path, sizeof(path), "%s/pressure", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/pressure/cpu", root);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	snprintf(path, sizeof(path), "%s/7", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/7/task", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/7/task/7", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/7/task/7/stat", root);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	snprintf(path, sizeof(path), "%s/loadavg", root);
	assert_non_null(f = fopen(path, "w"));
	fputs("0.50 0.40 0.30 1/100 42\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/kmsg", tmpdir);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	o.proc_root = root;
	o.kmsg_path = path;
	test_config(&cfg);
	cfg.snapshot.sample_ms = 50;
	take(&a, &cfg, &o);
	unpack(&u, &a.data);
	assert_string_equal(status_of(&u, "pressure"), "missing");
	assert_non_null(strstr(reason_of(&u, "pressure"), "symbolic link"));
	assert_string_equal(status_of(&u, "top_threads"), "partial");
	assert_non_null(strstr(reason_of(&u, "top_threads"), "symbolic link"));
	assert_string_equal(status_of(&u, "loadavg"), "collected");
	/* Nothing of /etc/passwd is in the archive. */
	json_object_foreach(u.files, k, v)
		assert_null(strstr(json_string_value(v), "root:x:0:0"));
	unpacked_release(&u);
	snapshot_archive_release(&a);
	config_release(&cfg);
	drop_tmp();
}

/*
 * One process with more threads than the time budget can read: a fake
 * /proc whose process 7 has 20,000 tasks, all in D state, so every task
 * the scan read is counted in blocked_count. The scan must stop at the
 * deadline inside that one process, not after its last thread.
 */
static void test_the_deadline_holds_inside_one_process(void **state)
{
	enum { TASKS = 20000 };
	config cfg;
	snapshot_opts o = {0};
	snapshot_archive a;
	unpacked u;
	char root[4200], path[4300];
	json_int_t blocked;
	double t0;
	FILE *f;

	(void)state;
	make_tmp();
	snprintf(root, sizeof(root), "%s/proc", tmpdir);
	assert_int_equal(mkdir(root, 0700), 0);
	snprintf(path, sizeof(path), "%s/7", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/7/task", root);
	assert_int_equal(mkdir(path, 0700), 0);
	for (int i = 0; i < TASKS; i++) {
		int tid = i ? 100000 + i : 7;
		snprintf(path, sizeof(path), "%s/7/task/%d", root, tid);
		assert_int_equal(mkdir(path, 0700), 0);
		snprintf(path, sizeof(path), "%s/7/task/%d/stat", root, tid);
		assert_non_null(f = fopen(path, "w"));
		fprintf(f, "%d (snapfake) D 1 7 7 0 -1 0 0 0 0 0 1 1 0 0 20 0 %d 0 100 0 0\n", tid,
			TASKS);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/kmsg", tmpdir);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	o.proc_root = root;
	o.kmsg_path = path;
	test_config(&cfg);
	cfg.snapshot.sample_ms = 10;
	cfg.snapshot.time_budget_ms = 20;
	t0 = time_mono();
	take(&a, &cfg, &o);
	unpack(&u, &a.data);
	blocked = json_integer_value(json_object_get(u.summary, "blocked_count"));
	print_message("20 ms budget, one process of %d threads: %.3f s, %d threads read\n", TASKS,
		      time_mono() - t0, (int)blocked);
	assert_true(blocked < TASKS);
	assert_string_not_equal(status_of(&u, "top_threads"), "collected");
	assert_non_null(strstr(reason_of(&u, "top_threads"), "time budget"));
	unpacked_release(&u);
	snapshot_archive_release(&a);
	config_release(&cfg);
	drop_tmp();
}

static void test_options_are_checked(void **state)
{
	config cfg;
	snapshot_opts o = {0};
	snapshot_archive a;
	pr_error e = PR_ERROR_INIT;
	char longer[2000];

	(void)state;
	test_config(&cfg);
	o.incident = "INC\n42";
	assert_int_equal(snapshot_take(&a, &cfg, &o, &e), PR_EUSAGE);
	assert_non_null(strstr(e.msg, "incident"));
	snapshot_archive_release(&a);
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	o.incident = NULL;
	o.reason = longer;
	assert_int_equal(snapshot_take(&a, &cfg, &o, NULL), PR_EUSAGE);
	snapshot_archive_release(&a);
	o.reason = NULL;
	o.service = "no such/service";
	assert_int_equal(snapshot_take(&a, &cfg, &o, NULL), PR_EUSAGE);
	snapshot_archive_release(&a);
	o.service = NULL;
	o.trigger = "Alert Manager";
	assert_int_equal(snapshot_take(&a, &cfg, &o, NULL), PR_EUSAGE);
	snapshot_archive_release(&a);
	config_release(&cfg);
}

static void test_full_command_lines_only_where_the_config_allows(void **state)
{
	config cfg;
	snapshot_opts o = {0};
	snapshot_archive a;
	unpacked u;
	const json_t *p;
	size_t i;
	pid_t pid;
	bool found = false;
	config_snapshot_service svc = {0};
	char *procs[] = {"snapmemsvc"};

	(void)state;
	test_config(&cfg);
	cfg.snapshot.top_processes = 10;
	/* 512 MiB resident: among the top processes by memory whatever else runs. */
	pid = child(memory_body, "snapmemsvc");
	svc.name = "checkout";
	svc.processes = procs;
	svc.nprocesses = 1;
	svc.full_cmdline = true;
	cfg.snapshot.services = &svc;
	cfg.snapshot.nservices = 1;
	take(&a, &cfg, &o);
	cfg.snapshot.services = NULL;
	cfg.snapshot.nservices = 0;
	stop(pid);
	unpack(&u, &a.data);
	json_array_foreach(json_object_get(u.summary, "top_processes"), i, p) {
		if (json_integer_value(json_object_get(p, "pid")) == pid) {
			found = true;
			assert_string_equal(json_string_value(json_object_get(p, "service")),
					    "checkout");
			assert_true(json_array_size(json_object_get(p, "cmdline")) >= 1);
		} else {
			assert_null(json_object_get(p, "cmdline"));
		}
	}
	assert_true(found);
	unpacked_release(&u);
	snapshot_archive_release(&a);
	config_release(&cfg);
}

/* What a program of no service is run with: secrets a snapshot must never keep. */
#define SECRET_CARD "card=4111111111111111"

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A child named as a service's process for `ms` milliseconds, then, under
 * the same pid, another program whose command line holds secrets (this
 * binary again: main waits when it sees them). Only async-signal-safe
 * calls after the fork: the parent has threads.
 */
static pid_t exec_later(long ms)
{
	static char *argv[] = {"/opt/other", SECRET_CARD, "password=snapsvc-hunter2",
			       "Authorization: Bearer tokSECRET", NULL};
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
		prctl(PR_SET_NAME, "snapsvc");
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		execv("/proc/self/exe", argv);
		_exit(1);
	}
	return pid;
}

/*
 * While a snapshot is taken: a new child every 10 ms that runs another
 * program 0 to 60 ms later, killed 300 ms after its birth (so at most 30
 * live at once). Whenever the snapshot reads command lines, some children
 * it saw as the service's are about to change.
 */
typedef struct spawner {
	volatile int stop;
	size_t born;
} spawner;

static void *spawn_loop(void *arg)
{
	enum { LIVE = 32 };
	spawner *sp = arg;
	pid_t pid[LIVE] = {0};
	double born[LIVE] = {0};
	unsigned seed = 7;
	struct timespec tick = {0, 10000000};

	while (!sp->stop) {
		for (int i = 0; i < LIVE; i++) {
			if (pid[i] > 0 && mono_now() - born[i] > 0.3) {
				stop(pid[i]);
				pid[i] = 0;
			}
			if (pid[i] <= 0) {
				seed = seed * 1103515245 + 12345;
				born[i] = mono_now();
				pid[i] = exec_later((long)(seed >> 16) % 61);
				sp->born++;
				break;
			}
		}
		nanosleep(&tick, NULL);
	}
	for (int i = 0; i < LIVE; i++)
		if (pid[i] > 0)
			stop(pid[i]);
	return NULL;
}

/*
 * The service's processes are known by comm from the scan; their command
 * lines are read later. A process that runs another program in between
 * must never have that program's command line kept as the service's.
 */
static void test_a_full_command_line_is_never_another_programs(void **state)
{
	enum { ROUNDS = 4 };
	config cfg;
	snapshot_opts o = {0};
	config_snapshot_service svc = {0};
	char *procs[] = {"snapsvc"};
	size_t kept = 0, left_out = 0, born = 0;

	(void)state;
	test_config(&cfg);
	cfg.snapshot.sample_ms = 100;
	cfg.snapshot.top_processes = 1000;
	svc.name = "checkout";
	svc.processes = procs;
	svc.nprocesses = 1;
	svc.full_cmdline = true;
	cfg.snapshot.services = &svc;
	cfg.snapshot.nservices = 1;
	for (int r = 0; r < ROUNDS; r++) {
		snapshot_archive a;
		unpacked u;
		spawner sp = {0};
		pthread_t th;
		const char *k;
		const json_t *p, *v;
		size_t i;

		assert_int_equal(pthread_create(&th, NULL, spawn_loop, &sp), 0);
		usleep(100000);
		take(&a, &cfg, &o);
		sp.stop = 1;
		pthread_join(th, NULL);
		born += sp.born;
		unpack(&u, &a.data);
		json_object_foreach(u.files, k, v)
		{
			const char *text = json_string_value(v);
			if (strstr(text, SECRET_CARD) || strstr(text, "snapsvc-hunter2"))
				fail_msg("round %d: '%s' keeps another program's secrets", r, k);
		}
		json_array_foreach(json_object_get(u.summary, "top_processes"), i, p)
		{
			if (json_object_get(p, "cmdline")) {
				assert_string_equal(json_string_value(json_object_get(p, "name")),
						    "snapsvc");
				kept++;
			}
			left_out += json_object_get(p, "cmdline_missing") != NULL;
		}
		unpacked_release(&u);
		snapshot_archive_release(&a);
	}
	print_message("%d snapshots, %zu children: %zu command lines kept, %zu left out\n", ROUNDS,
		      born, kept, left_out);
	cfg.snapshot.services = NULL;
	cfg.snapshot.nservices = 0;
	config_release(&cfg);
}

/* ---- stored snapshots ---- */

typedef struct dbfix {
	testdb *t;
	blob_store *bs;
	config cfg;
	char home[4200];
} dbfix;

static int db_setup(void **state)
{
	dbfix *f = calloc(1, sizeof(*f));
	char blobs[4300];

	if (!f || testdb_setup((void **)&f->t) < 0)
		return -1;
	make_tmp();
	snprintf(f->home, sizeof(f->home), "%s", tmpdir);
	snprintf(blobs, sizeof(blobs), "%s/blobs", f->home);
	if (blob_store_open_dir(&f->bs, blobs, NULL) < 0)
		return -1;
	test_config(&f->cfg);
	f->cfg.snapshot.sample_ms = 100;
	*state = f;
	return 0;
}

static int db_teardown(void **state)
{
	dbfix *f = *state;

	blob_store_free(f->bs);
	config_release(&f->cfg);
	testdb_teardown((void **)&f->t);
	drop_tmp();
	free(f);
	return 0;
}

static void test_stored_round_trip_byte_for_byte(void **state)
{
	dbfix *f = *state;
	job_env env = {&f->cfg, f->t->db, f->bs, f->home, NULL};
	snapshot_opts o = {0};
	snapshot_result r;
	pr_error e = PR_ERROR_INIT;
	buf back = BUF_INIT;
	json_t *list = NULL, *doc = NULL, *near = NULL;
	snapshot_filter flt = {0};
	int64_t id2 = 0;
	bool existed = false;
	const char *hosts[1];

	o.incident = "INC-7";
	o.trigger = "alertmanager";
	assert_int_equal(snapshot_run(&r, &env, &o, &e), 0);
	assert_true(r.id > 0);
	assert_false(r.existed);
	assert_int_equal(snapshot_read(&back, &env, r.id, &e), 0);
	assert_int_equal(back.len, r.a.data.len);
	assert_memory_equal(back.ptr, r.a.data.ptr, back.len);
	/* The same archive again is the same snapshot. */
	assert_int_equal(snapshot_store(&id2, &existed, &env, back.ptr, back.len, "again",
					"upload", &e), 0);
	assert_int_equal(id2, r.id);
	assert_true(existed);
	flt.incident = "INC-7";
	assert_int_equal(snapshot_list(&list, f->t->db, &flt, &e), 0);
	assert_int_equal(json_array_size(list), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "trigger")),
			    "alertmanager");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "bytes")),
			 (json_int_t)back.len);
	assert_int_equal(snapshot_get(&doc, f->t->db, r.id, &e), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "manifest"),
							       "kind")), SNAPSHOT_KIND);
	json_decref(doc);
	assert_int_equal(snapshot_get(&doc, f->t->db, r.id + 100, &e), PR_ENOTFOUND);
	assert_null(doc);
	/* Next to captures of the same host at the same time. */
	hosts[0] = r.a.host;
	assert_int_equal(snapshot_near(&near, f->t->db, hosts, 1, r.a.taken_at_us - 60000000,
				       r.a.taken_at_us + 60000000, NULL, NULL, &e), 0);
	assert_int_equal(json_array_size(near), 1);
	json_decref(near);
	/* A team's report sees only its services' snapshots: this one has no service. */
	assert_int_equal(snapshot_near(&near, f->t->db, hosts, 1, r.a.taken_at_us - 60000000,
				       r.a.taken_at_us + 60000000, "payments", NULL, &e), 0);
	assert_int_equal(json_array_size(near), 0);
	json_decref(near);
	/* Nor does the report of one service's finding. */
	assert_int_equal(snapshot_near(&near, f->t->db, hosts, 1, r.a.taken_at_us - 60000000,
				       r.a.taken_at_us + 60000000, NULL, "checkout", &e), 0);
	assert_int_equal(json_array_size(near), 0);
	json_decref(near);
	hosts[0] = "another-host";
	assert_int_equal(snapshot_near(&near, f->t->db, hosts, 1, r.a.taken_at_us - 60000000,
				       r.a.taken_at_us + 60000000, NULL, NULL, &e), 0);
	assert_int_equal(json_array_size(near), 0);
	/* Stored and read are audited. */
	assert_int_equal(testdb_int(f->t, "select count(*) from audit_log where action in "
				    "('snapshot.store', 'snapshot.extract')"), 2);
	json_decref(near);
	json_decref(doc);
	json_decref(list);
	buf_release(&back);
	snapshot_result_release(&r);
}

static void test_cooldown_and_own_host_only(void **state)
{
	dbfix *f = *state;
	job_env env = {&f->cfg, f->t->db, f->bs, f->home, NULL};
	snapshot_opts o = {0};
	snapshot_result r;
	pr_error e = PR_ERROR_INIT;

	o.for_host = "not-this-host";
	assert_int_equal(snapshot_run(&r, &env, &o, &e), PR_EREFUSED);
	assert_non_null(strstr(e.msg, "its own host"));
	snapshot_result_release(&r);
	o.for_host = NULL;
	o.cooldown_us = 600LL * 1000000;
	assert_int_equal(snapshot_run(&r, &env, &o, &e), 0);
	snapshot_result_release(&r);
	pr_error_clear(&e);
	/* A flapping alert a minute later takes nothing. */
	assert_int_equal(snapshot_run(&r, &env, &o, &e), PR_EREFUSED);
	assert_non_null(strstr(e.msg, "cooldown"));
	assert_int_equal(r.a.data.len, 0);
	snapshot_result_release(&r);
	assert_int_equal(testdb_int(f->t, "select count(*) from snapshots"), 1);
}

static int no_store(void *arg, db **d, blob_store **bs, pr_error *err)
{
	(void)arg;
	(void)d;
	(void)bs;
	return pr_error_set(err, PR_EDB, "cannot connect to the database: connection refused");
}

static void test_an_unreachable_store_keeps_the_archive(void **state)
{
	dbfix *f = *state;
	job_env env = {&f->cfg, NULL, NULL, f->home, NULL};
	snapshot_opts o = {0};
	snapshot_result r;
	pr_error e = PR_ERROR_INIT;
	buf kept = BUF_INIT;
	json_t *m = NULL;
	int64_t id = 0;
	bool existed;

	o.open_store = no_store;
	assert_int_equal(snapshot_run(&r, &env, &o, &e), PR_EDB);
	assert_non_null(r.unsent);
	assert_non_null(strstr(e.msg, "connection refused"));
	assert_non_null(strstr(e.msg, r.unsent));
	assert_non_null(strstr(r.unsent, "/snapshots/unsent/"));
	assert_int_equal(fileio_read(&kept, r.unsent, SNAPSHOT_ARCHIVE_MAX, NULL), 0);
	assert_int_equal(kept.len, r.a.data.len);
	assert_int_equal(snapshot_check(&m, kept.ptr, kept.len, r.unsent, &e), 0);
	/* Once the store is back, the kept archive uploads as it was. */
	env.d = f->t->db;
	env.bs = f->bs;
	assert_int_equal(snapshot_upload(&id, &existed, &env, r.unsent, &e), 0);
	assert_true(id > 0);
	assert_false(existed);
	json_decref(m);
	buf_release(&kept);
	snapshot_result_release(&r);
}

static void test_archives_from_outside_are_checked(void **state)
{
	dbfix *f = *state;
	job_env env = {&f->cfg, f->t->db, f->bs, f->home, NULL};
	static const char *const manifests[][2] = {
		{"{\"kind\": \"other\"}", "kind"},
		{"{\"kind\": \"profreg-snapshot\", \"schema_version\": 2}", "schema_version"},
		{"{\"kind\": \"profreg-snapshot\", \"schema_version\": 1, \"taken_at_us\": 1,"
		 " \"items\": []}",
		 "'host'"},
		{"{\"kind\": \"profreg-snapshot\", \"schema_version\": 1, \"host\": \"a\\nb\","
		 " \"taken_at_us\": 1, \"items\": []}",
		 "host"},
		{"{\"kind\": \"profreg-snapshot\", \"schema_version\": 1, \"host\": \"h\","
		 " \"taken_at_us\": -5, \"items\": []}",
		 "taken_at_us"},
		{"{\"kind\": \"profreg-snapshot\", \"schema_version\": 1, \"host\": \"h\","
		 " \"service\": \"../x\", \"taken_at_us\": 5, \"items\": []}",
		 "service"},
		{"{\"kind\": \"profreg-snapshot\", \"schema_version\": 1, \"host\": \"h\","
		 " \"taken_at_us\": 5}",
		 "items"},
		{"not json", "manifest.json"},
		{"{\"kind\": \"profreg-snapshot\", \"schema_version\": 1, \"host\": \"h\","
		 " \"taken_at_us\": 5, \"items\": [{\"layer\": \"kernel\", \"name\": \"x\","
		 " \"status\": \"\\u001b[2Jcollected\"}]}",
		 "status"},
		{"{\"kind\": \"profreg-snapshot\", \"schema_version\": 1, \"host\": \"h\","
		 " \"taken_at_us\": 5, \"items\": [{\"layer\": \"kernel\", \"name\": \"x\","
		 " \"status\": \"done\"}]}",
		 "status"},
		{"{\"kind\": \"profreg-snapshot\", \"schema_version\": 1, \"host\": \"h\","
		 " \"taken_at_us\": 5, \"items\": [{\"layer\": \"\\u001b]0;x\\u0007\","
		 " \"name\": \"x\", \"status\": \"missing\"}]}",
		 "layer or name"},
		{"{\"kind\": \"profreg-snapshot\", \"schema_version\": 1, \"host\": \"h\","
		 " \"taken_at_us\": 5, \"items\": [{\"layer\": \"kernel\", \"status\":"
		 " \"partial\"}]}",
		 "layer or name"},
	};
	tarzst_member m[2];
	buf a = BUF_INIT;
	json_t *man = NULL;
	int64_t id;
	bool existed;

	for (size_t i = 0; i < sizeof(manifests) / sizeof(manifests[0]); i++) {
		pr_error e = PR_ERROR_INIT;
		m[0] = (tarzst_member){"manifest.json", manifests[i][0], strlen(manifests[i][0])};
		assert_int_equal(tarzst_write(&a, m, 1, 0, 1 << 20, NULL), 0);
		assert_int_equal(snapshot_store(&id, &existed, &env, a.ptr, a.len, "x.tar.zst",
						"upload", &e), PR_EDATA);
		assert_non_null(strstr(e.msg, "'x.tar.zst'"));
		if (!strstr(e.msg, manifests[i][1]))
			fail_msg("'%s' does not name '%s'", e.msg, manifests[i][1]);
	}
	/* The manifest must come first. */
	{
		pr_error e = PR_ERROR_INIT;
		m[0] = (tarzst_member){"summary.json", "{}", 2};
		m[1] = (tarzst_member){"manifest.json", "{}", 2};
		assert_int_equal(tarzst_write(&a, m, 2, 0, 1 << 20, NULL), 0);
		assert_int_equal(snapshot_check(&man, a.ptr, a.len, "y", &e), PR_EDATA);
		assert_non_null(strstr(e.msg, "first member"));
	}
	assert_int_equal(snapshot_check(&man, "junk", 4, "z", NULL), PR_EDATA);
	assert_int_equal(testdb_int(f->t, "select count(*) from snapshots"), 0);
	buf_release(&a);
}

static void test_retention_keeps_snapshot_blobs(void **state)
{
	dbfix *f = *state;
	job_env env = {&f->cfg, f->t->db, f->bs, f->home, NULL};
	snapshot_opts o = {0};
	snapshot_result r;
	retention_result rr;
	retention_opts ro = {0};
	pr_error e = PR_ERROR_INIT;
	char path[4700];
	struct timespec old[2] = {{0, 0}, {0, 0}};
	bool there = false;

	assert_int_equal(snapshot_run(&r, &env, &o, &e), 0);
	/* Made to look like a stray file a day old: the sweep's own test of age. */
	snprintf(path, sizeof(path), "%s/blobs/sha256/%.2s/%s.zst", f->home, r.key, r.key + 2);
	old[0].tv_sec = old[1].tv_sec = time(NULL) - 86400;
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	ro.orphan_grace_us = 1000000;
	assert_int_equal(retention_run(&rr, f->t->db, f->bs, &f->cfg, &ro, &e), 0);
	assert_int_equal(rr.orphans_deleted, 0);
	assert_int_equal(blob_exists(f->bs, r.key, &there, &e), 0);
	assert_true(there);
	snapshot_result_release(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_layer_is_listed_with_a_status),
		cmocka_unit_test(test_threads_burning_cpu_are_at_the_top),
		cmocka_unit_test(test_a_nameless_process_is_kept),
		cmocka_unit_test(test_a_process_holding_memory_is_among_the_top),
		cmocka_unit_test(test_blocked_tasks_with_what_they_wait_on),
		cmocka_unit_test(test_without_privileges_it_records_what_is_missing),
		cmocka_unit_test(test_budgets_hold_with_5000_threads_and_a_huge_log),
		cmocka_unit_test(test_links_out_of_proc_are_never_followed),
		cmocka_unit_test(test_the_deadline_holds_inside_one_process),
		cmocka_unit_test(test_options_are_checked),
		cmocka_unit_test(test_full_command_lines_only_where_the_config_allows),
		cmocka_unit_test(test_a_full_command_line_is_never_another_programs),
		cmocka_unit_test_setup_teardown(test_stored_round_trip_byte_for_byte, db_setup,
						db_teardown),
		cmocka_unit_test_setup_teardown(test_cooldown_and_own_host_only, db_setup,
						db_teardown),
		cmocka_unit_test_setup_teardown(test_an_unreachable_store_keeps_the_archive,
						db_setup, db_teardown),
		cmocka_unit_test_setup_teardown(test_archives_from_outside_are_checked, db_setup,
						db_teardown),
		cmocka_unit_test_setup_teardown(test_retention_keeps_snapshot_blobs, db_setup,
						db_teardown),
	};

	/* A child of test_a_full_command_line_is_never_another_programs, after its exec. */
	if (argc > 1 && strcmp(argv[1], SECRET_CARD) == 0)
		for (;;)
			pause();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
