/*
 * cmd_ingest.c: `profreg ingest`: files or a manifest into the store.
 */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "context.h"
#include "exitcode.h"
#include "../common/fileio.h"
#include "../common/timeutil.h"
#include "../pipeline/ingest.h"
#include "config.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MANIFEST_MAX (256u << 20)
#define TEXT_MAX INGEST_TEXT_MAX

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
	{"service", required_argument, O_SERVICE, "NAME", "service the captures belong to (must be enabled)"},
	{"release", required_argument, O_RELEASE, "RELEASE", "release (version) that was running"},
	{"commit", required_argument, O_COMMIT, "SHA", "commit SHA of that release (hex)"},
	{"host", required_argument, O_HOST, "HOST", "host the captures came from"},
	{"time", required_argument, O_TIME, "ISO8601", "capture time (default: the profile's own, else the file's mtime)"},
	{"type", required_argument, O_TYPE, "TYPE", "cpu, heap, alloc, wall or goroutine (default: from the profile)"},
	{"tag", required_argument, O_TAG, "K=V", "tag the captures (repeatable)"},
	{"format", required_argument, O_FORMAT, "FMT", "pprof, folded, v8 or perf (default: detected)"},
	{"manifest", required_argument, O_MANIFEST, "FILE", "JSON Lines manifest, one capture per line"},
	{"max-input-bytes", required_argument, O_MAX_INPUT, "N", "largest file accepted (default 64M)"},
	{"max-decompressed-bytes", required_argument, O_MAX_DECOMPRESSED, "N", "largest decompressed size (default 512M)"},
	{"max-samples", required_argument, O_MAX_SAMPLES, "N", "most samples in one profile (default 10000000)"},
	{"max-depth", required_argument, O_MAX_DEPTH, "N", "deepest stack (default 4096)"},
	{"max-string-length", required_argument, O_MAX_STRING, "N", "longest function or file name (default 65536)"},
	{NULL, 0, 0, NULL, NULL},
};

typedef struct ingest_run {
	cli_ctx *ctx;
	db *d;
	blob_store *bs;
	profile_limits lim;
	json_t *results; /* --json: one object per capture */
	size_t stored, already, failed;
	int worst;       /* exit code of the worst failure */
	bool progress;
	size_t done, total;
} ingest_run;

static bool tag_key_ok(const char *k, size_t n)
{
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)k[i]) && !strchr("_.-", k[i]))
			return false;
	return true;
}

/* Add "K=V" to a JSON object of tags. */
static int add_tag(json_t *tags, const char *kv, pr_error *err)
{
	const char *eq = strchr(kv, '=');
	char key[65];
	int rc;

	if (!eq || !tag_key_ok(kv, (size_t)(eq - kv)))
		return pr_error_set(err, PR_EUSAGE,
				    "tag '%.64s' is not KEY=VALUE with a key of letters, digits, '_', '.', '-'", kv);
	if ((rc = ingest_check_text("a tag value", eq + 1, err)) < 0)
		return rc;
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	json_object_set_new(tags, key, json_string(eq + 1));
	return 0;
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
		int code = exitcode_for(err->code);
		run->failed++;
		/* An infrastructure failure outranks bad input. */
		if (run->worst != EXIT_RUNTIME)
			run->worst = code == EXIT_RUNTIME ? EXIT_RUNTIME : code;
		progress_end(run);
		cli_error(run->ctx, "%s", err->msg);
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

static void ingest_one(ingest_run *run, const ingest_request *req)
{
	pr_error err = PR_ERROR_INIT;
	ingest_result res;
	const char *name = req->display ? req->display : req->path;

	progress(run, name);
	if (validate_request(req, &err) == 0)
		ingest_file(&res, run->d, run->bs, req, &run->lim, &err);
	record(run, name, &res, &err);
}

static int manifest_string(json_t *obj, const char *key, const char **out,
			   bool required, pr_error *err)
{
	json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v)) {
		if (required)
			return pr_error_set(err, PR_EDATA, "missing \"%s\"", key);
		return 0;
	}
	if (!json_is_string(v))
		return pr_error_set(err, PR_EDATA, "\"%s\" must be a string", key);
	*out = json_string_value(v);
	return 0;
}

/* Turn one manifest line into a request; strings stay owned by `obj`. */
static int manifest_request(ingest_request *req, json_t *obj, json_t **tags_out,
			    char **tags_text, pr_error *err)
{
	static const char *const known[] = {"path", "service", "release", "commit", "host",
					    "time", "type", "tags", "format", NULL};
	const char *key, *time = NULL, *fmt = NULL;
	json_t *v;
	int rc;

	if (!json_is_object(obj))
		return pr_error_set(err, PR_EDATA, "not a JSON object");
	json_object_foreach(obj, key, v) {
		size_t i;
		for (i = 0; known[i] && strcmp(known[i], key) != 0; i++)
			;
		if (!known[i])
			return pr_error_set(err, PR_EDATA, "unknown key \"%.64s\"", key);
	}
	if ((rc = manifest_string(obj, "path", &req->path, true, err)) < 0 ||
	    (rc = manifest_string(obj, "service", &req->service, true, err)) < 0 ||
	    (rc = manifest_string(obj, "release", &req->release, true, err)) < 0 ||
	    (rc = manifest_string(obj, "commit", &req->commit, false, err)) < 0 ||
	    (rc = manifest_string(obj, "host", &req->host, false, err)) < 0 ||
	    (rc = manifest_string(obj, "time", &time, false, err)) < 0 ||
	    (rc = manifest_string(obj, "type", &req->type, false, err)) < 0 ||
	    (rc = manifest_string(obj, "format", &fmt, false, err)) < 0)
		return rc;
	if (time && time_parse(&req->time_us, time) < 0)
		return pr_error_set(err, PR_EDATA, "\"time\" '%.40s' is not an ISO 8601 time", time);
	if (fmt && profile_format_from_name(&req->format, fmt) < 0)
		return pr_error_set(err, PR_EDATA, "unknown \"format\" '%.32s'", fmt);
	v = json_object_get(obj, "tags");
	if (v && !json_is_null(v)) {
		json_t *tv, *tags;
		if (!json_is_object(v))
			return pr_error_set(err, PR_EDATA, "\"tags\" must be an object");
		if (!(tags = json_object()))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		*tags_out = tags;
		json_object_foreach(v, key, tv) {
			char kv[TEXT_MAX + 80];
			if (!json_is_string(tv))
				return pr_error_set(err, PR_EDATA, "tag \"%.64s\" must be a string", key);
			snprintf(kv, sizeof(kv), "%.70s=%s", key, json_string_value(tv));
			if (strlen(key) > 64 || strlen(json_string_value(tv)) > TEXT_MAX)
				return pr_error_set(err, PR_EDATA, "tag \"%.64s\" is too long", key);
			if ((rc = add_tag(tags, kv, err)) < 0)
				return rc;
		}
		if (!(*tags_text = json_dumps(tags, JSON_COMPACT | JSON_SORT_KEYS)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		req->tags_json = *tags_text;
	}
	return 0;
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

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n')
			n++;
	return n + (len && s[len - 1] != '\n');
}

static int ingest_manifest(ingest_run *run, const char *path)
{
	pr_error err = PR_ERROR_INIT;
	buf text = BUF_INIT, full = BUF_INIT;
	char *dir = NULL;
	size_t lineno = 0;
	int rc;

	if ((rc = fileio_read(&text, path, MANIFEST_MAX, &err)) < 0)
		return cli_fail(run->ctx, &err);
	if (!(dir = dir_of(path))) {
		buf_release(&text);
		return EXIT_RUNTIME;
	}
	run->total = count_lines(text.ptr, text.len);
	for (char *line = text.ptr, *next; line < text.ptr + text.len; line = next) {
		ingest_request req = {0};
		json_t *obj = NULL, *tags = NULL;
		char *tags_text = NULL, *nl = memchr(line, '\n', (size_t)(text.ptr + text.len - line));
		json_error_t jerr;
		char display[64];

		next = nl ? nl + 1 : text.ptr + text.len;
		if (nl)
			*nl = '\0';
		lineno++;
		if (strspn(line, " \t\r") == strlen(line)) {
			run->total--;
			continue;
		}
		pr_error_clear(&err);
		snprintf(display, sizeof(display), "line %zu", lineno);
		obj = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
		if (!obj)
			pr_error_set(&err, PR_EDATA, "invalid JSON: %s", jerr.text);
		else if (manifest_request(&req, obj, &tags, &tags_text, &err) == 0) {
			buf_reset(&full);
			if (req.path[0] == '/' || strcmp(req.path, "-") == 0)
				buf_puts(&full, req.path);
			else
				buf_printf(&full, "%s/%s", dir, req.path);
			req.path = full.ptr;
			ingest_one(run, &req);
		}
		if (err.code) {
			pr_error e2 = PR_ERROR_INIT;
			pr_error_set(&e2, err.code, "manifest '%s' line %zu: %s", path, lineno, err.msg);
			record(run, display, NULL, &e2);
		}
		free(tags_text);
		json_decref(tags);
		json_decref(obj);
	}
	free(dir);
	buf_release(&full);
	buf_release(&text);
	return 0;
}

int cmd_ingest(cli_ctx *ctx, int argc, char **argv)
{
	pr_error err = PR_ERROR_INIT;
	ingest_request base = {0};
	ingest_run run = {0};
	cli_parser *p = NULL;
	json_t *tags = json_object();
	char *tags_text = NULL;
	const char *arg, *manifest = NULL;
	unsigned long long flag[5] = {0}; /* limits given as flags; 0 = not given */
	config cfg = {0};
	int c, first, rc = EXIT_OK;

	run.ctx = ctx;
	if (!tags || cli_parser_new(&p, ctx, argc, argv, ingest_opts,
			"profreg ingest FILE... --service S --release R [options]\n"
			"       profreg ingest --manifest FILE [options]",
			"Store profiles: each file is kept as an immutable compressed blob and\n"
			"summarised per function in the index. The same bytes for the same\n"
			"service are stored once. Formats: pprof (gzipped or not), folded\n"
			"stacks, V8 .cpuprofile, perf script text.") < 0) {
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
				rc = EXIT_USAGE;
			}
			break;
		case O_FORMAT:
			if (profile_format_from_name(&base.format, arg) < 0) {
				cli_error(ctx, "unknown format '%s' (pprof, folded, v8, perf)", arg);
				rc = EXIT_USAGE;
			}
			break;
		case O_TAG:
			if (add_tag(tags, arg, &err) < 0) {
				cli_fail(ctx, &err);
				pr_error_clear(&err);
				rc = EXIT_USAGE;
			}
			break;
		case O_MAX_INPUT:
			if (cli_parse_u64(ctx, "max-input-bytes", arg, 1, SIZE_MAX, &flag[0]) < 0)
				rc = EXIT_USAGE;
			break;
		case O_MAX_DECOMPRESSED:
			if (cli_parse_u64(ctx, "max-decompressed-bytes", arg, 1, SIZE_MAX, &flag[1]) < 0)
				rc = EXIT_USAGE;
			break;
		case O_MAX_SAMPLES:
			if (cli_parse_u64(ctx, "max-samples", arg, 1, UINT32_MAX, &flag[2]) < 0)
				rc = EXIT_USAGE;
			break;
		case O_MAX_DEPTH:
			if (cli_parse_u64(ctx, "max-depth", arg, 1, 1u << 20, &flag[3]) < 0)
				rc = EXIT_USAGE;
			break;
		case O_MAX_STRING:
			if (cli_parse_u64(ctx, "max-string-length", arg, 16, 1u << 24, &flag[4]) < 0)
				rc = EXIT_USAGE;
			break;
		}
	}
	first = cli_optind(p);
	cli_parser_free(p);
	if (c == CLI_HELP || c == CLI_BAD || rc) {
		json_decref(tags);
		return c == CLI_HELP ? EXIT_OK : EXIT_USAGE;
	}
	if (!manifest && first >= argc) {
		cli_error(ctx, "no files given (see --help)");
		json_decref(tags);
		return EXIT_USAGE;
	}
	if (manifest && first < argc) {
		cli_error(ctx, "give either files or --manifest, not both");
		json_decref(tags);
		return EXIT_USAGE;
	}
	if (!manifest && validate_request(&base, &err) < 0) {
		json_decref(tags);
		return cli_fail(ctx, &err);
	}
	if (config_load(&cfg, ctx, &err) < 0) {
		json_decref(tags);
		return cli_fail(ctx, &err);
	}
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
	    (rc = ctx_blobs_open(ctx, &run.bs, &err)) < 0) {
		rc = cli_fail(ctx, &err);
		goto out;
	}
	if (ctx->json)
		run.results = json_array();
	run.total = (size_t)(argc - first);
	run.progress = !ctx->quiet && !ctx->json && isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
	if (manifest) {
		if ((rc = ingest_manifest(&run, manifest)) != 0)
			goto out;
	} else {
		run.progress = run.progress && run.total > 1;
		for (int i = first; i < argc; i++) {
			ingest_request req = base;
			req.path = argv[i];
			ingest_one(&run, &req);
		}
	}
	progress_end(&run);
	if (run.results) {
		rc = cli_print_json(ctx, json_pack("{s:o,s:I,s:I,s:I}", "captures", run.results,
			"stored", (json_int_t)run.stored, "already_stored", (json_int_t)run.already,
			"failed", (json_int_t)run.failed));
		run.results = NULL;
	} else if (!ctx->quiet && run.done > 1) {
		printf("%zu stored, %zu already stored, %zu failed\n", run.stored, run.already,
		       run.failed);
	}
	if (rc == EXIT_OK && run.failed)
		rc = run.worst;
out:
	json_decref(run.results);
	json_decref(tags);
	free(tags_text);
	blob_store_free(run.bs);
	db_close(run.d);
	return rc;
}
