/*
 * cmd_ingest.c: `profreg ingest`: files or a manifest into the store.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "common/fileio.h"
#include "common/memhint.h"
#include "common/timeutil.h"
#include "common/utf8.h"
#include "jobs/ingestrun.h"
#include "pipeline/ingest.h"
#include "pipeline/perf.h"
#include "jobs/config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* What the command keeps of a run besides its counts: how to print each capture. */
typedef struct ingest_cmd {
	cli_ctx *ctx;
	json_t *results; /* --json: one object per capture */
	int worst;       /* exit code of the worst failure */
	bool progress;
} ingest_cmd;

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
static void progress(void *payload, const char *name, const ingestrun_counts *n)
{
	ingest_cmd *run = payload;
	buf line = BUF_INIT;

	if (!run->progress)
		return;
	if (buf_printf(&line, "\r\033[K[%zu/%zu] ", n->done + 1, n->total) == 0 &&
	    cli_escape(&line, name) == 0)
		(void)fileio_write_fd(STDERR_FILENO, line.ptr, line.len);
	buf_release(&line);
}

static void progress_end(ingest_cmd *run)
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
static void record_deleted(ingest_cmd *run, const char *name, const ingest_result *res)
{
	char when[TIME_FMT_MAX], taken[TIME_FMT_MAX];

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

/* Print one capture's outcome (ingestrun_record_fn). */
static void record(void *payload, const char *name, const ingest_result *res, const pr_error *err,
		   const ingestrun_counts *counts)
{
	ingest_cmd *run = payload;
	char ev[80];

	(void)counts;
	if (err && err->code) {
		int status;
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
	if (res->repaired) {
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
	ingest_cmd run = {0};
	ingestrun_opts io = {0};
	ingestrun *ir = NULL;
	const ingestrun_counts *n;
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
	io.lim = cfg.limits;
	config_release(&cfg);
	if (flag[0])
		io.lim.max_input_bytes = flag[0];
	if (flag[1])
		io.lim.max_decompressed_bytes = flag[1];
	if (flag[2])
		io.lim.max_samples = flag[2];
	if (flag[3])
		io.lim.max_depth = (uint32_t)flag[3];
	if (flag[4])
		io.lim.max_string_len = (uint32_t)flag[4];
	if (flag[5])
		io.lim.max_functions = (uint32_t)flag[5];
	if (json_object_size(tags))
		base.tags_json = tags_text = json_dumps(tags, JSON_COMPACT | JSON_SORT_KEYS);

	io.jobs = (unsigned)jobs;
	io.again = base.again;
	io.record = record;
	io.progress = progress;
	io.payload = &run;
	if ((rc = ctx_db_open(ctx, &io.d, &err)) < 0 ||
	    (jobs > 1 && (rc = ctx_db_open(ctx, &io.ahead, &err)) < 0) ||
	    (rc = ctx_blobs_open(ctx, &io.bs, &err)) < 0 ||
	    (rc = ingestrun_new(&ir, &io, &err)) < 0)
		goto fail;
	status = EXIT_OK;
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
	run.progress = !ctx->quiet && !ctx->json && isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
	if (manifest) {
		if (ingestrun_manifest(ir, manifest, &err) < 0)
			status = cli_fail(ctx, &err);
		ingestrun_finish(ir);
		if (status != EXIT_OK)
			goto out;
	} else {
		run.progress = run.progress && argc - first > 1;
		ingestrun_list(ir, &base, argv + first, (size_t)(argc - first));
		ingestrun_finish(ir);
	}
	progress_end(&run);
	n = ingestrun_counts_of(ir);
	if (run.results) {
		status = cli_print_json(
			ctx, json_pack("{s:o,s:I,s:I,s:I,s:I,s:I,s:I}", "captures", run.results,
				       "stored", (json_int_t)n->stored, "already_stored",
				       (json_int_t)n->already, "deleted_by_retention",
				       (json_int_t)n->deleted, "failed", (json_int_t)n->failed,
				       "not_tried", (json_int_t)n->not_tried, "blobs_repaired",
				       (json_int_t)n->repaired));
		run.results = NULL;
	} else if (!ctx->quiet && n->done > 1) {
		printf("%zu stored, %zu already stored, ", n->stored, n->already);
		if (n->deleted)
			printf("%zu deleted by retention (not stored again), ", n->deleted);
		printf("%zu failed", n->failed);
		if (n->not_tried)
			printf(", %zu not tried", n->not_tried);
		if (n->repaired)
			printf(", %zu blob%s restored", n->repaired, n->repaired == 1 ? "" : "s");
		printf("\n");
	}
	if (status == EXIT_OK && n->failed)
		status = run.worst;
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	ingestrun_free(ir);
	json_decref(run.results);
	json_decref(tags);
	free(tags_text);
	blob_store_free(io.bs);
	db_close(io.ahead);
	db_close(io.d);
	return status;
}
