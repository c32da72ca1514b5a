/*
 * suspects.h: the commits that may have caused a regression, computed
 * once per run and stored with it.
 *
 * A deploy's commit range (from its previous deploy's commit to its
 * own) is read from the service's repository with libgit2; a
 * regression's suspects are the commits of that range that touched the
 * file its function lives in (gitinfo_path_match), newest first. The
 * run that found the regression stores the result beside the finding
 * (run_findings.suspects), and the Markdown, the JSON and the reports
 * all show what was stored, so they can never disagree.
 *
 * The stored object, schema_version 1:
 *   {"schema_version": 1, "from": SHA|null, "to": SHA|null,
 *    "file": "pkg/ledger.go", "commits": [{"sha", "author", "subject",
 *    "time"}], "note": "why there are none, or what limits them"}
 * The note is there when commits is empty, and beside commits when the
 * range was cut or does not start at an ancestor (a rewritten history).
 */
#ifndef PR_SUSPECTS_H
#define PR_SUSPECTS_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/gitinfo.h"
#include "pipeline/db.h"

struct json_t;

/*
 * Commits a range is read to at most (the newest). Past it they are only
 * counted, and every finding's suspects say the range was cut: the
 * culprit may be older. A weekly deploy of a busy monorepo holds a few
 * thousand; reading 5,000 takes seconds.
 */
#define SUSPECTS_MAX_RANGE 5000

/* A deploy's commit range, read once for all of its findings. */
typedef struct suspects_range {
	char from[GITINFO_SHA_HEX + 1];  /* "" when there is no start */
	char to[GITINFO_SHA_HEX + 1];    /* "" when there is no commit */
	gitinfo_commit *commits;         /* newest first; NULL when none */
	size_t ncommits;
	size_t total;                     /* commits in the range, past the cap too */
	char note[PR_ERROR_MSG_MAX + 64]; /* why there is no range; "" when there is one */
	char limit[256];                  /* what limits the range ("" when nothing):
					     cut, or not from an ancestor */
} suspects_range;

/*
 * Read the range from..to in `repo`. Every reason there is none (no
 * repository, no previous deploy, an unreadable repository, a rewritten
 * history) becomes the note, not an error: a finding without suspects is
 * still a finding. Only PR_ENOMEM fails. Release with
 * suspects_range_release.
 */
int suspects_range_load(suspects_range *out, const char *repo, const char *from, const char *to,
			pr_error *err);
void suspects_range_release(suspects_range *r);

/*
 * The stored object for the function `name` in `file` (NULL or "": none
 * known): the range's commits that touched the file, or a note saying
 * why there are none. NULL on ENOMEM.
 */
struct json_t *suspects_for_function(const suspects_range *r, const char *name, const char *file);

/* The range itself as a JSON array of commits (the newest first); NULL on ENOMEM. */
struct json_t *suspects_range_json(const suspects_range *r);

/* Store a finding's suspects with the run that found it (steals `s`). */
int suspects_store(db *d, int64_t run_id, int64_t finding_id, struct json_t *s, pr_error *err);

/*
 * The stored suspects of a finding: those of run `run_id` when it is > 0,
 * else those of the latest run that stored any. *out is NULL when none
 * were stored; the caller decrefs it.
 */
int suspects_load(struct json_t **out, db *d, int64_t run_id, int64_t finding_id,
		  pr_error *err);

#endif
