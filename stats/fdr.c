/*
 * fdr.c: Benjamini-Hochberg q-values.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "stats/fdr.h"

typedef struct ranked_p {
	double p;
	size_t at; /* index in the caller's array */
} ranked_p;

/* Ascending p; equal p keep their input order so the result is stable. */
static int ranked_p_cmp(const void *a, const void *b)
{
	const ranked_p *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

int stats_bh_qvalues(const double *p, size_t n, double *q)
{
	ranked_p *r = NULL;
	double run = 1;

	if (n == 0)
		return 0;
	if (!p || !q)
		return STATS_EARG;
	for (size_t i = 0; i < n; i++)
		if (!isnan(p[i]) && !(p[i] >= 0 && p[i] <= 1))
			return STATS_EARG;
	if (n > SIZE_MAX / sizeof(*r) || !(r = malloc(n * sizeof(*r))))
		return STATS_ENOMEM;
	for (size_t i = 0; i < n; i++)
		r[i] = (ranked_p){isnan(p[i]) ? 1.0 : p[i], i};
	qsort(r, n, sizeof(*r), ranked_p_cmp);
	/* Walk from the largest p down, keeping the running minimum. */
	for (size_t i = n; i-- > 0;) {
		/* n / i * p, in R's order of operations */
		double adj = (double)n / (double)(i + 1) * r[i].p;

		if (adj < run)
			run = adj;
		q[r[i].at] = run;
	}
	free(r);
	return 0;
}
