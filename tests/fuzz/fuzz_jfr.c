/*
 * fuzz_jfr.c: libFuzzer target for the JFR parser.
 *
 * Whatever the bytes, jfr_parse must either fail with one line that names
 * the input, or return a profile of one or two columns (samples/count,
 * alloc_space/bytes) whose stacks refer to interned functions within the
 * depth and sample limits, and whose summaries add up.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/jfr.h"

#define NAME "fuzz.jfr"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	profile_limits lim;
	pr_error err = PR_ERROR_INIT;
	profile_summary s;
	profile *p = NULL;
	int rc;

	profile_limits_default(&lim);
	/* Small limits, so the fuzzer reaches them with small inputs. */
	lim.max_depth = 64;
	lim.max_samples = 1000;
	lim.max_string_len = 256;
	(void)jfr_sniff(data, size);
	rc = jfr_parse(&p, data, size, NAME, &lim, &err);
	if (rc < 0) {
		if (p || err.code != rc || strncmp(err.msg, "cannot parse '" NAME "': ",
						   strlen(NAME) + 16) != 0 ||
		    strchr(err.msg, '\n'))
			abort();
		return 0;
	}
	if (!p || p->format != PROFILE_FMT_JFR || p->nvalue_types < 1 || p->nvalue_types > 2 ||
	    p->nsamples > lim.max_samples)
		abort();
	for (size_t i = 0; i < p->nsamples; i++) {
		if (p->stack_len[i] > lim.max_depth)
			abort();
		for (uint32_t k = 0; k < p->stack_len[i]; k++)
			if (p->frames[p->stack_off[i] + k] >= p->nfuncs)
				abort();
	}
	for (size_t c = 0; c < p->nvalue_types; c++) {
		if (profile_summarize(&s, p, c, &err) < 0)
			abort();
		for (size_t r = 0; r < s.nrows; r++)
			if (s.rows[r].self > s.rows[r].total || s.rows[r].total > s.total)
				abort();
		profile_summary_release(&s);
	}
	profile_free(p);
	return 0;
}
