/*
 * cmd_capture.c: `profreg capture pin ID --reason TEXT [--until T]` keeps
 * a capture as forensic evidence (whole: never tiered, never evicted by
 * the budget) and `profreg capture unpin ID --reason TEXT` hands it back
 * to normal retention. Both are audited with the reason and the user.
 */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "context.h"
#include "exitcode.h"
#include "common/timeutil.h"

#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_REASON = 1800, O_UNTIL };

#define REASON_MAX 1024

/* The operating-system user, as the audit log names it. */
static const char *who(void)
{
	struct passwd *pw = getpwuid(geteuid());

	return pw && pw->pw_name ? pw->pw_name : "unknown";
}

static int pin_cmd(cli_ctx *ctx, int argc, char **argv, bool pin)
{
	static const cli_option pin_opts[] = {
		{"reason", required_argument, O_REASON, "TEXT", "why it is kept (required; audited)"},
		{"until", required_argument, O_UNTIL, "TIME", "keep it until TIME, then tier it by age (default: forever)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const cli_option unpin_opts[] = {
		{"reason", required_argument, O_REASON, "TEXT", "why it no longer needs keeping (required; audited)"},
		{NULL, 0, 0, NULL, NULL},
	};
	/*
	 * A pin never shortens what is kept: evidence kept forever stays so,
	 * an expiring one keeps the later of the two ends, and a pin without
	 * --until keeps it forever. $3 null: no --until.
	 */
	static const char pin_sql[] =
		"update profiles set retention_class = 'forensic',"
		" retain_until = case when $3::bigint is null then null"
		"   when retention_class = 'forensic' and retain_until is null then null"
		"   when retention_class = 'forensic'"
		"     then greatest(retain_until, 'epoch'::timestamptz + $3::bigint * interval '1 microsecond')"
		"   else 'epoch'::timestamptz + $3::bigint * interval '1 microsecond' end,"
		" forensic_reason = $2, forensic_by = $4, forensic_at = now()"
		" where id = $1 returning blob_deleted_at is not null,"
		" (extract(epoch from retain_until) * 1000000)::bigint";
	/* Back to the tier its data is in: hot while it has its blob, else summary. */
	static const char unpin_sql[] =
		"update profiles set retention_class = case when blob_deleted_at is null then 'hot'"
		" else 'summary' end, retain_until = null, forensic_reason = null, forensic_by = null,"
		" forensic_at = null where id = $1 and retention_class = 'forensic'"
		" returning retention_class, $2::text is not null, $3::text, $4::text";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	PGresult *res = NULL;
	db *d = NULL;
	const char *arg, *reason = NULL, *until_s = NULL, *params[4];
	unsigned long long id = 0;
	int64_t until = 0;
	char until_txt[24], object[48], kept_txt[TIME_FMT_MAX] = "";
	bool kept_forever = false, longer = false;
	json_t *detail = NULL;
	char *detail_s = NULL;
	int c, first, rc = 0;

	if (cli_parser_new(&p, ctx, argc, argv, pin ? pin_opts : unpin_opts,
			   pin ? "profreg capture pin ID --reason TEXT [--until T]"
			       : "profreg capture unpin ID --reason TEXT",
			   pin ? "Keep capture ID as forensic evidence: whole (blob and every row), never\n"
				 "moved by retention nor evicted by the storage budget, until TIME if\n"
				 "given (then it is tiered by its age again). A capture already in the\n"
				 "summary tier keeps what is left."
			       : "Return forensic capture ID to normal retention: it is tiered by its age\n"
				 "from the next retention run.") < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_REASON)
			reason = arg;
		else if (c == O_UNTIL)
			until_s = arg;
	}
	first = cli_optind(p);
	cli_parser_free(p);
	if (c == CLI_HELP)
		return EXIT_OK;
	if (c == CLI_BAD)
		return EXIT_USAGE;
	if (argc - first != 1) {
		cli_error(ctx, "expected one capture ID (see --help)");
		return EXIT_USAGE;
	}
	if (cli_parse_u64(ctx, "ID", argv[first], 1, INT64_MAX, &id) < 0)
		return EXIT_USAGE;
	if (!reason || !*reason) {
		cli_error(ctx, "--reason is required: say why");
		return EXIT_USAGE;
	}
	if (strlen(reason) > REASON_MAX) {
		cli_error(ctx, "'--reason' is longer than %d bytes", REASON_MAX);
		return EXIT_USAGE;
	}
	if (until_s && time_parse(&until, until_s) < 0) {
		cli_error(ctx, "'--until %s' is not an ISO 8601 time", until_s);
		return EXIT_USAGE;
	}
	snprintf(until_txt, sizeof(until_txt), "%" PRId64, until);
	params[0] = argv[first];
	params[1] = reason;
	params[2] = until_s ? until_txt : NULL;
	params[3] = who();
	if ((rc = ctx_db_open(ctx, &d, &err)) < 0 || (rc = db_begin(d, &err)) < 0 ||
	    (rc = db_exec(d, &res, &err, pin ? "pinning the capture" : "unpinning the capture",
			  pin ? pin_sql : unpin_sql, 4, params)) < 0)
		goto fail;
	if (db_rows(res) != 1) {
		rc = pr_error_set(&err, PR_ENOTFOUND, pin ? "capture %llu not found" : "capture %llu is not forensic", id);
		goto fail;
	}
	detail = json_pack("{s:s}", "reason", reason);
	if (detail && pin) {
		/* What is kept now, which may be longer than asked: null is forever. */
		kept_forever = db_get_text(res, 0, 1) == NULL;
		if (!kept_forever)
			time_format(kept_txt, db_get_i64(res, 0, 1));
		json_object_set_new(detail, "until", kept_forever ? json_null() : json_string(kept_txt));
		if (until_s) {
			char when[TIME_FMT_MAX];
			time_format(when, until);
			json_object_set_new(detail, "requested_until", json_string(when));
			longer = kept_forever || db_get_i64(res, 0, 1) > until;
		}
	}
	if (detail && !pin)
		json_object_set_new(detail, "tier", json_string(db_get_text(res, 0, 0)));
	if (!detail || !(detail_s = json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS))) {
		rc = pr_error_set(&err, PR_ENOMEM, "out of memory");
		goto fail;
	}
	snprintf(object, sizeof(object), "capture:%llu", id);
	if ((rc = db_audit(d, pin ? "capture.pin" : "capture.unpin", object, detail_s, &err)) < 0 ||
	    (rc = db_commit(d, &err)) < 0)
		goto fail;
	if (ctx->json) {
		json_object_set_new(detail, "id", json_integer((json_int_t)id));
		json_object_set_new(detail, "action", json_string(pin ? "pin" : "unpin"));
		if (pin)
			json_object_set_new(detail, "blob_deleted", json_boolean(db_get_bool(res, 0, 0)));
		rc = cli_print_json(ctx, detail);
		detail = NULL;
	} else if (!ctx->quiet) {
		if (pin)
			printf("capture %llu is forensic evidence %s%s%s%s\n", id,
			       kept_forever ? "kept forever" : "until ", kept_forever ? "" : kept_txt,
			       longer ? " (it was already kept longer than that; a pin never shortens it)" : "",
			       db_get_bool(res, 0, 0) ? " (already summarised: its blob was deleted before; what is left is kept)" : "");
		else
			printf("capture %llu is back in normal retention (%s tier)\n", id, db_get_text(res, 0, 0));
		rc = EXIT_OK;
	}
	rc = cli_finish(ctx, rc);
	goto out;
fail:
	if (d)
		db_rollback(d);
	rc = cli_fail(ctx, &err);
out:
	free(detail_s);
	json_decref(detail);
	db_result_free(res);
	db_close(d);
	return rc;
}

static int capture_pin(cli_ctx *ctx, int argc, char **argv)
{
	return pin_cmd(ctx, argc, argv, true);
}

static int capture_unpin(cli_ctx *ctx, int argc, char **argv)
{
	return pin_cmd(ctx, argc, argv, false);
}

int cmd_capture(cli_ctx *ctx, int argc, char **argv)
{
	static const cli_command cmds[] = {
		{"pin", capture_pin, "keep a capture whole as forensic evidence"},
		{"unpin", capture_unpin, "return a forensic capture to normal retention"},
		{NULL, NULL, NULL},
	};
	return cli_dispatch(ctx, cmds, ctx->prog, argc - 1, argv + 1);
}
