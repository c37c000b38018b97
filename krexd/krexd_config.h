/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h - krexd's configuration: one struct, the file, -o overrides and
 * SIGHUP reload.
 */
#ifndef KREXD_CONFIG_H
#define KREXD_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "defs.h"

enum freezer_kind { FREEZER_AUTO = 0, FREEZER_CGROUP2, FREEZER_CGROUP1, FREEZER_SIGNAL };
enum isolate_mode { ISOLATE_PARTICIPANTS = 0, ISOLATE_NODE, ISOLATE_NONE };
/* settle: wait for the GPU's clock before the grant and judge it, judge it
 * only, or neither (doc/architecture.md "Settle"). */
enum settle_mode { SETTLE_WAIT = 0, SETTLE_MARK, SETTLE_OFF };
enum require_clocks { REQUIRE_CLOCKS_AUTO = 0, REQUIRE_CLOCKS_YES, REQUIRE_CLOCKS_NO };

struct krexd_config {
	char run_dir[256];
	uint64_t max_region_ns;    /* lease cap */
	uint64_t drain_timeout_ns; /* longest wait for DRAIN_ACKs */
	uint64_t freeze_timeout_ns;
	uint64_t freeze_poll_ns; /* the poll interval in a freeze's first 10 ms, 0 = doubling */
	uint64_t
	        queue_timeout_ns; /* longest a begin waits in the queue (when it asks for no less) */
	uint64_t gate_timeout_ns;     /* handed to gates: longest a gated thread waits */
	unsigned queue_cap;           /* launches between gate events, 0 = off (handed to gates) */
	uint64_t queue_time_ns;       /* GPU time a stream may queue, 0 = count only (to gates) */
	int freezer;                  /* enum freezer_kind */
	int isolate;                  /* enum isolate_mode, stored for the isolation work */
	char region_cores[256];       /* stored for the isolation work */
	char topology[512];           /* xml path or synthetic:..., stored for the isolation work */
	char gpus[KREX_MAX_GPUS * 8]; /* comma list seeding the GPU table */
	double max_share;             /* 1.0 = off */
	uint64_t share_window_ns;
	int log_level;           /* enum log_level */
	unsigned sched_priority; /* SCHED_FIFO priority of krexd's main thread, 0 = normal */
	char node_name[64];
	int favordynmods; /* 1: turn the kernel's favordynmods on at start (krexd/cgfavor.c) */
	char cgroup_subtree
	        [128]; /* krexd's cgroups: <root>/<this>/p<ID>; one per krexd on a node */
	char gpu_pci[KREX_MAX_GPUS][16]; /* gpuN_pci: PCI bus id of the node's GPU N, "" unset */
	int settle;                      /* enum settle_mode */
	uint64_t settle_timeout_ns;      /* longest wait for the clock after the freeze */
	uint64_t exit_wait_ns;           /* longest wait for exiting processes to leave the GPU */
	uint64_t
	        ctx_defer_ns; /* longest a region's start waits for siblings' contexts being made */
	double clock_tolerance; /* percent under the nominal SM clock still clean */
	int require_clocks;     /* enum require_clocks: unknown clocks => degraded */
	uint64_t chain_max_ns;  /* longest chain of regions without a thaw, 0 = off */
	uint64_t chain_gap_ns;  /* siblings run this long after a chain is cut */
	/* ---- limits and policy (doc/security.md) ---- */
	int gpu_policy;               /* enum gpu_policy: which GPUs a non-root user may name */
	unsigned max_conns_per_uid;   /* open connections of one uid */
	unsigned max_parts_per_uid;   /* participants of one uid */
	unsigned max_queued_per_uid;  /* regions of one uid queued or held */
	unsigned max_gpus_per_uid;    /* GPU names one uid brought into the table */
	uint64_t max_buffer_per_uid;  /* bytes buffered for one uid (partial frames, replies) */
	uint64_t conn_buffer;         /* replies queued for one connection before it is dropped */
	uint64_t region_time_per_uid; /* region time of one uid per minute, 0 = no cap */
	unsigned reserve_fds;         /* fds kept free for thaws and undos */
	/* ---- what happened (history.c, doc/admin.md) ---- */
	unsigned history;        /* certificates kept in memory for krex log, 0 = none */
	char region_log[256];    /* JSON-lines region log, "" = none */
	uint64_t region_log_max; /* rotate past this many bytes, 0 = never */
	unsigned region_log_keep;
	char metrics_file[256]; /* node_exporter textfile, "" = none */

	/* ---- signed certificates (krexd/sign.c) ---- */
	int sign;                 /* enum sign_mode */
	char munge_socket[256];   /* munged's socket, "" = libmunge's default */
	unsigned sign_ttl;        /* credential time-to-live, seconds; 0 = munged's --max-ttl */
	uint64_t sign_timeout_ns; /* longest a client waits for a signature */
};

enum sign_mode { SIGN_MUNGE = 0, SIGN_OFF };

enum gpu_policy { GPU_POLICY_CONFIGURED = 0, GPU_POLICY_STEP, GPU_POLICY_OPEN };

/* Every default written out. */
void config_defaults(struct krexd_config *c);

/* Set one key; returns 0, or -1 with the reason in err ("unknown key 'x'"). */
int config_set(struct krexd_config *c, const char *key, const char *value, char *err,
               size_t errlen);

/* config_set as a conf_kv_fn (ctx is the struct krexd_config). */
int config_kv(const char *key, const char *value, void *ctx, char *err, size_t errlen);

/* Read path into c (missing_ok: a missing file is no error).  -1 + err names file:line. */
int config_load(struct krexd_config *c, const char *path, int missing_ok, char *err, size_t errlen);

/*
 * Copy the keys of next that can change while krexd runs into cur; for each
 * one that cannot (run_dir, freezer, gpus, node_name,
 * cgroup_subtree, sign, munge_socket) and differs, call
 * report(key).  Returns how many were refused.
 */
int config_apply_live(struct krexd_config *cur, const struct krexd_config *next,
                      void (*report)(const char *key));

const char *config_freezer_name(int kind);
const char *config_isolate_name(int mode);
const char *config_settle_name(int mode);
const char *config_sign_name(int mode);
const char *config_require_clocks_name(int v);
const char *config_gpu_policy_name(int policy);

#endif /* KREXD_CONFIG_H */
