/*
 * procfs.h: bounded, symlink-safe readers of /proc and the kernel's other
 * interfaces (/dev/kmsg, cgroup pressure files, the bpf(2) program list),
 * and parsers of what they hold.
 *
 * Everything here reads; nothing writes. Every read has a byte cap, and
 * every loop that could run long (a directory of 100,000 descriptors, a
 * kernel log that never ends) takes a deadline on the monotonic clock
 * (time_mono() seconds; 0: none). A path is always resolved beneath a
 * directory descriptor the caller opened (procfs_dir_open), without
 * following any symbolic link and without leaving that directory
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS; one component at a time
 * with O_NOFOLLOW where the kernel lacks openat2), so a process cannot
 * point a reader at a file outside /proc by renaming itself, and /proc's
 * own links (self, cwd, exe, root, fd/N) are never followed.
 *
 * Why a read failed matters to the caller, which records it: ENOENT and
 * ESRCH (the file is not there, the process is gone) are PR_ENOTFOUND,
 * EACCES and EPERM (no permission) PR_EREFUSED, a limit PR_ELIMIT,
 * anything else PR_EIO; *errnum (where a function has it) is the errno.
 *
 * Names from /proc (a thread's comm, an executable's name) are chosen by
 * the processes themselves: procfs_clean turns them into text safe for
 * JSON and terminals.
 */
#ifndef PR_PROCFS_H
#define PR_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"

/*
 * Open directory `path` beneath `dirfd` (AT_FDCWD and an absolute path
 * for a root such as "/proc"; "." for `dirfd` itself) for reading,
 * without following symbolic links. *out is the caller's to close(2).
 */
int procfs_dir_open(int *out, int dirfd, const char *path, int *errnum, pr_error *err);

/*
 * Read file `path` beneath `dirfd` into `out` (emptied first, its memory
 * kept for the next read), at most
 * `cap` bytes; *truncated (may be NULL) tells whether more was there. Only
 * a regular file is read (every /proc file is one); a directory, FIFO,
 * socket or device is PR_EREFUSED. Interrupted reads are retried.
 */
int procfs_read(buf *out, int dirfd, const char *path, size_t cap, bool *truncated,
		int *errnum, pr_error *err);

/*
 * The numeric entries of directory `path` beneath `dirfd` (the pids of
 * /proc, the tids of /proc/PID/task), at most `max` (then *complete is
 * false), in directory order. *out is a new array the caller frees
 * (NULL when none).
 */
int procfs_list_ids(int **out, size_t *n, int dirfd, const char *path, size_t max,
		    bool *complete, int *errnum, pr_error *err);

/*
 * procfs_list_ids that also stops at `deadline` (0: none; *complete
 * false): a process's task folder may hold tens of thousands of threads.
 */
int procfs_list_ids_until(int **out, size_t *n, int dirfd, const char *path, size_t max,
			  double deadline, bool *complete, int *errnum, pr_error *err);

/*
 * Count the entries of directory `path` (not "." and ".."), stopping at
 * `max` or at `deadline` (*complete false). For /proc/PID/fd: each entry
 * is a descriptor, counted and never followed.
 */
int procfs_count_entries(uint64_t *out, int dirfd, const char *path, uint64_t max,
			 double deadline, bool *complete, int *errnum, pr_error *err);

/* One line of /proc/PID/stat or /proc/PID/task/TID/stat. */
#define PROCFS_COMM_MAX 64
typedef struct procfs_stat {
	int pid;
	char comm[PROCFS_COMM_MAX + 1]; /* raw bytes, NUL-terminated (cut at 64) */
	char state;                     /* R, S, D, Z, T, t, X, I, ... */
	int ppid;
	uint64_t utime, stime;          /* clock ticks */
	int64_t nice;
	int64_t num_threads;
	uint64_t starttime;             /* ticks after boot: with pid, names a task */
	uint64_t vsize;                 /* bytes */
	int64_t rss;                    /* pages */
	int processor;                  /* -1: not given */
	uint64_t blkio_ticks;           /* delayacct_blkio_ticks; 0 when not given */
} procfs_stat;

/*
 * Parse a stat line. The comm sits between the first '(' and the last
 * ')' and may hold anything, spaces, parentheses and newlines included.
 * A line without the fields up to rss, or with a field that is not a
 * number, is PR_EDATA with the reason.
 */
int procfs_stat_parse(procfs_stat *out, const char *text, size_t len, pr_error *err);

/* A pressure file (/proc/pressure/cpu, a cgroup's cpu.pressure). */
typedef struct procfs_psi_line {
	bool present;
	double avg10, avg60, avg300; /* percent of time stalled */
	uint64_t total_us;           /* stalled time since boot */
} procfs_psi_line;

typedef struct procfs_psi {
	procfs_psi_line some, full;
} procfs_psi;

/* Parse "some avg10=... total=N" and "full ..." lines; PR_EDATA on anything else. */
int procfs_psi_parse(procfs_psi *out, const char *text, size_t len, pr_error *err);

/*
 * Lines of "name value..." (/proc/vmstat, /proc/stat, /proc/meminfo,
 * whose names end in ':' and values may carry "kB"): the name and its
 * first PROCFS_KV_VALUES integers. Lines that hold no number are left
 * out; at most `max` lines are kept.
 */
#define PROCFS_KV_VALUES 10
#define PROCFS_KV_NAME_MAX 63
typedef struct procfs_kv {
	char name[PROCFS_KV_NAME_MAX + 1];
	int64_t v[PROCFS_KV_VALUES];
	int nv;
} procfs_kv;

/* *out is a new array the caller frees (NULL when none). */
int procfs_kv_parse(procfs_kv **out, size_t *n, const char *text, size_t len, size_t max,
		    pr_error *err);

/* The line named `name`, or NULL. */
const procfs_kv *procfs_kv_find(const procfs_kv *kv, size_t n, const char *name);

/*
 * A /proc/PID/cmdline: how many arguments it holds and the file name
 * (after the last '/') of the first, cut to `name_max` bytes, into
 * `name` (which gets "" for an empty command line, as kernel threads
 * have). A process may have rewritten its command line; what it says is
 * taken as it is.
 */
void procfs_cmdline_parse(char *name, size_t name_max, size_t *argc, const char *text,
			  size_t len);

/*
 * The file name (after the last '/') of the executable of process `pid`,
 * read from the link /proc/PID/exe beneath `procfd` without following it,
 * into `name` (cut to `name_max` bytes; " (deleted)" stays when the file
 * is gone). Needs ptrace read access (the same user, or
 * CAP_SYS_PTRACE): PR_EREFUSED otherwise; a kernel thread has none
 * (PR_ENOTFOUND).
 */
int procfs_exe_name(char *name, size_t name_max, int procfd, int pid, pr_error *err);

/*
 * Append `len` bytes to `out` in a form safe for JSON and terminals:
 * valid UTF-8 stays as it is, except control characters, which become
 * "\xNN", as does every byte that is not valid UTF-8.
 */
int procfs_clean(buf *out, const char *s, size_t len);

/*
 * The cgroup v2 path of a process from its /proc/PID/cgroup text (the
 * "0::/path" line), into `out` (released first). PR_ENOTFOUND when the
 * process is in no v2 hierarchy.
 */
int procfs_cgroup2_path(buf *out, const char *text, size_t len, pr_error *err);

/*
 * Where the cgroup v2 hierarchy is mounted, from a mountinfo text
 * (/proc/PID/mountinfo), octal escapes undone. PR_ENOTFOUND when it is
 * not mounted.
 */
int procfs_cgroup2_mount(buf *out, const char *text, size_t len, pr_error *err);

/*
 * The tail of the kernel log. Reads the records of `path` (/dev/kmsg:
 * one record a read, "prio,seq,usec,flags;text" and continuation lines
 * that start with a space) from the oldest the kernel still holds, and
 * keeps the last `keep` bytes of whole records. Stops at the end of the
 * log (nothing more to read now) or at `deadline`, whichever comes first,
 * so a log that grows faster than it can be read still ends. Records the
 * kernel overwrote while they were read are counted, not fatal. Opening
 * needs CAP_SYSLOG when kernel.dmesg_restrict is 1 (PR_EREFUSED).
 */
typedef struct procfs_kmsg_info {
	uint64_t records;      /* records (or, for a plain stream, lines) read */
	uint64_t bytes;        /* bytes read */
	uint64_t lost;         /* records overwritten before they could be read */
	bool complete;         /* reached the end before the deadline */
} procfs_kmsg_info;

int procfs_kmsg_tail(buf *out, procfs_kmsg_info *info, const char *path, size_t keep,
		     double deadline, int *errnum, pr_error *err);

/* A loaded BPF program, as bpf(BPF_OBJ_GET_INFO_BY_FD) describes it. */
typedef struct procfs_bpf_prog {
	uint32_t id;
	char type[48];          /* "kprobe", "tracing", ...; "type N" when libbpf has no name */
	char name[17];          /* raw bytes as the loader named it */
	char tag[17];           /* 16 hex digits */
	uint64_t run_time_ns;   /* 0 unless kernel.bpf_stats_enabled */
	uint64_t run_cnt;
	uint64_t recursion_misses;
	uint64_t load_time_ns;  /* since boot */
	uint32_t uid;           /* who loaded it */
	uint32_t nr_map_ids;
	uint32_t verified_insns;
} procfs_bpf_prog;

/*
 * List the loaded BPF programs through libbpf, at most `max` (then
 * *complete is false, as when the deadline passes). Needs CAP_SYS_ADMIN:
 * PR_EREFUSED without; PR_ENOTFOUND when the kernel has no bpf(2). A
 * program unloaded while the list is read is skipped. *out is a new
 * array the caller frees (NULL when none).
 */
int procfs_bpf_progs(procfs_bpf_prog **out, size_t *n, size_t max, double deadline,
		     bool *complete, int *errnum, pr_error *err);

/*
 * The effective capabilities of the calling thread (capget(2)) as a
 * bitmask of CAP_* bit numbers.
 */
int procfs_caps(uint64_t *out, pr_error *err);

#endif
