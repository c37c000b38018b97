/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.c - the JSON string escaper and reader (json.h).
 */
#include "config.h"

#include <stdint.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

/* ---- reading -------------------------------------------------------------- */

#define JSON_MAX_DEPTH 32

static size_t json_ws(const char *t, size_t len, size_t i)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/* The end of the string whose opening quote is at t[i], or 0 when unterminated. */
static size_t json_skip_string(const char *t, size_t len, size_t i)
{
	size_t h;

	for (i++; i < len; i++) {
		if (t[i] == '\\') {
			/* only JSON's escapes: a \u with four hex digits */
			if (++i >= len || !strchr("\"\\/bfnrtu", t[i]))
				return 0;
			if (t[i] == 'u')
				for (h = 0; h < 4; h++)
					if (++i >= len || !isxdigit((unsigned char)t[i]))
						return 0;
		} else if (t[i] == '"')
			return i + 1;
		else if ((unsigned char)t[i] < 0x20)
			return 0;
	}
	return 0;
}

/* The end of the digits at t[i] (at least one), or 0. */
static size_t json_skip_digits(const char *t, size_t len, size_t i)
{
	size_t s = i;

	while (i < len && t[i] >= '0' && t[i] <= '9')
		i++;
	return i > s ? i : 0;
}

/* The end of the true, false, null or number (RFC 8259's grammar) at t[i], or 0. */
static size_t json_skip_literal(const char *t, size_t len, size_t i)
{
	static const char *const words[] = {"true", "false", "null"};
	size_t w, n;

	for (w = 0; w < 3; w++) {
		n = strlen(words[w]);
		if (len - i >= n && !memcmp(t + i, words[w], n))
			return i + n;
	}
	if (t[i] == '-')
		i++;
	if (i < len && t[i] == '0')
		i++;
	else if (!(i = json_skip_digits(t, len, i)))
		return 0;
	if (i < len && t[i] == '.' && !(i = json_skip_digits(t, len, i + 1)))
		return 0;
	if (i < len && (t[i] == 'e' || t[i] == 'E')) {
		i++;
		if (i < len && (t[i] == '+' || t[i] == '-'))
			i++;
		if (!(i = json_skip_digits(t, len, i)))
			return 0;
	}
	return i;
}

/* The end of the value at t[i] (after whitespace), or 0 when malformed. */
static size_t json_skip_value(const char *t, size_t len, size_t i, int depth)
{
	char open, close;

	i = json_ws(t, len, i);
	if (i >= len || depth > JSON_MAX_DEPTH)
		return 0;
	if (t[i] == '"')
		return json_skip_string(t, len, i);
	if (t[i] == '{' || t[i] == '[') {
		open = t[i];
		close = open == '{' ? '}' : ']';
		i = json_ws(t, len, i + 1);
		if (i < len && t[i] == close)
			return i + 1;
		for (;;) {
			if (open == '{') {
				if (i >= len || t[i] != '"' || !(i = json_skip_string(t, len, i)))
					return 0;
				i = json_ws(t, len, i);
				if (i >= len || t[i] != ':')
					return 0;
				i++;
			}
			if (!(i = json_skip_value(t, len, i, depth + 1)))
				return 0;
			i = json_ws(t, len, i);
			if (i < len && t[i] == ',') {
				i = json_ws(t, len, i + 1);
				continue;
			}
			return i < len && t[i] == close ? i + 1 : 0;
		}
	}
	return json_skip_literal(t, len, i);
}

int json_object_next(const char *t, size_t len, size_t *pos, const char **key, size_t *keylen,
                     const char **val, size_t *vallen)
{
	size_t i = *pos, k, e;

	if (i == 0) {
		i = json_ws(t, len, 0);
		/* the whole text must be one object */
		e = json_skip_value(t, len, i, 0);
		if (i >= len || t[i] != '{' || !e || json_ws(t, len, e) != len)
			return -1;
		i = json_ws(t, len, i + 1);
	} else {
		i = json_ws(t, len, i);
		if (i < len && t[i] == ',')
			i = json_ws(t, len, i + 1);
	}
	if (i < len && t[i] == '}')
		return 0;
	if (i >= len || t[i] != '"' || !(k = json_skip_string(t, len, i)))
		return -1;
	*key = t + i + 1;
	*keylen = k - i - 2;
	i = json_ws(t, len, k);
	if (i >= len || t[i] != ':')
		return -1;
	i = json_ws(t, len, i + 1);
	if (!(e = json_skip_value(t, len, i, 1)))
		return -1;
	*val = t + i;
	*vallen = e - i;
	*pos = e;
	return 1;
}

int json_object_get(const char *t, size_t len, const char *key, const char **val, size_t *vallen)
{
	size_t pos = 0, kl;
	const char *k;
	int rc;

	while ((rc = json_object_next(t, len, &pos, &k, &kl, val, vallen)) == 1)
		if (kl == strlen(key) && !memcmp(k, key, kl))
			return 1;
	return rc;
}

int json_string_value(const char *v, size_t n, char *out, size_t outlen)
{
	size_t i, o = 0;
	unsigned cp;

	if (n < 2 || v[0] != '"' || v[n - 1] != '"' || !outlen)
		return -1;
	for (i = 1; i < n - 1; i++) {
		char c = v[i];
		if (c == '\\') {
			if (++i >= n - 1)
				return -1;
			switch (v[i]) {
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'n':
				c = '\n';
				break;
			case 'r':
				c = '\r';
				break;
			case 't':
				c = '\t';
				break;
			case 'u':
				if (i + 4 >= n - 1 || sscanf(v + i + 1, "%4x", &cp) != 1)
					return -1;
				i += 4;
				c = cp < 0x80 && cp ? (char)cp : '?';
				break;
			default:
				c = v[i];
				break;
			}
		}
		if (o + 1 >= outlen)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int json_uint_value(const char *v, size_t n, unsigned long long *out)
{
	unsigned long long u = 0;
	size_t i;

	if (!n || n > 19)
		return -1;
	for (i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		u = u * 10 + (unsigned)(v[i] - '0');
	}
	*out = u;
	return 0;
}

/* The next byte of t that counts (whitespace outside strings skipped); *instr:
 * 0 outside a string, 1 inside, 2 right after a backslash inside. */
static int json_same_next(const char *t, size_t len, size_t *i, int *instr)
{
	while (*i < len) {
		unsigned char c = (unsigned char)t[(*i)++];
		if (*instr == 2) {
			*instr = 1;
			return c;
		}
		if (*instr == 1) {
			if (c == '\\')
				*instr = 2;
			else if (c == '"')
				*instr = 0;
			return c;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (c == '"')
			*instr = 1;
		return c;
	}
	return -1;
}

int json_same(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i = 0, j = 0;
	int sa = 0, sb = 0, ca, cb;

	do {
		ca = json_same_next(a, alen, &i, &sa);
		cb = json_same_next(b, blen, &j, &sb);
		if (ca != cb)
			return 0;
	} while (ca >= 0);
	return 1;
}
