/*
 * utf8.h: checking UTF-8, for text that comes from outside (profiles,
 * /proc, command lines) on its way into PostgreSQL, JSON and pages,
 * which all refuse or mangle invalid sequences.
 */
#ifndef PR_UTF8_H
#define PR_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The length (1 to 4) of the valid UTF-8 sequence that starts s[0..n),
 * or 0 when it is not one: a stray continuation byte, a sequence cut
 * short, an overlong form, a surrogate or a value past U+10FFFF. n must
 * be at least 1.
 */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* True when s[0..n) is valid UTF-8 without NUL (which no C string or text value holds). */
bool utf8_valid(const char *s, size_t n);

/*
 * The scalar value of the UTF-8 sequence at `s` into *cp, and its length;
 * 0 when `s` does not start a valid sequence (overlong forms, surrogates
 * and values past U+10FFFF are not valid). Never reads past a NUL.
 */
size_t utf8_decode(const unsigned char *s, uint32_t *cp);

/*
 * True for a character a terminal, a log viewer or a browser acts on
 * rather than shows: C0 and C1 controls, DEL, the bidirectional marks,
 * embeddings, overrides and isolates (which reverse the text after them),
 * and the line and paragraph separators. Whoever shows a name from a
 * profile writes these as escapes.
 */
bool utf8_hidden(uint32_t cp);

#endif
