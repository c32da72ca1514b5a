/*
 * fuzz_pyroscope.c: libFuzzer target for Pyroscope's answer to a Series
 * query (pyroscope_series_values): a SeriesResponse protobuf-c decodes
 * (pipeline/pyroscope.proto), from which the distinct values of one
 * label are kept.
 *
 * The input is the answer's body; the label asked for is "release".
 * A failure must be PR_EDATA or PR_ELIMIT with a message that starts
 * with the server's name, and no values; a success gives at most
 * PYROSCOPE_MAX_VALUES distinct values, each 1 to 256 bytes of text with
 * no control character, quote or backslash, but for a last "" (series
 * without the label beside others with it).
 *
 * Seeds (tests/fuzz/corpus/pyroscope/), written by hand: a response with
 * two series of two releases and another label, one with the same
 * release twice, one whose values break the text rule, one with 17
 * releases (one past the cap), an empty response and a truncated one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pyroscope.h"

#define SHOWN "https://pyroscope:4040"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char **values = (char **)1;
	size_t n = 99;
	pr_error err = PR_ERROR_INIT;
	int rc = pyroscope_series_values(&values, &n, data, size, "release", SHOWN, &err);

	if (rc < 0) {
		if ((rc != PR_EDATA && rc != PR_ELIMIT) || err.code != rc || values || n ||
		    strncmp(err.msg, "pyroscope '" SHOWN "': ", strlen(SHOWN) + 14) != 0)
			abort();
		return 0;
	}
	if (n > PYROSCOPE_MAX_VALUES || !values)
		abort();
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(values[i]);
		/* "" (the series without the label) only last, after a value. */
		if ((len == 0 && (i + 1 != n || n < 2)) || len > 256 ||
		    strpbrk(values[i], "\"\\\x7f"))
			abort();
		for (const char *p = values[i]; *p; p++)
			if ((unsigned char)*p < 0x20)
				abort();
		for (size_t k = 0; k < i; k++)
			if (strcmp(values[k], values[i]) == 0)
				abort();
	}
	for (size_t i = 0; i < n; i++)
		free(values[i]);
	free(values);
	return 0;
}
