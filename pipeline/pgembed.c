/*
 * pgembed.c: the private PostgreSQL cluster (see pgembed.h).
 *
 * Creation is atomic: initdb writes into data.new.<pid> and the finished
 * cluster is renamed to data, so a crash mid-initdb never leaves a half
 * cluster that later starts would trip over. Settings profreg depends on
 * (no TCP, the socket folder) live in data/profreg.conf, rewritten at
 * every start and included last by postgresql.conf, so a moved home or a
 * changed socket folder takes effect at the next start.
 *
 * pg_ctl and initdb refuse to run as root; as root every child runs as the
 * cluster user, with privileges dropped in the child between fork and
 * exec (group list computed before the fork: only async-signal-safe calls
 * happen in the child).
 */
#define _GNU_SOURCE
#include "pipeline/pgembed.h"
#include "common/buf.h"
#include "common/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <libpq-fe.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pwd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PG_PORT "5432"
#define SOCKET_NAME "/.s.PGSQL." PG_PORT
#define DEBIAN_PG_ROOT "/usr/lib/postgresql"
#define DB_NAME "profreg"
#define MAX_GROUPS 256

#define INITDB_TIMEOUT_S 180
#define CTL_WAIT_S "30"       /* pg_ctl -t: how long pg_ctl itself waits */
#define CTL_TIMEOUT_S 60      /* how long we wait for pg_ctl */
#define STATUS_TIMEOUT_S 20
#define LOCK_TIMEOUT_S 240    /* another process may be running initdb */
#define READY_TIMEOUT_S 30    /* a running server that does not answer yet */

typedef struct pg_user {
	bool drop; /* we are root: children switch to uid/gid */
	uid_t uid;
	gid_t gid;
	char name[64];
	gid_t groups[MAX_GROUPS];
	int ngroups;
} pg_user;

typedef struct cluster {
	char *disp;     /* "<home>/pg" as the caller spelled home, for messages */
	char *home;     /* absolute <home> */
	char *root;     /* absolute <home>/pg */
	char *data;     /* root/data */
	char *logdir;   /* root/log */
	char *log;      /* root/log/postgres.log, the server's */
	char *ctl_log;  /* root/log/pg_ctl.log, initdb's and pg_ctl's */
	char *sock;     /* socket folder */
	bool sock_fallback;
	char bin[PATH_MAX];
	pg_user user;
	int lock_fd;
} cluster;

static void say(bool quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(bool quiet, const char *fmt, ...)
{
	va_list ap;

	buf line = BUF_INIT;
	int rc;

	if (quiet)
		return;
	/* One line in one write, as every message of profreg goes out. */
	va_start(ap, fmt);
	rc = buf_puts(&line, "profreg: ") < 0 ? PR_ENOMEM : buf_vprintf(&line, fmt, ap);
	va_end(ap);
	if (rc == 0 && buf_putc(&line, '\n') == 0) {
		fflush(stdout);
		(void)fileio_write_fd(STDERR_FILENO, line.ptr, line.len);
	}
	buf_release(&line);
}

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

static char *join(const char *a, const char *b)
{
	buf p = BUF_INIT;

	if (buf_puts(&p, a) < 0 || buf_puts(&p, b) < 0)
		return NULL;
	return buf_detach(&p, NULL);
}

static void cluster_release(cluster *c)
{
	free(c->disp);
	free(c->home);
	free(c->root);
	free(c->data);
	free(c->logdir);
	free(c->log);
	free(c->ctl_log);
	free(c->sock);
	if (c->lock_fd >= 0)
		close(c->lock_fd); /* releases the lock */
	memset(c, 0, sizeof(*c));
	c->lock_fd = -1;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* ---- the server binaries --------------------------------------------- */

static bool has_tools(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/pg_ctl", dir);
	if (access(p, X_OK) != 0)
		return false;
	snprintf(p, sizeof(p), "%s/initdb", dir);
	return access(p, X_OK) == 0;
}

/* "15" -> 1500, "9.6" -> 906; -1 for anything else. */
static long version_rank(const char *name)
{
	char *end;
	long major = strtol(name, &end, 10), minor = 0;

	if (end == name || major < 0 || major > 1000)
		return -1;
	if (*end == '.') {
		const char *m = end + 1;
		minor = strtol(m, &end, 10);
		if (end == m || minor < 0 || minor > 99)
			return -1;
	}
	return *end ? -1 : major * 100 + minor;
}

/*
 * PROFREG_PG_BIN, else the version the existing cluster was made with
 * (data/PG_VERSION) when installed, else the newest installed version.
 */
static int find_bin(cluster *c, pr_error *err)
{
	const char *env = getenv("PROFREG_PG_BIN");
	char want[32] = "", path[PATH_MAX];
	long best = -1;
	DIR *dir;
	struct dirent *e;
	FILE *f;

	if (env && *env) {
		if (!has_tools(env))
			return pr_error_set(err, PR_ERR,
					    "cannot use PROFREG_PG_BIN '%s': no executable "
					    "initdb and pg_ctl there",
					    env);
		snprintf(c->bin, sizeof(c->bin), "%s", env);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/PG_VERSION", c->data ? c->data : "");
	if (c->data && (f = fopen(path, "re"))) {
		if (fgets(want, sizeof(want), f))
			want[strcspn(want, "\r\n")] = '\0';
		fclose(f);
		snprintf(path, sizeof(path), DEBIAN_PG_ROOT "/%s/bin", want);
		if (want[0] && version_rank(want) >= 0 && has_tools(path)) {
			snprintf(c->bin, sizeof(c->bin), "%s", path);
			return 0;
		}
	}
	if ((dir = opendir(DEBIAN_PG_ROOT))) {
		while ((e = readdir(dir))) {
			long r = version_rank(e->d_name);
			snprintf(path, sizeof(path), DEBIAN_PG_ROOT "/%s/bin", e->d_name);
			if (r > best && has_tools(path)) {
				best = r;
				snprintf(c->bin, sizeof(c->bin), "%s", path);
			}
		}
		closedir(dir);
	}
	if (best < 0)
		return pr_error_set(err, PR_ERR,
				    "cannot find PostgreSQL's initdb "
				    "and pg_ctl under '" DEBIAN_PG_ROOT
				    "/<version>/bin': install the 'postgresql' package, set "
				    "PROFREG_PG_BIN, or point --db at a server");
	return 0;
}

/* ---- who runs the cluster -------------------------------------------- */

static int set_user(pg_user *u, const struct passwd *pw, pr_error *err)
{
	int n = MAX_GROUPS;

	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	if (strlen(pw->pw_name) >= sizeof(u->name))
		return pr_error_set(err, PR_ERR,
				    "cannot run PostgreSQL as '%s': the user name is too long",
				    pw->pw_name);
	if (getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &n) < 0) {
		/* More groups than we keep: the primary group is enough for PostgreSQL. */
		u->groups[0] = pw->pw_gid;
		n = 1;
	}
	u->ngroups = n;
	return 0;
}

/*
 * Not root: ourselves. Root: the owner of an existing cluster, else the
 * `postgres` system user.
 */
static int pick_user(cluster *c, pr_error *err)
{
	struct passwd *pw;
	struct stat st;

	if (geteuid() != 0) {
		if (!(pw = getpwuid(geteuid())))
			return pr_error_set(err, PR_ERR,
					    "cannot start PostgreSQL: user id %ld has no "
					    "name in the user database",
					    (long)geteuid());
		c->user.drop = false;
		return set_user(&c->user, pw, err);
	}
	if (stat(c->data, &st) == 0 && st.st_uid != 0) {
		if (!(pw = getpwuid(st.st_uid)))
			return pr_error_set(err, PR_ERR,
					    "cannot start the cluster in '%s': its owner, "
					    "user id %ld, has no name",
					    c->disp, (long)st.st_uid);
	} else if (!(pw = getpwnam("postgres"))) {
		return pr_error_set(err, PR_ERR,
				    "cannot create a private PostgreSQL cluster as root: "
				    "PostgreSQL refuses to run as root and there is no 'postgres' "
				    "system user (installing the 'postgresql' package creates it), "
				    "or run profreg as another user");
	}
	if (pw->pw_uid == 0)
		return pr_error_set(err, PR_ERR, "cannot run PostgreSQL as '%s': it is root",
				    pw->pw_name);
	c->user.drop = true;
	return set_user(&c->user, pw, err);
}

/* ---- paths ----------------------------------------------------------- */

/* pg_ctl pastes the data folder into a shell command between double quotes. */
static int check_path_chars(const char *home, pr_error *err)
{
	for (const char *p = home; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch < 0x20 || ch == 0x7f || ch == '"' || ch == '`' || ch == '$' || ch == '\\')
			return pr_error_set(err, PR_EUSAGE,
					    "cannot keep a PostgreSQL cluster under '%.64s': the "
					    "path contains a quote, '$', '`', '\\' or a control "
					    "character, which pg_ctl cannot take",
					    home);
	}
	return 0;
}

static int sha8(char out[9], const char *s)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL) || n < 4)
		return -1;
	snprintf(out, 9, "%02x%02x%02x%02x", md[0], md[1], md[2], md[3]);
	return 0;
}

/*
 * Fill in every path. `create`: make <home> first so that its real path
 * (symlinks resolved) names the cluster; otherwise an absent home is
 * taken as spelled.
 */
static int cluster_paths(cluster *c, const char *home, bool create, pr_error *err)
{
	char cwd[PATH_MAX], real[PATH_MAX], hex[9];
	buf abs = BUF_INIT, disp = BUF_INIT;
	size_t hl;
	int rc;

	memset(c, 0, sizeof(*c));
	c->lock_fd = -1;
	if (!home || !*home)
		return pr_error_set(err, PR_EUSAGE,
				    "no state folder given for the private PostgreSQL cluster");
	if ((rc = check_path_chars(home, err)) < 0)
		return rc;
	hl = strlen(home);
	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	if (buf_put(&disp, home, hl) < 0 || buf_puts(&disp, "/pg") < 0)
		return oom(err);
	c->disp = buf_detach(&disp, NULL);
	/*
	 * Some binaries before any folder (start chooses again under its lock):
	 * a 'db init' that cannot find PostgreSQL leaves no half-made home.
	 */
	if (create) {
		cluster probe;
		memset(&probe, 0, sizeof(probe));
		if ((rc = find_bin(&probe, err)) < 0)
			return rc;
		if ((rc = fileio_mkdirs(home, 0700, err)) < 0)
			return rc;
	}
	if (realpath(home, real)) {
		if ((rc = check_path_chars(real, err)) < 0)
			return rc;
		if (buf_puts(&abs, real) < 0)
			return oom(err);
	} else if (errno != ENOENT || create) {
		return pr_error_set(err, PR_EIO, "cannot resolve '%s': %s", home, strerror(errno));
	} else if (home[0] == '/') {
		if (buf_put(&abs, home, hl) < 0)
			return oom(err);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return pr_error_set(err, PR_EIO, "cannot resolve '%s': %s", home,
					    strerror(errno));
		if (buf_printf(&abs, "%s/%.*s", cwd, (int)hl, home) < 0)
			return oom(err);
	}
	if (abs.len > 1 && abs.ptr[abs.len - 1] == '/')
		abs.ptr[--abs.len] = '\0';
	if (!(c->home = buf_detach(&abs, NULL)) || !(c->root = join(c->home, "/pg")) ||
	    !(c->data = join(c->root, "/data")) || !(c->logdir = join(c->root, "/log")) ||
	    !(c->log = join(c->root, "/log/postgres.log")) ||
	    !(c->ctl_log = join(c->root, "/log/pg_ctl.log")) || !(c->sock = join(c->root, "/run")))
		return oom(err);
	/* sun_path holds 108 bytes with the NUL; PostgreSQL refuses longer socket paths. */
	if (strlen(c->sock) + strlen(SOCKET_NAME) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		if (sha8(hex, c->home) < 0)
			return pr_error_set(err, PR_ERR,
					    "cannot compute a socket folder name for '%s'",
					    c->disp);
		free(c->sock);
		if (!(c->sock = malloc(32)))
			return oom(err);
		snprintf(c->sock, 32, "/tmp/profreg-%s", hex);
		c->sock_fallback = true;
	}
	return 0;
}

/* A conninfo value, in single quotes with \ and ' escaped when it needs them. */
static int put_conninfo_value(buf *b, const char *v)
{
	int rc;

	if (*v && !strpbrk(v, " '\\\t\n"))
		return buf_puts(b, v);
	if ((rc = buf_putc(b, '\'')) < 0)
		return rc;
	for (; *v; v++)
		if (((*v == '\'' || *v == '\\') && (rc = buf_putc(b, '\\')) < 0) ||
		    (rc = buf_putc(b, *v)) < 0)
			return rc;
	return buf_putc(b, '\'');
}

/* A libpq connection string for the cluster's database `dbname`; NULL when out of memory. */
static char *conninfo_for(const cluster *c, const char *dbname)
{
	buf b = BUF_INIT;

	if (buf_puts(&b, "host=") < 0 || put_conninfo_value(&b, c->sock) < 0 ||
	    buf_puts(&b, " port=" PG_PORT " user=") < 0 ||
	    put_conninfo_value(&b, c->user.name) < 0 || buf_puts(&b, " dbname=") < 0 ||
	    put_conninfo_value(&b, dbname) < 0) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/* ---- children -------------------------------------------------------- */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static const char *const child_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"LC_ALL=C",
	"LANG=C",
	NULL,
};

/* In the child, before exec: async-signal-safe calls only. */
static void child_exec(const pg_user *u, int out_fd, long max_fd, char *const argv[])
{
	static const int sigs[] = {SIGCHLD, SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM};
	int null_fd = open("/dev/null", O_RDONLY);
	struct sigaction dfl;
	sigset_t none;

	if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
	    dup2(out_fd, STDERR_FILENO) < 0)
		_exit(126);
	/* Nothing of ours (database connections, pipes, files) may outlive us in the server. */
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
#endif
		for (long fd = 3; fd < max_fd; fd++)
			close((int)fd);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (u->drop) {
		if (setgroups((size_t)u->ngroups, u->groups) < 0 || setgid(u->gid) < 0 ||
		    setuid(u->uid) < 0 || getuid() != u->uid || geteuid() != u->uid)
			_exit(126);
	}
	umask(077);
	if (chdir("/") < 0)
		_exit(126);
	execve(argv[0], argv, (char *const *)child_env);
	_exit(127);
}

/*
 * Run argv[0] (an absolute path) as the cluster user with its output
 * appended to the tools' log, and wait at most `timeout_s`. *status is
 * the exit code; a child that did not finish in time is killed and is
 * PR_ERR.
 */
static int run_child(const cluster *c, int *status, char *const argv[], int timeout_s,
		     pr_error *err)
{
	long max_fd = sysconf(_SC_OPEN_MAX);
	int64_t deadline = mono_ms() + (int64_t)timeout_s * 1000;
	int out_fd, wst = 0;
	pid_t pid, w;

	if (max_fd < 0 || max_fd > 65536)
		max_fd = 65536;
	out_fd = open(c->ctl_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (out_fd < 0 && errno == ENOENT) /* no log folder (pgembed_status): nowhere to keep it */
		out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (out_fd < 0)
		return pr_error_set(err, PR_EIO, "cannot open '%s': %s", c->ctl_log,
				    strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(out_fd);
		return pr_error_set(err, PR_ERR, "cannot run '%s': %s", argv[0], strerror(errno));
	}
	if (pid == 0)
		child_exec(&c->user, out_fd, max_fd, argv);
	close(out_fd);
	for (;;) {
		w = waitpid(pid, &wst, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return pr_error_set(err, PR_ERR, "cannot wait for '%s': %s", argv[0],
					    strerror(errno));
		if (mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
				;
			return pr_error_set(err, PR_ERR,
					    "'%s %s' did not finish within %d s (see '%s')",
					    argv[0], argv[1], timeout_s, c->ctl_log);
		}
		nap_ms(20);
	}
	if (WIFEXITED(wst)) {
		*status = WEXITSTATUS(wst);
		if (*status == 126)
			return pr_error_set(err, PR_ERR, "cannot run '%s' as user '%s'", argv[0],
					    c->user.name);
		if (*status == 127)
			return pr_error_set(err, PR_ERR, "cannot execute '%s'", argv[0]);
		return 0;
	}
	return pr_error_set(err, PR_ERR, "'%s %s' was killed by signal %d", argv[0], argv[1],
			    WIFSIGNALED(wst) ? WTERMSIG(wst) : 0);
}

/* A log line without its "<time> [pid] " prefix and with one space after the severity. */
static void put_log_line(buf *b, const char *line)
{
	const char *p = strstr(line, "] ");

	if (p && p - line < 64)
		line = p + 2;
	for (; *line; line++) {
		if (line[0] == ' ' && line[1] == ' ')
			continue;
		buf_putc(b, (unsigned char)*line < 0x20 ? ' ' : *line);
	}
}

/* The "[pid]" of a log line, for telling which lines one process wrote. */
static size_t pid_tag(const char *line, const char **tag)
{
	const char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;

	*tag = open;
	return close && close - line < 64 ? (size_t)(close - open + 1) : 0;
}

/*
 * The lines that say why, from the part of `path` past `from`: the last
 * FATAL, PANIC or ERROR line (else the last non-empty line), preceded by
 * the line its process wrote just before it, which usually names the
 * cause ("invalid value for parameter ...; configuration file ...
 * contains errors").
 */
static void log_reason(char *out, size_t cap, const char *path, off_t from)
{
	char tail[16384];
	char *prev = NULL, *best = NULL, *best_prev = NULL, *last = NULL, *last_prev = NULL;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	buf b = BUF_INIT;

	out[0] = '\0';
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size - from > (off_t)sizeof(tail) - 1)
		from = st.st_size - (off_t)sizeof(tail) + 1;
	n = pread(fd, tail, sizeof(tail) - 1, from);
	close(fd);
	if (n <= 0)
		return;
	tail[n] = '\0';
	for (char *save = NULL, *line = strtok_r(tail, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		/* The server's severities; "error:" is how initdb and pg_ctl say it. */
		if (strstr(line, "FATAL:") || strstr(line, "PANIC:") || strstr(line, "ERROR:") ||
		    strstr(line, "error:")) {
			best = line;
			best_prev = prev;
		}
		last = line;
		last_prev = prev;
		prev = line;
	}
	if (!best) {
		best = last;
		best_prev = last_prev;
	}
	if (!best)
		return;
	if (best_prev) {
		const char *t1, *t2;
		size_t l1 = pid_tag(best, &t1), l2 = pid_tag(best_prev, &t2);
		if (l1 && l1 == l2 && memcmp(t1, t2, l1) == 0 &&
		    !strstr(best_prev, "starting PostgreSQL") &&
		    !strstr(best_prev, "listening on")) {
			put_log_line(&b, best_prev);
			buf_puts(&b, "; ");
		}
	}
	put_log_line(&b, best);
	snprintf(out, cap, "%s", b.ptr);
	buf_release(&b);
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : 0;
}

/* ---- folders --------------------------------------------------------- */

static int give_to_user(const cluster *c, const char *path, pr_error *err)
{
	if (c->user.drop && chown(path, c->user.uid, c->user.gid) < 0)
		return pr_error_set(err, PR_EIO, "cannot hand '%s' to user '%s': %s", path,
				    c->user.name, strerror(errno));
	return 0;
}

/* A folder of the cluster user's, mode 0700. */
static int make_private_dir(const cluster *c, const char *path, pr_error *err)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return pr_error_set(err, PR_EIO, "cannot create '%s': %s", path, strerror(errno));
	if (!is_dir(path))
		return pr_error_set(err, PR_EIO, "cannot use '%s': not a folder", path);
	return give_to_user(c, path, err);
}

/*
 * As root: can the cluster user reach and write <home>/pg? Asked in a
 * child that has become that user, so ACLs and group membership count.
 * Each ancestor must be searchable; the first that is not is named.
 */
static int check_reachable(const cluster *c, pr_error *err)
{
	int fds[2], wst = 0;
	char bad[PATH_MAX] = "";
	ssize_t n;
	pid_t pid, w;
	int64_t deadline = mono_ms() + 10000;

	if (!c->user.drop)
		return 0;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return pr_error_set(err, PR_ERR, "cannot create a pipe: %s", strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return pr_error_set(err, PR_ERR, "cannot fork: %s", strerror(errno));
	}
	if (pid == 0) {
		char prefix[PATH_MAX];
		size_t len = strlen(c->root);
		close(fds[0]);
		if (setgroups((size_t)c->user.ngroups, c->user.groups) < 0 ||
		    setgid(c->user.gid) < 0 || setuid(c->user.uid) < 0)
			_exit(2);
		if (len >= sizeof(prefix))
			_exit(2);
		for (size_t i = 1; i <= len; i++) {
			if (i < len && c->root[i] != '/')
				continue;
			memcpy(prefix, c->root, i);
			prefix[i] = '\0';
			if (access(prefix, X_OK) != 0 || (i == len && access(prefix, W_OK) != 0)) {
				if (write(fds[1], prefix, i) < 0)
					_exit(2);
				_exit(1);
			}
		}
		_exit(0);
	}
	close(fds[1]);
	{
		/* The child may hang on a dead network mount: wait for it in bounded time. */
		struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
		n = poll(&pfd, 1, 10000) == 1 ? read(fds[0], bad, sizeof(bad) - 1) : -1;
	}
	close(fds[0]);
	bad[n > 0 ? n : 0] = '\0';
	while ((w = waitpid(pid, &wst, WNOHANG)) == 0 || (w < 0 && errno == EINTR)) {
		if (mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
				;
			return pr_error_set(err, PR_ERR,
					    "cannot check access to '%s': the check hung", c->root);
		}
		nap_ms(10);
	}
	if (w < 0)
		return pr_error_set(err, PR_ERR, "cannot wait for the access check: %s",
				    strerror(errno));
	if (WIFEXITED(wst) && WEXITSTATUS(wst) == 0)
		return 0;
	if (bad[0])
		return pr_error_set(err, PR_EIO,
				    "the private PostgreSQL cluster runs as system user '%s' "
				    "(profreg runs as root), which cannot reach '%s': '%s' is not "
				    "searchable by it; use --home under /tmp or /var/lib, "
				    "or let '%s' in (chmod o+x)",
				    c->user.name, c->root, bad, bad);
	return pr_error_set(err, PR_ERR, "cannot check whether user '%s' can reach '%s'",
			    c->user.name, c->root);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/*
 * As root, profreg's own state folder (often made 0700 by profreg itself)
 * must let the cluster user through to <home>/pg: add search permission
 * for others, which lets nobody list it or open anything not meant for
 * them. Folders above the home are the operator's; check_reachable names
 * them instead of changing them.
 */
static int open_home(const cluster *c, bool quiet, pr_error *err)
{
	struct stat st;

	if (!c->user.drop || stat(c->home, &st) < 0 || st.st_uid != 0 || (st.st_mode & S_IXOTH))
		return 0;
	if (chmod(c->home, (st.st_mode & 07777) | S_IXOTH) < 0)
		return pr_error_set(err, PR_EIO, "cannot let user '%s' through '%s': %s",
				    c->user.name, c->home, strerror(errno));
	say(quiet, "made '%s' searchable (o+x) so that system user '%s' can reach its cluster",
	    c->home, c->user.name);
	return 0;
}

/* Remove initdb leftovers (data.new.*) of runs that died; we hold the lock, so none is live. */
static void sweep_unfinished(const cluster *c)
{
	DIR *dir = opendir(c->root);
	struct dirent *e;
	char path[PATH_MAX];

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, "data.new.", 9) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", c->root, e->d_name);
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	closedir(dir);
}

/* Whole-file write owned by the cluster user, mode 0600. */
static int write_user_file(const cluster *c, const char *path, const char *text, pr_error *err)
{
	int rc;

	if ((rc = fileio_write_atomic(path, text, strlen(text), 0600, err)) < 0)
		return rc;
	return give_to_user(c, path, err);
}

/* The settings profreg relies on, rewritten at every start. */
static int write_profreg_conf(const cluster *c, const char *data, pr_error *err)
{
	buf b = BUF_INIT, path = BUF_INIT;
	bool ok;
	int rc;

	ok = buf_puts(
		     &b,
		     "# Written by profreg at every start; put your own "
		     "settings in postgresql.conf.\n"
		     "listen_addresses = ''\n"
		     "port = " PG_PORT "\n"
		     "unix_socket_permissions = 0700\n"
		     "unix_socket_directories = '") == 0;
	for (const char *p = c->sock; ok && *p; p++)
		ok = (*p != '\'' || buf_putc(&b, '\'') == 0) && buf_putc(&b, *p) == 0;
	ok = ok && buf_puts(&b, "'\n") == 0 && buf_printf(&path, "%s/profreg.conf", data) == 0;
	rc = ok ? write_user_file(c, path.ptr, b.ptr, err) : oom(err);
	buf_release(&b);
	buf_release(&path);
	return rc;
}

/* Append a line to a file of the cluster's (postgresql.conf), keeping its owner. */
static int append_line(const char *path, const char *line, pr_error *err)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	size_t len = strlen(line);
	ssize_t n;

	if (fd < 0)
		return pr_error_set(err, PR_EIO, "cannot open '%s': %s", path, strerror(errno));
	n = write(fd, line, len);
	if (n != (ssize_t)len || fsync(fd) < 0) {
		int e = n < 0 ? errno : EIO;
		close(fd);
		return pr_error_set(err, PR_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	close(fd);
	return 0;
}

/* ---- the lock between profreg processes ------------------------------ */

/* flock, not fcntl: it also keeps two threads of one process apart. */
static int take_lock(cluster *c, pr_error *err)
{
	char *path = join(c->root, "/lock");
	int64_t deadline = mono_ms() + LOCK_TIMEOUT_S * 1000;
	int rc = 0;

	if (!path)
		return oom(err);
	c->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (c->lock_fd < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot open '%s': %s", path, strerror(errno));
		goto out;
	}
	while (flock(c->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			rc = pr_error_set(err, PR_EIO, "cannot lock '%s': %s", path,
					  strerror(errno));
			goto out;
		}
		if (mono_ms() >= deadline) {
			rc = pr_error_set(err, PR_ELOCKED,
					  "cannot lock '%s': another profreg has been starting or "
					  "stopping the cluster for %d s",
					  path, LOCK_TIMEOUT_S);
			goto out;
		}
		nap_ms(100);
	}
out:
	free(path);
	return rc;
}

/* ---- pg_ctl ---------------------------------------------------------- */

static char *tool(const cluster *c, const char *name)
{
	buf b = BUF_INIT;

	if (buf_printf(&b, "%s/%s", c->bin, name) < 0)
		return NULL;
	return buf_detach(&b, NULL);
}

/*
 * The process a lock file of the server names (data/postmaster.pid, or
 * the one beside its socket) when that process is alive and is not this
 * cluster's server; 0 otherwise.
 *
 * pg_ctl believes postmaster.pid whenever its PID is alive, and so does
 * the server at start with both files. After a crash, an OOM kill or a
 * reboot the PID can belong to another process of the cluster user (as
 * root, the postgres account that other servers on the machine share):
 * pg_ctl would call the cluster running, a start would wait for a server
 * that never answers, and a stop would signal that process. A postmaster
 * changes to its data folder before it writes either file and stays
 * there until it exits, so a live process that works in another folder
 * is not ours. The start time on line 3 is not compared: /proc counts a
 * start from a boot time that moves whenever the clock is stepped, and a
 * running server taken for stale would be reported stopped. What cannot
 * be told for sure (no file, a dead PID or a zombie, a folder we may not
 * read) is left to pg_ctl and the server, as before.
 */
static pid_t stale_pid(const cluster *c, const char *lock_file)
{
	char line[32], cwd[64], *end;
	struct stat proc_st, data_st;
	long pid = 0;
	ssize_t n = -1;
	int fd = open(lock_file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd >= 0) {
		n = read(fd, line, sizeof(line) - 1);
		close(fd);
	}
	if (n <= 0)
		return 0;
	line[n] = '\0';
	errno = 0;
	pid = strtol(line, &end, 10);
	if (errno || end == line || (*end != '\n' && *end != '\0'))
		return 0;
	if (pid < 0) /* a single-user server writes its PID negated */
		pid = -pid;
	if (pid <= 0 || pid > INT_MAX)
		return 0;
	snprintf(cwd, sizeof(cwd), "/proc/%ld/cwd", pid);
	if (stat(cwd, &proc_st) < 0 || stat(c->data, &data_st) < 0)
		return 0;
	if (proc_st.st_dev == data_st.st_dev && proc_st.st_ino == data_st.st_ino)
		return 0;
	return (pid_t)pid;
}

/*
 * Remove the server's lock files that stale_pid says name another
 * process, so that the server starts. Called under the lock: no start of
 * ours can write a new one meanwhile. PostgreSQL still refuses to start
 * while processes of the old server hold its shared memory: it finds that
 * segment from the data folder, not from postmaster.pid.
 */
static int drop_stale_lock_files(const cluster *c, bool quiet, pr_error *err)
{
	char *paths[2] = {join(c->data, "/postmaster.pid"), join(c->sock, SOCKET_NAME ".lock")};
	pid_t pid;
	int rc = 0;

	for (size_t i = 0; i < 2 && rc == 0; i++) {
		if (!paths[i]) {
			rc = oom(err);
		} else if ((pid = stale_pid(c, paths[i])) > 0) {
			if (unlink(paths[i]) < 0 && errno != ENOENT)
				rc = pr_error_set(err, PR_EIO, "cannot remove stale '%s': %s",
						  paths[i], strerror(errno));
			else
				say(quiet,
				    "removed the stale '%s': process %ld is not the server of "
				    "the private cluster",
				    paths[i], (long)pid);
		}
	}
	free(paths[0]);
	free(paths[1]);
	return rc;
}

/*
 * pg_ctl status: 0 running, 3 not running, 4 no cluster there. A
 * postmaster.pid that names another process is "not running", and pg_ctl
 * is not asked.
 */
static int ctl_status(const cluster *c, bool *running, pr_error *err)
{
	char *ctl = tool(c, "pg_ctl");
	char *pidfile = join(c->data, "/postmaster.pid");
	char *argv[] = {ctl, "status", "-D", c->data, NULL};
	int st = 0, rc = 0;

	*running = false;
	if (!ctl || !pidfile) {
		free(ctl);
		free(pidfile);
		return oom(err);
	}
	if (stale_pid(c, pidfile) > 0)
		st = 3;
	else
		rc = run_child(c, &st, argv, STATUS_TIMEOUT_S, err);
	free(ctl);
	free(pidfile);
	if (rc < 0)
		return rc;
	if (st == 0)
		*running = true;
	else if (st != 3 && st != 4)
		return pr_error_set(
			err, PR_ERR,
			"cannot tell whether the cluster in '%s' runs: pg_ctl status "
			"exited with %d (see '%s')",
			c->disp, st, c->ctl_log);
	return 0;
}

static int initdb(cluster *c, bool quiet, pr_error *err)
{
	char *bin = tool(c, "initdb");
	buf tmp = BUF_INIT, hba = BUF_INIT, conf = BUF_INIT;
	char user_opt[96], reason[512];
	off_t mark = file_size(c->ctl_log);
	int st = 0, rc = 0;

	if (!bin || buf_printf(&tmp, "%s/data.new.%ld", c->root, (long)getpid()) < 0 ||
	    buf_printf(&hba, "%s/pg_hba.conf", tmp.ptr) < 0 ||
	    buf_printf(&conf, "%s/postgresql.conf", tmp.ptr) < 0) {
		rc = oom(err);
		goto out;
	}
	snprintf(user_opt, sizeof(user_opt), "--username=%s", c->user.name);
	sweep_unfinished(c);
	{
		char *argv[] = {bin, "-D", tmp.ptr, user_opt, "--encoding=UTF8", "--no-locale",
				"--auth=trust", NULL};
		if ((rc = run_child(c, &st, argv, INITDB_TIMEOUT_S, err)) < 0)
			goto out;
	}
	if (st != 0) {
		log_reason(reason, sizeof(reason), c->ctl_log, mark);
		rc = pr_error_set(
			err, PR_ERR,
			"cannot create a PostgreSQL cluster in '%s': initdb failed: %s (see '%s')",
			c->disp, reason[0] ? reason : "no reason given", c->ctl_log);
		goto out;
	}
	/* The socket only, no TCP; the socket folder's mode is the access control. */
	if ((rc = write_user_file(
		     c, hba.ptr,
		     "# Written by profreg: the private cluster takes local "
		     "socket connections only.\n"
		     "local all all trust\n",
		     err)) < 0 ||
	    (rc = append_line(conf.ptr,
			      "\n# Added by profreg: its settings, rewritten at every start.\n"
			      "include_if_exists = 'profreg.conf'\n",
			      err)) < 0 ||
	    (rc = write_profreg_conf(c, tmp.ptr, err)) < 0)
		goto out;
	if (rename(tmp.ptr, c->data) < 0) {
		rc = pr_error_set(err, PR_EIO, "cannot rename '%s' to '%s': %s", tmp.ptr, c->data,
				  strerror(errno));
		goto out;
	}
	say(quiet, "created a private PostgreSQL cluster in '%s' (owner %s)", c->disp,
	    c->user.name);
out:
	if (rc < 0 && tmp.len && is_dir(tmp.ptr))
		nftw(tmp.ptr, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	buf_release(&tmp);
	buf_release(&hba);
	buf_release(&conf);
	free(bin);
	return rc;
}

/*
 * The socket folder: <home>/pg/run, or the short /tmp fallback, which must
 * be ours alone (anyone could have made /tmp/profreg-xxxxxxxx first).
 */
static int prepare_socket_dir(const cluster *c, bool quiet, pr_error *err)
{
	char *record = join(c->root, "/socket-dir");
	struct stat st;
	int rc = 0;

	if (!record)
		return oom(err);
	if (!c->sock_fallback) {
		if (unlink(record) < 0 && errno != ENOENT) {
			rc = pr_error_set(err, PR_EIO, "cannot remove '%s': %s", record,
					  strerror(errno));
			goto out;
		}
		rc = make_private_dir(c, c->sock, err);
		goto out;
	}
	if (mkdir(c->sock, 0700) == 0) {
		if ((rc = give_to_user(c, c->sock, err)) < 0)
			goto out;
		say(quiet,
		    "the socket path under '%s' would be too long for a Unix socket; using '%s'",
		    c->disp, c->sock);
	} else if (errno != EEXIST) {
		rc = pr_error_set(err, PR_EIO, "cannot create '%s': %s", c->sock, strerror(errno));
		goto out;
	}
	if (lstat(c->sock, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != c->user.uid ||
	    (st.st_mode & 077)) {
		rc = pr_error_set(err, PR_EIO,
				  "cannot use '%s' as the socket folder: it must be a folder of "
				  "user '%s' with mode 0700, and it is not",
				  c->sock, c->user.name);
		goto out;
	}
	{
		char line[64];
		snprintf(line, sizeof(line), "%s\n", c->sock);
		rc = fileio_write_atomic(record, line, strlen(line), 0644, err);
	}
out:
	free(record);
	return rc;
}

static int ctl_start(cluster *c, bool quiet, pr_error *err)
{
	char *ctl = tool(c, "pg_ctl");
	char *pidfile = join(c->data, "/postmaster.pid");
	char reason[512];
	int st = 0, rc = 0;
	bool crashed;

	if (!ctl || !pidfile) {
		rc = oom(err);
		goto out;
	}
	/* The server did not stop cleanly, whether or not its PID was taken since. */
	crashed = exists(pidfile);
	if ((rc = drop_stale_lock_files(c, quiet, err)) < 0)
		goto out;
	for (int attempt = 0; attempt < 2; attempt++) {
		char *argv[] = {ctl,  "start", "-D",       c->data, "-l", c->log,
				"-w", "-t",    CTL_WAIT_S, "-s",    NULL};
		bool up = false;
		off_t mark = file_size(c->log), ctl_mark = file_size(c->ctl_log);

		if ((rc = run_child(c, &st, argv, CTL_TIMEOUT_S, err)) < 0)
			goto out;
		if (st == 0)
			break;
		/*
		 * pg_ctl gives up waiting after -t seconds while a long crash
		 * recovery goes on; a server that runs is the caller's to wait for.
		 */
		if ((rc = ctl_status(c, &up, err)) < 0)
			goto out;
		if (up)
			break;
		/*
		 * After a crash the old server's children can hold its shared
		 * memory for a moment; one retry a second later gets past it.
		 */
		if (attempt == 0 && crashed) {
			nap_ms(1500);
			continue;
		}
		log_reason(reason, sizeof(reason), c->log, mark);
		if (!reason[0])
			log_reason(reason, sizeof(reason), c->ctl_log, ctl_mark);
		rc = pr_error_set(
			err, PR_ERR,
			"cannot start the private PostgreSQL cluster in '%s': %s (see '%s')",
			c->disp, reason[0] ? reason : "pg_ctl failed", c->log);
		goto out;
	}
	say(quiet, "started the private PostgreSQL cluster in '%s'", c->disp);
out:
	free(ctl);
	free(pidfile);
	return rc;
}

/*
 * Start the cluster unless it runs, and wait until it takes connections.
 * pg_ctl status trusts postmaster.pid, so it can say "running" for a
 * moment after a crash (the dead postmaster not yet reaped) or while the
 * server is still starting or stopping; ask the server itself, and go
 * round again, for a bounded time.
 */
static int ensure_running(cluster *c, bool quiet, pr_error *err)
{
	int64_t deadline = mono_ms() + READY_TIMEOUT_S * 1000;
	char *ping_ci = NULL, *ci = conninfo_for(c, "postgres");
	bool running = false, started = false;
	off_t mark = file_size(c->log);
	int rc = 0;

	if (!ci || !(ping_ci = join(ci, " connect_timeout=5"))) {
		rc = oom(err);
		goto out;
	}
	for (;;) {
		if ((rc = ctl_status(c, &running, err)) < 0)
			goto out;
		if (!running && started) {
			char reason[512];
			log_reason(reason, sizeof(reason), c->log, mark);
			rc = pr_error_set(err, PR_ERR,
					  "the private PostgreSQL cluster in '%s' stopped right "
					  "after it started: %s (see '%s')",
					  c->disp, reason[0] ? reason : "no reason logged", c->log);
			goto out;
		}
		if (!running) {
			if (c->user.drop)
				say(quiet,
				    "running the private cluster as system user '%s' "
				    "because profreg runs as root",
				    c->user.name);
			if ((rc = prepare_socket_dir(c, quiet, err)) < 0 ||
			    (rc = write_profreg_conf(c, c->data, err)) < 0 ||
			    (rc = ctl_start(c, quiet, err)) < 0)
				goto out;
			started = true;
		}
		if (PQping(ping_ci) == PQPING_OK)
			break;
		if (mono_ms() >= deadline) {
			rc = pr_error_set(err, PR_ERR,
					  "the private PostgreSQL cluster in '%s' does not take "
					  "connections on '%s' after %d s (see '%s')",
					  c->disp, c->sock, READY_TIMEOUT_S, c->log);
			goto out;
		}
		nap_ms(200);
	}
out:
	free(ci);
	free(ping_ci);
	return rc;
}

static void drop_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Create database "profreg" unless it exists. */
static int ensure_database(const cluster *c, bool create, bool quiet, pr_error *err)
{
	char *ci = conninfo_for(c, "postgres");
	const char *keys[] = {"dbname", "connect_timeout", "fallback_application_name", NULL};
	const char *vals[] = {ci, "10", "profreg", NULL};
	PGconn *conn = NULL;
	PGresult *res = NULL;
	int rc = 0;

	if (!ci)
		return oom(err);
	conn = PQconnectdbParams(keys, vals, 1);
	if (!conn || PQstatus(conn) != CONNECTION_OK) {
		const char *m = conn ? PQerrorMessage(conn) : "out of memory";
		rc = pr_error_set(err, PR_EDB,
				  "cannot connect to the private cluster in '%s': %.*s", c->disp,
				  (int)strcspn(m, "\r\n"), m);
		goto out;
	}
	PQsetNoticeProcessor(conn, drop_notice, NULL);
	res = PQexec(conn, "select 1 from pg_database where datname = '" DB_NAME "'");
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		rc = pr_error_set(
			err, PR_EDB,
			"database: cannot list the databases of the private cluster: %.*s",
			(int)strcspn(PQerrorMessage(conn), "\r\n"), PQerrorMessage(conn));
		goto out;
	}
	if (PQntuples(res) > 0)
		goto out;
	if (!create) {
		rc = pr_error_set(err, PR_EDB,
				  "no database: the private cluster in "
				  "'%s' has no database '" DB_NAME
				  "' (create it with 'profreg db init')", c->disp);
		goto out;
	}
	PQclear(res);
	res = PQexec(conn, "create database " DB_NAME " encoding 'UTF8' template template0");
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		if (state && strcmp(state, "42P04") == 0)
			goto out; /* made by someone else meanwhile */
		rc = pr_error_set(err, PR_EDB,
				  "database: cannot create database '" DB_NAME "': %.*s",
				  (int)strcspn(PQerrorMessage(conn), "\r\n"), PQerrorMessage(conn));
		goto out;
	}
	say(quiet, "created database '" DB_NAME "' in the private cluster");
out:
	PQclear(res);
	PQfinish(conn);
	free(ci);
	return rc;
}

/* ---- public ---------------------------------------------------------- */

/*
 * Start the cluster under <home>/pg; with `create`, make it (and its
 * database) first when absent. Without, a missing cluster or database is
 * an error that says how to make one: a job never creates a new, empty
 * world because of a typo in --home.
 */
static int start(char **conninfo_out, const char *home, bool create, bool quiet, pr_error *err)
{
	cluster c;
	int rc;

	*conninfo_out = NULL;
	if ((rc = cluster_paths(&c, home, create, err)) < 0)
		goto out;
	if (!create && !exists(c.data)) {
		rc = pr_error_set(err, PR_EDB,
				  "no database: '%s' holds no private PostgreSQL "
				  "cluster (create one with "
				  "'profreg db init', or give --db or PROFREG_DB)", c.disp);
		goto out;
	}
	if ((rc = pick_user(&c, err)) < 0)
		goto out;
	if ((rc = make_private_dir(&c, c.root, err)) < 0)
		goto out;
	if ((rc = open_home(&c, quiet, err)) < 0)
		goto out;
	if ((rc = check_reachable(&c, err)) < 0)
		goto out;
	if ((rc = take_lock(&c, err)) < 0)
		goto out;
	if ((rc = make_private_dir(&c, c.logdir, err)) < 0)
		goto out;
	/* The binaries are chosen after the lock: another start may just have made data/. */
	if ((rc = find_bin(&c, err)) < 0)
		goto out;
	if (!exists(c.data)) {
		if ((rc = initdb(&c, quiet, err)) < 0)
			goto out;
	} else {
		char *ver = join(c.data, "/PG_VERSION");
		bool ok = ver && exists(ver);
		free(ver);
		if (!ok) {
			rc = pr_error_set(err, PR_ERR,
					  "cannot use '%s': it exists but holds no "
					  "PostgreSQL cluster; move it away",
					  c.data);
			goto out;
		}
	}
	if ((rc = ensure_running(&c, quiet, err)) < 0)
		goto out;
	if ((rc = ensure_database(&c, create, quiet, err)) < 0)
		goto out;
	if (!(*conninfo_out = conninfo_for(&c, DB_NAME)))
		rc = oom(err);
out:
	cluster_release(&c);
	return rc;
}

int pgembed_start(char **conninfo_out, const char *home, bool quiet, pr_error *err)
{
	return start(conninfo_out, home, true, quiet, err);
}

int pgembed_open(char **conninfo_out, const char *home, bool quiet, pr_error *err)
{
	return start(conninfo_out, home, false, quiet, err);
}

int pgembed_stop(const char *home, bool quiet, pr_error *err)
{
	cluster c;
	bool running = false;
	char *ctl = NULL;
	int st = 0, rc;

	if ((rc = cluster_paths(&c, home, false, err)) < 0)
		goto out;
	if (!exists(c.data)) {
		say(quiet, "no private PostgreSQL cluster in '%s'", c.disp);
		goto out;
	}
	if ((rc = pick_user(&c, err)) < 0 || (rc = take_lock(&c, err)) < 0 ||
	    (rc = find_bin(&c, err)) < 0 || (rc = ctl_status(&c, &running, err)) < 0)
		goto out;
	if (!running) {
		say(quiet, "the private PostgreSQL cluster in '%s' is not running", c.disp);
		goto out;
	}
	if (!(ctl = tool(&c, "pg_ctl"))) {
		rc = oom(err);
		goto out;
	}
	{
		char *fast[] = {ctl,  "stop", "-D",       c.data, "-m", "fast",
				"-w", "-t",   CTL_WAIT_S, "-s",   NULL};
		char *now[] = {ctl,  "stop", "-D",       c.data, "-m", "immediate",
			       "-w", "-t",   CTL_WAIT_S, "-s",   NULL};
		if ((rc = run_child(&c, &st, fast, CTL_TIMEOUT_S, err)) < 0)
			goto out;
		if (st != 0) {
			/*
			 * Sessions that will not end: crash-stop; recovery on the next start is
			 * safe.
			 */
			if ((rc = run_child(&c, &st, now, CTL_TIMEOUT_S, err)) < 0)
				goto out;
			if (st != 0) {
				rc = pr_error_set(err, PR_ERR,
						  "cannot stop the private PostgreSQL "
						  "cluster in '%s' (see '%s')",
						  c.disp, c.ctl_log);
				goto out;
			}
		}
	}
	say(quiet, "stopped the private PostgreSQL cluster in '%s'", c.disp);
out:
	free(ctl);
	cluster_release(&c);
	return rc;
}

int pgembed_status(bool *running, char **conninfo_out, const char *home, pr_error *err)
{
	cluster c;
	int rc;

	*running = false;
	if (conninfo_out)
		*conninfo_out = NULL;
	if ((rc = cluster_paths(&c, home, false, err)) < 0)
		goto out;
	{
		/* No cluster, no owner to find: as root it would be postgres's. */
		pr_error uerr = PR_ERROR_INIT;
		if (pick_user(&c, &uerr) < 0) {
			if (exists(c.data)) {
				rc = pr_error_set(err, uerr.code, "%s", uerr.msg);
				goto out;
			}
			snprintf(c.user.name, sizeof(c.user.name), "postgres");
		}
	}
	if (exists(c.data)) {
		if ((rc = find_bin(&c, err)) < 0 || (rc = ctl_status(&c, running, err)) < 0)
			goto out;
	}
	if (conninfo_out && !(*conninfo_out = conninfo_for(&c, DB_NAME)))
		rc = oom(err);
out:
	cluster_release(&c);
	return rc;
}
