/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf.h - `key = value` files and the small parsers every config shares.
 *
 * A line is blank, a comment (# ...), or key = value.  Keys are matched by
 * the caller's callback, which rejects unknown ones; conf_parse_file reports
 * the file and line of the first error.
 */
#ifndef KREX_CONF_H
#define KREX_CONF_H

#include <stddef.h>
#include <stdint.h>

/*
 * Called for each key = value pair; returns 0, or -1 and writes why into err
 * (errlen bytes).
 */
typedef int (*conf_kv_fn)(const char *key, const char *value, void *ctx, char *err, size_t errlen);

/*
 * Parse the file at path.  Returns 0, or -1 with a message in err naming the
 * path and line ("krexd.conf:12: unknown key 'foo'").  A missing file is an
 * error unless missing_ok.
 */
int conf_parse_file(const char *path, int missing_ok, conf_kv_fn fn, void *ctx, char *err,
                    size_t errlen);

/* Parse one "key=value" argument (command line, plugstack.conf). */
int conf_parse_arg(const char *arg, conf_kv_fn fn, void *ctx, char *err, size_t errlen);

/* yes/no/true/false/on/off/1/0; returns 0 or -1. */
int conf_parse_bool(const char *s, int *out);

/* Unsigned decimal within [min, max]; returns 0 or -1. */
int conf_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * The environment variable name as an unsigned decimal 0 to max: unset or
 * empty, dflt; bad or out of range, dflt too, and the first time *said is
 * clear a warning "NAME=VALUE: not 0 to MAX UNIT; THEN" (the caller's unit
 * and what it does instead).
 */
uint64_t conf_env_uint(const char *name, uint64_t max, uint64_t dflt, int *said, const char *unit,
                       const char *then);

/* snprintf that returns -1 (errno ENAMETOOLONG) on truncation. */
int xsnprintf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Copy s into buf; -1 (ENAMETOOLONG) if it does not fit. */
int xstrcpy(char *buf, size_t len, const char *s);

/* Split a comma-separated list into at most max items of itemlen bytes each.
 * Returns the count, or -1 if there are too many or one is too long. */
int conf_split_list(const char *s, char *items, size_t itemlen, int max);

#endif /* KREX_CONF_H */
