/*
 * redact.c: excerpts of untrusted text for error messages (see redact.h).
 *
 * The rule keeps a word rather than judging a secret: a secret cannot be
 * recognised, but the words an operator needs from a bad line (a unit
 * "nanosecondz", a type "cpu-time", a stray "samples") are short runs of
 * letters, and what payment data looks like is not:
 *  - digits: card numbers, CVVs, PINs, amounts, dates, and nearly every
 *    token, key or password a machine or a policy makes;
 *  - '=', ':', '@', '?', '&': key=value pairs, "user:pass", e-mail
 *    addresses, URLs and their query strings (a ':' that ends a word,
 *    as in "error: ...", is punctuation, and kept);
 *  - quotes, '\\', '<' and '>': they would end the quote around the
 *    excerpt, or forge a placeholder;
 *  - bytes outside printable ASCII: controls act on terminals and logs,
 *    and other bytes are not words an operator types;
 *  - long words: a secret of letters only (base64 without digits) is
 *    long, words and names are short (a JFR type "jdk.ExecutionSample");
 *  - every word after one that names a secret ("password is hunter",
 *    "card number 4111 1111 ..."): how far after it the secret comes is
 *    not known, so nothing after it is kept.
 * A word of letters that is itself a password, alone, still passes:
 * nothing tells it from a word, and a profile's own lines hold such
 * words everywhere (function names).
 */
#include "common/redact.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Parts of words that name a secret; any word that holds one, in any case. */
static const char *const naming[] = {
	"pass", "pwd",  "secret", "token", "bearer", "basic",      "auth",
	"key",  "card", "cvv",    "cvc",   "cookie", "credential", "session",
};

static bool names_secret(const char *w, size_t n)
{
	for (size_t k = 0; k < sizeof(naming) / sizeof(naming[0]); k++) {
		size_t m = strlen(naming[k]);
		for (size_t i = 0; i + m <= n; i++)
			if (strncasecmp(w + i, naming[k], m) == 0)
				return true;
	}
	return false;
}

static bool word_safe(const char *w, size_t n)
{
	if (n == 0 || n > REDACT_WORD_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)w[i];
		/* c != 0: strchr finds the string's own NUL. */
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c && strchr("-_.,;/()", c)) || (c == ':' && i == n - 1)))
			return false;
	}
	return true;
}

/*
 * Where words end. Spaces between words are written as one space: a
 * line break in a message would start a line of its own.
 */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

typedef struct excerpt {
	char *out;
	size_t size, len;
	bool full;
} excerpt;

/*
 * Append s[0..n), after a space when `sep`, whole, or "..." and nothing
 * more once it does not fit: a word is never cut, a cut one could be
 * read as another.
 */
static void put(excerpt *e, bool sep, const char *s, size_t n)
{
	size_t need = (sep ? 1 : 0) + n;

	if (e->full)
		return;
	/* Room is kept for "..." and the NUL after anything appended. */
	if (e->len + need + 4 > e->size) {
		if (e->len + 4 <= e->size) {
			memcpy(e->out + e->len, "...", 3);
			e->len += 3;
		}
		e->full = true;
	} else {
		if (sep)
			e->out[e->len++] = ' ';
		memcpy(e->out + e->len, s, n);
		e->len += n;
	}
	e->out[e->len] = '\0';
}

static void put_placeholder(excerpt *e, bool sep, size_t n)
{
	char p[48];
	int k = snprintf(p, sizeof(p), "<%zu byte%s>", n, n == 1 ? "" : "s");

	put(e, sep, p, (size_t)k);
}

const char *redact_excerpt(char *out, size_t size, const char *s, size_t n)
{
	excerpt e = {out, size, 0, false};
	size_t i = 0, last = 0, span = 0;
	bool open = false, named = false, sep_span = false;

	if (!size)
		return out;
	out[0] = '\0';
	while (i < n && !e.full) {
		size_t a, b;
		bool safe;

		while (i < n && is_space(s[i]))
			i++;
		if (i == n)
			break;
		a = i;
		while (i < n && !is_space(s[i]))
			i++;
		b = i;
		safe = !named && word_safe(s + a, b - a);
		if (names_secret(s + a, b - a))
			named = true;
		if (!safe) {
			/* One placeholder for a run of words: its spaces are counted in it. */
			if (!open) {
				span = a;
				sep_span = e.len > 0;
				open = true;
			}
		} else {
			if (open) {
				put_placeholder(&e, sep_span, last - span);
				open = false;
			}
			put(&e, e.len > 0, s + a, b - a);
		}
		last = b;
	}
	if (open)
		put_placeholder(&e, sep_span, last - span);
	return out;
}
