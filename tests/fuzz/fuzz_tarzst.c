/*
 * fuzz_tarzst.c: libFuzzer target for reading .tar.zst archives from
 * outside (tarzst_read), as `profreg snapshot` imports them.
 *
 * The input is read with a member cap of 64 KiB and a total cap of
 * 256 KiB. Every member visited must have a plain relative name
 * (tarzst_path_plain) and content within the caps. A failure must be
 * PR_EDATA or PR_ELIMIT with a message starting "cannot read
 * 'fuzz.tar.zst': " (member names are quoted raw: the command line
 * escapes what it prints).
 *
 * Seeds (tests/fuzz/corpus/tarzst/), written with Python's tarfile and
 * zstd(1): an archive of two files in a folder, an empty one, one naming
 * "../escape", one with a symbolic link, one member name with a line
 * break, a plain (uncompressed) tar, a gzipped tar and a cut-short
 * archive.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/tarzst.h"

#define NAME "fuzz.tar.zst"
#define PREFIX "cannot read '" NAME "': "
#define MEMBER_MAX (64u << 10)
#define TOTAL_MAX (256u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int visit(void *arg, const char *path, const void *content, size_t len, pr_error *err)
{
	size_t *total = arg;

	(void)err;
	if (!tarzst_path_plain(path) || len > MEMBER_MAX || (len && !content))
		abort();
	*total += len;
	if (*total > TOTAL_MAX)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pr_error err = PR_ERROR_INIT;
	size_t total = 0;
	int rc = tarzst_read(data, size, NAME, MEMBER_MAX, TOTAL_MAX, visit, &total, &err);

	if (rc < 0) {
		if ((rc != PR_EDATA && rc != PR_ELIMIT) || err.code != rc ||
		    strncmp(err.msg, PREFIX, strlen(PREFIX)) != 0)
			abort();
	} else if (rc != 0) {
		abort();
	}
	return 0;
}
