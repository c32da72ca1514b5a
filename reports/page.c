/*
 * page.c: page texts and the request bodies for each pager (see page.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "reports/page.h"
#include "common/buf.h"
#include "common/utf8.h"
#include "reports/measure.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *page_pd_severity(stats_severity s)
{
	switch (s) {
	case STATS_SEV_CRITICAL: return "critical";
	case STATS_SEV_HIGH: return "error";
	case STATS_SEV_MEDIUM: return "warning";
	default: return "info";
	}
}

char *page_clean_text(const char *s, size_t max)
{
	buf b = BUF_INIT;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	const unsigned char *end = p + strlen((const char *)p);
	size_t cut;

	if (max < 4)
		max = 4;
	/* Clean at most a little past `max`: enough to know a cut is needed. */
	while (*p && b.len <= max) {
		size_t n = utf8_seq_len(p, (size_t)(end - p));
		int rc;
		if (n == 0) {
			rc = buf_puts(&b, "\xef\xbf\xbd");
			p++;
		} else if (n == 1 && (*p < 0x20 || *p == 0x7f)) {
			rc = buf_putc(&b, ' ');
			p++;
		} else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
			rc = buf_putc(&b, ' '); /* C1 controls */
			p += 2;
		} else {
			rc = buf_put(&b, p, n);
			p += n;
		}
		if (rc < 0)
			return NULL;
	}
	if (b.len <= max && !*p)
		return buf_detach(&b, NULL);
	/* Cut on a sequence start so that the text and "..." fit in max. */
	cut = max - 3;
	while (cut > 0 && ((unsigned char)b.ptr[cut] & 0xc0) == 0x80)
		cut--;
	b.len = cut;
	b.ptr[cut] = '\0';
	if (buf_puts(&b, "...") < 0)
		return NULL;
	return buf_detach(&b, NULL);
}

void page_time_format(char out[32], int64_t us)
{
	time_t s = (time_t)(us / 1000000);
	int ms = (int)((us % 1000000) / 1000);
	struct tm tm;
	size_t n;

	if (us < 0) {
		s = 0;
		ms = 0;
	}
	gmtime_r(&s, &tm);
	n = strftime(out, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03dZ", ms);
}

/* The event's names, cleaned; every member NULL or a string to free. */
typedef struct clean {
	char *service, *team, *type, *function, *file, *release, *link, *key;
	char *was;   /* the function's old name, or NULL */
	char *worst; /* the incident's member the severity is of, or NULL */
} clean;

static void clean_release(clean *c)
{
	free(c->service), free(c->team), free(c->type), free(c->function);
	free(c->file), free(c->release), free(c->link), free(c->key);
	free(c->was), free(c->worst);
}

static int clean_of(clean *c, const page_event *e)
{
	memset(c, 0, sizeof(*c));
	c->service = page_clean_text(e->service, 256);
	c->team = e->team ? page_clean_text(e->team, 256) : NULL;
	c->type = page_clean_text(e->type, 64);
	c->function = page_clean_text(e->function, PAGE_NAME_MAX);
	c->file = e->file && e->file[0] ? page_clean_text(e->file, PAGE_NAME_MAX) : NULL;
	c->release = page_clean_text(e->release, 256);
	c->link = e->link && e->link[0] ? page_clean_text(e->link, 2048) : NULL;
	c->key = page_clean_text(e->dedup_key, 256);
	c->was = e->renamed_from ? page_clean_text(e->renamed_from, PAGE_NAME_MAX) : NULL;
	c->worst = e->incident_worst ? page_clean_text(e->incident_worst, PAGE_NAME_MAX) : NULL;
	if (!c->service || !c->type || !c->function || !c->release || !c->key ||
	    (e->renamed_from && !c->was) || (e->incident_worst && !c->worst) ||
	    (e->team && !c->team) || (e->file && e->file[0] && !c->file) ||
	    (e->link && e->link[0] && !c->link)) {
		clean_release(c);
		return -1;
	}
	return 0;
}

/* The summary, cleaned and cut to at most `max` bytes (SIZE_MAX: not cut). */
static char *summary_of(const page_event *e, const clean *c, size_t max)
{
	buf b = BUF_INIT;
	char vals[MEASURE_TEXT_MAX];
	char *out;
	int rc;

	/* The receiver has had the finding at a milder severity: say it is worse. */
	if (e->escalated_from != STATS_SEV_NONE &&
	    buf_printf(&b, "Escalated from %s: ", stats_severity_name(e->escalated_from)) < 0)
		return NULL;
	if (e->cost_unit)
		rc = buf_printf(&b, "[%s] %s: %s whole-service cost rose %s (%+.1f%%, at least "
				"%+.1f%%", stats_severity_name(e->severity), c->service, c->type,
				measure_pair(vals, sizeof(vals), e->cost_unit, e->baseline_share,
					     e->current_share, " -> "),
				100 * (e->current_share / e->baseline_share - 1), 100 * e->ci_low);
	else
		rc = buf_printf(&b, "[%s] %s: %s self share of %s%s%s%s rose %.2f%% -> %.2f%% "
				"(+%.2fpp, at least +%.2fpp", stats_severity_name(e->severity),
				c->service, c->type, c->function, c->was ? " (was " : "",
				c->was ? c->was : "", c->was ? ")" : "", 100 * e->baseline_share,
				100 * e->current_share,
				100 * (e->current_share - e->baseline_share), 100 * e->ci_low);
	if (rc < 0 || buf_printf(&b, ", q %.2g) in release %s", e->q_value, c->release) < 0 ||
	    (c->file && buf_printf(&b, " [%s]", c->file) < 0) ||
	    (c->worst && buf_printf(&b, "; its incident's member %s is %s", c->worst,
				    stats_severity_name(e->severity)) < 0)) {
		buf_release(&b);
		return NULL;
	}
	out = page_clean_text(b.ptr, max);
	buf_release(&b);
	return out;
}

char *page_summary(const page_event *e)
{
	clean c;
	char *s;

	if (clean_of(&c, e) < 0)
		return NULL;
	s = summary_of(e, &c, PAGE_SUMMARY_MAX);
	clean_release(&c);
	return s;
}

/* json_real refuses NaN and infinities: those become null. */
static json_t *num(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static int set(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

static int set_str(json_t *o, const char *k, const char *s)
{
	return s ? set(o, k, json_string(s)) : 0;
}

json_t *page_event_to_json(const page_event *e)
{
	json_t *o = json_object();
	int bad = 0;

	if (!o)
		return NULL;
	bad |= set_str(o, "dedup_key", e->dedup_key);
	bad |= set_str(o, "service", e->service);
	bad |= set_str(o, "team", e->team);
	bad |= set_str(o, "type", e->type);
	bad |= set_str(o, "function", e->function);
	if (e->renamed_from)
		bad |= set_str(o, "renamed_from", e->renamed_from);
	bad |= set_str(o, "file", e->file);
	bad |= set_str(o, "release", e->release);
	bad |= set_str(o, "severity", stats_severity_name(e->severity));
	bad |= set(o, "baseline_share", num(e->baseline_share));
	bad |= set(o, "current_share", num(e->current_share));
	bad |= set(o, "ci_low", num(e->ci_low));
	bad |= set(o, "ci_high", num(e->ci_high));
	bad |= set(o, "q_value", num(e->q_value));
	if (e->cost_unit)
		bad |= set_str(o, "cost_unit", e->cost_unit);
	bad |= set(o, "finding_id", json_integer((json_int_t)e->finding_id));
	bad |= set(o, "run_id", json_integer((json_int_t)e->run_id));
	bad |= set_str(o, "link", e->link);
	bad |= set(o, "created_us", json_integer((json_int_t)e->created_us));
	if (e->escalated_from != STATS_SEV_NONE)
		bad |= set_str(o, "escalated_from", stats_severity_name(e->escalated_from));
	if (e->incident_worst)
		bad |= set_str(o, "incident_worst", e->incident_worst);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static const char *get_str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

int page_event_from_json(page_event *out, json_t *obj)
{
	stats_severity sev = STATS_SEV_NONE;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(obj) || !get_str(obj, "dedup_key"))
		return -1;
	out->dedup_key = get_str(obj, "dedup_key");
	out->service = get_str(obj, "service");
	out->team = get_str(obj, "team");
	out->type = get_str(obj, "type");
	out->function = get_str(obj, "function");
	out->renamed_from = get_str(obj, "renamed_from");
	out->file = get_str(obj, "file");
	out->release = get_str(obj, "release");
	if (get_str(obj, "severity"))
		stats_severity_parse(&sev, get_str(obj, "severity"));
	out->severity = sev;
	out->baseline_share = json_number_value(json_object_get(obj, "baseline_share"));
	out->current_share = json_number_value(json_object_get(obj, "current_share"));
	out->ci_low = json_number_value(json_object_get(obj, "ci_low"));
	out->ci_high = json_number_value(json_object_get(obj, "ci_high"));
	out->q_value = json_number_value(json_object_get(obj, "q_value"));
	out->cost_unit = get_str(obj, "cost_unit");
	out->finding_id = (int64_t)json_integer_value(json_object_get(obj, "finding_id"));
	out->run_id = (int64_t)json_integer_value(json_object_get(obj, "run_id"));
	out->link = get_str(obj, "link");
	out->created_us = (int64_t)json_integer_value(json_object_get(obj, "created_us"));
	sev = STATS_SEV_NONE;
	if (get_str(obj, "escalated_from"))
		stats_severity_parse(&sev, get_str(obj, "escalated_from"));
	out->escalated_from = sev < out->severity ? sev : STATS_SEV_NONE;
	out->incident_worst = get_str(obj, "incident_worst");
	return 0;
}

/*
 * The numbers of a finding: a share in percent and percentage points, a
 * whole-service cost in its unit with its change in percent.
 */
static json_t *change_json(const page_event *e)
{
	json_t *o = json_object();

	if (o && e->cost_unit) {
		if (set(o, "cost_unit", json_string(e->cost_unit)) ||
		    set(o, "baseline", num(e->baseline_share)) ||
		    set(o, "current", num(e->current_share)) ||
		    set(o, "change_percent",
			num(100 * (e->current_share / e->baseline_share - 1))) ||
		    set(o, "ci_low_percent", num(100 * e->ci_low)) ||
		    set(o, "ci_high_percent", num(100 * e->ci_high)) ||
		    set(o, "q_value", num(e->q_value))) {
			json_decref(o);
			return NULL;
		}
		return o;
	}
	if (!o || set(o, "baseline_percent", num(100 * e->baseline_share)) ||
	    set(o, "current_percent", num(100 * e->current_share)) ||
	    set(o, "delta_pp", num(100 * (e->current_share - e->baseline_share))) ||
	    set(o, "ci_low_pp", num(100 * e->ci_low)) ||
	    set(o, "ci_high_pp", num(100 * e->ci_high)) || set(o, "q_value", num(e->q_value))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *page_pagerduty(const page_event *e, const char *routing_key, bool resolve, int64_t now_us)
{
	json_t *o = NULL, *payload = NULL, *details = NULL, *links = NULL;
	char when[32], *summary = NULL;
	clean c;

	if (clean_of(&c, e) < 0)
		return NULL;
	o = json_pack("{s:s,s:s,s:s}", "routing_key", routing_key ? routing_key : "",
		      "event_action", resolve ? "resolve" : "trigger", "dedup_key", c.key);
	if (!o || resolve)
		goto out;
	page_time_format(when, e->created_us ? e->created_us : now_us);
	if (!(summary = summary_of(e, &c, PAGE_SUMMARY_MAX)) || !(details = change_json(e)) ||
	    set(details, "release", json_string(c.release)) ||
	    (c.file && set(details, "file", json_string(c.file))) ||
	    (c.team && set(details, "team", json_string(c.team))) ||
	    set(details, "finding_id", json_integer((json_int_t)e->finding_id)) ||
	    set(details, "run_id", json_integer((json_int_t)e->run_id)) ||
	    set(details, "profreg_severity", json_string(stats_severity_name(e->severity))) ||
	    (e->escalated_from != STATS_SEV_NONE &&
	     set(details, "escalated_from", json_string(stats_severity_name(e->escalated_from)))) ||
	    (c.worst && set(details, "incident_worst", json_string(c.worst))))
		goto fail;
	payload = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:O}", "summary", summary,
			    "source", "profreg", "severity", page_pd_severity(e->severity),
			    "timestamp", when, "component", c.function, "group", c.service,
			    "class", c.type, "custom_details", details);
	if (!payload || json_object_set_new(o, "payload", payload) < 0)
		goto fail;
	payload = NULL;
	if (json_object_set_new(o, "client", json_string("profreg")) < 0)
		goto fail;
	if (c.link) {
		links = json_pack("[{s:s,s:s}]", "href", c.link, "text", "profreg report");
		if (!links || json_object_set_new(o, "links", links) < 0)
			goto fail;
		if (json_object_set_new(o, "client_url", json_string(c.link)) < 0)
			goto fail;
	}
	goto out;
fail:
	json_decref(o);
	o = NULL;
out:
	json_decref(details);
	free(summary);
	clean_release(&c);
	return o;
}

/* One Alertmanager alert of the event at `severity`, ending at `ends`; NULL on failure. */
static json_t *am_alert(const clean *c, const char *summary, const char *desc,
			stats_severity severity, const char *starts, const char *ends)
{
	json_t *alert = NULL, *labels, *ann;

	/*
	 * Alertmanager knows an alert by its labels alone: without the key,
	 * two findings of one function name in two files (py-spy's
	 * "__init__ (a.py:3)"), or of two long names cut alike, were one
	 * alert, and resolving either ended the other's.
	 */
	labels = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "alertname", PAGE_ALERTNAME, "service",
			   c->service, "function", c->function, "severity",
			   page_pd_severity(severity), "profile_type", c->type, "release",
			   c->release, "dedup_key", c->key);
	ann = json_pack("{s:s,s:s,s:s}", "summary", summary, "description", desc, "dedup_key",
			c->key);
	if (!labels || !ann || (c->link && set(ann, "report", json_string(c->link))))
		goto out;
	alert = json_pack("{s:O,s:O,s:s,s:s}", "labels", labels, "annotations", ann, "startsAt",
			  starts, "endsAt", ends);
	if (alert && c->link && set(alert, "generatorURL", json_string(c->link))) {
		json_decref(alert);
		alert = NULL;
	}
out:
	json_decref(labels);
	json_decref(ann);
	return alert;
}

json_t *page_alertmanager(const page_event *e, int64_t now_us, int64_t ends_us)
{
	json_t *arr = NULL, *alert = NULL, *old = NULL;
	char starts[32], ends[32], ended[32], vals[MEASURE_TEXT_MAX], *summary = NULL;
	page_event plain = *e;
	buf desc = BUF_INIT;
	clean c;
	int rc;

	/* A resolve ends both alerts; its summary needs no "escalated". */
	if (ends_us <= now_us)
		plain.escalated_from = STATS_SEV_NONE;
	if (clean_of(&c, e) < 0)
		return NULL;
	page_time_format(starts, e->created_us ? e->created_us : ends_us);
	page_time_format(ends, ends_us);
	page_time_format(ended, ends_us < now_us ? ends_us : now_us);
	if (!(summary = summary_of(&plain, &c, PAGE_SUMMARY_MAX)))
		goto out;
	if (e->cost_unit)
		rc = buf_printf(&desc, "The %s whole-service cost of service %s rose from %s in "
				"release %s; the change is at least %+.1f%% at 95%% confidence "
				"(q %.2g). Finding %" PRId64 ", run %" PRId64 ".",
				c.type, c.service,
				measure_pair(vals, sizeof(vals), e->cost_unit, e->baseline_share,
					     e->current_share, " to "),
				c.release, 100 * e->ci_low, e->q_value, e->finding_id, e->run_id);
	else
		rc = buf_printf(&desc, "The %s self share of %s in service %s rose from "
				"%.2f%% to %.2f%% in release %s; the change is at least +%.2fpp "
				"at 95%% confidence (q %.2g). Finding %" PRId64
				", run %" PRId64 ".",
				c.type, c.function, c.service, 100 * e->baseline_share,
				100 * e->current_share, c.release, 100 * e->ci_low, e->q_value,
				e->finding_id, e->run_id);
	if (rc == 0 && c.worst)
		rc = buf_printf(&desc, " The severity is that of %s, a member of its incident.",
				c.worst);
	if (rc < 0 || !(alert = am_alert(&c, summary, desc.ptr, e->severity, starts, ends)))
		goto out;
	/*
	 * Severity is a label, so the escalated alert is a new one to
	 * Alertmanager, routed as its severity says; the alert of the old
	 * severity would fire on beside it until its endsAt.
	 */
	if (e->escalated_from != STATS_SEV_NONE &&
	    page_pd_severity(e->escalated_from) != page_pd_severity(e->severity) &&
	    !(old = am_alert(&c, summary, desc.ptr, e->escalated_from, starts, ended)))
		goto out;
	if (!(arr = json_array()))
		goto out;
	/* Each append takes its alert, even when it fails. */
	rc = json_array_append_new(arr, alert);
	alert = NULL;
	if (rc == 0 && old) {
		rc = json_array_append_new(arr, old);
		old = NULL;
	}
	if (rc < 0) {
		json_decref(arr);
		arr = NULL;
	}
out:
	json_decref(alert);
	json_decref(old);
	buf_release(&desc);
	free(summary);
	clean_release(&c);
	return arr;
}

/*
 * The webhook's text with '&', '<' and '>' escaped as Slack's message
 * format asks: a chat tool reads "<!channel>" as a mention of everyone
 * and "<URL|words>" as a link that shows only the words, and a function
 * name comes from a profile, so it could ping a channel or dress up a
 * link as the report's. The chat tool shows the characters as they were.
 *
 * `s` is clean text (page_clean_text's). Escaping makes it longer (a
 * name of '<' four times as long), so the cut to at most `max` bytes
 * comes after it, on a UTF-8 boundary and before an entity it would
 * split, with "..." to mark it as page_clean_text does. NULL when out of
 * memory.
 */
static char *chat_text(const char *s, size_t max)
{
	buf b = BUF_INIT;
	size_t cut, k;
	int rc = 0;

	for (; *s && rc == 0; s++)
		rc = *s == '&' ? buf_puts(&b, "&amp;")
		   : *s == '<' ? buf_puts(&b, "&lt;")
		   : *s == '>' ? buf_puts(&b, "&gt;")
			       : buf_putc(&b, *s);
	if (rc < 0)
		return NULL; /* the buffer freed itself */
	if (b.len <= max)
		return buf_detach(&b, NULL);
	cut = max - 3;
	while (cut > 0 && ((unsigned char)b.ptr[cut] & 0xc0) == 0x80)
		cut--;
	/* Every '&' here starts an entity of at most 5 bytes ("&amp;"). */
	for (k = cut; k > 0 && cut - k < 5; k--) {
		if (b.ptr[k - 1] == ';')
			break;
		if (b.ptr[k - 1] == '&') {
			cut = k - 1;
			break;
		}
	}
	b.len = cut;
	b.ptr[cut] = '\0';
	if (buf_puts(&b, "...") < 0)
		return NULL;
	return buf_detach(&b, NULL);
}

json_t *page_webhook(const page_event *e, bool resolve, int64_t now_us)
{
	json_t *o = NULL, *change = NULL;
	char when[32], created[32], *summary = NULL;
	page_event plain = *e;
	clean c;

	plain.escalated_from = STATS_SEV_NONE;

	if (clean_of(&c, e) < 0)
		return NULL;
	page_time_format(when, now_us);
	page_time_format(created, e->created_us ? e->created_us : now_us);
	/* Whole here: the text is cut once, after it is escaped. */
	if (!(summary = summary_of(resolve ? &plain : e, &c, SIZE_MAX)) ||
	    !(change = change_json(e)))
		goto out;
	if (resolve) {
		buf b = BUF_INIT;
		if (buf_printf(&b, "Resolved: %s", summary) < 0)
			goto out;
		free(summary);
		if (!(summary = buf_detach(&b, NULL)))
			goto out;
	}
	{
		char *text = chat_text(summary, PAGE_SUMMARY_MAX);
		free(summary);
		if (!(summary = text))
			goto out;
	}
	o = json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:O,s:I,s:I}",
		      "version", 1, "event", resolve ? "resolve" : "trigger", "dedup_key", c.key,
		      "text", summary, "timestamp", when, "created_at", created,
		      "service", c.service, "profile_type", c.type, "function", c.function,
		      "release", c.release, "severity", stats_severity_name(e->severity),
		      "change", change, "finding_id", (json_int_t)e->finding_id,
		      "run_id", (json_int_t)e->run_id);
	if (o && (set(o, "pager_severity", json_string(page_pd_severity(e->severity))) ||
		  (c.file && set(o, "file", json_string(c.file))) ||
		  (c.was && set(o, "renamed_from", json_string(c.was))) ||
		  (c.team && set(o, "team", json_string(c.team))) ||
		  (c.link && set(o, "link", json_string(c.link))) ||
		  (!resolve && e->escalated_from != STATS_SEV_NONE &&
		   set(o, "escalated_from", json_string(stats_severity_name(e->escalated_from)))) ||
		  (c.worst && set(o, "incident_worst", json_string(c.worst))))) {
		json_decref(o);
		o = NULL;
	}
out:
	json_decref(change);
	free(summary);
	clean_release(&c);
	return o;
}
