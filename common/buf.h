/*
 * buf.h: the one growable byte buffer.
 *
 * Invariants: `ptr` is never NULL and always NUL-terminated (an empty
 * buffer points at a shared static ""), `len` bytes are in use, and the
 * buffer never grows past `max` bytes of content. When an append fails
 * (out of memory or over `max`) the buffer frees itself and is left empty,
 * so a caller can never carry on with half of what it meant to write.
 */
#ifndef PR_BUF_H
#define PR_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef struct buf {
	char *ptr;
	size_t len;
	size_t cap;
	size_t max;
} buf;

extern char buf__empty[];

#define BUF_INIT {buf__empty, 0, 0, SIZE_MAX}

/* Set up an empty buffer that holds at most `max` bytes (SIZE_MAX: none). */
void buf_init(buf *b, size_t max);

/*
 * Make room for `extra` more bytes. Returns 0, PR_ENOMEM or PR_ELIMIT; on
 * failure the buffer is released.
 */
int buf_grow(buf *b, size_t extra);

/*
 * buf_grow for a size known in advance: when the buffer must grow, it is
 * allocated to exactly `extra` more bytes (and its NUL), not rounded up to
 * a power of two. Same return and failure contract as buf_grow.
 */
int buf_reserve(buf *b, size_t extra);

/* Append bytes; same return and failure contract as buf_grow. */
int buf_put(buf *b, const void *data, size_t len);
int buf_puts(buf *b, const char *s);
int buf_putc(buf *b, char c);
int buf_printf(buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_vprintf(buf *b, const char *fmt, va_list ap);

/* Empty the buffer, keeping its memory. */
void buf_reset(buf *b);

/* Free the contents; the buffer is empty and usable again (keeps `max`). */
void buf_release(buf *b);

/*
 * Hand the contents over: the caller owns the returned string (free()),
 * which is never NULL unless memory ran out; the buffer is left empty.
 */
char *buf_detach(buf *b, size_t *len_out);

#endif
