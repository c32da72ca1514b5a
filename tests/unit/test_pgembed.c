/*
 * test_pgembed.c: the private PostgreSQL cluster, for real: created once
 * (initdb is the slow part, so the tests share one cluster and run in
 * order), started, restarted after a crash and past a postmaster.pid whose PID
 * another process took, moved to a home whose socket
 * path is too long, and refused where it cannot work.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <libpq-fe.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "pipeline/db.h"
#include "pipeline/pgembed.h"

typedef struct fixture {
	char base[512];  /* private temporary folder */
	char home[600];  /* the shared cluster's home */
	char longhome[700];
	char *conninfo;  /* from the first start */
	pid_t helper;    /* a process that is not the server, killed at the end */
} fixture;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int group_setup(void **state)
{
	const char *tmp = getenv("PROFREG_TEST_TMP");
	fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->base, sizeof(f->base), "%s/pgembed.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->base)) {
		fprintf(stderr, "cannot create a folder under '%s': %s\n", tmp ? tmp : "/tmp",
			strerror(errno));
		free(f);
		return -1;
	}
	/* As root the cluster runs as postgres, which must get through this folder. */
	chmod(f->base, 0755);
	snprintf(f->home, sizeof(f->home), "%s/home", f->base);
	*state = f;
	return 0;
}

static int group_teardown(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	char *ci = NULL;
	bool running;

	if (!f)
		return 0;
	if (f->helper > 0) {
		kill(f->helper, SIGKILL);
		waitpid(f->helper, NULL, 0);
	}
	pgembed_stop(f->home, true, &err);
	if (f->longhome[0]) {
		pgembed_stop(f->longhome, true, &err);
		/* The short socket folder lives outside the home. */
		if (pgembed_status(&running, &ci, f->longhome, &err) == 0 && ci) {
			char *host = strstr(ci, "host=");
			if (host) {
				host += 5;
				host[strcspn(host, " ")] = '\0';
				nftw(host, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
			}
		}
		free(ci);
	}
	nftw(f->base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f->conninfo);
	free(f);
	return 0;
}

static char *start(const char *home)
{
	pr_error err = PR_ERROR_INIT;
	char *ci = NULL;

	if (pgembed_start(&ci, home, true, &err) < 0)
		fail_msg("pgembed_start: %s", err.msg);
	assert_non_null(ci);
	return ci;
}

/* The first line of data/postmaster.pid: the running server's process id. */
static pid_t postmaster_pid(const char *home)
{
	char path[800], line[32] = "";
	FILE *fp;

	snprintf(path, sizeof(path), "%s/pg/data/postmaster.pid", home);
	if (!(fp = fopen(path, "r")))
		return 0;
	if (!fgets(line, sizeof(line), fp))
		line[0] = '\0';
	fclose(fp);
	return (pid_t)strtol(line, NULL, 10);
}

/* A statement through the conninfo the cluster handed out; returns the first value. */
static char *query_one(const char *conninfo, const char *sql)
{
	PGconn *c = PQconnectdb(conninfo);
	PGresult *res;
	char *v = NULL;

	if (PQstatus(c) != CONNECTION_OK)
		fail_msg("cannot connect with '%s': %s", conninfo, PQerrorMessage(c));
	res = PQexec(c, sql);
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0)
		v = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	PQfinish(c);
	assert_non_null(v);
	return v;
}

static void test_start_creates_the_cluster_and_its_database(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	char path[800], *v;
	struct stat st;
	db *d = NULL;
	int applied = 0;

	f->conninfo = start(f->home);
	assert_non_null(strstr(f->conninfo, "dbname=profreg"));
	assert_non_null(strstr(f->conninfo, "/pg/run"));
	snprintf(path, sizeof(path), "%s/pg/data/PG_VERSION", f->home);
	assert_int_equal(stat(path, &st), 0);
	/* No initdb leftovers beside the cluster. */
	snprintf(path, sizeof(path), "%s/pg/data.new.%ld", f->home, (long)getpid());
	assert_int_not_equal(stat(path, &st), 0);

	snprintf(path, sizeof(path), "%s/pg/run", f->home);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("postgres");
		assert_non_null(pw);
		assert_int_equal(st.st_uid, pw->pw_uid);
		snprintf(path, sizeof(path), "%s/pg/data", f->home);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_uid, pw->pw_uid);
		assert_non_null(strstr(f->conninfo, "user=postgres"));
	}

	/* The connection string works for the index: migrate and write. */
	assert_int_equal(db_open(&d, f->conninfo, &err), 0);
	assert_int_equal(db_migrate(d, &applied, &err), 0);
	assert_true(applied > 0);
	assert_int_equal(db_service_add(d, "survivor", NULL, &err), 0);
	db_close(d);

	/* Socket only: no TCP listener. */
	v = query_one(f->conninfo, "show listen_addresses");
	assert_string_equal(v, "");
	free(v);
}

static void test_a_second_start_changes_nothing(void **state)
{
	fixture *f = *state;
	pid_t before = postmaster_pid(f->home);
	char *ci = start(f->home);

	assert_true(before > 0);
	assert_string_equal(ci, f->conninfo);
	assert_int_equal(postmaster_pid(f->home), before);
	free(ci);
}

static void test_status_follows_start_and_stop(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	bool running = false;
	char *ci = NULL;

	assert_int_equal(pgembed_status(&running, &ci, f->home, &err), 0);
	assert_true(running);
	assert_string_equal(ci, f->conninfo);
	free(ci);
	ci = NULL;

	assert_int_equal(pgembed_stop(f->home, true, &err), 0);
	assert_int_equal(pgembed_status(&running, &ci, f->home, &err), 0);
	assert_false(running);
	assert_string_equal(ci, f->conninfo); /* what it would be */
	free(ci);
	/* Stopping a stopped cluster is fine. */
	assert_int_equal(pgembed_stop(f->home, true, &err), 0);
	/* And it comes back with what it had. */
	ci = start(f->home);
	free(ci);
	ci = query_one(f->conninfo, "select count(*) from services where name = 'survivor'");
	assert_string_equal(ci, "1");
	free(ci);
}

static void test_start_recovers_after_the_server_is_killed(void **state)
{
	fixture *f = *state;
	pid_t pid = postmaster_pid(f->home);
	char *ci, *v;

	assert_true(pid > 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	/* No waiting: start must cope with the stale postmaster.pid at once. */
	ci = start(f->home);
	assert_string_equal(ci, f->conninfo);
	assert_true(postmaster_pid(f->home) != pid);
	v = query_one(ci, "select count(*) from services where name = 'survivor'");
	assert_string_equal(v, "1");
	free(v);
	free(ci);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * `sleep 60` as the cluster's user (postgres as root), in '/': what a
 * reused PID looks like. Returns once it runs sleep, so that it has its
 * final user (the pipe closes at exec).
 */
static pid_t spawn_helper(void)
{
	struct passwd *pw = geteuid() == 0 ? getpwnam("postgres") : NULL;
	int fds[2];
	char c;
	pid_t pid;

	if (geteuid() == 0)
		assert_non_null(pw);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (pw && (setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 ||
			   setuid(pw->pw_uid) < 0))
			_exit(126);
		if (chdir("/") < 0)
			_exit(126);
		execlp("sleep", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (read(fds[0], &c, 1) < 0 && errno == EINTR)
		;
	close(fds[0]);
	return pid;
}

/* Put `pid` on the first line of the lock file `name` under <home>/pg, keeping the rest. */
static void rewrite_pid(const char *home, const char *name, pid_t pid)
{
	char path[800], text[4096], *rest;
	size_t n;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/pg/%s", home, name);
	fp = fopen(path, "r");
	assert_non_null(fp);
	n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	text[n] = '\0';
	rest = strchr(text, '\n');
	assert_non_null(rest);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%ld%s", (long)pid, rest);
	assert_int_equal(fclose(fp), 0);
}

static void test_a_pid_file_naming_another_process_is_stale(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	pid_t old = postmaster_pid(f->home);
	bool running = true;
	int64_t t0;
	char *ci, *v;

	/*
	 * A crash, then the old server's PID taken by an unrelated process of
	 * its user: both of the server's lock files name that process.
	 */
	assert_true(old > 0);
	assert_int_equal(kill(old, SIGKILL), 0);
	t0 = mono_ms();
	while (kill(old, 0) == 0 && mono_ms() - t0 < 5000)
		usleep(20000); /* until it is reaped, as a PID is before it is reused */
	f->helper = spawn_helper();
	rewrite_pid(f->home, "data/postmaster.pid", f->helper);
	rewrite_pid(f->home, "run/.s.PGSQL.5432.lock", f->helper);

	assert_int_equal(pgembed_status(&running, NULL, f->home, &err), 0);
	assert_false(running);
	/* Stop has nothing to stop, and signals no one. */
	assert_int_equal(pgembed_stop(f->home, true, &err), 0);
	assert_int_equal(waitpid(f->helper, NULL, WNOHANG), 0);

	/* Start does not wait for a server that never answers. */
	t0 = mono_ms();
	ci = start(f->home);
	assert_true(mono_ms() - t0 < 15000);
	assert_string_equal(ci, f->conninfo);
	assert_int_not_equal(postmaster_pid(f->home), f->helper);
	assert_int_equal(waitpid(f->helper, NULL, WNOHANG), 0);
	v = query_one(ci, "select count(*) from services where name = 'survivor'");
	assert_string_equal(v, "1");
	free(v);
	free(ci);
	assert_int_equal(pgembed_status(&running, NULL, f->home, &err), 0);
	assert_true(running);

	kill(f->helper, SIGKILL);
	assert_int_equal(waitpid(f->helper, NULL, 0), f->helper);
	f->helper = 0;
}

static void test_concurrent_starts_start_one_server(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	pid_t kids[3];
	bool running = false;

	assert_int_equal(pgembed_stop(f->home, true, &err), 0);
	for (int i = 0; i < 3; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (kids[i] == 0) {
			pr_error e = PR_ERROR_INIT;
			char *ci = NULL;
			int rc = pgembed_start(&ci, f->home, true, &e);
			if (rc < 0)
				fprintf(stderr, "child %d: %s\n", i, e.msg);
			_exit(rc < 0 || !ci || strcmp(ci, f->conninfo) != 0);
		}
	}
	for (int i = 0; i < 3; i++) {
		int st = 0;
		assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
	assert_int_equal(pgembed_status(&running, NULL, f->home, &err), 0);
	assert_true(running);
}

static void test_failed_start_quotes_the_server_log(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	char conf[800], *ci = NULL;
	FILE *fp;
	long size;

	assert_int_equal(pgembed_stop(f->home, true, &err), 0);
	snprintf(conf, sizeof(conf), "%s/pg/data/postgresql.conf", f->home);
	fp = fopen(conf, "a");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	size = ftell(fp);
	fputs("\nshared_buffers = 'plenty'\n", fp);
	fclose(fp);

	assert_int_equal(pgembed_start(&ci, f->home, true, &err), PR_ERR);
	assert_null(ci);
	assert_non_null(strstr(err.msg, "cannot start the private PostgreSQL cluster in '"));
	assert_non_null(strstr(err.msg, "shared_buffers"));
	assert_non_null(strstr(err.msg, "postgres.log"));

	assert_int_equal(truncate(conf, size), 0);
	pr_error_clear(&err);
	ci = start(f->home);
	free(ci);
}

static void test_a_long_home_uses_a_short_socket_folder_under_tmp(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	char from[800], to[800], rec[800], line[128] = "", *ci, *v;
	struct stat st;
	FILE *fp;
	bool running = false;

	/* Move the (stopped) cluster: a home is relocatable, and this one is long. */
	assert_int_equal(pgembed_stop(f->home, true, &err), 0);
	snprintf(
		f->longhome, sizeof(f->longhome),
		"%s/a-rather-long-folder-name-for-state"
		"/and-another-level-down-for-good-measure/home",
		f->base);
	assert_true(strlen(f->longhome) + strlen("/pg/run/.s.PGSQL.5432") > 107);
	snprintf(to, sizeof(to), "%s/a-rather-long-folder-name-for-state", f->base);
	assert_int_equal(mkdir(to, 0755), 0);
	snprintf(to, sizeof(to),
		 "%s/a-rather-long-folder-name-for-state/and-another-level-down-for-good-measure",
		 f->base);
	assert_int_equal(mkdir(to, 0755), 0);
	assert_int_equal(mkdir(f->longhome, 0755), 0);
	snprintf(from, sizeof(from), "%s/pg", f->home);
	snprintf(to, sizeof(to), "%s/pg", f->longhome);
	assert_int_equal(rename(from, to), 0);

	ci = start(f->longhome);
	assert_non_null(strstr(ci, "host=/tmp/profreg-"));
	assert_int_equal(strcspn(strstr(ci, "host=") + 5, " "), strlen("/tmp/profreg-") + 8);
	snprintf(rec, sizeof(rec), "%s/pg/socket-dir", f->longhome);
	fp = fopen(rec, "r");
	assert_non_null(fp);
	assert_non_null(fgets(line, sizeof(line), fp));
	fclose(fp);
	line[strcspn(line, "\n")] = '\0';
	assert_non_null(strstr(ci, line));
	assert_int_equal(lstat(line, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);

	v = query_one(ci, "select count(*) from services where name = 'survivor'");
	assert_string_equal(v, "1");
	free(v);
	{
		char *again = NULL;
		assert_int_equal(pgembed_status(&running, &again, f->longhome, &err), 0);
		assert_true(running);
		assert_string_equal(again, ci);
		free(again);
	}
	free(ci);
	assert_int_equal(pgembed_stop(f->longhome, true, &err), 0);
}

static void test_a_home_without_a_cluster_is_not_running(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	char home[700], *ci = NULL;
	bool running = true;
	struct stat st;

	snprintf(home, sizeof(home), "%s/never-started", f->base);
	assert_int_equal(pgembed_status(&running, &ci, home, &err), 0);
	assert_false(running);
	assert_non_null(ci);
	free(ci);
	assert_int_equal(pgembed_stop(home, true, &err), 0);
	/* Asking created nothing. */
	assert_int_not_equal(stat(home, &st), 0);
}

static void test_missing_server_binaries_are_named_before_any_folder_is_made(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	char home[700], data[800], *ci = NULL;
	struct stat st;

	snprintf(home, sizeof(home), "%s/no-binaries", f->base);
	setenv("PROFREG_PG_BIN", "/nonexistent/pg/bin", 1);
	assert_int_equal(pgembed_start(&ci, home, true, &err), PR_ERR);
	unsetenv("PROFREG_PG_BIN");
	assert_null(ci);
	assert_string_equal(err.msg,
			    "cannot use PROFREG_PG_BIN '/nonexistent/pg/bin': no "
			    "executable initdb and pg_ctl there");
	snprintf(data, sizeof(data), "%s/pg/data", home);
	assert_int_not_equal(stat(data, &st), 0);
	/* Nor a home or pg folder half made. */
	assert_int_not_equal(stat(home, &st), 0);
}

static void write_script(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

static void test_a_failing_initdb_leaves_nothing_and_says_why(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	char bin[700], path[800], home[700], *ci = NULL;
	struct stat st;

	snprintf(bin, sizeof(bin), "%s/fakebin", f->base);
	assert_int_equal(mkdir(bin, 0755), 0);
	snprintf(path, sizeof(path), "%s/initdb", bin);
	/* Like the real one: makes the folder, fails, and says so on stderr. */
	write_script(path, "#!/bin/sh\n"
			   "mkdir -p \"$2\" && touch \"$2/PG_VERSION\"\n"
			   "echo 'initdb: error: the disk is on fire' >&2\n"
			   "echo 'initdb: removing contents of data directory' >&2\n"
			   "exit 1\n");
	snprintf(path, sizeof(path), "%s/pg_ctl", bin);
	write_script(path, "#!/bin/sh\nexit 1\n");
	snprintf(home, sizeof(home), "%s/initdb-fails", f->base);

	setenv("PROFREG_PG_BIN", bin, 1);
	assert_int_equal(pgembed_start(&ci, home, true, &err), PR_ERR);
	unsetenv("PROFREG_PG_BIN");
	assert_null(ci);
	assert_non_null(strstr(err.msg, "initdb failed: initdb: error: the disk is on fire"));
	/* Neither a cluster nor the half-made one is left to trip the next start. */
	snprintf(path, sizeof(path), "%s/pg/data", home);
	assert_int_not_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/pg/data.new.%ld", home, (long)getpid());
	assert_int_not_equal(stat(path, &st), 0);
}

static void test_a_home_with_shell_characters_is_refused(void **state)
{
	static const char *const names[] = {"dollar$HOME", "back`tick`", "quote\"d", "back\\slash",
					    "new\nline"};
	fixture *f = *state;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		pr_error err = PR_ERROR_INIT;
		char home[700], *ci = NULL;
		struct stat st;
		snprintf(home, sizeof(home), "%s/%s", f->base, names[i]);
		assert_int_equal(pgembed_start(&ci, home, true, &err), PR_EUSAGE);
		assert_null(ci);
		assert_non_null(strstr(err.msg, "which pg_ctl cannot take"));
		assert_int_not_equal(stat(home, &st), 0);
	}
}

static void test_a_home_the_cluster_user_cannot_reach_is_explained(void **state)
{
	fixture *f = *state;
	pr_error err = PR_ERROR_INIT;
	char priv[700], home[800], *ci = NULL;

	if (geteuid() != 0)
		skip(); /* only root hands the cluster to another user */
	snprintf(priv, sizeof(priv), "%s/private", f->base);
	assert_int_equal(mkdir(priv, 0700), 0);
	snprintf(home, sizeof(home), "%s/home", priv);
	assert_int_equal(pgembed_start(&ci, home, true, &err), PR_EIO);
	assert_null(ci);
	assert_non_null(strstr(err.msg, "cannot reach"));
	assert_non_null(strstr(err.msg, priv));
	assert_non_null(strstr(err.msg, "is not searchable"));
	assert_non_null(strstr(err.msg, "/tmp or /var/lib"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_creates_the_cluster_and_its_database),
		cmocka_unit_test(test_a_second_start_changes_nothing),
		cmocka_unit_test(test_status_follows_start_and_stop),
		cmocka_unit_test(test_start_recovers_after_the_server_is_killed),
		cmocka_unit_test(test_a_pid_file_naming_another_process_is_stale),
		cmocka_unit_test(test_concurrent_starts_start_one_server),
		cmocka_unit_test(test_failed_start_quotes_the_server_log),
		cmocka_unit_test(test_a_long_home_uses_a_short_socket_folder_under_tmp),
		cmocka_unit_test(test_a_home_without_a_cluster_is_not_running),
		cmocka_unit_test(test_missing_server_binaries_are_named_before_any_folder_is_made),
		cmocka_unit_test(test_a_failing_initdb_leaves_nothing_and_says_why),
		cmocka_unit_test(test_a_home_with_shell_characters_is_refused),
		cmocka_unit_test(test_a_home_the_cluster_user_cannot_reach_is_explained),
	};

	return cmocka_run_group_tests_name("pgembed", tests, group_setup, group_teardown);
}
