/*
 * fuzz_perf.c: libFuzzer target for the perf script parser.
 *
 * Whatever the bytes, perf_parse must either fail with a message that
 * names the input and a line (or says it is a perf.data file), or return
 * a profile whose every stack has the command at its root, stays within
 * the depth limit, refers to interned functions, counts 1 an event (and
 * its period, never negative, in a second column "cpu" when printed), and
 * holds frame names that went through stackcollapse-perf.pl's tidying
 * (no ';', no quotes).
 *
 * Seeds (tests/fuzz/corpus/perf/): the first events of the two real
 * captures in tests/data/perf/, tests/data/perf/variants.perf, and small
 * hand-written files for CRLF, inline chains, a header without frames,
 * a second event type, and a frame before any header.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/folded.h"
#include "pipeline/perf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	profile_limits lim;
	pr_error err = PR_ERROR_INIT;
	profile *p = NULL;
	bool *is_comm = NULL;
	int rc;

	profile_limits_default(&lim);
	/* Small limits, so the fuzzer reaches them with small inputs. */
	lim.max_depth = 64;
	lim.max_samples = 1000;
	lim.max_string_len = 256;
	(void)perf_sniff(data, size);
	(void)folded_sniff(data, size);
	rc = perf_parse(&p, data, size, "fuzz.perf", &lim, &err);
	if (rc < 0) {
		if (p || err.code != rc || !strstr(err.msg, "'fuzz.perf'") ||
		    (!strstr(err.msg, "line ") && !strstr(err.msg, "perf.data")))
			abort();
		if (rc != PR_EDATA && rc != PR_ELIMIT && rc != PR_ENOMEM)
			abort();
		return 0;
	}
	if (!p || p->nvalue_types < 1 || p->nvalue_types > 2 ||
	    strcmp(p->value_types[0].type, "samples") ||
	    (p->nvalue_types == 2 && strcmp(p->value_types[1].type, "cpu")))
		abort();
	if (p->nfuncs && !(is_comm = calloc(p->nfuncs, sizeof(*is_comm))))
		abort();
	for (size_t i = 0; i < p->nsamples; i++) {
		const uint32_t *st = p->frames + p->stack_off[i];
		const int64_t *v = p->values + i * p->nvalue_types;

		if (p->stack_len[i] == 0 || p->stack_len[i] > lim.max_depth || v[0] != 1 ||
		    (p->nvalue_types == 2 && v[1] < 0))
			abort();
		for (uint32_t k = 0; k < p->stack_len[i]; k++)
			if (st[k] >= p->nfuncs)
				abort();
		is_comm[st[0]] = true;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		const uint32_t *st = p->frames + p->stack_off[i];

		for (uint32_t k = 1; k < p->stack_len[i]; k++) {
			const char *name = p->funcs[st[k]].name;

			/* A frame may share its name with a command; skip those. */
			if (is_comm[st[k]])
				continue;
			if (strchr(name, ';') || strchr(name, '"') || strchr(name, '\''))
				abort();
		}
	}
	{
		profile_summary s;

		if (profile_summarize(&s, p, 0, &err) == 0) {
			if (s.total != (int64_t)p->nsamples)
				abort();
			for (size_t r = 0; r < s.nrows; r++)
				if (s.rows[r].self > s.rows[r].total || s.rows[r].total > s.total)
					abort();
			profile_summary_release(&s);
		}
	}
	free(is_comm);
	profile_free(p);
	return 0;
}
