/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_keys.c - the values of krexd.conf keys, checked in one place
 * (conf_keys.h).
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
#include "timeutil.h"

const char *const conf_freezer_names[] = {"auto", "cgroup2", "cgroup1", "signal", NULL};
const char *const conf_isolate_names[] = {"participants", "node", "none", NULL};
const char *const conf_sign_names[] = {"munge", "off", NULL};

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

int conf_parse_duration(const char *v, uint64_t *ns)
{
	uint64_t d;

	if (time_parse_duration(v, NS_PER_MS, &d) < 0 || d < NS_PER_MS || d > 86400 * NS_PER_S)
		return -1;
	*ns = d;
	return 0;
}

int conf_parse_queue_time(const char *v, uint64_t *ns)
{
	uint64_t d;

	if (time_parse_duration(v, NS_PER_MS, &d) < 0 ||
	    (d != 0 && (d < 10 * 1000 || d > NS_PER_S)))
		return -1;
	*ns = d;
	return 0;
}

int conf_parse_chain(const char *v, uint64_t *ns)
{
	uint64_t d;

	if (time_parse_duration(v, NS_PER_MS, &d) < 0 || d > KREX_MAX_CHAIN_MS * NS_PER_MS)
		return -1;
	*ns = d;
	return 0;
}

int conf_parse_queue_cap(const char *v, unsigned *cap)
{
	uint64_t u;

	if (conf_parse_uint(v, 0, 1000000, &u) < 0)
		return -1;
	*cap = (unsigned)u;
	return 0;
}

int conf_parse_share(const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !(d > 0.0 && d <= 1.0))
		return -1;
	*out = d;
	return 0;
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

int conf_parse_history(const char *v, unsigned *n)
{
	uint64_t u;

	if (conf_parse_uint(v, 0, KREX_MAX_HISTORY, &u) < 0)
		return -1;
	*n = (unsigned)u;
	return 0;
}

int conf_parse_log_max(const char *v, uint64_t *bytes)
{
	uint64_t u;

	if (conf_parse_size(v, 0, 1ULL << 30, &u) < 0 || (u != 0 && u < 4096))
		return -1;
	*bytes = u;
	return 0;
}

int conf_parse_log_keep(const char *v, unsigned *n)
{
	uint64_t u;

	if (conf_parse_uint(v, 0, 100, &u) < 0)
		return -1;
	*n = (unsigned)u;
	return 0;
}

int conf_check_subtree(const char *v)
{
	return v[0] && v[0] != '/' && !strstr(v, "..") ? 0 : -1;
}

static int check_duration(const char *v)
{
	uint64_t ns;

	return conf_parse_duration(v, &ns);
}

static int check_chain(const char *v)
{
	uint64_t ns;

	return conf_parse_chain(v, &ns);
}

static int check_queue_time(const char *v)
{
	uint64_t ns;

	return conf_parse_queue_time(v, &ns);
}

static int check_queue_cap(const char *v)
{
	unsigned cap;

	return conf_parse_queue_cap(v, &cap);
}

static int check_freezer(const char *v)
{
	int i;

	return conf_parse_enum(v, conf_freezer_names, &i);
}

static int check_isolate(const char *v)
{
	int i;

	return conf_parse_enum(v, conf_isolate_names, &i);
}

static int check_sign(const char *v)
{
	int i;

	return conf_parse_enum(v, conf_sign_names, &i);
}

static int check_share(const char *v)
{
	double d;

	return conf_parse_share(v, &d);
}

static int check_history(const char *v)
{
	unsigned n;

	return conf_parse_history(v, &n);
}

static int check_log_max(const char *v)
{
	uint64_t u;

	return conf_parse_log_max(v, &u);
}

static int check_log_keep(const char *v)
{
	unsigned n;

	return conf_parse_log_keep(v, &n);
}

static int check_path_or_empty(const char *v)
{
	return v[0] == '\0' || (v[0] == '/' && strlen(v) < 256) ? 0 : -1;
}

static int check_log_level(const char *v)
{
	return log_parse_level(v) < 0 ? -1 : 0;
}

static int check_abspath(const char *v)
{
	return v[0] == '/' ? 0 : -1;
}

static int check_nonempty(const char *v)
{
	return v[0] ? 0 : -1;
}

#define DURATION "a duration from 1ms to 1 day, e.g. 500ms, 2s"

/* The keys whose value is checked on its own (region_cores, topology,
 * gpus and gpuN_pci need krexd's own tables: krexd/config.c). */
static const struct conf_key {
	const char *name;
	int (*check)(const char *v);
	const char *takes;
} keys[] = {
        {"run_dir", check_abspath, "an absolute path"},
        {"max_region", check_duration, DURATION},
        {"drain_timeout", check_duration, DURATION},
        {"freeze_timeout", check_duration, DURATION},
        {"queue_timeout", check_duration, DURATION},
        {"gate_timeout", check_duration, DURATION},
        {"share_window", check_duration, DURATION},
        {"queue_cap", check_queue_cap, "a number of launches from 0 to 1000000"},
        {"chain_max", check_chain, "0 (no chaining), or a duration up to 1m, e.g. 1s"},
        {"chain_gap", check_chain, "0, or a duration up to 1m, e.g. 100ms"},
        {"queue_time", check_queue_time, "0, or a duration from 10us to 1s"},
        {"freezer", check_freezer, "auto, cgroup2, cgroup1 or signal"},
        {"isolate", check_isolate, "participants, node or none"},
        {"max_share", check_share, "a fraction above 0, at most 1"},
        {"log_level", check_log_level, "none, error, warn, info, debug or 0-4"},
        {"node_name", check_nonempty, "a name"},
        {"cgroup_subtree", conf_check_subtree, "a relative path without .."},
        {"history", check_history, "a number of certificates from 0 to 100000"},
        {"region_log", check_path_or_empty, "an absolute path, or empty for none"},
        {"region_log_max", check_log_max, "0, or a size from 4k to 1G, e.g. 10M"},
        {"region_log_keep", check_log_keep, "a number of files from 0 to 100"},
        {"metrics_file", check_path_or_empty, "an absolute path, or empty for none"},
        {"sign", check_sign, "munge or off"},
        {"munge_socket", check_path_or_empty, "an absolute path, or empty for munge's default"},
};

static const struct conf_key *conf_key_find(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(key, keys[i].name) == 0)
			return &keys[i];
	return NULL;
}

void conf_key_error(char *err, size_t errlen, const char *key, const char *v)
{
	const struct conf_key *k = conf_key_find(key);

	if (k)
		snprintf(err, errlen, "bad value '%s' for key '%s' (%s)", v, key, k->takes);
	else
		snprintf(err, errlen, "bad value '%s' for key '%s'", v, key);
}

int conf_key_check(const char *key, const char *v, char *err, size_t errlen)
{
	const struct conf_key *k = conf_key_find(key);

	if (!k)
		return 1;
	if (k->check(v) < 0) {
		conf_key_error(err, errlen, key, v);
		return -1;
	}
	return 0;
}
