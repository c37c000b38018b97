/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * args.c - plugstack.conf arguments: strict key=value, unknown keys rejected.
 *
 *	required /usr/lib/x86_64-linux-gnu/slurm/spank_krex.so coordinator=spawn gres=shard
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "conf.h"
#include "conf_keys.h"
#include "krex_spank.h"

static int set_str(char *dst, size_t len, const char *key, const char *value, char *err,
                   size_t errlen)
{
	if (xstrcpy(dst, len, value) < 0) {
		xsnprintf(err, errlen, "value of '%s' too long", key);
		return -1;
	}
	return 0;
}

/* Every value the plugin passes on fits its passed[] slot. */
#define KEY(name, type, field, lo, hi, def, flags, plugin, takes)                                  \
	_Static_assert((plugin) <= SPANK_PASSED_LEN, "conf_keys.def: " #name "'s plugin column");
#include "conf_keys.def"
#undef KEY

/* Strict value checks here, so a typo fails at srun time on every node
 * instead of when krexd starts. */
static int args_kv(const char *key, const char *value, void *ctx, char *err, size_t errlen)
{
	struct spank_args *a = ctx;
	size_t i;

	if (!strcmp(key, "run_dir"))
		return set_str(a->run_dir, sizeof(a->run_dir), key, value, err, errlen);
	if (!strcmp(key, "socket"))
		return set_str(a->socket, sizeof(a->socket), key, value, err, errlen);
	if (!strcmp(key, "krexd"))
		return set_str(a->krexd, sizeof(a->krexd), key, value, err, errlen);
	if (!strcmp(key, "gate"))
		return set_str(a->gate, sizeof(a->gate), key, value, err, errlen);
	if (!strcmp(key, "gres"))
		return set_str(a->gres, sizeof(a->gres), key, value, err, errlen);
	if (!strcmp(key, "summary")) {
		if (conf_parse_bool(value, &a->summary) < 0) {
			xsnprintf(err, errlen, "summary must be yes or no, not '%s'", value);
			return -1;
		}
		return 0;
	}
	if (!strcmp(key, "coordinator")) {
		if (strcmp(value, "spawn") && strcmp(value, "external")) {
			xsnprintf(err, errlen, "coordinator must be spawn or external, not '%s'",
			          value);
			return -1;
		}
		a->external = !strcmp(value, "external");
		return 0;
	}
	/* The krexd.conf keys it passes on to krexd (slurmd.c), checked as krexd
	 * checks them (common/conf_keys.c), with krexd's text. */
	for (i = 0; i < CONF_KEYS_N; i++) {
		if (!conf_keys[i].plugin || strcmp(key, conf_keys[i].name))
			continue;
		if (conf_key_check(key, value, err, errlen) < 0)
			return -1;
		return set_str(a->passed[i], conf_keys[i].plugin, key, value, err, errlen);
	}
	xsnprintf(err, errlen, "unknown plugstack argument '%s'", key);
	return -1;
}

int args_parse(struct spank_args *a, int ac, char **av)
{
	char err[256];
	int i;

	memset(a, 0, sizeof(*a));
	xstrcpy(a->run_dir, sizeof(a->run_dir), KREX_RUNDIR "/%n");
	a->socket[0] = '\0';
	a->external = 0;
	a->summary = 1;
	xstrcpy(a->krexd, sizeof(a->krexd), KREX_SBINDIR "/krexd");
	xstrcpy(a->gate, sizeof(a->gate), KREX_LIBDIR "/libkrexgate.so");
	xstrcpy(a->gres, sizeof(a->gres), "shard");
	for (i = 0; i < ac; i++) {
		if (conf_parse_arg(av[i], args_kv, a, err, sizeof(err)) < 0) {
			slurm_error("krex: %s", err);
			return -1;
		}
	}
	return 0;
}

int args_expand(char *out, size_t len, const char *fmt, const char *node)
{
	size_t n = 0, l;
	const char *p;

	for (p = fmt; *p; p++) {
		if (p[0] == '%' && p[1] == 'n') {
			l = strlen(node);
			if (n + l >= len)
				goto toolong;
			memcpy(out + n, node, l);
			n += l;
			p++;
			continue;
		}
		if (n + 1 >= len)
			goto toolong;
		out[n++] = *p;
	}
	out[n] = '\0';
	return 0;
toolong:
	errno = ENAMETOOLONG;
	return -1;
}

int args_paths(const struct spank_args *a, const char *node, char *run_dir, char *sock, size_t len)
{
	if (args_expand(run_dir, len, a->run_dir, node) < 0)
		return -1;
	if (a->socket[0])
		return args_expand(sock, len, a->socket, node);
	return xsnprintf(sock, len, "%s/%s", run_dir, KREX_SOCKET_NAME);
}
