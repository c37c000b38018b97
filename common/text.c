/* SPDX-License-Identifier: BSD-3-Clause */
/* text.c - names that reach logs and terminals (text.h). */
#include <stdint.h>
#include <stdio.h>

#include "text.h"

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF) with its code point in *cp, or 0. */
static int utf8_seq(const unsigned char *s, uint32_t *cp)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	int n, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, *cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, *cp = c & 0x0f, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, *cp = c & 0x07, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	return n;
}

/* A code point that moves the cursor, starts an escape or reorders text on a
 * terminal: C0, DEL, C1 (U+0080-U+009F: CSI U+009B, OSC U+009D...), the line
 * and paragraph separators and the bidirectional overrides and isolates. */
static int cp_is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

int text_check(const char *what, const char *s, char *err, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;
	int i, n;

	for (i = 0; u[i]; i += n) {
		n = utf8_seq(u + i, &cp);
		if (!n) {
			snprintf(err, len, "%s is not UTF-8 (byte 0x%02x at %d)", what, u[i], i);
			return -1;
		}
		if (cp_is_control(cp)) {
			if (cp < 0x80)
				snprintf(err, len,
				         "%s holds a control character (byte 0x%02x at %d)", what,
				         (unsigned)cp, i);
			else
				snprintf(err, len, "%s holds a control character (U+%04X at %d)",
				         what, (unsigned)cp, i);
			return -1;
		}
	}
	return 0;
}

void text_clean(char *s)
{
	unsigned char *u = (unsigned char *)s;
	uint32_t cp;
	int n, j;

	while (*u) {
		n = utf8_seq(u, &cp);
		if (n && !cp_is_control(cp)) {
			u += n;
			continue;
		}
		for (j = 0, n = n ? n : 1; j < n; j++)
			*u++ = '?';
	}
}
