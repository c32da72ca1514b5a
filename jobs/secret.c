/*
 * secret.c: secrets from the environment or an owner-only file (see
 * secret.h). The file is opened first and checked through its descriptor,
 * so a swap between the check and the read cannot slip another file in.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/secret.h"
#include "common/wipe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0
#endif

void secret_wipe(void *p, size_t n)
{
	wipe_mem(p, n);
}

void secret_free(char *s)
{
	wipe_free(s);
}

static void strip_newline(char *s, size_t *n)
{
	if (*n && s[*n - 1] == '\n')
		s[--*n] = '\0';
	if (*n && s[*n - 1] == '\r')
		s[--*n] = '\0';
}

/*
 * Whether `s` holds a control character (C0, DEL): the secret goes into
 * an HTTP header, where a CR or LF would start a header of its own.
 */
static int has_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
			return 1;
	return 0;
}

static int from_env(char **out, const char *name, pr_error *err)
{
	const char *v = getenv(name);
	size_t n;

	if (!v || !*v)
		return pr_error_set(err, PR_EREFUSED, "secret variable '%.64s' is not set or empty",
				    name);
	n = strlen(v);
	if (n > SECRET_MAX)
		return pr_error_set(err, PR_ELIMIT,
				    "secret variable '%.64s' is longer than %d bytes", name,
				    SECRET_MAX);
	if (!(*out = strdup(v)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	strip_newline(*out, &n);
	if (n == 0 || has_control(*out, n)) {
		secret_free(*out);
		*out = NULL;
		return pr_error_set(err, PR_EDATA, "secret variable '%.64s' %s", name,
				    n == 0 ? "is empty" :
				    "holds a control character (CR, LF, tab or another); a secret "
				    "must be one line of printable text");
	}
	return 0;
}

int secret_file_kind(const char *path, const struct stat *st, pr_error *err)
{
	if (S_ISLNK(st->st_mode))
		return pr_error_set(err, PR_EREFUSED, "secret file '%.256s' is a symbolic link",
				    path);
	if (!S_ISREG(st->st_mode))
		return pr_error_set(err, PR_EREFUSED, "secret file '%.256s' is not a regular file",
				    path);
	if (st->st_mode & (S_IRWXG | S_IRWXO))
		return pr_error_set(err, PR_EREFUSED,
				    "secret file '%.256s' is accessible by group or others (mode "
				    "%04o); run chmod 600 on it",
				    path, (unsigned)(st->st_mode & 07777));
	return 0;
}

static int from_file(char **out, const char *path, pr_error *err)
{
	struct stat st;
	char *s = NULL;
	size_t n = 0;
	int fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0)
		return pr_error_set(err, PR_EIO, "cannot open secret file '%.256s': %s", path,
				    errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot read secret file '%.256s': %s", path,
				  strerror(errno));
		goto out;
	}
	if ((rc = secret_file_kind(path, &st, err)) < 0)
		goto out;
	if (st.st_uid != geteuid()) {
		rc = pr_error_set(err, PR_EREFUSED,
				  "secret file '%.256s' is owned by uid %ld, not by the user "
				  "running profreg (uid %ld)",
				  path, (long)st.st_uid, (long)geteuid());
		goto out;
	}
	if (st.st_size > SECRET_MAX + 2) {
		rc = pr_error_set(err, PR_ELIMIT, "secret file '%.256s' is larger than %d bytes",
				  path, SECRET_MAX);
		goto out;
	}
	if (!(s = calloc(SECRET_MAX + 3, 1))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	/* Bounded: the file may grow after fstat; read at most the cap plus one. */
	while (n < SECRET_MAX + 3) {
		ssize_t r = read(fd, s + n, SECRET_MAX + 3 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = pr_error_set(err, PR_EIO, "cannot read secret file '%.256s': %s", path,
					  strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > SECRET_MAX + 2) {
		rc = pr_error_set(err, PR_ELIMIT, "secret file '%.256s' is larger than %d bytes",
				  path, SECRET_MAX);
		goto out;
	}
	s[n] = '\0';
	strip_newline(s, &n);
	if (n == 0 || strlen(s) != n) {
		rc = pr_error_set(err, PR_EDATA, "secret file '%.256s' is %s", path,
				  n == 0 ? "empty" : "not text (holds a NUL byte)");
		goto out;
	}
	if (memchr(s, '\n', n)) {
		rc = pr_error_set(err, PR_EDATA, "secret file '%.256s' holds more than one line",
				  path);
		goto out;
	}
	if (has_control(s, n)) {
		rc = pr_error_set(err, PR_EDATA,
				  "secret file '%.256s' holds a control character (CR, tab or "
				  "another); a secret must be one line of printable text",
				  path);
		goto out;
	}
	*out = s;
	s = NULL;
out:
	if (s) {
		secret_wipe(s, SECRET_MAX + 3);
		free(s);
	}
	close(fd);
	return rc;
}

/* The host of an http(s) URL, after any user info: [start, end). */
static void url_host(const char *url, const char **start, const char **end)
{
	const char *a = strstr(url, "://"), *e, *at;

	a = a ? a + 3 : url;
	e = a + strcspn(a, "/?#");
	/* The last '@' ends the user info; a '@' after the authority is not one. */
	for (at = a; at < e; at++)
		if (*at == '@')
			a = at + 1;
	if (*a == '[') {
		const char *close = memchr(a, ']', (size_t)(e - a));
		*start = a + 1;
		*end = close ? close : a + 1;
		return;
	}
	*start = a;
	for (*end = a; *end < e && **end != ':'; (*end)++)
		;
}

/* A dotted IPv4 address 127.x.y.z, each part 0-255 in decimal. */
static int is_ipv4_loopback(const char *s, size_t n)
{
	unsigned part = 0, parts = 0, digits = 0, first = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (!digits || part > 255)
				return 0;
			if (parts++ == 0)
				first = part;
			part = 0;
			digits = 0;
		} else if (s[i] >= '0' && s[i] <= '9' && digits < 3) {
			part = part * 10 + (unsigned)(s[i] - '0');
			digits++;
		} else {
			return 0;
		}
	}
	return parts == 4 && first == 127;
}

int secret_url_safe(const char *url)
{
	const char *h, *e;
	size_t n;

	if (!url)
		return 0;
	if (strncmp(url, "https://", 8) == 0)
		return 1;
	if (strncmp(url, "http://", 7) != 0)
		return 0;
	url_host(url, &h, &e);
	n = (size_t)(e - h);
	if (n && h[n - 1] == '.') /* "localhost." is localhost */
		n--;
	return (n == 9 && strncasecmp(h, "localhost", 9) == 0) ||
	       (n == 3 && memcmp(h, "::1", 3) == 0) || is_ipv4_loopback(h, n);
}

int secret_read(char **out, const char *env_name, const char *file, pr_error *err)
{
	*out = NULL;
	if (env_name)
		return from_env(out, env_name, err);
	if (file)
		return from_file(out, file, err);
	return 0;
}
