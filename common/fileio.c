/*
 * fileio.c: bounded reads, atomic writes and the --out policy (see fileio.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "common/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* How read_all takes its path. */
enum {
	READ_STDIN = 1,    /* "-" is standard input */
	READ_NOFOLLOW = 2, /* a symbolic link is refused, not followed */
};

/* The limit's message, the same whether the size or the bytes told. */
static int too_large(const char *what, const char *path, size_t max, pr_error *err)
{
	return pr_error_set(err, PR_ELIMIT,
			    "cannot read %s'%s': larger than the input limit of %zu bytes",
			    what, path, max);
}

/*
 * Why an opened input is not read, or NULL when it may be. Only regular
 * files are: a FIFO or a terminal would wait for a writer for ever, a
 * device gives endless bytes (/dev/zero, /dev/urandom) or consumes
 * them, a directory gives none. The kernel's own file systems hold
 * regular files that report no size and may never end or block
 * (/proc/kmsg, tracing's trace_pipe); no input profreg takes lives
 * there. Checked on the descriptor, not the path: a link such as
 * /dev/stdin or /proc/self/fd/N is judged by what it opened (a memfd
 * the collection wrote is a regular file).
 */
static const char *not_readable(int fd, const struct stat *st)
{
	struct statfs fs;

	if (S_ISDIR(st->st_mode))
		return "not a regular file (a directory)";
	if (S_ISFIFO(st->st_mode))
		return "not a regular file (a FIFO or a pipe; a pipe is read as '-')";
	if (S_ISCHR(st->st_mode))
		return "not a regular file (a character device)";
	if (S_ISBLK(st->st_mode))
		return "not a regular file (a block device)";
	if (S_ISSOCK(st->st_mode))
		return "not a regular file (a socket)";
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (fstatfs(fd, &fs) == 0) {
		switch ((unsigned long)fs.f_type) {
		case PROC_SUPER_MAGIC:
			return "a kernel file (/proc), which may never end";
		case SYSFS_MAGIC:
			return "a kernel file (/sys), which may never end";
		case DEBUGFS_MAGIC:
		case TRACEFS_MAGIC:
			return "a kernel tracing file, which may never end";
		}
	}
	return NULL;
}

/*
 * What a failed open of a file to read says: gone, or refused for the
 * path itself (no permission, a file where a folder should be, a loop of
 * links, a name too long), is that file's fault; anything else (no file
 * descriptors left, an I/O error) is the machine's.
 */
static int open_code(int e)
{
	if (e == ENOENT)
		return PR_ENOTFOUND;
	if (e == EACCES || e == EPERM || e == ENOTDIR || e == ELOOP || e == EISDIR ||
	    e == ENAMETOOLONG)
		return PR_EDATA;
	return PR_EIO;
}

/*
 * Open `path` for reading (`follow`: through a symbolic link) without
 * waiting: a FIFO opened for reading would wait for a writer before
 * not_readable could refuse it. The descriptor is made blocking again
 * once it is known to be a regular file.
 */
static int open_input(int *out, const char *what, const char *path, bool follow,
		      pr_error *err)
{
	int fd, flags, rc = 0;
	const char *why;
	struct stat st;

	*out = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		/* A socket cannot be opened: say what it is, not "No such device". */
		if (errno == ENXIO && stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			rc = pr_error_set(err, PR_EDATA, "cannot read %s'%s': not a regular file "
					  "(a socket)", what, path);
		else if (!follow && errno == ELOOP)
			rc = pr_error_set(err, PR_EDATA, "cannot read %s'%s': a symbolic link, "
					  "which is not followed here", what, path);
		else
			rc = pr_error_set(err, open_code(errno),
					  "cannot read %s'%s': %s", what, path, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot read %s'%s': %s", what, path,
				  strerror(errno));
		goto out;
	}
	if ((why = not_readable(fd, &st))) {
		rc = pr_error_set(err, PR_EDATA, "cannot read %s'%s': %s", what, path, why);
		goto out;
	}
	if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot read %s'%s': %s", what, path,
				  strerror(errno));
		goto out;
	}
	*out = fd;
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/*
 * A regular file is read straight into a buffer of its size: no copy
 * through a chunk and no doubling, so each page of it is touched once (a
 * night ingests thousands of files), and one over the limit is refused
 * before any byte is read. What has no size (standard input), or grows
 * while read, goes by chunks.
 */
static int read_all(buf *out, const char *what, const char *path, size_t max, int how,
		    pr_error *err)
{
	int fd = -1, rc = 0;
	char chunk[65536];
	struct stat st;
	ssize_t n;

	buf_release(out);
	out->max = max;
	if ((how & READ_STDIN) && strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((rc = open_input(&fd, what, path, !(how & READ_NOFOLLOW), err)) < 0)
		goto out;
	if (fd != STDIN_FILENO && fstat(fd, &st) == 0 && st.st_size > 0) {
		if ((uintmax_t)st.st_size > max) {
			rc = too_large(what, path, max, err);
			goto out;
		}
		if ((rc = buf_reserve(out, (size_t)st.st_size)) < 0) {
			rc = pr_error_set(err, rc, "cannot read %s'%s': out of memory", what, path);
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
			rc = pr_error_set(err, PR_EIO, "cannot read %s'%s': %s",
					  what, path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if (to != chunk) {
			out->len += (size_t)n;
			out->ptr[out->len] = '\0';
		} else if ((rc = buf_put(out, chunk, (size_t)n)) < 0) {
			if (rc == PR_ELIMIT)
				rc = too_large(what, path, max, err);
			else
				rc = pr_error_set(err, rc, "cannot read %s'%s': out of memory",
						  what, path);
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
	return read_all(out, "", path, max, READ_STDIN, err);
}

int fileio_read_file(buf *out, const char *path, size_t max, pr_error *err)
{
	return read_all(out, "", path, max, READ_NOFOLLOW, err);
}

int fileio_read_named(buf *out, const char *what, const char *path, size_t max,
		      pr_error *err)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "%s ", what);
	return read_all(out, prefix, path, max, 0, err);
}

int fileio_check_named(const char *what, const char *path, pr_error *err)
{
	char prefix[64];
	int fd, rc;

	snprintf(prefix, sizeof(prefix), "%s ", what);
	if ((rc = open_input(&fd, prefix, path, true, err)) == 0)
		close(fd);
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

/*
 * Remove the temporary files ("NAME.tmp.PID") that killed writers left
 * beside `path`: a killed `report --out` once left a 373 KB one for good.
 * Only a regular file whose process is gone (kill says ESRCH) goes; a
 * live writer's, our own and any other name stay. Best effort: what
 * cannot be read or removed is left as it was.
 */
static void sweep_stale_tmp(const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t blen = strlen(base);
	char *dname = NULL;
	DIR *dir = NULL;
	struct dirent *e;

	if (slash)
		dname = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	else
		dname = strdup(".");
	if (!dname || !(dir = opendir(dname)))
		goto out;
	while ((e = readdir(dir))) {
		const char *num;
		char *end = NULL;
		struct stat st;
		long pid;

		if (strncmp(e->d_name, base, blen) != 0 || strncmp(e->d_name + blen, ".tmp.", 5))
			continue;
		num = e->d_name + blen + 5;
		if (*num < '1' || *num > '9')
			continue;
		errno = 0;
		pid = strtol(num, &end, 10);
		if (errno || *end || pid <= 0 || (pid_t)pid != pid || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			(void)unlinkat(dirfd(dir), e->d_name, 0);
	}
out:
	if (dir)
		closedir(dir);
	free(dname);
}

int fileio_write_atomic(const char *path, const void *data, size_t len,
			unsigned mode, pr_error *err)
{
	buf tmp = BUF_INIT;
	struct stat st;
	int fd = -1, rc = 0;

	/*
	 * Replacing a file never widens who may read it: an operator who made
	 * the output 0600 (a profile holds function names, a report its
	 * figures) keeps 0600, though the caller asked for 0644.
	 */
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		mode &= (unsigned)st.st_mode & 0777u;
	if (!*path)
		return pr_error_set(err, PR_EUSAGE, "cannot write '': an empty file name");
	sweep_stale_tmp(path);
	/* The temporary file is ours: errors name the file asked for. */
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
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", path,
				  strerror(errno));
		goto out;
	}
	fd = open(tmp.ptr, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", path,
				  strerror(errno));
		goto out;
	}
	if (fileio_write_fd(fd, data, len) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", path,
				  strerror(errno));
		goto out;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", path,
				  strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp.ptr, path) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot write '%s': %s", path, strerror(errno));
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
