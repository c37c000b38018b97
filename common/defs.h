/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defs.h - every path, environment variable name and tunable default of KREX
 * in one place (HACKING.md "Style": "All tunables, paths and env-var names in one
 * commented defs header").
 */
#ifndef KREX_DEFS_H
#define KREX_DEFS_H

#include "config.h"

/* ---- paths ------------------------------------------------------------ */

/* krexd's run directory; socket, lock, pid file, state file and gate page
 * live in it.  One directory per node: the SPANK plugin appends the node name
 * when two slurmd share a host. */
#define KREX_DEFAULT_RUNDIR KREX_RUNDIR
#define KREX_SOCKET_NAME "krexd.sock"
#define KREX_LOCK_NAME "krexd.lock"
#define KREX_PIDFILE_NAME "krexd.pid"
#define KREX_STATE_NAME "krexd.state"
#define KREX_GATE_NAME "gate"
#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define KREX_DEFAULT_CONF SYSCONFDIR "/krex/krexd.conf"

/* Embedded mode (`krex run` without a system krexd): a private krexd whose
 * run directory is $XDG_RUNTIME_DIR/krex, or /tmp/krex-UID without it. */
#define KREX_EMBEDDED_SUBDIR "krex"
#define KREX_EMBEDDED_TMP_FMT "/tmp/krex-%u"

/* cgroup subtree krexd owns for participants that have no cgroup of their own. */
#define KREX_CGROUP_SUBTREE "krex"

/* ---- environment -------------------------------------------------------- */

#define KREX_ENV_SOCKET "KREX_SOCKET"           /* path of krexd's socket */
#define KREX_ENV_GPUS "KREX_GPUS"               /* node-wide GPU names, comma separated */
#define KREX_ENV_LOG "KREX_LOG"                 /* gate/libregion log level: error..debug */
#define KREX_ENV_GATE "KREX_GATE"               /* "off" disables the preloaded gate */
#define KREX_ENV_UNPROTECTED "KREX_UNPROTECTED" /* "1": regions without krexd succeed unprotected */
#define KREX_ENV_KREXD "KREX_KREXD"             /* path of krexd for embedded mode */
#define KREX_ENV_SHARED "KREX_SHARED"           /* default of --krex-shared */
#define KREX_ENV_GATE_PATH "KREX_GATE_PATH"     /* the gate preloaded: container hooks mount it */
#define KREX_ENV_JOB "KREX_JOB"                 /* label given by krex run --label */
#define KREX_ENV_GATE_COUNTS                                                                       \
	"KREX_GATE_COUNTS" /* gate: append wrapper-entry counts to this file at exit */
#define KREX_ENV_GATE_TRACE                                                                        \
	"KREX_GATE_TRACE" /* gate: timestamped waits, parks and drains to DIR/trace.PID */
#define KREX_ENV_GATE_CONTEXTS                                                                     \
	"KREX_GATE_CONTEXTS" /* gate: "hold" (default) or "pass" making a GPU context at a closed gate */

/* ---- tunables: the defaults of krexd.conf keys are in conf_keys.def; here
 * those other parts rely on too, and the bounds ------------------------- */

#define KREX_DEFAULT_DRAIN_TIMEOUT_MS 2000 /* drain_timeout */
/* libkrexregion's drain thread calls itself this (the gate's stall snapshot shows it) */
#define KREX_DRAIN_THREAD_NAME "krex-drain"
#define KREX_DEFAULT_QUEUE_TIMEOUT_MS 600000 /* how long a begin may wait in the queue */
#define KREX_DEFAULT_GATE_TIMEOUT_MS 120000  /* longest a gated thread waits before failing open */
#define KREX_MAX_SETTLE_TIMEOUT_MS 2000      /* stays within the client's grant slack */
#define KREX_MAX_CHAIN_MS 60000              /* chain_max and chain_gap: at most a minute */
#define KREX_MAX_SIGN_TIMEOUT_MS 10000       /* stays within the client's reply deadline */
#define KREX_SETTLE_POLL_MS 2                /* NVML poll period while settling */
#define KREX_FREEZE_FAST_MS 10               /* freeze_poll's span in a freeze */
#define KREX_FREEZE_POLL_DUTY 4              /* a freeze poll >= 4x its own cost */
#define KREX_FREEZE_SLOW_MS 5                /* a freeze this long: its laggards logged (debug) */
#define KREX_LAG_FOLLOW 8                    /* laggard tasks followed to the freeze's end */
#define KREX_CLOCK_SAMPLE_MS 20              /* NVML sample period during a region */
#define KREX_DEFAULT_IO_TIMEOUT_MS 5000      /* deadline for one message read or write */
#define KREX_DEFAULT_CONNECT_TIMEOUT_MS 2000

#define KREX_MAX_GPUS 64     /* slots in the gate page */
#define KREX_MAX_GPU_NAME 63 /* bytes of a node-wide GPU name */
#define KREX_MAX_PARTICIPANTS 4096
#define KREX_MAX_CONNECTIONS 8192
#define KREX_DEFAULT_RESERVE_FDS 256 /* reserve_fds: kept free for thaws and undos */

/* What happened (krexd/history.c, doc/admin.md "History, region log, metrics"). */
#define KREX_MAX_HISTORY 100000 /* history: at most this many (about 1 KiB each) */
#define KREX_NOFILE_WANT 65536  /* RLIMIT_NOFILE krexd raises itself to (hard limit permitting) */

#endif /* KREX_DEFS_H */
