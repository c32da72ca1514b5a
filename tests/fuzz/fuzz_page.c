/*
 * fuzz_page.c: libFuzzer target for what a page says (reports/page.h)
 * and for the Retry-After parser of the sender (pager_retry_after).
 *
 * The input is split on NUL bytes into fields:
 *   0 dedup_key  1 service  2 team  3 type  4 function  5 file  6 release
 *   7 link  8 severity (first byte)  9 baseline_share  10 current_share
 *   11 ci_low  12 ci_high  13 q_value (strtod: "nan", "1e308" welcome)
 *   14 finding_id  15 run_id  16 created_us  17 now_us (strtoll)
 *   18 incident_worst (the incident's member the severity is of)
 * A field the input does not reach is NULL (or 0). Then:
 *
 *  - page_clean_text, on every field and several limits: valid UTF-8, no
 *    C0, DEL or C1 control, at most max(limit, 4) bytes, the text itself
 *    when it was already clean and short, else a prefix of the fully
 *    cleaned text followed by "...";
 *  - page_summary: the same, at most PAGE_SUMMARY_MAX bytes;
 *  - page_event_to_json: NULL only when a string field is not UTF-8 (the
 *    outbox stores names raw), else it survives json_dumps/json_loads and
 *    page_event_from_json gives back the same event;
 *  - page_pagerduty (trigger and resolve), page_alertmanager and
 *    page_webhook (trigger and resolve): never NULL, their JSON text parses
 *    back with jansson to an equal value, every string in it is free of
 *    control characters, each summary is at most PAGE_SUMMARY_MAX and the
 *    whole body at most BODY_MAX bytes (twice that for an escalated
 *    Alertmanager body, two alerts);
 *  - pager_retry_after on the whole input (cut at the first NUL): a delay
 *    within [0, one day], and for plain digits exactly seconds * 1000.
 *
 * Seeds (tests/fuzz/corpus/page/): a typical event, one with invalid
 * UTF-8 and control characters in every name, one with long names and
 * NaN/huge numbers, one whose webhook text escaping made longer than
 * PAGE_SUMMARY_MAX, one with only a dedup key, one escalated with names
 * long enough that its Alertmanager body of two alerts passed BODY_MAX,
 * and Retry-After values (seconds, an IMF-fixdate, an obsolete RFC 850
 * date, garbage).
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/pager.h"
#include "reports/page.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NFIELDS 19
#define DAY_MS (86400LL * 1000)
/*
 * Names are cut (link 2048, function and file 512, the rest 256) and the
 * summary too, so no body comes near this whatever the input's size.
 */
#define BODY_MAX 16384

/* Length of the well-formed UTF-8 sequence at p (RFC 3629), 0 if none. */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
	unsigned c = p[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (n > left)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static bool utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(p + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

/* Valid UTF-8 with no C0 control, DEL or C1 control (U+0080..U+009F). */
static bool clean_text(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!utf8_valid(s, len))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			return false;
		if (p[i] == 0xc2 && i + 1 < len && p[i + 1] < 0xa0)
			return false;
	}
	return true;
}

static void check_clean(const char *s)
{
	/* Each byte becomes at most three (U+FFFD), so this never cuts. */
	size_t in_len = s ? strlen(s) : 0;
	static const size_t limits[] = {0, 3, 4, 5, 7, 16, 64, PAGE_NAME_MAX};
	char *full = page_clean_text(s, 3 * in_len + 4);
	size_t full_len;

	if (!full)
		abort();
	full_len = strlen(full);
	if (!clean_text(full, full_len))
		abort();
	if (clean_text(s ? s : "", in_len) && strcmp(full, s ? s : "") != 0)
		abort();
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		size_t max = limits[i] < 4 ? 4 : limits[i];
		char *c = page_clean_text(s, limits[i]);
		size_t n;

		if (!c)
			abort();
		n = strlen(c);
		if (n > max || !clean_text(c, n))
			abort();
		if (full_len <= max) {
			if (strcmp(c, full) != 0)
				abort();
		} else if (n < 3 || memcmp(c + n - 3, "...", 3) != 0 ||
			   strncmp(c, full, n - 3) != 0) {
			abort();
		}
		free(c);
	}
	free(full);
}

/* Every string in v (object keys too) is clean; summaries fit. */
static void check_strings(json_t *v)
{
	const char *key;
	json_t *m;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		json_object_foreach(v, key, m) {
			if (!clean_text(key, strlen(key)))
				abort();
			if ((!strcmp(key, "summary") || !strcmp(key, "text")) &&
			    json_is_string(m) && json_string_length(m) > PAGE_SUMMARY_MAX)
				abort();
			check_strings(m);
		}
		break;
	case JSON_ARRAY:
		json_array_foreach(v, i, m)
			check_strings(m);
		break;
	case JSON_STRING:
		if (!clean_text(json_string_value(v), json_string_length(v)))
			abort();
		break;
	default:
		break;
	}
}

/* A body: present, parses back to the same value, only clean strings. */
static void check_body_within(json_t *body, size_t max)
{
	char *text;
	json_t *back;
	json_error_t jerr;

	if (!body)
		abort();
	if (!(text = json_dumps(body, JSON_COMPACT)) || strlen(text) > max)
		abort();
	if (!(back = json_loads(text, 0, &jerr)) || !json_equal(body, back))
		abort();
	check_strings(back);
	json_decref(back);
	free(text);
	json_decref(body);
}

static void check_body(json_t *body)
{
	check_body_within(body, BODY_MAX);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* A number as page_event_to_json keeps it: NaN and infinities are null. */
static double stored(double v)
{
	return v != v || v - v != 0 ? 0 : v;
}

static void check_event_json(const page_event *e)
{
	const char *strs[] = {e->dedup_key, e->service, e->team, e->type,          e->function,
			      e->file,      e->release, e->link, e->incident_worst};
	bool utf8 = true;
	json_t *o = page_event_to_json(e), *back;
	json_error_t jerr;
	page_event r;
	char *text;

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strs[i] && !utf8_valid(strs[i], strlen(strs[i])))
			utf8 = false;
	if (!o) {
		if (utf8)
			abort();
		return;
	}
	if (!utf8 || !(text = json_dumps(o, JSON_COMPACT)))
		abort();
	if (!(back = json_loads(text, 0, &jerr)) || !json_equal(o, back))
		abort();
	if (page_event_from_json(&r, back) != (e->dedup_key ? 0 : -1))
		abort();
	if (e->dedup_key &&
	    (!same_str(r.dedup_key, e->dedup_key) || !same_str(r.service, e->service) ||
	     !same_str(r.team, e->team) || !same_str(r.type, e->type) ||
	     !same_str(r.function, e->function) || !same_str(r.file, e->file) ||
	     !same_str(r.release, e->release) || !same_str(r.link, e->link) ||
	     r.severity != e->severity || r.baseline_share != stored(e->baseline_share) ||
	     r.current_share != stored(e->current_share) || r.ci_low != stored(e->ci_low) ||
	     r.ci_high != stored(e->ci_high) || r.q_value != stored(e->q_value) ||
	     r.finding_id != e->finding_id || r.run_id != e->run_id ||
	     r.created_us != e->created_us || r.escalated_from != e->escalated_from ||
	     !same_str(r.incident_worst, e->incident_worst)))
		abort();
	json_decref(back);
	json_decref(o);
	free(text);
}

static void check_retry_after(const char *v)
{
	int64_t ms = -1, again = -1, want = 0;
	const char *p = v;
	int rc = pager_retry_after(&ms, v, 1700000000);
	bool digits;

	if (rc != 0 && rc != -1)
		abort();
	if (rc == 0 && (ms < 0 || ms > DAY_MS))
		abort();
	if (pager_retry_after(&again, v, 1700000000) != rc || (rc == 0 && again != ms))
		abort();
	/* Plain delay-seconds, with blanks around. */
	while (*p == ' ' || *p == '\t')
		p++;
	digits = *p >= '0' && *p <= '9';
	for (; *p >= '0' && *p <= '9'; p++)
		want = want > DAY_MS ? want : want * 10 + (*p - '0');
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (digits && !*p && (rc != 0 || ms != (want > DAY_MS / 1000 ? DAY_MS : want * 1000)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *f[NFIELDS] = {0};
	size_t nf = 0, pos = 0;
	page_event e;
	char *s;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	while (nf < NFIELDS && pos <= size) {
		f[nf++] = copy + pos;
		pos += strlen(copy + pos) + 1;
	}
	check_retry_after(copy);

	memset(&e, 0, sizeof(e));
	e.dedup_key = f[0];
	e.service = f[1];
	e.team = f[2];
	e.type = f[3];
	e.function = f[4];
	e.file = f[5];
	e.release = f[6];
	e.link = f[7];
	e.severity = f[8] ? (stats_severity)((unsigned char)f[8][0] % 5) : STATS_SEV_NONE;
	/* What the receiver was sent before an escalation: a milder class, or none. */
	if (f[8] && f[8][0] && (stats_severity)((unsigned char)f[8][1] % 5) < e.severity)
		e.escalated_from = (stats_severity)((unsigned char)f[8][1] % 5);
	e.baseline_share = f[9] ? strtod(f[9], NULL) : 0;
	e.current_share = f[10] ? strtod(f[10], NULL) : 0;
	e.ci_low = f[11] ? strtod(f[11], NULL) : 0;
	e.ci_high = f[12] ? strtod(f[12], NULL) : 0;
	e.q_value = f[13] ? strtod(f[13], NULL) : 0;
	e.finding_id = f[14] ? strtoll(f[14], NULL, 10) : 0;
	e.run_id = f[15] ? strtoll(f[15], NULL, 10) : 0;
	e.created_us = f[16] ? strtoll(f[16], NULL, 10) : 0;
	int64_t now_us = f[17] ? strtoll(f[17], NULL, 10) : 1700000000000000LL;
	e.incident_worst = f[18];

	for (size_t i = 0; i < 8; i++)
		check_clean(f[i]);

	if (!(s = page_summary(&e)) || strlen(s) > PAGE_SUMMARY_MAX || !clean_text(s, strlen(s)) ||
	    (e.escalated_from == STATS_SEV_NONE ? s[0] != '['
						: strncmp(s, "Escalated from ", 15) != 0))
		abort();
	free(s);

	check_event_json(&e);
	check_body(page_pagerduty(&e, "routing-key", false, now_us));
	{
		json_t *r = page_pagerduty(&e, "routing-key", true, now_us);
		if (!r || json_object_size(r) != 3 || json_object_get(r, "payload"))
			abort();
		check_body(r);
	}
	/* An escalation's alerts are two: the new severity's and the old one ended. */
	check_body_within(page_alertmanager(&e, now_us, now_us),
			  e.escalated_from != STATS_SEV_NONE ? 2 * BODY_MAX : BODY_MAX);
	check_body_within(page_alertmanager(&e, now_us,
					    now_us < INT64_MAX - 3600000000LL
						    ? now_us + 3600000000LL
						    : now_us),
			  e.escalated_from != STATS_SEV_NONE ? 2 * BODY_MAX : BODY_MAX);
	check_body(page_webhook(&e, false, now_us));
	check_body(page_webhook(&e, true, now_us));
	{
		char when[32];
		page_time_format(when, e.created_us);
		if (!utf8_valid(when, strlen(when)) || when[strlen(when) - 1] != 'Z')
			abort();
	}
	free(copy);
	return 0;
}
