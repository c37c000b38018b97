/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json_test.c - json_escape(): every escape, UTF-8 validation (overlong
 * forms, surrogates, > U+10FFFF, cut sequences), truncation at character
 * boundaries, and random bytes always giving valid JSON string content.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "certjson.h"
#include "json.h"
#include "proto.h"
#include "tap.h"

static char out[65536];

static int esc_is(const char *in, size_t n, const char *want)
{
	json_escape_n(out, sizeof(out), in, n);
	if (strcmp(out, want)) {
		diag("escaped to '%s', expected '%s'", out, want);
		return 0;
	}
	return 1;
}

/* Is s valid UTF-8 (RFC 3629)? */
static int utf8_valid(const unsigned char *s)
{
	while (*s) {
		unsigned char c = *s;
		int len, i;
		uint32_t cp;
		if (c < 0x80) {
			s++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			len = 2, cp = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			len = 3, cp = c & 0x0f;
		else if ((c & 0xf8) == 0xf0)
			len = 4, cp = c & 0x07;
		else
			return 0;
		for (i = 1; i < len; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return 0;
		s += len;
	}
	return 1;
}

/* Valid JSON string content: no raw control bytes, no lone quote, every
 * backslash starts a known escape, valid UTF-8. */
static int json_content_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == '"')
			return 0;
		if (c == '\\') {
			i++;
			if (strchr("\"\\/bfnrt", s[i]) && s[i])
				continue;
			if (s[i] != 'u' || strspn(s + i + 1, "0123456789abcdef") < 4)
				return 0;
			i += 4;
		}
	}
	return utf8_valid((const unsigned char *)s);
}

/* A history entry whose every string is full and escapes 6-fold (\u0001):
 * the region log's line and krex log --json's fit their buffers whole. */
static void test_log_entry_worst(void)
{
	static struct proto_log_entry e;
	static char line[JSON_LOG_ENTRY_MAX], node[64];
	int n;

	memset(&e, 0, sizeof(e));
	memset(e.label, 1, sizeof(e.label) - 1);
	memset(e.cert.gpus, 1, sizeof(e.cert.gpus) - 1);
	memset(e.cert.note, 1, sizeof(e.cert.note) - 1);
	memset(e.cert.owner_cores, 1, sizeof(e.cert.owner_cores) - 1);
	memset(e.cert.ungated_who, 1, sizeof(e.cert.ungated_who) - 1);
	memset(node, 1, sizeof(node) - 1);
	e.cert.known = 0x3f;
	e.cert.clock_reasons = ~0ULL;
	e.cert.region_id = e.seq = e.begin_us = e.end_us = ~0ULL;
	e.cert.wait_us = e.cert.drain_us = e.cert.freeze_us = e.cert.held_us = ~0ULL;
	e.cert.foreign = e.cert.moved = INT32_MIN;
	e.cert.ungated = UINT32_MAX;
	e.cert.ungated_gpu = INT32_MAX;
	n = json_log_entry(&e, node, line, sizeof(line));
	ok(n > 0 && n < (int)sizeof(line) && (size_t)n == strlen(line) &&
	           !strcmp(line + n - 2, "}}"),
	   "the worst history entry's JSON fits (%d of %zu bytes)", n, sizeof(line));
	ok(strstr(line, "\"note\":\"\\u0001") && strstr(line, "\"label\":\"\\u0001") &&
	           strstr(line, "\"ungated_who\":\"\\u0001"),
	   "with its escaped strings");
}

static int same(const char *a, const char *b)
{
	return json_same(a, strlen(a), b, strlen(b));
}

/* The reader of signed certificates: members, values, malformed text. */
static void test_reader(void)
{
	const char *t = " {\"a\": 1, \"b\" :{\"x\":[1,\"}\"]}, \"c\":\"q\\\"\\u0041\\u00e9\"} ";
	const char *k, *v;
	size_t pos = 0, kl, vl, n = 0;
	char sv[16];
	unsigned long long u;
	int rc;

	while ((rc = json_object_next(t, strlen(t), &pos, &k, &kl, &v, &vl)) == 1)
		n++;
	ok(rc == 0 && n == 3, "three members, nested braces inside strings skipped");
	ok(json_object_get(t, strlen(t), "b", &v, &vl) == 1 && vl == 13 && v[0] == '{',
	   "a nested object is one value");
	ok(json_object_get(t, strlen(t), "c", &v, &vl) == 1 &&
	           json_string_value(v, vl, sv, sizeof(sv)) == 0 && !strcmp(sv, "q\"A?"),
	   "a string unescaped (\\u over 0x7f as ?)");
	ok(json_object_get(t, strlen(t), "a", &v, &vl) == 1 && json_uint_value(v, vl, &u) == 0 &&
	           u == 1,
	   "an integer");
	ok(json_object_get(t, strlen(t), "z", &v, &vl) == 0, "an absent member");
	ok(json_object_get("{\"a\":1", 6, "a", &v, &vl) < 0 &&
	           json_object_get("{\"a\":1} x", 10, "a", &v, &vl) < 0 &&
	           json_object_get("[1]", 3, "a", &v, &vl) < 0 &&
	           json_object_get("{\"a\":\"x\n\"}", 8, "a", &v, &vl) < 0 &&
	           json_object_get("{a:1}", 5, "a", &v, &vl) < 0,
	   "unterminated, trailing text, not an object, a raw newline, a bare key: malformed");
	{
		static const char *const bad[] = {
		        "{\"a\":tttt}", "{\"a\":truex}",   "{\"a\":01}",
		        "{\"a\":1.}",   "{\"a\":-}",       "{\"a\":1e}",
		        "{\"a\":nul}",  "{\"a\":\"\\x\"}", "{\"a\":\"\\u12g4\"}"};
		unsigned i, refused = 0;
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			refused += json_object_get(bad[i], strlen(bad[i]), "a", &v, &vl) < 0;
		ok(refused == sizeof(bad) / sizeof(bad[0]),
		   "not JSON (RFC 8259): a bare word, a leading zero, a lone '-', a bad escape: %u of %zu refused",
		   refused, sizeof(bad) / sizeof(bad[0]));
		t = "{\"a\":-0.5e+3,\"b\":true,\"c\":false,\"d\":null,\"e\":\"\\u00e9\\n\",\"f\":0}";
		ok(json_object_get(t, strlen(t), "f", &v, &vl) == 1 && vl == 1,
		   "numbers, true, false, null and escapes are JSON");
	}
	ok(json_object_get(
	           "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
	           "]]]]]]]}",
	           80, "a", &v, &vl) < 0,
	   "nesting deeper than 32 refused");
	ok(same("{\"a\": \"x y\" }", "{\"a\":\"x y\"}") &&
	           !same("{\"a\":\"xy\"}", "{\"a\":\"x y\"}") &&
	           !same("{\"a\":\"\\\" \"}", "{\"a\":\"\\\"\"}"),
	   "json_same: whitespace outside strings only");
	{
		/* 20000 mutations of a certificate file: every call ends, in bounds */
		static const char base[] =
		        "{\"region\":7,\"outcome\":\"clean\",\"gpus\":\"g\\\"0\",\"x\":[1,{\"y\":null}],"
		        "\"note\":\"\",\"signed\":\"MUNGE:AbC+/=:\"}";
		char buf[sizeof(base)], s[64];
		unsigned i, j, found = 0, oob = 0;

		srand(4321);
		for (i = 0; i < 20000; i++) {
			size_t len = sizeof(base) - 1 - (size_t)(rand() % 8);
			memcpy(buf, base, sizeof(base));
			for (j = 0; j < 1 + (unsigned)rand() % 3; j++)
				buf[rand() % (int)len] = "{}[]\",:\\ a0"[rand() % 12];
			pos = 0;
			while (json_object_next(buf, len, &pos, &k, &kl, &v, &vl) == 1)
				if (v < buf || v + vl > buf + len || k < buf || k + kl > buf + len)
					oob++;
			if (json_object_get(buf, len, "signed", &v, &vl) == 1) {
				found++;
				json_string_value(v, vl, s, sizeof(s));
				json_same(v, vl, base, sizeof(base) - 1);
			}
		}
		ok(found > 0,
		   "20000 mutated and cut certificate files read within bounds (%u still had \"signed\")",
		   found);
	}
	ok(json_uint_value("-1", 2, &u) < 0 && json_uint_value("1.5", 3, &u) < 0 &&
	           json_string_value("1", 1, sv, sizeof(sv)) < 0,
	   "a negative or fractional integer, a number as a string: refused");
}

int main(void)
{
	char small[16], big[20000];
	unsigned i, j, bad = 0;
	size_t n;
	FILE *f;

	plan(34);
	test_reader();
	ok(esc_is("my\"job", 6, "my\\\"job"), "a quote gets a backslash");
	ok(esc_is("a\\b", 3, "a\\\\b"), "a backslash gets a backslash");
	ok(esc_is("a\nb\tc\rd\be\ff", 11, "a\\nb\\tc\\rd\\be\\ff"), "short escapes");
	ok(esc_is("\x01\x1f\x7f", 3, "\\u0001\\u001f\\u007f"), "control bytes and DEL as \\u00XX");
	ok(esc_is("a\0b", 3, "a\\u0000b"), "a NUL inside the length as \\u0000");
	ok(esc_is("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9,
	          "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
	   "valid 2-, 3- and 4-byte UTF-8 passes unchanged");
	ok(esc_is("\xff\xfe", 2, "\\ufffd\\ufffd"), "bytes that are never UTF-8 become \\ufffd");
	ok(esc_is("\xc0\x80\xe0\x80\x80", 5, "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"),
	   "overlong forms are refused byte by byte");
	ok(esc_is("\xed\xa0\x80", 3, "\\ufffd\\ufffd\\ufffd"), "a surrogate is refused");
	ok(esc_is("\xf4\x90\x80\x80", 4, "\\ufffd\\ufffd\\ufffd\\ufffd"),
	   "above U+10FFFF is refused");
	ok(esc_is("ab\xe2\x82", 4, "ab\\ufffd\\ufffd"), "a sequence cut at the end is refused");
	ok(esc_is("\x80z", 2, "\\ufffdz"), "a lone continuation byte is refused");

	n = json_escape(small, 12, "abcdefghij\"");
	ok(n == 10 && !strcmp(small, "abcdefghij"), "a cut never splits an escape ('%s')", small);
	n = json_escape(small, sizeof(small), "abcdefghijklm\xe2\x82\xac");
	ok(n == 13 && !strcmp(small, "abcdefghijklm"), "nor a UTF-8 sequence ('%s')", small);
	n = json_escape(small, 1, "abc");
	ok(n == 0 && small[0] == '\0', "a 1-byte buffer gets the NUL only");

	/* random bytes */
	srand(12345);
	for (i = 0; i < 20000; i++) {
		char in[64];
		unsigned len = (unsigned)rand() % sizeof(in);
		for (j = 0; j < len; j++)
			in[j] = (char)(rand() % 255 + 1);
		in[len] = '\0';
		json_escape(out, 7 + (unsigned)rand() % 400, in);
		bad += !json_content_ok(out);
	}
	ok(bad == 0, "20000 random strings, random buffer sizes: valid JSON content (%u bad)", bad);

	/* json_fput_str writes the whole string, however long */
	for (i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)(i % 7 == 0 ? '"' : i % 11 == 0 ? '\n' : 'a' + i % 26);
	big[sizeof(big) - 1] = '\0';
	f = tmpfile();
	json_fput_str(f, big);
	n = (size_t)ftell(f);
	rewind(f);
	memset(out, 0, sizeof(out));
	ok(fread(out, 1, sizeof(out) - 1, f) == n, "json_fput_str wrote %zu bytes", n);
	fclose(f);
	ok(out[0] == '"' && out[n - 1] == '"', "quoted");
	out[n - 1] = '\0';
	ok(json_content_ok(out + 1), "its content is valid");
	json_escape(big, sizeof(big), "");
	ok(big[0] == '\0', "an empty string escapes to an empty string");
	test_log_entry_worst();
	return tap_done();
}
