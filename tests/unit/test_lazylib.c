/*
 * test_lazylib.c: libraries loaded on first use. A library is loaded once
 * and its symbols work; a missing library or symbol ends the process as
 * the dynamic loader would have at start (one line naming it, status
 * 127); the functions profreg calls through common/lazy_*.c load their
 * library on the first call and not before, and give the library's own
 * answers (GSL's error handler, turned off before GSL is loaded, is off
 * once it is); and the binary itself links none of the libraries it
 * loads lazily, so that a command that does not use them never pays for
 * them.
 */
#define _DEFAULT_SOURCE
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

#include <dlfcn.h>
#include <expat.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_psi.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <protobuf-c/protobuf-c.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>
#include <zstd.h>

#include "common/lazylib.h"
#include "pipeline/profile.pb-c.h"

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

/*
 * True when the library `soname` is in the process (without loading it).
 * The sonames are the Makefile's, those profreg is built to load.
 */
static bool in_process(const char *soname)
{
	void *h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

/*
 * In a child, one after the other: each library is absent until the
 * first call of one of its functions, present after it, and the call
 * gives the library's answer. The child's exit status names the first
 * step that failed (0: none).
 */
static void load_each_on_first_call(void)
{
	const double x[] = {1, 2, 3, 10};
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	z_stream z;
	XML_Parser xp;
	yajl_handle yh;
	ZSTD_DCtx *dc;
	json_t *j;
	int step = 0, n = 0;

	/* GSL aborts on a domain error by default: off before it is loaded. */
	if (++step, in_process(LAZY_SONAME_GSL))
		_exit(step);
	gsl_set_error_handler_off();
	if (++step, in_process(LAZY_SONAME_GSL))
		_exit(step);
	if (++step, !isnan(gsl_sf_psi(-1.0))) /* a pole: GSL_EDOM */
		_exit(step);
	if (++step, !in_process(LAZY_SONAME_GSL) || gsl_stats_mean(x, 1, 4) != 4.0)
		_exit(step);

	if (++step, in_process(LAZY_SONAME_ZSTD))
		_exit(step);
	if (++step, !(dc = ZSTD_createDCtx()) || !in_process(LAZY_SONAME_ZSTD))
		_exit(step);
	ZSTD_freeDCtx(dc);

	if (++step, in_process(LAZY_SONAME_ZLIB))
		_exit(step);
	memset(&z, 0, sizeof(z));
	if (++step, inflateInit2(&z, 15 + 16) != Z_OK || !in_process(LAZY_SONAME_ZLIB))
		_exit(step);
	inflateEnd(&z);

	if (++step, in_process(LAZY_SONAME_EXPAT))
		_exit(step);
	if (++step, !(xp = XML_ParserCreate(NULL)) || !in_process(LAZY_SONAME_EXPAT) ||
	    XML_Parse(xp, "<a>", 3, 1) != XML_STATUS_ERROR ||
	    XML_GetErrorCode(xp) != XML_ERROR_NO_ELEMENTS)
		_exit(step);
	XML_ParserFree(xp);

	if (++step, in_process(LAZY_SONAME_YAJL))
		_exit(step);
	if (++step, !(yh = yajl_alloc(NULL, NULL, NULL)) || !in_process(LAZY_SONAME_YAJL) ||
	    yajl_parse(yh, (const unsigned char *)"[1, 2]", 6) != yajl_status_ok)
		_exit(step);
	yajl_free(yh);

	if (++step, in_process(LAZY_SONAME_JANSSON))
		_exit(step);
	if (++step, !(j = json_pack("{s:i}", "n", 7)) || !in_process(LAZY_SONAME_JANSSON) ||
	    json_unpack(j, "{s:i}", "n", &n) != 0 || n != 7)
		_exit(step);
	json_decref(j);

	if (++step, in_process(LAZY_SONAME_PROTOBUF))
		_exit(step);
	prof.duration_nanos = 150; /* field 10, varint: 2 bytes of key and value */
	if (++step, protobuf_c_message_get_packed_size(&prof.base) != 3 ||
	    !in_process(LAZY_SONAME_PROTOBUF))
		_exit(step);
	_exit(0);
}

static void test_each_library_loads_on_its_first_call(void **state)
{
	char err[1024];
	int st;

	(void)state;
	st = in_child(load_each_on_first_call, err, sizeof(err));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "failed at step %d (%s)\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), err);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
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
			 strstr(line, "libmicrohttpd") || strstr(line, "libgsl") ||
			 strstr(line, "libzstd") || strstr(line, "[libz.") ||
			 strstr(line, "libprotobuf-c") || strstr(line, "libexpat") ||
			 strstr(line, "libyajl") || strstr(line, "libjansson");
	}
	assert_int_equal(pclose(p), 0);
	assert_true(lines > 0); /* it read the binary */
	assert_int_equal(found, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* First: the next one loads zlib into this process for good. */
		cmocka_unit_test(test_each_library_loads_on_its_first_call),
		cmocka_unit_test(test_a_library_loads_once_and_its_symbols_work),
		cmocka_unit_test(test_a_missing_library_or_symbol_is_the_loaders_error),
		cmocka_unit_test(test_the_binary_links_none_of_the_lazy_libraries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
