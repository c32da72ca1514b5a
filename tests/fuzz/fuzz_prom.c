/*
 * fuzz_prom.c: libFuzzer target for the parser of Prometheus instant
 * query answers (prom_parse_vector), as the escalate job reads them.
 *
 * The input is the answer's body, parsed with max_series 64 and keyed by
 * "instance". A failure must be PR_EDATA or PR_ELIMIT with one line that
 * starts with the query's name and leaves the vector empty; a success
 * must give at most 64 samples with distinct keys of 1..PROM_KEY_MAX
 * bytes, finite values and counts that add up to no more series than the
 * answer holds.
 *
 * Seeds (tests/fuzz/corpus/prom/): the answers of tests/unit/test_escalate.c:
 * a vector with duplicate, unlabelled and non-finite series, an empty
 * vector, an error answer with control characters, a matrix, a value
 * that is not a number, and one series too many.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/prom.h"

#define WHAT "signal 'fuzz'"
#define PREFIX "cannot read prometheus answer to " WHAT ": "
#define MAX_SERIES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	prom_vector v;
	pr_error err = PR_ERROR_INIT;
	int rc = prom_parse_vector(&v, (const char *)data, size, "instance", MAX_SERIES, WHAT,
				   &err);

	if (rc < 0) {
		if ((rc != PR_EDATA && rc != PR_ELIMIT) || err.code != rc || v.n != 0 || v.v ||
		    strncmp(err.msg, PREFIX, strlen(PREFIX)) != 0 || strchr(err.msg, '\n') ||
		    strchr(err.msg, '\r'))
			abort();
	} else {
		if (v.n > MAX_SERIES || v.n + v.unlabelled + v.nonfinite > size)
			abort();
		for (size_t i = 0; i < v.n; i++) {
			size_t n = strlen(v.v[i].key);
			if (n == 0 || n > PROM_KEY_MAX || v.v[i].value != v.v[i].value ||
			    v.v[i].value - v.v[i].value != 0)
				abort();
			if (prom_vector_find(&v, v.v[i].key) != &v.v[i])
				abort();
		}
	}
	prom_vector_release(&v);
	return 0;
}
