/*
 * secret.c: secrets from the environment or an owner-only file (see
 * secret.h). The file is opened first and checked through its descriptor,
 * so a swap between the check and the read cannot slip another file in.
 */
#define _POSIX_C_SOURCE 200809L
#include "secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0
#endif

void secret_free(char *s)
{
	if (!s)
		return;
	/* volatile: the compiler may not drop stores to memory about to be freed. */
	for (volatile char *p = s; *p; p++)
		*p = 0;
	free(s);
}

static void strip_newline(char *s, size_t *n)
{
	if (*n && s[*n - 1] == '\n')
		s[--*n] = '\0';
	if (*n && s[*n - 1] == '\r')
		s[--*n] = '\0';
}

static int from_env(char **out, const char *name, pr_error *err)
{
	const char *v = getenv(name);
	size_t n;

	if (!v || !*v)
		return pr_error_set(err, PR_EREFUSED, "secret variable '%.64s' is not set or empty", name);
	n = strlen(v);
	if (n > SECRET_MAX)
		return pr_error_set(err, PR_ELIMIT, "secret variable '%.64s' is longer than %d bytes",
				    name, SECRET_MAX);
	if (!(*out = strdup(v)))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	strip_newline(*out, &n);
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
		rc = pr_error_set(err, PR_EIO, "cannot read secret file '%.256s': %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = pr_error_set(err, PR_EREFUSED, "secret file '%.256s' is not a regular file", path);
		goto out;
	}
	if (st.st_uid != geteuid()) {
		rc = pr_error_set(err, PR_EREFUSED,
				  "secret file '%.256s' is owned by uid %ld, not by the user running profreg (uid %ld)",
				  path, (long)st.st_uid, (long)geteuid());
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		rc = pr_error_set(err, PR_EREFUSED,
				  "secret file '%.256s' is accessible by group or others (mode %04o); run chmod 600 on it",
				  path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (st.st_size > SECRET_MAX + 2) {
		rc = pr_error_set(err, PR_ELIMIT, "secret file '%.256s' is larger than %d bytes", path,
				  SECRET_MAX);
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
		rc = pr_error_set(err, PR_ELIMIT, "secret file '%.256s' is larger than %d bytes", path,
				  SECRET_MAX);
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
		rc = pr_error_set(err, PR_EDATA, "secret file '%.256s' holds more than one line", path);
		goto out;
	}
	*out = s;
	s = NULL;
out:
	if (s) {
		for (volatile char *w = s; w < s + SECRET_MAX + 3; w++)
			*w = 0;
		free(s);
	}
	close(fd);
	return rc;
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
