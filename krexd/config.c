/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c - struct krexd_config from the key list (common/conf_keys.def):
 * defaults, krexd.conf and -o overrides, what a reload may change.
 */
#include "config.h"
#include "krexd_config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "conf_keys.h"
#include "log.h"
#include "proto.h"
#include "timeutil.h"

/* Where each row of conf_keys.def goes in struct krexd_config: its offset
 * and size (for gpuN_pci those of gpu_pci[0], one slot). */
#define CONF_FIELD(field)                                                                          \
	offsetof(struct krexd_config, field), sizeof(((struct krexd_config *)0)->field)
static const struct {
	size_t off, len;
} fields[CONF_KEYS_N] = {
#define KEY(name, type, field, lo, hi, def, flags, plugin, takes) {CONF_FIELD(field)},
#include "conf_keys.def"
#undef KEY
};

/* Each type's field: a uint64_t, an unsigned, an int, a double or a string. */
#define CONF_FITS_DUR(s) ((s) == sizeof(uint64_t))
#define CONF_FITS_DUR0(s) ((s) == sizeof(uint64_t))
#define CONF_FITS_U64(s) ((s) == sizeof(uint64_t))
#define CONF_FITS_SIZE0(s) ((s) == sizeof(uint64_t))
#define CONF_FITS_UINT(s) ((s) == sizeof(unsigned))
#define CONF_FITS_ENUM(s) ((s) == sizeof(int))
#define CONF_FITS_ENUMYN(s) ((s) == sizeof(int))
#define CONF_FITS_LEVEL(s) ((s) == sizeof(int))
#define CONF_FITS_PCT(s) ((s) == sizeof(double))
#define CONF_FITS_FRAC(s) ((s) == sizeof(double))
#define CONF_FITS_PATH(s) ((s) > 1)
#define CONF_FITS_PATH0(s) ((s) > 1)
#define CONF_FITS_STR(s) ((s) > 1)
#define CONF_FITS_NAME(s) ((s) > 1)
#define CONF_FITS_SUBTREE(s) ((s) > 1)
#define CONF_FITS_GPUS(s) ((s) > 1)
#define CONF_FITS_PCI(s) ((s) > 1)
#define KEY(name, type, field, lo, hi, def, flags, plugin, takes)                                  \
	_Static_assert(CONF_FITS_##type(sizeof(((struct krexd_config *)0)->field)),                \
	               "conf_keys.def: " #name "'s field does not fit its type");
#include "conf_keys.def"
#undef KEY

/* Read v as row k and store it at f (len bytes: the field's size, which
 * the asserts above tie to the type).  0, or -1 (the field unchanged). */
static int config_store(const struct conf_key *k, char *f, size_t len, const char *v)
{
	union conf_value val;
	const void *src = &val.u;

	if (conf_key_parse(k, v, &val) < 0)
		return -1;
	if (conf_is_text(k->type))
		return xstrcpy(f, len, v);
	if (k->type == CONF_UINT)
		src = &val.ui;
	else if (k->type == CONF_ENUM || k->type == CONF_ENUMYN || k->type == CONF_LEVEL)
		src = &val.i;
	else if (k->type == CONF_PCT || k->type == CONF_FRAC)
		src = &val.d;
	memcpy(f, src, len);
	return 0;
}

void config_defaults(struct krexd_config *c)
{
	char err[256];
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < CONF_KEYS_N; i++)
		if (conf_keys[i].def &&
		    config_set(c, conf_keys[i].name, conf_keys[i].def, err, sizeof(err)) < 0)
			log_error("conf_keys.def: default of %s: %s", conf_keys[i].name, err);
	if (gethostname(c->node_name, sizeof(c->node_name)) < 0)
		snprintf(c->node_name, sizeof(c->node_name), "localhost");
	c->node_name[sizeof(c->node_name) - 1] = '\0';
}

/* const char *FN(int v): the name of value v in the enum table NAMES. */
#define CONFIG_NAME_FN(FN, NAMES)                                                                  \
	const char *FN(int v)                                                                      \
	{                                                                                          \
		return conf_enum_name(NAMES, v);                                                   \
	}

CONFIG_NAME_FN(config_gpu_policy_name, conf_gpu_policy_names)
CONFIG_NAME_FN(config_freezer_name, conf_freezer_names)
CONFIG_NAME_FN(config_isolate_name, conf_isolate_names)
CONFIG_NAME_FN(config_sign_name, conf_sign_names)
CONFIG_NAME_FN(config_settle_name, conf_settle_names)
CONFIG_NAME_FN(config_require_clocks_name, conf_require_clocks_names)

int config_set(struct krexd_config *c, const char *key, const char *v, char *err, size_t errlen)
{
	const struct conf_key *k;
	unsigned gi;
	size_t i;

	k = conf_key_find(key, &gi);
	if (!k) {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	i = (size_t)(k - conf_keys);
	if (config_store(k, (char *)c + fields[i].off + gi * fields[i].len, fields[i].len, v) < 0) {
		conf_key_error(err, errlen, key, v);
		return -1;
	}
	return 0;
}

int config_kv(const char *key, const char *value, void *ctx, char *err, size_t errlen)
{
	return config_set(ctx, key, value, err, errlen);
}

int config_load(struct krexd_config *c, const char *path, int missing_ok, char *err, size_t errlen)
{
	return conf_parse_file(path, missing_ok, config_kv, c, err, errlen);
}

int config_apply_live(struct krexd_config *cur, const struct krexd_config *next,
                      void (*report)(const char *key))
{
	struct krexd_config keep = *cur;
	int refused = 0, same;
	const char *a, *b;
	size_t i;

	*cur = *next;
	for (i = 0; i < CONF_KEYS_N; i++) {
		if (conf_keys[i].reload != CONF_FIXED)
			continue;
		a = (const char *)&keep + fields[i].off;
		b = (const char *)next + fields[i].off;
		if (conf_is_text(conf_keys[i].type))
			same = strcmp(a, b) == 0;
		else
			same = memcmp(a, b, fields[i].len) == 0;
		if (same)
			continue;
		memcpy((char *)cur + fields[i].off, a, fields[i].len);
		report(conf_keys[i].name);
		refused++;
	}
	return refused;
}
