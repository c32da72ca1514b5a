/*
 * escape.c: HTML and Markdown escaping of names taken from profiles.
 */
#include "reports/escape.h"

#include <string.h>

int esc_html_n(buf *out, const char *s, size_t n)
{
	size_t run = 0;
	int rc = 0;

	/* Copy runs of harmless bytes in one go: names are mostly plain. */
	for (size_t i = 0; i < n && rc == 0; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;
		char hex[8];

		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			if (c < 0x20 || c == 0x7f) {
				static const char digits[] = "0123456789abcdef";
				hex[0] = '\\', hex[1] = 'x', hex[2] = digits[c >> 4];
				hex[3] = digits[c & 15], hex[4] = 0;
				rep = hex;
			}
		}
		if (!rep) {
			run++;
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

int esc_html(buf *out, const char *s)
{
	return esc_html_n(out, s ? s : "", s ? strlen(s) : 0);
}

int esc_md(buf *out, const char *s)
{
	int rc = 0;

	if (!s)
		return 0;
	for (const unsigned char *c = (const unsigned char *)s; *c && rc == 0; c++) {
		if (strchr("\\`*_[]<>|!~&#()", *c))
			rc = buf_printf(out, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			rc = buf_printf(out, "\\x%02x", *c);
		else
			rc = buf_putc(out, (char)*c);
	}
	return rc;
}
