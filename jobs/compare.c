/*
 * compare.c: the comparison page (see compare.h).
 *
 * The picker's lists are reads of the index for this page only (the
 * captures of one service grouped by type, release, commit and host), so
 * they live here beside it, as a report's reads live with the report
 * (jobs/reportdata.c). The diff itself is reportdata_diff and
 * report_html, unchanged: the page a browser gets is the file
 * `profreg diff` writes.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/compare.h"
#include "common/buf.h"
#include "common/timeutil.h"
#include "common/utf8.h"
#include "jobs/access.h"
#include "jobs/reportdata.h"
#include "pipeline/profile.h"
#include "reports/escape.h"
#include "reports/report.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Functions in the diff page's table, as `profreg diff` (its --top default). */
#define DIFF_TOP 30

static int oom(pr_error *err)
{
	return pr_error_set(err, PR_ENOMEM, "out of memory");
}

/* ---- the query ---------------------------------------------------------------- */

static bool has_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

static bool is_key(const char *k, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(k, want, n) == 0;
}

static void side_release(compare_side *s)
{
	free(s->release);
	free(s->commit);
	free(s->host);
	free(s->ids);
	free(s->text);
	memset(s, 0, sizeof(*s));
}

void compare_query_release(compare_query *q)
{
	free(q->service);
	free(q->type);
	side_release(&q->a);
	side_release(&q->b);
	memset(q, 0, sizeof(*q));
}

static int side_ids(compare_side *s, const char *name, const char *v, size_t n, pr_error *err)
{
	const char *p = v, *end = v + n;
	char q[40];

	if (!(s->ids = calloc(COMPARE_IDS_MAX, sizeof(*s->ids))))
		return oom(err);
	while (p <= end) {
		const char *dot = memchr(p, '.', (size_t)(end - p));
		size_t len = dot ? (size_t)(dot - p) : (size_t)(end - p);
		int64_t id = 0;

		if (len == 0 || len > 18)
			goto bad;
		for (size_t i = 0; i < len; i++) {
			if (p[i] < '0' || p[i] > '9')
				goto bad;
			id = id * 10 + (p[i] - '0');
		}
		if (id < 1)
			goto bad;
		if (s->nids == COMPARE_IDS_MAX)
			return pr_error_set(err, PR_EUSAGE, "'%s': more than %d capture ids", name,
					    COMPARE_IDS_MAX);
		s->ids[s->nids++] = id;
		if (!dot)
			break;
		p = dot + 1;
		continue;
bad:
	return pr_error_set(err, PR_EUSAGE, "'%s': id '%s' is not a capture id", name,
			    profile_quote_arg(q, p, len));
	}
	return 0;
}

static bool hex_prefix(const char *v, size_t n)
{
	if (n < 4 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f') ||
		      (v[i] >= 'A' && v[i] <= 'F')))
			return false;
	return true;
}

/* The canonical text of a side, items in one order, for URLs and titles. */
static int side_text(compare_side *s, pr_error *err)
{
	buf b = BUF_INIT;
	char t[TIME_FMT_MAX];
	bool bad = false;

	if (s->release)
		bad |= buf_printf(&b, "release:%s,", s->release) < 0;
	if (s->commit)
		bad |= buf_printf(&b, "commit:%s,", s->commit) < 0;
	if (s->host)
		bad |= buf_printf(&b, "host:%s,", s->host) < 0;
	if (s->since_us)
		time_format(t, s->since_us), bad |= buf_printf(&b, "since:%s,", t) < 0;
	if (s->until_us)
		time_format(t, s->until_us), bad |= buf_printf(&b, "until:%s,", t) < 0;
	for (size_t i = 0; i < s->nids; i++)
		bad |= buf_printf(&b, "%s%" PRId64 "%s", i ? "" : "id:", s->ids[i],
				  i + 1 < s->nids ? "." : ",") < 0;
	if (bad || b.len == 0) {
		buf_release(&b);
		return oom(err);
	}
	b.ptr[--b.len] = '\0'; /* the last comma */
	if (!(s->text = buf_detach(&b, NULL)))
		return oom(err);
	return 0;
}

/*
 * Parse side `name` ("a" or "b") from v[0..n), which holds no NUL or
 * control byte.
 */
static int side_parse(compare_side *s, const char *name, const char *v, size_t n, pr_error *err)
{
	static const char keys[] = "(release, commit, host, since, until, id)";
	const char *p = v, *end = v + n;
	bool seen[6] = {false};
	char q[40];
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (n == 0)
		return pr_error_set(err, PR_EUSAGE,
				    "'%s' is empty: give release:R, commit:C, host:H, since:TIME, "
				    "until:TIME or id:N",
				    name);
	while (p <= end && rc == 0) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t len = comma ? (size_t)(comma - p) : (size_t)(end - p);
		const char *colon = memchr(p, ':', len);
		const char *val;
		size_t klen, vlen;
		char **dst = NULL;
		int which;

		if (len == 0) {
			rc = pr_error_set(err, PR_EUSAGE, "'%s' has an empty item", name);
			break;
		}
		if (!colon) {
			rc = pr_error_set(err, PR_EUSAGE, "'%s': '%s' is not KEY:VALUE %s", name,
					  profile_quote_arg(q, p, len), keys);
			break;
		}
		klen = (size_t)(colon - p);
		val = colon + 1;
		vlen = len - klen - 1;
		which = is_key(p, klen, "release") ? 0
		      : is_key(p, klen, "commit")  ? 1
		      : is_key(p, klen, "host")    ? 2
		      : is_key(p, klen, "since")   ? 3
		      : is_key(p, klen, "until")   ? 4
		      : is_key(p, klen, "id")      ? 5 : -1;
		if (which < 0) {
			rc = pr_error_set(err, PR_EUSAGE, "'%s': unknown key '%s' %s", name,
					  profile_quote_arg(q, p, klen), keys);
			break;
		}
		profile_quote_arg(q, p, klen);
		if (seen[which]) {
			rc = pr_error_set(err, PR_EUSAGE, "'%s': '%s' is given twice", name, q);
			break;
		}
		seen[which] = true;
		if (vlen == 0) {
			rc = pr_error_set(err, PR_EUSAGE, "'%s': '%s' has no value", name, q);
			break;
		}
		if (which != 5 && vlen > COMPARE_VALUE_MAX) {
			rc = pr_error_set(err, PR_EUSAGE, "'%s': the %s is longer than %d bytes",
					  name, q, COMPARE_VALUE_MAX);
			break;
		}
		if (which == 1 && !hex_prefix(val, vlen)) {
			char qv[40];
			rc = pr_error_set(err, PR_EUSAGE,
					  "'%s': commit '%s' is not 4 to 64 hex digits", name,
					  profile_quote_arg(qv, val, vlen));
			break;
		}
		if (which == 3 || which == 4) {
			char tmp[COMPARE_VALUE_MAX + 1], qv[40];
			memcpy(tmp, val, vlen);
			tmp[vlen] = '\0';
			if (time_parse(which == 3 ? &s->since_us : &s->until_us, tmp) < 0) {
				rc = pr_error_set(err, PR_EUSAGE,
						  "'%s': %s '%s' is not an ISO 8601 time", name, q,
						  profile_quote_arg(qv, val, vlen));
				break;
			}
		} else if (which == 5) {
			rc = side_ids(s, name, val, vlen, err);
		} else {
			dst = which == 0 ? &s->release : which == 1 ? &s->commit : &s->host;
			if (!(*dst = strndup(val, vlen)))
				rc = oom(err);
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	if (rc == 0 && s->since_us && s->until_us && s->since_us >= s->until_us)
		rc = pr_error_set(err, PR_EUSAGE, "'%s': since is not before until", name);
	if (rc == 0)
		rc = side_text(s, err);
	if (rc < 0)
		side_release(s);
	return rc;
}

static bool type_valid(const char *v, size_t n)
{
	if (n < 1 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '_'))
			return false;
	return true;
}

int compare_query_parse(compare_query *out, const compare_param *p, size_t n, pr_error *err)
{
	static const char *const names[] = {"service", "type", "a", "b"};
	const compare_param *got[4] = {NULL};
	size_t total = 0;
	char q[40];
	int rc = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		total += p[i].key_len + p[i].value_len + 2;
		if (total > COMPARE_QUERY_MAX)
			return pr_error_set(err, PR_EUSAGE, "the query is longer than %d bytes",
					    COMPARE_QUERY_MAX);
	}
	for (size_t i = 0; i < n; i++) {
		const compare_param *x = &p[i];
		size_t k;

		for (k = 0; k < 4 && !is_key(x->key, x->key_len, names[k]); k++)
			;
		if (k == 4)
			return pr_error_set(err, PR_EUSAGE,
					    "unknown parameter '%s' (service, type, a, b)",
					    profile_quote_arg(q, x->key, x->key_len));
		if (got[k])
			return pr_error_set(err, PR_EUSAGE, "parameter '%s' is given twice",
					    names[k]);
		if (memchr(x->value, '\0', x->value_len))
			return pr_error_set(err, PR_EUSAGE, "parameter '%s' holds a NUL byte",
					    names[k]);
		if (has_control(x->value, x->value_len))
			return pr_error_set(err, PR_EUSAGE, "parameter '%s' holds a control byte",
					    names[k]);
		/*
		 * A value is kept in the audit row (JSON) and read as text by
		 * PostgreSQL, which both refuse bytes that are not UTF-8: let
		 * through, the request failed late as if memory had.
		 */
		if (!utf8_valid(x->value, x->value_len))
			return pr_error_set(err, PR_EUSAGE, "parameter '%s' is not UTF-8 text",
					    names[k]);
		got[k] = x;
	}
	if (got[0]) {
		if (!(out->service = strndup(got[0]->value, got[0]->value_len)))
			return oom(err);
		if (!db_service_name_valid(out->service)) {
			rc = pr_error_set(err, PR_EUSAGE, "'%s' is not a service name",
					  profile_quote_arg(q, got[0]->value, got[0]->value_len));
			goto out;
		}
	}
	if (got[1]) {
		if (!type_valid(got[1]->value, got[1]->value_len)) {
			rc = pr_error_set(err, PR_EUSAGE, "'%s' is not a profile type",
					  profile_quote_arg(q, got[1]->value, got[1]->value_len));
			goto out;
		}
		if (!(out->type = strndup(got[1]->value, got[1]->value_len))) {
			rc = oom(err);
			goto out;
		}
	}
	if (!got[0] && (got[1] || got[2] || got[3])) {
		rc = pr_error_set(err, PR_EUSAGE, "'%s' needs a 'service'",
				  got[1] ? "type" : got[2] ? "a" : "b");
		goto out;
	}
	if (!got[2] != !got[3]) {
		rc = pr_error_set(err, PR_EUSAGE,
				  "give both 'a' (the base) and 'b' (the captures compared "
				  "with it)");
		goto out;
	}
	if (got[2]) {
		if ((rc = side_parse(&out->a, "a", got[2]->value, got[2]->value_len, err)) < 0 ||
		    (rc = side_parse(&out->b, "b", got[3]->value, got[3]->value_len, err)) < 0)
			goto out;
		out->sides = true;
	}
out:
	if (rc < 0)
		compare_query_release(out);
	return rc;
}

/* ---- the Authorization header ---------------------------------------------------- */

int compare_token_from_header(char *out, size_t n, const char *h)
{
	unsigned char dec[400];
	const char *colon;
	size_t len, dlen, tlen;
	int d;

	out[0] = '\0';
	if (!h)
		return -1;
	if (strncasecmp(h, "Bearer ", 7) == 0) {
		len = strlen(h + 7);
		if (len == 0 || len >= n || has_control(h + 7, len) || strchr(h + 7, ' '))
			return -1;
		memcpy(out, h + 7, len + 1);
		return 0;
	}
	if (strncasecmp(h, "Basic ", 6) != 0)
		return -1;
	h += 6;
	while (*h == ' ')
		h++;
	len = strlen(h);
	if (len == 0 || len % 4 != 0 || len / 4 * 3 > sizeof(dec) - 1)
		return -1;
	if ((d = EVP_DecodeBlock(dec, (const unsigned char *)h, (int)len)) < 0)
		return -1;
	dlen = (size_t)d;
	/* EVP_DecodeBlock counts the padding's zero bytes too. */
	for (size_t i = len; i > 0 && h[i - 1] == '=' && dlen > 0; i--)
		dlen--;
	dec[dlen] = '\0';
	if (memchr(dec, '\0', dlen) || has_control((const char *)dec, dlen) ||
	    !(colon = memchr(dec, ':', dlen)))
		return -1;
	tlen = dlen - (size_t)((const unsigned char *)colon + 1 - dec);
	if (tlen == 0 || tlen >= n)
		return -1;
	memcpy(out, colon + 1, tlen);
	out[tlen] = '\0';
	return 0;
}

/* ---- responses ---------------------------------------------------------------------- */

void compare_response_release(compare_response *r)
{
	free(r->body);
	free(r->csp);
	memset(r, 0, sizeof(*r));
}

/* The policy of pages without a script: forms to this server only. */
static const char csp_plain[] = "default-src 'none'; style-src 'unsafe-inline'; "
				"form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/* A refusal: `status` and one line of text. */
static int refuse(compare_response *out, unsigned status, const char *msg, pr_error *err)
{
	buf b = BUF_INIT;

	if (buf_printf(&b, "%s\n", msg) < 0 || !(out->csp = strdup(csp_plain))) {
		buf_release(&b);
		return oom(err);
	}
	out->status = status;
	out->content_type = "text/plain; charset=utf-8";
	out->body = buf_detach(&b, &out->len);
	return 0;
}

/*
 * The policy of a report page: its own inline scripts by their SHA-256,
 * nothing else runs and nothing is fetched.
 */
static int report_csp(char **out, const char *html, size_t len, pr_error *err)
{
	static const char open[] = "<script>", close[] = "</script>";
	buf b = BUF_INIT;
	const char *p = html, *end = html + len;

	*out = NULL;
	buf_puts(&b, "default-src 'none'; script-src");
	for (;;) {
		const char *s = p < end ? strstr(p, open) : NULL, *e;
		unsigned char md[EVP_MAX_MD_SIZE];
		unsigned int mdlen = 0;
		char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];

		if (!s || !(e = strstr(s + sizeof(open) - 1, close)))
			break;
		s += sizeof(open) - 1;
		if (!EVP_Digest(s, (size_t)(e - s), md, &mdlen, EVP_sha256(), NULL)) {
			buf_release(&b);
			return pr_error_set(err, PR_ERR, "cannot hash the page's script");
		}
		EVP_EncodeBlock((unsigned char *)b64, md, (int)mdlen);
		buf_printf(&b, " 'sha256-%s'", b64);
		p = e + sizeof(close) - 1;
	}
	if (buf_puts(&b, "; style-src 'unsafe-inline'; img-src data:; form-action 'self'; "
			 "frame-ancestors 'none'; base-uri 'none'") < 0 ||
	    strncmp(b.ptr, "default-src", 11) != 0) { /* a failed append emptied it */
		buf_release(&b);
		return oom(err);
	}
	*out = buf_detach(&b, NULL);
	return 0;
}

/* ---- pages ---------------------------------------------------------------------------- */

static const char page_css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;max-width:60em}"
	"h1{font-size:1.4em}label{display:block;margin:.6em 0}select{min-width:24em}"
	"button{margin-top:.6em}.note{color:#666}code{background:#f3f3f0;padding:0 .2em}";

static void page_head(buf *b, const char *title_text)
{
	buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		    "<title>");
	esc_html(b, title_text);
	buf_printf(b, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", page_css);
	esc_html(b, title_text);
	buf_puts(b, "</h1>\n");
}

static int page_done(compare_response *out, buf *b, pr_error *err)
{
	/*
	 * An append that failed emptied the buffer, so a page that lost any
	 * part no longer starts with the doctype page_head wrote first.
	 */
	if (buf_puts(b, "</body></html>\n") < 0 || strncmp(b->ptr, "<!DOCTYPE html>", 15) != 0 ||
	    !(out->csp = strdup(csp_plain))) {
		buf_release(b);
		return oom(err);
	}
	out->status = 200;
	out->content_type = "text/html; charset=utf-8";
	out->body = buf_detach(b, &out->len);
	return 0;
}

/* GET /compare: the services the token may see. */
static int page_services(compare_response *out, const job_env *env, const token_info *tok,
			 pr_error *err)
{
	db_service *v = NULL;
	size_t n = 0, shown = 0;
	buf b = BUF_INIT;
	int rc;

	if ((rc = db_service_list(env->d, &v, &n, err)) < 0)
		return rc;
	page_head(&b, "Compare profiles");
	buf_puts(&b, "<form method=\"get\" action=\"compare\">\n<label>Service "
		     "<select name=\"service\" id=\"service\">\n");
	for (size_t i = 0; i < n; i++) {
		if (!tokens_allows(tok, v[i].name, v[i].team))
			continue;
		buf_puts(&b, "<option value=\"");
		esc_html(&b, v[i].name);
		buf_puts(&b, "\">");
		esc_html(&b, v[i].name);
		buf_puts(&b, "</option>\n");
		shown++;
	}
	buf_puts(&b, "</select></label>\n<button type=\"submit\" id=\"next\">Next</button>\n"
		     "</form>\n");
	if (!shown)
		buf_puts(&b, "<p class=\"note\">This token may see no service.</p>\n");
	for (size_t i = 0; i < n; i++)
		db_service_release(&v[i]);
	free(v);
	return page_done(out, &b, err);
}

/* One option of the picker's lists. */
typedef struct pick {
	char kind[8];       /* release, commit, host */
	char *value;
	int64_t n, first_us, last_us;
} pick;

static void picks_free(pick *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].value);
	free(v);
}

/* The profile types of service `service_id`, the most captured first. */
static int read_types(char ***out, size_t *n, db *d, int64_t service_id, pr_error *err)
{
	static const char sql[] =
		"select profile_type from profiles where service_id = $1"
		" group by profile_type order by count(*) desc, profile_type limit 50";
	struct pg_result *res = NULL;
	char sid[24];
	const char *p[1] = {sid};
	int rows, rc;

	*out = NULL, *n = 0;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	if ((rc = db_exec(d, &res, err, "listing the service's profile types", sql, 1, p)) < 0)
		return rc;
	rows = db_rows(res);
	if (rows && !(*out = calloc((size_t)rows, sizeof(**out))))
		rc = oom(err);
	for (int i = 0; rc == 0 && i < rows; i++) {
		if (!((*out)[i] = strdup(db_get_text(res, i, 0))))
			rc = oom(err);
		else
			(*n)++;
	}
	db_result_free(res);
	return rc;
}

/*
 * The releases, commits and hosts of service `service_id`'s `type`
 * captures, each the COMPARE_LIST_MAX most recently captured.
 */
static int read_picks(pick **out, size_t *n, db *d, int64_t service_id, const char *type,
		      pr_error *err)
{
	static const char sql[] =
		"select k, v, n, f, l from (select k, v, n, f, l, row_number() over"
		" (partition by k order by l desc, v) r from ("
		"  select 'release' k, release v, count(*) n, "
		DB_TS_TO_US("min(captured_at)") " f, "
		DB_TS_TO_US("max(captured_at)") " l from profiles where service_id = $1 and"
		"  profile_type = $2 and release is not null group by release"
		"  union all select 'commit', commit_sha, count(*), "
		DB_TS_TO_US("min(captured_at)") ", " DB_TS_TO_US("max(captured_at)")
		"  from profiles where service_id = $1 and profile_type = $2 and"
		"  commit_sha is not null group by commit_sha"
		"  union all select 'host', host, count(*), " DB_TS_TO_US("min(captured_at)") ", "
		DB_TS_TO_US("max(captured_at)") " from profiles where service_id = $1 and"
		"  profile_type = $2 and host is not null group by host) x) y"
		" where r <= $3 order by case k when 'release' then 0 when 'commit' then 1"
		" else 2 end, l desc, v";
	struct pg_result *res = NULL;
	char sid[24], lim[16];
	const char *p[3] = {sid, type, lim};
	int rows, rc;

	*out = NULL, *n = 0;
	snprintf(sid, sizeof(sid), "%" PRId64, service_id);
	snprintf(lim, sizeof(lim), "%d", COMPARE_LIST_MAX);
	if ((rc = db_exec(d, &res, err, "listing the service's captures", sql, 3, p)) < 0)
		return rc;
	rows = db_rows(res);
	if (rows && !(*out = calloc((size_t)rows, sizeof(**out))))
		rc = oom(err);
	for (int i = 0; rc == 0 && i < rows; i++) {
		pick *k = &(*out)[*n];
		snprintf(k->kind, sizeof(k->kind), "%s", db_get_text(res, i, 0));
		if (!(k->value = strdup(db_get_text(res, i, 1)))) {
			rc = oom(err);
			break;
		}
		k->n = db_get_i64(res, i, 2);
		k->first_us = db_get_i64(res, i, 3);
		k->last_us = db_get_i64(res, i, 4);
		(*n)++;
	}
	db_result_free(res);
	return rc;
}

/* Whether a listed value can stand in a side: no separator, nothing a side refuses. */
static bool pick_usable(const pick *k)
{
	size_t n = strlen(k->value);

	return n > 0 && n <= COMPARE_VALUE_MAX && !strchr(k->value, ',') &&
	       !has_control(k->value, n) &&
	       (strcmp(k->kind, "commit") != 0 || hex_prefix(k->value, n));
}

static void pick_options(buf *b, const pick *v, size_t n, size_t selected)
{
	static const char *const groups[][2] = {
		{"release", "Releases"}, {"commit", "Commits"}, {"host", "Hosts"}};

	for (size_t g = 0; g < 3; g++) {
		bool open = false;
		for (size_t i = 0; i < n; i++) {
			char f[TIME_FMT_MAX], l[TIME_FMT_MAX];
			if (strcmp(v[i].kind, groups[g][0]) != 0 || !pick_usable(&v[i]))
				continue;
			if (!open) {
				buf_printf(b, "<optgroup label=\"%s\">\n", groups[g][1]);
				open = true;
			}
			buf_printf(b, "<option value=\"%s:", v[i].kind);
			esc_html(b, v[i].value);
			buf_printf(b, "\"%s>", i == selected ? " selected" : "");
			esc_html(b, v[i].value);
			time_format(f, v[i].first_us);
			time_format(l, v[i].last_us);
			f[10] = l[10] = '\0'; /* the dates */
			buf_printf(b, " (%" PRId64 " capture%s, %s", v[i].n,
				   v[i].n == 1 ? "" : "s", f);
			if (strcmp(f, l) != 0)
				buf_printf(b, " to %s", l);
			buf_puts(b, ")</option>\n");
		}
		if (open)
			buf_puts(b, "</optgroup>\n");
	}
}

/* GET /compare?service=S[&type=T]: the picker. */
static int page_picker(compare_response *out, const job_env *env, const db_service *svc,
		       const char *want_type, pr_error *err)
{
	char **types = NULL;
	size_t ntypes = 0, npicks = 0, a = SIZE_MAX, bsel = SIZE_MAX, nrel = 0;
	pick *picks = NULL;
	const char *type = want_type;
	buf b = BUF_INIT, title = BUF_INIT;
	int rc;

	if ((rc = read_types(&types, &ntypes, env->d, svc->id, err)) < 0)
		goto out;
	/* Without a type: cpu when there is any, else the most captured. */
	if (!type) {
		type = ntypes ? types[0] : "cpu";
		for (size_t i = 0; i < ntypes; i++)
			if (strcmp(types[i], "cpu") == 0)
				type = "cpu";
	}
	if ((rc = read_picks(&picks, &npicks, env->d, svc->id, type, err)) < 0)
		goto out;
	/* Preselected: the previous release against the newest. */
	for (size_t i = 0; i < npicks; i++) {
		if (strcmp(picks[i].kind, "release") != 0 || !pick_usable(&picks[i]))
			continue;
		if (nrel == 0)
			bsel = i;
		else if (nrel == 1)
			a = i;
		nrel++;
	}
	buf_printf(&title, "Compare profiles of %s", svc->name);
	page_head(&b, title.ptr);
	buf_puts(&b, "<form method=\"get\" action=\"compare\" id=\"typeform\">\n"
		     "<input type=\"hidden\" name=\"service\" value=\"");
	esc_html(&b, svc->name);
	buf_puts(&b, "\">\n<label>Profile type <select name=\"type\" id=\"type\">\n");
	for (size_t i = 0; i < ntypes; i++) {
		buf_puts(&b, "<option value=\"");
		esc_html(&b, types[i]);
		buf_printf(&b, "\"%s>", strcmp(types[i], type) == 0 ? " selected" : "");
		esc_html(&b, types[i]);
		buf_puts(&b, "</option>\n");
	}
	buf_puts(&b, "</select></label>\n<button type=\"submit\">Show</button>\n</form>\n");
	if (!npicks) {
		buf_puts(&b, "<p class=\"note\" id=\"none\">No ");
		esc_html(&b, type);
		buf_puts(&b, " captures of this service.</p>\n<p><a href=\"compare\">Another "
			     "service</a></p>\n");
		rc = page_done(out, &b, err);
		goto out;
	}
	buf_puts(&b, "<form method=\"get\" action=\"compare\" id=\"pick\">\n"
		     "<input type=\"hidden\" name=\"service\" value=\"");
	esc_html(&b, svc->name);
	buf_puts(&b, "\">\n<input type=\"hidden\" name=\"type\" value=\"");
	esc_html(&b, type);
	buf_puts(&b, "\">\n<label>Base (before) <select name=\"a\" id=\"a\">\n");
	pick_options(&b, picks, npicks, a);
	buf_puts(&b, "</select></label>\n<label>Compared with (after) <select name=\"b\" "
		     "id=\"b\">\n");
	pick_options(&b, picks, npicks, bsel);
	buf_puts(&b, "</select></label>\n<button type=\"submit\" id=\"compare\">Compare</button>\n"
		     "</form>\n<p class=\"note\">The address of the comparison can be shared. It "
		     "also takes a time range and a host per side, e.g. "
		     "<code>a=since:2026-03-01T00:00:00Z,until:2026-03-08T00:00:00Z,host:web-1"
		     "</code> (ISO 8601 times, until exclusive), or capture ids "
		     "<code>a=id:12.13.14</code>.</p>\n<p><a href=\"compare\">Another "
		     "service</a></p>\n");
	rc = page_done(out, &b, err);
out:
	buf_release(&b);
	buf_release(&title);
	db_strings_free(types, ntypes);
	picks_free(picks, npicks);
	return rc;
}

/* A side as the selection the CLI's diff takes. */
static int side_sel(reportdata_sel *out, const compare_query *q, const compare_side *s,
		    pr_error *err)
{
	buf t = BUF_INIT;
	char tf[TIME_FMT_MAX];
	bool bad = false;

	memset(out, 0, sizeof(*out));

	/* The title names the sides in the CLI's selection syntax. */
	bad |= buf_printf(&t, "service=%s,type=%s", q->service, q->type ? q->type : "cpu") < 0;
	if (s->release)
		bad |= buf_printf(&t, ",release=%s", s->release) < 0;
	if (s->commit)
		bad |= buf_printf(&t, ",commit=%s", s->commit) < 0;
	if (s->host)
		bad |= buf_printf(&t, ",host=%s", s->host) < 0;
	if (s->since_us)
		time_format(tf, s->since_us), bad |= buf_printf(&t, ",since=%s", tf) < 0;
	if (s->until_us)
		time_format(tf, s->until_us), bad |= buf_printf(&t, ",until=%s", tf) < 0;
	for (size_t i = 0; i < s->nids; i++)
		bad |= buf_printf(&t, ",%s%" PRId64, i ? "" : "id=", s->ids[i]) < 0;
	out->text = bad ? NULL : buf_detach(&t, NULL);
	buf_release(&t);
	bad |= !out->text;
	bad |= !(out->service = strdup(q->service));
	bad |= !(out->type = strdup(q->type ? q->type : "cpu"));
	bad |= s->release && !(out->release = strdup(s->release));
	bad |= s->commit && !(out->commit = strdup(s->commit));
	bad |= s->host && !(out->host = strdup(s->host));
	out->since_us = s->since_us;
	out->until_us = s->until_us;
	if (s->nids && !bad) {
		if (!(out->ids = calloc(s->nids, sizeof(*out->ids))))
			bad = true;
		else
			memcpy(out->ids, s->ids, s->nids * sizeof(*s->ids)), out->nids = s->nids;
	}
	if (bad) {
		reportdata_sel_release(out);
		return oom(err);
	}
	return 0;
}

static bool heap_type(const char *t)
{
	return !strcmp(t, "heap") || !strcmp(t, "alloc") || !strcmp(t, "allocs");
}

/* The audit row of a comparison asked for, whatever its outcome. */
static int audit_view(db *d, const token_info *tok, const compare_query *q, unsigned status,
		      pr_error *err)
{
	json_t *o = json_pack("{s:s,s:s,s:s?,s:s,s:s,s:s,s:i}", "token", tok->hint, "team",
			      tok->team, "role", tok->role, "type", q->type ? q->type : "cpu", "a",
			      q->a.text, "b", q->b.text, "status", (int)status);
	char *detail = o ? json_dumps(o, JSON_COMPACT) : NULL;
	char object[160];
	int rc;

	json_decref(o);
	/* Every value was checked as UTF-8 (compare_query_parse, the database's own). */
	if (!detail)
		return oom(err);
	snprintf(object, sizeof(object), "service:%s", q->service);
	rc = db_audit(d, "compare.view", object, detail, err);
	free(detail);
	return rc;
}

/*
 * The captures both selections name and their stored bytes, into *ncaps
 * and *bytes (0 and 0 when a side names none or is refused:
 * reportdata_diff then says why). A capture whose size the index lacks
 * counts 0.
 */
static int sides_size(size_t *ncaps, int64_t *bytes, db *d, const reportdata_sel *base,
		      const reportdata_sel *target, pr_error *err)
{
	static const char sql[] = "select coalesce(sum(blob_bytes), 0)::bigint from profiles"
				  " where id = any($1::bigint[])";
	const reportdata_sel *sel[2] = {base, target};
	reportdata_cap *caps[2] = {NULL, NULL};
	size_t n[2] = {0, 0};
	struct pg_result *res = NULL;
	buf ids = BUF_INIT;
	const char *p[1];
	int rc = 0;

	*ncaps = 0;
	*bytes = 0;
	for (int i = 0; i < 2; i++) {
		pr_error e = PR_ERROR_INIT;
		rc = reportdata_sel_captures(&caps[i], &n[i], d, sel[i], &e);
		if (rc == PR_ENOTFOUND || rc == PR_EUSAGE || rc == PR_EREFUSED) {
			rc = 0;
			goto out;
		}
		if (rc < 0) {
			rc = pr_error_set(err, rc, "%s", e.msg);
			goto out;
		}
	}
	rc = buf_putc(&ids, '{');
	for (int i = 0; i < 2 && rc == 0; i++)
		for (size_t k = 0; k < n[i] && rc == 0; k++)
			rc = buf_printf(&ids, "%s%" PRId64, ids.len > 1 ? "," : "", caps[i][k].id);
	if (rc < 0 || buf_putc(&ids, '}') < 0) {
		rc = oom(err);
		goto out;
	}
	p[0] = ids.ptr;
	if ((rc = db_exec(d, &res, err, "sizing the comparison's captures", sql, 1, p)) < 0)
		goto out;
	*ncaps = n[0] + n[1];
	*bytes = db_get_i64(res, 0, 0);
out:
	db_result_free(res);
	buf_release(&ids);
	reportdata_caps_free(caps[0], n[0]);
	reportdata_caps_free(caps[1], n[1]);
	return rc;
}

/* GET /compare?service=S&type=T&a=..&b=..: the diff page. */
static int page_diff(compare_response *out, const job_env *env, const token_info *tok,
		     const compare_query *q, pr_error *err)
{
	reportdata_sel base, target;
	report r;
	buf b = BUF_INIT;
	pr_error e = PR_ERROR_INIT;
	const char *type = q->type ? q->type : "cpu";
	unsigned status = 200;
	size_t ncaps = 0;
	int64_t bytes = 0;
	int rc;

	memset(&base, 0, sizeof(base));
	memset(&target, 0, sizeof(target));
	memset(&r, 0, sizeof(r));
	/* With a role the database decides; without one there is no heap permission. */
	if (!tok->role && heap_type(type)) {
		char msg[200];
		snprintf(msg, sizeof(msg),
			 "comparing '%s' profiles reads them whole, which needs the heap "
			 "permission: use a token with a database role that has it",
			 type);
		return refuse(out, 403, msg, err);
	}
	if ((rc = side_sel(&base, q, &q->a, err)) < 0 ||
	    (rc = side_sel(&target, q, &q->b, err)) < 0 ||
	    (rc = sides_size(&ncaps, &bytes, env->d, &base, &target, err)) < 0)
		goto out;
	if (bytes > COMPARE_BYTES_MAX) {
		char msg[300];
		snprintf(msg, sizeof(msg),
			 "the two sides are %" PRId64 " bytes of captures (%zu captures), more "
			 "than the %d a comparison may read: narrow them (a host, a time "
			 "range, capture ids)",
			 bytes, ncaps, COMPARE_BYTES_MAX);
		rc = refuse(out, 422, msg, err);
		goto out;
	}
	rc = reportdata_diff(&r, env->d, env->bs, env->cfg, &base, &target, DIFF_TOP, &e);
	if (rc == 0)
		rc = report_html(&b, &r, &e);
	switch (rc) {
	case 0: break;
	case PR_ENOTFOUND: status = 404; break;
	case PR_EUSAGE: status = 400; break;
	case PR_EREFUSED: status = 403; break;
	case PR_EDATA: case PR_ELIMIT: status = 422; break;
	default:
		rc = pr_error_set(err, rc, "%s", e.msg);
		goto out;
	}
	if (status != 200) {
		rc = refuse(out, status, e.msg, err);
		goto out;
	}
	if ((rc = report_csp(&out->csp, b.ptr, b.len, err)) < 0)
		goto out;
	out->status = 200;
	out->content_type = "text/html; charset=utf-8";
	out->body = buf_detach(&b, &out->len);
out:
	buf_release(&b);
	report_release(&r);
	reportdata_sel_release(&base);
	reportdata_sel_release(&target);
	return rc;
}

int compare_page(compare_response *out, const job_env *env, const token_info *tok,
		 const compare_query *q, pr_error *err)
{
	db_service svc;
	pr_error e = PR_ERROR_INIT;
	bool tx = tok->role != NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&svc, 0, sizeof(svc));
	/*
	 * A token with a role: the whole request runs as that role, so row
	 * security chooses what is listed and read, and the database checks
	 * the heap permission and writes the read's audit rows as that role.
	 */
	if (tx && (rc = db_begin(env->d, err)) < 0)
		return rc;
	if (tx && (rc = access_set_role(env->d, tok->role, err)) < 0)
		goto out;
	if (!q->service) {
		rc = page_services(out, env, tok, err);
		goto out;
	}
	/* Another team's service is refused exactly as one that does not exist. */
	rc = db_service_get(env->d, &svc, q->service, &e);
	if (rc < 0 && rc != PR_ENOTFOUND) {
		rc = pr_error_set(err, rc, "%s", e.msg);
		goto out;
	}
	if (rc == PR_ENOTFOUND || !tokens_allows(tok, svc.name, svc.team)) {
		char msg[200];
		snprintf(msg, sizeof(msg), "service '%s' is not this token's", q->service);
		rc = refuse(out, 403, msg, err);
		goto out;
	}
	rc = q->sides ? page_diff(out, env, tok, q, err)
		      : page_picker(out, env, &svc, q->type, err);
out:
	if (tx && rc == 0)
		rc = db_commit(env->d, err);
	else if (tx)
		db_rollback(env->d);
	/* Every comparison asked for, whatever became of it, as the server's role. */
	if (rc == 0 && q->sides)
		rc = audit_view(env->d, tok, q, out->status, err);
	db_service_release(&svc);
	if (rc < 0)
		compare_response_release(out);
	return rc;
}
