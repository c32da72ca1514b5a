/*
 * test_report.c: the report renderers (HTML, Markdown, JSON) on a model
 * with hostile names, and the selection syntax of diff and export.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/reportdata.h"
#include "reports/escape.h"
#include "reports/report.h"

#define HOSTILE "<script>alert(1)</script>|x`y*z_[a](b)&\"'\n# ]]></svg>\x01"

static void add_stack(flame_tree *t, flame_side side, const char *a, const char *b, double v)
{
	const char *fr[2] = {a, b};
	size_t len[2] = {strlen(a), strlen(b)};
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(flame_tree_add(t, side, fr, len, 2, v, &err), 0);
}

/* A run report with one hostile regression and one plain improvement. */
static void build(report *r)
{
	report_finding *f;
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(report_init(r, "run", &err), 0);
	r->title = strdup("nightly <b>run</b>");
	r->run_id = 7;
	r->run_kind = strdup("nightly");
	r->run_status = strdup("ok");
	r->services_analysed = 2;
	r->services_failed = 1;
	r->failures = calloc(1, sizeof(char *));
	r->failures[0] = strdup("svc-x: cannot read '<dir>'");
	r->nfailures = 1;
	assert_int_equal(report_add_finding(r, &f, &err), 0);
	f->id = 42;
	f->service = strdup("checkout");
	f->type = strdup("cpu");
	f->function = strdup(HOSTILE);
	f->file = strdup("src/<evil>.go");
	f->direction = strdup("regression");
	f->severity = strdup("high");
	f->status = strdup("open");
	f->release = strdup("v2|<i>");
	f->commit = strdup("0123456789abcdef0123456789abcdef01234567");
	f->baseline_share = 0.05, f->current_share = 0.12, f->delta = 0.07, f->rel_delta = 1.4;
	f->ci_low = 0.05, f->ci_high = 0.09, f->p_value = 1e-6, f->q_value = 1e-5;
	f->baseline_captures = 10, f->current_captures = 3;
	f->caps = calloc(2, sizeof(*f->caps));
	f->ncaps = 2;
	f->caps[0].id = 1, f->caps[0].blob_key = strdup("aa"), f->caps[0].release = strdup("v1");
	f->caps[1].id = 2, f->caps[1].blob_key = strdup("bb"),
	f->caps[1].release = strdup("v2|<i>");
	f->caps[1].current = true;
	f->points = calloc(3, sizeof(*f->points));
	f->npoints = 3;
	f->points[0] = (report_point){1, 1000000, 0.05, false};
	f->points[1] = (report_point){3, 2000000, 0.06, false};
	f->points[2] = (report_point){2, 3000000, 0.12, true};
	report_finding_band(f);
	f->suspects = calloc(1, sizeof(*f->suspects));
	f->nsuspects = 1;
	f->suspects[0].sha = strdup("fedcba9876543210fedcba9876543210fedcba98");
	f->suspects[0].author = strdup("Mallory <m@x>");
	f->suspects[0].subject = strdup("speed up | <script>");
	f->flame = calloc(1, sizeof(*f->flame));
	assert_int_equal(flame_tree_init(f->flame, &err), 0);
	add_stack(f->flame, FLAME_BASE, "main", HOSTILE, 5);
	add_stack(f->flame, FLAME_BASE, "main", "other", 95);
	add_stack(f->flame, FLAME_CUR, "main", HOSTILE, 12);
	add_stack(f->flame, FLAME_CUR, "main", "other", 88);
	assert_int_equal(report_add_finding(r, &f, &err), 0);
	f->id = 43;
	f->service = strdup("checkout");
	f->function = strdup("plain.func");
	f->direction = strdup("improvement");
	f->severity = strdup("none");
	f->baseline_share = 0.2, f->current_share = 0.1, f->delta = -0.1;
	f->flame_ref = 0;
}

static void test_html_escapes_every_name_from_a_profile(void **state)
{
	report r;
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	const char *scripts;

	(void)state;
	build(&r);
	assert_int_equal(report_html(&out, &r, &err), 0);
	/* The page's own script is the only one, at the end. */
	scripts = strstr(out.ptr, "<script");
	assert_non_null(scripts);
	assert_null(strstr(scripts + 1, "<script"));
	assert_non_null(strstr(scripts, "</script>\n</body></html>"));
	assert_null(strstr(out.ptr, "<b>run"));
	assert_null(strstr(out.ptr, "<evil>"));
	assert_null(strstr(out.ptr, "<i>"));
	assert_null(strstr(out.ptr, "\x01"));
	assert_non_null(strstr(
		out.ptr,
		"&lt;script&gt;alert(1)&lt;/script&gt;|x`y*z_[a](b)&amp;&quot;&#39;\\x0a# "
		"]]&gt;&lt;/svg&gt;\\x01"));
	assert_non_null(strstr(out.ptr, "Mallory &lt;m@x&gt;"));
	assert_non_null(strstr(out.ptr, "id=\"finding-42\""));
	assert_non_null(strstr(out.ptr, "id=\"finding-43\""));
	assert_non_null(strstr(out.ptr, "href=\"#finding-42\""));
	/* Summary, table, graph, history, evidence: in that order. */
	assert_true(strstr(out.ptr, "id=\"summary\"") < strstr(out.ptr, "id=\"findings\""));
	assert_true(strstr(out.ptr, "id=\"findings\"") < strstr(out.ptr, "<svg class=\"flame\""));
	assert_non_null(strstr(out.ptr, "<svg class=\"spark\""));
	assert_non_null(strstr(out.ptr, "class=\"band\""));
	assert_non_null(strstr(out.ptr, "profreg finding show 42"));
	/* Named by its ID, the one `finding show` takes, not its rank in the table. */
	assert_non_null(strstr(out.ptr, "Same captures as <a href=\"#finding-42\">finding 42</a>"));
	/* Self-contained: nothing is fetched. */
	assert_null(strstr(out.ptr, "src=\"http"));
	assert_null(strstr(out.ptr, "<link"));
	buf_release(&out);
	report_release(&r);
}

static void test_markdown_lists_relative_shifts_apart_after_the_regressions(void **state)
{
	report r;
	report_finding *f;
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	const char *reg, *repro, *head, *shift;

	(void)state;
	build(&r);
	assert_int_equal(report_add_finding(&r, &f, &err), 0);
	f->id = 44;
	f->service = strdup("checkout");
	f->function = strdup("diluted.func");
	f->direction = strdup("relative_shift");
	f->severity = strdup("none");
	f->baseline_share = 0.3, f->current_share = 0.27, f->delta = -0.03;
	assert_int_equal(report_md(&out, &r, &err), 0);
	reg = strstr(out.ptr, "| 1 | high |");
	repro = strstr(out.ptr, "reproduce with `profreg finding show 42`");
	head = strstr(out.ptr, "**1 relative shift** (shares that moved only because others did");
	shift = strstr(out.ptr, "| 3 | none | - | relative\\_shift | checkout | diluted.func |");
	assert_non_null(reg);
	assert_non_null(strstr(out.ptr, "| 2 | none | - | improvement |"));
	assert_non_null(repro);
	assert_non_null(head);
	assert_non_null(shift);
	/* The main table, the regression's line, then the shifts' own table. */
	assert_true(reg < repro && repro < head && head < shift);
	assert_true(strstr(out.ptr, "| 2 | none") < repro);
	buf_release(&out);
	report_release(&r);
}

static void test_markdown_keeps_hostile_names_inside_their_table_cell(void **state)
{
	report r;
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	char *line, *save = NULL;
	int header_pipes = -1, rows = 0;

	(void)state;
	build(&r);
	assert_int_equal(report_md(&out, &r, &err), 0);
	/* No raw HTML: every '<' is escaped. */
	for (const char *c = out.ptr; *c; c++)
		if (*c == '<')
			assert_int_equal(c[-1], '\\');
	assert_null(strstr(out.ptr, "\x01"));
	assert_non_null(strstr(
		out.ptr, "\\<script\\>alert\\(1\\)\\</script\\>\\|x\\`y\\*z\\_\\[a\\]\\(b\\)\\&"));
	/* Every table row has as many unescaped pipes as the header. */
	for (line = strtok_r(out.ptr, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int pipes = 0;
		if (line[0] != '|')
			continue;
		for (char *c = line; *c; c++)
			pipes += *c == '|' && (c == line || c[-1] != '\\');
		if (header_pipes < 0)
			header_pipes = pipes;
		assert_int_equal(pipes, header_pipes);
		rows++;
	}
	assert_int_equal(rows, 4); /* header, rule, two findings */
	buf_release(&out);
	report_release(&r);
}

static void test_json_carries_names_as_data_with_a_schema_version(void **state)
{
	report r;
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	json_error_t jerr;
	json_t *j, *f0, *flame;

	(void)state;
	build(&r);
	assert_int_equal(report_json(&out, &r, &err), 0);
	j = json_loads(out.ptr, 0, &jerr);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "schema_version")),
			 REPORT_SCHEMA_VERSION);
	f0 = json_array_get(json_object_get(j, "findings"), 0);
	assert_string_equal(json_string_value(json_object_get(f0, "function")), HOSTILE);
	assert_int_equal(json_integer_value(json_object_get(f0, "id")), 42);
	assert_true(fabs(json_real_value(json_object_get(f0, "delta")) - 0.07) < 1e-12);
	assert_int_equal(json_array_size(json_object_get(f0, "history")), 3);
	assert_non_null(json_object_get(json_object_get(f0, "band"), "median"));
	flame = json_object_get(f0, "flame");
	assert_int_equal(json_array_size(flame), 4); /* all, main, hostile, other */
	assert_string_equal(json_string_value(json_object_get(json_array_get(flame, 0), "name")),
			    "all");
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(j, "regressions_by_severity"), "high")),
			 1);
	/* A NaN p-value (never tested) is null, not an invalid number. */
	assert_true(json_is_null(
		json_object_get(json_array_get(json_object_get(j, "findings"), 1), "p_value")));
	json_decref(j);
	buf_release(&out);
	report_release(&r);
}

/*
 * A whole-service cost finding (as a diff report makes one from its test,
 * its "file" the unit): each format shows the cost in its unit and the
 * change in percent, the JSON says what kind it is, and no format calls
 * the unit a file.
 */
static void test_a_cost_finding_reads_as_a_cost_in_every_format(void **state)
{
	report r;
	report_finding *f;
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	json_t *j, *f0;

	(void)state;
	assert_int_equal(report_init(&r, "diff", &err), 0);
	assert_int_equal(report_add_finding(&r, &f, &err), 0);
	f->service = strdup("checkout");
	f->type = strdup("cpu");
	f->function = strdup("(whole service)");
	f->file = strdup("cpu_s_per_s");
	f->cost_unit = strdup("cpu_s_per_s");
	f->direction = strdup("regression");
	f->severity = strdup("low");
	f->baseline_share = 0.154, f->current_share = 0.283, f->delta = 0.842;
	f->rel_delta = 0.842, f->ci_low = 0.682, f->ci_high = 1.017;
	f->p_value = 1e-8, f->q_value = 5.5e-8;
	assert_int_equal(report_md(&out, &r, &err), 0);
	assert_non_null(strstr(out.ptr, "| 0.154 -> 0.283 CPU s/s | +84.2% [+68.2%, +101.7%] |"));
	assert_null(strstr(out.ptr, "15.40%"));
	buf_reset(&out);
	assert_int_equal(report_html(&out, &r, &err), 0);
	assert_non_null(strstr(out.ptr, "0.154 &rarr; 0.283 CPU s/s"));
	assert_null(strstr(out.ptr, "<code>cpu_s_per_s</code>"));
	assert_null(strstr(out.ptr, "Self share <b>15.40%"));
	buf_reset(&out);
	assert_int_equal(report_json(&out, &r, &err), 0);
	assert_non_null(j = json_loads(out.ptr, 0, NULL));
	f0 = json_array_get(json_object_get(j, "findings"), 0);
	assert_string_equal(json_string_value(json_object_get(f0, "kind")), "cost");
	assert_string_equal(json_string_value(json_object_get(f0, "cost_unit")), "cpu_s_per_s");
	json_decref(j);
	buf_release(&out);
	report_release(&r);
}

/* A regression of `service` for the incident tests; incident 0: none. */
static report_finding *add_reg(report *r, int64_t id, const char *fn, const char *sev,
			       int64_t incident, int64_t lead, double from, double to)
{
	report_finding *f;
	pr_error err = PR_ERROR_INIT;

	assert_int_equal(report_add_finding(r, &f, &err), 0);
	f->id = id;
	f->service = strdup("svc");
	f->type = strdup("cpu");
	f->function = strdup(fn);
	f->direction = strdup("regression");
	f->severity = strdup(sev);
	f->baseline_share = from, f->current_share = to, f->delta = to - from;
	f->ci_low = f->ci_high = NAN;
	f->incident_id = incident, f->incident_lead = lead;
	return f;
}

/*
 * A member that ranks above its lead (a lower q) has its section after
 * the lead's, numbered under it: "1.1 decode" came before "1. parse".
 */
static void test_a_members_section_follows_its_leads(void **state)
{
	report r;
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;
	const char *lead, *member, *next;

	(void)state;
	assert_int_equal(report_init(&r, "run", &err), 0);
	add_reg(&r, 1, "decode", "high", 1, 2, 0.0998, 0.1210);
	add_reg(&r, 2, "parse", "high", 1, 2, 0.0496, 0.1307);
	add_reg(&r, 3, "render", "low", 0, 0, 0.10, 0.11);
	assert_int_equal(report_html(&out, &r, &err), 0);
	lead = strstr(out.ptr, "<h2>1. ");
	member = strstr(out.ptr, "<h2>1.1 ");
	next = strstr(out.ptr, "<h2>2. ");
	assert_non_null(lead);
	assert_non_null(member);
	assert_non_null(next);
	assert_true(lead < member && member < next);
	buf_release(&out);
	report_release(&r);
}

/*
 * An incident is one entry: its lead's row holds its members' changes,
 * and the heading says how many entries show its regressions. It said
 * "**3 regressions**: 1 critical, 1 high, ..." over two rows, the high
 * member appeared nowhere, and the list below it named "2. parse", a row
 * that did not exist.
 */
static void test_an_incident_is_one_entry_that_shows_its_members(void **state)
{
	report r;
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	assert_int_equal(report_init(&r, "run", &err), 0);
	add_reg(&r, 1, "decode", "critical", 1, 1, 0.0496, 0.1307);
	add_reg(&r, 2, "parse", "high", 1, 1, 0.0998, 0.1210);
	add_reg(&r, 3, "render", "low", 0, 0, 0.10, 0.11);
	assert_int_equal(report_md(&out, &r, &err), 0);
	assert_non_null(strstr(out.ptr, "**3 regressions** in 2 entries"));
	assert_non_null(strstr(out.ptr, "| 1 | critical |"));
	assert_non_null(strstr(out.ptr, "decode (incident 1, with parse high 9.98% -> 12.10% "
					"+2.12pp) |"));
	assert_non_null(strstr(out.ptr, "| 2 | low |"));
	assert_null(strstr(out.ptr, "| 3 |"));
	assert_non_null(strstr(out.ptr, "\n1. decode:"));
	assert_non_null(strstr(out.ptr, "\n   - with parse: reproduce with `profreg finding "
					"show 2`"));
	assert_non_null(strstr(out.ptr, "\n2. render:"));
	assert_null(strstr(out.ptr, "3. "));
	buf_reset(&out);
	assert_int_equal(report_html(&out, &r, &err), 0);
	assert_non_null(strstr(out.ptr, "<td>3 in 2 entries"));
	assert_non_null(strstr(out.ptr, "<tr><td class=\"num\">2</td><td><span class=\"sev "
					"sev-low\">"));
	assert_non_null(strstr(out.ptr, "parse</a> high 9.98% &rarr; 12.10% +2.12pp"));
	assert_non_null(strstr(out.ptr, "<h2>1.1 <span class=\"sev sev-high\">"));
	assert_non_null(strstr(out.ptr, "<h2>2. <span class=\"sev sev-low\">"));
	assert_null(strstr(out.ptr, "<h2>3. "));
	buf_release(&out);
	report_release(&r);
}

/*
 * A report of cpu and heap findings names each row's type: a heap share
 * is of bytes in use, and "cache.Put | 20.00% -> 27.37%" beside CPU rows
 * read as CPU time. A report of one type stays as it was.
 */
static void test_a_report_mixing_types_names_each_rows_type(void **state)
{
	report r;
	report_finding *f;
	buf out = BUF_INIT;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	assert_int_equal(report_init(&r, "run", &err), 0);
	add_reg(&r, 1, "decode", "high", 0, 0, 0.05, 0.13);
	f = add_reg(&r, 2, "cache.Put", "medium", 0, 0, 0.20, 0.2737);
	free(f->type);
	f->type = strdup("heap");
	assert_int_equal(report_md(&out, &r, &err), 0);
	assert_non_null(strstr(out.ptr, "| svc | cpu: decode |"));
	assert_non_null(strstr(out.ptr, "| svc | heap: cache.Put | 20.00% -> 27.37% |"));
	assert_non_null(strstr(out.ptr, "\n2. heap: cache.Put:"));
	buf_reset(&out);
	assert_int_equal(report_html(&out, &r, &err), 0);
	assert_non_null(strstr(out.ptr, "<td>heap: <a class=\"mono\" href=\"#finding-2\">"));
	assert_non_null(strstr(out.ptr, "<td>cpu: <a class=\"mono\" href=\"#finding-1\">"));
	buf_reset(&out);
	free(f->type);
	f->type = strdup("cpu");
	assert_int_equal(report_md(&out, &r, &err), 0);
	assert_non_null(strstr(out.ptr, "| svc | cache.Put | 20.00% -> 27.37% |"));
	buf_release(&out);
	report_release(&r);
}

static void test_band_is_the_baseline_median_and_scaled_mad(void **state)
{
	report_finding f;
	report_point pts[5] = {
		{1, 1, 0.10, false}, {2, 2, 0.12, false}, {3, 3, 0.11, false},
		{4, 4, 0.30, false}, {5, 5, 0.90, true},
	};

	(void)state;
	memset(&f, 0, sizeof(f));
	f.points = pts;
	f.npoints = 5;
	report_finding_band(&f);
	assert_true(f.has_band);
	assert_true(fabs(f.band_median - 0.115) < 1e-12);
	/* |dev| = .015 .005 .005 .185, median .01 */
	assert_true(fabs(f.band_spread - 1.4826 * 0.01) < 1e-12);
	f.npoints = 1;
	report_finding_band(&f);
	assert_false(f.has_band);
}

static void test_selections_parse_services_releases_commits_ids_and_times(void **state)
{
	reportdata_sel s;
	pr_error err = PR_ERROR_INIT;

	(void)state;
	assert_int_equal(reportdata_sel_parse(&s, "service=api,release=v2", NULL, 0, 0, &err), 0);
	assert_string_equal(s.service, "api");
	assert_string_equal(s.release, "v2");
	assert_null(s.host);
	reportdata_sel_release(&s);
	assert_int_equal(reportdata_sel_parse(&s, "service=api,commit=abc123,host=h1,type=heap",
					      "other", 5, 9, &err),
			 0);
	assert_string_equal(s.commit, "abc123");
	assert_string_equal(s.host, "h1"); /* the selection's own host wins */
	assert_string_equal(s.type, "heap");
	assert_int_equal(s.since_us, 5);
	assert_int_equal(s.until_us, 9);
	reportdata_sel_release(&s);
	assert_int_equal(reportdata_sel_parse(&s, "id=1,2,3", NULL, 0, 0, &err), 0);
	assert_int_equal(s.nids, 3);
	assert_int_equal(s.ids[2], 3);
	reportdata_sel_release(&s);
	assert_int_equal(reportdata_sel_parse(&s, "42", NULL, 0, 0, &err), 0);
	assert_int_equal(s.nids, 1);
	assert_int_equal(s.ids[0], 42);
	reportdata_sel_release(&s);
	assert_int_equal(
		reportdata_sel_parse(&s, "service=a,since=2026-01-01,until=2026-01-02T00:00:00Z",
				     NULL, 0, 0, &err),
		0);
	assert_int_equal(s.until_us - s.since_us, 86400000000LL);
	reportdata_sel_release(&s);
}

static void test_bad_selections_are_refused_with_the_reason(void **state)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"", "empty selection"},
		{"servce=a", "unknown key 'servce'"},
		{"service=a,service=b", "'service' given twice"},
		{"release=", "'release' is empty"},
		{"id=1,x", "'x' is not a capture id"},
		{"id=-3", "'-3' is not a capture id"},
		{"service=a,since=yesterday", "since 'yesterday' is not a time"},
		{"type=cpu", "selects nothing in particular"},
	};
	reportdata_sel s;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pr_error err = PR_ERROR_INIT;
		assert_int_equal(reportdata_sel_parse(&s, bad[i].text, NULL, 0, 0, &err),
				 PR_EUSAGE);
		if (!strstr(err.msg, bad[i].why))
			fail_msg("'%s': got '%s', want '%s'", bad[i].text, err.msg, bad[i].why);
		assert_null(s.text);
	}
}

static void test_escapers_handle_every_special_character(void **state)
{
	buf b = BUF_INIT;

	(void)state;
	assert_int_equal(esc_html(&b, "a<b>&\"'\x7f\tz"), 0);
	assert_string_equal(b.ptr, "a&lt;b&gt;&amp;&quot;&#39;\\x7f\\x09z");
	buf_reset(&b);
	assert_int_equal(esc_md(&b, "a|b*c_`<d>#!\n"), 0);
	assert_string_equal(b.ptr, "a\\|b\\*c\\_\\`\\<d\\>\\#\\!\\x0a");
	buf_release(&b);
}

/*
 * What a terminal or a CI log would act on instead of showing, in
 * Markdown: a C1 control (U+009B starts a terminal's control sequence), a
 * right-to-left override (it reversed the commit and file after a name),
 * a line separator, and a byte that is not UTF-8. Other characters stay.
 */
static void test_markdown_shows_controls_overrides_and_separators(void **state)
{
	static const char name[] = "evil\xc2\x9b" "31m\xe2\x80\xae" "abc\xe2\x80\xa8"
				   "x\xff \xc3\xa9\xe2\x82\xac";
	static const char shown[] = "evil\\u{009b}31m\\u{202e}abc\\u{2028}x\\xff "
				    "\xc3\xa9\xe2\x82\xac";
	buf b = BUF_INIT;

	(void)state;
	assert_int_equal(esc_md(&b, name), 0);
	assert_string_equal(b.ptr, shown);
	buf_release(&b);
}

/*
 * A commit's subject and author in the HTML report: shown, never sent
 * back, so what would reverse or hide the text after it is shown as an
 * escape, as in Markdown; attribute text keeps it (the page matches it).
 */
static void test_html_text_shows_overrides_and_c1_controls(void **state)
{
	static const char subject[] = "fix\xe2\x80\xae"
				      "cba\xc2\x9b"
				      "2J <b> \xc3\xa9\xff";
	buf b = BUF_INIT;

	(void)state;
	assert_int_equal(esc_html_text(&b, subject), 0);
	assert_string_equal(b.ptr, "fix\\u{202e}cba\\u{009b}2J &lt;b&gt; \xc3\xa9\\xff");
	buf_reset(&b);
	assert_int_equal(esc_html(&b, subject), 0);
	assert_non_null(strstr(b.ptr, "\xe2\x80\xae"));
	buf_release(&b);
}

/*
 * A name kept as it is (attributes send it back) is closed after it: a
 * right-to-left override in an incident member's name reversed the rest
 * of its lead's table cell, figures and all.
 */
static void test_html_names_close_the_overrides_they_open(void **state)
{
	buf b = BUF_INIT;

	(void)state;
	assert_int_equal(esc_html(&b, "pay\xe2\x80\xaesrebmun"), 0);
	assert_string_equal(b.ptr, "pay\xe2\x80\xaesrebmun\xe2\x80\xac");
	buf_reset(&b);
	/* An isolate (U+2067) left open, an embedding (U+202B) closed (U+202C). */
	assert_int_equal(esc_html(&b, "a\xe2\x81\xa7"
				      "b\xe2\x80\xab"
				      "c\xe2\x80\xac"
				      "d"),
			 0);
	assert_string_equal(b.ptr, "a\xe2\x81\xa7"
				   "b\xe2\x80\xab"
				   "c\xe2\x80\xac"
				   "d\xe2\x81\xa9");
	buf_reset(&b);
	assert_int_equal(esc_html(&b, "plain"), 0);
	assert_string_equal(b.ptr, "plain");
	buf_release(&b);
}

/*
 * A 2 KB C++ name in a findings table made one row several screens tall:
 * a cell shows its first 100 and last 50 bytes, never cutting a UTF-8
 * character, and a name of ESC_CELL_MAX bytes or fewer whole.
 */
static void test_table_cells_cut_long_names_in_the_middle(void **state)
{
	char name[400];
	buf b = BUF_INIT;

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memcpy(name, "<std", 4);
	memcpy(name + 99, "\xc3\xa9", 2); /* an e-acute across byte 100 */
	memcpy(name + sizeof(name) - 6, "::run", 5);
	assert_int_equal(esc_html_cell(&b, name), 0);
	assert_true(b.len < 180);
	assert_int_equal(strncmp(b.ptr, "&lt;std", 7), 0);
	assert_non_null(strstr(b.ptr, "\xe2\x80\xa6"));
	assert_null(strstr(b.ptr, "\xc3\xe2"));
	assert_string_equal(b.ptr + b.len - 5, "::run");
	buf_reset(&b);
	assert_int_equal(esc_md_cell(&b, name), 0);
	assert_true(b.len < 180);
	assert_non_null(strstr(b.ptr, "\xe2\x80\xa6"));
	buf_reset(&b);
	name[ESC_CELL_MAX] = '\0';
	assert_int_equal(esc_html_cell(&b, name), 0);
	assert_null(strstr(b.ptr, "\xe2\x80\xa6"));
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_escapes_every_name_from_a_profile),
		cmocka_unit_test(test_html_names_close_the_overrides_they_open),
		cmocka_unit_test(test_table_cells_cut_long_names_in_the_middle),
		cmocka_unit_test(test_a_members_section_follows_its_leads),
		cmocka_unit_test(test_markdown_keeps_hostile_names_inside_their_table_cell),
		cmocka_unit_test(test_markdown_lists_relative_shifts_apart_after_the_regressions),
		cmocka_unit_test(test_json_carries_names_as_data_with_a_schema_version),
		cmocka_unit_test(test_a_cost_finding_reads_as_a_cost_in_every_format),
		cmocka_unit_test(test_an_incident_is_one_entry_that_shows_its_members),
		cmocka_unit_test(test_a_report_mixing_types_names_each_rows_type),
		cmocka_unit_test(test_band_is_the_baseline_median_and_scaled_mad),
		cmocka_unit_test(test_selections_parse_services_releases_commits_ids_and_times),
		cmocka_unit_test(test_bad_selections_are_refused_with_the_reason),
		cmocka_unit_test(test_escapers_handle_every_special_character),
		cmocka_unit_test(test_markdown_shows_controls_overrides_and_separators),
		cmocka_unit_test(test_html_text_shows_overrides_and_c1_controls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
