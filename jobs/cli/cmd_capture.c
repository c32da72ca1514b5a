/*
 * cmd_capture.c: `profreg capture pin ID --reason TEXT [--until T]` keeps
 * a capture as forensic evidence (whole: never tiered, never evicted by
 * the budget) and `profreg capture unpin ID --reason TEXT` hands it back
 * to normal retention. Both are audited with the reason and the user.
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/cli/commands.h"
#include "jobs/cli/context.h"
#include "jobs/cli/exitcode.h"
#include "jobs/config.h"
#include "jobs/evidence.h"
#include "common/timeutil.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { O_REASON = 1800, O_UNTIL };

#define REASON_MAX 1024

static int pin_cmd(cli_ctx *ctx, int argc, char **argv, bool pin)
{
	static const cli_option pin_opts[] = {
		{"reason", required_argument, O_REASON, "TEXT",
		 "why it is kept (required; audited)"},
		{"until", required_argument, O_UNTIL, "TIME",
		 "keep it until TIME, then tier it by age (default: forever)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const cli_option unpin_opts[] = {
		{"reason", required_argument, O_REASON, "TEXT",
		 "why it no longer needs keeping (required; audited)"},
		{NULL, 0, 0, NULL, NULL},
	};
	static const char pin_desc[] =
		"Keep capture ID as forensic evidence: whole (blob and every row), never\n"
		"moved by retention nor evicted by the storage budget, until TIME if\n"
		"given (then it is tiered by its age again). A capture already in the\n"
		"summary tier keeps what is left.";
	static const char unpin_desc[] =
		"Return forensic capture ID to normal retention: it is tiered by its age\n"
		"from the next retention run. A finding's evidence stays kept as the finding\n"
		"keeps it (retention.forensic_days from when it was found, and while it is\n"
		"open): only the pin by hand is taken off.";
	pr_error err = PR_ERROR_INIT;
	cli_parser *p = NULL;
	config cfg = {0};
	db *d = NULL;
	const char *arg, *reason = NULL, *until_s = NULL;
	unsigned long long id = 0;
	int64_t until = 0;
	char kept_txt[TIME_FMT_MAX] = "";
	evidence_pin_result r;
	int c, first, rc, status;

	if (cli_parser_new(&p, ctx, argc, argv, pin ? pin_opts : unpin_opts,
			   pin ? "profreg capture pin ID --reason TEXT [--until T]"
			       : "profreg capture unpin ID --reason TEXT",
			   pin ? pin_desc : unpin_desc) < 0)
		return EXIT_RUNTIME;
	while ((c = cli_next(p, &arg)) > 0) {
		if (c == O_REASON)
			reason = arg;
		else if (c == O_UNTIL)
			until_s = arg;
	}
	if ((status = cli_end(p, c, false, 1, 1, "one capture ID", &first)) != CLI_GO)
		return status;
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
	if (until_s && (time_parse(&until, until_s) < 0 || until == 0)) {
		cli_error(ctx, "'--until %s' is not an ISO 8601 time", until_s);
		return EXIT_USAGE;
	}
	if ((rc = ctx_config_load(ctx, &cfg, &err)) < 0 || (rc = ctx_db_open(ctx, &d, &err)) < 0)
		goto fail;
	rc = pin ? evidence_pin_capture(&r, d, (int64_t)id, reason, until, &err)
		 : evidence_unpin_capture(&r, d, (int64_t)id, reason, cfg.analysis.forensic_keep_us,
					  &err);
	if (rc < 0)
		goto fail;
	if (!r.kept_forever)
		time_format(kept_txt, r.kept_until_us);
	status = EXIT_OK;
	if (ctx->json) {
		json_t *o = json_pack("{s:I,s:s,s:s}", "id", (json_int_t)id, "action",
				      pin ? "pin" : "unpin", "reason", reason);
		if (pin) {
			json_object_set_new(o, "until", r.kept_forever ? json_null()
								       : json_string(kept_txt));
			json_object_set_new(o, "blob_deleted", json_boolean(r.blob_deleted));
			if (until_s) {
				char when[TIME_FMT_MAX];
				time_format(when, until);
				json_object_set_new(o, "requested_until", json_string(when));
			}
		} else {
			json_object_set_new(o, "tier", json_string(r.tier));
			json_object_set_new(o, "evidence_of",
					    r.evidence_of ? json_integer((json_int_t)r.evidence_of)
							  : json_null());
		}
		status = cli_print_json(ctx, o);
	} else if (!ctx->quiet) {
		if (pin) {
			printf("capture %llu is forensic evidence %s%s", id,
			       r.kept_forever ? "kept forever" : "until ",
			       r.kept_forever ? "" : kept_txt);
			if (r.longer)
				printf(" (it was already kept longer than that; a pin never "
				       "shortens it)");
			if (r.blob_deleted)
				printf(" (already summarised: its blob was deleted before; what is "
				       "left is kept)");
			putchar('\n');
		} else {
			if (r.evidence_of)
				printf("capture %llu is no longer pinned by hand; it stays the "
				       "evidence of finding %lld, kept as that finding keeps it\n",
				       id, (long long)r.evidence_of);
			else
				printf("capture %llu is back in normal retention (%s tier)\n", id,
				       r.tier);
		}
	}
	status = cli_finish(ctx, status);
	goto out;
fail:
	status = cli_fail(ctx, &err);
out:
	config_release(&cfg);
	db_close(d);
	return status;
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
