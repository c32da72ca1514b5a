/*
 * escape.c: HTML and Markdown escaping of names taken from profiles.
 */
#include "reports/escape.h"
#include "common/utf8.h"

#include <stdio.h>
#include <string.h>

/*
 * How s[i..n) starts when it must not be copied as it is: a control, a
 * bidirectional override or a line separator (utf8_hidden) as the text
 * "\xNN" or "\u{NNNN}" (a reader sees it; U+202E would reverse the text
 * after it), a byte that starts no UTF-8 sequence as "\xNN". *len is the
 * sequence's length; false: copy *len bytes as they are.
 */
static bool hidden_at(const char *s, size_t i, size_t n, char rep[16], size_t *len)
{
	const unsigned char *u = (const unsigned char *)s + i;
	uint32_t cp = u[0];

	*len = 1;
	if (u[0] >= 0x80) {
		*len = utf8_seq_len(u, n - i);
		if (*len == 0 || utf8_decode(u, &cp) != *len) {
			*len = 1;
			snprintf(rep, 16, "\\x%02x", u[0]);
			return true;
		}
	}
	if (!utf8_hidden(cp))
		return false;
	snprintf(rep, 16, cp < 0x80 ? "\\x%02x" : "\\u{%04x}", (unsigned)cp);
	return true;
}

/*
 * The bidirectional embeddings, overrides and isolates s[0..n) opens and
 * does not close, closed after it (U+202C for each of U+202A, U+202B,
 * U+202D, U+202E; U+2069 for each of U+2066 to U+2068). A name kept as it
 * is (attributes send it back) with a right-to-left override in it
 * reversed the rest of its table cell: a lead's "14.45% -> 19.81%" read
 * "%18.91 -> %54.41".
 */
static int close_bidi(buf *out, const char *s, size_t n)
{
	size_t embed = 0, isolate = 0;
	int rc = 0;

	for (size_t i = 0; i + 2 < n; i++) {
		const unsigned char *u = (const unsigned char *)s + i;
		if (u[0] != 0xe2 || (u[1] != 0x80 && u[1] != 0x81))
			continue;
		if (u[1] == 0x80 && (u[2] == 0xaa || u[2] == 0xab || u[2] == 0xad || u[2] == 0xae))
			embed++;
		else if (u[1] == 0x80 && u[2] == 0xac && embed)
			embed--;
		else if (u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa8)
			isolate++;
		else if (u[1] == 0x81 && u[2] == 0xa9 && isolate)
			isolate--;
	}
	for (; embed && rc == 0; embed--)
		rc = buf_puts(out, "\xe2\x80\xac");
	for (; isolate && rc == 0; isolate--)
		rc = buf_puts(out, "\xe2\x81\xa9");
	return rc;
}

static int esc_html_any(buf *out, const char *s, size_t n, bool text)
{
	size_t run = 0, len;
	int rc = 0;

	/* Copy runs of harmless bytes in one go: names are mostly plain. */
	for (size_t i = 0; i < n && rc == 0; i += len) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;
		char hex[16];

		len = 1;
		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			/*
			 * Only C0 and DEL: the page sends attribute values back
			 * (a form's release, a frame's data-name matched against
			 * others), so other characters stay as they are.
			 */
			if (c < 0x20 || c == 0x7f) {
				snprintf(hex, sizeof(hex), "\\x%02x", c);
				rep = hex;
			} else if (text && c >= 0x80 && hidden_at(s, i, n, hex, &len)) {
				rep = hex;
			}
		}
		if (!rep) {
			run += len;
			continue;
		}
		if (run)
			rc = buf_put(out, s + i - run, run);
		run = 0;
		if (rc == 0)
			rc = buf_puts(out, rep);
	}
	if (rc == 0 && run)
		rc = buf_put(out, s + n - run, run);
	if (rc == 0 && !text)
		rc = close_bidi(out, s, n);
	return rc;
}

int esc_html_n(buf *out, const char *s, size_t n)
{
	return esc_html_any(out, s, n, false);
}

int esc_html(buf *out, const char *s)
{
	return esc_html_n(out, s ? s : "", s ? strlen(s) : 0);
}

int esc_html_text(buf *out, const char *s)
{
	return esc_html_any(out, s ? s : "", s ? strlen(s) : 0, true);
}

static int esc_md_n(buf *out, const char *s, size_t n)
{
	int rc = 0;

	for (size_t i = 0, len = 1; i < n && rc == 0; i += len) {
		unsigned char c = (unsigned char)s[i];
		char hex[16];

		len = 1;
		if (strchr("\\`*_[]<>|!~&#()", c))
			rc = buf_printf(out, "\\%c", c);
		else if ((c < 0x20 || c >= 0x7f) && hidden_at(s, i, n, hex, &len))
			rc = buf_puts(out, hex);
		else
			rc = buf_put(out, s + i, len);
	}
	return rc;
}

int esc_md(buf *out, const char *s)
{
	return s ? esc_md_n(out, s, strlen(s)) : 0;
}

/* Where a cut at byte i of s[0..n) falls back to, so as not to split a UTF-8 sequence. */
static size_t char_start(const char *s, size_t n, size_t i)
{
	while (i > 0 && i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
		i--;
	return i;
}

/* The two parts a cell shows of s[0..n): s[0..*head) and s[*tail..n); false when whole. */
static bool cell_cut(const char *s, size_t n, size_t *head, size_t *tail)
{
	if (n <= ESC_CELL_MAX)
		return false;
	*head = char_start(s, n, 100);
	*tail = char_start(s, n, n - 50);
	return true;
}

/* A cell's text of s: whole, or cut by cell_cut with "…" between, escaped by esc_n. */
static int esc_cell(buf *out, const char *s, int (*esc_n)(buf *, const char *, size_t))
{
	size_t n = s ? strlen(s) : 0, head, tail;
	int rc;

	if (!cell_cut(s, n, &head, &tail))
		return esc_n(out, s ? s : "", n);
	if ((rc = esc_n(out, s, head)) == 0 && (rc = buf_puts(out, "\xe2\x80\xa6")) == 0)
		rc = esc_n(out, s + tail, n - tail);
	return rc;
}

int esc_html_cell(buf *out, const char *s)
{
	return esc_cell(out, s, esc_html_n);
}

int esc_md_cell(buf *out, const char *s)
{
	return esc_cell(out, s, esc_md_n);
}
