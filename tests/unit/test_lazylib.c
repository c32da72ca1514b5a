/*
 * test_lazylib.c: libraries loaded on first use. A library is loaded once
 * and its symbols work; a missing library or symbol ends the process as
 * the dynamic loader would have at start (one line naming it, status
 * 127); and the binary itself links none of the libraries it loads
 * lazily, so that a command that does not use them never pays for them.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/lazylib.h"

/* Run `fn` in a child with standard error in `err`; returns its wait status. */
static int in_child(void (*fn)(void), char *err, size_t cap)
{
	int fds[2], status;
	ssize_t n;
	size_t got = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	assert_true((pid = fork()) >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		fn();
		_exit(0);
	}
	close(fds[1]);
	while (got + 1 < cap && (n = read(fds[0], err + got, cap - 1 - got)) > 0)
		got += (size_t)n;
	err[got] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static const char *const zlib_names[] = {"zlibVersion"};
static void *zlib_fns[1];
static lazylib zlib = {"libz.so.1", zlib_names, zlib_fns, 1, false};

static void test_a_library_loads_once_and_its_symbols_work(void **state)
{
	const char *(*version)(void);

	(void)state;
	assert_false(lazylib_loaded(&zlib));
	lazylib_load(&zlib);
	assert_true(lazylib_loaded(&zlib));
	memcpy(&version, &zlib.fns[0], sizeof(version));
	assert_non_null(version);
	assert_int_equal(version()[0], '1');
	lazylib_load(&zlib); /* the second call finds it loaded */
	assert_ptr_equal(zlib.fns[0], zlib_fns[0]);
}

static const char *const none_names[] = {"nothing"};
static void *none_fns[1];
static lazylib missing_lib = {"libprofreg-test-missing.so.0", none_names, none_fns, 1, false};

static void load_missing_lib(void)
{
	lazylib_load(&missing_lib);
}

static const char *const bad_names[] = {"zlibVersion", "profreg_no_such_symbol"};
static void *bad_fns[2];
static lazylib missing_sym = {"libz.so.1", bad_names, bad_fns, 2, false};

static void load_missing_sym(void)
{
	lazylib_load(&missing_sym);
}

static void test_a_missing_library_or_symbol_is_the_loaders_error(void **state)
{
	char err[1024];
	int st;

	(void)state;
	st = in_child(load_missing_lib, err, sizeof(err));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 127);
	assert_non_null(strstr(err, "error while loading shared libraries: "
				    "libprofreg-test-missing.so.0"));
	assert_non_null(strchr(err, '\n'));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1); /* one line */

	st = in_child(load_missing_sym, err, sizeof(err));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 127);
	assert_non_null(strstr(err, "libz.so.1"));
	assert_non_null(strstr(err, "profreg_no_such_symbol"));
}

static void test_the_binary_links_none_of_the_lazy_libraries(void **state)
{
	const char *bin = getenv("PROFREG_BIN");
	char cmd[4096], line[512];
	int found = 0, lines = 0;
	FILE *p;

	(void)state;
	if (!bin)
		bin = "bin/profreg";
	snprintf(cmd, sizeof(cmd), "readelf -d '%s' 2>/dev/null", bin);
	assert_non_null(p = popen(cmd, "r"));
	while (fgets(line, sizeof(line), p)) {
		if (!strstr(line, "(NEEDED)"))
			continue;
		lines++;
		found += strstr(line, "libcurl") || strstr(line, "libgit2") ||
			 strstr(line, "libarchive") || strstr(line, "libbpf") ||
			 strstr(line, "libmicrohttpd");
	}
	assert_int_equal(pclose(p), 0);
	assert_true(lines > 0); /* it read the binary */
	assert_int_equal(found, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_library_loads_once_and_its_symbols_work),
		cmocka_unit_test(test_a_missing_library_or_symbol_is_the_loaders_error),
		cmocka_unit_test(test_the_binary_links_none_of_the_lazy_libraries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
