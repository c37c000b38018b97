/*
 * config.c - krexd.conf keys, their defaults and their parsers.
 */
#include "config.h"
#include "krexd_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"
#include "proto.h"
#include "timeutil.h"

void config_defaults(struct krexd_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->run_dir, sizeof(c->run_dir), "%s", KREX_DEFAULT_RUNDIR);
	c->max_region_ns = KREX_DEFAULT_MAX_REGION_MS * NS_PER_MS;
	c->drain_timeout_ns = KREX_DEFAULT_DRAIN_TIMEOUT_MS * NS_PER_MS;
	c->freeze_timeout_ns = KREX_DEFAULT_FREEZE_TIMEOUT_MS * NS_PER_MS;
	c->queue_timeout_ns = KREX_DEFAULT_QUEUE_TIMEOUT_MS * NS_PER_MS;
	c->gate_timeout_ns = KREX_DEFAULT_GATE_TIMEOUT_MS * NS_PER_MS;
	c->queue_cap = KREX_DEFAULT_QUEUE_CAP;
	c->queue_time_ns = (uint64_t)KREX_DEFAULT_QUEUE_US * 1000;
	c->freezer = FREEZER_AUTO;
	c->isolate = ISOLATE_PARTICIPANTS;
	c->region_cores[0] = '\0'; /* "": the owner's allocated cores */
	c->topology[0] = '\0';     /* "": this machine's */
	c->gpus[0] = '\0';
	c->max_share = 1.0; /* off */
	c->share_window_ns = 60 * NS_PER_S;
	c->log_level = LOG_LVL_INFO;
	if (gethostname(c->node_name, sizeof(c->node_name)) < 0)
		snprintf(c->node_name, sizeof(c->node_name), "localhost");
	c->node_name[sizeof(c->node_name) - 1] = '\0';
	snprintf(c->cgroup_subtree, sizeof(c->cgroup_subtree), "%s", KREX_CGROUP_SUBTREE);
	c->gpu_policy = GPU_POLICY_CONFIGURED;
	c->max_conns_per_uid = KREX_DEFAULT_CONNS_PER_UID;
	c->max_parts_per_uid = KREX_DEFAULT_PARTS_PER_UID;
	c->max_queued_per_uid = KREX_DEFAULT_QUEUED_PER_UID;
	c->max_buffer_per_uid = KREX_DEFAULT_BUFFER_PER_UID;
	c->conn_buffer = KREX_DEFAULT_CONN_BUFFER;
	c->region_time_per_uid = 0;
	c->reserve_fds = KREX_DEFAULT_RESERVE_FDS;
}

static const char *const freezer_names[] = {"auto", "cgroup2", "cgroup1", "signal"};
static const char *const isolate_names[] = {"participants", "node", "none"};
static const char *const gpu_policy_names[] = {"configured", "step", "open"};

const char *config_gpu_policy_name(int p)
{
	return p >= 0 && p < 3 ? gpu_policy_names[p] : "?";
}

const char *config_freezer_name(int kind)
{
	return kind >= 0 && kind < 4 ? freezer_names[kind] : "?";
}

const char *config_isolate_name(int mode)
{
	return mode >= 0 && mode < 3 ? isolate_names[mode] : "?";
}

static int parse_enum(const char *v, const char *const *names, int n, int *out)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(v, names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -1;
}

/* A duration of at least 1 ms and at most a day. */
static int parse_dur(const char *v, uint64_t *out)
{
	uint64_t ns;

	if (time_parse_duration(v, NS_PER_MS, &ns) < 0 || ns < NS_PER_MS || ns > 86400 * NS_PER_S)
		return -1;
	*out = ns;
	return 0;
}

static int parse_share(const char *v, double *out)
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

static int parse_uint(const char *v, uint64_t lo, uint64_t hi, unsigned *out)
{
	uint64_t u;

	if (conf_parse_uint(v, lo, hi, &u) < 0)
		return -1;
	*out = (unsigned)u;
	return 0;
}

static int set_str(char *dst, size_t len, const char *v)
{
	return xstrcpy(dst, len, v);
}

int config_set(struct krexd_config *c, const char *key, const char *v, char *err, size_t errlen)
{
	char items[KREX_MAX_GPUS][KREX_MAX_GPU_NAME + 1];
	uint64_t u, ns;
	unsigned gi;
	int rc = -1, lvl, n = 0;

	if (!strcmp(key, "run_dir"))
		rc = v[0] == '/' ? set_str(c->run_dir, sizeof(c->run_dir), v) : -1;
	else if (!strcmp(key, "max_region"))
		rc = parse_dur(v, &c->max_region_ns);
	else if (!strcmp(key, "drain_timeout"))
		rc = parse_dur(v, &c->drain_timeout_ns);
	else if (!strcmp(key, "freeze_timeout"))
		rc = parse_dur(v, &c->freeze_timeout_ns);
	else if (!strcmp(key, "queue_timeout"))
		rc = parse_dur(v, &c->queue_timeout_ns);
	else if (!strcmp(key, "gate_timeout"))
		rc = parse_dur(v, &c->gate_timeout_ns);
	else if (!strcmp(key, "queue_cap")) {
		rc = conf_parse_uint(v, 0, 1000000, &u);
		c->queue_cap = rc ? c->queue_cap : (unsigned)u;
	} else if (!strcmp(key, "queue_time")) {
		/* 0 (launch count only), or 10 us to 1 s; a bare number is ms */
		rc = time_parse_duration(v, NS_PER_MS, &ns);
		if (rc == 0 && ns != 0 && (ns < 10 * 1000 || ns > NS_PER_S))
			rc = -1;
		c->queue_time_ns = rc ? c->queue_time_ns : ns;
	} else if (!strcmp(key, "freezer"))
		rc = parse_enum(v, freezer_names, 4, &c->freezer);
	else if (!strcmp(key, "isolate"))
		rc = parse_enum(v, isolate_names, 3, &c->isolate);
	else if (!strcmp(key, "region_cores"))
		rc = set_str(c->region_cores, sizeof(c->region_cores), v);
	else if (!strcmp(key, "topology"))
		rc = set_str(c->topology, sizeof(c->topology), v);
	else if (sscanf(key, "gpu%u_pci%n", &gi, &n) == 1 && key[n] == '\0' && gi < KREX_MAX_GPUS)
		/* checked as a bus id by hwloc's gpu_probe when the topology loads */
		rc = strlen(v) < sizeof(c->gpu_pci[0]) && strchr(v, ':')
		             ? set_str(c->gpu_pci[gi], sizeof(c->gpu_pci[0]), v)
		             : -1;
	else if (!strcmp(key, "gpus")) {
		rc = v[0] == '\0' ? 0
		                  : (conf_split_list(v, &items[0][0], sizeof(items[0]),
		                                     KREX_MAX_GPUS) < 0
		                             ? -1
		                             : 0);
		if (rc == 0)
			rc = set_str(c->gpus, sizeof(c->gpus), v);
	} else if (!strcmp(key, "max_share"))
		rc = parse_share(v, &c->max_share);
	else if (!strcmp(key, "share_window"))
		rc = parse_dur(v, &c->share_window_ns);
	else if (!strcmp(key, "gpu_policy"))
		rc = parse_enum(v, gpu_policy_names, 3, &c->gpu_policy);
	else if (!strcmp(key, "max_conns_per_uid"))
		rc = parse_uint(v, 1, KREX_MAX_CONNECTIONS, &c->max_conns_per_uid);
	else if (!strcmp(key, "max_parts_per_uid"))
		rc = parse_uint(v, 1, KREX_MAX_PARTICIPANTS, &c->max_parts_per_uid);
	else if (!strcmp(key, "max_queued_per_uid"))
		rc = parse_uint(v, 1, KREX_MAX_PARTICIPANTS, &c->max_queued_per_uid);
	else if (!strcmp(key, "max_buffer_per_uid")) {
		/* at least one whole frame and one whole reply */
		rc = conf_parse_uint(v, 2 * (PROTO_MAX_PAYLOAD + PROTO_HDR_LEN), 1ULL << 32, &u);
		c->max_buffer_per_uid = rc ? c->max_buffer_per_uid : u;
	} else if (!strcmp(key, "conn_buffer")) {
		rc = conf_parse_uint(v, PROTO_MAX_PAYLOAD + PROTO_HDR_LEN, 1ULL << 30, &u);
		c->conn_buffer = rc ? c->conn_buffer : u;
	} else if (!strcmp(key, "region_time_per_uid")) {
		/* 0 = no cap, else 1 ms .. 60 s of region time per minute */
		rc = time_parse_duration(v, NS_PER_MS, &ns);
		if (rc == 0 && ns > 60 * NS_PER_S)
			rc = -1;
		c->region_time_per_uid = rc ? c->region_time_per_uid : ns;
	} else if (!strcmp(key, "reserve_fds"))
		rc = parse_uint(v, 16, 65536, &c->reserve_fds);
	else if (!strcmp(key, "log_level")) {
		lvl = log_parse_level(v);
		rc = lvl < 0 ? -1 : 0;
		c->log_level = rc ? c->log_level : lvl;
	} else if (!strcmp(key, "node_name"))
		rc = v[0] ? set_str(c->node_name, sizeof(c->node_name), v) : -1;
	else if (!strcmp(key, "cgroup_subtree"))
		rc = v[0] && v[0] != '/' && !strstr(v, "..")
		             ? set_str(c->cgroup_subtree, sizeof(c->cgroup_subtree), v)
		             : -1;
	else {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	if (rc < 0)
		snprintf(err, errlen, "bad value '%s' for key '%s'", v, key);
	return rc < 0 ? -1 : 0;
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
	int refused = 0;

	*cur = *next;
#define FIXED_STR(f)                                                                               \
	if (strcmp(keep.f, next->f)) {                                                             \
		memcpy(cur->f, keep.f, sizeof(cur->f));                                            \
		report(#f);                                                                        \
		refused++;                                                                         \
	}
	FIXED_STR(run_dir)
	FIXED_STR(gpus)
	FIXED_STR(node_name)
	FIXED_STR(cgroup_subtree)
#undef FIXED_STR
	if (keep.freezer != next->freezer) {
		cur->freezer = keep.freezer;
		report("freezer");
		refused++;
	}
	return refused;
}
