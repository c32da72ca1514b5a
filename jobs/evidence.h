/*
 * evidence.h: captures kept as forensic evidence, and the pins that keep
 * a finding's baseline while it is open (table `capture_pins`, and the
 * forensic columns of `profiles`: retention_class 'forensic',
 * retain_until, forensic_reason/by/at, the 'finding' tag).
 *
 * One rule, written once here: evidence is never kept for less time than
 * it already was. A capture kept forever stays kept forever; one kept
 * until T is kept until the later of T and what is asked; a capture not
 * yet forensic is kept until what is asked (NULL: forever). Retention
 * never touches a forensic capture while its retain_until is ahead, nor a
 * capture pinned by an open finding.
 */
#ifndef PR_EVIDENCE_H
#define PR_EVIDENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "baselines/analysis.h"
#include "pipeline/db.h"

/*
 * A regression's evidence, in the caller's transaction: its current
 * captures become forensic (kept `keep_us` from when the finding was
 * first stored; 0: forever) tagged with the finding, its baseline
 * captures are pinned while it is open, and an audit row says so. A
 * capture already another finding's evidence keeps the later end.
 * Captures already kept that long are left alone, so storing the same
 * finding again audits nothing. *without_blob (may be NULL) is how many
 * captures made evidence retention had cut to a summary after the
 * analysis read them: their rows that are left are kept, their raw
 * profiles are gone. *deleted (may be NULL) is how many of its baseline
 * captures retention had deleted outright meanwhile: not pinned, since
 * they are not there.
 */
int evidence_pin_finding(db *d, const finding *f, int64_t keep_us, int64_t *without_blob,
			 int64_t *deleted, pr_error *err);

/*
 * Tag a finding's forensic captures with the deploy that shipped the
 * regression and its commit, so the evidence names what to look at.
 * A capture that names a deploy already keeps it: tagging again, as a
 * retried CI job does, changes nothing.
 */
int evidence_tag_deploy(db *d, int64_t finding_id, int64_t deploy_id, const char *sha,
			pr_error *err);

/* Lift a finding's pins (it was resolved); *unpinned how many. */
int evidence_release_finding(db *d, int64_t finding_id, int64_t *unpinned, pr_error *err);

/* One side of a finding's captures, as retention left them. */
typedef struct evidence_side {
	size_t stored;     /* the captures the finding was compared on */
	size_t left;       /* of those, the ones still there */
	size_t cut;        /* of those left, the ones cut to a summary (no raw profile) */
	size_t cut_closed; /* of those cut, the ones cut after the finding closed */
} evidence_side;

/* What is left of a stored finding's captures. */
typedef struct evidence_left {
	evidence_side baseline, current;
	int64_t closed_at_us; /* when it closed (its run's time); 0: it is open */
} evidence_left;

/*
 * Count what is left of finding `id`'s captures. Once a finding closes,
 * its baseline is no longer pinned and retention may cut or delete it
 * (only retention deletes a capture); its current captures stay
 * forensic until their keep ends. What `finding show` and the report say
 * when the comparison can no longer be made again.
 */
int evidence_count(evidence_left *out, db *d, int64_t id, pr_error *err);

/*
 * Into `out`, why one side of a finding (its baseline, else its current
 * captures) is not whole, as a phrase: "the 32 baseline captures were
 * deleted by retention after the finding closed on 2026-01-14" (or "12
 * of the 32 ...", or "... were cut to a summary ..."); "" when it is.
 */
void evidence_gone_text(char *out, size_t n, const evidence_left *e, bool baseline);

/* What `capture pin` and `capture unpin` did. */
typedef struct evidence_pin_result {
	bool kept_forever;        /* pin: retain_until is none */
	int64_t kept_until_us;    /* pin: when it is kept until, else 0 */
	bool longer;              /* pin: already kept longer than asked */
	bool blob_deleted;        /* pin: only its summary rows were left */
	char tier[16];            /* unpin: the tier it went back to */
	int64_t evidence_of;      /* unpin: the finding it stays the evidence of (0: none) */
} evidence_pin_result;

/*
 * Keep capture `id` as forensic evidence until `until_us` (0: forever),
 * for `reason` (required), audited with the reason and the user, in one
 * transaction. PR_ENOTFOUND when the capture does not exist.
 */
int evidence_pin_capture(evidence_pin_result *out, db *d, int64_t id, const char *reason,
			 int64_t until_us, pr_error *err);

/*
 * Return forensic capture `id` to normal retention (hot while it has its
 * blob, else summary), audited. A finding's evidence stays forensic as
 * the finding keeps it (`keep_us` from when the finding was stored, the
 * configuration's forensic_days; 0: forever): only the pin by hand is
 * taken off, and out->evidence_of names the finding. PR_ENOTFOUND when
 * it is not forensic.
 */
int evidence_unpin_capture(evidence_pin_result *out, db *d, int64_t id, const char *reason,
			   int64_t keep_us, pr_error *err);

#endif
