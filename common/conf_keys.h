/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_keys.h - the krexd.conf keys: one list (conf_keys.def), read and
 * checked in one place.
 *
 * krexd sets its struct from these (krexd/config.c: defaults, krexd.conf,
 * -o overrides, what a reload may change); the SPANK plugin checks with
 * conf_key_check() the keys its plugstack line passes on to krexd, so that a
 * typo fails at srun time with the same text krexd would give ("bad value
 * '2x' for key 'max_region' (a duration ...)").
 */
#ifndef KREX_CONF_KEYS_H
#define KREX_CONF_KEYS_H

#include <stddef.h>
#include <stdint.h>

/* For the defaults of conf_keys.def: a number of defs.h as text. */
#define CONF_TEXT_(x) #x
#define CONF_TEXT(x) CONF_TEXT_(x)
#define CONF_MS(x) CONF_TEXT(x) "ms"

/* How a value is read and checked (conf_keys.def says what each takes). */
enum conf_type {
	CONF_DUR,
	CONF_DUR0,
	CONF_UINT,
	CONF_U64,
	CONF_SIZE0,
	CONF_ENUM,
	CONF_ENUMYN,
	CONF_LEVEL,
	CONF_PCT,
	CONF_FRAC,
	CONF_PATH, /* the texts, from here on */
	CONF_PATH0,
	CONF_STR,
	CONF_NAME,
	CONF_SUBTREE,
	CONF_GPUS,
	CONF_PCI,
};

/* A text (a string field), not a number. */
static inline int conf_is_text(enum conf_type t)
{
	return t >= CONF_PATH;
}

/* A reload (SIGHUP) applies the key, or keeps the running value. */
enum conf_reload { CONF_LIVE, CONF_FIXED };

/* One row of conf_keys.def. */
struct conf_key {
	const char *name;
	enum conf_type type;
	uint64_t lo, hi;
	const char *const *names; /* CONF_ENUM, CONF_ENUMYN: NULL-ended */
	const char *def;          /* the default as text; NULL: none (or krexd's own) */
	enum conf_reload reload;
	size_t plugin; /* bytes the SPANK plugin keeps when it passes the key on; 0: not passed */
	const char *takes; /* what it takes, in words; NULL: none */
};

/* The rows' indexes: CONF_KEY_max_region, ...; CONF_KEYS_N rows. */
enum conf_key_index {
#define KEY(name, type, field, lo, hi, def, flags, plugin, takes) CONF_KEY_##name,
#include "conf_keys.def"
#undef KEY
	CONF_KEYS_N
};

extern const struct conf_key conf_keys[CONF_KEYS_N];

/* The values of the enum keys, in the order of krexd's enums; NULL-ended. */
extern const char *const conf_freezer_names[];
extern const char *const conf_isolate_names[];
extern const char *const conf_sign_names[];
extern const char *const conf_settle_names[];
extern const char *const conf_require_clocks_names[];
extern const char *const conf_favordynmods_names[];
extern const char *const conf_gpu_policy_names[];

/* A parsed value: u for the durations (ns), U64 and sizes, ui for UINT, i for
 * the enums and levels, d for PCT and FRAC; strings are only checked. */
union conf_value {
	uint64_t u;
	unsigned ui;
	int i;
	double d;
};

/*
 * The row of key, or NULL.  *index is the N of gpuN_pci (0 for every other
 * key).
 */
const struct conf_key *conf_key_find(const char *key, unsigned *index);

/* Read v as k's type and range into *out.  0, or -1 if v is not valid. */
int conf_key_parse(const struct conf_key *k, const char *v, union conf_value *out);

/* The name at index i of names (NULL-ended), or "?" when out of range. */
const char *conf_enum_name(const char *const *names, int i);

/* The index of v in names (NULL-ended) in *out; 0, or -1 if absent. */
int conf_parse_enum(const char *v, const char *const *names, int *out);

/* A size in bytes: a number with an optional k, M or G (powers of 1024), within [min, max]. */
int conf_parse_size(const char *v, uint64_t min, uint64_t max, uint64_t *out);

/*
 * Check the value v of krexd.conf key.  Returns 0 when the key is known and v
 * is valid, -1 with conf_key_error()'s text in err when v is not, and 1 when
 * the key is not a krexd.conf key (the caller rejects it).
 */
int conf_key_check(const char *key, const char *v, char *err, size_t errlen);

/* The one text for a bad value: "bad value 'V' for key 'K'", with what the
 * key takes in brackets when its row says. */
void conf_key_error(char *err, size_t errlen, const char *key, const char *v);

#endif /* KREX_CONF_KEYS_H */
