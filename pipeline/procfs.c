/*
 * procfs.c: bounded, symlink-safe readers of /proc and the kernel's other
 * interfaces (see procfs.h).
 */
#define _GNU_SOURCE
#include "pipeline/procfs.h"
#include "common/timeutil.h"
#include "common/utf8.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A kmsg record is at most 8 KiB (CONSOLE_EXT_LOG_MAX); a plain stream reads in chunks. */
#define KMSG_READ 16384

/* 0: openat2 not tried yet, 1: works, -1: the kernel lacks it. */
static atomic_int have_openat2;

static int code_of(int e)
{
	switch (e) {
	case ENOENT:
	case ESRCH:
	case ENOTDIR:
		return PR_ENOTFOUND;
	case EACCES:
	case EPERM:
	case ELOOP:
	case EXDEV:
		return PR_EREFUSED;
	case ENOMEM:
		return PR_ENOMEM;
	default:
		return PR_EIO;
	}
}

static int fail(pr_error *err, int *errnum, int e, const char *what, const char *path)
{
	if (errnum)
		*errnum = e;
	if (e == ELOOP || e == EXDEV)
		return pr_error_set(err, PR_EREFUSED,
				    "cannot %s '%s': a symbolic link or a path out of its folder, "
				    "which is not followed", what, path);
	return pr_error_set(err, code_of(e), "cannot %s '%s': %s", what, path, strerror(e));
}

/* A path with an empty, "." or ".." component, or a leading '/', is never meant. */
static bool path_plain(const char *path)
{
	const char *p = path;

	if (!*path || *path == '/')
		return false;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}

/* One component at a time, never through a link: where openat2 is missing. */
static int open_walk(int dirfd, const char *path, int flags)
{
	char comp[256];
	const char *p = path;
	int fd = dirfd, next;

	for (;;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n >= sizeof(comp)) {
			if (fd != dirfd)
				close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (!e) {
			next = openat(fd, comp, flags | O_NOFOLLOW | O_CLOEXEC);
		} else {
			next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (fd != dirfd) {
			int keep = errno;
			close(fd);
			errno = keep;
		}
		if (next < 0 || !e)
			return next;
		fd = next;
		p = e + 1;
	}
}

/* Open `path` beneath `dirfd`, or an absolute root when dirfd is AT_FDCWD. */
static int open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how;
	int fd;

	if (dirfd == AT_FDCWD) /* a root the caller named: its last component is not followed */
		return open(path, flags | O_NOFOLLOW | O_CLOEXEC);
	if (strcmp(path, ".") == 0) /* the folder itself */
		return openat(dirfd, ".", flags | O_CLOEXEC);
	if (!path_plain(path)) {
		errno = EXDEV;
		return -1;
	}
	if (atomic_load(&have_openat2) >= 0) {
		memset(&how, 0, sizeof(how));
		how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
		how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != E2BIG)) {
			atomic_store(&have_openat2, 1);
			return fd;
		}
		atomic_store(&have_openat2, -1);
	}
	return open_walk(dirfd, path, flags);
}

int procfs_dir_open(int *out, int dirfd, const char *path, int *errnum, pr_error *err)
{
	int fd = open_beneath(dirfd, path, O_RDONLY | O_DIRECTORY);

	*out = -1;
	if (fd < 0)
		return fail(err, errnum, errno, "open folder", path);
	*out = fd;
	return 0;
}

int procfs_read(buf *out, int dirfd, const char *path, size_t cap, bool *truncated,
		int *errnum, pr_error *err)
{
	struct stat st;
	size_t want;
	int fd, rc = 0;

	buf_reset(out);
	if (truncated)
		*truncated = false;
	if ((fd = open_beneath(dirfd, path, O_RDONLY | O_NONBLOCK)) < 0)
		return fail(err, errnum, errno, "read", path);
	if (fstat(fd, &st) < 0) {
		rc = fail(err, errnum, errno, "read", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		if (errnum)
			*errnum = EINVAL;
		rc = pr_error_set(err, PR_EREFUSED, "cannot read '%s': not a regular file", path);
		goto out;
	}
	/* One byte past the cap tells a file that is exactly `cap` long from a longer one. */
	want = cap < SIZE_MAX ? cap + 1 : cap;
	while (out->len < want) {
		size_t chunk = want - out->len < 65536 ? want - out->len : 65536;
		ssize_t r;
		if (buf_grow(out, chunk) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "cannot read '%s': out of memory", path);
			goto out;
		}
		r = read(fd, out->ptr + out->len, chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = fail(err, errnum, errno, "read", path);
			goto out;
		}
		if (r == 0)
			break;
		out->len += (size_t)r;
		out->ptr[out->len] = '\0';
	}
	if (out->len > cap) {
		out->len = cap;
		out->ptr[cap] = '\0';
		if (truncated)
			*truncated = true;
	}
out:
	close(fd);
	if (rc < 0)
		buf_reset(out);
	return rc;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int procfs_list_ids(int **out, size_t *n, int dirfd, const char *path, size_t max,
		    bool *complete, int *errnum, pr_error *err)
{
	return procfs_list_ids_until(out, n, dirfd, path, max, 0, complete, errnum, err);
}

int procfs_list_ids_until(int **out, size_t *n, int dirfd, const char *path, size_t max,
			  double deadline, bool *complete, int *errnum, pr_error *err)
{
	DIR *dir = NULL;
	struct dirent *e;
	size_t cap = 0, seen = 0;
	int fd, rc = 0;

	*out = NULL;
	*n = 0;
	*complete = true;
	if ((rc = procfs_dir_open(&fd, dirfd, path, errnum, err)) < 0)
		return rc;
	if (!(dir = fdopendir(fd))) {
		rc = fail(err, errnum, errno, "list", path);
		close(fd);
		return rc;
	}
	for (;;) {
		long v;
		errno = 0;
		if (!(e = readdir(dir))) {
			if (errno)
				rc = fail(err, errnum, errno, "list", path);
			break;
		}
		if (deadline > 0 && (++seen & 63) == 0 && time_mono() > deadline) {
			*complete = false;
			break;
		}
		if (!all_digits(e->d_name) || strlen(e->d_name) > 9)
			continue;
		if (*n == max) {
			*complete = false;
			break;
		}
		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			int *grown = realloc(*out, ncap * sizeof(**out));
			if (!grown) {
				rc = pr_error_set(err, PR_ENOMEM, "cannot list '%s': out of memory",
						  path);
				break;
			}
			*out = grown;
			cap = ncap;
		}
		v = strtol(e->d_name, NULL, 10);
		(*out)[(*n)++] = (int)v;
	}
	closedir(dir);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int procfs_count_entries(uint64_t *out, int dirfd, const char *path, uint64_t max,
			 double deadline, bool *complete, int *errnum, pr_error *err)
{
	DIR *dir;
	struct dirent *e;
	int fd, rc;

	*out = 0;
	*complete = true;
	if ((rc = procfs_dir_open(&fd, dirfd, path, errnum, err)) < 0)
		return rc;
	if (!(dir = fdopendir(fd))) {
		rc = fail(err, errnum, errno, "list", path);
		close(fd);
		return rc;
	}
	for (;;) {
		errno = 0;
		if (!(e = readdir(dir))) {
			if (errno)
				rc = fail(err, errnum, errno, "list", path);
			break;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (*out == max ||
		    (deadline > 0 && (*out & 1023) == 1023 && time_mono() > deadline)) {
			*complete = false;
			break;
		}
		(*out)++;
	}
	closedir(dir);
	return rc;
}

/* ---- parsers ------------------------------------------------------------ */

static int num_u64(uint64_t *out, const char **p, const char *end)
{
	uint64_t v = 0;
	const char *s = *p;

	if (s >= end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (v > UINT64_MAX / 10 || (v == UINT64_MAX / 10 && d > UINT64_MAX % 10))
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	*p = s;
	return 0;
}

static int num_i64(int64_t *out, const char **p, const char *end)
{
	bool neg = *p < end && **p == '-';
	uint64_t v;

	if (neg)
		(*p)++;
	if (num_u64(&v, p, end) < 0 || v > (uint64_t)INT64_MAX)
		return -1;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

int procfs_stat_parse(procfs_stat *out, const char *text, size_t len, pr_error *err)
{
	const char *end = text + len, *open = memchr(text, '(', len), *close = NULL, *p;
	uint64_t f[52];
	int nf = 0;
	size_t clen;

	memset(out, 0, sizeof(*out));
	out->processor = -1;
	for (p = open ? open : end; p < end; p++)
		if (*p == ')')
			close = p;
	if (!open || !close)
		return pr_error_set(err, PR_EDATA, "stat line has no '(comm)'");
	p = text;
	{
		int64_t pid;
		if (num_i64(&pid, &p, open) < 0 || pid <= 0 || pid > INT32_MAX || *p != ' ')
			return pr_error_set(err, PR_EDATA, "stat line does not start with a pid");
		out->pid = (int)pid;
	}
	clen = (size_t)(close - open - 1);
	if (clen > PROCFS_COMM_MAX)
		clen = PROCFS_COMM_MAX;
	memcpy(out->comm, open + 1, clen);
	out->comm[clen] = '\0';
	p = close + 1;
	if (p + 2 >= end || p[0] != ' ' || p[2] != ' ')
		return pr_error_set(err, PR_EDATA, "stat line has no state after the comm");
	out->state = p[1];
	p += 3;
	/* Fields 4 onwards, numbered as proc(5) numbers them; f[k] is field k + 4. */
	/* Unsigned fields (rsslim, addresses) use all 64 bits; nice and priority go negative. */
	while (p < end && *p != '\n' && nf < (int)(sizeof(f) / sizeof(f[0]))) {
		bool neg = *p == '-';
		p += neg;
		if (num_u64(&f[nf], &p, end) < 0)
			return pr_error_set(err, PR_EDATA, "stat field %d is not a number", nf + 4);
		/* A negative field fits int64_t; negated unsigned (-INT64_MIN is undefined). */
		if (neg && f[nf] > (uint64_t)INT64_MAX + 1)
			return pr_error_set(err, PR_EDATA, "stat field %d is below the int64 range",
					    nf + 4);
		if (neg)
			f[nf] = 0 - f[nf];
		nf++;
		if (p < end && *p == ' ')
			p++;
		else
			break;
	}
	if (nf < 21) /* up to field 24, rss */
		return pr_error_set(err, PR_EDATA, "stat line has %d fields, fewer than 24",
				    nf + 3);
	out->ppid = (int)f[0];
	out->utime = f[10];
	out->stime = f[11];
	out->nice = (int64_t)f[15];
	out->num_threads = (int64_t)f[16];
	out->starttime = f[18];
	out->vsize = f[19];
	out->rss = (int64_t)f[20];
	if (nf > 35)
		out->processor = (int)f[35];
	if (nf > 38)
		out->blkio_ticks = f[38];
	return 0;
}

/* "avg10=1.23": the number after `key=`. */
static int psi_field(double *out, const char *text, const char *key)
{
	const char *p = strstr(text, key);
	char *e;

	if (!p)
		return -1;
	p += strlen(key);
	errno = 0;
	*out = strtod(p, &e);
	return e == p || errno ? -1 : 0;
}

int procfs_psi_parse(procfs_psi *out, const char *text, size_t len, pr_error *err)
{
	const char *p = text, *end = text + len;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[256];
		procfs_psi_line *l;
		const char *t;

		if (n == 0) {
			p += 1;
			continue;
		}
		if (n >= sizeof(line))
			return pr_error_set(err, PR_EDATA, "pressure line longer than %zu bytes",
					    sizeof(line) - 1);
		memcpy(line, p, n);
		line[n] = '\0';
		if (strncmp(line, "some ", 5) == 0)
			l = &out->some;
		else if (strncmp(line, "full ", 5) == 0)
			l = &out->full;
		else
			return pr_error_set(err, PR_EDATA, "pressure line starts with neither "
					    "'some' nor 'full'");
		if (psi_field(&l->avg10, line, "avg10=") < 0 ||
		    psi_field(&l->avg60, line, "avg60=") < 0 ||
		    psi_field(&l->avg300, line, "avg300=") < 0 ||
		    !(t = strstr(line, "total=")))
			return pr_error_set(err, PR_EDATA, "pressure line lacks avg10, avg60, "
					    "avg300 or total");
		t += 6;
		if (num_u64(&l->total_us, &t, line + n) < 0)
			return pr_error_set(err, PR_EDATA, "pressure total is not a number");
		l->present = true;
		p += n + (nl ? 1 : 0);
	}
	if (!out->some.present)
		return pr_error_set(err, PR_EDATA, "pressure file has no 'some' line");
	return 0;
}

int procfs_kv_parse(procfs_kv **out, size_t *n, const char *text, size_t len, size_t max,
		    pr_error *err)
{
	const char *p = text, *end = text + len;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	while (p < end && *n < max) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p;
		procfs_kv kv;
		size_t nn;

		memset(&kv, 0, sizeof(kv));
		while (q < le && *q != ' ' && *q != '\t' && *q != ':')
			q++;
		nn = (size_t)(q - p);
		if (nn > 0 && nn <= PROCFS_KV_NAME_MAX) {
			memcpy(kv.name, p, nn);
			if (q < le && *q == ':')
				q++;
			while (q < le && kv.nv < PROCFS_KV_VALUES) {
				while (q < le && (*q == ' ' || *q == '\t'))
					q++;
				if (q >= le || num_i64(&kv.v[kv.nv], &q, le) < 0)
					break;
				kv.nv++;
			}
		}
		if (kv.nv > 0) {
			if (*n == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				procfs_kv *g = realloc(*out, ncap * sizeof(**out));
				if (!g) {
					free(*out);
					*out = NULL;
					*n = 0;
					return pr_error_set(err, PR_ENOMEM, "out of memory");
				}
				*out = g;
				cap = ncap;
			}
			(*out)[(*n)++] = kv;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

const procfs_kv *procfs_kv_find(const procfs_kv *kv, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(kv[i].name, name) == 0)
			return &kv[i];
	return NULL;
}

void procfs_cmdline_parse(char *name, size_t name_max, size_t *argc, const char *text,
			  size_t len)
{
	const char *first_end = memchr(text, '\0', len), *base = text, *s;
	size_t n = first_end ? (size_t)(first_end - text) : len;

	*argc = 0;
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\0')
			(*argc)++;
	if (len && text[len - 1] != '\0')
		(*argc)++; /* a last argument the process left unterminated */
	for (s = text; s < text + n; s++)
		if (*s == '/')
			base = s + 1;
	n -= (size_t)(base - text);
	if (name_max == 0)
		return;
	if (n >= name_max)
		n = name_max - 1;
	memcpy(name, base, n);
	name[n] = '\0';
}

int procfs_clean(buf *out, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	int rc = 0;

	while (i < len && rc == 0) {
		size_t k = utf8_seq_len(u + i, len - i);
		if (k == 0 || (k == 1 && (u[i] < 0x20 || u[i] == 0x7f))) {
			rc = buf_printf(out, "\\x%02x", u[i]);
			i++;
			continue;
		}
		/* C1 controls (U+0080 to U+009F) are controls too. */
		if (k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0) {
			rc = buf_printf(out, "\\x%02x\\x%02x", u[i], u[i + 1]);
			i += 2;
			continue;
		}
		rc = buf_put(out, s + i, k);
		i += k;
	}
	return rc;
}

int procfs_exe_name(char *name, size_t name_max, int procfd, int pid, pr_error *err)
{
	char dir[32], target[4096];
	const char *base;
	ssize_t n;
	int fd;

	if (name_max)
		name[0] = '\0';
	snprintf(dir, sizeof(dir), "%d", pid);
	if ((fd = open_beneath(procfd, dir, O_PATH | O_DIRECTORY)) < 0)
		return fail(err, NULL, errno, "read the executable of", dir);
	n = readlinkat(fd, "exe", target, sizeof(target) - 1);
	if (n < 0) {
		int e = errno;
		close(fd);
		return fail(err, NULL, e, "read the executable of", dir);
	}
	close(fd);
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (name_max)
		snprintf(name, name_max, "%s", base);
	return 0;
}

int procfs_cgroup2_path(buf *out, const char *text, size_t len, pr_error *err)
{
	const char *p = text, *end = text + len;

	buf_release(out);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le - p >= 3 && memcmp(p, "0::", 3) == 0) {
			if (buf_put(out, p + 3, (size_t)(le - p - 3)) < 0)
				return pr_error_set(err, PR_ENOMEM, "out of memory");
			return 0;
		}
		p = nl ? nl + 1 : end;
	}
	return pr_error_set(err, PR_ENOTFOUND, "the process is in no cgroup v2 hierarchy");
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static int unescape_octal(buf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			char c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 +
					(s[i + 3] - '0'));
			if (buf_putc(out, c) < 0)
				return -1;
			i += 3;
		} else if (buf_putc(out, s[i]) < 0) {
			return -1;
		}
	}
	return 0;
}

int procfs_cgroup2_mount(buf *out, const char *text, size_t len, pr_error *err)
{
	const char *p = text, *end = text + len;

	buf_release(out);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *f[5], *q = p, *sep;
		int k = 0;

		/* id parent maj:min root MOUNTPOINT options ... - FSTYPE source super */
		while (k < 5 && q < le) {
			f[k++] = q;
			while (q < le && *q != ' ')
				q++;
			if (q < le)
				q++;
		}
		/* Within this line: the text has `len` bytes and need not end in a NUL. */
		sep = k == 5 ? memmem(q, (size_t)(le - q), " - ", 3) : NULL;
		if (sep && le - sep > 10 && memcmp(sep + 3, "cgroup2 ", 8) == 0) {
			const char *mp = f[4], *me = memchr(mp, ' ', (size_t)(le - mp));
			if (!me)
				me = le;
			if (unescape_octal(out, mp, (size_t)(me - mp)) < 0)
				return pr_error_set(err, PR_ENOMEM, "out of memory");
			return 0;
		}
		p = nl ? nl + 1 : end;
	}
	return pr_error_set(err, PR_ENOTFOUND, "no cgroup v2 hierarchy is mounted");
}

/* ---- the kernel log ----------------------------------------------------- */

/*
 * Cut `b` to its last `keep` bytes, starting at a record: a line that
 * does not start with a space (a continuation of the record before).
 */
static void keep_tail(buf *b, size_t keep)
{
	size_t from, i;

	if (b->len <= keep)
		return;
	from = b->len - keep;
	/* The cut lands inside a line unless the byte before it ends one. */
	if (b->ptr[from - 1] != '\n') {
		char *nl = memchr(b->ptr + from, '\n', b->len - from);
		from = nl ? (size_t)(nl - b->ptr) + 1 : b->len;
	}
	for (i = from; i < b->len && b->ptr[i] == ' ';) {
		char *nl = memchr(b->ptr + i, '\n', b->len - i);
		i = nl ? (size_t)(nl - b->ptr) + 1 : b->len;
	}
	from = i;
	memmove(b->ptr, b->ptr + from, b->len - from);
	b->len -= from;
	b->ptr[b->len] = '\0';
}

int procfs_kmsg_tail(buf *out, procfs_kmsg_info *info, const char *path, size_t keep,
		     double deadline, int *errnum, pr_error *err)
{
	struct stat st;
	char *chunk = NULL;
	bool stream;
	int fd, rc = 0;

	buf_release(out);
	memset(info, 0, sizeof(*info));
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return fail(err, errnum, errno, "read the kernel log", path);
	if (fstat(fd, &st) < 0) {
		rc = fail(err, errnum, errno, "read the kernel log", path);
		goto out;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISREG(st.st_mode)) {
		rc = pr_error_set(err, PR_EREFUSED, "cannot read the kernel log '%s': not a "
				  "character device", path);
		goto out;
	}
	/* /dev/kmsg hands out one record a read; a FIFO or a file is a stream of lines. */
	stream = !S_ISCHR(st.st_mode);
	if (!(chunk = malloc(KMSG_READ))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	for (uint64_t reads = 0;; reads++) {
		ssize_t r;
		if (deadline > 0 && (reads & 63) == 0 && time_mono() > deadline)
			break;
		r = read(fd, chunk, KMSG_READ);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EPIPE) { /* overwritten while we read: go on */
			info->lost++;
			continue;
		}
		if (r < 0 && errno == EAGAIN) {
			info->complete = true;
			break;
		}
		if (r < 0) {
			rc = fail(err, errnum, errno, "read the kernel log", path);
			goto out;
		}
		if (r == 0) {
			info->complete = true;
			break;
		}
		info->bytes += (uint64_t)r;
		if (stream) {
			for (ssize_t i = 0; i < r; i++)
				info->records += chunk[i] == '\n';
		} else {
			info->records++;
		}
		/* Room for two tails, then cut back to one: linear in what is read. */
		if (out->len + (size_t)r > 2 * keep + KMSG_READ)
			keep_tail(out, keep);
		if (buf_put(out, chunk, (size_t)r) < 0 ||
		    (!stream && chunk[r - 1] != '\n' && buf_putc(out, '\n') < 0)) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
	}
	keep_tail(out, keep);
out:
	free(chunk);
	close(fd);
	if (rc < 0)
		buf_release(out);
	return rc;
}

/* ---- BPF programs --------------------------------------------------------- */

int procfs_bpf_progs(procfs_bpf_prog **out, size_t *n, size_t max, double deadline,
		     bool *complete, int *errnum, pr_error *err)
{
	__u32 id = 0;
	size_t cap = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	*complete = true;
	for (;;) {
		struct bpf_prog_info info;
		__u32 ilen = sizeof(info);
		procfs_bpf_prog *p;
		const char *tname;
		int fd, r;

		if ((r = bpf_prog_get_next_id(id, &id)) < 0) {
			int e = r == -1 ? errno : -r;
			if (e == ENOENT)
				break; /* the end of the list */
			if (errnum)
				*errnum = e;
			if (e == ENOSYS || e == EINVAL)
				rc = pr_error_set(err, PR_ENOTFOUND,
						  "cannot list BPF programs: the "
						  "kernel has no bpf(2) (CONFIG_BPF_SYSCALL)");
			else
				rc = pr_error_set(err, code_of(e), "cannot list BPF programs: %s",
						  strerror(e));
			goto out;
		}
		if (*n == max || (deadline > 0 && time_mono() > deadline)) {
			*complete = false;
			break;
		}
		if ((fd = bpf_prog_get_fd_by_id(id)) < 0)
			continue; /* unloaded since, or not ours to open */
		memset(&info, 0, sizeof(info));
		r = bpf_obj_get_info_by_fd(fd, &info, &ilen);
		close(fd);
		if (r < 0)
			continue;
		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			procfs_bpf_prog *g = realloc(*out, ncap * sizeof(**out));
			if (!g) {
				rc = pr_error_set(err, PR_ENOMEM, "out of memory");
				goto out;
			}
			*out = g;
			cap = ncap;
		}
		p = &(*out)[(*n)++];
		memset(p, 0, sizeof(*p));
		p->id = info.id;
		tname = libbpf_bpf_prog_type_str((enum bpf_prog_type)info.type);
		if (tname)
			snprintf(p->type, sizeof(p->type), "%s", tname);
		else
			snprintf(p->type, sizeof(p->type), "type %u", info.type);
		memcpy(p->name, info.name, sizeof(info.name) < 16 ? sizeof(info.name) : 16);
		p->name[16] = '\0';
		for (int i = 0; i < 8; i++)
			snprintf(p->tag + 2 * i, 3, "%02x", info.tag[i]);
		p->run_time_ns = info.run_time_ns;
		p->run_cnt = info.run_cnt;
		p->recursion_misses = info.recursion_misses;
		p->load_time_ns = info.load_time;
		p->uid = info.created_by_uid;
		p->nr_map_ids = info.nr_map_ids;
		p->verified_insns = info.verified_insns;
	}
out:
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int procfs_caps(uint64_t *out, pr_error *err)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	*out = 0;
	if (syscall(SYS_capget, &hdr, data) < 0)
		return pr_error_set(err, PR_EIO, "cannot read the capabilities: %s",
				    strerror(errno));
	*out = (uint64_t)data[0].effective | (uint64_t)data[1].effective << 32;
	return 0;
}
