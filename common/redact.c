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
#include <stdlib.h>
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

/* The length of the run of decimal digits at s[i]. */
static size_t digit_run(const char *s, size_t n, size_t i)
{
	size_t j = i;

	while (j < n && s[j] >= '0' && s[j] <= '9')
		j++;
	return j - i;
}

/* A card number's digits: 13 to 19 (ISO/IEC 7812). */
#define CARD_MIN 13
#define CARD_MAX 19

/* Whether the digits s[0..n) pass Luhn's check, as every card number does. */
static bool luhn(const char *s, size_t n)
{
	unsigned sum = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[n - 1 - i] - '0');
		if (i % 2) {
			d *= 2;
			if (d > 9)
				d -= 9;
		}
		sum += d;
	}
	return sum % 10 == 0;
}

static bool is_hex_letter(char c)
{
	return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * The end of a card number written in groups at s[r..n): groups of 3 to 6
 * digits, one space, dash, dot, underscore or slash between them (the
 * same all along, "4111 1111 1111 1111", "3782-822463-10005",
 * "4111_1111_1111_1111" in a name), CARD_MIN to CARD_MAX digits in
 * all, passing Luhn's check, with no digit or hex letter right after it.
 * The longest such; 0 when there is none.
 */
static size_t grouped_card_end(const char *s, size_t n, size_t r)
{
	char digs[CARD_MAX + 1], sep = 0;
	size_t nd = 0, i = r, end = 0;

	for (;;) {
		size_t len = digit_run(s, n, i);
		if (len < 3 || len > 6 || nd + len > CARD_MAX)
			break;
		memcpy(digs + nd, s + i, len);
		nd += len;
		i += len;
		if (i > r + len && nd >= CARD_MIN && luhn(digs, nd) &&
		    !(i < n && is_hex_letter(s[i])))
			end = i;
		if (i + 1 >= n || !strchr(" -._/", s[i]) || !s[i] || (sep && s[i] != sep) ||
		    !(s[i + 1] >= '0' && s[i + 1] <= '9'))
			break;
		sep = s[i++];
	}
	return end;
}

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * Whether the digits at s[r..j) are part of a hex number: written after
 * "0x", or beside a hex letter in a word of letters and digits that are
 * all hex ("deadbeef4111111111111111"). A word with another letter is a
 * name, and its digits are a number of their own: "processCard" ends
 * with the hex letter 'd', and "processCard4111111111111111" kept its
 * card number. Before r, the word is read in what was written, out[0..w)
 * (w <= r: a card number cut before it stops the word at its '#').
 */
static bool in_hex_number(const char *out, size_t w, const char *s, size_t n, size_t r, size_t j)
{
	size_t a = w, b = j;
	bool letter = false;

	if (r >= 2 && s[r - 2] == '0' && (s[r - 1] == 'x' || s[r - 1] == 'X'))
		return true;
	while (a > 0 && is_alnum(out[a - 1]))
		a--;
	while (b < n && is_alnum(s[b]))
		b++;
	for (size_t i = a; i < w; i++) {
		if (!(out[i] >= '0' && out[i] <= '9') && !is_hex_letter(out[i]))
			return false;
		letter = letter || is_hex_letter(out[i]);
	}
	for (size_t i = j; i < b; i++) {
		if (!(s[i] >= '0' && s[i] <= '9') && !is_hex_letter(s[i]))
			return false;
		letter = letter || is_hex_letter(s[i]);
	}
	return letter;
}

size_t redact_card_numbers(char *s, size_t n)
{
	size_t w = 0;

	for (size_t r = 0; r < n;) {
		size_t len = digit_run(s, n, r), j = r + len, grouped;
		bool hex = len && in_hex_number(s, w, s, n, r, j);
		if (len >= CARD_MIN && len <= CARD_MAX && !hex && luhn(s + r, len)) {
			s[w++] = '#';
			r = j;
		} else if (len && !hex && (grouped = grouped_card_end(s, n, r)) > 0) {
			s[w++] = '#';
			r = grouped;
		} else if (len) {
			memmove(s + w, s + r, len);
			w += len;
			r = j;
		} else {
			s[w++] = s[r++];
		}
	}
	return w;
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_letter(char c)
{
	return is_upper(c) || (c >= 'a' && c <= 'z');
}

/* A byte of an e-mail address's local part ('_' too: "jane_doe@..."). */
static bool local_char(char c)
{
	return is_alnum(c) || (c && strchr("_.%+-", c));
}

/*
 * The end of the domain of an e-mail address at s[r..n) (r just after the
 * '@'): labels of letters, digits and '-', each with a letter, two or
 * more, the last of letters only; 0 when there is none.
 */
static size_t domain_end(const char *s, size_t n, size_t r)
{
	size_t i = r, labels = 0, end = 0;

	for (;;) {
		size_t a = i;
		bool letter = false, letters_only = true;
		while (i < n && (is_alnum(s[i]) || s[i] == '-')) {
			letter = letter || is_letter(s[i]);
			letters_only = letters_only && is_letter(s[i]);
			i++;
		}
		if (i == a || !letter)
			break;
		labels++;
		if (labels >= 2 && letters_only && i - a >= 2)
			end = i;
		if (i + 1 >= n || s[i] != '.')
			break;
		i++;
	}
	return end;
}

/* Whether s[a..b) is an IBAN: see redact_names. */
static bool iban(const char *s, size_t a, size_t b)
{
	unsigned rem = 0;

	if (b - a < 15 || b - a > 34 || !is_upper(s[a]) || !is_upper(s[a + 1]) ||
	    !(s[a + 2] >= '0' && s[a + 2] <= '9') || !(s[a + 3] >= '0' && s[a + 3] <= '9'))
		return false;
	for (size_t k = 0; k < b - a; k++) {
		char c = s[a + (k + 4) % (b - a)];
		if (c >= '0' && c <= '9')
			rem = (rem * 10 + (unsigned)(c - '0')) % 97;
		else if (is_upper(c))
			rem = (rem * 100 + (unsigned)(c - 'A' + 10)) % 97;
		else
			return false;
	}
	return rem == 1;
}

/* Whether s[a..b) is an AWS access key id: see redact_names. */
static bool aws_key_id(const char *s, size_t a, size_t b)
{
	if (b - a != 20 || (memcmp(s + a, "AKIA", 4) != 0 && memcmp(s + a, "ASIA", 4) != 0))
		return false;
	for (size_t k = a; k < b; k++)
		if (!is_upper(s[k]) && !(s[k] >= '0' && s[k] <= '9'))
			return false;
	return true;
}

size_t redact_names(char *s, size_t n)
{
	size_t w = 0;

	n = redact_card_numbers(s, n);
	for (size_t r = 0; r < n;) {
		size_t b = r, end;
		/* A word of capitals and digits: an IBAN or a key id, whole. */
		if ((r == 0 || !is_alnum(s[r - 1])) && is_upper(s[r])) {
			while (b < n && (is_upper(s[b]) || (s[b] >= '0' && s[b] <= '9')))
				b++;
			if ((b == n || !is_alnum(s[b])) && (iban(s, r, b) || aws_key_id(s, r, b))) {
				s[w++] = '#';
				r = b;
				continue;
			}
		}
		/* An e-mail address: its local part is what was just written. */
		if (s[r] == '@' && w > 0 && local_char(s[w - 1]) &&
		    (end = domain_end(s, n, r + 1))) {
			while (w > 0 && local_char(s[w - 1]))
				w--;
			s[w++] = '#';
			r = end;
			continue;
		}
		s[w++] = s[r++];
	}
	return w;
}

/* Whether w[0..n) is an e-mail address: something, '@', a domain with a dot. */
static bool email_word(const char *w, size_t n)
{
	const char *at = memchr(w, '@', n);

	return at && at > w && memchr(at + 1, '.', (size_t)(w + n - at - 1)) && w[n - 1] != '.' &&
	       at[1] != '.';
}

/* Append s[0..n) to *b (a growing string of *len bytes in *cap); false when out of memory. */
static bool append(char **b, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t c = (*cap ? *cap : 64);
		char *nb;
		while (c < *len + n + 1)
			c *= 2;
		if (!(nb = realloc(*b, c)))
			return false;
		*b = nb;
		*cap = c;
	}
	memcpy(*b + *len, s, n);
	*len += n;
	(*b)[*len] = '\0';
	return true;
}

static bool append_placeholder(char **b, size_t *len, size_t *cap, size_t n)
{
	char p[48];
	int k = snprintf(p, sizeof(p), "<%zu byte%s>", n, n == 1 ? "" : "s");

	return append(b, len, cap, p, (size_t)k);
}

char *redact_message(const char *s)
{
	size_t n = strlen(s), len = 0, cap = 0;
	char *t = malloc(n + 1), *out = NULL;
	bool after_secret = false;

	if (!t)
		return NULL;
	memcpy(t, s, n + 1);
	n = redact_card_numbers(t, n);
	if (!append(&out, &len, &cap, "", 0))
		goto fail;
	for (size_t i = 0; i < n;) {
		size_t j = i, eq;
		if (is_space(t[i])) {
			if (!append(&out, &len, &cap, t + i, 1))
				goto fail;
			i++;
			continue;
		}
		while (j < n && !is_space(t[j]))
			j++;
		/* "token=abcd", "password:hunter2": the name kept, the value not. */
		for (eq = i; eq < j && t[eq] != '=' && t[eq] != ':'; eq++)
			;
		if (after_secret || email_word(t + i, j - i)) {
			if (!append_placeholder(&out, &len, &cap, j - i))
				goto fail;
			after_secret = false;
		} else if (eq < j && names_secret(t + i, eq - i)) {
			if (!append(&out, &len, &cap, t + i, eq + 1 - i) ||
			    (eq + 1 < j && !append_placeholder(&out, &len, &cap, j - eq - 1)))
				goto fail;
			/* "password: hunter2": the next word is the value. */
			after_secret = eq + 1 == j;
		} else if (!append(&out, &len, &cap, t + i, j - i)) {
			goto fail;
		}
		i = j;
	}
	free(t);
	return out;
fail:
	free(t);
	free(out);
	return NULL;
}
