/*
 * fuzz_gunzip.c: libFuzzer target for bounded gzip decompression
 * (gunzip_bounded), the first step of every gzipped profile, HTTP body
 * and Parca answer.
 *
 * The input is decompressed twice, with limits of 64 KiB and 1 MiB. A
 * failure must be PR_EDATA or PR_ELIMIT with a message naming the input,
 * and leave the output empty. The two runs must agree: what fits the
 * small limit decompresses to the same bytes under the large one,
 * PR_ELIMIT under the small limit is never a success of at most 64 KiB
 * under the large one, and PR_EDATA is PR_EDATA under both.
 *
 * Seeds (tests/fuzz/corpus/gunzip/): go-cpu.pb.gz (tests/data/pprof),
 * and, written with gzip(1): two concatenated members, a member cut
 * short, a member followed by junk, a stored (level 0) member and a
 * member of 200 KiB of zeros (over the small limit).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/gunzip.h"

#define NAME "fuzz.gz"
#define SMALL (64u << 10)
#define LARGE (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run(buf *out, const uint8_t *data, size_t size, size_t max)
{
	pr_error err = PR_ERROR_INIT;
	int rc = gunzip_bounded(out, data, size, max, NAME, &err);

	if (rc < 0) {
		if ((rc != PR_EDATA && rc != PR_ELIMIT) || err.code != rc || out->len != 0 ||
		    !strstr(err.msg, "'" NAME "'") || strchr(err.msg, '\n'))
			abort();
	} else if (out->len > max) {
		abort();
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	buf small = BUF_INIT, large = BUF_INIT;
	int rs = run(&small, data, size, SMALL);
	int rl = run(&large, data, size, LARGE);

	if (rs == 0 && (rl != 0 || small.len != large.len ||
			(small.len && memcmp(small.ptr, large.ptr, small.len) != 0)))
		abort();
	if (rs == PR_ELIMIT && rl == 0 && large.len <= SMALL)
		abort();
	if (rs == PR_EDATA && rl != PR_EDATA)
		abort();
	buf_release(&small);
	buf_release(&large);
	return 0;
}
