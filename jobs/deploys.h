/*
 * deploys.h: the deploy history of each service (table `deploys`).
 *
 * A deploy is one release of one service at one commit, at the time the
 * CI hook reported it. History is ordered by deploy time per service:
 * the deploy before a deploy is the latest earlier deploy of another
 * release, and its commit starts the commit range. The range is fixed
 * when the deploy is first recorded, so re-running the same post-deploy
 * sees the same range whatever was deployed since. Deleting a mistaken
 * deploy is audited.
 */
#ifndef PR_DEPLOYS_H
#define PR_DEPLOYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/db.h"

#define DEPLOY_SHA_MAX 64

typedef struct deploy {
	int64_t id, service_id;
	char service[129];
	char release[1024];
	char commit_sha[DEPLOY_SHA_MAX + 1];     /* "" when unknown */
	char previous_sha[DEPLOY_SHA_MAX + 1];   /* start of the range; "" when none */
	int64_t deployed_at_us;
} deploy;

/*
 * Record that `release` of service `service_id` is deployed at `sha`. The
 * same (service, release, commit) reported again (a retried CI job, the
 * same build rolled out again) is the same deploy: *out is the stored row
 * and *existed is true, and `at_us` is recorded as one more rollout of it
 * (table deploy_rollouts: its warm-up is left out too). A new
 * deploy is recorded as deployed at `at_us` (when the CI hook reported
 * it) and its range starts at `previous_sha` when given, else at the
 * commit of the latest deploy of another release before it;
 * `previous_sha` given for an existing deploy replaces its stored start.
 */
int deploy_record(deploy *out, bool *existed, db *d, int64_t service_id, const char *release,
		  const char *sha, const char *previous_sha, int64_t at_us, pr_error *err);

/*
 * The latest deploy of `release` of the service: 0 and *out, or
 * PR_ENOTFOUND when the release was never deployed.
 */
int deploy_find_release(deploy *out, db *d, int64_t service_id, const char *release,
			pr_error *err);

/*
 * Deploys, newest first by deploy time, of one service (service_id > 0)
 * or all, at most `limit`. *out is a new array of *n (NULL when none)
 * that the caller frees.
 */
int deploy_list(deploy **out, size_t *n, db *d, int64_t service_id, size_t limit,
		pr_error *err);

/* Delete one deploy (PR_ENOTFOUND when absent); the audit row keeps what it was. */
int deploy_delete(db *d, int64_t id, pr_error *err);

#endif
