/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.c - the JSON string escaper (json.h).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "json.h"

/*
 * Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when the
 * bytes there are not one (RFC 3629 table 3-7: shortest form only, no
 * surrogates, at most U+10FFFF).
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* no overlong 3-byte forms */
	else if (c == 0xed)
		hi = 0x9f; /* no surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* no overlong 4-byte forms */
	else if (c == 0xf4)
		hi = 0x8f; /* nothing above U+10FFFF */
	if (n < len)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/*
 * The escaped form of the character at s (n bytes left) into out (at least
 * 7 bytes); returns its length and sets *used to the input bytes it takes.
 */
static size_t escape_one(const unsigned char *s, size_t n, char *out, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	static const char short_from[] = "\"\\\b\f\n\r\t", short_to[] = "\"\\bfnrt";
	unsigned char c = s[0];
	const char *e;
	size_t len;

	*used = 1;
	e = c ? strchr(short_from, c) : NULL;
	if (e) {
		out[0] = '\\';
		out[1] = short_to[e - short_from];
		return 2;
	}
	if (c < 0x20 || c == 0x7f) {
		memcpy(out, "\\u00", 4);
		out[4] = hex[c >> 4];
		out[5] = hex[c & 15];
		return 6;
	}
	len = utf8_len(s, n);
	if (len == 0) {
		memcpy(out, "\\ufffd", 6);
		return 6;
	}
	memcpy(out, s, len);
	*used = len;
	return len;
}

size_t json_escape_n(char *buf, size_t len, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char one[8];
	size_t o = 0, k, used;

	if (len == 0)
		return 0;
	while (n > 0) {
		k = escape_one(p, n, one, &used);
		if (o + k >= len)
			break;
		memcpy(buf + o, one, k);
		o += k;
		p += used;
		n -= used;
	}
	buf[o] = '\0';
	return o;
}

size_t json_escape(char *buf, size_t len, const char *s)
{
	return json_escape_n(buf, len, s, strlen(s));
}

void json_fput_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), k, used;
	char one[8];

	fputc('"', f);
	while (n > 0) {
		k = escape_one(p, n, one, &used);
		fwrite(one, 1, k, f);
		p += used;
		n -= used;
	}
	fputc('"', f);
}
