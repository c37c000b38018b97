/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_keys.c - the krexd.conf keys of conf_keys.def: their table, and the
 * one reader and check of each type (conf_keys.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "defs.h"
#include "conf_keys.h"
#include "log.h"
#include "proto.h"
#include "timeutil.h"

const char *const conf_freezer_names[] = {"auto", "cgroup2", "cgroup1", "signal", NULL};
const char *const conf_isolate_names[] = {"participants", "node", "none", NULL};
const char *const conf_sign_names[] = {"munge", "off", NULL};
const char *const conf_settle_names[] = {"wait", "mark", "off", NULL};
const char *const conf_require_clocks_names[] = {"auto", "yes", "no", NULL};
const char *const conf_favordynmods_names[] = {"no", "yes", NULL};
const char *const conf_gpu_policy_names[] = {"configured", "step", "open", NULL};

/* The names column: only the enums have one. */
#define CONF_NAMES_ENUM(name) conf_##name##_names
#define CONF_NAMES_ENUMYN(name) conf_##name##_names
#define CONF_NAMES_DUR(name) NULL
#define CONF_NAMES_DUR0(name) NULL
#define CONF_NAMES_UINT(name) NULL
#define CONF_NAMES_U64(name) NULL
#define CONF_NAMES_SIZE0(name) NULL
#define CONF_NAMES_LEVEL(name) NULL
#define CONF_NAMES_PCT(name) NULL
#define CONF_NAMES_FRAC(name) NULL
#define CONF_NAMES_PATH(name) NULL
#define CONF_NAMES_PATH0(name) NULL
#define CONF_NAMES_STR(name) NULL
#define CONF_NAMES_NAME(name) NULL
#define CONF_NAMES_SUBTREE(name) NULL
#define CONF_NAMES_GPUS(name) NULL
#define CONF_NAMES_PCI(name) NULL

const struct conf_key conf_keys[CONF_KEYS_N] = {
#define KEY(name, type, field, lo, hi, def, flags, plugin, takes)                                  \
	{#name, CONF_##type, lo, hi, CONF_NAMES_##type(name), def, CONF_##flags, plugin, takes},
#include "conf_keys.def"
#undef KEY
};

int conf_parse_enum(const char *v, const char *const *names, int *out)
{
	int i;

	for (i = 0; names[i]; i++)
		if (strcmp(v, names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -1;
}

const char *conf_enum_name(const char *const *names, int i)
{
	int n;

	for (n = 0; names[n]; n++)
		;
	return i >= 0 && i < n ? names[i] : "?";
}

int conf_parse_size(const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
	char num[32];
	size_t n = strlen(v);
	unsigned shift = 0;
	uint64_t u;

	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, v, n + 1);
	switch (num[n - 1]) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	}
	if (shift)
		num[n - 1] = '\0';
	if (conf_parse_uint(num, 0, UINT64_MAX >> 30, &u) < 0)
		return -1;
	u <<= shift;
	if (u < min || u > max)
		return -1;
	*out = u;
	return 0;
}

/* A double in [lo, hi] (PCT: a '%' may follow) or (lo, hi] (FRAC). */
static int parse_double(const struct conf_key *k, const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (k->type == CONF_PCT && end != v && *end == '%')
		end++;
	if (errno || end == v || *end)
		return -1;
	if (k->type == CONF_PCT ? !(d >= (double)k->lo && d <= (double)k->hi)
	                        : !(d > (double)k->lo && d <= (double)k->hi))
		return -1;
	*out = d;
	return 0;
}

/* The numbers: durations, counts and sizes, within the row's range. */
static int parse_number(const struct conf_key *k, const char *v, uint64_t *out)
{
	uint64_t u;

	switch (k->type) {
	case CONF_DUR:
	case CONF_DUR0:
		if (time_parse_duration(v, NS_PER_MS, &u) < 0)
			return -1;
		break;
	case CONF_SIZE0:
		if (conf_parse_size(v, 0, k->hi, &u) < 0)
			return -1;
		break;
	default:
		return conf_parse_uint(v, k->lo, k->hi, out);
	}
	if ((k->type == CONF_DUR || u != 0) && (u < k->lo || u > k->hi))
		return -1;
	*out = u;
	return 0;
}

/* The texts: checked here; krexd checks them against its field's size too. */
static int check_text(const struct conf_key *k, const char *v)
{
	char items[KREX_MAX_GPUS][KREX_MAX_GPU_NAME + 1];

	switch (k->type) {
	case CONF_PATH:
		return v[0] == '/' ? 0 : -1;
	case CONF_PATH0:
		return v[0] == '\0' || (v[0] == '/' && strlen(v) < k->hi) ? 0 : -1;
	case CONF_NAME:
		return v[0] ? 0 : -1;
	case CONF_SUBTREE:
		return v[0] && v[0] != '/' && !strstr(v, "..") ? 0 : -1;
	case CONF_GPUS:
		return v[0] == '\0' || conf_split_list(v, &items[0][0], sizeof(items[0]),
		                                       (int)k->hi) >= 0
		               ? 0
		               : -1;
	case CONF_PCI:
		return strlen(v) < k->hi && strchr(v, ':') ? 0 : -1;
	default:
		return 0; /* CONF_STR: any text */
	}
}

int conf_key_parse(const struct conf_key *k, const char *v, union conf_value *out)
{
	switch (k->type) {
	case CONF_UINT:
		if (parse_number(k, v, &out->u) < 0)
			return -1;
		out->ui = (unsigned)out->u;
		return 0;
	case CONF_DUR:
	case CONF_DUR0:
	case CONF_U64:
	case CONF_SIZE0:
		return parse_number(k, v, &out->u);
	case CONF_ENUMYN:
		if (!strcmp(v, "true") || !strcmp(v, "1"))
			v = "yes";
		else if (!strcmp(v, "false") || !strcmp(v, "0"))
			v = "no";
		/* fall through */
	case CONF_ENUM:
		return conf_parse_enum(v, k->names, &out->i);
	case CONF_LEVEL:
		out->i = log_parse_level(v);
		return out->i < 0 ? -1 : 0;
	case CONF_PCT:
	case CONF_FRAC:
		return parse_double(k, v, &out->d);
	default:
		return check_text(k, v);
	}
}

const struct conf_key *conf_key_find(const char *key, unsigned *index)
{
	unsigned gi;
	int n = 0;
	size_t i;

	*index = 0;
	for (i = 0; i < CONF_KEYS_N; i++) {
		if (conf_keys[i].type != CONF_PCI) {
			if (strcmp(key, conf_keys[i].name) == 0)
				return &conf_keys[i];
			continue;
		}
		/* gpuN_pci: N from 0 to the gate page's last slot */
		if (sscanf(key, "gpu%u_pci%n", &gi, &n) == 1 && key[n] == '\0' &&
		    gi < KREX_MAX_GPUS) {
			*index = gi;
			return &conf_keys[i];
		}
	}
	return NULL;
}

void conf_key_error(char *err, size_t errlen, const char *key, const char *v)
{
	unsigned gi;
	const struct conf_key *k = conf_key_find(key, &gi);

	if (k && k->takes)
		snprintf(err, errlen, "bad value '%s' for key '%s' (%s)", v, key, k->takes);
	else
		snprintf(err, errlen, "bad value '%s' for key '%s'", v, key);
}

int conf_key_check(const char *key, const char *v, char *err, size_t errlen)
{
	union conf_value val;
	unsigned gi;
	const struct conf_key *k = conf_key_find(key, &gi);

	if (!k)
		return 1;
	if (conf_key_parse(k, v, &val) < 0) {
		conf_key_error(err, errlen, key, v);
		return -1;
	}
	return 0;
}
