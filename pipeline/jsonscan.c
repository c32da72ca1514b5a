/*
 * jsonscan.c: the streaming JSON reading the JSON profile parsers share
 * (see jsonscan.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/jsonscan.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longer number texts are refused: no writer needs them. */
#define NUMBER_MAX 128

size_t jsonscan_bom(const uint8_t *data, size_t len)
{
	return len >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf ? 3 : 0;
}

void jsonscan_init(jsonscan *js, const char *name, pr_error *err, const uint8_t *data,
		   size_t len, const jsonscan_ops *ops, void *owner)
{
	size_t bom = jsonscan_bom(data, len);

	js->name = name ? name : "-";
	js->err = err;
	js->text = data + bom;
	js->text_len = len - bom;
	js->ops = ops;
	js->owner = owner;
}

int jsonscan_begin(jsonscan *js, profile_format format, const profile_limits *lim)
{
	int rc;

	if ((rc = profile_new(&js->p, format, js->name, lim, js->err)) < 0)
		return rc;
	return js->text_len ? 0 : jsonscan_bad(js, "the input is empty");
}

void jsonscan_release(jsonscan *js)
{
	if (js->yh)
		yajl_free(js->yh);
	js->yh = NULL;
}

/* "cannot parse 'name': <reason>" with code `code`, into `e`. */
static int vset(jsonscan *js, pr_error *e, int code, const char *fmt, va_list ap)
{
	char reason[512];

	vsnprintf(reason, sizeof(reason), fmt, ap);
	return pr_error_set(e, code, "cannot parse '%s': %s", js->name, reason);
}

/* A profile error found after the text was read: reported at once. */
int jsonscan_bad(jsonscan *js, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vset(js, js->err, PR_EDATA, fmt, ap);
	va_end(ap);
	return rc;
}

int jsonscan_limit(jsonscan *js, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vset(js, js->err, PR_ELIMIT, fmt, ap);
	va_end(ap);
	return rc;
}

int jsonscan_nomem(jsonscan *js)
{
	return pr_error_set(js->err, PR_ENOMEM, "cannot parse '%s': out of memory", js->name);
}

/* ---- while yajl reads: skipping, errors, limits ---------------------- */

static void scalars_off(jsonscan *js);

/*
 * A profile error found while reading: keep the first, and only check
 * the rest of the text as JSON (see the header comment). Once ignoring,
 * no callback reaches the parser, so no later error can replace it.
 */
void jsonscan_defer(jsonscan *js, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(js, &js->pending, PR_EDATA, fmt, ap);
	va_end(ap);
	js->ignoring = true;
	scalars_off(js);
}

/* Where yajl is in the text, as a line and a column (both from 1). */
static void position(const jsonscan *js, size_t *line, size_t *col)
{
	size_t off = js->completing ? js->text_len : yajl_get_bytes_consumed(js->yh);
	const unsigned char *t = js->text, *q = t, *nl;

	if (off > js->text_len)
		off = js->text_len;
	*line = 1;
	while ((nl = memchr(q, '\n', off - (size_t)(q - t)))) {
		(*line)++;
		q = nl + 1;
	}
	*col = off - (size_t)(q - t) + 1;
}

/* A JSON error stops the parse at once, wherever it is. Returns 0. */
static int json_error(jsonscan *js, const char *reason)
{
	size_t line, col;

	position(js, &line, &col);
	js->rc = pr_error_set(js->err, PR_EDATA,
			      "cannot parse '%s': invalid JSON at line %zu column %zu: %s",
			      js->name, line, col, reason);
	return 0;
}

/* yajl's "cancel" is 0. */
int jsonscan_stop(jsonscan *js, int rc)
{
	js->rc = rc;
	return 0;
}

int jsonscan_take(jsonscan *js, uint64_t bytes)
{
	return profile_mem_take(js->p, bytes, js->err);
}

int jsonscan_grow(jsonscan *js, void **arr, size_t *cap, size_t n, size_t size)
{
	void *a;
	size_t c;
	int rc;

	if ((rc = jsonscan_take(js, size)) < 0)
		return rc;
	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 256;
	if (!(a = realloc(*arr, c * size)))
		return jsonscan_nomem(js);
	*arr = a;
	*cap = c;
	return 0;
}

int jsonscan_int(jsonscan *js, const char *s, size_t n, int64_t *out)
{
	char tmp[NUMBER_MAX + 1];
	long long v;

	/* yajl has checked the syntax, -?[0-9]+; 18 digits cannot overflow. */
	if (n <= 18) {
		bool neg = s[0] == '-';
		int64_t w = 0;

		for (size_t i = neg; i < n; i++)
			w = w * 10 + (s[i] - '0');
		*out = neg ? -w : w;
		return 1;
	}
	if (n > 20)
		return json_error(js, "integer out of range");
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	errno = 0;
	v = strtoll(tmp, NULL, 10);
	if (errno == ERANGE)
		return json_error(js, "integer out of range");
	*out = v;
	return 1;
}

int jsonscan_real(jsonscan *js, const char *s, size_t n, double *out)
{
	char tmp[NUMBER_MAX + 1];
	double d;

	if (n > NUMBER_MAX)
		return json_error(js, "number of more than 128 characters");
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	errno = 0;
	d = strtod(tmp, NULL);
	if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL))
		return json_error(js, "real number out of range");
	*out = d;
	return 1;
}

int jsonscan_key(jsonscan *js, const char *const *names, int first, int last,
		 const unsigned char *s, size_t n, uint32_t *seen)
{
	for (int k = first; k && k <= last; k++) {
		if (strlen(names[k]) != n || memcmp(names[k], s, n) != 0)
			continue;
		if (*seen & (1u << k)) {
			char reason[64];

			snprintf(reason, sizeof(reason), "duplicate object key \"%s\"", names[k]);
			json_error(js, reason);
			return -1;
		}
		*seen |= 1u << k;
		return k;
	}
	return 0;
}

int jsonscan_name(jsonscan *js, buf *dst, const char *s, size_t n)
{
	int rc;

	if (n > js->p->limits.max_string_len) {
		rc = jsonscan_limit(js, "a name of %zu bytes exceeds the limit of %u bytes", n,
				    js->p->limits.max_string_len);
		return jsonscan_stop(js, rc);
	}
	buf_reset(dst);
	if (buf_put(dst, s, n) < 0)
		return jsonscan_stop(js, jsonscan_nomem(js));
	return 1;
}

static int cb_number(void *arg, const char *s, size_t n)
{
	jsonscan *js = arg;
	bool real = memchr(s, '.', n) || memchr(s, 'e', n) || memchr(s, 'E', n);

	return js->ops->scalar(js->owner, real ? JSONSCAN_REAL : JSONSCAN_INT, s, n);
}

static int cb_string(void *arg, const unsigned char *s, size_t n)
{
	jsonscan *js = arg;

	return js->ops->scalar(js->owner, JSONSCAN_STRING, (const char *)s, n);
}

static int cb_bool(void *arg, int v)
{
	jsonscan *js = arg;

	(void)v;
	return js->ops->scalar(js->owner, JSONSCAN_BOOL, "", 0);
}

static int cb_null(void *arg)
{
	jsonscan *js = arg;

	return js->ops->scalar(js->owner, JSONSCAN_NULL, "", 0);
}

static void scalars_on(jsonscan *js);

static int cb_key(void *arg, const unsigned char *s, size_t n)
{
	jsonscan *js = arg;

	/* The previous key's value may have been turned off. */
	scalars_on(js);
	return js->ops->key(js->owner, s, n);
}

/*
 * yajl decodes a string only for a string callback, so the value of a
 * key nothing here reads is never decoded or converted: its scalars are
 * turned off until the next key or the end of its object.
 */
void jsonscan_values_off(jsonscan *js)
{
	js->cb.yajl_null = NULL;
	js->cb.yajl_boolean = NULL;
	js->cb.yajl_number = NULL;
	js->cb.yajl_string = NULL;
}

/* Inside a skipped container only the nesting is followed. */
static void scalars_off(jsonscan *js)
{
	jsonscan_values_off(js);
	js->cb.yajl_map_key = NULL;
}

static void scalars_on(jsonscan *js)
{
	js->cb.yajl_null = cb_null;
	js->cb.yajl_boolean = cb_bool;
	js->cb.yajl_number = cb_number;
	js->cb.yajl_string = cb_string;
	js->cb.yajl_map_key = cb_key;
}

void jsonscan_skip(jsonscan *js)
{
	js->skip = js->depth;
	scalars_off(js);
}

static int open_container(jsonscan *js, bool object)
{
	if (++js->depth > JSONSCAN_MAX_DEPTH) {
		char reason[64];

		snprintf(reason, sizeof(reason), "maximum parsing depth of %d exceeded",
			 JSONSCAN_MAX_DEPTH);
		return json_error(js, reason);
	}
	if (js->ignoring || js->skip)
		return 1;
	return js->ops->open(js->owner, object);
}

static int cb_start_map(void *arg)
{
	return open_container(arg, true);
}

static int cb_start_array(void *arg)
{
	return open_container(arg, false);
}

static int cb_end(void *arg)
{
	jsonscan *js = arg;

	if (js->skip) {
		/* The skipped value, or a container inside it, ends. */
		if (js->depth == js->skip) {
			js->skip = 0;
			if (!js->ignoring)
				scalars_on(js);
		}
		js->depth--;
		return 1;
	}
	js->depth--;
	if (js->ignoring)
		return 1;
	/* The container may have been the value of a key whose scalars were off. */
	scalars_on(js);
	return js->ops->close(js->owner);
}

/*
 * yajl's own message without its "parse error: " or "lexical error: "
 * prefix and full stop. Never verbose: that would quote the input.
 */
static int yajl_failed(jsonscan *js)
{
	unsigned char *msg = yajl_get_error(js->yh, 0, NULL, 0);
	char reason[256];
	const char *r = msg ? (const char *)msg : "malformed";
	const char *colon = strstr(r, "error: ");
	size_t k;

	if (colon)
		r = colon + 7;
	snprintf(reason, sizeof(reason), "%s", r);
	k = strlen(reason);
	while (k && (reason[k - 1] == '\n' || reason[k - 1] == '.'))
		reason[--k] = '\0';
	if (msg)
		yajl_free_error(js->yh, msg);
	if (strcmp(reason, "premature EOF") == 0)
		snprintf(reason, sizeof(reason), "the input ends too early (truncated?)");
	json_error(js, reason);
	return js->rc;
}

int jsonscan_read(jsonscan *js)
{
	yajl_status st;

	scalars_on(js);
	js->cb.yajl_start_map = cb_start_map;
	js->cb.yajl_end_map = cb_end;
	js->cb.yajl_start_array = cb_start_array;
	js->cb.yajl_end_array = cb_end;
	/* UTF-8 is validated (the default); no comments, one value, no garbage. */
	if (!(js->yh = yajl_alloc(&js->cb, NULL, js)))
		return jsonscan_nomem(js);
	st = yajl_parse(js->yh, js->text, js->text_len);
	if (st == yajl_status_ok) {
		js->completing = true;
		st = yajl_complete_parse(js->yh);
	}
	if (st == yajl_status_client_canceled)
		return js->rc;
	if (st != yajl_status_ok)
		return yajl_failed(js);
	if (js->pending.code)
		return pr_error_set(js->err, js->pending.code, "%s", js->pending.msg);
	return 0;
}

void jsonscan_frames_init(jsonscan_frames *f)
{
	memset(f, 0, sizeof(*f));
	strmap_init(&f->map);
}

int jsonscan_frames_keep(jsonscan *js, jsonscan_frames *f, const buf *fn, const buf *url,
			 uint32_t *idx)
{
	buf key = BUF_INIT;
	uint32_t len = (uint32_t)fn->len;
	const char *stored;
	int rc = 0;

	if (buf_put(&key, &len, sizeof(len)) < 0 || buf_put(&key, fn->ptr, fn->len) < 0 ||
	    buf_put(&key, url->ptr, url->len) < 0) {
		rc = jsonscan_nomem(js);
		goto out;
	}
	if (!strmap_get(&f->map, key.ptr, key.len, idx)) {
		uint64_t cost = key.len + 1 + 3 * sizeof(strmap_slot);

		if ((rc = jsonscan_take(js, cost)) < 0 ||
		    (rc = jsonscan_grow(js, (void **)&f->at, &f->cap, f->n, sizeof(*f->at))) < 0)
			goto out;
		f->charged += cost + sizeof(*f->at);
		if (strmap_put(&f->map, key.ptr, key.len, f->n, idx, &stored) < 0) {
			rc = jsonscan_nomem(js);
			goto out;
		}
		f->at[f->n].key = stored;
		f->at[f->n].len = key.len;
		f->at[f->n].func = UINT32_MAX;
		f->n++;
	}
out:
	buf_release(&key);
	return rc;
}

int jsonscan_frames_intern(jsonscan *js, jsonscan_frames *f, uint32_t idx, uint32_t *func)
{
	jsonscan_frame *k = &f->at[idx];
	const char *fname = k->key + sizeof(uint32_t), *url;
	uint32_t fname_len;
	size_t url_len;
	int rc;

	/* Every node of a long file name would make it stable again (symname.h). */
	if (k->func != UINT32_MAX) {
		*func = k->func;
		return 0;
	}
	memcpy(&fname_len, k->key, sizeof(fname_len));
	url = fname + fname_len;
	url_len = k->len - sizeof(fname_len) - fname_len;
	if (fname_len == 0) {
		fname = "(anonymous)";
		fname_len = (uint32_t)strlen(fname);
	}
	if ((rc = profile_intern(js->p, func, fname, fname_len, url, url_len, js->err)) == 0)
		k->func = *func;
	return rc;
}

void jsonscan_frames_drop(jsonscan *js, jsonscan_frames *f)
{
	profile_mem_give(js->p, f->charged);
	jsonscan_frames_release(f);
	jsonscan_frames_init(f);
}

void jsonscan_frames_release(jsonscan_frames *f)
{
	strmap_release(&f->map);
	free(f->at);
	f->at = NULL;
	f->n = 0;
	f->cap = 0;
	f->charged = 0;
}
