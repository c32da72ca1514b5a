/*
 * bench_flame.c: the differential flame graph of two big profiles.
 *
 * Generates, in memory, two folded profiles of 100,000 distinct stacks
 * each (18 frames deep, a binary call tree over 3,000 function names, one
 * stack in 97 three times heavier on the target side), then times in one
 * run:
 *   - parsing both with profreg's folded parser (the reference),
 *   - merging them into the call tree and rendering the whole HTML page
 *     (summary, differential flame graph, table).
 * Prints both times, their ratio and the page's size. Aim: under 1 s and
 * under 5 MB.
 *
 * usage: bench_flame [STACKS]
 *        bench_flame --write DIR [STACKS]   writes DIR/base.folded and
 *        DIR/target.folded (for tests/bench/diff.sh) and times nothing
 */
#define _POSIX_C_SOURCE 200809L
#include "pipeline/folded.h"
#include "reports/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEVELS 17

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU: the machine is shared */
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long long mixk(unsigned long long x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ULL;
	x ^= x >> 29;
	return x;
}

/* Stack k: main, then at level j the node (k >> (LEVELS - j)): all distinct. */
static int generate(buf *out, long n, int target)
{
	for (long k = 0; k < n; k++) {
		unsigned long long w = 1 + mixk((unsigned long long)k) % 1000;
		if (buf_puts(out, "main") < 0)
			return -1;
		for (int j = 1; j <= LEVELS; j++) {
			unsigned long long v = (unsigned long long)k >> (LEVELS - j);
			if (buf_printf(out, ";mod%02d.fn%llu", j, v % 3000) < 0)
				return -1;
		}
		if (target && k % 97 == 0)
			w *= 3;
		if (buf_printf(out, " %llu\n", w) < 0)
			return -1;
	}
	return 0;
}

/* Write `b` to DIR/NAME. */
static int write_to(const char *dir, const char *name, const buf *b)
{
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")))
		return -1;
	ok = fwrite(b->ptr, 1, b->len, f) == b->len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 2 && strcmp(argv[1], "--write") == 0 ? argv[2] : NULL;
	long n = argc > (dir ? 3 : 1) ? atol(argv[dir ? 3 : 1]) : 100000;
	buf base = BUF_INIT, target = BUF_INIT, html = BUF_INIT;
	profile *pb = NULL, *pt = NULL;
	pr_error err = PR_ERROR_INIT;
	profile_limits lim;
	report r;
	double t0, t1, t2, t3;
	int rc = 1;

	if (n <= 0 || n > (1L << LEVELS)) {
		fprintf(stderr, "bench_flame: STACKS must be 1..%ld\n", 1L << LEVELS);
		return 2;
	}
	memset(&r, 0, sizeof(r));
	profile_limits_default(&lim);
	if (generate(&base, n, 0) < 0 || generate(&target, n, 1) < 0) {
		fprintf(stderr, "bench_flame: out of memory\n");
		goto out;
	}
	if (dir) {
		if (write_to(dir, "base.folded", &base) < 0 ||
		    write_to(dir, "target.folded", &target) < 0) {
			fprintf(stderr, "bench_flame: cannot write in '%s'\n", dir);
			goto out;
		}
		rc = 0;
		goto out;
	}
	t0 = now();
	if (folded_parse(&pb, (const uint8_t *)base.ptr, base.len, "base", &lim, &err) < 0 ||
	    folded_parse(&pt, (const uint8_t *)target.ptr, target.len, "target", &lim, &err) < 0)
		goto fail;
	t1 = now();
	if (report_init(&r, "diff", &err) < 0 || !(r.flame = malloc(sizeof(*r.flame))))
		goto fail;
	r.title = strdup("bench: base vs target");
	r.base_desc = strdup("base.folded");
	r.target_desc = strdup("target.folded");
	r.base_ncaps = r.target_ncaps = 1;
	if (flame_tree_init(r.flame, &err) < 0) {
		free(r.flame);
		r.flame = NULL;
		goto fail;
	}
	if (flame_tree_add_profile(r.flame, FLAME_BASE, pb, 0, 1, &err) < 0 ||
	    flame_tree_add_profile(r.flame, FLAME_CUR, pt, 0, 1, &err) < 0)
		goto fail;
	t2 = now();
	if (report_html(&html, &r, &err) < 0)
		goto fail;
	t3 = now();
	printf("differential flame graph: two folded profiles of %ld distinct stacks"
	       " (%.1f MB each), %zu tree nodes\n",
	       n, (double)base.len / 1e6, r.flame->n);
	printf("  parse both (reference)      %.3f s\n", t1 - t0);
	printf("  merge into the call tree    %.3f s\n", t2 - t1);
	printf("  render the HTML page        %.3f s\n", t3 - t2);
	printf("  tree + HTML                 %.3f s (%.2fx the parse)  aim < 1 s\n", t3 - t1,
	       (t3 - t1) / (t1 - t0));
	printf("  end to end (parse + tree + HTML) %.3f s\n", t3 - t0);
	printf("  HTML size                   %.2f MB  aim < 5 MB\n", (double)html.len / 1e6);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bench_flame: %s\n", err.msg);
out:
	report_release(&r);
	profile_free(pb);
	profile_free(pt);
	buf_release(&base);
	buf_release(&target);
	buf_release(&html);
	return rc;
}
