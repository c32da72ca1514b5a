/*
 * fileio.c: bounded reads and atomic writes (see fileio.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fileio_read(buf *out, const char *path, size_t max, pr_error *err)
{
	int fd = -1, rc = 0;
	char chunk[65536];
	ssize_t n;

	buf_release(out);
	out->max = max;
	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
	} else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot read '%s': %s", path,
				  strerror(errno));
		goto out;
	}
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = pr_error_set(err, PR_EIO, "cannot read '%s': %s",
					  path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if ((rc = buf_put(out, chunk, (size_t)n)) < 0) {
			if (rc == PR_ELIMIT)
				rc = pr_error_set(err, PR_ELIMIT,
					"cannot read '%s': larger than the input limit of %zu bytes",
					path, max);
			else
				rc = pr_error_set(err, rc, "cannot read '%s': out of memory", path);
			goto out;
		}
	}
out:
	if (fd > STDIN_FILENO)
		close(fd);
	if (rc < 0)
		buf_release(out);
	return rc;
}

static int fsync_dir_of(const char *path)
{
	char *dir = strdup(path), *slash;
	int fd, rc;

	if (!dir)
		return -1;
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int fileio_write_atomic(const char *path, const void *data, size_t len,
			unsigned mode, pr_error *err)
{
	buf tmp = BUF_INIT;
	int fd = -1, rc = 0;
	const char *p = data;

	if (buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot write '%s': out of memory", path);
		goto out;
	}
	fd = open(tmp.ptr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", tmp.ptr,
				  strerror(errno));
		goto out;
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s",
					  tmp.ptr, strerror(errno));
			goto out;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", tmp.ptr,
				  strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp.ptr, path) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot rename '%s' to '%s': %s",
				  tmp.ptr, path, strerror(errno));
		goto out;
	}
	if (fsync_dir_of(path) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot sync the directory of '%s': %s",
				  path, strerror(errno));
		goto out;
	}
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0 && tmp.len)
		unlink(tmp.ptr);
	buf_release(&tmp);
	return rc;
}

int fileio_mkdirs(const char *path, unsigned mode, pr_error *err)
{
	buf b = BUF_INIT;
	int rc = 0;

	if (buf_puts(&b, path) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot create '%s': out of memory", path);
		goto out;
	}
	for (char *p = b.ptr + 1; ; p++) {
		char c = *p;
		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(b.ptr, mode) < 0 && errno != EEXIST) {
			rc = pr_error_set(err, PR_EIO, "cannot create '%s': %s",
					  b.ptr, strerror(errno));
			goto out;
		}
		*p = c;
		if (c == '\0')
			break;
	}
out:
	buf_release(&b);
	return rc;
}
