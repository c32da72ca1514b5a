/*
 * cmd_ingest.c: `profreg ingest`: files or a manifest into the store.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "common/fileio.h"
#include "common/timeutil.h"
#include "pipeline/ingest.h"
#include "jobs/config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MANIFEST_MAX (256u << 20)

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
	 "pprof, folded, v8 or perf (default: detected)"},
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
	{NULL, 0, 0, NULL, NULL},
};

typedef struct ingest_run {
	cli_ctx *ctx;
	db *d;
	blob_store *bs;
	profile_limits lim;
	json_t *results; /* --json: one object per capture */
	size_t stored, already, failed;
	size_t not_tried; /* left out after an infrastructure failure */
	int worst;        /* exit code of the worst failure */
	bool progress;
	size_t done, total;
} ingest_run;

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
	if ((rc = ingest_check_tag(key, eq + 1, err)) == 0)
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

static void record(ingest_run *run, const char *name, const ingest_result *res,
		   const pr_error *err)
{
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
			json_array_append_new(run->results, json_pack("{s:s,s:s,s:s}",
				"path", name, "status", "failed", "error", err->msg));
		return;
	}
	if (res->already)
		run->already++;
	else
		run->stored++;
	if (run->results) {
		json_array_append_new(run->results, json_pack("{s:s,s:s,s:I,s:s}",
			"path", name, "status", res->already ? "already stored" : "stored",
			"capture_id", (json_int_t)res->capture_id, "blob_key", res->blob_key));
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
		cli_warn(run->ctx, "'%s': %u names had invalid UTF-8, replaced with U+FFFD",
			 name, res->utf8_replaced);
	if (res->sample_count == 0)
		cli_warn(run->ctx, "'%s': the profile has no samples", name);
}

/*
 * Ingest one request into *res, the failure into *err. True when the
 * batch must stop: the database, the blob store or memory failed, not
 * this input, and every later ingest would fail the same way.
 */
static bool ingest_one(ingest_run *run, const ingest_request *req, ingest_result *res,
		       pr_error *err)
{
	progress(run, req->display ? req->display : req->path);
	ingest_file(res, run->d, run->bs, req, &run->lim, err);
	return res->infra || err->code == PR_ENOMEM;
}

/* Report the failure that stopped a batch at `at`, with how far it got. */
static void record_stop(ingest_run *run, const char *at, const pr_error *why, size_t left)
{
	pr_error e = PR_ERROR_INIT;
	char failed[48] = "";

	run->not_tried = left;
	if (run->failed)
		snprintf(failed, sizeof(failed), ", %zu failed", run->failed);
	pr_error_set(&e, why->code, "stopped at %s: %s; %zu ingested%s, %zu not tried", at,
		     why->msg, run->stored + run->already, failed, left);
	record(run, at, NULL, &e);
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
	char *dir = NULL;
	const char *end;
	size_t lineno = 0;
	int rc, status = EXIT_OK;

	if ((rc = fileio_read(&text, path, MANIFEST_MAX, &err)) < 0)
		goto fail;
	if (!(dir = dir_of(path))) {
		rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
		goto fail;
	}
	src.dir = dir;
	end = text.ptr + text.len;
	run->total = count_entries(text.ptr, end);
	for (const char *line = text.ptr, *next; line < end; line = next) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t len = (size_t)((nl ? nl : end) - line);
		ingest_desc desc = {0};
		ingest_result res;
		pr_error why = PR_ERROR_INIT;
		bool stop;

		next = nl ? nl + 1 : end;
		lineno++;
		if (blank(line, len))
			continue;
		pr_error_clear(&err);
		buf_reset(&where);
		if (buf_printf(&where, "line %zu of '%s'", lineno, path) < 0) {
			rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
			goto fail;
		}
		src.name = where.ptr;
		if (ingest_request_from_json(&desc, line, len, &src, &err) < 0) {
			record(run, where.ptr, NULL, &err);
			continue;
		}
		stop = ingest_one(run, &desc.req, &res, &why);
		if (stop) {
			record_stop(run, where.ptr, &why, count_entries(next, end));
		} else {
			if (why.code)
				pr_error_set(&err, why.code, "%s: %s", where.ptr, why.msg);
			record(run, desc.req.path, &res, &err);
		}
		ingest_desc_release(&desc);
		if (stop)
			break;
	}
	goto out;
fail:
	status = cli_fail(run->ctx, &err);
out:
	free(dir);
	buf_release(&where);
	buf_release(&text);
	return status;
}

int cmd_ingest(cli_ctx *ctx, int argc, char **argv)
{
	static const char usage[] =
		"profreg ingest FILE... --service S --release R [options]\n"
		"       profreg ingest --manifest FILE [options]";
	static const char desc[] =
		"Store profiles: each file is kept as an immutable compressed blob and\n"
		"summarised per function in the index. The same bytes for the same\n"
		"service are stored once. Formats: pprof (gzipped or not), folded\n"
		"stacks, V8 .cpuprofile, perf script text.";
	pr_error err = PR_ERROR_INIT;
	ingest_request base = {0};
	ingest_run run = {0};
	cli_parser *p = NULL;
	json_t *tags = json_object();
	char *tags_text = NULL;
	const char *arg, *manifest = NULL;
	unsigned long long flag[5] = {0}; /* limits given as flags; 0 = not given */
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
		case O_TIME:
			if (time_parse(&base.time_us, arg) < 0) {
				cli_error(ctx, "'--time %s' is not an ISO 8601 time", arg);
				bad = true;
			}
			break;
		case O_FORMAT:
			if (profile_format_from_name(&base.format, arg) < 0) {
				cli_error(ctx, "unknown format '%s' (pprof, folded, v8, perf)",
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
			if (cli_parse_u64(ctx, "max-input-bytes", arg, 1, SIZE_MAX, &flag[0]) < 0)
				bad = true;
			break;
		case O_MAX_DECOMPRESSED:
			if (cli_parse_u64(ctx, "max-decompressed-bytes", arg, 1, SIZE_MAX,
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
		case O_MAX_STRING:
			if (cli_parse_u64(ctx, "max-string-length", arg, 16, 1u << 24,
					  &flag[4]) < 0)
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
	if (json_object_size(tags))
		base.tags_json = tags_text = json_dumps(tags, JSON_COMPACT | JSON_SORT_KEYS);

	if ((rc = ctx_db_open(ctx, &run.d, &err)) < 0 ||
	    (rc = ctx_blobs_open(ctx, &run.bs, &err)) < 0)
		goto fail;
	status = EXIT_OK;
	if (ctx->json)
		run.results = json_array();
	run.total = (size_t)(argc - first);
	run.progress = !ctx->quiet && !ctx->json && isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
	if (manifest) {
		if ((status = ingest_manifest(&run, manifest)) != EXIT_OK)
			goto out;
	} else {
		run.progress = run.progress && run.total > 1;
		for (int i = first; i < argc; i++) {
			ingest_request req = base;
			ingest_result res;
			pr_error why = PR_ERROR_INIT;
			char at[48];

			req.path = argv[i];
			if (ingest_one(&run, &req, &res, &why) && run.total > 1) {
				snprintf(at, sizeof(at), "file %d of %zu", i - first + 1,
					 run.total);
				record_stop(&run, at, &why, (size_t)(argc - i - 1));
				break;
			}
			record(&run, argv[i], &res, &why);
		}
	}
	progress_end(&run);
	if (run.results) {
		status = cli_print_json(ctx, json_pack("{s:o,s:I,s:I,s:I,s:I}",
			"captures", run.results, "stored", (json_int_t)run.stored,
			"already_stored", (json_int_t)run.already,
			"failed", (json_int_t)run.failed, "not_tried", (json_int_t)run.not_tried));
		run.results = NULL;
	} else if (!ctx->quiet && run.done > 1) {
		printf("%zu stored, %zu already stored, %zu failed", run.stored, run.already,
		       run.failed);
		if (run.not_tried)
			printf(", %zu not tried", run.not_tried);
		printf("\n");
	}
	if (status == EXIT_OK && run.failed)
		status = run.worst;
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	json_decref(run.results);
	json_decref(tags);
	free(tags_text);
	blob_store_free(run.bs);
	db_close(run.d);
	return status;
}
