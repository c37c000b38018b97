/* SPDX-License-Identifier: BSD-3-Clause */
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
#include "conf_keys.h"
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
	c->settle = SETTLE_WAIT;
	c->settle_timeout_ns = KREX_DEFAULT_SETTLE_TIMEOUT_MS * NS_PER_MS;
	c->clock_tolerance = KREX_DEFAULT_CLOCK_TOLERANCE;
	c->require_clocks = REQUIRE_CLOCKS_AUTO;
	c->chain_max_ns = KREX_DEFAULT_CHAIN_MAX_MS * NS_PER_MS;
	c->chain_gap_ns = KREX_DEFAULT_CHAIN_GAP_MS * NS_PER_MS;
	c->gpu_policy = GPU_POLICY_CONFIGURED;
	c->max_conns_per_uid = KREX_DEFAULT_CONNS_PER_UID;
	c->max_parts_per_uid = KREX_DEFAULT_PARTS_PER_UID;
	c->max_queued_per_uid = KREX_DEFAULT_QUEUED_PER_UID;
	c->max_gpus_per_uid = KREX_DEFAULT_GPUS_PER_UID;
	c->max_buffer_per_uid = KREX_DEFAULT_BUFFER_PER_UID;
	c->conn_buffer = KREX_DEFAULT_CONN_BUFFER;
	c->region_time_per_uid = 0;
	c->reserve_fds = KREX_DEFAULT_RESERVE_FDS;
	c->history = KREX_DEFAULT_HISTORY;
	c->region_log_max = KREX_DEFAULT_REGION_LOG_MAX;
	c->region_log_keep = KREX_DEFAULT_REGION_LOG_KEEP;
	c->sign = SIGN_MUNGE;
	c->munge_socket[0] = '\0';
	c->sign_ttl = 0;
	c->sign_timeout_ns = KREX_DEFAULT_SIGN_TIMEOUT_MS * NS_PER_MS;
}

/* NULL-ended, for conf_parse_enum(); in the order of the enums. */
static const char *const settle_names[] = {"wait", "mark", "off", NULL};
static const char *const require_clocks_names[] = {"auto", "yes", "no", NULL};
static const char *const gpu_policy_names[] = {"configured", "step", "open", NULL};

const char *config_gpu_policy_name(int p)
{
	return p >= 0 && p < 3 ? gpu_policy_names[p] : "?";
}

const char *config_freezer_name(int kind)
{
	return kind >= 0 && kind < 4 ? conf_freezer_names[kind] : "?";
}

const char *config_isolate_name(int mode)
{
	return mode >= 0 && mode < 3 ? conf_isolate_names[mode] : "?";
}

const char *config_sign_name(int mode)
{
	return mode >= 0 && mode < 2 ? conf_sign_names[mode] : "?";
}

const char *config_settle_name(int mode)
{
	return mode >= 0 && mode < 3 ? settle_names[mode] : "?";
}

const char *config_require_clocks_name(int v)
{
	return v >= 0 && v < 3 ? require_clocks_names[v] : "?";
}

/* A percentage, 0 to 50. */
static int parse_percent(const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (end != v && *end == '%')
		end++;
	if (errno || end == v || *end || !(d >= 0.0 && d <= 50.0))
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
	unsigned gi;
	int rc = -1, lvl, n = 0;
	uint64_t ns, u;

	if (!strcmp(key, "run_dir"))
		rc = v[0] == '/' ? set_str(c->run_dir, sizeof(c->run_dir), v) : -1;
	else if (!strcmp(key, "max_region"))
		rc = conf_parse_duration(v, &c->max_region_ns);
	else if (!strcmp(key, "drain_timeout"))
		rc = conf_parse_duration(v, &c->drain_timeout_ns);
	else if (!strcmp(key, "freeze_timeout"))
		rc = conf_parse_duration(v, &c->freeze_timeout_ns);
	else if (!strcmp(key, "queue_timeout"))
		rc = conf_parse_duration(v, &c->queue_timeout_ns);
	else if (!strcmp(key, "gate_timeout"))
		rc = conf_parse_duration(v, &c->gate_timeout_ns);
	else if (!strcmp(key, "queue_cap")) {
		rc = conf_parse_queue_cap(v, &c->queue_cap);
	} else if (!strcmp(key, "queue_time")) {
		rc = conf_parse_queue_time(v, &c->queue_time_ns);
	} else if (!strcmp(key, "freezer"))
		rc = conf_parse_enum(v, conf_freezer_names, &c->freezer);
	else if (!strcmp(key, "isolate"))
		rc = conf_parse_enum(v, conf_isolate_names, &c->isolate);
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
	} else if (!strcmp(key, "settle"))
		rc = conf_parse_enum(v, settle_names, &c->settle);
	else if (!strcmp(key, "settle_timeout")) {
		rc = conf_parse_duration(v, &ns);
		if (rc == 0 && ns > KREX_MAX_SETTLE_TIMEOUT_MS * NS_PER_MS)
			rc = -1;
		c->settle_timeout_ns = rc ? c->settle_timeout_ns : ns;
	} else if (!strcmp(key, "clock_tolerance"))
		rc = parse_percent(v, &c->clock_tolerance);
	else if (!strcmp(key, "require_clocks")) {
		if (!strcmp(v, "true") || !strcmp(v, "1"))
			v = "yes";
		else if (!strcmp(v, "false") || !strcmp(v, "0"))
			v = "no";
		rc = conf_parse_enum(v, require_clocks_names, &c->require_clocks);
	} else if (!strcmp(key, "chain_max"))
		rc = conf_parse_chain(v, &c->chain_max_ns);
	else if (!strcmp(key, "chain_gap"))
		rc = conf_parse_chain(v, &c->chain_gap_ns);
	else if (!strcmp(key, "max_share"))
		rc = conf_parse_share(v, &c->max_share);
	else if (!strcmp(key, "share_window"))
		rc = conf_parse_duration(v, &c->share_window_ns);
	else if (!strcmp(key, "gpu_policy"))
		rc = conf_parse_enum(v, gpu_policy_names, &c->gpu_policy);
	else if (!strcmp(key, "max_conns_per_uid"))
		rc = parse_uint(v, 1, KREX_MAX_CONNECTIONS, &c->max_conns_per_uid);
	else if (!strcmp(key, "max_parts_per_uid"))
		rc = parse_uint(v, 1, KREX_MAX_PARTICIPANTS, &c->max_parts_per_uid);
	else if (!strcmp(key, "max_queued_per_uid"))
		rc = parse_uint(v, 1, KREX_MAX_PARTICIPANTS, &c->max_queued_per_uid);
	else if (!strcmp(key, "max_gpus_per_uid"))
		rc = parse_uint(v, 0, KREX_MAX_GPUS, &c->max_gpus_per_uid);
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
	else if (!strcmp(key, "history"))
		rc = conf_parse_history(v, &c->history);
	else if (!strcmp(key, "region_log"))
		rc = conf_key_check(key, v, err, errlen) == 0
		             ? set_str(c->region_log, sizeof(c->region_log), v)
		             : -1;
	else if (!strcmp(key, "region_log_max"))
		rc = conf_parse_log_max(v, &c->region_log_max);
	else if (!strcmp(key, "region_log_keep"))
		rc = conf_parse_log_keep(v, &c->region_log_keep);
	else if (!strcmp(key, "metrics_file"))
		rc = conf_key_check(key, v, err, errlen) == 0
		             ? set_str(c->metrics_file, sizeof(c->metrics_file), v)
		             : -1;
	else if (!strcmp(key, "sign"))
		rc = conf_parse_enum(v, conf_sign_names, &c->sign);
	else if (!strcmp(key, "munge_socket"))
		rc = conf_key_check(key, v, err, errlen) == 0
		             ? set_str(c->munge_socket, sizeof(c->munge_socket), v)
		             : -1;
	else if (!strcmp(key, "sign_ttl"))
		rc = parse_uint(v, 0, 86400 * 365, &c->sign_ttl);
	else if (!strcmp(key, "sign_timeout")) {
		rc = conf_parse_duration(v, &ns);
		if (rc == 0 && ns > KREX_MAX_SIGN_TIMEOUT_MS * NS_PER_MS)
			rc = -1;
		c->sign_timeout_ns = rc ? c->sign_timeout_ns : ns;
	} else if (!strcmp(key, "log_level")) {
		lvl = log_parse_level(v);
		rc = lvl < 0 ? -1 : 0;
		c->log_level = rc ? c->log_level : lvl;
	} else if (!strcmp(key, "node_name"))
		rc = v[0] ? set_str(c->node_name, sizeof(c->node_name), v) : -1;
	else if (!strcmp(key, "cgroup_subtree"))
		rc = conf_check_subtree(v) == 0
		             ? set_str(c->cgroup_subtree, sizeof(c->cgroup_subtree), v)
		             : -1;
	else {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	if (rc < 0)
		conf_key_error(err, errlen, key, v);
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
	FIXED_STR(munge_socket)
#undef FIXED_STR
	if (keep.sign != next->sign) {
		cur->sign = keep.sign;
		report("sign");
		refused++;
	}
	if (keep.freezer != next->freezer) {
		cur->freezer = keep.freezer;
		report("freezer");
		refused++;
	}
	return refused;
}
