/*
 * test_fileio.c: the --out policy of fileio_write_out. A new path and a
 * regular file are written whole; a FIFO, a character device and a
 * descriptor name (/dev/fd/N) are written in place and stay what they
 * were; a symbolic link, a directory, a socket and a block device are
 * refused by name and left untouched; a link planted under the temporary
 * file's name is not followed. And fileio_read: a file up to its limit
 * byte for byte, one byte more refused, standard input from a pipe, a
 * missing file, and nothing else that is not a regular file (a FIFO, a
 * device, a directory, a socket, /proc); and fileio_read_file, which
 * takes regular files only and follows no link.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/fileio.h"

#define TEXT "root;leaf 42\n"

static char dir[200];

static int setup(void **state)
{
	const char *tmp = getenv("PROFREG_TEST_TMP");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_fileio.XXXXXX", tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static const char *path_of(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void expect_file(const char *path, const char *text)
{
	buf b = BUF_INIT;
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(fileio_read(&b, path, 1 << 20, &err), 0);
	assert_string_equal(b.ptr, text);
	buf_release(&b);
}

static mode_t type_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & S_IFMT;
}

static void test_new_path_and_regular_file_are_written_whole(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s", path_of("new.folded"));
	assert_int_equal(fileio_write_out(path, TEXT, strlen(TEXT), 0644, &err), 0);
	expect_file(path, TEXT);
	assert_int_equal(type_of(path), S_IFREG);
	assert_int_equal(fileio_write_out(path, "x 1\n", 4, 0644, &err), 0);
	expect_file(path, "x 1\n");
	assert_int_equal(err.code, 0);
}

static mode_t perms_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 0777;
}

/* An output the operator made private stays private when it is replaced. */
static void test_replaced_file_keeps_narrower_permissions(void **state)
{
	pr_error err = PR_ERROR_INIT;
	mode_t old_mask = umask(022);
	char path[512];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s", path_of("private.html"));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0600), 0);
	close(fd);
	assert_int_equal(fileio_write_out(path, TEXT, strlen(TEXT), 0644, &err), 0);
	expect_file(path, TEXT);
	assert_int_equal(perms_of(path), 0600);
	/* A wider file is not widened further, nor narrowed below the caller's mode. */
	assert_int_equal(chmod(path, 0664), 0);
	assert_int_equal(fileio_write_out(path, "x 1\n", 4, 0644, &err), 0);
	assert_int_equal(perms_of(path), 0644);
	/* A new file gets the caller's mode, and a private caller stays private. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(fileio_write_out(path, TEXT, strlen(TEXT), 0644, &err), 0);
	assert_int_equal(perms_of(path), 0644);
	assert_int_equal(fileio_write_atomic(path, TEXT, strlen(TEXT), 0600, &err), 0);
	assert_int_equal(perms_of(path), 0600);
	umask(old_mask);
}

/* What refused paths have in common: the code, the path, the reason. */
struct refusal {
	const char *name;
	mode_t type;
	const char *why;
};

static void expect_refused(const char *path, const struct refusal *r)
{
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(fileio_write_out(path, TEXT, strlen(TEXT), 0644, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "cannot write '"));
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, r->why));
	assert_int_equal(type_of(path), r->type);
}

static void test_link_directory_socket_and_block_device_are_refused(void **state)
{
	static const struct refusal cases[] = {
		{"link", S_IFLNK, "symbolic link"},
		{"dir", S_IFDIR, "is a directory"},
		{"sock", S_IFSOCK, "is a socket"},
		{"blk", S_IFBLK, "is a block device"},
	};
	char path[512], target[512];

	(void)state;
	snprintf(target, sizeof(target), "%s", path_of("target.folded"));
	put_file(target, "kept 1\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct refusal *r = &cases[i];
		snprintf(path, sizeof(path), "%s", path_of(r->name));
		if (r->type == S_IFLNK) {
			assert_int_equal(symlink(target, path), 0);
		} else if (r->type == S_IFDIR) {
			assert_int_equal(mkdir(path, 0755), 0);
		} else if (r->type == S_IFSOCK) {
			struct sockaddr_un sa = {.sun_family = AF_UNIX};
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);
			assert_true(fd >= 0 && strlen(path) < sizeof(sa.sun_path));
			memcpy(sa.sun_path, path, strlen(path) + 1);
			assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
			close(fd);
		} else if (mknod(path, S_IFBLK | 0600, makedev(7, 0)) < 0) {
			/* Only root makes device nodes: nothing to refuse here. */
			continue;
		}
		expect_refused(path, r);
	}
	/* The link's target is what a replaced link would have hidden. */
	expect_file(target, "kept 1\n");
}

/* A character device that is a copy of /dev/null where we may make one. */
static const char *null_device(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s", path_of("null"));
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0)
		return path;
	/* Not root: /dev itself cannot be written over by this process. */
	return "/dev/null";
}

static void test_character_device_is_written_in_place(void **state)
{
	pr_error err = PR_ERROR_INIT;
	const char *dev = null_device();
	struct stat st;

	(void)state;
	assert_int_equal(fileio_write_out(dev, TEXT, strlen(TEXT), 0644, &err), 0);
	assert_int_equal(lstat(dev, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(major(st.st_rdev), 1);
	assert_int_equal(minor(st.st_rdev), 3);
}

static void test_fifo_is_written_to_its_reader(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char path[512], got[64];
	size_t n = 0;
	ssize_t k;
	int status, fd, rc;
	pid_t pid;

	(void)state;
	snprintf(path, sizeof(path), "%s", path_of("fifo"));
	assert_int_equal(mkfifo(path, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* The reader: exit 0 when it read exactly TEXT. */
		alarm(20);
		if ((fd = open(path, O_RDONLY)) < 0)
			_exit(2);
		while (n < sizeof(got) && (k = read(fd, got + n, sizeof(got) - n)) > 0)
			n += (size_t)k;
		_exit(n == strlen(TEXT) && memcmp(got, TEXT, n) == 0 ? 0 : 1);
	}
	alarm(20);
	rc = fileio_write_out(path, TEXT, strlen(TEXT), 0644, &err);
	alarm(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(rc, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(type_of(path), S_IFIFO);
}

static void test_descriptor_name_is_written_to_the_descriptor(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char name[64], got[64];
	int fds[2];
	ssize_t n;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	snprintf(name, sizeof(name), "/dev/fd/%d", fds[1]);
	assert_int_equal(fileio_write_out(name, TEXT, strlen(TEXT), 0644, &err), 0);
	close(fds[1]);
	n = read(fds[0], got, sizeof(got));
	close(fds[0]);
	assert_int_equal(n, (ssize_t)strlen(TEXT));
	assert_memory_equal(got, TEXT, strlen(TEXT));
	/* A closed descriptor is an error naming it, not a new file. */
	assert_int_equal(fileio_write_out(name, TEXT, strlen(TEXT), 0644, &err), PR_EIO);
	assert_non_null(strstr(err.msg, name));
}

static void test_link_planted_as_the_temporary_file_is_not_followed(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char path[512], tmp[600], victim[512];

	(void)state;
	snprintf(path, sizeof(path), "%s", path_of("out.html"));
	snprintf(victim, sizeof(victim), "%s", path_of("victim"));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	put_file(victim, "victim\n");
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(fileio_write_out(path, TEXT, strlen(TEXT), 0644, &err), 0);
	expect_file(path, TEXT);
	expect_file(victim, "victim\n");
	assert_int_equal(access(tmp, F_OK), -1);
}

/* A pid no process has: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/*
 * A killed writer's temporary file goes at the next write of the same
 * path; a running writer's, other names' and what is not a file stay.
 */
static void test_dead_writers_temporary_files_are_removed(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char path[512], dead[600], dead2[600], live[600], other[600], odd[600];
	pid_t child, gone = dead_pid(), gone2 = dead_pid();

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	snprintf(path, sizeof(path), "%s", path_of("r.html"));
	snprintf(dead, sizeof(dead), "%s.tmp.%ld", path, (long)gone);
	snprintf(dead2, sizeof(dead2), "%s.tmp.%ld", path, (long)gone2);
	snprintf(live, sizeof(live), "%s.tmp.%ld", path, (long)child);
	snprintf(odd, sizeof(odd), "%s.tmp.%ldx", path, (long)gone);
	snprintf(other, sizeof(other), "%s.tmp.%ld", path_of("s.html"), (long)gone);
	put_file(dead, "half a report");
	put_file(dead2, "half a report");
	put_file(live, "being written");
	put_file(other, "another output's");
	put_file(odd, "not a pid");
	assert_int_equal(fileio_write_out(path, TEXT, strlen(TEXT), 0644, &err), 0);
	expect_file(path, TEXT);
	assert_int_equal(access(dead, F_OK), -1);
	assert_int_equal(access(dead2, F_OK), -1);
	expect_file(live, "being written");
	expect_file(other, "another output's");
	expect_file(odd, "not a pid");
	/* A path that does not exist yet sweeps as well. */
	unlink(path);
	put_file(dead, "half a report");
	assert_int_equal(fileio_write_out(path, TEXT, strlen(TEXT), 0644, &err), 0);
	assert_int_equal(access(dead, F_OK), -1);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	unlink(live);
	unlink(other);
	unlink(odd);
	unlink(path);
}

static void test_missing_directory_is_an_io_error_naming_the_path_and_empty_is_usage(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s", path_of("nosuch/out.html"));
	assert_int_equal(fileio_write_out(path, TEXT, strlen(TEXT), 0644, &err), PR_EIO);
	/* The file asked for, not the temporary file beside it. */
	assert_non_null(strstr(err.msg, "nosuch/out.html'"));
	assert_null(strstr(err.msg, ".tmp."));
	pr_error_clear(&err);
	assert_int_equal(fileio_write_out("", TEXT, strlen(TEXT), 0644, &err), PR_EUSAGE);
	assert_non_null(strstr(err.msg, "an empty file name"));
	pr_error_clear(&err);
	assert_int_equal(fileio_write_atomic("", TEXT, strlen(TEXT), 0644, &err), PR_EUSAGE);
}

/* A file of n bytes, each its offset's low byte; returns its path (path_of's). */
static const char *sized_file(const char *name, size_t n)
{
	const char *path = path_of(name);
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(fputc((int)(i & 0xff), f), (int)(i & 0xff));
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Up to its limit a file is read whole, byte for byte; one byte over is refused. */
static void test_read_takes_a_file_up_to_its_limit_and_refuses_one_byte_more(void **state)
{
	static const size_t sizes[] = {0, 1, 65535, 65536, 65537, 200000};
	pr_error err = PR_ERROR_INIT;
	buf b = BUF_INIT;
	char name[32];

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		const char *path;

		snprintf(name, sizeof(name), "r%zu", n);
		path = sized_file(name, n);
		assert_int_equal(fileio_read(&b, path, n, &err), 0);
		assert_int_equal(b.len, n);
		assert_int_equal(b.ptr[n], '\0');
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)b.ptr[i] != (i & 0xff))
				fail_msg("byte %zu of %zu", i, n);
		assert_int_equal(fileio_read(&b, path, SIZE_MAX, &err), 0);
		assert_int_equal(b.len, n);
		if (n > 0) {
			pr_error_clear(&err);
			assert_int_equal(fileio_read(&b, path, n - 1, &err), PR_ELIMIT);
			assert_int_equal(b.len, 0);
			assert_non_null(strstr(err.msg, "larger than the input limit"));
			if (!strstr(err.msg, name))
				fail_msg("no %s in: %s", name, err.msg);
		}
	}
	buf_release(&b);
}

/*
 * Standard input from a pipe has no size to go by: read in steps, whole,
 * and held to the limit.
 */
static void test_read_takes_a_pipe_in_steps(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char src[512];
	buf b = BUF_INIT;
	int status, fds[2], saved;
	pid_t pid;

	(void)state;
	snprintf(src, sizeof(src), "%s", sized_file("pipesrc", 300000));
	assert_true((saved = dup(STDIN_FILENO)) >= 0);
	for (int over = 0; over < 2; over++) {
		assert_int_equal(pipe(fds), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) { /* the writer: the source file into the pipe */
			buf in = BUF_INIT;

			alarm(20);
			close(fds[0]);
			if (fileio_read(&in, src, SIZE_MAX, &err) < 0)
				_exit(2);
			for (size_t off = 0; off < in.len;) {
				ssize_t k = write(fds[1], in.ptr + off, in.len - off);
				if (k <= 0)
					_exit(0); /* the reader stopped at its limit */
				off += (size_t)k;
			}
			_exit(0);
		}
		close(fds[1]);
		assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
		close(fds[0]);
		alarm(20);
		if (!over) {
			assert_int_equal(fileio_read(&b, "-", 300000, &err), 0);
			assert_int_equal(b.len, 300000);
			assert_int_equal((unsigned char)b.ptr[299999], 299999 & 0xff);
		} else {
			assert_int_equal(fileio_read(&b, "-", 100000, &err), PR_ELIMIT);
		}
		alarm(0);
		assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
		assert_int_equal(waitpid(pid, &status, 0), pid);
	}
	close(saved);
	buf_release(&b);
}

/*
 * Only a regular file is read, by path. A FIFO with no writer is refused
 * at once (it used to wait for one for ever), and so are a pipe named as
 * /dev/stdin, a directory, character devices (/dev/zero gave zeros up to
 * the limit), a socket, and the kernel's files under /proc and /sys,
 * which report no size; each by its name and what it is. "-" stays
 * standard input for fileio_read, and is a file of that name for
 * fileio_read_named.
 */
static void test_read_refuses_what_is_not_a_regular_file(void **state)
{
	static const struct {
		const char *path, *says;
	} cases[] = {
		{"/dev/zero", "not a regular file (a character device)"},
		{"/dev/null", "not a regular file (a character device)"},
		{"/proc/self/cmdline", "a kernel file (/proc)"},
		{"/proc/self/status", "a kernel file (/proc)"},
		{"/sys/kernel/mm/transparent_hugepage/enabled", "a kernel file (/sys)"},
	};
	pr_error err = PR_ERROR_INIT;
	char path[512], expect[600];
	buf b = BUF_INIT;
	int status, fds[2], saved;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int sock;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (access(cases[i].path, R_OK) != 0)
			continue; /* not in this kernel or container */
		pr_error_clear(&err);
		assert_int_equal(fileio_read(&b, cases[i].path, 1 << 20, &err), PR_EDATA);
		snprintf(expect, sizeof(expect), "cannot read '%s': %s", cases[i].path,
			 cases[i].says);
		if (!strstr(err.msg, expect))
			fail_msg("want '%s' in: %s", expect, err.msg);
		assert_int_equal(b.len, 0);
	}

	snprintf(path, sizeof(path), "%s", path_of("nowriter.fifo"));
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(10); /* without the check, this waits for a writer */
	pr_error_clear(&err);
	assert_int_equal(fileio_read(&b, path, 100, &err), PR_EDATA);
	alarm(0);
	assert_non_null(strstr(err.msg, "nowriter.fifo': not a regular file (a FIFO or a pipe"));

	assert_int_equal(mkdir(path_of("adir"), 0700), 0);
	pr_error_clear(&err);
	assert_int_equal(fileio_read(&b, path_of("adir"), 100, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "adir': not a regular file (a directory)"));

	assert_true(strlen(path_of("a.sock")) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path_of("a.sock"), strlen(path_of("a.sock")) + 1);
	assert_true((sock = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	pr_error_clear(&err);
	assert_int_equal(fileio_read(&b, sa.sun_path, 100, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "a.sock': not a regular file (a socket)"));
	close(sock);

	/* A pipe on standard input, named by path: refused; as "-" it is read. */
	assert_true((saved = dup(STDIN_FILENO)) >= 0);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], TEXT, strlen(TEXT)), (ssize_t)strlen(TEXT));
	close(fds[1]);
	assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	pr_error_clear(&err);
	assert_int_equal(fileio_read(&b, "/dev/stdin", 100, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "'/dev/stdin': not a regular file (a FIFO or a pipe"));
	assert_int_equal(fileio_read(&b, "-", 100, &err), 0);
	assert_string_equal(b.ptr, TEXT);
	status = dup2(saved, STDIN_FILENO);
	close(saved);
	assert_int_equal(status, STDIN_FILENO);

	/* "-" is a file of that name when standard input is not meant. */
	assert_int_equal(chdir(dir), 0);
	put_file("-", "dash\n");
	assert_int_equal(fileio_read_named(&b, "config", "-", 100, &err), 0);
	assert_string_equal(b.ptr, "dash\n");
	pr_error_clear(&err);
	assert_int_equal(fileio_read_named(&b, "config", "adir", 100, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "cannot read config 'adir': not a regular file"));
	pr_error_clear(&err);
	assert_int_equal(fileio_check_named("config", path, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "nowriter.fifo': not a regular file (a FIFO"));
	assert_int_equal(fileio_check_named("config", "-", &err), 0);
	buf_release(&b);
}

/* A file that is not there: not found (exit 4), naming it, not an I/O error (exit 3). */
static void test_read_of_a_missing_file_names_it(void **state)
{
	pr_error err = PR_ERROR_INIT;
	buf b = BUF_INIT;

	(void)state;
	assert_int_equal(fileio_read(&b, path_of("nosuch"), 100, &err), PR_ENOTFOUND);
	assert_non_null(strstr(err.msg, "nosuch"));
	assert_int_equal(b.len, 0);
}

/*
 * fileio_read_file reads a file someone else may have put there: a file
 * as fileio_read does, but a link to one (even a readable one), a FIFO
 * (without waiting for a writer) and a directory are refused by name.
 */
static void test_read_file_takes_files_only_and_never_follows_a_link(void **state)
{
	pr_error err = PR_ERROR_INIT;
	buf b = BUF_INIT;
	char target[512];

	(void)state;
	put_file(path_of("only.folded"), TEXT);
	snprintf(target, sizeof(target), "%s", path_of("only.folded"));
	assert_int_equal(fileio_read_file(&b, target, 100, &err), 0);
	assert_string_equal(b.ptr, TEXT);
	buf_release(&b);

	assert_int_equal(symlink(target, path_of("link.folded")), 0);
	expect_file(path_of("link.folded"), TEXT); /* fileio_read follows it */
	assert_int_equal(fileio_read_file(&b, path_of("link.folded"), 100, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "link.folded': a symbolic link"));
	assert_null(strstr(err.msg, "root;leaf"));
	assert_int_equal(b.len, 0);

	assert_int_equal(mkfifo(path_of("fifo.folded"), 0600), 0);
	pr_error_clear(&err);
	assert_int_equal(fileio_read_file(&b, path_of("fifo.folded"), 100, &err), PR_EDATA);
	assert_non_null(strstr(err.msg, "fifo.folded': not a regular file"));
	assert_int_equal(mkdir(path_of("dir.folded"), 0700), 0);
	pr_error_clear(&err);
	assert_int_equal(fileio_read_file(&b, path_of("dir.folded"), 100, &err), PR_EDATA);
	pr_error_clear(&err);
	assert_int_equal(fileio_read_file(&b, path_of("nosuch"), 100, &err), PR_ENOTFOUND);
	assert_int_equal(b.len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_path_and_regular_file_are_written_whole),
		cmocka_unit_test(test_replaced_file_keeps_narrower_permissions),
		cmocka_unit_test(test_read_takes_a_file_up_to_its_limit_and_refuses_one_byte_more),
		cmocka_unit_test(test_read_takes_a_pipe_in_steps),
		cmocka_unit_test(test_read_refuses_what_is_not_a_regular_file),
		cmocka_unit_test(test_read_of_a_missing_file_names_it),
		cmocka_unit_test(test_read_file_takes_files_only_and_never_follows_a_link),
		cmocka_unit_test(test_link_directory_socket_and_block_device_are_refused),
		cmocka_unit_test(test_character_device_is_written_in_place),
		cmocka_unit_test(test_fifo_is_written_to_its_reader),
		cmocka_unit_test(test_descriptor_name_is_written_to_the_descriptor),
		cmocka_unit_test(test_link_planted_as_the_temporary_file_is_not_followed),
		cmocka_unit_test(test_dead_writers_temporary_files_are_removed),
		cmocka_unit_test(
			test_missing_directory_is_an_io_error_naming_the_path_and_empty_is_usage),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
