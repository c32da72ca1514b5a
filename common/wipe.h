/*
 * wipe.h: overwriting memory that held a secret before it is reused or
 * given back to malloc.
 */
#ifndef PR_WIPE_H
#define PR_WIPE_H

#include <stddef.h>

/* Overwrite n bytes at p (NULL: nothing) with zeros, in a way the compiler keeps. */
void wipe_mem(void *p, size_t n);

/* Overwrite a NUL-terminated string up to its NUL and free it; NULL is fine. */
void wipe_free(char *s);

#endif
