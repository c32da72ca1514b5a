/*
 * similar.h: "did you mean ...?" for names a user typed.
 *
 * An unknown service, release or command is far more often a typo than a
 * new name; pointing at the close one saves a round trip and makes a
 * wrong name fail loudly instead of giving an empty answer.
 */
#ifndef PR_SIMILAR_H
#define PR_SIMILAR_H

#include <stddef.h>

/*
 * Edit distance (insertions, deletions, substitutions and transpositions
 * of adjacent bytes) between `a` and `b`, counted up to `cap`: any
 * distance above `cap` is returned as cap + 1. Names longer than 256
 * bytes compare as far apart.
 */
size_t similar_distance(const char *a, const char *b, size_t cap);

/*
 * The index in `cands` (n strings; NULL entries are skipped) of the one
 * closest to `name`, when it is close enough to be a likely typo (at most
 * a third of the name's length and never more than 3 edits away, or the
 * same name in another case); -1 when none is. Ties go to the first.
 */
long similar_best(const char *name, const char *const *cands, size_t n);

#endif
