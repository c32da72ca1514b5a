/*
 * fuzz_pprof.c: the pprof path from raw bytes to a summary.
 *
 * gzip input is decompressed first (bounded, as format_parse does), then
 * sniffed, parsed and summarised on every value column. A failure must be
 * PR_EDATA, PR_ELIMIT or PR_ENOMEM with a message naming the input and no
 * profile left behind; a success must give a model whose stacks and
 * values are consistent. Limits are small so that inputs stay fast.
 *
 * Seeds (tests/fuzz/corpus/pprof/): go-cpu.pb and go-heap.pb (the real Go
 * profiles of tests/data/pprof, decompressed), go-cpu.pb.gz (as
 * written), and small profiles laid out like tests/unit/test_pprof.c's,
 * written by tests/data/gen/pprof/seeds/seeds.c: inline.pb (an inlined
 * location), unsymbolized.pb (locations without lines, with and without a
 * mapping), sparse-ids.pb (ids that are not 1..n), labels.pb (samples with
 * labels) and empty.pb (no samples).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/gunzip.h"
#include "pipeline/pprof.h"

#define NAME "fuzz.pb"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(int rc, const pr_error *err, const profile *p)
{
	if (p || err->code != rc || !strstr(err->msg, "'" NAME "'"))
		abort();
	if (rc != PR_EDATA && rc != PR_ELIMIT && rc != PR_ENOMEM)
		abort();
}

static void check_profile(profile *p)
{
	size_t frames = 0;

	if (p->nvalue_types == 0 || p->primary >= p->nvalue_types)
		abort();
	for (size_t i = 0; i < p->nsamples; i++) {
		if (p->stack_off[i] != frames || p->stack_len[i] > p->limits.max_depth)
			abort();
		frames += p->stack_len[i];
		for (size_t k = 0; k < p->nvalue_types; k++)
			if (p->values[i * p->nvalue_types + k] < 0)
				abort();
	}
	if (frames != p->nframes)
		abort();
	for (size_t i = 0; i < p->nframes; i++)
		if (p->frames[i] >= p->nfuncs)
			abort();
	for (uint32_t f = 0; f < p->nfuncs; f++)
		/* Repairing invalid UTF-8 can triple a name, never more. */
		if (!p->funcs[f].name[0] ||
		    strlen(p->funcs[f].name) > 3 * (size_t)p->limits.max_string_len + 32)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	profile_limits lim;
	pr_error err = PR_ERROR_INIT;
	buf raw = BUF_INIT;
	profile *p = NULL;
	int rc;

	profile_limits_default(&lim);
	lim.max_decompressed_bytes = 4u << 20;
	lim.max_samples = 100000;
	lim.max_depth = 256;
	lim.max_string_len = 1024;

	if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		rc = gunzip_bounded(&raw, data, size, lim.max_decompressed_bytes, NAME, &err);
		if (rc < 0) {
			if ((rc != PR_EDATA && rc != PR_ELIMIT) || raw.len != 0 ||
			    !strstr(err.msg, "'" NAME "'"))
				abort();
			return 0;
		}
		if (raw.len > lim.max_decompressed_bytes)
			abort();
		data = (const uint8_t *)raw.ptr;
		size = raw.len;
	}
	(void)pprof_sniff(data, size);
	rc = pprof_parse(&p, data, size, NAME, &lim, &err);
	if (rc < 0) {
		check_failure(rc, &err, p);
	} else {
		check_profile(p);
		profile_pick_primary(p, NULL);
		for (size_t col = 0; col < p->nvalue_types; col++) {
			profile_summary s;
			pr_error serr = PR_ERROR_INIT;
			/* Overflowing sums are bad input too, never a crash. */
			if (profile_summarize(&s, p, col, &serr) == 0) {
				for (size_t i = 0; i < s.nrows; i++)
					if (s.rows[i].self > s.rows[i].total ||
					    s.rows[i].total > s.total)
						abort();
				profile_summary_release(&s);
			} else if (serr.code != PR_EDATA) {
				abort();
			}
		}
	}
	profile_free(p);
	buf_release(&raw);
	return 0;
}
