/*
 * postdeploy.c: the post-deploy job (see postdeploy.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "jobs/postdeploy.h"
#include "common/similar.h"
#include "common/timeutil.h"
#include "jobs/cohort.h"
#include "jobs/collect.h"
#include "jobs/evidence.h"
#include "jobs/gitinfo.h"
#include "jobs/pushgw.h"
#include "jobs/record.h"
#include "jobs/reportdata.h"
#include "jobs/runs.h"
#include "pipeline/ingest.h"
#include "pipeline/source.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_US (5 * 1000000LL)

/* One line of a collection problem, kept once however often it repeats. */
static void note_collect(postdeploy_result *x, const char *fmt, const char *what)
{
	char line[PR_ERROR_MSG_MAX + 128];
	size_t i;
	json_t *v;

	snprintf(line, sizeof(line), fmt, what);
	json_array_foreach(x->collect, i, v)
		if (strcmp(json_string_value(v), line) == 0)
			return;
	json_array_append_new(x->collect, json_string(line));
}

/*
 * Count the release's captures into x, those stamped at or after
 * `before_us` and those in the warm-up around `deploy_us` apart.
 */
static int count_captures(postdeploy_result *x, const job_env *env, const config_service *cs,
			  int64_t sid, const char *release, int64_t before_us, int64_t deploy_us,
			  pr_error *err)
{
	db_capture_tally t;
	int rc;

	x->warmup_us = config_warmup_of(env->cfg, cs);
	if ((rc = db_capture_count(env->d, &t, sid, release, before_us, deploy_us, x->warmup_us,
				   err)) < 0)
		return rc;
	x->captures = t.all;
	x->with_samples = t.with_samples;
	x->later = t.later;
	x->warming = t.warming;
	return 0;
}

/*
 * Collect until `min_caps` captures of the release exist or the wait
 * ends. A collection problem is noted and shown, never silent; only the
 * database fails the step.
 */
static int wait_for_captures(postdeploy_result *x, const job_env *env, const postdeploy_opts *o,
			     const db_service *svc, int64_t start_us, pr_error *err)
{
	int64_t sid = svc->id;
	const config_service *cs = config_service_find(env->cfg, o->service);
	uint64_t want = o->min_captures ? o->min_captures : 1;
	int64_t poll = o->poll_us > 0 ? o->poll_us : POLL_US;
	double start = time_mono();
	int rc;

	for (;;) {
		if (collect_has_sources(cs)) {
			/* Every source; captures after the step began are this deploy's. */
			collect_opts co = {.deploy_release = o->release,
					   .deploy_commit = x->sha,
					   .deploy_at_us = start_us,
					   .busy_is_error = true};
			source_report src = {0};
			pr_error serr = PR_ERROR_INIT;
			json_t *fails = NULL, *f;
			size_t i;
			/*
			 * Another collection (a nightly, a second gate) holding the
			 * lock is a round without collection: tried again each poll,
			 * and said, never taken for a release without captures.
			 */
			x->collect_locked = false;
			if (collect_service(&src, &fails, env, svc, &co, &serr) < 0) {
				if (serr.code != PR_ELOCKED)
					return pr_error_set(err, serr.code, "%s", serr.msg);
				x->collect_locked = true;
				note_collect(x, "%s", serr.msg);
			}
			json_array_foreach(fails, i, f) {
				const char *kind = json_string_value(json_object_get(f, "source"));
				note_collect(x, strcmp(kind, "dir") == 0 ? "drop folder: %s" : "%s",
					     json_string_value(json_object_get(f, "reason")));
			}
			/* A round that failed in part still read its sources. */
			x->collected |= !x->collect_locked &&
					(src.failed == 0 || src.stored + src.already > 0);
			json_decref(fails);
			source_report_release(&src);
		}
		/*
		 * The analysis judges nothing stamped after its "now": a capture
		 * from a host whose clock runs ahead is not one to judge yet.
		 */
		int64_t now = o->at_us ? o->at_us : job_now(env);
		if ((rc = count_captures(x, env, cs, sid, o->release, now + 1, start_us, err)) < 0)
			return rc;
		x->waited_us = (int64_t)((time_mono() - start) * 1e6);
		/* An empty capture (a pod idle right after the deploy) is none to judge. */
		if ((uint64_t)x->with_samples >= want || x->waited_us >= o->wait_us)
			return 0;
		{
			int64_t left = o->wait_us - x->waited_us;
			int64_t step = left < poll ? left : poll;
			struct timespec pause = {(time_t)(step / 1000000),
						 (long)(step % 1000000) * 1000};
			while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
				;
		}
	}
}

/* "no captures of release 'v4.2' of service 's' ... (did you mean 'v4.2.0'?)" */
static int no_captures(const postdeploy_result *x, db *d, const postdeploy_opts *o, int64_t sid,
		       pr_error *err)
{
	char hint[400];
	int rc;

	if ((rc = job_release_hint(hint, sizeof(hint), d, sid, o->release, err)) < 0)
		return rc;
	/*
	 * No round of collection brought anything: that, not the release
	 * name, is what to fix (a bumped version is always close to the last
	 * one, so the hint is shown but decides nothing).
	 */
	if (json_array_size(x->collect) && !x->collected)
		return pr_error_set(
			err, PR_ERR,
			"no captures of release '%s' of service '%s' after waiting %" PRId64
			" s%s, and the collection failed: %s",
			o->release, o->service, x->waited_us / 1000000, hint,
			json_string_value(json_array_get(x->collect, 0)));
	return pr_error_set(
		err, PR_ENOTFOUND,
		"no captures of release '%s' of service '%s' after waiting %" PRId64
		" s%s: refusing to pass a release profreg has never seen%s%s%s",
		o->release, o->service, x->waited_us / 1000000, hint,
		json_array_size(x->collect) ? " (the collection said: " : "",
		json_array_size(x->collect) ? json_string_value(json_array_get(x->collect, 0)) : "",
		json_array_size(x->collect) ? ")" : "");
}

/*
 * Whether capture c is one the analysis judges, as count_captures counts
 * them: of a type judged, holding samples, stamped by "now" (`at_us`) and
 * outside the warm-up around the deploy (reported at `deploy_us`, first
 * recorded at `deployed_us`). A capture of the same release name left out
 * of the analysis says nothing about the build that was judged.
 */
static bool judged_capture(const db_capture *c, const config_service *cs, int64_t at_us,
			   int64_t deploy_us, int64_t deployed_us, int64_t warmup_us)
{
	int64_t from_report = c->captured_at_us - deploy_us;
	int64_t from_first = c->captured_at_us - deployed_us;
	bool typed = false;

	/* The types postdeploy_run analyses: the service's, else cpu. */
	for (size_t t = 0; t < (cs ? cs->ntypes : 1) && !typed; t++)
		typed = c->profile_type && strcmp(c->profile_type, cs ? cs->types[t] : "cpu") == 0;
	if (!typed || c->total_value <= 0 || c->captured_at_us > at_us)
		return false;
	return warmup_us <= 0 || ((from_report < 0 ? -from_report : from_report) >= warmup_us &&
				  (from_first < 0 ? -from_first : from_first) >= warmup_us);
}

/*
 * The release's captures should be of the build being deployed: a
 * release captured as another commit (a version label reused for a
 * hotfix, an agent still labelling the old pods, CI naming a merge
 * commit the image was not built from) has the gate judge a build that
 * may not be the one deployed. A note says which build they are. When
 * no capture judged carries the deployed commit, the deployed build was
 * never measured (ingest refuses a second commit for a release, so a
 * hotfix under the old name leaves only the old build's captures):
 * x->unmeasured, and verdict() makes a pass inconclusive. A capture
 * without a commit belongs to whichever commit the release has (as at
 * ingest), so it never counts as the deployed build's. Commits compare
 * as ingest compares them: a prefix of the other, in any case.
 */
/*
 * A service the configuration does not name is judged for cpu alone. When
 * its release has captures of other types, the name is as likely a typo
 * in the configuration (`svc-00O` for `svc-000`) as a choice: a heap
 * regression passed the gate with nothing said. Said in a note, with the
 * configured name it resembles.
 */
static void note_unjudged_types(postdeploy_result *x, const config *cfg, const char *service,
				const db_capture *caps, size_t n)
{
	const char **names = NULL;
	const char *other = NULL;
	size_t count = 0;
	long best = -1;

	for (size_t i = 0; i < n; i++)
		if (caps[i].profile_type && strcmp(caps[i].profile_type, "cpu") != 0 &&
		    caps[i].total_value > 0) {
			other = other ? other : caps[i].profile_type;
			count++;
		}
	if (!count)
		return;
	if (cfg->nservices && (names = calloc(cfg->nservices, sizeof(*names)))) {
		for (size_t i = 0; i < cfg->nservices; i++)
			names[i] = cfg->services[i].name;
		best = similar_best(service, names, cfg->nservices);
	}
	job_note(&x->notes,
		 "service '%s' is not in the configuration's services%s%s%s, so it is judged "
		 "for cpu alone: %zu capture%s of the release of other types (%s) %s not judged",
		 service, best >= 0 ? " (did you mean '" : "", best >= 0 ? names[best] : "",
		 best >= 0 ? "'?)" : "", count, count == 1 ? "" : "s", other,
		 count == 1 ? "was" : "were");
	free(names);
}

static int check_build(postdeploy_result *x, db *d, const config *cfg, const config_service *cs,
		       const postdeploy_opts *o, int64_t at_us, int64_t deploy_us, pr_error *err)
{
	db_capture_filter f = {0};
	db_capture *caps = NULL;
	size_t n = 0;
	int64_t deployed = 0, commitless = 0;
	bool named_judged = false; /* captured_sha is of a capture judged */
	int rc;

	f.service = o->service;
	f.release = o->release;
	if ((rc = db_capture_list(d, &caps, &n, &f, err)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		const db_capture *c = &caps[i];
		bool judged = judged_capture(c, cs, at_us, deploy_us, x->dep.deployed_at_us,
					     x->warmup_us);
		if (!c->commit_sha || !c->commit_sha[0]) {
			commitless += judged;
			continue;
		}
		if (ingest_same_commit(c->commit_sha, x->sha)) {
			deployed += judged;
			continue;
		}
		/* Name a capture the verdict leaned on, when there is one. */
		if (x->captured_sha[0] && (named_judged || !judged))
			continue;
		snprintf(x->captured_sha, sizeof(x->captured_sha), "%s", c->commit_sha);
		x->captured_id = c->id;
		named_judged = judged;
	}
	if (x->captured_sha[0])
		job_note(&x->notes,
			 "release '%s' of service '%s' was captured as commit "
			 "%s (capture %lld), not the deployed %s: the verdict is on "
			 "that build's captures",
			 o->release, o->service, x->captured_sha, (long long)x->captured_id,
			 x->sha);
	/*
	 * Captures without a commit are the release's build by their release
	 * name alone: said, so that a gate whose judged captures all carry
	 * none does not read as having checked the build.
	 */
	if (deployed == 0 && !x->captured_sha[0] && commitless > 0)
		job_note(&x->notes,
			 "none of the %lld captures of release '%s' judged carries a commit: they "
			 "are taken as the deployed %s by their release name (stamp captures "
			 "with their commit to have the build checked)",
			 (long long)commitless, o->release, x->sha);
	/* Only on a judged capture of another build: a warm-up one proves nothing. */
	x->unmeasured = x->captured_sha[0] && named_judged && deployed == 0;
	if (!cs)
		note_unjudged_types(x, cfg, o->service, caps, n);
	for (size_t i = 0; i < n; i++)
		db_capture_release(&caps[i]);
	free(caps);
	return 0;
}

/* Compute each regression's suspects once, store them with the run, keep them for printing. */
static int store_suspects(postdeploy_result *x, db *d, int64_t run_id, pr_error *err)
{
	int rc;

	for (size_t i = 0; i < x->a.ntests && x->a.tests[i].significant; i++) {
		const finding *f = &x->a.tests[i];
		json_t *s;
		char id[24];
		if (f->direction != FINDING_REGRESSION || !f->id)
			continue;
		if (!(s = suspects_for_function(&x->range, f->function, f->file)))
			return pr_error_set(err, PR_ENOMEM, "out of memory");
		snprintf(id, sizeof(id), "%" PRId64, f->id);
		json_object_set(x->suspects, id, s);
		if ((rc = suspects_store(d, run_id, f->id, s, err)) < 0)
			return rc;
	}
	return 0;
}

/* Send this run's own pages within a deadline; the rest waits for the next flush. */
static int send_pages(db *d, const config *cfg, const analysis *a, pager_counts *pc,
		      pr_error *err)
{
	pager_flush_opts fo = {false, true, NULL, 0, POSTDEPLOY_PAGE_DEADLINE_MS};
	int64_t *ids = NULL;
	size_t n = 0;
	int rc;

	if (a->nfindings && !(ids = calloc(a->nfindings, sizeof(*ids))))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	for (size_t i = 0; i < a->ntests && a->tests[i].significant && n < a->nfindings; i++)
		if (a->tests[i].id)
			ids[n++] = a->tests[i].id;
	fo.finding_ids = ids;
	fo.nfinding_ids = n;
	rc = pager_flush(d, cfg, &fo, pc, err);
	free(ids);
	return rc;
}

/*
 * Tag the evidence of this deploy's regressions with the deploy and its
 * commit. Findings stored before are tagged too: an analysis of the
 * release may have stored one first, or this job failed after recording
 * it and CI runs it again. Evidence that names a deploy already keeps it
 * (evidence_tag_deploy), so the first deploy found with it stays.
 */
static int tag_evidence(const postdeploy_result *x, db *d, pr_error *err)
{
	int rc;

	for (size_t i = 0; i < x->a.ntests && x->a.tests[i].significant; i++) {
		const finding *f = &x->a.tests[i];
		if (f->direction != FINDING_REGRESSION || !f->id)
			continue;
		if ((rc = evidence_tag_deploy(d, f->id, x->dep.id, x->sha, err)) < 0)
			return rc;
	}
	return 0;
}

/*
 * A pass says no function slowed down enough to show; on captures too
 * few or too small (a starved host's profiler took 60-100 samples a
 * capture), a function can double the service's cost and not show, and
 * such a pass vouches for nothing. Said as a reason, which makes the
 * pass inconclusive, for each judged type whose blind spot is over the
 * limit.
 */
static void blind_reasons(postdeploy_result *x, const postdeploy_opts *o)
{
	double max = analysis_blind_limit(o->max_unseen, &x->a.opts);
	char line[PR_ERROR_MSG_MAX];

	for (size_t i = 0; i < x->nblind && analysis_blind_over(&x->blind[i], max); i++) {
		analysis_blind_reason(line, sizeof(line), &x->blind[i], max);
		json_array_append_new(x->reasons, json_string(line));
	}
}

/*
 * Fail on a regression at or above the gate, but for one within a rise
 * accepted by hand; else inconclusive when anything went unjudged or the
 * captures could not have seen a large rise (blind_reasons).
 */
static int verdict(postdeploy_result *x, const postdeploy_opts *o, pr_error *err)
{
	stats_severity gate = o->gate == STATS_SEV_NONE ? STATS_SEV_HIGH : o->gate;
	uint64_t want = o->min_captures ? o->min_captures : 1;
	char line[PR_ERROR_MSG_MAX];

	if (analysis_blind_spots(&x->blind, &x->nblind, &x->a, gate) < 0)
		return pr_error_set(err, PR_ENOMEM, "out of memory");

	x->verdict = "pass";
	for (size_t i = 0; i < x->a.ntests && x->a.tests[i].significant; i++)
		if (x->a.tests[i].direction == FINDING_REGRESSION &&
		    x->a.tests[i].severity >= gate &&
		    !x->a.tests[i].accepted) /* the level accepted by hand */
			x->verdict = "fail";
	for (size_t i = 0; i < x->a.nskipped; i++) {
		snprintf(line, sizeof(line), "%s: %s", x->a.skipped[i].type,
			 x->a.skipped[i].reason);
		json_array_append_new(x->reasons, json_string(line));
	}
	if ((uint64_t)x->with_samples < want) {
		int64_t empty = x->captures - x->with_samples - x->later - x->warming;
		char why[3][256] = {"", "", ""}, more[800] = "", when[TIME_FMT_MAX];
		const char *sep = " (";
		time_format(when, x->a.opts.at_us);
		if (x->later > 0)
			snprintf(why[0], sizeof(why[0]), "%" PRId64 " more %s stamped after it: a "
				 "clock ahead, or --at before them", x->later,
				 x->later == 1 ? "is" : "are");
		if (x->warming > 0)
			snprintf(why[1], sizeof(why[1]), "%" PRId64 " more %s taken in the "
				 "warm-up, less than %" PRId64 " s from the deploy", x->warming,
				 x->warming == 1 ? "was" : "were",
				 x->warmup_us / 1000000);
		if (empty > 0)
			snprintf(why[2], sizeof(why[2]), "%" PRId64 " more hold none", empty);
		snprintf(more, sizeof(more), " with samples%s%s", x->later > 0 ? " by the analysis "
			 "time " : "", x->later > 0 ? when : "");
		for (size_t i = 0; i < 3; i++)
			if (why[i][0]) {
				size_t n = strlen(more);
				snprintf(more + n, sizeof(more) - n, "%s%s", sep, why[i]);
				sep = "; ";
			}
		if (sep[0] == ';')
			strncat(more, ")", sizeof(more) - strlen(more) - 1);
		else if (x->later == 0)
			more[0] = '\0';
		snprintf(line, sizeof(line), "only %" PRId64 " of the %" PRIu64
			 " captures asked for (--min-captures) "
			 "arrived within --wait%s", x->with_samples, want, more);
		json_array_append_new(x->reasons, json_string(line));
	} else if (x->a.services && analysis_fewest_current_captures(&x->a) < want) {
		/*
		 * The wait counted the release's captures of every host and
		 * every type; a canary is judged on its own hosts, and a service
		 * on each of its configured types (cpu when it has none): two
		 * cpu and two heap captures are not four cpu captures, nor
		 * four heap ones.
		 */
		size_t n = analysis_fewest_current_captures(&x->a);
		snprintf(line, sizeof(line), "only %zu of the %" PRIu64 " captures asked for "
			 "(--min-captures) %s %s (%" PRId64 " captures of the release in all)", n,
			 want, n == 1 ? "is" : "are",
			 x->hosts ? "on the canary hosts" : "of a type the analysis judged",
			 x->captures);
		json_array_append_new(x->reasons, json_string(line));
	}
	if (x->unmeasured) {
		/*
		 * A pass on another build's captures says nothing of the build
		 * deployed; a fail stands: the release name's captures did regress.
		 */
		snprintf(line, sizeof(line),
			 "release '%.128s' was deployed as commit %s, but the captures judged "
			 "are of commit %s (capture %" PRId64 "): the deployed build was never "
			 "measured. A release is one build (docs/ingest.md, \"A release has "
			 "one commit\"): deploy the new build under a release name of its own",
			 o->release, x->sha, x->captured_sha, x->captured_id);
		json_array_append_new(x->reasons, json_string(line));
	}
	if (analysis_unjudged_baseline(&x->a)) {
		/*
		 * Too few judged captures in the window (a gap in the nightlies,
		 * releases deployed without a gate): a regression shipped in the
		 * releases taken for want of them is the baseline, and a pass
		 * measured against it says nothing. A fail stands.
		 */
		snprintf(line, sizeof(line),
			 "the baseline holds captures of release(s) %s, which no run has judged "
			 "(too few judged captures in the window): a regression shipped in them "
			 "would be part of the baseline. Judge them first (profreg analyze "
			 "--service %.128s --release R), then run the gate again",
			 analysis_unjudged_baseline(&x->a), o->service);
		json_array_append_new(x->reasons, json_string(line));
	}
	if (analysis_spent(&x->a)) {
		/* A rollback to, or a promotion of, a release that has run for days. */
		snprintf(line, sizeof(line),
			 "release %s was judged on its %zu planned looks "
			 "(analysis.max_looks) before this one, look %zu: no alpha is left for a "
			 "new finding, so finding none says nothing",
			 o->release, x->a.opts.max_looks, analysis_latest_look(&x->a));
		json_array_append_new(x->reasons, json_string(line));
	}
	if (strcmp(x->verdict, "fail") != 0 && !json_array_size(x->reasons))
		blind_reasons(x, o);
	if (strcmp(x->verdict, "fail") != 0 && json_array_size(x->reasons))
		x->verdict = "inconclusive";
	return 0;
}

static int finish_run(postdeploy_result *x, db *d, pr_error *err)
{
	json_t *detail = json_pack("{s:I,s:s,s:O,s:O,s:o,s:s?,s:I,s:{s:I,s:I,s:I,s:I}}", "findings",
				   (json_int_t)x->a.nfindings, "verdict", x->verdict,
				   "inconclusive_reasons", x->reasons, "collection_problems",
				   x->collect, "commits", suspects_range_json(&x->range),
				   "range_note", x->range.note[0] ? x->range.note : NULL,
				   "captures", (json_int_t)x->captures, "pages", "enqueued",
				   (json_int_t)x->a.pages_enqueued, "sent",
				   (json_int_t)x->pages.sent, "failed", (json_int_t)x->pages.failed,
				   "pending", (json_int_t)x->pages.pending);
	int rc;

	/* What a pass could not have seen, kept with the verdict. */
	if (detail && json_object_set_new(detail, "blind_spots",
					  analysis_blind_json(x->blind, x->nblind)) < 0) {
		json_decref(detail);
		detail = NULL;
	}
	rc = detail ? runs_finish(d, x->run_id, "ok", detail, err)
		    : pr_error_set(err, PR_ENOMEM, "out of memory");

	json_decref(detail);
	return rc;
}

int postdeploy_run(postdeploy_result *out, const job_env *env, const postdeploy_opts *o,
		   pr_error *err)
{
	postdeploy_result *x = out;
	const config_service *cs = config_service_find(env->cfg, o->service);
	const char *repo = o->repo ? o->repo : cs ? cs->repo : NULL;
	char prev_sha[GITINFO_SHA_HEX + 1] = "";
	analysis_opts ao = env->cfg->analysis;
	int64_t reported_at = job_now(env);
	db_service svc = {0};
	cohort_hosts hosts = {0};
	double t0 = time_mono();
	bool existed = false;
	int rc;

	memset(x, 0, sizeof(*x));
	x->verdict = "pass";
	if (!(x->collect = json_array()) || !(x->reasons = json_array()) ||
	    !(x->suspects = json_object()))
		return pr_error_set(err, PR_ENOMEM, "out of memory");
	/* The service first: a misspelled service must not be blamed on the repository. */
	if ((rc = db_service_get(env->d, &svc, o->service, err)) < 0)
		goto out;
	if (!svc.enabled) {
		rc = pr_error_set(err, PR_EREFUSED, "service '%s' is not enabled for profiling",
				  o->service);
		goto out;
	}
	if ((rc = gitinfo_resolve(x->sha, repo, o->ref, err)) < 0 ||
	    (o->previous && (rc = gitinfo_resolve(prev_sha, repo, o->previous, err)) < 0)) {
		/* A ref that does not resolve is bad input, not a usage slip. */
		if (err->code == PR_EUSAGE && repo == NULL)
			err->code = rc = PR_EDATA;
		goto out;
	}
	if ((rc = wait_for_captures(x, env, o, &svc, reported_at, err)) < 0)
		goto out;
	if (x->captures == 0 && x->collect_locked) {
		rc = pr_error_set(
			err, PR_ELOCKED,
			"no captures of release '%s' of service '%s' after waiting %" PRId64
			" s, and none could be collected: another collection (a nightly, "
			"another post-deploy) held its lock all along; run it again, or "
			"give --wait the time it takes",
			o->release, o->service, x->waited_us / 1000000);
		goto out;
	}
	if (x->captures == 0) {
		rc = no_captures(x, env->d, o, svc.id, err);
		goto out;
	}
	if (o->canary) {
		if ((rc = cohort_resolve(&hosts, env->d, svc.id, svc.name, o->canary, o->control,
					 err)) < 0)
			goto out;
		if (!(x->hosts = json_pack("{s:o,s:o}", "canary", json_loads(hosts.cohort, 0, NULL),
					   "control", json_loads(hosts.control, 0, NULL)))) {
			rc = pr_error_set(err, PR_ENOMEM, "out of memory");
			goto out;
		}
	}
	/* The deploy is as old as the CI step, however long it waited. */
	if ((rc = deploy_record(&x->dep, &existed, env->d, svc.id, o->release, x->sha,
				o->previous ? prev_sha : NULL, reported_at, err)) < 0 ||
	    (rc = suspects_range_load(&x->range, repo, x->dep.previous_sha, x->dep.commit_sha,
				      err)) < 0)
		goto out;
	/* "Now" is when the analysis starts, so the captures waited for are in it. */
	ao.at_us = o->at_us ? o->at_us : job_now(env);
	/* What that "now" judges, for the verdict: a capture stamped later is not. */
	if ((rc = count_captures(x, env, cs, svc.id, o->release, ao.at_us + 1, reported_at,
				 err)) < 0)
		goto out;
	/* Which build those captures are: known only now the deploy and "now" are. */
	if ((rc = check_build(x, env->d, env->cfg, cs, o, ao.at_us, reported_at, err)) < 0)
		goto out;
	analysis_init(&x->a, &ao);
	{
		json_t *params = json_pack("{s:s,s:s,s:I,s:s,s:I}", "release", o->release,
					   "commit", x->sha, "deploy_id", (json_int_t)x->dep.id,
					   "gate", stats_severity_name(o->gate == STATS_SEV_NONE
								       ? STATS_SEV_HIGH : o->gate),
					   "at_us", (json_int_t)ao.at_us);
		if (params && x->hosts) {
			json_object_set(params, "canary_hosts",
					json_object_get(x->hosts, "canary"));
			json_object_set(params, "control_hosts",
					json_object_get(x->hosts, "control"));
		}
		rc = runs_begin(&x->run_id, env->d, "post-deploy", svc.id, params, err);
		json_decref(params);
		if (rc < 0)
			goto out;
	}
	for (size_t t = 0; t < (cs ? cs->ntypes : 1); t++) {
		analysis_target tg = {svc.id, svc.name, cs ? cs->types[t] : "cpu", o->release,
				      0, 0, NULL, NULL, config_service_week(cs),
				      config_service_warmup(cs)};
		analysis_cohort ch = {hosts.cohort, hosts.control};
		if ((rc = analysis_add_cohort(&x->a, env->d, &tg, hosts.cohort ? &ch : NULL, true,
					       err)) < 0)
			goto fail;
	}
	if ((rc = analysis_finish(&x->a, err)) < 0)
		goto fail;
	x->judged = (int64_t)analysis_current_captures(&x->a);
	for (size_t i = 0; i < x->a.nnotes; i++)
		job_note(&x->notes, "%s", x->a.notes[i]);
	if ((rc = record_findings_bs(&x->a, env->d, env->bs, x->run_id, env->cfg, true, err)) < 0 ||
	    (rc = store_suspects(x, env->d, x->run_id, err)) < 0 ||
	    (rc = tag_evidence(x, env->d, err)) < 0)
		goto fail;
	if ((rc = verdict(x, o, err)) < 0 || (rc = finish_run(x, env->d, err)) < 0)
		goto fail;
	/*
	 * A page links to its team's report, as the nightly's do: written
	 * first, so the link works when on-call opens it. A report that
	 * cannot be written is the caller's error, never a reason to hold a
	 * page back. Delivery problems leave pages pending in the outbox;
	 * they do not change the verdict.
	 */
	reportdata_write_run_all(env, x->run_id, &x->report, x->report_problem,
				 sizeof(x->report_problem));
	if ((rc = send_pages(env->d, env->cfg, &x->a, &x->pages, err)) < 0 ||
	    (rc = finish_run(x, env->d, err)) < 0)
		goto fail;
	if (x->pages.first_error[0])
		job_note(&x->notes, "paging: %s", x->pages.first_error);
	{
		pr_error e = PR_ERROR_INIT;
		/*
		 * Last, and within the step's deadline: a pushgateway that hangs
		 * costs a warning, never the verdict (docs/paging.md).
		 */
		if (pushgw_push_analysis(env->cfg, "post-deploy", !x->report_problem[0], t0,
					 o->deadline_us, &x->a, x->a.services > 0, 0, &x->pages,
					 &e) < 0)
			job_note(&x->notes, "%s", e.msg);
	}
	for (size_t i = 0; i < json_array_size(x->collect); i++)
		job_note(&x->notes, "collection: %s",
			 json_string_value(json_array_get(x->collect, i)));
	goto out;
fail:
	{
		pr_error ignore = PR_ERROR_INIT;
		json_t *why = json_pack("{s:s}", "error", err->msg);
		runs_finish(env->d, x->run_id, "failed", why, &ignore);
		json_decref(why);
		/*
		 * Only a run that got as far as analysing counts as a failed run for the metrics.
		 */
		pushgw_push_analysis(env->cfg, "post-deploy", false, t0, o->deadline_us, &x->a,
				     x->a.services > 0, 1, &x->pages, &ignore);
	}
out:
	db_service_release(&svc);
	cohort_hosts_release(&hosts);
	return rc;
}

void postdeploy_result_release(postdeploy_result *r)
{
	analysis_release(&r->a);
	suspects_range_release(&r->range);
	json_decref(r->reasons);
	json_decref(r->collect);
	json_decref(r->suspects);
	json_decref(r->hosts);
	free(r->report);
	job_notes_release(&r->notes);
	free(r->blind);
	memset(r, 0, sizeof(*r));
}
