/*
 * fuzz_format.c: libFuzzer target for detection and dispatch, the path
 * every file of unknown format takes (format_parse with
 * PROFILE_FMT_AUTO): gunzip, the sniffers in their order, the refusals
 * that name a known look-alike, then whichever parser detection chose.
 *
 * Whatever the bytes, it must either fail with an error that names the
 * input and no profile, or return a profile whose stacks refer to
 * interned functions and stay within the depth limit, and whose type
 * guess, if any, picks a value column it has.
 *
 * Seeds (tests/fuzz/corpus/format/): one small input of each format
 * from the other targets' corpora, and the first bytes of each look-alike
 * of tests/unit/test_format.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	profile_limits lim;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	int rc;

	profile_limits_default(&lim);
	/* Small limits, so the fuzzer reaches them with small inputs. */
	lim.max_input_bytes = 1 << 20;
	lim.max_decompressed_bytes = 4 << 20;
	lim.max_depth = 64;
	lim.max_samples = 1000;
	lim.max_string_len = 256;
	rc = format_parse(&p, data, size, PROFILE_FMT_AUTO, "fuzz.in", &lim, &err);
	if (rc < 0) {
		if (p || err.code != rc || !strstr(err.msg, "'fuzz.in'"))
			abort();
		return 0;
	}
	if (!p)
		abort();
	for (size_t i = 0; i < p->nsamples; i++) {
		if (p->stack_len[i] > lim.max_depth)
			abort();
		for (uint32_t k = 0; k < p->stack_len[i]; k++)
			if (p->frames[p->stack_off[i] + k] >= p->nfuncs)
				abort();
	}
	if (profile_pick_primary(p, NULL) && p->primary >= p->nvalue_types && p->nvalue_types)
		abort();
	profile_free(p);
	return 0;
}
