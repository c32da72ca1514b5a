/*
 * fuzz_v8heap.c: libFuzzer target for the V8 sampling heap profile parser.
 *
 * Whatever the bytes, v8heap_parse must either fail with one line that
 * names the input, or return a heap profile whose stacks refer to
 * interned functions within the depth limit and whose summary adds up:
 * the parser refuses a total over 64 bits, so summarising cannot fail.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/v8heap.h"

#define NAME "fuzz.heapprofile"

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
	(void)v8heap_sniff(data, size);
	rc = v8heap_parse(&p, data, size, NAME, &lim, &err);
	if (rc < 0) {
		if (p || err.code != rc || strncmp(err.msg, "cannot parse '" NAME "': ",
						   strlen(NAME) + 16) != 0 ||
		    strchr(err.msg, '\n'))
			abort();
		return 0;
	}
	if (!p || p->format != PROFILE_FMT_V8HEAP || p->nvalue_types != 1 ||
	    strcmp(p->value_types[p->primary].type, "inuse_space") != 0 ||
	    p->nsamples > lim.max_samples)
		abort();
	for (size_t i = 0; i < p->nsamples; i++) {
		if (p->stack_len[i] > lim.max_depth || p->values[i] <= 0)
			abort();
		for (uint32_t k = 0; k < p->stack_len[i]; k++)
			if (p->frames[p->stack_off[i] + k] >= p->nfuncs)
				abort();
	}
	if (profile_summarize(&s, p, 0, &err) < 0)
		abort();
	for (size_t r = 0; r < s.nrows; r++)
		if (s.rows[r].self > s.rows[r].total || s.rows[r].total > s.total)
			abort();
	profile_summary_release(&s);
	profile_free(p);
	return 0;
}
