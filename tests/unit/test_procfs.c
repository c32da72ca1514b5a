/*
 * test_procfs.c: the bounded /proc and kernel readers (pipeline/procfs)
 * and the .tar.zst archives (pipeline/tarzst).
 *
 * Parsers get real lines and hostile ones (a comm holding ") (" and a
 * newline, cut lines, numbers past 64 bits, bytes that are not UTF-8).
 * Readers run on a private folder built to misbehave: symbolic links out
 * of it, a link in the middle of a path, "..", a FIFO, files past the cap.
 * The kernel log reader runs on a file of records, on a FIFO a child
 * writes to without end (it must stop at its deadline), and on the real
 * /dev/kmsg. The BPF list is checked against a program this test loads.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/timeutil.h"
#include "pipeline/procfs.h"
#include "pipeline/tarzst.h"

static char tmpdir[4096];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	const char *base = getenv("PROFREG_TEST_TMP");

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/procfs.XXXXXX", base ? base : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void put_file(const char *rel, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static void mk(const char *rel)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	assert_int_equal(mkdir(path, 0700), 0);
}

/* ---- parsers ---- */

static void test_stat_parses_a_real_line(void **state)
{
	/* /proc/1/stat of a process whose rsslim is RLIM_INFINITY (all 64 bits). */
	const char *l = "1 (process_api) S 0 0 0 0 -1 4194560 460 131809456 0 6214 0 19 403049 "
			"332009 10 -10 14 0 19 47853568 3606 18446744073709551615 1 1 0 0 0 0 0 "
			"4096 1256 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 7\n";
	procfs_stat st;
	pr_error e = PR_ERROR_INIT;

	(void)state;
	assert_int_equal(procfs_stat_parse(&st, l, strlen(l), &e), 0);
	assert_int_equal(st.pid, 1);
	assert_string_equal(st.comm, "process_api");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.utime, 0);
	assert_int_equal(st.stime, 19);
	assert_int_equal(st.nice, -10);
	assert_int_equal(st.num_threads, 14);
	assert_int_equal(st.starttime, 19);
	assert_int_equal(st.vsize, 47853568);
	assert_int_equal(st.rss, 3606);
	assert_int_equal(st.processor, 1);
}

static void test_stat_takes_a_hostile_comm_whole(void **state)
{
	/* A thread may name itself anything: ") R 1 (" and a newline included. */
	const char *l = "42 (a) R 1 (\nx) D 7 0 0 0 -1 0 0 0 0 0 25 5 0 0 20 0 3 0 99 1000 2 0\n";
	procfs_stat st;

	(void)state;
	assert_int_equal(procfs_stat_parse(&st, l, strlen(l), NULL), 0);
	assert_string_equal(st.comm, "a) R 1 (\nx");
	assert_int_equal(st.state, 'D');
	assert_int_equal(st.ppid, 7);
	assert_int_equal(st.utime, 25);
	assert_int_equal(st.stime, 5);
	assert_int_equal(st.num_threads, 3);
	assert_int_equal(st.rss, 2);
	assert_int_equal(st.processor, -1);
}

static void test_stat_takes_the_int64_range_of_negative_fields(void **state)
{
	/* nice at INT64_MIN: negating it as an int64_t was undefined (UBSan). */
	const char *l = "42 (a) R 1 0 0 0 -1 0 0 0 0 0 25 5 0 0 20 -9223372036854775808 3 0 99 "
			"1000 2 0\n";
	const char *below = "42 (a) R 1 0 0 0 -1 0 0 0 0 0 25 5 0 0 20 -9223372036854775809 3 0 "
			    "99 1000 2 0\n";
	procfs_stat st;
	pr_error e = PR_ERROR_INIT;

	(void)state;
	assert_int_equal(procfs_stat_parse(&st, l, strlen(l), &e), 0);
	assert_true(st.nice == INT64_MIN);
	assert_int_equal(st.num_threads, 3);
	assert_int_equal(procfs_stat_parse(&st, below, strlen(below), &e), PR_EDATA);
	assert_string_equal(e.msg, "stat field 19 is below the int64 range");
}

static void test_stat_refuses_malformed_lines(void **state)
{
	static const char *const bad[] = {
		"",
		"42 no parens R 1",
		"(x) S 1 2 3",
		"-4 (x) S 1 0 0 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 9 100 1 0",
		"42 (x)",
		"42 (x) S 1 0 0",                                       /* cut short */
		"42 (x) S 1 0 0 0 -1 0 0 0 0 0 1x 1 0 0 20 0 1 0 9 100 1 0", /* not a number */
		"42 (x) S 1 0 0 0 -1 0 0 0 0 0 99999999999999999999 1 0 0 20 0 1 0 9 100 1 0",
	};
	procfs_stat st;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pr_error e = PR_ERROR_INIT;
		assert_int_equal(procfs_stat_parse(&st, bad[i], strlen(bad[i]), &e), PR_EDATA);
		assert_true(strlen(e.msg) > 0);
	}
}

static void test_pressure_parses_and_refuses(void **state)
{
	const char *ok = "some avg10=1.50 avg60=2.25 avg300=0.00 total=12345\n"
			 "full avg10=0.10 avg60=0.00 avg300=0.00 total=99\n";
	const char *cpu_only = "some avg10=95.64 avg60=79.80 avg300=44.81 total=2815804257\n";
	static const char *const bad[] = {
		"",
		"full avg10=0.10 avg60=0.00 avg300=0.00 total=99\n",
		"some avg10=x avg60=0.00 avg300=0.00 total=1\n",
		"some avg10=1 avg60=2 avg300=3\n",
		"weird line\n",
	};
	procfs_psi p;

	(void)state;
	assert_int_equal(procfs_psi_parse(&p, ok, strlen(ok), NULL), 0);
	assert_true(p.some.present && p.full.present);
	assert_true(p.some.avg10 == 1.5 && p.some.avg60 == 2.25);
	assert_int_equal(p.some.total_us, 12345);
	assert_int_equal(p.full.total_us, 99);
	assert_int_equal(procfs_psi_parse(&p, cpu_only, strlen(cpu_only), NULL), 0);
	assert_false(p.full.present);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(procfs_psi_parse(&p, bad[i], strlen(bad[i]), NULL), PR_EDATA);
}

static void test_kv_reads_meminfo_vmstat_and_stat(void **state)
{
	const char *mem = "MemTotal:       24683548 kB\nMemFree:        21174216 kB\n"
			  "HugePages_Total:       0\nnot a number line\n";
	const char *st = "cpu  10 20 30 40 50 60 70 80 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"
			 "ctxt 123456\nprocs_running 3\n";
	procfs_kv *kv = NULL;
	size_t n = 0;
	const procfs_kv *x;

	(void)state;
	assert_int_equal(procfs_kv_parse(&kv, &n, mem, strlen(mem), 100, NULL), 0);
	assert_int_equal(n, 3);
	assert_non_null(x = procfs_kv_find(kv, n, "MemFree"));
	assert_int_equal(x->v[0], 21174216);
	assert_null(procfs_kv_find(kv, n, "not"));
	free(kv);
	assert_int_equal(procfs_kv_parse(&kv, &n, st, strlen(st), 100, NULL), 0);
	assert_non_null(x = procfs_kv_find(kv, n, "cpu"));
	assert_int_equal(x->nv, 10);
	assert_int_equal(x->v[7], 80);
	assert_int_equal(procfs_kv_find(kv, n, "procs_running")->v[0], 3);
	free(kv);
	/* At most `max` lines are kept. */
	assert_int_equal(procfs_kv_parse(&kv, &n, st, strlen(st), 2, NULL), 0);
	assert_int_equal(n, 2);
	free(kv);
}

static void test_cmdline_keeps_the_name_and_count(void **state)
{
	char name[16];
	size_t argc;

	(void)state;
	procfs_cmdline_parse(name, sizeof(name), &argc, "/usr/bin/pay\0--key=s3cr3t\0-v\0", 29);
	assert_string_equal(name, "pay");
	assert_int_equal(argc, 3);
	procfs_cmdline_parse(name, sizeof(name), &argc, "", 0);
	assert_string_equal(name, "");
	assert_int_equal(argc, 0);
	/* Unterminated last argument; a name longer than the room is cut. */
	procfs_cmdline_parse(name, 5, &argc, "/x/abcdefgh\0tail", 16);
	assert_string_equal(name, "abcd");
	assert_int_equal(argc, 2);
}

static void test_clean_escapes_controls_and_bad_utf8(void **state)
{
	buf b = BUF_INIT;

	(void)state;
	assert_int_equal(procfs_clean(&b, "ok \xc3\xa9\x1b[2J\n\xff\xc2\x9b z", 15), 0);
	assert_string_equal(b.ptr, "ok \xc3\xa9\\x1b[2J\\x0a\\xff\\xc2\\x9b z");
	buf_release(&b);
	assert_int_equal(procfs_clean(&b, "a\0b", 3), 0);
	assert_string_equal(b.ptr, "a\\x00b");
	buf_release(&b);
}

static void test_cgroup_paths_and_mounts(void **state)
{
	const char *cg = "12:memory:/x\n0::/system.slice/pay.service\n";
	const char *mi = "25 1 0:22 / /proc rw - proc proc rw\n"
			 "40 30 0:35 / /sys/fs/cgroup/my\\040cg rw,relatime shared:9 - cgroup2 "
			 "cgroup2 rw\n";
	buf b = BUF_INIT;

	(void)state;
	assert_int_equal(procfs_cgroup2_path(&b, cg, strlen(cg), NULL), 0);
	assert_string_equal(b.ptr, "/system.slice/pay.service");
	assert_int_equal(procfs_cgroup2_path(&b, "3:cpu:/\n", 8, NULL), PR_ENOTFOUND);
	assert_int_equal(procfs_cgroup2_mount(&b, mi, strlen(mi), NULL), 0);
	assert_string_equal(b.ptr, "/sys/fs/cgroup/my cg");
	assert_int_equal(procfs_cgroup2_mount(&b, mi, 36, NULL), PR_ENOTFOUND);
	/*
	 * Five fields and then the end of the text, with no NUL after it (what
	 * fuzz_procfs found): the " - " separator is looked for in these bytes
	 * only, never past them (ASan sees a read past the copy).
	 */
	{
		static const char five[] = "1 19 47853568 3606 1844674407370955ervice\n";
		pr_error e = PR_ERROR_INIT;
		char *t = malloc(sizeof(five) - 1);

		assert_non_null(t);
		memcpy(t, five, sizeof(five) - 1);
		assert_int_equal(procfs_cgroup2_mount(&b, t, sizeof(five) - 1, &e), PR_ENOTFOUND);
		assert_string_equal(e.msg, "no cgroup v2 hierarchy is mounted");
		free(t);
	}
	buf_release(&b);
}

/* ---- readers ---- */

static void test_read_caps_and_refuses_what_is_not_a_plain_file(void **state)
{
	char path[4200], big[10000];
	buf b = BUF_INIT;
	bool cut = false;
	pr_error e = PR_ERROR_INIT;
	int fd, en = 0;

	(void)state;
	mk("d");
	put_file("d/f", "hello\n");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put_file("big", big);
	snprintf(path, sizeof(path), "%s/d/out", tmpdir);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	snprintf(path, sizeof(path), "%s/dirlink", tmpdir);
	assert_int_equal(symlink("d", path), 0);
	snprintf(path, sizeof(path), "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(procfs_dir_open(&fd, AT_FDCWD, tmpdir, NULL, NULL), 0);

	assert_int_equal(procfs_read(&b, fd, "d/f", 100, &cut, NULL, NULL), 0);
	assert_string_equal(b.ptr, "hello\n");
	assert_false(cut);
	assert_int_equal(procfs_read(&b, fd, "big", 4096, &cut, NULL, NULL), 0);
	assert_int_equal(b.len, 4096);
	assert_true(cut);
	/* Exactly at the cap is not cut. */
	assert_int_equal(procfs_read(&b, fd, "d/f", 6, &cut, NULL, NULL), 0);
	assert_false(cut);
	/* A link at the end, a link in the middle, "..": never followed. */
	assert_int_equal(procfs_read(&b, fd, "d/out", 100, NULL, &en, &e), PR_EREFUSED);
	assert_non_null(strstr(e.msg, "symbolic link"));
	assert_int_equal(b.len, 0);
	assert_int_equal(procfs_read(&b, fd, "dirlink/f", 100, NULL, NULL, NULL), PR_EREFUSED);
	assert_int_equal(procfs_read(&b, fd, "../etc/passwd", 100, NULL, NULL, NULL),
			 PR_EREFUSED);
	assert_int_equal(procfs_read(&b, fd, "/etc/passwd", 100, NULL, NULL, NULL), PR_EREFUSED);
	assert_int_equal(procfs_read(&b, fd, "d/./f", 100, NULL, NULL, NULL), PR_EREFUSED);
	/* A FIFO is not read (and does not block), a folder neither; missing is not found. */
	assert_int_equal(procfs_read(&b, fd, "fifo", 100, NULL, NULL, NULL), PR_EREFUSED);
	assert_int_equal(procfs_read(&b, fd, "d", 100, NULL, NULL, NULL), PR_EREFUSED);
	assert_int_equal(procfs_read(&b, fd, "nope", 100, NULL, NULL, NULL), PR_ENOTFOUND);
	close(fd);
	buf_release(&b);
}

static void test_read_refuses_links_of_the_real_proc(void **state)
{
	char path[64];
	buf b = BUF_INIT;
	int fd;

	(void)state;
	assert_int_equal(procfs_dir_open(&fd, AT_FDCWD, "/proc", NULL, NULL), 0);
	assert_int_equal(procfs_read(&b, fd, "self/status", 4096, NULL, NULL, NULL), PR_EREFUSED);
	snprintf(path, sizeof(path), "%d/root/etc/passwd", getpid());
	assert_int_equal(procfs_read(&b, fd, path, 4096, NULL, NULL, NULL), PR_EREFUSED);
	snprintf(path, sizeof(path), "%d/status", getpid());
	assert_int_equal(procfs_read(&b, fd, path, 65536, NULL, NULL, NULL), 0);
	assert_non_null(strstr(b.ptr, "Name:"));
	close(fd);
	buf_release(&b);
}

static void test_list_and_count(void **state)
{
	int fd, *ids = NULL;
	size_t n = 0;
	uint64_t cnt = 0;
	bool complete;
	char path[64];

	(void)state;
	mk("1");
	mk("22");
	mk("x3");
	put_file("333", "");
	assert_int_equal(procfs_dir_open(&fd, AT_FDCWD, tmpdir, NULL, NULL), 0);
	assert_int_equal(procfs_list_ids(&ids, &n, fd, ".", 100, &complete, NULL, NULL), 0);
	assert_int_equal(n, 3);
	assert_true(complete);
	free(ids);
	assert_int_equal(procfs_list_ids(&ids, &n, fd, ".", 2, &complete, NULL, NULL), 0);
	assert_int_equal(n, 2);
	assert_false(complete);
	free(ids);
	assert_int_equal(procfs_count_entries(&cnt, fd, ".", 100, 0, &complete, NULL, NULL), 0);
	assert_int_equal(cnt, 4);
	assert_int_equal(procfs_count_entries(&cnt, fd, ".", 1, 0, &complete, NULL, NULL), 0);
	assert_int_equal(cnt, 1);
	assert_false(complete);
	close(fd);
	/* Our own descriptors, counted through the real /proc. */
	assert_int_equal(procfs_dir_open(&fd, AT_FDCWD, "/proc", NULL, NULL), 0);
	snprintf(path, sizeof(path), "%d/fd", getpid());
	assert_int_equal(procfs_count_entries(&cnt, fd, path, 100000, 0, &complete, NULL, NULL),
			 0);
	assert_true(cnt >= 4); /* stdin, stdout, stderr, fd, the listing's own */
	close(fd);
}

/* ---- the kernel log ---- */

static void test_kmsg_tail_keeps_whole_records(void **state)
{
	char path[4200];
	buf b = BUF_INIT;
	procfs_kmsg_info info;

	(void)state;
	put_file("kmsg", "6,1,100,-;first\n SUBSYSTEM=x\n6,2,200,-;second record\n"
			 " DEVICE=+y\n6,3,300,-;third\n");
	snprintf(path, sizeof(path), "%s/kmsg", tmpdir);
	assert_int_equal(procfs_kmsg_tail(&b, &info, path, 1 << 20, 0, NULL, NULL), 0);
	assert_true(info.complete);
	assert_int_equal(info.records, 5); /* lines, for a plain stream */
	assert_int_equal(b.len, info.bytes);
	/* 30 bytes reach into the second record's continuation: whole records only. */
	assert_int_equal(procfs_kmsg_tail(&b, &info, path, 30, 0, NULL, NULL), 0);
	assert_string_equal(b.ptr, "6,3,300,-;third\n");
	assert_int_equal(procfs_kmsg_tail(&b, &info, path, 0, 0, NULL, NULL), 0);
	assert_int_equal(b.len, 0);
	buf_release(&b);
}

static void test_kmsg_tail_stops_at_its_deadline_on_a_huge_log(void **state)
{
	char path[4200];
	buf b = BUF_INIT;
	procfs_kmsg_info info;
	double t0;
	int fd;

	(void)state;
	/* 64 GiB (sparse): far more than can be read in the half second allowed. */
	snprintf(path, sizeof(path), "%s/huge", tmpdir);
	assert_true((fd = open(path, O_WRONLY | O_CREAT, 0600)) >= 0);
	assert_int_equal(ftruncate(fd, (off_t)64 << 30), 0);
	close(fd);
	t0 = time_mono();
	assert_int_equal(procfs_kmsg_tail(&b, &info, path, 64 * 1024, t0 + 0.5, NULL, NULL), 0);
	assert_false(info.complete);
	assert_true(info.bytes < ((uint64_t)64 << 30));
	assert_true(time_mono() - t0 < 3.0); /* the deadline, not the log, ended it */
	assert_true(b.len <= 64 * 1024);
	buf_release(&b);
}

static void test_kmsg_tail_of_the_real_log(void **state)
{
	buf b = BUF_INIT;
	procfs_kmsg_info info;
	pr_error e = PR_ERROR_INIT;
	int rc;

	(void)state;
	rc = procfs_kmsg_tail(&b, &info, "/dev/kmsg", 1 << 20, time_mono() + 5, NULL, &e);
	if (geteuid() != 0) {
		print_message("not root: /dev/kmsg may be refused (%s)\n", e.msg);
		assert_true(rc == 0 || rc == PR_EREFUSED);
	} else {
		assert_int_equal(rc, 0);
		assert_true(info.complete);
		assert_true(info.records > 0);
		/* Records look like "prio,seq,usec,flags;text". */
		assert_non_null(strchr(b.ptr, ';'));
	}
	buf_release(&b);
}

/* ---- BPF ---- */

static void test_bpf_lists_a_program_we_loaded(void **state)
{
	struct bpf_insn prog[] = {
		{BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0}, /* r0 = 0 */
		{BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
	};
	procfs_bpf_prog *p = NULL;
	size_t n = 0;
	bool complete, found = false;
	pr_error e = PR_ERROR_INIT;
	int fd, rc;

	(void)state;
	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "pr_snaptest", "GPL", prog, 2, NULL);
	rc = procfs_bpf_progs(&p, &n, 100000, 0, &complete, NULL, &e);
	if (fd < 0) {
		print_message("cannot load a BPF program here (%s): the list must say why\n",
			      strerror(-fd));
		assert_true(rc == 0 || rc == PR_EREFUSED || rc == PR_ENOTFOUND);
		free(p);
		return;
	}
	assert_int_equal(rc, 0);
	assert_true(complete);
	for (size_t i = 0; i < n; i++)
		if (strcmp(p[i].name, "pr_snaptest") == 0) {
			found = true;
			assert_string_equal(p[i].type, "socket_filter");
			assert_int_equal(strlen(p[i].tag), 16);
		}
	assert_true(found);
	free(p);
	close(fd);
}

static void test_bpf_list_is_refused_without_privileges(void **state)
{
	pid_t pid;
	int status;

	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		procfs_bpf_prog *p = NULL;
		size_t n = 0;
		bool complete;
		pr_error e = PR_ERROR_INIT;
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		_exit(procfs_bpf_progs(&p, &n, 10, 0, &complete, NULL, &e) == PR_EREFUSED &&
			      strstr(e.msg, "not permitted") ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- archives ---- */

static int collect(void *arg, const char *path, const void *data, size_t len, pr_error *err)
{
	buf *b = arg;

	(void)err;
	buf_printf(b, "%s=", path);
	buf_put(b, data, len);
	buf_putc(b, ';');
	return 0;
}

static void test_tarzst_round_trip_and_caps(void **state)
{
	tarzst_member m[] = {{"manifest.json", "{}", 2}, {"proc/loadavg", "1 2 3", 5},
			     {"empty", "", 0}};
	buf a = BUF_INIT, seen = BUF_INIT;
	pr_error e = PR_ERROR_INIT;
	char dir[4200], path[4300];
	FILE *f;
	char got[16] = "";

	(void)state;
	assert_int_equal(tarzst_write(&a, m, 3, 1700000000, 1 << 20, NULL), 0);
	/* zstd magic: 28 b5 2f fd */
	assert_int_equal((unsigned char)a.ptr[0], 0x28);
	assert_int_equal((unsigned char)a.ptr[3], 0xfd);
	assert_int_equal(tarzst_read(a.ptr, a.len, "a", 1 << 20, 1 << 20, collect, &seen, NULL),
			 0);
	assert_string_equal(seen.ptr, "manifest.json={};proc/loadavg=1 2 3;empty=;");
	/* Caps: one member, everything, the archive written. */
	assert_int_equal(tarzst_read(a.ptr, a.len, "a", 4, 1 << 20, collect, &seen, &e),
			 PR_ELIMIT);
	assert_non_null(strstr(e.msg, "'proc/loadavg' is larger than 4 bytes"));
	assert_int_equal(tarzst_read(a.ptr, a.len, "a", 100, 6, collect, &seen, NULL), PR_ELIMIT);
	assert_int_equal(tarzst_write(&seen, m, 3, 0, 64, NULL), PR_ELIMIT);
	/* Names that are not plain are not written. */
	m[1].path = "../x";
	assert_int_equal(tarzst_write(&seen, m, 3, 0, 1 << 20, NULL), PR_EUSAGE);
	/* Extract into a new folder, never into one that exists. */
	snprintf(dir, sizeof(dir), "%s/out", tmpdir);
	assert_int_equal(tarzst_extract(a.ptr, a.len, "a", dir, 1 << 20, 1 << 20, NULL), 0);
	snprintf(path, sizeof(path), "%s/proc/loadavg", dir);
	assert_non_null(f = fopen(path, "r"));
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	assert_string_equal(got, "1 2 3");
	assert_int_equal(tarzst_extract(a.ptr, a.len, "a", dir, 1 << 20, 1 << 20, &e), PR_EEXISTS);
	buf_release(&a);
	buf_release(&seen);
}

/* An archive made by libarchive with whatever it is told: the hostile inputs. */
static void hostile(buf *out, const char *filter, const char *name, int type, size_t size,
		    const char *link)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	static char data[1 << 16];
	size_t used = 0;

	buf_release(out);
	assert_int_equal(buf_grow(out, 64 << 20), 0);
	archive_write_set_format_pax_restricted(a);
	if (strcmp(filter, "zstd") == 0)
		archive_write_add_filter_zstd(a);
	else if (strcmp(filter, "gzip") == 0)
		archive_write_add_filter_gzip(a);
	assert_int_equal(archive_write_open_memory(a, out->ptr, 64 << 20, &used), ARCHIVE_OK);
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, (unsigned)type);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, type == AE_IFREG ? (la_int64_t)size : 0);
	if (link)
		archive_entry_set_symlink(e, link);
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	for (size_t done = 0; type == AE_IFREG && done < size;) {
		size_t k = size - done < sizeof(data) ? size - done : sizeof(data);
		assert_int_equal(archive_write_data(a, data, k), (la_ssize_t)k);
		done += k;
	}
	archive_write_close(a);
	archive_write_free(a);
	archive_entry_free(e);
	out->len = used;
}

static void test_tarzst_refuses_hostile_archives(void **state)
{
	buf a = BUF_INIT, seen = BUF_INIT;
	pr_error e = PR_ERROR_INIT;
	tarzst_member m[] = {{"manifest.json", "{\"x\": 1}", 8}};

	(void)state;
	hostile(&a, "zstd", "../../etc/cron.d/x", AE_IFREG, 4, NULL);
	assert_int_equal(tarzst_read(a.ptr, a.len, "h", 1 << 20, 1 << 20, collect, &seen, &e),
			 PR_EDATA);
	assert_non_null(strstr(e.msg, "not a plain relative name"));
	pr_error_clear(&e);
	hostile(&a, "zstd", "/etc/x", AE_IFREG, 4, NULL);
	assert_int_equal(tarzst_read(a.ptr, a.len, "h", 1 << 20, 1 << 20, collect, &seen, NULL),
			 PR_EDATA);
	hostile(&a, "zstd", "link", AE_IFLNK, 0, "/etc/passwd");
	assert_int_equal(tarzst_read(a.ptr, a.len, "h", 1 << 20, 1 << 20, collect, &seen, &e),
			 PR_EDATA);
	assert_non_null(strstr(e.msg, "not a regular file"));
	pr_error_clear(&e);
	/*
	 * Whoever wrote the archive chose its names: one that may hold a
	 * secret or a card number is given by its length, as any input is.
	 */
	hostile(&a, "zstd", "../password hunter2 4111111111111111", AE_IFREG, 4, NULL);
	assert_int_equal(tarzst_read(a.ptr, a.len, "h", 1 << 20, 1 << 20, collect, &seen, &e),
			 PR_EDATA);
	assert_string_equal(e.msg, "cannot read 'h': member name '../password <24 bytes>' is not "
				   "a plain relative name");
	pr_error_clear(&e);
	hostile(&a, "zstd", "token=4111111111111111", AE_IFLNK, 0, "/etc/passwd");
	assert_int_equal(tarzst_read(a.ptr, a.len, "h", 1 << 20, 1 << 20, collect, &seen, &e),
			 PR_EDATA);
	assert_string_equal(e.msg, "cannot read 'h': member '<22 bytes>' is not a regular file "
				   "or a folder");
	pr_error_clear(&e);
	hostile(&a, "zstd", "card/4111111111111111", AE_IFREG, 64, NULL);
	assert_int_equal(tarzst_read(a.ptr, a.len, "h", 8, 1 << 20, collect, &seen, &e), PR_ELIMIT);
	assert_string_equal(e.msg, "cannot read 'h': member '<21 bytes>' is larger than 8 bytes");
	pr_error_clear(&e);
	/* Not zstd: gzip, or no compression at all. */
	hostile(&a, "gzip", "manifest.json", AE_IFREG, 4, NULL);
	assert_int_equal(tarzst_read(a.ptr, a.len, "h", 1 << 20, 1 << 20, collect, &seen, &e),
			 PR_EDATA);
	assert_non_null(strstr(e.msg, "tar.zst"));
	hostile(&a, "none", "manifest.json", AE_IFREG, 4, NULL);
	assert_int_equal(tarzst_read(a.ptr, a.len, "h", 1 << 20, 1 << 20, collect, &seen, NULL),
			 PR_EDATA);
	/* A bomb: 48 MiB of zeros in a few KiB; the total cap stops it. */
	hostile(&a, "zstd", "bomb", AE_IFREG, 48 << 20, NULL);
	assert_true(a.len < 64 * 1024);
	assert_int_equal(tarzst_read(a.ptr, a.len, "h", 1 << 30, 1 << 20, collect, &seen, &e),
			 PR_ELIMIT);
	/* Garbage, empty, truncated. */
	assert_int_equal(tarzst_read("garbage!", 8, "h", 100, 100, collect, &seen, NULL), PR_EDATA);
	assert_int_equal(tarzst_read("", 0, "h", 100, 100, collect, &seen, NULL), PR_EDATA);
	assert_int_equal(tarzst_write(&a, m, 1, 0, 1 << 20, NULL), 0);
	buf_reset(&seen);
	assert_int_equal(tarzst_read(a.ptr, a.len / 2, "cut.tar.zst", 100, 100, collect, &seen,
				     &e), PR_EDATA);
	buf_release(&a);
	buf_release(&seen);
}

/* Two members of one name, or a file with members below it: extracted, one would clobber. */
static void test_tarzst_refuses_a_name_given_twice(void **state)
{
	tarzst_member twice[] = {{"manifest.json", "{}", 2}, {"a", "first", 5},
				 {"a", "second", 6}};
	tarzst_member below[] = {{"manifest.json", "{}", 2}, {"x", "file", 4},
				 {"x/y", "below a file", 12}};
	tarzst_member above[] = {{"manifest.json", "{}", 2}, {"x/y", "in a folder", 11},
				 {"x", "file", 4}};
	tarzst_member fine[] = {{"manifest.json", "{}", 2}, {"x/y", "1", 1}, {"x/z", "2", 1}};
	buf a = BUF_INIT, seen = BUF_INIT;
	pr_error e = PR_ERROR_INIT;

	(void)state;
	assert_int_equal(tarzst_write(&a, twice, 3, 0, 1 << 20, NULL), 0);
	assert_int_equal(tarzst_read(a.ptr, a.len, "t.tar.zst", 100, 1000, collect, &seen, &e),
			 PR_EDATA);
	assert_string_equal(e.msg, "cannot read 't.tar.zst': member 'a' appears twice");
	pr_error_clear(&e);
	assert_int_equal(tarzst_write(&a, below, 3, 0, 1 << 20, NULL), 0);
	assert_int_equal(tarzst_read(a.ptr, a.len, "b.tar.zst", 100, 1000, collect, &seen, &e),
			 PR_EDATA);
	assert_string_equal(e.msg, "cannot read 'b.tar.zst': member 'x/y' is below the file 'x'");
	pr_error_clear(&e);
	assert_int_equal(tarzst_write(&a, above, 3, 0, 1 << 20, NULL), 0);
	assert_int_equal(tarzst_read(a.ptr, a.len, "f.tar.zst", 100, 1000, collect, &seen, &e),
			 PR_EDATA);
	assert_non_null(strstr(e.msg, "member 'x' appears twice (as a file and a folder)"));
	pr_error_clear(&e);
	/* Files side by side in one folder are fine. */
	assert_int_equal(tarzst_write(&a, fine, 3, 0, 1 << 20, NULL), 0);
	buf_reset(&seen);
	assert_int_equal(tarzst_read(a.ptr, a.len, "ok", 100, 1000, collect, &seen, NULL), 0);
	assert_string_equal(seen.ptr, "manifest.json={};x/y=1;x/z=2;");
	buf_release(&a);
	buf_release(&seen);
}

/* An extract that fails part way takes back the folder it made: nothing half-written. */
static void test_tarzst_extract_leaves_nothing_when_it_fails(void **state)
{
	tarzst_member twice[] = {{"manifest.json", "{}", 2}, {"a", "first", 5},
				 {"a", "second", 6}};
	tarzst_member big[] = {{"manifest.json", "{}", 2}, {"proc/x", "1", 1},
			       {"proc/big", "0123456789", 10}};
	buf a = BUF_INIT;
	pr_error e = PR_ERROR_INIT;
	char dir[4200];
	struct stat st;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/twice", tmpdir);
	assert_int_equal(tarzst_write(&a, twice, 3, 0, 1 << 20, NULL), 0);
	assert_int_equal(tarzst_extract(a.ptr, a.len, "t", dir, 100, 1000, &e), PR_EDATA);
	assert_non_null(strstr(e.msg, "'a' appears twice"));
	assert_int_equal(lstat(dir, &st), -1);
	pr_error_clear(&e);
	/* Over the member cap after two members were written. */
	snprintf(dir, sizeof(dir), "%s/big", tmpdir);
	assert_int_equal(tarzst_write(&a, big, 3, 0, 1 << 20, NULL), 0);
	assert_int_equal(tarzst_extract(a.ptr, a.len, "b", dir, 4, 1000, &e), PR_ELIMIT);
	assert_int_equal(lstat(dir, &st), -1);
	pr_error_clear(&e);
	/* Truncated, and not an archive at all. */
	snprintf(dir, sizeof(dir), "%s/cut", tmpdir);
	assert_int_equal(tarzst_extract(a.ptr, a.len / 2, "c", dir, 100, 1000, NULL), PR_EDATA);
	assert_int_equal(lstat(dir, &st), -1);
	assert_int_equal(tarzst_extract("garbage!", 8, "g", dir, 100, 1000, NULL), PR_EDATA);
	assert_int_equal(lstat(dir, &st), -1);
	buf_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_parses_a_real_line),
		cmocka_unit_test(test_stat_takes_a_hostile_comm_whole),
		cmocka_unit_test(test_stat_takes_the_int64_range_of_negative_fields),
		cmocka_unit_test(test_stat_refuses_malformed_lines),
		cmocka_unit_test(test_pressure_parses_and_refuses),
		cmocka_unit_test(test_kv_reads_meminfo_vmstat_and_stat),
		cmocka_unit_test(test_cmdline_keeps_the_name_and_count),
		cmocka_unit_test(test_clean_escapes_controls_and_bad_utf8),
		cmocka_unit_test(test_cgroup_paths_and_mounts),
		cmocka_unit_test_setup_teardown(test_read_caps_and_refuses_what_is_not_a_plain_file,
						setup, teardown),
		cmocka_unit_test(test_read_refuses_links_of_the_real_proc),
		cmocka_unit_test_setup_teardown(test_list_and_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kmsg_tail_keeps_whole_records, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_kmsg_tail_stops_at_its_deadline_on_a_huge_log,
						setup, teardown),
		cmocka_unit_test(test_kmsg_tail_of_the_real_log),
		cmocka_unit_test(test_bpf_lists_a_program_we_loaded),
		cmocka_unit_test(test_bpf_list_is_refused_without_privileges),
		cmocka_unit_test_setup_teardown(test_tarzst_round_trip_and_caps, setup, teardown),
		cmocka_unit_test(test_tarzst_refuses_a_name_given_twice),
		cmocka_unit_test_setup_teardown(test_tarzst_extract_leaves_nothing_when_it_fails,
						setup, teardown),
		cmocka_unit_test(test_tarzst_refuses_hostile_archives),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
