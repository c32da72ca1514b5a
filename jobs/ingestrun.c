/*
 * ingestrun.c: many files into the store, in batches, two in flight.
 *
 * `profreg ingest` prints; this module decides what goes into which
 * transaction, keeps the order of the outcomes, and says where a run
 * stopped. See ingestrun.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/ingestrun.h"

#include "common/buf.h"
#include "common/fileio.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The largest manifest read. */
#define MANIFEST_MAX (256u << 20)

/*
 * A line of a manifest or a file of a list, waiting in a batch: a
 * request, or a bad line with its error. Outcomes are recorded in order.
 */
typedef struct pending {
	char *where;      /* "line 3 of 'm.jsonl'", "file 2 of 5"; NULL: no prefix */
	const char *name; /* what is recorded on success */
	ingest_desc desc;
	ingest_request req;
	pr_error err; /* a bad line's error (code != 0) */
} pending;

typedef struct batch {
	pending ent[INGESTRUN_BATCH_MAX];
	size_t n;
	uint64_t bytes;
	bool prefix; /* errors start with `where` (a manifest's lines) */
} batch;

/*
 * A batch on its way: its entries, and the requests, results and errors
 * ingest fills for them. With a second connection two are in flight:
 * while one is written on the first, a thread reads and parses the next
 * (its look-ups on the second).
 */
typedef struct flight {
	batch b;
	ingest_request reqs[INGESTRUN_BATCH_MAX];
	ingest_result res[INGESTRUN_BATCH_MAX];
	pr_error errs[INGESTRUN_BATCH_MAX];
	size_t nreq;
	ingest_batch *ib; /* prepared, not yet written */
	bool oom;         /* preparing it ran out of memory */
	db *d;            /* for the thread: where to look up */
	const struct ingestrun *run;
} flight;

struct ingestrun {
	ingestrun_opts o;
	ingestrun_counts n;
	flight *fl[2]; /* two batches: one fills while the other is in flight */
	flight *held;  /* read and parsed, not yet written */
};

int ingestrun_new(ingestrun **out, const ingestrun_opts *o, pr_error *err)
{
	ingestrun *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r || !(r->fl[0] = calloc(1, sizeof(flight))) ||
	    !(r->fl[1] = calloc(1, sizeof(flight)))) {
		ingestrun_free(r);
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	}
	r->o = *o;
	*out = r;
	return 0;
}

const ingestrun_counts *ingestrun_counts_of(const ingestrun *r)
{
	return &r->n;
}

/* Count one outcome, then hand it on. */
static void record(ingestrun *r, const char *name, const ingest_result *res, const pr_error *err)
{
	r->n.done++;
	if (err && err->code)
		r->n.failed++;
	else if (res->retention_deleted)
		r->n.deleted++;
	else {
		if (res->already)
			r->n.already++;
		else
			r->n.stored++;
		if (res->repaired)
			r->n.repaired++;
	}
	r->o.record(r->o.payload, name, err && err->code ? NULL : res, err, &r->n);
}

/*
 * The failure that stopped a batch at `at` (a manifest's line, a file's
 * place in the list), with how far the run got; recorded under the
 * file's own `name`, as every other file.
 */
static void record_stop(ingestrun *r, const char *name, const char *at, const pr_error *why,
			size_t left)
{
	pr_error e = PR_ERROR_INIT;
	char failed[48] = "";

	r->n.not_tried = left;
	if (r->n.failed)
		snprintf(failed, sizeof(failed), ", %zu failed", r->n.failed);
	pr_error_set(&e, why->code, "stopped at %s: %s; %zu ingested%s, %zu not tried", at,
		     why->msg, r->n.stored + r->n.already, failed, left);
	record(r, name ? name : at, NULL, &e);
}

static void batch_clear(batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->ent[i].where);
		ingest_desc_release(&b->ent[i].desc);
	}
	memset(b->ent, 0, sizeof(b->ent[0]) * b->n);
	b->n = 0;
	b->bytes = 0;
}

/* True when a request's file would take the batch past its byte budget. */
static bool batch_full(const batch *b, const ingest_request *req, uint64_t *size)
{
	struct stat st;

	*size = 0;
	if (strcmp(req->path, "-") == 0)
		*size = INGESTRUN_BATCH_BYTES; /* unknown: alone in its batch */
	else if (stat(req->path, &st) == 0 && st.st_size > 0)
		*size = (uint64_t)st.st_size;
	return b->n == INGESTRUN_BATCH_MAX ||
	       (b->n > 0 && b->bytes + *size > INGESTRUN_BATCH_BYTES);
}

/* Move b's entries into f (b is left empty, to be filled again) and list f's requests. */
static void flight_take(flight *f, batch *b)
{
	f->b = *b;
	memset(b->ent, 0, sizeof(b->ent[0]) * b->n);
	b->n = 0;
	b->bytes = 0;
	f->nreq = 0;
	f->ib = NULL;
	f->oom = false;
	for (size_t i = 0; i < f->b.n; i++)
		if (!f->b.ent[i].err.code)
			f->reqs[f->nreq++] = f->b.ent[i].req;
}

/* Check, read, look up and parse f's requests on f->d; nothing is written. */
static void *flight_prepare(void *arg)
{
	flight *f = arg;

	if (f->nreq) {
		f->ib = ingest_batch_prepare(f->res, f->errs, f->d, f->reqs, f->nreq,
					     &f->run->o.lim, f->run->o.jobs);
		f->oom = !f->ib;
	}
	return NULL;
}

/*
 * Write f's captures and record every entry in order. True when the run
 * must stop: the database, the blob store or memory failed, and every
 * later ingest would fail the same way; `rest` entries follow the batch.
 */
static bool flight_finish(ingestrun *r, flight *f, size_t rest)
{
	const batch *b = &f->b;
	size_t k = 0, tried = 0;
	bool stop = false;

	if (f->nreq) {
		if (r->o.progress)
			r->o.progress(r->o.payload,
				      f->reqs[0].display ? f->reqs[0].display : f->reqs[0].path,
				      &r->n);
		if (f->oom) {
			pr_error_set(&f->errs[0], PR_ENOMEM, "cannot ingest '%s': out of memory",
				     f->reqs[0].display ? f->reqs[0].display : f->reqs[0].path);
			f->res[0].infra = true;
			tried = 1;
		} else {
			tried = ingest_batch_store(f->ib, f->errs, r->o.d, r->o.bs);
		}
		f->ib = NULL;
	}
	for (size_t i = 0; i < b->n && !stop; i++) {
		const pending *e = &b->ent[i];
		pr_error err = PR_ERROR_INIT;

		if (e->err.code) {
			record(r, e->where, NULL, &e->err);
			continue;
		}
		if (k >= tried)
			break; /* not reached: the batch stopped before */
		if (f->errs[k].code && (f->res[k].infra || f->errs[k].code == PR_ENOMEM) &&
		    e->where) {
			record_stop(r, e->name, e->where, &f->errs[k], b->n - i - 1 + rest);
			stop = true;
			break;
		}
		if (f->errs[k].code && b->prefix)
			pr_error_set(&err, f->errs[k].code, "%s: %s", e->where, f->errs[k].msg);
		else if (f->errs[k].code)
			err = f->errs[k];
		record(r, e->name, &f->res[k], &err);
		if (f->errs[k].code && (f->res[k].infra || f->errs[k].code == PR_ENOMEM)) {
			stop = true; /* a single file: nothing left to count */
			break;
		}
		k++;
	}
	batch_clear(&f->b);
	return stop;
}

/* Drop f unwritten and unrecorded (the run stopped before it). */
static void flight_drop(flight *f)
{
	ingest_batch_free(f->ib);
	f->ib = NULL;
	batch_clear(&f->b);
}

/*
 * Hand the batch b (left empty) to be ingested, and record what is done.
 * One connection: b is read, parsed and written now. Two: b is read and
 * parsed by a thread while the batch before it is written and recorded,
 * and b is written by the next call or by ingestrun_finish. True when the
 * run must stop (see flight_finish); `rest` entries follow b.
 */
static bool batch_flush(ingestrun *r, batch *b, size_t rest)
{
	flight *prev = r->held, *f = prev == r->fl[0] ? r->fl[1] : r->fl[0];
	pthread_t tid;
	bool stop = false, threaded;

	flight_take(f, b);
	f->run = r;
	if (!r->o.ahead) {
		f->d = r->o.d;
		flight_prepare(f);
		return flight_finish(r, f, rest);
	}
	f->d = r->o.ahead;
	threaded = pthread_create(&tid, NULL, flight_prepare, f) == 0;
	if (!threaded)
		flight_prepare(f);
	if (prev) {
		r->held = NULL;
		stop = flight_finish(r, prev, rest + f->b.n);
	}
	if (threaded)
		pthread_join(tid, NULL);
	if (stop) {
		flight_drop(f);
		return true;
	}
	r->held = f;
	return false;
}

void ingestrun_finish(ingestrun *r)
{
	flight *f = r->held;

	if (!f)
		return;
	r->held = NULL;
	flight_finish(r, f, 0);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 1;
	char *d = malloc(n + 1);

	if (!d)
		return NULL;
	if (slash && n == 0)
		strcpy(d, "/");
	else if (slash)
		memcpy(d, path, n), d[n] = '\0';
	else
		strcpy(d, ".");
	return d;
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/* Lines in [s, end) that are not blank: the captures a manifest lists there. */
static size_t count_entries(const char *s, const char *end)
{
	size_t n = 0;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *stop = nl ? nl : end;
		n += !blank(s, (size_t)(stop - s));
		s = nl ? nl + 1 : end;
	}
	return n;
}

int ingestrun_manifest(ingestrun *r, const char *path, pr_error *err)
{
	buf text = BUF_INIT, where = BUF_INIT;
	ingest_json_source src = {NULL, NULL, NULL, NULL};
	batch *b = NULL;
	char *dir = NULL;
	const char *end;
	size_t lineno = 0, seen = 0;
	int rc = 0;

	if ((rc = fileio_read(&text, path, MANIFEST_MAX, err)) < 0)
		goto out;
	if (!(dir = dir_of(path)) || !(b = calloc(1, sizeof(*b)))) {
		rc = pr_error_set(err, PR_ENOMEM, "out of memory");
		goto out;
	}
	b->prefix = true;
	src.dir = dir;
	end = text.ptr + text.len;
	/*
	 * Counted once: the entries left after a batch are the total less
	 * those seen. Counting what follows at every batch made a manifest of
	 * N lines take N * N / 64 steps (two million bad lines, minutes).
	 */
	r->n.total = count_entries(text.ptr, end);
	/*
	 * Nothing to ingest is no success: a generator that broke and wrote
	 * nothing passed a CI step that ingests its manifest, silently.
	 */
	if (r->n.total == 0) {
		rc = pr_error_set(err, PR_EDATA, "manifest '%s' lists no capture (%s)", path,
				  text.len ? "only blank lines" : "it is empty");
		goto out;
	}
	for (const char *line = text.ptr, *next; line < end; line = next) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t len = (size_t)((nl ? nl : end) - line);
		pending *e;
		uint64_t size = 0;

		next = nl ? nl + 1 : end;
		lineno++;
		if (blank(line, len))
			continue;
		seen++;
		buf_reset(&where);
		if (buf_printf(&where, "line %zu of '%s'", lineno, path) < 0) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		src.name = where.ptr;
		e = &b->ent[b->n];
		if (ingest_request_from_json(&e->desc, line, len, &src, &e->err) == 0 &&
		    batch_full(b, &e->desc.req, &size)) {
			/* This line starts the next batch. */
			ingest_desc tmp = e->desc;
			memset(&e->desc, 0, sizeof(e->desc));
			if (batch_flush(r, b, r->n.total - seen + 1)) {
				ingest_desc_release(&tmp);
				goto out;
			}
			e = &b->ent[0];
			e->desc = tmp;
		}
		if (!(e->where = strdup(where.ptr))) {
			ingest_desc_release(&e->desc);
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
		e->req = e->desc.req;
		e->req.again = r->o.again;
		e->name = e->desc.req.path;
		b->bytes += size;
		b->n++;
		if (b->n == INGESTRUN_BATCH_MAX && batch_flush(r, b, r->n.total - seen))
			goto out;
	}
	if (b->n)
		batch_flush(r, b, 0);
out:
	if (b)
		batch_clear(b);
	free(b);
	free(dir);
	buf_release(&where);
	buf_release(&text);
	return rc;
}

void ingestrun_list(ingestrun *r, const ingest_request *base, char *const *files, size_t n)
{
	batch *b = calloc(1, sizeof(*b));
	char at[64];

	r->n.total = n;
	if (!b) {
		pr_error e = PR_ERROR_INIT;
		pr_error_set(&e, PR_ENOMEM, "out of memory");
		record(r, files[0], NULL, &e);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		pending *e;
		ingest_request req = *base;
		uint64_t size;

		req.path = files[i];
		if (batch_full(b, &req, &size) && batch_flush(r, b, n - i))
			goto out;
		e = &b->ent[b->n];
		e->req = req;
		e->name = files[i];
		if (n > 1) {
			snprintf(at, sizeof(at), "file %zu of %zu", i + 1, n);
			e->where = strdup(at); /* without it, a stop is reported as any failure */
		}
		b->bytes += size;
		b->n++;
	}
	if (b->n)
		batch_flush(r, b, 0);
out:
	batch_clear(b);
	free(b);
}

void ingestrun_free(ingestrun *r)
{
	if (!r)
		return;
	if (r->held)
		flight_drop(r->held);
	free(r->fl[0]);
	free(r->fl[1]);
	free(r);
}
