/*
 * fuzz_s3xml.c: libFuzzer target for the readers of an S3 server's XML
 * answers (blob_s3_list_page, blob_s3_error_read), the code the S3 store
 * and bucket client run on every ListObjectsV2 page and error body.
 *
 * Every input is read as an error document, as a page listing every
 * object with no prefix and under "p/", and as a page of the store's
 * blobs under "p/". What must hold:
 *   - a read returns 0 or PR_EDATA whose message starts with the name of
 *     the input; XML refused ("unreadable XML (WHY)") is refused by every
 *     reader for the same reason, since they share one reader;
 *   - no text is longer than BLOB_S3_XML_TEXT_MAX, and when the input
 *     (up to 64 KiB) holds no reference, CDATA, comment, processing
 *     instruction or carriage return, every token, key, Code and Message
 *     read is found whole in the input between '>' and "</" (nothing cut
 *     short);
 *   - objects have a name, handed once per count in `taken`, their key
 *     at most the page's last_key; the blobs read are exactly the
 *     objects of the layout (same order, sizes and times);
 *   - a page read again after its own last key is refused as a page
 *     served again; a document read as an error with a Code is never a
 *     listing;
 *   - a callback's failure is returned as it is and stops the calls.
 *
 * Seeds (tests/fuzz/corpus/s3xml/): ListObjectsV2 pages and error
 * bodies written by hand after AWS's documented examples.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/blob_s3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define WHAT_LIST "cannot list 's3://fuzz/p/'"
#define WHAT_ERROR "error of 's3://fuzz/p/'"
#define LAYOUT "sha256/"

typedef struct obj {
	char *name;
	uint64_t size;
	int64_t mtime_us;
} obj;

/* What the callbacks of one read saw. */
typedef struct seen {
	obj *v;
	size_t n, cap;
	size_t fail_at; /* fail the call of this number (1 is the first); 0: never */
	const char *prefix;
	const char *input;
	size_t input_len;
	int plain; /* texts are found whole in the input */
} seen;

static blob_s3_page page;

static void seen_release(seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* Whether `a` `b` `c` `d` stand one after the other in the `n` bytes of `hay`. */
static int find4(const char *hay, size_t n, const char *a, const char *b, const char *c,
		 const char *d)
{
	const char *part[4] = {a, b, c, d};
	size_t len[4], l = 0;

	for (int k = 0; k < 4; k++)
		l += len[k] = strlen(part[k]);
	for (size_t i = 0; i + l <= n; i++) {
		size_t at = i;
		int k = 0;
		for (; k < 4 && memcmp(hay + at, part[k], len[k]) == 0; k++)
			at += len[k];
		if (k == 4)
			return 1;
	}
	return 0;
}

static int find(const char *hay, size_t n, const char *a, const char *b, const char *c)
{
	return find4(hay, n, a, b, c, "");
}

/* Text `a` `b` read from the input is there whole: ">" a b "</". */
static void check_whole(const seen *s, const char *a, const char *b)
{
	if (strlen(a) + strlen(b) > BLOB_S3_XML_TEXT_MAX)
		abort();
	if (s->plain && !find4(s->input, s->input_len, ">", a, b, "</"))
		abort();
}

static int record(seen *s, const char *name, uint64_t size, int64_t mtime_us, pr_error *err)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		obj *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			abort();
		s->v = v, s->cap = cap;
	}
	if (!(s->v[s->n].name = strdup(name)))
		abort();
	s->v[s->n].size = size;
	s->v[s->n].mtime_us = mtime_us;
	s->n++;
	if (s->fail_at && s->n > s->fail_at)
		abort(); /* called again after it failed */
	if (s->fail_at == s->n)
		return pr_error_set(err, PR_EIO, "stop at %zu", s->n);
	return 0;
}

static int on_object(void *ud, const blob_s3_object *o, pr_error *err)
{
	seen *s = ud;

	if (!o->name[0])
		abort();
	check_whole(s, s->prefix, o->name);
	return record(s, o->name, o->size, o->mtime_us, err);
}

static int on_blob(void *ud, const blob_entry *e, pr_error *err)
{
	seen *s = ud;
	char name[sizeof(LAYOUT) + BLOB_KEY_HEX + 8];

	if (!blob_key_valid(e->key))
		abort();
	snprintf(name, sizeof(name), LAYOUT "%.2s/%s.zst", e->key, e->key + 2);
	check_whole(s, s->prefix, name);
	return record(s, name, e->size, e->mtime_us, err);
}

static int starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* The reason of an "unreadable XML (WHY)" message, or NULL. */
static const char *xml_why(const pr_error *err, const char *what)
{
	const char *m = err->msg;

	if (!starts(m, what))
		return NULL;
	m += strlen(what);
	if (!starts(m, ": unreadable XML ("))
		return NULL;
	if (m[strlen(m) - 1] != ')')
		abort();
	return m + strlen(": unreadable XML (");
}

/* One read of the input as a page: its rc; the callbacks' calls in *s. */
static int read_page(seen *s, const uint8_t *data, size_t size, const char *prefix,
		     const char *after, int blobs, pr_error *err)
{
	int rc;

	page.prefix = prefix;
	page.after = after;
	page.blob_fn = blobs ? on_blob : NULL;
	page.object_fn = blobs ? NULL : on_object;
	page.ud = s;
	s->prefix = prefix;
	rc = blob_s3_list_page(&page, (const char *)data, size, WHAT_LIST, err);
	if (rc == 0 && (err->code || page.taken != s->n))
		abort();
	/* The readers' own refusals name the input; a callback's failure is its own. */
	if (rc < 0 && (err->code != rc || (rc == PR_EDATA && !starts(err->msg, WHAT_LIST ": "))))
		abort();
	if (rc < 0 && rc != PR_EDATA && !(s->fail_at && rc == PR_EIO))
		abort();
	if (strlen(page.token) > BLOB_S3_XML_TEXT_MAX ||
	    strlen(page.last_key) > BLOB_S3_XML_TEXT_MAX)
		abort();
	if (rc == 0) {
		if (page.token[0])
			check_whole(s, page.token, "");
		if (strcmp(page.last_key, after) < 0)
			abort();
		for (size_t i = 0; i < s->n; i++) {
			char key[2 * BLOB_S3_XML_TEXT_MAX + 2];
			snprintf(key, sizeof(key), "%s%s", prefix, s->v[i].name);
			if (strcmp(key, page.last_key) > 0 || (after[0] && strcmp(key, after) <= 0))
				abort();
		}
	}
	return rc;
}

/* Whether object name `n` is a blob of the layout ("sha256/ab/cdef....zst"). */
static int layout_name(const char *n)
{
	char key[BLOB_KEY_HEX + 1];
	size_t ll = strlen(LAYOUT);

	if (strncmp(n, LAYOUT, ll) != 0 || strlen(n) != ll + 3 + BLOB_KEY_HEX - 2 + 4 ||
	    n[ll + 2] != '/' || strcmp(n + ll + 3 + BLOB_KEY_HEX - 2, ".zst") != 0)
		return 0;
	memcpy(key, n + ll, 2);
	memcpy(key + 2, n + ll + 3, BLOB_KEY_HEX - 2);
	key[BLOB_KEY_HEX] = '\0';
	return blob_key_valid(key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	blob_s3_error e;
	pr_error eerr = PR_ERROR_INIT, lerr = PR_ERROR_INIT, perr = PR_ERROR_INIT,
		 berr = PR_ERROR_INIT, aerr = PR_ERROR_INIT, ferr = PR_ERROR_INIT;
	seen all = {0}, under = {0}, blobs = {0}, again = {0}, failing = {0};
	const char *gt = memchr(in, '>', size);
	int plain, erc, lrc, prc, brc, arc, frc;
	char last[BLOB_S3_XML_TEXT_MAX + 1];
	size_t taken_all;

	/*
	 * Texts are the input's own bytes when nothing in it is replaced or
	 * left out; looked for in inputs of up to 64 KiB, to keep runs fast.
	 */
	plain = size <= 65536 && !memchr(in, '&', size) && !memchr(in, '\r', size) &&
		!find(in, size, "<!", "", "") &&
		!(gt && find(gt, size - (size_t)(gt - in), "<?", "", ""));
	all.input = under.input = blobs.input = again.input = failing.input = in;
	all.input_len = under.input_len = blobs.input_len = again.input_len = failing.input_len =
		size;
	all.plain = under.plain = blobs.plain = again.plain = failing.plain = plain;

	/* The error document. */
	erc = blob_s3_error_read(&e, in, size, WHAT_ERROR, &eerr);
	if (strlen(e.code) >= sizeof(e.code) || strlen(e.message) >= sizeof(e.message))
		abort();
	if (erc < 0 && (erc != PR_EDATA || eerr.code != erc || !xml_why(&eerr, WHAT_ERROR) ||
			e.code[0] || e.message[0]))
		abort();
	if (erc == 0 && plain) {
		if (strlen(e.code) < sizeof(e.code) - 1 && e.code[0] &&
		    !find(in, size, ">", e.code, "</"))
			abort();
		if (strlen(e.message) < sizeof(e.message) - 1 && e.message[0] &&
		    !find(in, size, ">", e.message, "</"))
			abort();
	}

	/* Every object, with no prefix. */
	lrc = read_page(&all, data, size, "", "", 0, &lerr);
	taken_all = all.n;
	{
		const char *lwhy = lrc < 0 ? xml_why(&lerr, WHAT_LIST ": the answer") : NULL;
		const char *ewhy = erc < 0 ? xml_why(&eerr, WHAT_ERROR) : NULL;
		if (!lwhy != !ewhy || (lwhy && strcmp(lwhy, ewhy) != 0))
			abort();
	}
	/* A 200 whose body is an error is no listing. */
	if (erc == 0 && e.code[0] && lrc != PR_EDATA)
		abort();
	snprintf(last, sizeof(last), "%s", page.last_key);

	/* A page served again is refused. */
	if (lrc == 0 && last[0]) {
		arc = read_page(&again, data, size, "", last, 0, &aerr);
		if (arc != PR_EDATA || !strstr(aerr.msg, "(a page served again)"))
			abort();
	}

	/* A callback's failure stops the calls and is returned as it is. */
	failing.fail_at = 1 + size % 4;
	frc = read_page(&failing, data, size, "", "", 0, &ferr);
	if (taken_all >= failing.fail_at) {
		char want[64];
		snprintf(want, sizeof(want), "stop at %zu", failing.fail_at);
		if (frc != PR_EIO || strcmp(ferr.msg, want) != 0 || failing.n != failing.fail_at)
			abort();
	} else if (frc != lrc || strcmp(ferr.msg, lerr.msg) != 0 || failing.n != taken_all) {
		abort();
	}

	/* Every object under "p/", and the blobs under it: the same objects. */
	prc = read_page(&under, data, size, "p/", "", 0, &perr);
	brc = read_page(&blobs, data, size, "p/", "", 1, &berr);
	if (prc == 0 && brc == 0) {
		size_t j = 0;
		for (size_t i = 0; i < under.n; i++) {
			if (!layout_name(under.v[i].name))
				continue;
			if (j >= blobs.n || strcmp(blobs.v[j].name, under.v[i].name) != 0 ||
			    blobs.v[j].size != under.v[i].size ||
			    blobs.v[j].mtime_us != under.v[i].mtime_us)
				abort();
			j++;
		}
		if (j != blobs.n)
			abort();
	}

	seen_release(&all);
	seen_release(&under);
	seen_release(&blobs);
	seen_release(&again);
	seen_release(&failing);
	return 0;
}
