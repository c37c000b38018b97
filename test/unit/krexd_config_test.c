/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krexd_config_test.c - krexd.conf keys: defaults, every key, errors with
 * file:line, and which keys a reload may change.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krexd_config.h"
#include "log.h"
#include "tap.h"
#include "timeutil.h"

static int refused;
static char refused_key[64];

static void report(const char *key)
{
	refused++;
	snprintf(refused_key, sizeof(refused_key), "%s", key);
}

static int load_text(struct krexd_config *c, const char *text, char *err, size_t len)
{
	char path[] = "/tmp/krexd-conf-XXXXXX";
	int fd = mkstemp(path), rc;

	write(fd, text, strlen(text));
	close(fd);
	rc = config_load(c, path, 0, err, len);
	unlink(path);
	return rc;
}

int main(void)
{
	struct krexd_config c, n;
	char err[512];

	plan(38);
	config_defaults(&c);
	ok(!strcmp(c.run_dir, KREX_DEFAULT_RUNDIR), "default run_dir");
	ok(c.max_region_ns == 60 * NS_PER_S, "default max_region");
	ok(c.drain_timeout_ns == KREX_DEFAULT_DRAIN_TIMEOUT_MS * NS_PER_MS &&
	           c.freeze_timeout_ns == 1000 * NS_PER_MS &&
	           c.queue_timeout_ns == KREX_DEFAULT_QUEUE_TIMEOUT_MS * NS_PER_MS &&
	           c.gate_timeout_ns == KREX_DEFAULT_GATE_TIMEOUT_MS * NS_PER_MS,
	   "default timeouts from defs.h");
	ok(c.freezer == FREEZER_AUTO && c.isolate == ISOLATE_PARTICIPANTS && c.max_share == 1.0,
	   "default freezer auto, isolate participants, max_share off");
	ok(!strcmp(c.cgroup_subtree, "krex") && c.node_name[0], "default subtree and node name");
	ok(c.queue_cap == 2 && c.queue_time_ns == (uint64_t)1000 * 1000,
	   "default queue_cap and queue_time from defs.h");

	ok(load_text(
	           &c,
	           "# a comment\n"
	           "run_dir = /tmp/kx\nmax_region = 2s\ndrain_timeout = 250\n"
	           "freeze_timeout = 1500ms\nqueue_timeout = 1m\ngate_timeout = 30s\n"
	           "queue_cap = 8\nqueue_time = 250us\nfreezer = cgroup1\nisolate = node\nregion_cores = 0-3\n"
	           "topology = synthetic:pack:1 core:4\ngpus = g0,g1\nmax_share = 0.5\n"
	           "share_window = 10s\nlog_level = debug\nnode_name = n1\n"
	           "cgroup_subtree = krex/t1\n",
	           err, sizeof(err)) == 0,
	   "every key parses (%s)", err);
	ok(!strcmp(c.run_dir, "/tmp/kx") && c.max_region_ns == 2 * NS_PER_S, "run_dir, max_region");
	ok(c.drain_timeout_ns == 250 * NS_PER_MS, "a bare number is milliseconds");
	ok(c.freeze_timeout_ns == 1500 * NS_PER_MS && c.queue_timeout_ns == 60 * NS_PER_S &&
	           c.gate_timeout_ns == 30 * NS_PER_S,
	   "durations with units");
	ok(c.queue_cap == 8 && c.queue_time_ns == 250 * 1000 && c.freezer == FREEZER_CGROUP1 &&
	           c.isolate == ISOLATE_NODE,
	   "queue_cap, queue_time, freezer, isolate");
	ok(!strcmp(c.region_cores, "0-3") && !strcmp(c.topology, "synthetic:pack:1 core:4"),
	   "region_cores and topology stored");
	ok(!strcmp(c.gpus, "g0,g1") && c.max_share == 0.5 && c.share_window_ns == 10 * NS_PER_S,
	   "gpus, max_share, share_window");
	ok(c.log_level == LOG_LVL_DEBUG && !strcmp(c.node_name, "n1") &&
	           !strcmp(c.cgroup_subtree, "krex/t1"),
	   "log_level, node_name, cgroup_subtree");

	config_defaults(&c);
	ok(load_text(&c, "max_region = 1s\n\nbogus = 1\n", err, sizeof(err)) < 0 &&
	           strstr(err, ":3: unknown key 'bogus'"),
	   "unknown key rejected with file:line (%s)", err);
	ok(config_set(&c, "freezer", "magic", err, sizeof(err)) < 0 && strstr(err, "freezer"),
	   "bad enum value rejected");
	ok(config_set(&c, "max_region", "soon", err, sizeof(err)) < 0, "bad duration rejected");
	ok(config_set(&c, "queue_time", "0", err, sizeof(err)) == 0 && c.queue_time_ns == 0,
	   "queue_time 0: by launch count only");
	ok(config_set(&c, "queue_time", "5us", err, sizeof(err)) < 0 &&
	           config_set(&c, "queue_time", "2s", err, sizeof(err)) < 0 && c.queue_time_ns == 0,
	   "queue_time under 10 us or over 1 s rejected, value kept");
	ok(config_set(&c, "max_share", "1.5", err, sizeof(err)) < 0 &&
	           config_set(&c, "max_share", "0", err, sizeof(err)) < 0,
	   "max_share outside (0,1] rejected");
	ok(config_set(&c, "run_dir", "relative", err, sizeof(err)) < 0 &&
	           config_set(&c, "cgroup_subtree", "../up", err, sizeof(err)) < 0,
	   "relative run_dir and a subtree with .. rejected");
	ok(config_set(&c, "gpus", "a,b", err, sizeof(err)) == 0 &&
	           config_set(
	                   &c, "gpus",
	                   "a,this-name-is-longer-than-sixty-three-bytes-which-is-the-gpu-name-limit",
	                   err, sizeof(err)) < 0,
	   "gpus list checked (a name over the limit rejected)");
	config_defaults(&c);
	ok(c.settle == SETTLE_WAIT && c.settle_timeout_ns == 750 * NS_PER_MS &&
	           c.clock_tolerance == 1.0 && c.require_clocks == REQUIRE_CLOCKS_AUTO,
	   "settle defaults: wait, 750 ms, 1 %%, require_clocks auto");
	ok(config_set(&c, "settle", "mark", err, sizeof(err)) == 0 && c.settle == SETTLE_MARK &&
	           config_set(&c, "settle", "off", err, sizeof(err)) == 0 &&
	           c.settle == SETTLE_OFF &&
	           config_set(&c, "settle", "sometimes", err, sizeof(err)) < 0 &&
	           c.settle == SETTLE_OFF,
	   "settle = wait|mark|off, anything else rejected");
	ok(config_set(&c, "settle_timeout", "3s", err, sizeof(err)) < 0 &&
	           config_set(&c, "settle_timeout", "200ms", err, sizeof(err)) == 0 &&
	           c.settle_timeout_ns == 200 * NS_PER_MS,
	   "settle_timeout over 2 s rejected");
	ok(c.sign == SIGN_MUNGE && !c.munge_socket[0] && c.sign_ttl == 0 &&
	           c.sign_timeout_ns == 2000 * NS_PER_MS,
	   "sign defaults: munge, munge's default socket, munged's maximum ttl, 2 s");
	ok(config_set(&c, "sign", "off", err, sizeof(err)) == 0 && c.sign == SIGN_OFF &&
	           config_set(&c, "sign", "gpg", err, sizeof(err)) < 0 &&
	           config_set(&c, "munge_socket", "rel/sock", err, sizeof(err)) < 0 &&
	           config_set(&c, "munge_socket", "/run/m.sock", err, sizeof(err)) == 0 &&
	           config_set(&c, "sign_ttl", "-1", err, sizeof(err)) < 0 &&
	           config_set(&c, "sign_ttl", "60", err, sizeof(err)) == 0 && c.sign_ttl == 60 &&
	           config_set(&c, "sign_timeout", "11s", err, sizeof(err)) < 0 &&
	           config_set(&c, "sign_timeout", "500ms", err, sizeof(err)) == 0 &&
	           c.sign_timeout_ns == 500 * NS_PER_MS,
	   "sign = munge|off, munge_socket absolute, sign_ttl >= 0, sign_timeout at most 10 s");
	ok(config_set(&c, "clock_tolerance", "2.5%", err, sizeof(err)) == 0 &&
	           c.clock_tolerance == 2.5 &&
	           config_set(&c, "clock_tolerance", "60", err, sizeof(err)) < 0 &&
	           config_set(&c, "clock_tolerance", "-1", err, sizeof(err)) < 0 &&
	           c.clock_tolerance == 2.5,
	   "clock_tolerance 0-50 %%, with or without %%");
	ok(config_set(&c, "require_clocks", "yes", err, sizeof(err)) == 0 &&
	           c.require_clocks == REQUIRE_CLOCKS_YES &&
	           config_set(&c, "require_clocks", "no", err, sizeof(err)) == 0 &&
	           c.require_clocks == REQUIRE_CLOCKS_NO &&
	           config_set(&c, "require_clocks", "maybe", err, sizeof(err)) < 0,
	   "require_clocks = auto|yes|no");
	ok(c.gpu_policy == GPU_POLICY_CONFIGURED && c.max_conns_per_uid == 256 &&
	           c.max_buffer_per_uid == 8388608 && c.region_time_per_uid == 0 &&
	           c.reserve_fds == KREX_DEFAULT_RESERVE_FDS,
	   "limit defaults");
	ok(config_set(&c, "gpu_policy", "step", err, sizeof(err)) == 0 &&
	           c.gpu_policy == GPU_POLICY_STEP &&
	           config_set(&c, "gpu_policy", "anyone", err, sizeof(err)) < 0,
	   "gpu_policy: step taken, an unknown policy rejected");
	ok(config_set(&c, "max_conns_per_uid", "0", err, sizeof(err)) < 0 &&
	           config_set(&c, "max_buffer_per_uid", "1000", err, sizeof(err)) < 0 &&
	           config_set(&c, "conn_buffer", "100", err, sizeof(err)) < 0 &&
	           config_set(&c, "max_parts_per_uid", "10", err, sizeof(err)) == 0 &&
	           c.max_parts_per_uid == 10,
	   "per-uid limits: 0 and sizes under one frame rejected");
	ok(config_set(&c, "region_time_per_uid", "30s", err, sizeof(err)) == 0 &&
	           c.region_time_per_uid == 30 * NS_PER_S &&
	           config_set(&c, "region_time_per_uid", "2m", err, sizeof(err)) < 0 &&
	           config_set(&c, "region_time_per_uid", "nan", err, sizeof(err)) < 0 &&
	           c.region_time_per_uid == 30 * NS_PER_S,
	   "region_time_per_uid: at most a minute, nan rejected");
	ok(c.max_gpus_per_uid == 8 &&
	           config_set(&c, "max_gpus_per_uid", "0", err, sizeof(err)) == 0 &&
	           c.max_gpus_per_uid == 0 &&
	           config_set(&c, "max_gpus_per_uid", "65", err, sizeof(err)) < 0 &&
	           config_set(&c, "max_gpus_per_uid", "64", err, sizeof(err)) == 0,
	   "max_gpus_per_uid: default 8, 0 to the table's 64");
	config_defaults(&c);
	ok(c.chain_max_ns == 1000 * NS_PER_MS && c.chain_gap_ns == 100 * NS_PER_MS &&
	           config_set(&c, "chain_max", "0", err, sizeof(err)) == 0 && c.chain_max_ns == 0 &&
	           config_set(&c, "chain_gap", "250ms", err, sizeof(err)) == 0 &&
	           c.chain_gap_ns == 250 * NS_PER_MS &&
	           config_set(&c, "chain_max", "2m", err, sizeof(err)) < 0 &&
	           strstr(err, "up to 1m") &&
	           config_set(&c, "chain_gap", "-1", err, sizeof(err)) < 0 &&
	           config_set(&c, "chain_max", "2s", err, sizeof(err)) == 0 &&
	           c.chain_max_ns == 2 * NS_PER_S && c.chain_gap_ns == 250 * NS_PER_MS,
	   "chain_max, chain_gap: defaults, 0 allowed, at most a minute, negative rejected");

	config_defaults(&c);
	n = c;
	n.max_region_ns = 5 * NS_PER_S;
	n.freezer = FREEZER_SIGNAL;
	ok(config_apply_live(&c, &n, report) == 1 && !strcmp(refused_key, "freezer"),
	   "reload: freezer cannot change live, reported");
	ok(c.max_region_ns == 5 * NS_PER_S && c.freezer == FREEZER_AUTO,
	   "reload: max_region applied, freezer kept");
	n = c;
	snprintf(n.run_dir, sizeof(n.run_dir), "/elsewhere");
	refused = 0;
	ok(config_apply_live(&c, &n, report) == 1 && strcmp(c.run_dir, "/elsewhere"),
	   "reload: run_dir kept");
	return tap_done();
}
