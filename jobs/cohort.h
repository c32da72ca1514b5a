/*
 * cohort.h: the two host sets of a canary comparison (`analyze --cohort
 * --control`, `post-deploy --canary --control`).
 *
 * A set is given as a comma-separated list of host names and shell globs
 * (fnmatch: "web-[12]", "canary-*"), matched against every host the
 * service has a capture from. A name or glob that matches none of them
 * is an error naming it: a typo must not shrink a set silently. Without
 * a control list the control is every other host of the service. A host
 * in both sets, or an empty control, is an error too.
 */
#ifndef PR_COHORT_H
#define PR_COHORT_H

#include <stddef.h>

#include "pipeline/db.h"

typedef struct cohort_hosts {
	char *cohort;    /* JSON array text of the canary hosts, sorted */
	char *control;   /* JSON array text of the control hosts, sorted */
	size_t ncohort, ncontrol;
} cohort_hosts;

/*
 * Resolve `cohort_spec` and `control_spec` (NULL: every other host) for
 * service `service_id` (named `service` in messages). Errors: PR_EUSAGE
 * naming every unknown name ("unknown hosts in the canary hosts:
 * 'web-9', 'db-*' (service 'checkout' has captures from: web-1, ...)"),
 * a host in both sets, an empty list or an empty control. Release *out
 * with cohort_hosts_release, also after a failure.
 */
int cohort_resolve(cohort_hosts *out, db *d, int64_t service_id, const char *service,
		   const char *cohort_spec, const char *control_spec, pr_error *err);
void cohort_hosts_release(cohort_hosts *c);

/*
 * Check the syntax of a host list (NULL: none given) without the
 * database: an empty item ("web-1,", "host="), or one of 300 bytes or
 * more, is PR_EUSAGE naming the list as the `which` hosts ("canary",
 * "control"), the error cohort_resolve gives. Whether the names match
 * hosts is cohort_resolve's to say, when the captures are in.
 */
int cohort_check_spec(const char *spec, const char *which, pr_error *err);

#endif
