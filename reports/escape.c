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

int esc_md(buf *out, const char *s)
{
	int rc = 0;

	if (!s)
		return 0;
	for (size_t i = 0, n = strlen(s), len = 1; i < n && rc == 0; i += len) {
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
