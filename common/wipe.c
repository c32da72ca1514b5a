/*
 * wipe.c: overwriting secrets (see wipe.h).
 */
#include "common/wipe.h"

#include <stdlib.h>
#include <string.h>

void wipe_mem(void *p, size_t n)
{
	/* volatile: the compiler may not drop stores to memory about to be freed. */
	for (volatile char *w = p; w && n; n--)
		*w++ = 0;
}

void wipe_free(char *s)
{
	if (!s)
		return;
	wipe_mem(s, strlen(s));
	free(s);
}
