/*
 * buf.c: the growable byte buffer (see buf.h).
 */
#include "common/buf.h"
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char buf__empty[1];

void buf_init(buf *b, size_t max)
{
	b->ptr = buf__empty;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void buf_release(buf *b)
{
	if (b->cap)
		free(b->ptr);
	b->ptr = buf__empty;
	b->len = 0;
	b->cap = 0;
}

void buf_reset(buf *b)
{
	b->len = 0;
	/* An empty buffer's "" is shared by every thread: it is never written. */
	if (b->cap)
		b->ptr[0] = '\0';
}

/* Room for `extra` more bytes: to the next power of two, or to exactly that. */
static int grow(buf *b, size_t extra, int exact)
{
	size_t want, cap;
	char *p;

	if (extra > b->max || b->len > b->max - extra) {
		buf_release(b);
		return PR_ELIMIT;
	}
	want = b->len + extra + 1;
	if (want <= b->cap)
		return 0;
	cap = exact ? want : b->cap ? b->cap : 64;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	p = b->cap ? realloc(b->ptr, cap) : malloc(cap);
	if (!p) {
		buf_release(b);
		return PR_ENOMEM;
	}
	if (!b->cap)
		p[0] = '\0';
	b->ptr = p;
	b->cap = cap;
	return 0;
}

int buf_grow(buf *b, size_t extra)
{
	return grow(b, extra, 0);
}

int buf_reserve(buf *b, size_t extra)
{
	return grow(b, extra, 1);
}

int buf_put(buf *b, const void *data, size_t len)
{
	int err;

	if (len == 0)
		return 0;
	if ((err = buf_grow(b, len)) < 0)
		return err;
	memcpy(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
	return 0;
}

int buf_puts(buf *b, const char *s)
{
	return buf_put(b, s, strlen(s));
}

int buf_putc(buf *b, char c)
{
	return buf_put(b, &c, 1);
}

int buf_vprintf(buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n, err;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return PR_ERR;
	if ((err = buf_grow(b, (size_t)n)) < 0)
		return err;
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(buf *b, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return err;
}

char *buf_detach(buf *b, size_t *len_out)
{
	char *p;

	if (len_out)
		*len_out = b->len;
	if (b->cap) {
		p = b->ptr;
	} else {
		p = malloc(1);
		if (p)
			p[0] = '\0';
	}
	b->ptr = buf__empty;
	b->len = 0;
	b->cap = 0;
	return p;
}
