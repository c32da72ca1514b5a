/*
 * fileio.c: bounded reads, atomic writes and the --out policy (see fileio.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "common/fileio.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The limit's message, the same whether the size or the bytes told. */
static int too_large(const char *path, size_t max, pr_error *err)
{
	return pr_error_set(err, PR_ELIMIT,
			    "cannot read '%s': larger than the input limit of %zu bytes",
			    path, max);
}

/*
 * A regular file is read straight into a buffer of its size: no copy
 * through a chunk and no doubling, so each page of it is touched once (a
 * night ingests thousands of files), and one over the limit is refused
 * before any byte is read. What has no size, or grows while read, goes
 * by chunks.
 */
static int read_all(buf *out, const char *path, size_t max, bool file_only, pr_error *err)
{
	int fd = -1, rc = 0;
	bool regular;
	char chunk[65536];
	struct stat st;
	ssize_t n;

	buf_release(out);
	out->max = max;
	if (!file_only && strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
	} else if ((fd = open(path, O_RDONLY | O_CLOEXEC |
				    (file_only ? O_NOFOLLOW | O_NONBLOCK | O_NOCTTY : 0))) < 0) {
		if (file_only && errno == ELOOP)
			rc = pr_error_set(err, PR_EDATA, "cannot read '%s': a symbolic link, "
					  "which is not followed here", path);
		else
			rc = pr_error_set(err, PR_EIO, "cannot read '%s': %s", path,
					  strerror(errno));
		goto out;
	}
	regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (file_only && !regular) {
		rc = pr_error_set(err, PR_EDATA, "cannot read '%s': not a regular file", path);
		goto out;
	}
	if (regular && st.st_size > 0) {
		if ((uintmax_t)st.st_size > max) {
			rc = too_large(path, max, err);
			goto out;
		}
		if ((rc = buf_reserve(out, (size_t)st.st_size)) < 0) {
			rc = pr_error_set(err, rc, "cannot read '%s': out of memory", path);
			goto out;
		}
	}
	for (;;) {
		size_t room = out->cap ? out->cap - out->len - 1 : 0;
		char *to = chunk;

		if (room > max - out->len)
			room = max - out->len;
		if (room > 0)
			to = out->ptr + out->len;
		else
			room = sizeof(chunk);
		n = read(fd, to, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = pr_error_set(err, PR_EIO, "cannot read '%s': %s",
					  path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if (to != chunk) {
			out->len += (size_t)n;
			out->ptr[out->len] = '\0';
		} else if ((rc = buf_put(out, chunk, (size_t)n)) < 0) {
			if (rc == PR_ELIMIT)
				rc = too_large(path, max, err);
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

int fileio_read(buf *out, const char *path, size_t max, pr_error *err)
{
	return read_all(out, path, max, false, err);
}

int fileio_read_file(buf *out, const char *path, size_t max, pr_error *err)
{
	return read_all(out, path, max, true, err);
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

int fileio_write_fd(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fileio_write_atomic(const char *path, const void *data, size_t len,
			unsigned mode, pr_error *err)
{
	buf tmp = BUF_INIT;
	int fd = -1, rc = 0;

	if (buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0) {
		rc = pr_error_set(err, PR_ENOMEM, "cannot write '%s': out of memory", path);
		goto out;
	}
	/*
	 * A leftover of a killed process with the same pid goes first; then
	 * the temporary file must be new, so a link planted under its name
	 * cannot redirect the write.
	 */
	if (unlink(tmp.ptr) < 0 && errno != ENOENT) {
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", tmp.ptr,
				  strerror(errno));
		goto out;
	}
	fd = open(tmp.ptr, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", tmp.ptr,
				  strerror(errno));
		goto out;
	}
	if (fileio_write_fd(fd, data, len) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", tmp.ptr,
				  strerror(errno));
		goto out;
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

/*
 * The descriptor a shell-style name stands for: "-" and "/dev/stdout" 1,
 * "/dev/stderr" 2, "/dev/fd/N" N; -1 for any other path.
 */
static int named_fd(const char *path)
{
	const char *p;
	long n = 0;

	if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0)
		return STDOUT_FILENO;
	if (strcmp(path, "/dev/stderr") == 0)
		return STDERR_FILENO;
	if (strncmp(path, "/dev/fd/", 8) != 0 || !path[8])
		return -1;
	for (p = path + 8; *p; p++) {
		if (*p < '0' || *p > '9' || n > 100000000)
			return -1;
		n = n * 10 + (*p - '0');
	}
	return (int)n;
}

/* Write to a descriptor the process already holds; stdout through stdio. */
static int write_named_fd(int fd, const char *path, const void *data, size_t len,
			  pr_error *err)
{
	if (fd == STDOUT_FILENO) {
		if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
			return pr_error_set(err, PR_EIO, "cannot write '%s': %s", path,
					    strerror(errno));
		return 0;
	}
	if (fileio_write_fd(fd, data, len) < 0)
		return pr_error_set(err, PR_EIO, "cannot write '%s': %s", path, strerror(errno));
	return 0;
}

static const char link_refused[] =
	"it is a symbolic link, which is not followed; name the file it points to";

/* Why a file of this type is never written over, or NULL when it may be. */
static const char *refusal(mode_t m)
{
	if (S_ISLNK(m))
		return link_refused;
	if (S_ISDIR(m))
		return "it is a directory";
	if (S_ISSOCK(m))
		return "it is a socket";
	if (S_ISBLK(m))
		return "it is a block device";
	if (!S_ISREG(m) && !S_ISCHR(m) && !S_ISFIFO(m))
		return "it is not a regular file, character device or FIFO";
	return NULL;
}

/* A character device or FIFO: open it as it is and write in place. */
static int write_in_place(const char *path, const void *data, size_t len, pr_error *err)
{
	struct stat st;
	const char *why;
	int fd, rc = 0;

	/* O_NOFOLLOW and the fstat: the path may have changed since lstat. */
	fd = open(path, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = pr_error_set(err, errno == ELOOP ? PR_EUSAGE : PR_EIO, "cannot write '%s': %s",
				  path, errno == ELOOP ? link_refused : strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		why = refusal(st.st_mode);
		rc = pr_error_set(err, PR_EUSAGE, "cannot write '%s': %s", path,
				  why ? why : "it changed while it was being opened");
		goto out;
	}
	if (fileio_write_fd(fd, data, len) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

int fileio_write_out(const char *path, const void *data, size_t len, unsigned mode,
		     pr_error *err)
{
	struct stat st;
	const char *why;
	int fd = named_fd(path);

	if (fd >= 0)
		return write_named_fd(fd, path, data, len, err);
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return fileio_write_atomic(path, data, len, mode, err);
		return pr_error_set(err, PR_EIO, "cannot write '%s': %s", path, strerror(errno));
	}
	if ((why = refusal(st.st_mode)))
		return pr_error_set(err, PR_EUSAGE, "cannot write '%s': %s", path, why);
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return write_in_place(path, data, len, err);
	return fileio_write_atomic(path, data, len, mode, err);
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
