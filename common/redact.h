/*
 * redact.h: excerpts of untrusted text for error messages. A profile's
 * lines, a sidecar's fields and a peer's error body may hold payment
 * data, and an error message is copied to places other people read
 * (stderr and cron mail, runs.detail, reports, CI summaries, the API):
 * an excerpt keeps the words that name what was wrong and says only how
 * long the rest was.
 */
#ifndef PR_REDACT_H
#define PR_REDACT_H

#include <stddef.h>

/* The longest word an excerpt keeps as it is; longer ones are replaced. */
#define REDACT_WORD_MAX 32

/*
 * An excerpt of s[0..n) into out (`size` bytes, NUL-terminated), for
 * quoting untrusted input in a message. Words are split at spaces, tabs
 * and line breaks, and written one space apart. A word is kept only when it
 * cannot carry a number or a secret: 1 to REDACT_WORD_MAX bytes of
 * ASCII letters and "-_.,;/()" (and ':' as its last byte), not after a
 * word that names a secret (password, token, card, key, ...). Each run
 * of other words becomes "<N bytes>" (N: its length in the input). No
 * control byte, quote or non-ASCII byte is ever copied. When out is
 * full the excerpt ends with "..."; a `size` below 16 may hold only
 * that. s may be NULL when n is 0. Returns out.
 */
const char *redact_excerpt(char *out, size_t size, const char *s, size_t n);

/*
 * Each card number in s[0..n) cut to one '#', in place; the new length.
 * A card number is a run of 13 to 19 digits that passes Luhn's check and
 * is not part of a hex number ("0x" before it, or a hex letter next to
 * it in a word of hex digits only: zero-padded addresses and hashes
 * stay, "processCard4111111111111111" is "processCard#"), or
 * the same written in groups of 3 to 6 digits with one space, dash, dot,
 * underscore or slash between them, the same all along ("4111 1111 1111
 * 1111", "3782-822463-10005", "4111_1111_1111_1111").
 */
size_t redact_card_numbers(char *s, size_t n);

/*
 * redact_card_numbers, and then each e-mail address, IBAN and AWS access
 * key id in s[0..n) cut to one '#' too, in place; the new length. For
 * names a program chose (functions, files, threads), which reach the
 * index, reports, exports and pages. An e-mail address is a local part
 * of letters, digits and "_.%+-" (the whole of it), '@', and a domain of two or more
 * labels of letters, digits and '-', each with a letter, the last all
 * letters ("jane.doe@example.com"; not "memcpy@GLIBC_2.14" nor a Go
 * module's "bar@v1.2.3"). An IBAN is two capital letters, two digits
 * and 11 to 30 capitals or digits, alone in its word, that pass the
 * ISO 13616 check (mod 97 is 1). An AWS key id is "AKIA" or "ASIA" and
 * 16 capitals or digits, alone in its word.
 */
size_t redact_names(char *s, size_t n);

/*
 * A copy of text `s` for people to read (a commit's subject in a report
 * or a CI summary), with what could be payment data or a secret
 * replaced: card numbers by '#' (redact_card_numbers), e-mail addresses,
 * and the value after a word that names a secret ("token=abcd1234",
 * "password: hunter2") by "<N bytes>". Everything else is kept as it
 * is. The caller frees it; NULL when out of memory.
 */
char *redact_message(const char *s);

#endif
