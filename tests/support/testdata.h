/*
 * testdata.h: reading a file of tests/data/ (see its README) from a test.
 */
#ifndef PR_TESTDATA_H
#define PR_TESTDATA_H

#include "common/buf.h"

/*
 * Read tests/data/`rel` (under $PROFREG_TEST_DATA when set) into b, at
 * most 64 MiB; the test fails with the reason when it cannot be read.
 */
void testdata_read(buf *b, const char *rel);

#endif
