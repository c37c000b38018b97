/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.h - the one JSON string escaper of KREX: every JSON writer (krex
 * status --json, krex_certificate_json, ...) goes through it.
 */
#ifndef KREX_JSON_H
#define KREX_JSON_H

#include <stddef.h>
#include <stdio.h>

/*
 * Escape s for the inside of a JSON string (no quotes added) into buf of len
 * bytes, always NUL-terminated when len > 0: '"' and '\\' get a backslash,
 * \b \f \n \r \t their short forms, every other byte below 0x20 and 0x7f
 * \u00XX, and every byte that is not part of valid UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF) \ufffd, so that the
 * output is always valid UTF-8 and valid JSON.  Output that does not fit is
 * cut at a character boundary, never inside an escape or a UTF-8 sequence.
 * Returns the length written (without the NUL).
 */
size_t json_escape(char *buf, size_t len, const char *s);

/* The same for the first n bytes of s (NUL bytes in them become \u0000). */
size_t json_escape_n(char *buf, size_t len, const char *s, size_t n);

/* Write s to f as a whole JSON string, quotes included, however long. */
void json_fput_str(FILE *f, const char *s);

/* ---- reading (signed certificates: krex_certificate_verify) ------------ */

/*
 * The members of the JSON object in text[0..len), one per call: *pos starts
 * at 0.  Gives the key (raw, between its quotes) and the value's text (a
 * whole value: string with quotes, number, literal, object or array).
 * Returns 1 for a member, 0 after the last, -1 when the text is not one JSON
 * object (nesting deeper than 32 included).
 */
int json_object_next(const char *text, size_t len, size_t *pos, const char **key, size_t *keylen,
                     const char **val, size_t *vallen);

/* The value of member key of the object text[0..len): 1 found, 0 not, -1 malformed. */
int json_object_get(const char *text, size_t len, const char *key, const char **val,
                    size_t *vallen);

/* A JSON string value (quotes included) into out, unescaped (\u over 0x7f
 * becomes '?'); 0, or -1 when it is not a string or does not fit. */
int json_string_value(const char *val, size_t vallen, char *out, size_t outlen);

/* A JSON integer value (0 .. 2^63-1) into *out; 0, or -1. */
int json_uint_value(const char *val, size_t vallen, unsigned long long *out);

/* 1 when the two JSON texts are the same apart from whitespace outside strings. */
int json_same(const char *a, size_t alen, const char *b, size_t blen);

#endif /* KREX_JSON_H */
