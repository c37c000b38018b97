/*
 * args.c - plugstack.conf arguments: strict key=value, unknown keys rejected.
 *
 *	required /usr/lib/x86_64-linux-gnu/slurm/spank_krex.so coordinator=spawn gres=shard
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "conf.h"
#include "krex_spank.h"
#include "timeutil.h"

static int set_str(char *dst, size_t len, const char *key, const char *value, char *err,
                   size_t errlen)
{
	if (xstrcpy(dst, len, value) < 0) {
		xsnprintf(err, errlen, "value of '%s' too long", key);
		return -1;
	}
	return 0;
}

static int set_duration(char *dst, size_t len, const char *key, const char *value, char *err,
                        size_t errlen)
{
	uint64_t ns;

	if (time_parse_duration(value, NS_PER_MS, &ns) < 0) {
		xsnprintf(err, errlen, "'%s=%s' is not a duration (e.g. 500ms, 2s)", key, value);
		return -1;
	}
	return set_str(dst, len, key, value, err, errlen);
}

/* Strict value checks here, so a typo fails at srun time on every node
 * instead of when krexd starts. */
static int args_kv(const char *key, const char *value, void *ctx, char *err, size_t errlen)
{
	struct spank_args *a = ctx;
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
	if (!strcmp(key, "coordinator")) {
		if (strcmp(value, "spawn") && strcmp(value, "external")) {
			xsnprintf(err, errlen, "coordinator must be spawn or external, not '%s'",
			          value);
			return -1;
		}
		a->external = !strcmp(value, "external");
		return 0;
	}
	if (!strcmp(key, "cgroup_subtree")) {
		if (!value[0] || value[0] == '/' || strstr(value, "..")) {
			xsnprintf(err, errlen, "cgroup_subtree must be a relative path, not '%s'",
			          value);
			return -1;
		}
		return set_str(a->cgroup_subtree, sizeof(a->cgroup_subtree), key, value, err,
		               errlen);
	}
	if (!strcmp(key, "queue_cap")) {
		uint64_t u;

		if (conf_parse_uint(value, 0, 1000000, &u) < 0) {
			xsnprintf(err, errlen, "queue_cap must be a number of launches, not '%s'",
			          value);
			return -1;
		}
		return set_str(a->queue_cap, sizeof(a->queue_cap), key, value, err, errlen);
	}
	if (!strcmp(key, "queue_time"))
		return set_duration(a->queue_time, sizeof(a->queue_time), key, value, err, errlen);
	if (!strcmp(key, "max_region"))
		return set_duration(a->max_region, sizeof(a->max_region), key, value, err, errlen);
	if (!strcmp(key, "drain_timeout"))
		return set_duration(a->drain_timeout, sizeof(a->drain_timeout), key, value, err,
		                    errlen);
	if (!strcmp(key, "isolate")) {
		if (strcmp(value, "participants") && strcmp(value, "node") &&
		    strcmp(value, "none")) {
			xsnprintf(err, errlen,
			          "isolate must be participants, node or none, not '%s'", value);
			return -1;
		}
		return set_str(a->isolate, sizeof(a->isolate), key, value, err, errlen);
	}
	if (!strcmp(key, "freezer")) {
		if (strcmp(value, "auto") && strcmp(value, "cgroup2") && strcmp(value, "cgroup1") &&
		    strcmp(value, "signal")) {
			xsnprintf(err, errlen,
			          "freezer must be auto, cgroup2, cgroup1 or signal, not '%s'",
			          value);
			return -1;
		}
		return set_str(a->freezer, sizeof(a->freezer), key, value, err, errlen);
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
