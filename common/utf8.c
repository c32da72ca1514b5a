/*
 * utf8.c: checking UTF-8 (see utf8.h).
 */
#include "common/utf8.h"

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq_len(u + i, n - i);
		if (k == 0 || u[i] == 0)
			return false;
		i += k;
	}
	return true;
}

size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
	uint32_t v, min;
	size_t n;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2, v = s[0] & 0x1f, min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3, v = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4, v = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

bool utf8_hidden(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c ||
	       cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}
