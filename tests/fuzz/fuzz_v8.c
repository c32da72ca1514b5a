/*
 * fuzz_v8.c: libFuzzer target for the V8 .cpuprofile parser.
 *
 * Whatever the bytes, v8_parse must either fail with a message that names
 * the input, or return a profile whose stacks refer to interned functions
 * and whose summaries add up.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/v8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	(void)v8_sniff(data, size);
	rc = v8_parse(&p, data, size, "fuzz.cpuprofile", &lim, &err);
	if (rc < 0) {
		if (p || err.code != rc || !strstr(err.msg, "'fuzz.cpuprofile'"))
			abort();
		return 0;
	}
	if (!p || p->nvalue_types != 2)
		abort();
	for (size_t i = 0; i < p->nsamples; i++) {
		if (p->stack_len[i] > lim.max_depth)
			abort();
		for (uint32_t k = 0; k < p->stack_len[i]; k++)
			if (p->frames[p->stack_off[i] + k] >= p->nfuncs)
				abort();
	}
	for (size_t col = 0; col < 2; col++) {
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
