/*
 * fuzz_speedscope.c: libFuzzer target for the speedscope parser.
 *
 * Whatever the bytes, speedscope_parse must either fail with one line that
 * names the input, or return a profile whose value columns are those the
 * parser documents, whose stacks refer to interned functions within the
 * depth limit, and whose summaries add up.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/speedscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* samples/count, cpu/nanoseconds, or both in that order. */
static int columns_ok(const profile *p)
{
	const profile_value_type *v = p->value_types;

	if (p->nvalue_types == 1)
		return (!strcmp(v[0].type, "samples") && !strcmp(v[0].unit, "count")) ||
		       (!strcmp(v[0].type, "cpu") && !strcmp(v[0].unit, "nanoseconds"));
	return p->nvalue_types == 2 && !strcmp(v[0].type, "samples") &&
	       !strcmp(v[1].type, "cpu") && !strcmp(v[1].unit, "nanoseconds");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	profile_limits lim;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	int rc;

	profile_limits_default(&lim);
	/* Small limits, so the fuzzer reaches them with small inputs. */
	lim.max_depth = 64;
	lim.max_samples = 1000;
	lim.max_string_len = 256;
	(void)speedscope_sniff(data, size);
	rc = speedscope_parse(&p, data, size, "fuzz.speedscope.json", &lim, &err);
	if (rc < 0) {
		if (p || err.code != rc || !strstr(err.msg, "'fuzz.speedscope.json'") ||
		    strchr(err.msg, '\n'))
			abort();
		return 0;
	}
	if (!p || !columns_ok(p) || p->duration_ns < 0)
		abort();
	for (size_t i = 0; i < p->nsamples; i++) {
		if (p->stack_len[i] > lim.max_depth)
			abort();
		for (uint32_t k = 0; k < p->stack_len[i]; k++)
			if (p->frames[p->stack_off[i] + k] >= p->nfuncs)
				abort();
		for (size_t c = 0; c < p->nvalue_types; c++)
			if (p->values[i * p->nvalue_types + c] < 0)
				abort();
	}
	for (size_t col = 0; col < p->nvalue_types; col++) {
		profile_summary s;

		if (profile_summarize(&s, p, col, &err) == 0) {
			for (size_t r = 0; r < s.nrows; r++)
				if (s.rows[r].self > s.rows[r].total || s.rows[r].total > s.total)
					abort();
			profile_summary_release(&s);
		}
	}
	profile_free(p);
	return 0;
}
