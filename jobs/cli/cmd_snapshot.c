/*
 * cmd_snapshot.c: `profreg snapshot` takes an incident snapshot of this
 * host (the job is jobs/snapshot.c) and writes it to a file or stores it;
 * `snapshot list`, `show`, `extract` and `upload` work on stored ones.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/cli/table.h"
#include "jobs/snapshot.h"
#include "common/fileio.h"
#include "common/timeutil.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum {
	O_INCIDENT = 2100, O_REASON, O_SERVICE, O_OUT, O_UPLOAD, O_COOLDOWN, O_HOST, O_SINCE,
	O_UNTIL, O_LIMIT, O_DIR,
};

/* What `snapshot` opens only once the snapshot is taken. */
typedef struct store_ctx {
	cli_ctx *ctx;
	db *d;
	blob_store *bs;
} store_ctx;

static int open_store(void *arg, db **d, blob_store **bs, pr_error *err)
{
	store_ctx *s = arg;
	int rc;

	if ((rc = ctx_db_open(s->ctx, &s->d, err)) < 0 ||
	    (rc = ctx_blobs_open(s->ctx, &s->bs, err)) < 0)
		return rc;
	*d = s->d;
	*bs = s->bs;
	return 0;
}

/*
 * A string of a manifest on stdout: escaped (cli_put_safe), and "-" for a
 * field that is missing, null or not a string. A stored manifest may have
 * come from anyone's upload: none of it reaches a terminal unescaped, and
 * none of it can make the command fail.
 */
static void put_text(const json_t *v, int width)
{
	const char *s = json_string_value(v);

	cli_put_safe(stdout, s ? s : "-", width);
}

/* Each item not collected whole, one line: "missing kernel/schedstat: why". */
static void print_gaps(const json_t *manifest)
{
	const json_t *it;
	size_t i;

	json_array_foreach(json_object_get(manifest, "items"), i, it) {
		const char *st = json_string_value(json_object_get(it, "status"));
		const char *why = json_string_value(json_object_get(it, "reason"));
		if (!st || strcmp(st, "collected") == 0)
			continue;
		printf("  ");
		put_text(json_object_get(it, "status"), 8);
		putchar(' ');
		put_text(json_object_get(it, "layer"), 0);
		putchar('/');
		put_text(json_object_get(it, "name"), 0);
		printf(": ");
		cli_put_safe(stdout, why ? why : "no reason given", 0);
		putchar('\n');
	}
}

static json_t *items_json(const json_t *manifest)
{
	json_t *arr = json_array(), *it;
	size_t i;

	json_array_foreach(json_object_get(manifest, "items"), i, it)
		json_array_append_new(arr, json_pack("{s:O,s:O,s:O,s:O*}", "layer",
						     json_object_get(it, "layer"), "name",
						     json_object_get(it, "name"), "status",
						     json_object_get(it, "status"), "reason",
						     json_object_get(it, "reason")));
	return arr;
}

static int take_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"incident", required_argument, O_INCIDENT, "ID",
		 "the incident it belongs to (an alert's group key, a ticket)"},
		{"reason", required_argument, O_REASON, "TEXT", "why it was taken"},
		{"service", required_argument, O_SERVICE, "NAME",
		 "the service in trouble: its cgroup's pressure is read too"},
		{"out", required_argument, O_OUT, "FILE",
		 "write the .tar.zst to FILE; store nothing"},
		{"upload", no_argument, O_UPLOAD, NULL,
		 "store it in the blob store and index it (the default)"},
		{"cooldown", required_argument, O_COOLDOWN, "DURATION",
		 "refuse when this host had a snapshot less than DURATION ago"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	snapshot_opts o;
	snapshot_result r;
	store_ctx st = {ctx, NULL, NULL};
	const char *arg, *out = NULL;
	bool bad = false, upload = false;
	char when[TIME_FMT_MAX];
	int c, rc, status;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(
		    &p, ctx, argc, argv, opts,
		    "profreg snapshot [--incident ID] [--reason TEXT] [--service S] "
		    "[--out FILE | --upload] [--cooldown D] [--json]\n"
		    "       profreg snapshot list|show|extract|upload ... (see "
		    "'profreg snapshot list --help')",
		    "Take an incident snapshot of this host: pressure stalls, load, the run\n"
		    "queue, loaded BPF programs, blocked tasks and their kernel stacks, open\n"
		    "descriptors, memory and VM deltas, the threads using the most CPU, the top\n"
		    "processes' status and smaps_rollup, and the tail of the kernel log, read\n"
		    "from /proc and the kernel within the time and size budgets of the config's\n"
		    "\"snapshot\" section, at low CPU and I/O priority. What cannot be read is\n"
		    "listed with the reason; the snapshot still succeeds. Stored as forensic\n"
		    "evidence (the database is opened only once it is taken: if it cannot be\n"
		    "reached, the archive is kept under <home>/snapshots/unsent/ and exit 3),\n"
		    "or written to --out FILE without touching the database.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_INCIDENT: o.incident = arg; break;
		case O_REASON: o.reason = arg; break;
		case O_SERVICE: o.service = arg; break;
		case O_OUT: out = arg; break;
		case O_UPLOAD: upload = true; break;
		case O_COOLDOWN:
			if (time_parse_duration(&o.cooldown_us, arg) < 0 || o.cooldown_us <= 0) {
				cli_error(ctx, "'--cooldown %s' is not a duration like 10m", arg);
				bad = true;
			}
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	if (out && upload) {
		cli_error(ctx, "--out and --upload exclude each other: a snapshot is written to a "
			  "file or stored");
		return EXIT_USAGE;
	}
	if (out && o.cooldown_us) {
		cli_error(ctx, "--cooldown needs the database: it does not go with --out");
		return EXIT_USAGE;
	}
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0)
		goto fail;
	if (out) {
		if ((rc = snapshot_take(&r.a, &cfg, &o, &err)) < 0 ||
		    (rc = fileio_write_out(out, r.a.data.ptr, r.a.data.len, 0600, &err)) < 0)
			goto fail;
		r.wall_s = r.a.wall_s;
	} else {
		job_env env = {&cfg, NULL, NULL, ctx->home, NULL};
		o.open_store = open_store;
		o.open_store_arg = &st;
		if ((rc = snapshot_run(&r, &env, &o, &err)) < 0)
			goto fail;
	}
	time_format(when, r.a.taken_at_us);
	status = EXIT_OK;
	if (ctx->json) {
		json_t *j = json_pack("{s:i,s:s,s:s,s:I,s:I,s:o,s:{s:f,s:f,s:f}}", "schema_version",
				      1, "host", r.a.host, "taken_at", when, "bytes",
				      (json_int_t)r.a.data.len, "not_collected",
				      (json_int_t)r.a.not_collected, "items",
				      items_json(r.a.manifest), "cost", "wall_s", r.wall_s,
				      "cpu_user_s", r.a.cpu_user_s, "cpu_sys_s", r.a.cpu_sys_s);
		if (j && out)
			json_object_set_new(j, "out", json_string(out));
		if (j && !out) {
			json_object_set_new(j, "id", json_integer(r.id));
			json_object_set_new(j, "existed", json_boolean(r.existed));
			json_object_set_new(j, "blob_key", json_string(r.key));
		}
		status = cli_print_json(ctx, j);
	} else if (!ctx->quiet) {
		if (out) {
			printf("snapshot of ");
			cli_put_safe(stdout, r.a.host, 0);
			printf(" at %s written to ", when);
			cli_put_safe(stdout, out, 0);
		} else {
			printf("snapshot %" PRId64 " of ", r.id);
			cli_put_safe(stdout, r.a.host, 0);
			printf(" at %s stored", when);
		}
		printf(": %zu bytes, %zu of %zu items not collected whole\n", r.a.data.len,
		       r.a.not_collected,
		       json_array_size(json_object_get(r.a.manifest, "items")));
		print_gaps(r.a.manifest);
		printf("cost: %.2f s wall, %.3f s CPU (%.3f user, %.3f system)\n", r.wall_s,
		       r.a.cpu_user_s + r.a.cpu_sys_s, r.a.cpu_user_s, r.a.cpu_sys_s);
	}
	status = cli_finish(ctx, status);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	snapshot_result_release(&r);
	blob_store_free(st.bs);
	db_close(st.d);
	config_release(&cfg);
	return status;
}

/*
 * "snapshot list --service paymnts" is a typo, not an empty answer: when
 * nothing was found for a service name that is no service (or one the
 * role may not see), PR_ENOTFOUND with the close name. Snapshots of a
 * name no longer registered are still listed when there are some.
 */
static int service_known(db *d, const snapshot_filter *f, const json_t *rows, pr_error *err)
{
	db_service svc = {0};
	int rc;

	if (!f->service || json_array_size(rows))
		return 0;
	rc = db_service_get(d, &svc, f->service, err);
	db_service_release(&svc);
	return rc;
}

static int list_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"host", required_argument, O_HOST, "HOST", "only this host's"},
		{"incident", required_argument, O_INCIDENT, "ID", "only this incident's"},
		{"service", required_argument, O_SERVICE, "NAME",
		 "only those taken for this service"},
		{"since", required_argument, O_SINCE, "T",
		 "taken at T or later (a time or a duration ago)"},
		{"until", required_argument, O_UNTIL, "T", "taken before T"},
		{"limit", required_argument, O_LIMIT, "N", "at most N (default 100)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const table_col cols[] = {
		{"ID", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"TAKEN", TABLE_WHOLE, 0, 0},
		{"HOST", TABLE_LEFT, 8, 24},
		{"INCIDENT", TABLE_LEFT, 8, 24},
		{"BYTES", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"GAPS", TABLE_RIGHT | TABLE_WHOLE, 0, 0},
		{"TRIGGER", TABLE_WHOLE | TABLE_WIDE_ONLY, 0, 0},
		{"REASON", TABLE_LEFT | TABLE_WIDE_ONLY, 0, 0},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	snapshot_filter f;
	db *d = NULL;
	json_t *rows = NULL, *v;
	table *t = NULL;
	const char *arg;
	unsigned long long limit = 100;
	bool bad = false;
	size_t i;
	int c, rc, status;

	memset(&f, 0, sizeof(f));
	if (cli_parser_new(
		    &p, ctx, argc, argv, opts,
		    "profreg snapshot list [--host H] [--incident ID] [--service S] "
		    "[--since T] [--until T] [--limit N] [--json]",
		    "List stored snapshots, newest first. GAPS counts the items not collected\n"
		    "whole ('snapshot show ID' says which and why).") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		switch (c) {
		case O_HOST: f.host = arg; break;
		case O_INCIDENT: f.incident = arg; break;
		case O_SERVICE: f.service = arg; break;
		case O_SINCE:
		case O_UNTIL:
			if (time_parse_since(c == O_SINCE ? &f.since_us : &f.until_us, arg,
					     time_now_us()) < 0) {
				cli_error(ctx, "'--%s %s' is not a time or a duration", c == O_SINCE
					  ? "since" : "until", arg);
				bad = true;
			}
			break;
		case O_LIMIT:
			if (cli_parse_u64(ctx, "limit", arg, 1, 100000, &limit) < 0)
				bad = true;
			break;
		}
	}
	if ((status = cli_end(p, c, bad, 0, 0, NULL, NULL)) != CLI_GO)
		return status;
	f.limit = (size_t)limit;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = snapshot_list(&rows, d, &f, &err)) < 0 ||
	    (rc = service_known(d, &f, rows, &err)) < 0) {
		json_decref(rows);
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json)
		return cli_print_json(ctx, json_pack("{s:o}", "snapshots", rows));
	status = EXIT_OK;
	if (table_new(&t, cols, sizeof(cols) / sizeof(cols[0]), ctx->wide) < 0)
		goto oom;
	json_array_foreach(rows, i, v) {
		const char *inc = json_string_value(json_object_get(v, "incident"));
		const char *why = json_string_value(json_object_get(v, "reason"));
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(v, "id")));
		table_add(t, json_string_value(json_object_get(v, "taken_at")));
		table_add(t, json_string_value(json_object_get(v, "host")));
		table_add(t, inc ? inc : "-");
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(v, "bytes")));
		table_addf(t, "%" JSON_INTEGER_FORMAT,
			   json_integer_value(json_object_get(v, "not_collected")));
		table_add(t, json_string_value(json_object_get(v, "trigger")));
		table_add(t, why ? why : "-");
	}
	if (table_print(t, stdout) < 0)
		goto oom;
	status = cli_finish(ctx, status);
	goto out;
oom:
	cli_error(ctx, "out of memory");
	status = EXIT_RUNTIME;
out:
	table_free(t);
	json_decref(rows);
	return status;
}

static int show_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	db *d = NULL;
	json_t *doc = NULL, *m, *h, *v;
	const char *arg, *s;
	unsigned long long id = 0;
	size_t i;
	int c, first, rc, status;

	if (cli_parser_new(
		    &p, ctx, argc, argv, opts, "profreg snapshot show ID [--json]",
		    "Show a stored snapshot: where and when, why, what it cost, the highlights\n"
		    "(pressure, load, the busiest threads) and every item with its status.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 1, 1, "one snapshot ID", &first)) != CLI_GO)
		return status;
	if (cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &id) < 0)
		return EXIT_USAGE;
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = snapshot_get(&doc, d, (int64_t)id, &err)) < 0) {
		db_close(d);
		return cli_fail(ctx, &err);
	}
	db_close(d);
	if (ctx->json)
		return cli_print_json(ctx, doc);
	m = json_object_get(doc, "manifest");
	h = json_object_get(m, "highlights");
	printf("snapshot %llu of ", id);
	put_text(json_object_get(doc, "host"), 0);
	printf(" at ");
	put_text(json_object_get(doc, "taken_at"), 0);
	printf(" (");
	put_text(json_object_get(doc, "trigger"), 0);
	printf(")\n");
	if ((s = json_string_value(json_object_get(doc, "incident")))) {
		printf("incident ");
		cli_put_safe(stdout, s, 0);
		putchar('\n');
	}
	if ((s = json_string_value(json_object_get(doc, "reason")))) {
		printf("reason   ");
		cli_put_safe(stdout, s, 0);
		putchar('\n');
	}
	if ((s = json_string_value(json_object_get(m, "kernel") ? json_object_get(
			json_object_get(m, "kernel"), "release") : NULL))) {
		printf("kernel   ");
		cli_put_safe(stdout, s, 0);
		putchar('\n');
	}
	printf("archive  %" JSON_INTEGER_FORMAT " bytes, blob ",
	       json_integer_value(json_object_get(doc, "bytes")));
	put_text(json_object_get(doc, "blob_key"), 0);
	putchar('\n');
	if ((v = json_object_get(m, "cost")))
		printf("cost     %" JSON_INTEGER_FORMAT " ms wall, %" JSON_INTEGER_FORMAT
		       " ms CPU to collect\n",
		       json_integer_value(json_object_get(v, "collect_wall_ms")),
		       json_integer_value(json_object_get(v, "collect_cpu_user_ms")) +
			       json_integer_value(json_object_get(v, "collect_cpu_sys_ms")));
	if ((v = json_object_get(h, "pressure"))) {
		const char *k;
		json_t *x;
		printf("pressure");
		json_object_foreach(v, k, x)
		{
			printf("  ");
			cli_put_safe(stdout, k, 0);
			printf(" %.1f%%", json_number_value(json_object_get(x, "some_avg10")));
		}
		printf(" (some, avg10)\n");
	}
	if ((v = json_object_get(h, "loadavg")))
		printf("load     %.2f %.2f %.2f\n", json_number_value(json_object_get(v, "1m")),
		       json_number_value(json_object_get(v, "5m")),
		       json_number_value(json_object_get(v, "15m")));
	if ((v = json_object_get(h, "blocked_tasks")))
		printf("blocked  %" JSON_INTEGER_FORMAT " tasks in D state\n",
		       json_integer_value(v));
	if (json_array_size(json_object_get(h, "top_threads")))
		printf("\nbusiest threads:\n");
	json_array_foreach(json_object_get(h, "top_threads"), i, v) {
		printf("  %6.1f%%  %7" JSON_INTEGER_FORMAT "  ",
		       json_number_value(json_object_get(v, "cpu_pct")),
		       json_integer_value(json_object_get(v, "tid")));
		put_text(json_object_get(v, "comm"), 16);
		printf(" (");
		put_text(json_object_get(v, "process"), 0);
		printf(")\n");
	}
	printf("\nitems:\n");
	json_array_foreach(json_object_get(m, "items"), i, v) {
		const char *why = json_string_value(json_object_get(v, "reason"));
		printf("  ");
		put_text(json_object_get(v, "layer"), 10);
		putchar(' ');
		put_text(json_object_get(v, "status"), 9);
		putchar(' ');
		put_text(json_object_get(v, "name"), 0);
		if (why) {
			printf(": ");
			cli_put_safe(stdout, why, 0);
		}
		putchar('\n');
	}
	json_decref(doc);
	return cli_finish(ctx, EXIT_OK);
}

static int extract_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {
		{"out", required_argument, O_OUT, "FILE", "write the archive (.tar.zst) as stored"},
		{"dir", required_argument, O_DIR, "DIR", "unpack it into the new folder DIR"},
		{NULL, 0, 0, NULL, NULL},
	};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL;
	blob_store *bs = NULL;
	buf b = BUF_INIT;
	const char *arg, *out = NULL, *dir = NULL;
	unsigned long long id = 0;
	int c, first, rc, status;

	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(
		    &p, ctx, argc, argv, opts,
		    "profreg snapshot extract ID (--out FILE | --dir DIR)",
		    "Write a stored snapshot's archive byte for byte as it was stored (the blob\n"
		    "store checks it against its SHA-256), or unpack it into a new folder.\n"
		    "Audited.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_OUT)
			out = arg;
		else if (c == O_DIR)
			dir = arg;
	}
	if ((status = cli_end(p, c, false, 1, 1, "one snapshot ID", &first)) != CLI_GO)
		return status;
	if (cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &id) < 0)
		return EXIT_USAGE;
	if (!out == !dir) {
		cli_error(ctx, "give --out FILE or --dir DIR");
		return EXIT_USAGE;
	}
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = ctx_blobs_open(ctx, &bs, &err)) < 0)
		goto fail;
	{
		job_env env = {&cfg, d, bs, ctx->home, NULL};
		if (out)
			rc = snapshot_read(&b, &env, (int64_t)id, &err) < 0
				     ? err.code
				     : fileio_write_out(out, b.ptr, b.len, 0600, &err);
		else
			rc = snapshot_extract_dir(&env, (int64_t)id, dir, &err);
		if (rc < 0)
			goto fail;
	}
	if (!ctx->quiet && !ctx->json && out && strcmp(out, "-") != 0 &&
	    strncmp(out, "/dev/", 5) != 0) {
		printf("snapshot %llu: %zu bytes written to ", id, b.len);
		cli_put_safe(stdout, out, 0);
		putchar('\n');
	} else if (!ctx->quiet && !ctx->json && dir) {
		printf("snapshot %llu unpacked into ", id);
		cli_put_safe(stdout, dir, 0);
		putchar('\n');
	}
	status = cli_finish(ctx, EXIT_OK);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	buf_release(&b);
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}

static int upload_cmd(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_option opts[] = {{NULL, 0, 0, NULL, NULL}};
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg;
	db *d = NULL;
	blob_store *bs = NULL;
	const char *arg;
	int64_t id = 0;
	bool existed = false;
	int c, first, rc, status;

	memset(&cfg, 0, sizeof(cfg));
	if (cli_parser_new(
		    &p, ctx, argc, argv, opts, "profreg snapshot upload FILE [--json]",
		    "Store a snapshot archive written earlier (snapshot --out, or one kept\n"
		    "under <home>/snapshots/unsent/ when the store could not be reached). The\n"
		    "archive is checked first: a .tar.zst whose first member is a profreg\n"
		    "snapshot's manifest.json. The same archive twice is stored once.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0)
		;
	if ((status = cli_end(p, c, false, 1, 1, "one archive FILE", &first)) != CLI_GO)
		return status;
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0 ||
	    (rc = ctx_blobs_open(ctx, &bs, &err)) < 0)
		goto fail;
	{
		job_env env = {&cfg, d, bs, ctx->home, NULL};
		if ((rc = snapshot_upload(&id, &existed, &env, argv[first], &err)) < 0)
			goto fail;
	}
	if (ctx->json) {
		status = cli_print_json(ctx, json_pack("{s:I,s:b}", "id", (json_int_t)id, "existed",
						       existed));
	} else {
		if (!ctx->quiet)
			printf(existed ? "already stored as snapshot %" PRId64 "\n"
				       : "stored as snapshot %" PRId64 "\n", id);
		status = cli_finish(ctx, EXIT_OK);
	}
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	blob_store_free(bs);
	db_close(d);
	config_release(&cfg);
	return status;
}

int cmd_snapshot(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"take", take_cmd, "take a snapshot of this host (the default)"},
		{"list", list_cmd, "list stored snapshots"},
		{"show", show_cmd, "show one stored snapshot"},
		{"extract", extract_cmd, "write or unpack a stored snapshot's archive"},
		{"upload", upload_cmd, "store an archive taken with --out or kept unsent"},
		{NULL, NULL, NULL},
	};

	if (argc > 1)
		for (const cli_command *k = cmds; k->name; k++)
			if (strcmp(argv[1], k->name) == 0)
				return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
	return take_cmd(ctx, argc, argv);
}
