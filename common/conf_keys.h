/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_keys.h - the values of krexd.conf keys, checked in one place.
 *
 * krexd parses krexd.conf and -o overrides with these (krexd/config.c);
 * the SPANK plugin checks with conf_key_check() the keys its plugstack line
 * passes on to krexd, so that a typo fails at srun time with the same text
 * krexd would give ("bad value '2x' for key 'max_region' (a duration ...)").
 */
#ifndef KREX_CONF_KEYS_H
#define KREX_CONF_KEYS_H

#include <stddef.h>
#include <stdint.h>

/* freezer = and isolate = values, in the order of krexd's enums; NULL-ended. */
extern const char *const conf_freezer_names[];
extern const char *const conf_isolate_names[];
/* sign = values (munge, off), in the order of krexd's enum sign_mode. */
extern const char *const conf_sign_names[];

/* The index of v in names (NULL-ended) in *out; 0, or -1 if absent. */
int conf_parse_enum(const char *v, const char *const *names, int *out);

/* A duration (a bare number is ms) of at least 1 ms and at most a day. */
int conf_parse_duration(const char *v, uint64_t *ns);

/* chain_max, chain_gap: 0, or up to KREX_MAX_CHAIN_MS. */
int conf_parse_chain(const char *v, uint64_t *ns);

/* queue_time: 0 (launch count only), or 10 us to 1 s. */
int conf_parse_queue_time(const char *v, uint64_t *ns);

/* queue_cap: launches between two gate events, 0 (off) to 1000000. */
int conf_parse_queue_cap(const char *v, unsigned *cap);

/* max_share: a fraction above 0, at most 1. */
int conf_parse_share(const char *v, double *out);

/* A size in bytes: a number with an optional k, M or G (powers of 1024), within [min, max]. */
int conf_parse_size(const char *v, uint64_t min, uint64_t max, uint64_t *out);

/* history: 0 (off) to KREX_MAX_HISTORY certificates. */
int conf_parse_history(const char *v, unsigned *n);

/* region_log_max: 0 (never rotate) or 4k to 1G.  region_log_keep: 0 to 100. */
int conf_parse_log_max(const char *v, uint64_t *bytes);
int conf_parse_log_keep(const char *v, unsigned *n);

/* cgroup_subtree: a relative path without "..".  0 or -1. */
int conf_check_subtree(const char *v);

/*
 * Check the value v of krexd.conf key.  Returns 0 when the key is in the
 * table and v is valid, -1 with conf_key_error()'s text in err when v is not,
 * and 1 when the key is not in the table (the caller knows it or rejects it).
 */
int conf_key_check(const char *key, const char *v, char *err, size_t errlen);

/* The one text for a bad value: "bad value 'V' for key 'K'", with what the
 * key takes in brackets when the table knows the key. */
void conf_key_error(char *err, size_t errlen, const char *key, const char *v);

#endif /* KREX_CONF_KEYS_H */
