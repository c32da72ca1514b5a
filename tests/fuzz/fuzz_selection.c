/*
 * fuzz_selection.c: libFuzzer target for capture selections
 * (reportdata_sel_parse, the text `profreg diff` and `profreg export` take).
 *
 * The bytes, cut at the first NUL, are parsed twice: once alone and once
 * with a fallback host, since and until. A failure must leave the
 * selection empty and say why in one line with no raw control characters
 * (the text comes from the command line and lands on a terminal). A
 * success must select something, keep the text as given, hold only values
 * the text spells out as key=value, ids that are positive and within
 * REPORTDATA_MAX_SELECTION, and take the fallbacks only where the text is
 * silent; reportdata_sel_release frees it all (ASan's leak check) and
 * leaves the record zeroed.
 *
 * Seeds (tests/fuzz/corpus/selection/): the forms reportdata.h documents,
 * one with every key, and a few near misses (duplicate key, unknown key,
 * bad id, bad time).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/reportdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FALLBACK_HOST "fallback-host"
#define FALLBACK_SINCE 1000000LL
#define FALLBACK_UNTIL 2000000LL

static bool all_zero(const reportdata_sel *s)
{
	static const reportdata_sel zero;

	return memcmp(s, &zero, sizeof(zero)) == 0;
}

/* The message is one line with no C0 control or DEL byte. */
static void check_message(const pr_error *err, int rc)
{
	if (err->code != rc || !err->msg[0])
		abort();
	for (const unsigned char *m = (const unsigned char *)err->msg; *m; m++)
		if (*m < 0x20 || *m == 0x7f)
			abort();
}

/* A string field is non-empty, has no comma, and "key=value" is in text. */
static void check_value(const char *text, const char *key, const char *v)
{
	size_t kn = strlen(key), vn;
	char *want;

	if (!v)
		return;
	vn = strlen(v);
	if (vn == 0 || strchr(v, ','))
		abort();
	if (!(want = malloc(kn + 1 + vn + 1)))
		abort();
	memcpy(want, key, kn);
	want[kn] = '=';
	memcpy(want + kn + 1, v, vn + 1);
	if (!strstr(text, want))
		abort();
	free(want);
}

static void check_ok(const reportdata_sel *s, const char *text)
{
	if (!s->text || strcmp(s->text, text) != 0)
		abort();
	/* A time given as 0 (until=@0) is given: since_set and until_set say so. */
	if (!s->nids && !s->service && !s->release && !s->commit && !s->host && !s->since_set &&
	    !s->until_set)
		abort();
	if ((s->nids == 0) != (s->ids == NULL) || s->nids > REPORTDATA_MAX_SELECTION)
		abort();
	for (size_t i = 0; i < s->nids; i++)
		if (s->ids[i] <= 0)
			abort();
	check_value(text, "service", s->service);
	check_value(text, "release", s->release);
	check_value(text, "commit", s->commit);
	check_value(text, "type", s->type);
}

/*
 * A duration ("since=2h") is relative to the clock, which moves between
 * the two parses: allow a minute.
 */
static bool near(int64_t got, int64_t want)
{
	return got >= want && got - want <= 60 * 1000000LL;
}

/* One parse; returns its code after checking what it promised. */
static int parse_one(reportdata_sel *s, const char *text, bool fallbacks)
{
	pr_error err = PR_ERROR_INIT;
	int rc;

	rc = reportdata_sel_parse(s, text, fallbacks ? FALLBACK_HOST : NULL,
				  fallbacks ? FALLBACK_SINCE : 0, fallbacks ? FALLBACK_UNTIL : 0,
				  &err);
	if (rc < 0) {
		if (rc != PR_EUSAGE && rc != PR_ELIMIT && rc != PR_ENOMEM)
			abort();
		check_message(&err, rc);
		if (!all_zero(s))
			abort();
		return rc;
	}
	if (rc != 0 || err.code != 0)
		abort();
	check_ok(s, text);
	if (!fallbacks)
		check_value(text, "host", s->host);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	reportdata_sel a, b;
	char *text = malloc(size + 1);
	int ra, rb;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	ra = parse_one(&a, text, false);
	rb = parse_one(&b, text, true);
	/* Fallbacks only fill gaps: they never turn a text good or bad. */
	if ((ra == 0) != (rb == 0))
		abort();
	if (ra == 0) {
		if (a.host ? strcmp(a.host, b.host) != 0 : strcmp(b.host, FALLBACK_HOST) != 0)
			abort();
		if (!near(b.since_us, a.since_set ? a.since_us : FALLBACK_SINCE) ||
		    !near(b.until_us, a.until_set ? a.until_us : FALLBACK_UNTIL))
			abort();
		if (a.nids != b.nids || (a.nids && memcmp(a.ids, b.ids, a.nids * sizeof(*a.ids))))
			abort();
		reportdata_sel_release(&a);
		if (!all_zero(&a))
			abort();
	}
	if (rb == 0) {
		reportdata_sel_release(&b);
		if (!all_zero(&b))
			abort();
	}
	free(text);
	return 0;
}
