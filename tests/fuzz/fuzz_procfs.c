/*
 * fuzz_procfs.c: libFuzzer target for the parsers of /proc text that
 * `profreg snapshot` reads (pipeline/procfs.h). The text of /proc is the
 * kernel's, but a process names itself (comm, cmdline) and a container
 * can bind-mount anything over /proc, so none of it is trusted.
 *
 * The first byte chooses the parser; the rest, copied to a buffer of
 * exactly its length with no NUL after it, is the text:
 *
 *   0  procfs_stat_parse: PR_EDATA with a reason, or a pid above 0 and a
 *      comm of at most PROCFS_COMM_MAX bytes;
 *   1  procfs_psi_parse: PR_EDATA with a reason, or a "some" line;
 *   2  procfs_kv_parse (max 32): at most 32 lines, each a name of at most
 *      PROCFS_KV_NAME_MAX bytes with no blank or ':' and 1 to
 *      PROCFS_KV_VALUES values, each findable by its name;
 *   3  procfs_cmdline_parse (names of 16 bytes): a name with no '/', at
 *      most 15 bytes, and at most len + 1 arguments;
 *   4  procfs_clean: valid UTF-8 with no control character;
 *   5  procfs_cgroup2_path and procfs_cgroup2_mount: PR_ENOTFOUND with a
 *      reason, or a path no longer than the text.
 *
 * Seeds (tests/fuzz/corpus/procfs/): the texts of tests/unit/test_procfs.c
 * (a stat line with a 64-bit rsslim, one with a hostile comm, a pressure
 * file, /proc/meminfo and /proc/stat lines, a command line, a cgroup
 * file and a mountinfo with an escaped space), each behind its byte.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(int rc, int code, const pr_error *err)
{
	if (rc != code || err->code != code || !err->msg[0])
		abort();
}

/* Valid UTF-8 (as procfs_clean reads it) without C0, DEL or C1 controls. */
static void check_clean(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		size_t k = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
					 : c >= 0xf0 && c <= 0xf4	      ? 4
									      : 0;
		if (k == 0 || k > n - i || c < 0x20 || c == 0x7f || (c == 0xc2 && s[i + 1] < 0xa0))
			abort();
		for (size_t j = 1; j < k; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				abort();
		i += k;
	}
}

static void stat_line(const char *t, size_t n)
{
	procfs_stat st;
	pr_error err = PR_ERROR_INIT;
	int rc = procfs_stat_parse(&st, t, n, &err);

	if (rc < 0)
		check_failure(rc, PR_EDATA, &err);
	else if (st.pid <= 0 || strlen(st.comm) > PROCFS_COMM_MAX)
		abort();
}

static void pressure(const char *t, size_t n)
{
	procfs_psi p;
	pr_error err = PR_ERROR_INIT;
	int rc = procfs_psi_parse(&p, t, n, &err);

	if (rc < 0)
		check_failure(rc, PR_EDATA, &err);
	else if (!p.some.present)
		abort();
}

static void key_values(const char *t, size_t n)
{
	procfs_kv *kv = NULL;
	size_t nkv = 0;
	pr_error err = PR_ERROR_INIT;

	if (procfs_kv_parse(&kv, &nkv, t, n, 32, &err) < 0)
		abort();
	if (nkv > 32 || (nkv && !kv))
		abort();
	for (size_t i = 0; i < nkv; i++) {
		size_t len = strlen(kv[i].name);
		/* A NUL byte in a name ends it early: "" is a name too. */
		if (len > PROCFS_KV_NAME_MAX || strpbrk(kv[i].name, " \t:") ||
		    kv[i].nv < 1 || kv[i].nv > PROCFS_KV_VALUES)
			abort();
		/* The first line of that name (names may repeat). */
		if (!procfs_kv_find(kv, nkv, kv[i].name))
			abort();
	}
	free(kv);
}

static void cmdline(const char *t, size_t n)
{
	char name[16];
	size_t argc = 99;

	procfs_cmdline_parse(name, sizeof(name), &argc, t, n);
	if (strlen(name) >= sizeof(name) || strchr(name, '/') || argc > n + 1)
		abort();
	if ((n == 0) != (argc == 0))
		abort();
}

static void clean(const char *t, size_t n)
{
	buf b = BUF_INIT;

	if (procfs_clean(&b, t, n) < 0)
		abort();
	check_clean((const unsigned char *)b.ptr, b.len);
	if (b.len < n)
		abort();
	buf_release(&b);
}

static void cgroup(const char *t, size_t n)
{
	buf b = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	int rc = procfs_cgroup2_path(&b, t, n, &err);

	if (rc < 0)
		check_failure(rc, PR_ENOTFOUND, &err);
	else if (b.len > n)
		abort();
	pr_error_clear(&err);
	rc = procfs_cgroup2_mount(&b, t, n, &err);
	if (rc < 0)
		check_failure(rc, PR_ENOTFOUND, &err);
	else if (b.len > n)
		abort();
	buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *t;
	size_t n;

	if (!size)
		return 0;
	n = size - 1;
	/* Exactly n bytes: a parser that reads past its length is caught. */
	if (!(t = malloc(n ? n : 1)))
		return 0;
	memcpy(t, data + 1, n);
	switch (data[0] % 6) {
	case 0: stat_line(t, n); break;
	case 1: pressure(t, n); break;
	case 2: key_values(t, n); break;
	case 3: cmdline(t, n); break;
	case 4: clean(t, n); break;
	default: cgroup(t, n); break;
	}
	free(t);
	return 0;
}
