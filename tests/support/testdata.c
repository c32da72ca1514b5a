/*
 * testdata.c: reading a file of tests/data/ (see testdata.h).
 */
#include "tests/support/testdata.h"
#include "common/fileio.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

void testdata_read(buf *b, const char *rel)
{
	const char *dir = getenv("PROFREG_TEST_DATA");
	char path[4096];
	pr_error err = PR_ERROR_INIT;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", rel);
	if (fileio_read(b, path, 64u << 20, &err) < 0)
		fail_msg("%s", err.msg);
}
