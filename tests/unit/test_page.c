/*
 * test_page.c: page texts and request bodies for PagerDuty, Alertmanager
 * and webhooks: severity mapping, the 1024-byte summary cut on a UTF-8
 * boundary, hostile names, and the fields each contract needs.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "reports/page.h"

#define NOW 1767225600000000LL /* 2026-01-01T00:00:00Z */

static page_event sample(void)
{
	page_event e;

	memset(&e, 0, sizeof(e));
	e.dedup_key = "profreg-abc";
	e.service = "checkout";
	e.type = "cpu";
	e.function = "crypto/sha256.block";
	e.file = "sha256.go";
	e.release = "v42";
	e.severity = STATS_SEV_HIGH;
	e.baseline_share = 0.012;
	e.current_share = 0.045;
	e.ci_low = 0.025;
	e.ci_high = 0.04;
	e.q_value = 0.001;
	e.finding_id = 7;
	e.run_id = 3;
	e.link = "https://r.example/run-3.html#finding-7";
	e.created_us = NOW;
	return e;
}

static bool valid_utf8(const char *s)
{
	json_t *j = json_string(s); /* jansson refuses invalid UTF-8 */
	bool ok = j != NULL;

	json_decref(j);
	return ok;
}

static void test_severity_classes_map_to_pagerduty_severities(void **state)
{
	(void)state;
	assert_string_equal(page_pd_severity(STATS_SEV_CRITICAL), "critical");
	assert_string_equal(page_pd_severity(STATS_SEV_HIGH), "error");
	assert_string_equal(page_pd_severity(STATS_SEV_MEDIUM), "warning");
	assert_string_equal(page_pd_severity(STATS_SEV_LOW), "info");
	assert_string_equal(page_pd_severity(STATS_SEV_NONE), "info");
}

static void test_summary_of_a_huge_multibyte_name_is_cut_on_a_utf8_boundary(void **state)
{
	page_event e = sample();
	size_t n = 3000;
	char *name = malloc(3 * n + 1), *s;

	(void)state;
	for (size_t i = 0; i < n; i++)
		memcpy(name + 3 * i, "\xe2\x82\xac", 3); /* the euro sign, 3 bytes */
	name[3 * n] = '\0';
	e.function = name;
	s = page_summary(&e);
	assert_non_null(s);
	assert_true(strlen(s) <= PAGE_SUMMARY_MAX);
	assert_true(valid_utf8(s));
	assert_non_null(strstr(s, "..."));
	free(s);
	free(name);
}

static void test_clean_text_cuts_before_a_split_sequence(void **state)
{
	/* 4 x 3 bytes: max 10 keeps two whole characters and "...". */
	char *s = page_clean_text("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 10);

	(void)state;
	assert_string_equal(s, "\xe2\x82\xac\xe2\x82\xac...");
	free(s);
	s = page_clean_text("short", 10);
	assert_string_equal(s, "short");
	free(s);
}

static void test_hostile_names_become_valid_text_without_controls(void **state)
{
	page_event e = sample();
	json_t *pd;
	const char *comp;

	(void)state;
	e.function = "evil\x1b[31m\n\xff\xfe\xc0\xafname\xed\xa0\x80";
	pd = page_pagerduty(&e, "k", false, NOW);
	assert_non_null(pd);
	comp = json_string_value(json_object_get(json_object_get(pd, "payload"), "component"));
	assert_non_null(comp);
	for (const char *c = comp; *c; c++)
		assert_false((unsigned char)*c < 0x20 || *c == 0x7f);
	assert_non_null(strstr(comp, "\xef\xbf\xbd"));
	assert_non_null(strstr(comp, "name"));
	json_decref(pd);
}

static void test_pagerduty_trigger_has_the_events_v2_fields(void **state)
{
	page_event e = sample();
	json_t *pd = page_pagerduty(&e, "0123456789abcdef0123456789abcdef", false, NOW), *p;

	(void)state;
	assert_non_null(pd);
	assert_string_equal(json_string_value(json_object_get(pd, "event_action")), "trigger");
	assert_string_equal(json_string_value(json_object_get(pd, "dedup_key")), "profreg-abc");
	assert_string_equal(json_string_value(json_object_get(pd, "routing_key")),
			    "0123456789abcdef0123456789abcdef");
	p = json_object_get(pd, "payload");
	assert_string_equal(json_string_value(json_object_get(p, "severity")), "error");
	assert_string_equal(json_string_value(json_object_get(p, "source")), "profreg");
	assert_string_equal(json_string_value(json_object_get(p, "component")),
			    "crypto/sha256.block");
	assert_string_equal(json_string_value(json_object_get(p, "group")), "checkout");
	assert_string_equal(json_string_value(json_object_get(p, "class")), "cpu");
	assert_string_equal(json_string_value(json_object_get(p, "timestamp")),
			    "2026-01-01T00:00:00.000Z");
	assert_true(json_is_object(json_object_get(p, "custom_details")));
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(pd, "links"), 0), "href")),
			    e.link);
	json_decref(pd);
}

static void test_pagerduty_resolve_carries_only_the_key_and_action(void **state)
{
	page_event e = sample();
	json_t *pd = page_pagerduty(&e, "k", true, NOW);

	(void)state;
	assert_string_equal(json_string_value(json_object_get(pd, "event_action")), "resolve");
	assert_int_equal(json_object_size(pd), 3);
	json_decref(pd);
}

static void test_no_link_without_a_base_url(void **state)
{
	page_event e = sample();
	json_t *pd, *am;

	(void)state;
	e.link = NULL;
	pd = page_pagerduty(&e, "k", false, NOW);
	am = page_alertmanager(&e, NOW, NOW);
	assert_null(json_object_get(pd, "links"));
	assert_null(
		json_object_get(json_object_get(json_array_get(am, 0), "annotations"), "report"));
	json_decref(pd);
	json_decref(am);
}

static void test_alertmanager_alert_has_labels_and_times(void **state)
{
	page_event e = sample();
	json_t *am = page_alertmanager(&e, NOW, NOW + 3600LL * 1000000), *a, *l;

	(void)state;
	assert_int_equal(json_array_size(am), 1);
	a = json_array_get(am, 0);
	l = json_object_get(a, "labels");
	assert_string_equal(json_string_value(json_object_get(l, "alertname")), PAGE_ALERTNAME);
	assert_string_equal(json_string_value(json_object_get(l, "service")), "checkout");
	assert_string_equal(json_string_value(json_object_get(l, "function")),
			    "crypto/sha256.block");
	assert_string_equal(json_string_value(json_object_get(l, "severity")), "error");
	assert_string_equal(json_string_value(json_object_get(l, "profile_type")), "cpu");
	assert_string_equal(json_string_value(json_object_get(l, "dedup_key")), e.dedup_key);
	assert_string_equal(json_string_value(json_object_get(a, "startsAt")),
			    "2026-01-01T00:00:00.000Z");
	assert_string_equal(json_string_value(json_object_get(a, "endsAt")),
			    "2026-01-01T01:00:00.000Z");
	assert_non_null(json_string_value(
		json_object_get(json_object_get(a, "annotations"), "description")));
	json_decref(am);
}

static void test_webhook_body_names_event_and_text(void **state)
{
	page_event e = sample();
	json_t *w = page_webhook(&e, false, NOW), *r = page_webhook(&e, true, NOW);

	(void)state;
	assert_int_equal(json_integer_value(json_object_get(w, "version")), 1);
	assert_string_equal(json_string_value(json_object_get(w, "event")), "trigger");
	assert_string_equal(json_string_value(json_object_get(r, "event")), "resolve");
	assert_non_null(strstr(json_string_value(json_object_get(w, "text")), "checkout"));
	assert_true(strncmp(json_string_value(json_object_get(r, "text")), "Resolved: ", 10) == 0);
	assert_string_equal(json_string_value(json_object_get(w, "severity")), "high");
	json_decref(w);
	json_decref(r);
}

/*
 * Chat tools read "<!channel>" as a mention of everyone and "<URL|words>"
 * as a link showing only the words; a function name comes from a
 * profile, so the webhook's text escapes what Slack's format asks,
 * while the structured fields keep the name as it is.
 */
static void test_a_function_name_cannot_mention_a_channel_or_hide_a_link(void **state)
{
	page_event e = sample();
	json_t *w;
	const char *text;

	(void)state;
	e.function = "<!channel> <https://evil.example/login|Open the profreg report> & co";
	assert_non_null(w = page_webhook(&e, false, NOW));
	text = json_string_value(json_object_get(w, "text"));
	assert_null(strchr(text, '<'));
	assert_null(strchr(text, '>'));
	assert_non_null(strstr(text, "&lt;!channel&gt; &lt;https://evil.example/login|Open the "
				     "profreg report&gt; &amp; co"));
	assert_non_null(strstr(text, "rose 1.20% -&gt; 4.50%"));
	assert_string_equal(json_string_value(json_object_get(w, "function")), e.function);
	json_decref(w);
}

/* Every '&' of an escaped text starts a whole "&amp;", "&lt;" or "&gt;". */
static bool entities_whole(const char *s)
{
	for (; (s = strchr(s, '&')); s++)
		if (strncmp(s, "&amp;", 5) && strncmp(s, "&lt;", 4) && strncmp(s, "&gt;", 4))
			return false;
	return true;
}

/*
 * Escaping makes the text longer than the summary it came from (a '<'
 * becomes four bytes): the text still holds PagerDuty's 1024 bytes, cut
 * after escaping and never inside an entity, wherever the cut falls.
 */
static void test_webhook_text_escaped_still_fits_the_summary_limit(void **state)
{
	char name[PAGE_NAME_MAX + 1];

	(void)state;
	for (size_t pad = 0; pad < 12; pad++) {
		page_event e = sample();

		memset(name, 'a', pad);
		memset(name + pad, '<', PAGE_NAME_MAX - pad);
		name[PAGE_NAME_MAX] = '\0';
		e.function = name;
		for (int resolve = 0; resolve < 2; resolve++) {
			json_t *w = page_webhook(&e, resolve, NOW);
			const char *text;

			assert_non_null(w);
			text = json_string_value(json_object_get(w, "text"));
			if (strlen(text) > PAGE_SUMMARY_MAX || !entities_whole(text))
				fail_msg("pad %zu: %zu bytes: ...%s", pad, strlen(text),
					 text + strlen(text) - 12);
			assert_true(strlen(text) > PAGE_SUMMARY_MAX - 8);
			assert_string_equal(text + strlen(text) - 3, "...");
			assert_true(!resolve ||
				    strncmp(text, "Resolved: [high] checkout", 25) == 0);
			json_decref(w);
		}
	}
}

/* A function the release renamed pages under its new name, saying the old one. */
static void test_a_renamed_function_pages_with_its_old_name(void **state)
{
	page_event e = sample(), back, plain = sample();
	json_t *j, *w;
	char *sum, *sum2;

	(void)state;
	e.renamed_from = "crypto/sha256.blockGeneric\x1b[2J";
	assert_non_null(sum = page_summary(&e));
	assert_non_null(strstr(sum, "self share of crypto/sha256.block (was "
				    "crypto/sha256.blockGeneric"));
	assert_null(strchr(sum, '\x1b'));
	assert_non_null(sum2 = page_summary(&plain));
	assert_null(strstr(sum2, "(was "));
	assert_non_null(j = page_event_to_json(&e));
	assert_int_equal(page_event_from_json(&back, j), 0);
	assert_string_equal(back.renamed_from, e.renamed_from);
	assert_non_null(w = page_webhook(&e, false, NOW));
	assert_non_null(strstr(json_string_value(json_object_get(w, "renamed_from")),
			       "crypto/sha256.blockGeneric"));
	json_decref(w);
	assert_non_null(w = page_webhook(&plain, false, NOW));
	assert_null(json_object_get(w, "renamed_from"));
	json_decref(w);
	json_decref(j);
	free(sum);
	free(sum2);
}

static void test_event_survives_the_outbox_round_trip(void **state)
{
	page_event e = sample(), back;
	json_t *j = page_event_to_json(&e);

	(void)state;
	assert_int_equal(page_event_from_json(&back, j), 0);
	assert_string_equal(back.function, e.function);
	assert_string_equal(back.link, e.link);
	assert_int_equal(back.severity, STATS_SEV_HIGH);
	assert_int_equal(back.finding_id, 7);
	assert_true(back.current_share == e.current_share);
	json_decref(j);
	assert_int_equal(page_event_from_json(&back, NULL), -1);
	j = json_pack("{s:s}", "service", "x");
	assert_int_equal(page_event_from_json(&back, j), -1);
	json_decref(j);
}

/*
 * A whole-service cost per unit of load pages in its own terms: the
 * values with their unit and the change in percent, never as a function's
 * self share in points (0.0123 per unit of load read "1.23%" before).
 */
static void test_a_cost_finding_pages_in_its_unit_not_as_a_share(void **state)
{
	page_event e = sample(), back;
	json_t *am, *pd, *j, *d;
	char *sum;
	const char *desc;

	(void)state;
	e.function = "(whole service)";
	e.file = NULL;
	e.cost_unit = "per_load";
	e.baseline_share = 0.0123;
	e.current_share = 0.0150;
	e.ci_low = 0.12;
	e.ci_high = 0.32;
	assert_non_null(sum = page_summary(&e));
	assert_string_equal(sum, "[high] checkout: cpu whole-service cost rose 0.0123 -> 0.015 per "
			    "unit of load (+22.0%, at least +12.0%, q 0.001) in release v42");
	free(sum);
	am = page_alertmanager(&e, NOW, NOW + 3600LL * 1000000);
	desc = json_string_value(json_object_get(
		json_object_get(json_array_get(am, 0), "annotations"), "description"));
	assert_non_null(desc);
	assert_non_null(strstr(desc, "from 0.0123 to 0.015 per unit of load"));
	assert_null(strstr(desc, "self share"));
	json_decref(am);
	pd = page_pagerduty(&e, "key", false, NOW);
	d = json_object_get(json_object_get(pd, "payload"), "custom_details");
	assert_string_equal(json_string_value(json_object_get(d, "cost_unit")), "per_load");
	assert_true(fabs(json_real_value(json_object_get(d, "change_percent")) - 21.95) < 0.01);
	assert_null(json_object_get(d, "delta_pp"));
	json_decref(pd);
	/* Queued in the outbox, it is still a cost when it is sent. */
	j = page_event_to_json(&e);
	assert_int_equal(page_event_from_json(&back, j), 0);
	assert_string_equal(back.cost_unit, "per_load");
	json_decref(j);
}

/*
 * An escalated trigger says so everywhere, and the Alertmanager body ends
 * the alert of the old severity (a label, so another alert) now.
 */
static void test_an_escalated_trigger_says_so_and_ends_the_old_alert(void **state)
{
	page_event e = sample();
	json_t *pd, *am, *w, *r, *a, *old;
	const char *text;

	(void)state;
	e.severity = STATS_SEV_CRITICAL;
	e.escalated_from = STATS_SEV_HIGH;
	pd = page_pagerduty(&e, "k", false, NOW);
	text = json_string_value(json_object_get(json_object_get(pd, "payload"), "summary"));
	assert_non_null(text);
	assert_true(strncmp(text, "Escalated from high: [critical] checkout", 40) == 0);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(pd, "payload"), "custom_details"),
			"escalated_from")),
		"high");
	assert_string_equal(json_string_value(json_object_get(pd, "dedup_key")), e.dedup_key);

	am = page_alertmanager(&e, NOW, NOW + 3600LL * 1000000);
	assert_int_equal(json_array_size(am), 2);
	a = json_array_get(am, 0);
	old = json_array_get(am, 1);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(a, "labels"), "severity")),
		"critical");
	assert_string_equal(json_string_value(json_object_get(a, "endsAt")),
			    "2026-01-01T01:00:00.000Z");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(old, "labels"), "severity")),
		"error");
	assert_string_equal(json_string_value(json_object_get(old, "endsAt")),
			    "2026-01-01T00:00:00.000Z");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(old, "labels"), "dedup_key")),
		e.dedup_key);

	w = page_webhook(&e, false, NOW);
	assert_string_equal(json_string_value(json_object_get(w, "escalated_from")), "high");
	assert_true(strncmp(json_string_value(json_object_get(w, "text")),
			    "Escalated from high: [critical]", 31) == 0);
	r = page_webhook(&e, true, NOW);
	assert_null(json_object_get(r, "escalated_from"));
	assert_true(strncmp(json_string_value(json_object_get(r, "text")), "Resolved: [critical]",
			    20) == 0);
	json_decref(pd);
	json_decref(am);
	json_decref(w);
	json_decref(r);
}

/*
 * The page of an incident's lead at a member's severity names the member
 * in every body and survives the outbox; a cut control character in the
 * name is cleaned as the function's own is.
 */
static void test_a_lead_paged_at_its_members_severity_names_the_member(void **state)
{
	page_event e = sample(), back;
	json_t *pd, *am, *w, *o;
	const char *text;

	(void)state;
	e.severity = STATS_SEV_CRITICAL;
	e.incident_worst = "db.query\nnext";
	pd = page_pagerduty(&e, "k", false, NOW);
	text = json_string_value(json_object_get(json_object_get(pd, "payload"), "summary"));
	assert_non_null(text);
	assert_non_null(strstr(text, "; its incident's member db.query next is critical"));
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(pd, "payload"), "custom_details"),
			"incident_worst")),
		"db.query next");
	am = page_alertmanager(&e, NOW, NOW + 3600LL * 1000000);
	assert_int_equal(json_array_size(am), 1);
	assert_non_null(strstr(
		json_string_value(json_object_get(
			json_object_get(json_array_get(am, 0), "annotations"), "description")),
		"The severity is that of db.query next, a member of its incident."));
	w = page_webhook(&e, false, NOW);
	assert_string_equal(json_string_value(json_object_get(w, "incident_worst")),
			    "db.query next");
	o = page_event_to_json(&e);
	assert_int_equal(page_event_from_json(&back, o), 0);
	assert_string_equal(back.incident_worst, e.incident_worst);
	e.incident_worst = NULL;
	json_decref(w);
	w = page_webhook(&e, false, NOW);
	assert_null(json_object_get(w, "incident_worst"));
	assert_null(strstr(json_string_value(json_object_get(w, "text")), "incident"));
	json_decref(pd);
	json_decref(am);
	json_decref(w);
	json_decref(o);
}

/* A resolve of an escalated event ends both alerts, without "escalated" in them. */
static void test_resolving_an_escalated_alert_ends_both_severities(void **state)
{
	page_event e = sample();
	json_t *am;
	const char *summary;

	(void)state;
	e.severity = STATS_SEV_CRITICAL;
	e.escalated_from = STATS_SEV_MEDIUM;
	am = page_alertmanager(&e, NOW, NOW);
	assert_int_equal(json_array_size(am), 2);
	for (size_t i = 0; i < 2; i++) {
		json_t *a = json_array_get(am, i);
		assert_string_equal(json_string_value(json_object_get(a, "endsAt")),
				    "2026-01-01T00:00:00.000Z");
		summary = json_string_value(
			json_object_get(json_object_get(a, "annotations"), "summary"));
		assert_true(strncmp(summary, "[critical]", 10) == 0);
	}
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_array_get(am, 1), "labels"), "severity")),
			    "warning");
	json_decref(am);
}

/* The outbox keeps what the receiver was sent; an "escalation" to a milder class is none. */
static void test_escalated_from_survives_the_outbox_only_when_milder(void **state)
{
	page_event e = sample(), back;
	json_t *o;

	(void)state;
	e.severity = STATS_SEV_CRITICAL;
	e.escalated_from = STATS_SEV_HIGH;
	o = page_event_to_json(&e);
	assert_int_equal(page_event_from_json(&back, o), 0);
	assert_int_equal(back.escalated_from, STATS_SEV_HIGH);
	json_decref(o);
	e.severity = STATS_SEV_HIGH;
	e.escalated_from = STATS_SEV_CRITICAL;
	o = page_event_to_json(&e);
	assert_int_equal(page_event_from_json(&back, o), 0);
	assert_int_equal(back.escalated_from, STATS_SEV_NONE);
	json_decref(o);
	e.escalated_from = STATS_SEV_NONE;
	o = page_event_to_json(&e);
	assert_null(json_object_get(o, "escalated_from"));
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_severity_classes_map_to_pagerduty_severities),
		cmocka_unit_test(test_summary_of_a_huge_multibyte_name_is_cut_on_a_utf8_boundary),
		cmocka_unit_test(test_clean_text_cuts_before_a_split_sequence),
		cmocka_unit_test(test_hostile_names_become_valid_text_without_controls),
		cmocka_unit_test(test_pagerduty_trigger_has_the_events_v2_fields),
		cmocka_unit_test(test_pagerduty_resolve_carries_only_the_key_and_action),
		cmocka_unit_test(test_no_link_without_a_base_url),
		cmocka_unit_test(test_alertmanager_alert_has_labels_and_times),
		cmocka_unit_test(test_webhook_body_names_event_and_text),
		cmocka_unit_test(test_webhook_text_escaped_still_fits_the_summary_limit),
		cmocka_unit_test(test_a_function_name_cannot_mention_a_channel_or_hide_a_link),
		cmocka_unit_test(test_event_survives_the_outbox_round_trip),
		cmocka_unit_test(test_a_renamed_function_pages_with_its_old_name),
		cmocka_unit_test(test_a_cost_finding_pages_in_its_unit_not_as_a_share),
		cmocka_unit_test(test_an_escalated_trigger_says_so_and_ends_the_old_alert),
		cmocka_unit_test(test_resolving_an_escalated_alert_ends_both_severities),
		cmocka_unit_test(test_a_lead_paged_at_its_members_severity_names_the_member),
		cmocka_unit_test(test_escalated_from_survives_the_outbox_only_when_milder),
	};
	return cmocka_run_group_tests_name("page", tests, NULL, NULL);
}
