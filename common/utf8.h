/*
 * utf8.h: checking UTF-8, for text that comes from outside (profiles,
 * /proc, command lines) on its way into PostgreSQL, JSON and pages,
 * which all refuse or mangle invalid sequences.
 */
#ifndef PR_UTF8_H
#define PR_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The length (1 to 4) of the valid UTF-8 sequence that starts s[0..n),
 * or 0 when it is not one: a stray continuation byte, a sequence cut
 * short, an overlong form, a surrogate or a value past U+10FFFF. n must
 * be at least 1.
 */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* True when s[0..n) is valid UTF-8 without NUL (which no C string or text value holds). */
bool utf8_valid(const char *s, size_t n);

#endif
