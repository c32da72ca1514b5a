/*
 * fuzz_config.c: libFuzzer target for the configuration file (config_load).
 *
 * config_load reads a path, so the input is written to one temporary file
 * (made under /tmp once per process, rewritten on every run) that --config
 * names; home is a temporary directory that holds no profreg.json. Either
 * the load fails with PR_EUSAGE (or PR_ENOMEM) and a one-line message
 * that names the file, or it succeeds with a config that keeps the
 * promises of config.h: every routing list names configured targets,
 * every target has an http(s) URL and PagerDuty a secret source (not
 * two), services are unique and have types, every service's tiers keep
 * the baseline window plus a day and the hot tier inside the summary
 * tier. config_release must free all of it (ASan's leak check).
 *
 * Seeds (tests/fuzz/corpus/config/): the README's example, the full and
 * edge files of tests/cli/config.sh, an empty object, and invalid files
 * (bad JSON, duplicate key, a key with a newline, a route to an unknown
 * target, a tier shorter than the window, a top-level array, PagerDuty
 * without a secret).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define DAY_US (86400LL * 1000000LL)

static char file_path[] = "/tmp/profreg-fuzz-config.XXXXXX";
static char home_path[] = "/tmp/profreg-fuzz-home.XXXXXX";
static int file_fd = -1;

static void cleanup(void)
{
	unlink(file_path);
	rmdir(home_path);
}

static void setup(void)
{
	if (file_fd >= 0)
		return;
	if ((file_fd = mkstemp(file_path)) < 0 || !mkdtemp(home_path))
		abort();
	atexit(cleanup);
}

static void put_input(const uint8_t *data, size_t size)
{
	size_t off = 0;

	if (ftruncate(file_fd, 0) < 0)
		abort();
	while (off < size) {
		ssize_t n = pwrite(file_fd, data + off, size - off, (off_t)off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
}

static bool is_url(const char *s)
{
	return s && (!strncmp(s, "http://", 7) || !strncmp(s, "https://", 8));
}

static void check_names(const config *c, char *const *names, size_t n)
{
	if (n && !names)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!names[i] || !names[i][0] || !config_target_find(c, names[i]))
			abort();
}

static void check_tiers(const config *c, config_tiers t)
{
	if (t.hot_us < 0 || t.summary_us < t.hot_us || t.summary_top < 0 ||
	    c->analysis.window_us + DAY_US > t.summary_us)
		abort();
}

static void check_config(const config *c)
{
	char *const *names;
	size_t n;

	if (!c->path || strcmp(c->path, file_path) != 0)
		abort();
	for (size_t i = 0; i < c->paging.ntargets; i++) {
		const config_target *t = &c->paging.targets[i];
		if (!t->name || config_target_find(c, t->name) != t || !is_url(t->url))
			abort();
		if (t->kind != CONFIG_TARGET_PAGERDUTY && t->kind != CONFIG_TARGET_ALERTMANAGER &&
		    t->kind != CONFIG_TARGET_WEBHOOK)
			abort();
		if (t->kind == CONFIG_TARGET_PAGERDUTY && !t->secret_env && !t->secret_file)
			abort();
		if (t->secret_env && t->secret_file)
			abort();
	}
	check_names(c, c->paging.default_targets, c->paging.ndefault);
	for (size_t i = 0; i < c->paging.nteams; i++)
		check_names(c, c->paging.teams[i].targets, c->paging.teams[i].ntargets);
	if (c->paging.min_severity < STATS_SEV_LOW || c->paging.min_severity > STATS_SEV_CRITICAL ||
	    c->paging.max_attempts < 1 || c->paging.timeout_ms < 1)
		abort();
	if (c->metrics.pushgateway && !is_url(c->metrics.pushgateway))
		abort();
	if (c->limits.max_depth < 1 || c->limits.max_samples < 1 || c->limits.max_string_len < 16)
		abort();
	check_tiers(c, c->retention.tiers);
	for (size_t i = 0; i < c->nservices; i++) {
		const config_service *s = &c->services[i];
		if (!s->name || config_service_find(c, s->name) != s || s->ntypes < 1 || !s->types)
			abort();
		for (size_t k = 0; k < s->ntypes; k++)
			if (!s->types[k])
				abort();
		if (!s->page_set && s->npage)
			abort();
		check_names(c, s->page, s->npage);
		names = config_page_targets(c, s->name, NULL, &n);
		check_names(c, names, n);
		check_tiers(c, config_service_tiers(c, s->name));
	}
	/* A service the file does not name gets the defaults. */
	names = config_page_targets(c, "\x01not-a-service", "\x01no-team", &n);
	check_names(c, names, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pr_error err = PR_ERROR_INIT;
	config c;
	int rc;

	setup();
	put_input(data, size);
	rc = config_load(&c, file_path, &err);
	if (rc < 0) {
		if (rc != PR_EUSAGE && rc != PR_ENOMEM)
			abort();
		/*
		 * One line. Other control bytes (in a key, or in jansson's
		 * "near '...'") may stay: the CLI escapes them when it prints.
		 */
		if (err.code != rc || !strstr(err.msg, file_path) || strchr(err.msg, '\n') ||
		    strchr(err.msg, '\r'))
			abort();
		/* Released on failure: nothing left to free. */
		if (c.path || c.services || c.paging.targets || c.metrics.pushgateway)
			abort();
		return 0;
	}
	if (rc != 0 || err.code != 0)
		abort();
	check_config(&c);
	config_release(&c);
	if (c.path || c.services || c.nservices || c.paging.targets || c.paging.ntargets)
		abort();
	return 0;
}
