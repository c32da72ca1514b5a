/*
 * cmd_ingest.c: `profreg ingest`: files or a manifest into the store.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "common/fileio.h"
#include "common/memhint.h"
#include "common/redact.h"
#include "common/timeutil.h"
#include "common/utf8.h"
#include "pipeline/ingest.h"
#include "pipeline/perf.h"
#include "jobs/config.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_MAX (256u << 20)
/* The huge-page heap of a one-shot ingest, and the most threads it serves. */
#define INGEST_HEAP_BYTES ((size_t)64 << 20)
#define INGEST_HEAP_JOBS_MAX 4

enum {
	O_SERVICE = 's',
	O_RELEASE = 'r',
	O_COMMIT = 'c',
	O_HOST = 1100,
	O_TIME,
	O_TYPE,
	O_TAG,
	O_FORMAT,
	O_MANIFEST,
	O_MAX_INPUT,
	O_MAX_DECOMPRESSED,
	O_MAX_SAMPLES,
	O_MAX_DEPTH,
	O_MAX_STRING,
	O_MAX_FUNCTIONS,
	O_JOBS,
	O_AGAIN,
};

/* Captures written per transaction, and the most file bytes a batch holds in memory. */
#define BATCH_MAX 64
#define BATCH_BYTES (64u << 20)

static const cli_option ingest_opts[] = {
	{"service", required_argument, O_SERVICE, "NAME",
	 "service the captures belong to (must be enabled)"},
	{"release", required_argument, O_RELEASE, "RELEASE", "release (version) that was running"},
	{"commit", required_argument, O_COMMIT, "SHA", "commit SHA of that release (hex)"},
	{"host", required_argument, O_HOST, "HOST", "host the captures came from"},
	{"time", required_argument, O_TIME, "ISO8601",
	 "capture time (default: the profile's own, else the file's mtime)"},
	{"type", required_argument, O_TYPE, "TYPE",
	 "cpu, heap, alloc, wall or goroutine (default: from the profile)"},
	{"tag", required_argument, O_TAG, "K=V", "tag the captures (repeatable)"},
	{"format", required_argument, O_FORMAT, "FMT",
	 "pprof, folded, v8, perf, speedscope, v8heap or jfr (default: detected)"},
	{"manifest", required_argument, O_MANIFEST, "FILE",
	 "JSON Lines manifest, one capture per line"},
	{"max-input-bytes", required_argument, O_MAX_INPUT, "N",
	 "largest file accepted (default 64M)"},
	{"max-decompressed-bytes", required_argument, O_MAX_DECOMPRESSED, "N",
	 "largest decompressed size (default 512M)"},
	{"max-samples", required_argument, O_MAX_SAMPLES, "N",
	 "most samples in one profile (default 10000000)"},
	{"max-depth", required_argument, O_MAX_DEPTH, "N", "deepest stack (default 4096)"},
	{"max-string-length", required_argument, O_MAX_STRING, "N",
	 "longest function or file name (default 65536)"},
	{"max-functions", required_argument, O_MAX_FUNCTIONS, "N",
	 "most distinct functions in one profile (default 500000)"},
	{"jobs", required_argument, O_JOBS, "N",
	 "read and parse on N threads; from 2, the next batch is read while one is "
	 "written (default 1)"},
	{"again", no_argument, O_AGAIN, NULL,
	 "store bytes whose capture retention deleted (by default they are skipped)"},
	{NULL, 0, 0, NULL, NULL},
};

typedef struct ingest_run {
	cli_ctx *ctx;
	db *d;
	blob_store *bs;
	profile_limits lim;
	json_t *results; /* --json: one object per capture */
	size_t stored, already, failed;
	size_t deleted;   /* skipped: retention deleted a capture of these bytes */
	size_t repaired;  /* blobs found missing or damaged, restored from the file */
	size_t not_tried; /* left out after an infrastructure failure */
	int worst;        /* exit code of the worst failure */
	bool progress;
	size_t done, total;
	unsigned jobs;
	bool again;           /* --again: store what retention deleted */
	struct flight *fl[2]; /* two batches: one fills while the other is in flight */
	struct flight *held;  /* read and parsed, not yet written */
	db *d2;               /* with --jobs 2 or more: reads the next batch's look-ups */
} ingest_run;

/*
 * A line of a manifest or a file of the command line, waiting in a batch:
 * a request, or a bad line with its error. Results are recorded in order.
 */
typedef struct pending {
	char *where;      /* "line 3 of 'm.jsonl'", "file 2 of 5"; NULL: no prefix */
	const char *name; /* what record() names on success */
	ingest_desc desc;
	ingest_request req;
	pr_error err;     /* a bad line's error (code != 0) */
} pending;

typedef struct batch {
	pending ent[BATCH_MAX];
	size_t n;
	uint64_t bytes;
	bool prefix;      /* errors start with `where` (a manifest's lines) */
} batch;

/*
 * A batch on its way: its entries, and the requests, results and errors
 * ingest fills for them. With --jobs 2 or more two are in flight: while
 * one is written on the main connection, a thread reads and parses the
 * next (its look-ups on a second connection), so the parsing and the
 * server's work overlap.
 */
typedef struct flight {
	batch b;
	ingest_request reqs[BATCH_MAX];
	ingest_result res[BATCH_MAX];
	pr_error errs[BATCH_MAX];
	size_t nreq;
	ingest_batch *ib;  /* prepared, not yet written */
	bool oom;          /* preparing it ran out of memory */
	db *d;             /* for the thread: where to look up */
	const ingest_run *run;
} flight;

/* Add "K=V" to a JSON object of tags. */
static int add_tag(json_t *tags, const char *kv, pr_error *err)
{
	const char *eq = strchr(kv, '=');
	char *key = NULL;
	int rc;

	if (!eq)
		return pr_error_set(err, PR_EUSAGE, "tag '%.64s' is not KEY=VALUE", kv);
	if (!(key = strndup(kv, (size_t)(eq - kv))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	/* The first value would be dropped unsaid; a manifest's tags refuse a key twice too. */
	if ((rc = ingest_check_tag(key, eq + 1, err)) == 0 && json_object_get(tags, key))
		rc = pr_error_set(err, PR_EUSAGE, "tag '%s' is given twice", key);
	if (rc == 0)
		json_object_set_new(tags, key, json_string(eq + 1));
	free(key);
	return rc;
}

static int validate_request(const ingest_request *r, pr_error *err)
{
	if (!r->service)
		return pr_error_set(err, PR_EUSAGE, "no service given (--service)");
	if (!r->release)
		return pr_error_set(err, PR_EUSAGE, "no release given (--release)");
	return ingest_validate(r, err);
}

/* The progress line on a terminal, in one write like every message. */
static void progress(ingest_run *run, const char *name)
{
	buf line = BUF_INIT;

	if (!run->progress)
		return;
	if (buf_printf(&line, "\r\033[K[%zu/%zu] ", run->done + 1, run->total) == 0 &&
	    cli_escape(&line, name) == 0)
		(void)fileio_write_fd(STDERR_FILENO, line.ptr, line.len);
	buf_release(&line);
}

static void progress_end(ingest_run *run)
{
	if (run->progress)
		fprintf(stderr, "\r\033[K");
}

/*
 * A JSON string of `s`, which a path or a message quoting one may make
 * invalid UTF-8: jansson refuses such a string, and the capture was left
 * out of --json's list without a word. Each byte that is not part of a
 * UTF-8 character is written as the text \xNN, as the terminal shows it.
 */
static json_t *json_text(const char *s)
{
	size_t n = strlen(s), l;
	json_t *j = NULL;
	buf b = BUF_INIT;

	if (utf8_valid(s, n))
		return json_string(s);
	for (size_t i = 0; i < n; i += l ? l : 1) {
		if ((l = utf8_seq_len((const unsigned char *)s + i, n - i)) ?
			    buf_put(&b, s + i, l) < 0 :
			    buf_printf(&b, "\\x%02x", (unsigned char)s[i]) < 0)
			goto out;
	}
	j = json_string(b.ptr);
out:
	buf_release(&b);
	return j;
}

/*
 * Bytes of a capture retention deleted: skipped, not a failure (a drop
 * folder or a manifest that still lists the file is not wrong), but said
 * with the date, so that whoever ingests by hand knows why nothing was
 * stored and how to store it anyway.
 */
static void record_deleted(ingest_run *run, const char *name, const ingest_result *res)
{
	char when[TIME_FMT_MAX], taken[TIME_FMT_MAX];

	run->deleted++;
	time_format(when, res->deleted_at_us);
	time_format(taken, res->deleted_captured_us);
	if (run->results) {
		json_array_append_new(run->results,
				      json_pack("{s:o,s:s,s:s,s:s,s:s}", "path", json_text(name),
						"status", "deleted by retention", "blob_key",
						res->blob_key, "captured_at", taken, "deleted_at",
						when));
		return;
	}
	if (run->ctx->quiet)
		return;
	progress_end(run);
	printf("'");
	cli_put_safe(stdout, name, 0);
	printf("': not stored: retention deleted its capture (taken %s) on %s; "
	       "--again stores it again\n",
	       taken, when);
}

static void record(ingest_run *run, const char *name, const ingest_result *res,
		   const pr_error *err)
{
	char ev[80];

	run->done++;
	if (err && err->code) {
		int status;
		run->failed++;
		progress_end(run);
		status = cli_fail(run->ctx, err);
		/* An infrastructure failure outranks bad input. */
		if (run->worst != EXIT_RUNTIME)
			run->worst = status;
		if (run->results)
			json_array_append_new(run->results, json_pack("{s:o,s:s,s:o}",
				"path", json_text(name), "status", "failed",
				"error", json_text(err->msg)));
		return;
	}
	if (res->retention_deleted) {
		record_deleted(run, name, res);
		return;
	}
	if (res->already)
		run->already++;
	else
		run->stored++;
	if (res->repaired) {
		run->repaired++;
		/* The store lost or damaged bytes: whoever runs it should look at its disk. */
		progress_end(run);
		cli_warn(run->ctx, "'%s': blob %s was missing or damaged in the store; "
			 "restored from this file", name, res->blob_key);
	}
	if (run->results) {
		json_array_append_new(run->results, json_pack("{s:o,s:s,s:I,s:s,s:b}",
			"path", json_text(name),
			"status", res->already ? "already stored" : "stored",
			"capture_id", (json_int_t)res->capture_id, "blob_key", res->blob_key,
			"blob_repaired", res->repaired));
		return;
	}
	if (run->ctx->quiet)
		return;
	progress_end(run);
	if (res->already) {
		printf("'");
		cli_put_safe(stdout, name, 0);
		printf("': already stored as capture %lld\n", (long long)res->capture_id);
		return;
	}
	printf("'");
	cli_put_safe(stdout, name, 0);
	printf("': stored as capture %lld (%s, %s, %lld samples, %zu functions)\n",
	       (long long)res->capture_id, res->format, res->type,
	       (long long)res->sample_count, res->nfunctions);
	if (res->utf8_replaced)
		cli_warn(run->ctx, "'%s': %u name%s invalid UTF-8, replaced with U+FFFD",
			 name, res->utf8_replaced, res->utf8_replaced == 1 ? " had" : "s had");
	if (res->other_events == 1)
		cli_warn(run->ctx,
			 "'%s': only the events of '%s' were kept; 1 event of "
			 "another type was left out",
			 name, perf_event_text(ev, res->event));
	else if (res->other_events)
		cli_warn(run->ctx,
			 "'%s': only the events of '%s' were kept; %llu events of "
			 "other types were left out",
			 name, perf_event_text(ev, res->event),
			 (unsigned long long)res->other_events);
	if (res->sample_count == 0)
		cli_warn(run->ctx, "'%s': the profile has no samples", name);
}

/*
 * Report the failure that stopped a batch at `at` (a manifest's line, a
 * file's place in the list), with how far it got; --json lists it under
 * the file's own `name`, as every other file.
 */
static void record_stop(ingest_run *run, const char *name, const char *at, const pr_error *why,
			size_t left)
{
	pr_error e = PR_ERROR_INIT;
	char failed[48] = "";

	run->not_tried = left;
	if (run->failed)
		snprintf(failed, sizeof(failed), ", %zu failed", run->failed);
	pr_error_set(&e, why->code, "stopped at %s: %s; %zu ingested%s, %zu not tried", at,
		     why->msg, run->stored + run->already, failed, left);
	record(run, name ? name : at, NULL, &e);
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
		*size = BATCH_BYTES; /* unknown: alone in its batch */
	else if (stat(req->path, &st) == 0 && st.st_size > 0)
		*size = (uint64_t)st.st_size;
	return b->n == BATCH_MAX || (b->n > 0 && b->bytes + *size > BATCH_BYTES);
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
					     &f->run->lim, f->run->jobs);
		f->oom = !f->ib;
	}
	return NULL;
}

/*
 * Write f's captures and record every entry in order. True when the run
 * must stop: the database, the blob store or memory failed, and every
 * later ingest would fail the same way; `rest` entries follow the batch.
 */
static bool flight_finish(ingest_run *run, flight *f, size_t rest)
{
	const batch *b = &f->b;
	size_t k = 0, tried = 0;
	bool stop = false;

	if (f->nreq) {
		progress(run, f->reqs[0].display ? f->reqs[0].display : f->reqs[0].path);
		if (f->oom) {
			pr_error_set(&f->errs[0], PR_ENOMEM, "cannot ingest '%s': out of memory",
				     f->reqs[0].display ? f->reqs[0].display : f->reqs[0].path);
			f->res[0].infra = true;
			tried = 1;
		} else {
			tried = ingest_batch_store(f->ib, f->errs, run->d, run->bs);
		}
		f->ib = NULL;
	}
	for (size_t i = 0; i < b->n && !stop; i++) {
		const pending *e = &b->ent[i];
		pr_error err = PR_ERROR_INIT;

		if (e->err.code) {
			record(run, e->where, NULL, &e->err);
			continue;
		}
		if (k >= tried)
			break; /* not reached: the batch stopped before */
		if (f->errs[k].code && (f->res[k].infra || f->errs[k].code == PR_ENOMEM) &&
		    e->where) {
			record_stop(run, e->name, e->where, &f->errs[k], b->n - i - 1 + rest);
			stop = true;
			break;
		}
		if (f->errs[k].code && b->prefix)
			pr_error_set(&err, f->errs[k].code, "%s: %s", e->where, f->errs[k].msg);
		else if (f->errs[k].code)
			err = f->errs[k];
		record(run, e->name, &f->res[k], &err);
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
 * and b is written by the next call or by batch_drain. True when the run
 * must stop (see flight_finish); `rest` entries follow b.
 */
static bool batch_flush(ingest_run *run, batch *b, size_t rest)
{
	flight *prev = run->held, *f = prev == run->fl[0] ? run->fl[1] : run->fl[0];
	pthread_t tid;
	bool stop = false, threaded;

	flight_take(f, b);
	f->run = run;
	if (!run->d2) {
		f->d = run->d;
		flight_prepare(f);
		return flight_finish(run, f, rest);
	}
	f->d = run->d2;
	threaded = pthread_create(&tid, NULL, flight_prepare, f) == 0;
	if (!threaded)
		flight_prepare(f);
	if (prev) {
		run->held = NULL;
		stop = flight_finish(run, prev, rest + f->b.n);
	}
	if (threaded)
		pthread_join(tid, NULL);
	if (stop) {
		flight_drop(f);
		return true;
	}
	run->held = f;
	return false;
}

/* Write and record the batch batch_flush left in flight, if any. */
static bool batch_drain(ingest_run *run)
{
	flight *f = run->held;

	if (!f)
		return false;
	run->held = NULL;
	return flight_finish(run, f, 0);
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

/*
 * Every line of a manifest in order. A bad line is reported with its
 * number and skipped; a failure of the database, the blob store or
 * memory stops the manifest there, saying how far it got. Returns
 * EXIT_OK, or the exit status of a failure before the first line (the
 * manifest cannot be read) or between lines (out of memory); what the
 * lines did is in `run`.
 */
static int ingest_manifest(ingest_run *run, const char *path)
{
	pr_error err = PR_ERROR_INIT;
	buf text = BUF_INIT, where = BUF_INIT;
	ingest_json_source src = {NULL, NULL, NULL, NULL};
	batch *b = NULL;
	char *dir = NULL;
	const char *end;
	size_t lineno = 0, seen = 0;
	int rc, status = EXIT_OK;

	if ((rc = fileio_read(&text, path, MANIFEST_MAX, &err)) < 0)
		goto fail;
	if (!(dir = dir_of(path)) || !(b = calloc(1, sizeof(*b)))) {
		rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
		goto fail;
	}
	b->prefix = true;
	src.dir = dir;
	end = text.ptr + text.len;
	/*
	 * Counted once: the entries left after a batch are the total less
	 * those seen. Counting what follows at every batch made a manifest of
	 * N lines take N * N / 64 steps (two million bad lines, minutes).
	 */
	run->total = count_entries(text.ptr, end);
	/*
	 * Nothing to ingest is no success: a generator that broke and wrote
	 * nothing passed a CI step that ingests its manifest, silently.
	 */
	if (run->total == 0) {
		rc = pr_error_set(&err, PR_EDATA, "manifest '%s' lists no capture (%s)", path,
				  text.len ? "only blank lines" : "it is empty");
		goto fail;
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
		pr_error_clear(&err);
		buf_reset(&where);
		if (buf_printf(&where, "line %zu of '%s'", lineno, path) < 0) {
			rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
			goto fail;
		}
		src.name = where.ptr;
		e = &b->ent[b->n];
		if (ingest_request_from_json(&e->desc, line, len, &src, &e->err) == 0 &&
		    batch_full(b, &e->desc.req, &size)) {
			/* This line starts the next batch. */
			ingest_desc tmp = e->desc;
			memset(&e->desc, 0, sizeof(e->desc));
			if (batch_flush(run, b, run->total - seen + 1)) {
				ingest_desc_release(&tmp);
				goto out;
			}
			e = &b->ent[0];
			e->desc = tmp;
		}
		if (!(e->where = strdup(where.ptr))) {
			ingest_desc_release(&e->desc);
			rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
			goto fail;
		}
		e->req = e->desc.req;
		e->req.again = run->again;
		e->name = e->desc.req.path;
		b->bytes += size;
		b->n++;
		if (b->n == BATCH_MAX && batch_flush(run, b, run->total - seen))
			goto out;
	}
	if (b->n)
		batch_flush(run, b, 0);
	goto out;
fail:
	status = cli_fail(run->ctx, &err);
out:
	if (b)
		batch_clear(b);
	free(b);
	free(dir);
	buf_release(&where);
	buf_release(&text);
	return status;
}

/* The files of the command line, in batches. */
static void ingest_list(ingest_run *run, const ingest_request *base, char **files, size_t n)
{
	batch *b = calloc(1, sizeof(*b));
	char at[64];

	if (!b) {
		pr_error e = PR_ERROR_INIT;
		pr_error_set(&e, PR_ENOMEM, "out of memory");
		record(run, files[0], NULL, &e);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		pending *e;
		ingest_request req = *base;
		uint64_t size;

		req.path = files[i];
		if (batch_full(b, &req, &size) && batch_flush(run, b, n - i))
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
		batch_flush(run, b, 0);
out:
	batch_clear(b);
	free(b);
}

int cmd_ingest(cli_ctx *ctx, int argc, char **argv)
{
	static const char usage[] =
		"profreg ingest FILE... --service S --release R [options]\n"
		"       profreg ingest --manifest FILE [options]";
	static const char desc[] =
		"Store profiles: each file is kept as an immutable compressed blob and\n"
		"summarised per function in the index. The same bytes for the same\n"
		"service are stored once, and bytes whose capture retention deleted\n"
		"are not stored again (--again stores them). Formats: pprof (gzipped\n"
		"or not), folded stacks, V8 .cpuprofile and .heapprofile, perf script\n"
		"text, speedscope JSON, JFR recordings.";
	pr_error err = PR_ERROR_INIT;
	ingest_request base = {0};
	ingest_run run = {0};
	cli_parser *p = NULL;
	json_t *tags = json_object();
	char *tags_text = NULL;
	const char *arg, *manifest = NULL;
	unsigned long long flag[6] = {0}; /* limits given as flags; 0 = not given */
	unsigned long long jobs = 1;
	config cfg = {0};
	bool bad = false;
	int c, first, rc, status;

	run.ctx = ctx;
	if (!tags || cli_parser_new(&p, ctx, argc, argv, ingest_opts, usage, desc) < 0) {
		json_decref(tags);
		return EXIT_RUNTIME;
	}
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_SERVICE: base.service = arg; break;
		case O_RELEASE: base.release = arg; break;
		case O_COMMIT: base.commit = arg; break;
		case O_HOST: base.host = arg; break;
		case O_TYPE: base.type = arg; break;
		case O_MANIFEST: manifest = arg; break;
		case O_AGAIN: base.again = true; break;
		case O_TIME:
			if (time_parse(&base.time_us, arg) < 0) {
				cli_error(ctx, "'--time %s' is not an ISO 8601 time", arg);
				bad = true;
			}
			break;
		case O_FORMAT:
			if (profile_format_from_name(&base.format, arg) < 0) {
				cli_error(ctx, "unknown format '%s' (pprof, folded, v8, perf, "
					  "speedscope, v8heap, jfr)",
					  arg);
				bad = true;
			}
			break;
		case O_TAG:
			if (add_tag(tags, arg, &err) < 0) {
				cli_fail(ctx, &err);
				pr_error_clear(&err);
				bad = true;
			}
			break;
		case O_MAX_INPUT:
			if (cli_parse_size(ctx, "max-input-bytes", arg, 1, SIZE_MAX, &flag[0]) < 0)
				bad = true;
			break;
		case O_MAX_DECOMPRESSED:
			if (cli_parse_size(ctx, "max-decompressed-bytes", arg, 1, SIZE_MAX,
					  &flag[1]) < 0)
				bad = true;
			break;
		case O_MAX_SAMPLES:
			if (cli_parse_u64(ctx, "max-samples", arg, 1, UINT32_MAX, &flag[2]) < 0)
				bad = true;
			break;
		case O_MAX_DEPTH:
			if (cli_parse_u64(ctx, "max-depth", arg, 1, 1u << 20, &flag[3]) < 0)
				bad = true;
			break;
		case O_JOBS:
			if (cli_parse_u64(ctx, "jobs", arg, 1, INGEST_JOBS_MAX, &jobs) < 0)
				bad = true;
			break;
		case O_MAX_STRING:
			if (cli_parse_size(ctx, "max-string-length", arg, 16, 1u << 24,
					  &flag[4]) < 0)
				bad = true;
			break;
		case O_MAX_FUNCTIONS:
			if (cli_parse_u64(ctx, "max-functions", arg, 1, UINT32_MAX, &flag[5]) < 0)
				bad = true;
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, -1, NULL, &first)) != CLI_GO)
		goto out;
	if (!manifest && first >= argc) {
		cli_error(ctx, "no files given (see --help)");
		status = EXIT_USAGE;
		goto out;
	}
	if (manifest && first < argc) {
		cli_error(ctx, "give either files or --manifest, not both");
		status = EXIT_USAGE;
		goto out;
	}
	/*
	 * Standard input is read once: given again, '-' read nothing (an
	 * empty profile, after the first was stored), waited at a terminal
	 * for a second profile, or with --jobs shared the pipe's bytes
	 * between two readers. Refused before anything is read or stored.
	 */
	for (int i = first, seen = 0; i < argc; i++) {
		if (strcmp(argv[i], "-") == 0 && seen++) {
			cli_error(ctx, "'-' (standard input) is given more than once: it is "
				  "read once; save the profile to a file to ingest it again");
			status = EXIT_USAGE;
			goto out;
		}
	}
	if ((!manifest && (rc = validate_request(&base, &err)) < 0) ||
	    (rc = ctx_config_load(ctx, &cfg, &err)) < 0)
		goto fail;
	run.lim = cfg.limits;
	config_release(&cfg);
	if (flag[0]) run.lim.max_input_bytes = flag[0];
	if (flag[1]) run.lim.max_decompressed_bytes = flag[1];
	if (flag[2]) run.lim.max_samples = flag[2];
	if (flag[3]) run.lim.max_depth = (uint32_t)flag[3];
	if (flag[4]) run.lim.max_string_len = (uint32_t)flag[4];
	if (flag[5]) run.lim.max_functions = (uint32_t)flag[5];
	if (json_object_size(tags))
		base.tags_json = tags_text = json_dumps(tags, JSON_COMPACT | JSON_SORT_KEYS);

	if ((rc = ctx_db_open(ctx, &run.d, &err)) < 0 ||
	    (jobs > 1 && (rc = ctx_db_open(ctx, &run.d2, &err)) < 0) ||
	    (rc = ctx_blobs_open(ctx, &run.bs, &err)) < 0)
		goto fail;
	if (!(run.fl[0] = calloc(1, sizeof(flight))) || !(run.fl[1] = calloc(1, sizeof(flight)))) {
		rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
		goto fail;
	}
	status = EXIT_OK;
	run.jobs = (unsigned)jobs;
	run.again = base.again;
	/*
	 * Each capture's buffers are megabytes malloc'd and freed: kept in one
	 * heap on huge pages, the next capture reuses them instead of faulting
	 * in fresh pages (23,000 page faults for 1,280 captures became 1,100).
	 * That heap is one malloc arena: with many parse threads, leave it.
	 */
	if (jobs <= INGEST_HEAP_JOBS_MAX)
		mem_hint_heap(INGEST_HEAP_BYTES);
	if (ctx->json)
		run.results = json_array();
	run.total = (size_t)(argc - first);
	run.progress = !ctx->quiet && !ctx->json && isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
	if (manifest) {
		status = ingest_manifest(&run, manifest);
		batch_drain(&run);
		if (status != EXIT_OK)
			goto out;
	} else {
		run.progress = run.progress && run.total > 1;
		ingest_list(&run, &base, argv + first, (size_t)(argc - first));
		batch_drain(&run);
	}
	progress_end(&run);
	if (run.results) {
		status = cli_print_json(
			ctx, json_pack("{s:o,s:I,s:I,s:I,s:I,s:I,s:I}", "captures", run.results,
				       "stored", (json_int_t)run.stored, "already_stored",
				       (json_int_t)run.already, "deleted_by_retention",
				       (json_int_t)run.deleted, "failed", (json_int_t)run.failed,
				       "not_tried", (json_int_t)run.not_tried, "blobs_repaired",
				       (json_int_t)run.repaired));
		run.results = NULL;
	} else if (!ctx->quiet && run.done > 1) {
		printf("%zu stored, %zu already stored, ", run.stored, run.already);
		if (run.deleted)
			printf("%zu deleted by retention (not stored again), ", run.deleted);
		printf("%zu failed", run.failed);
		if (run.not_tried)
			printf(", %zu not tried", run.not_tried);
		if (run.repaired)
			printf(", %zu blob%s restored", run.repaired, run.repaired == 1 ? "" : "s");
		printf("\n");
	}
	if (status == EXIT_OK && run.failed)
		status = run.worst;
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	if (run.held)
		flight_drop(run.held);
	free(run.fl[0]);
	free(run.fl[1]);
	json_decref(run.results);
	json_decref(tags);
	free(tags_text);
	blob_store_free(run.bs);
	db_close(run.d2);
	db_close(run.d);
	return status;
}
