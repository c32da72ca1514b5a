/*
 * fuzz_parca.c: libFuzzer target for Parca's answer to a merge query
 * (parca_answer_parse): the gRPC-Web frames, the trailer's grpc-status
 * and grpc-message, and the QueryResponse protobuf-c decodes from the
 * data frame (pipeline/parca.proto).
 *
 * The input is the body of a 200 answer, read with a cap of 64 KiB.
 * A failure must be PR_EDATA, PR_ELIMIT, PR_EIO (out->retry set: gRPC
 * UNAVAILABLE or RESOURCE_EXHAUSTED), PR_EREFUSED or PR_EUSAGE, with a
 * message that starts with the server's name and holds only printable
 * ASCII, and no body; a success is either out->empty or pprof bytes of
 * 1 to 64 KiB that lie inside the input.
 *
 * Seeds (tests/fuzz/corpus/parca/), written by hand: an answer holding
 * a gzipped pprof profile (tests/data/pprof/go-cpu.pb.gz) and status 0,
 * an empty pprof report, a QueryResponse with no report, status 14 with
 * a message, a trailer with no status, and a data frame cut short.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/parca.h"

#define SHOWN "https://parca:7070"
#define MAX (64u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	source_fetched f;
	pr_error err = PR_ERROR_INIT;
	int rc;

	source_fetched_init(&f);
	rc = parca_answer_parse(&f, data, size, MAX, SHOWN, NULL, NULL, &err);
	if (rc < 0) {
		if (rc != PR_EDATA && rc != PR_ELIMIT && rc != PR_EIO && rc != PR_EREFUSED &&
		    rc != PR_EUSAGE)
			abort();
		if (err.code != rc || f.body.len || (rc == PR_EIO) != f.retry ||
		    strncmp(err.msg, "parca '" SHOWN "': ", strlen(SHOWN) + 10) != 0)
			abort();
		for (const char *p = err.msg; *p; p++)
			if (*p < 0x20 || *p > 0x7e)
				abort();
	} else if (f.empty) {
		if (f.body.len)
			abort();
	} else {
		/* The bytes are the input's own: find them in it. */
		if (f.body.len == 0 || f.body.len > MAX || f.body.len > size)
			abort();
		int inside = 0;
		for (size_t i = 0; i + f.body.len <= size && !inside; i++)
			inside = memcmp(data + i, f.body.ptr, f.body.len) == 0;
		if (!inside)
			abort();
	}
	source_fetched_release(&f);
	return 0;
}
