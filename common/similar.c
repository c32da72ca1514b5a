/*
 * similar.c: edit distance and the closest candidate (see similar.h).
 */
#include "common/similar.h"

#include <ctype.h>
#include <string.h>

#define SIMILAR_MAX_LEN 256

size_t similar_distance(const char *a, const char *b, size_t cap)
{
	/* Three rows of the optimal-string-alignment table, on the stack. */
	size_t rows[3][SIMILAR_MAX_LEN + 1];
	size_t na = strlen(a), nb = strlen(b);
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	if (na > SIMILAR_MAX_LEN || nb > SIMILAR_MAX_LEN)
		return cap + 1;
	if ((na > nb ? na - nb : nb - na) > cap)
		return cap + 1;
	for (size_t j = 0; j <= nb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t low;
		cur[0] = low = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t v = prev[j - 1] + cost;
			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
			if (v < low)
				low = v;
		}
		if (low > cap)
			return cap + 1;
		{
			size_t *t = prev2;
			prev2 = prev;
			prev = cur;
			cur = t;
		}
	}
	return prev[nb] > cap ? cap + 1 : prev[nb];
}

static int same_ignoring_case(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

long similar_best(const char *name, const char *const *cands, size_t n)
{
	size_t len = strlen(name), cap = len / 3, best_d = (size_t)-1;
	long best = -1;

	if (cap > 3)
		cap = 3;
	if (cap < 1)
		cap = 1;
	for (size_t i = 0; i < n; i++) {
		size_t d;
		if (!cands[i] || strcmp(cands[i], name) == 0)
			continue;
		d = same_ignoring_case(cands[i], name) ? 0 : similar_distance(name, cands[i], cap);
		if (d <= cap && d < best_d) {
			best_d = d;
			best = (long)i;
		}
	}
	return best;
}
