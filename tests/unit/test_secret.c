/*
 * test_secret.c: secrets from the environment or owner-only files; files
 * that others can read, that are not regular files, empty, oversized or
 * multi-line are refused with a message naming the file, never the value;
 * control characters (header injection) are refused from either source;
 * which URLs a secret may travel to in plain http (loopback only).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "jobs/secret.h"

#define VALUE "s3cr3t-routing-key-0123456789ab"

static char dir[256];

static int setup(void **state)
{
	const char *tmp = getenv("PROFREG_TEST_TMP");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_secret.XXXXXX", tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static const char *write_file(const char *name, const char *text, mode_t mode)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static void test_env_secret_is_read(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char *s = NULL;

	(void)state;
	setenv("PR_TEST_SECRET", VALUE "\n", 1);
	assert_int_equal(secret_read(&s, "PR_TEST_SECRET", NULL, &err), 0);
	assert_string_equal(s, VALUE);
	secret_free(s);
	unsetenv("PR_TEST_SECRET");
}

static void test_unset_env_is_refused_by_name(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char *s = NULL;

	(void)state;
	unsetenv("PR_TEST_NOPE");
	assert_int_equal(secret_read(&s, "PR_TEST_NOPE", NULL, &err), PR_EREFUSED);
	assert_null(s);
	assert_non_null(strstr(err.msg, "'PR_TEST_NOPE'"));
	assert_non_null(strstr(err.msg, "not set"));
}

static void test_owner_only_file_is_read_and_newline_stripped(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char *s = NULL;

	(void)state;
	assert_int_equal(secret_read(&s, NULL, write_file("ok", VALUE "\r\n", 0600), &err), 0);
	assert_string_equal(s, VALUE);
	secret_free(s);
	assert_int_equal(secret_read(&s, NULL, write_file("ro", VALUE, 0400), &err), 0);
	assert_string_equal(s, VALUE);
	secret_free(s);
}

static void test_group_or_world_readable_file_is_refused(void **state)
{
	static const mode_t modes[] = {0644, 0640, 0604, 0620};
	char want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		pr_error err = PR_ERROR_INIT;
		char *s = NULL;
		const char *path = write_file("open", VALUE "\n", modes[i]);
		assert_int_equal(secret_read(&s, NULL, path, &err), PR_EREFUSED);
		assert_null(s);
		assert_non_null(strstr(err.msg, path));
		snprintf(want, sizeof(want), "(mode %04o)", (unsigned)modes[i]);
		assert_non_null(strstr(err.msg, want));
		assert_null(strstr(err.msg, VALUE));
		assert_null(strchr(err.msg, '\n'));
	}
}

static void test_directory_and_symlink_are_refused(void **state)
{
	pr_error err = PR_ERROR_INIT, err2 = PR_ERROR_INIT;
	char link[600], *s = NULL;
	const char *target = write_file("real", VALUE, 0600);

	(void)state;
	assert_int_equal(secret_read(&s, NULL, dir, &err), PR_EREFUSED);
	assert_non_null(strstr(err.msg, "not a regular file"));
	snprintf(link, sizeof(link), "%s/link", dir);
	unlink(link);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(secret_read(&s, NULL, link, &err2), PR_EIO);
	assert_non_null(strstr(err2.msg, "symbolic link"));
	assert_null(s);
}

static void test_empty_multiline_and_oversized_files_are_refused(void **state)
{
	pr_error e1 = PR_ERROR_INIT, e2 = PR_ERROR_INIT, e3 = PR_ERROR_INIT, e4 = PR_ERROR_INIT;
	char *big = malloc(SECRET_MAX + 100), *s = NULL;

	(void)state;
	memset(big, 'k', SECRET_MAX + 99);
	big[SECRET_MAX + 99] = '\0';
	assert_int_equal(secret_read(&s, NULL, write_file("empty", "\n", 0600), &e1), PR_EDATA);
	assert_non_null(strstr(e1.msg, "empty"));
	assert_int_equal(secret_read(&s, NULL, write_file("two", VALUE "\nmore\n", 0600), &e2),
			 PR_EDATA);
	assert_non_null(strstr(e2.msg, "more than one line"));
	assert_null(strstr(e2.msg, VALUE));
	assert_int_equal(secret_read(&s, NULL, write_file("big", big, 0600), &e3), PR_ELIMIT);
	assert_non_null(strstr(e3.msg, "larger than"));
	assert_int_equal(secret_read(&s, NULL, "/nonexistent/secret", &e4), PR_EIO);
	assert_non_null(strstr(e4.msg, "'/nonexistent/secret'"));
	assert_null(s);
	free(big);
}

static void test_file_owned_by_another_user_is_refused(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char *s = NULL;
	const char *path = write_file("theirs", VALUE, 0600);

	(void)state;
	/* Only root can give a file away; as anyone else the case cannot be built. */
	if (geteuid() != 0 || chown(path, 65534, 65534) != 0) {
		skip();
		return;
	}
	assert_int_equal(secret_read(&s, NULL, path, &err), PR_EREFUSED);
	assert_non_null(strstr(err.msg, "owned by uid 65534"));
	assert_null(s);
}

static void test_env_secret_with_a_control_character_is_refused_by_name(void **state)
{
	/* A line break would add a header after "Authorization: Bearer ". */
	static const char *const bad[] = {
		"abcdefgh\r\nX-Injected: 1", "abcdefgh\nX-Injected: 1", "abcd\refgh", "abcd\tefgh",
		"abcd\x7f" "efgh", "abcd\x01" "efgh", "\r\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		pr_error err = PR_ERROR_INIT;
		char *s = NULL;
		setenv("PR_TEST_CTL", bad[i], 1);
		assert_int_equal(secret_read(&s, "PR_TEST_CTL", NULL, &err), PR_EDATA);
		assert_null(s);
		assert_non_null(strstr(err.msg, "'PR_TEST_CTL'"));
		assert_null(strstr(err.msg, "abcd"));
		assert_null(strstr(err.msg, "Injected"));
	}
	unsetenv("PR_TEST_CTL");
}

static void test_file_secret_with_a_control_character_is_refused_by_name(void **state)
{
	pr_error e1 = PR_ERROR_INIT, e2 = PR_ERROR_INIT;
	char *s = NULL;
	const char *path;

	(void)state;
	path = write_file("cr", "abcdefgh\rX-Injected: 1\n", 0600);
	assert_int_equal(secret_read(&s, NULL, path, &e1), PR_EDATA);
	assert_non_null(strstr(e1.msg, path));
	assert_non_null(strstr(e1.msg, "control character"));
	assert_null(strstr(e1.msg, "Injected"));
	path = write_file("tab", "abcd\tefgh", 0600);
	assert_int_equal(secret_read(&s, NULL, path, &e2), PR_EDATA);
	assert_non_null(strstr(e2.msg, "control character"));
	assert_null(s);
	/* One trailing CRLF is still just the end of the line. */
	path = write_file("crlf", VALUE "\r\n", 0600);
	assert_int_equal(secret_read(&s, NULL, path, &e2), 0);
	assert_string_equal(s, VALUE);
	secret_free(s);
}

static void test_secret_url_is_https_or_loopback_http(void **state)
{
	static const char *const safe[] = {
		"https://events.pagerduty.com", "https://x.example:8443/a?b#c",
		"http://127.0.0.1:9093/",       "http://127.255.0.9/hook",
		"http://[::1]:8080/x",          "http://localhost/",
		"http://LOCALHOST:1",           "http://localhost./x",
		"http://user:pw@127.0.0.1/x",
	};
	static const char *const unsafe[] = {
		"http://hooks.example/x",
		"http://128.0.0.1/",
		"http://127.0.0.1@evil.example/",
		"http://127.0.0.1.evil.example/",
		"http://localhost.evil.example/",
		"http://localhostx/",
		"http://127.0.0/",
		"http://127.0.0.256/",
		"http://[::2]/",
		"http://[::1/",
		"http://evil.example#@127.0.0.1",
		"http://evil.example/?@127.0.0.1",
		"ftp://127.0.0.1/",
		"http://",
		"",
		NULL,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(safe) / sizeof(*safe); i++)
		if (!secret_url_safe(safe[i]))
			fail_msg("'%s' should be safe", safe[i]);
	for (size_t i = 0; i < sizeof(unsafe) / sizeof(*unsafe); i++)
		if (secret_url_safe(unsafe[i]))
			fail_msg("'%s' should not be safe", unsafe[i] ? unsafe[i] : "(null)");
}

static void test_no_names_means_no_secret(void **state)
{
	pr_error err = PR_ERROR_INIT;
	char *s = (char *)"x";

	(void)state;
	assert_int_equal(secret_read(&s, NULL, NULL, &err), 0);
	assert_null(s);
	secret_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_secret_is_read),
		cmocka_unit_test(test_unset_env_is_refused_by_name),
		cmocka_unit_test(test_owner_only_file_is_read_and_newline_stripped),
		cmocka_unit_test(test_group_or_world_readable_file_is_refused),
		cmocka_unit_test(test_directory_and_symlink_are_refused),
		cmocka_unit_test(test_empty_multiline_and_oversized_files_are_refused),
		cmocka_unit_test(test_file_owned_by_another_user_is_refused),
		cmocka_unit_test(test_no_names_means_no_secret),
		cmocka_unit_test(test_env_secret_with_a_control_character_is_refused_by_name),
		cmocka_unit_test(test_file_secret_with_a_control_character_is_refused_by_name),
		cmocka_unit_test(test_secret_url_is_https_or_loopback_http),
	};
	return cmocka_run_group_tests_name("secret", tests, setup, NULL);
}
