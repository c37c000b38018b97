/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_int.h - the region code's own types and functions, shared by its
 * files (not by the rest of krexd: region.h):
 *   region.c        begin, schedule, chains, the end, ticks, status, events
 *   region_entry.c  close gates, drain, freeze, settle, grant
 *   region_unwind.c isolate and its undo, thaw, the certificate and record
 *   region_clocks.c the clock judge (gpujudge.c's rule)
 *   region_judge.c  the GPU's telemetry, processes, the certificate note
 *   region_exit.c   whether the grant waits for exiting processes (exit_wait)
 * Each file calls only the files below it in this list.
 */
#ifndef KREXD_REGION_INT_H
#define KREXD_REGION_INT_H

#include <stdint.h>
#include <stdio.h>

#include "conn.h"
#include "krexd.h"
#include "part.h"
#include "region.h"
#include "nvml.h"
#include "timeutil.h"

enum phase { PH_QUEUED = 0, PH_DRAIN, PH_FREEZE, PH_SETTLE, PH_HELD };

enum end_why { END_BY_OWNER, END_EXPIRED, END_RELEASED, END_GONE, END_TIMEOUT, END_STOP };

struct sib {
	uint32_t part; /* participant id (0 once it ended) */
	int gate;      /* it had members with a drain thread */
	int pending;   /* acks still due */
	int drain_err; /* an ack said the drain failed */
	int ref;       /* we hold a freeze reference */
	int start;     /* this region starts the freeze (nobody froze it before) */
	int started;   /* the freeze was started (early, or in the batch) */
	int frozen;    /* the kernel said frozen */
	int freeze_err;
	int ext;     /* suspended (by another, or by KREX for another region): no ack awaited */
	int soon;    /* drained: frozen with the others drained this loop turn (sib_freeze_soon) */
	int carried; /* chained: drained and frozen by the previous region, kept frozen */
	int ungated; /* no member with a drain thread when the gates closed: never joined the gate */
	int gate_left;     /* ... and it had one before: its gated processes left (exited) */
	int drain_exiting; /* its ack: KREX_DRAIN_EXITING (its GPU runtime was shutting down) */
	pid_t on_gpu;      /* a process of it NVML listed on the region's GPUs, 0 none */
};

/*
 * Where krexd's own time for one region goes, logged at debug level when it
 * ends ("region N: cost ..."; test/perf/freeze-scale.sh reads it).  The
 * state file counters are krexd's, taken at the close and at the end: a
 * region that overlaps another counts the other's writes too.
 */
struct region_cost {
	uint64_t fz_prepare_ns; /* freeze references, lines, fds (every sibling) */
	uint64_t fz_start_ns;   /* the freeze writes / signals */
	uint64_t fz_poll_ns;    /* reading whether they are frozen */
	unsigned fz_polls;      /* poll rounds until all were frozen */
	unsigned fz_woken;      /* of them, rounds a cgroup.events change began */
	uint64_t undo_ns, thaw_ns;
	unsigned iso_cpuset,
	        iso_affinity;  /* isolation undo lines: cgroups written, processes moved */
	unsigned long writes0; /* state file writes before the close */
	uint64_t write_ns0;
	uint64_t t_unwind; /* the end's start */
	/* krexd's thread waiting for a CPU (run_delay, region_run_delay()), at
	 * the close, the grant, the end's start and around the thaw writes */
	uint64_t rd_close, rd_grant, rd_unwind, rd_thaw;
};

struct gp_result;

struct region {
	struct rq_req rq;
	/* region_defer.c: its first look at a start (0: not yet), its
	 * not_before_ns before that, and whether it waits for contexts now */
	uint64_t defer_t0, defer_nb;
	int deferred;
	uint64_t defer_held;          /* GPUs whose new contexts its wait holds (until its close) */
	uint64_t quota_ns, quota_win; /* region_time_per_uid charged at its start, and when */
	struct conn *conn;            /* requester (NULL once it is gone) */
	uint32_t seq;                 /* of the REGION_BEGIN, for the GRANT */
	uint32_t owner;
	int phase;
	uint32_t close_gen;
	uint64_t t_close, t_freeze, t_iso;
	int soon;       /* a sibling waits for sib_freeze_batch at the end of the turn */
	uint32_t *late; /* participants made while its gates were closed (region_late_part) */
	size_t nlate;
	int late_asked;   /* procs_ticket is region_late_judge()'s list, at the end */
	int late_pending; /* ... asked for once the start's list has come */
	int ctx_held;     /* its GPUs opened with new contexts held (region_ctx_release) */
	uint64_t drain_deadline, freeze_deadline, poll_at, poll_step;
	int fz_slow_told; /* its laggards' tasks were logged (region_freeze_laggards) */
	/* The tasks not frozen at that look, followed to the freeze's end: their
	 * CPU time and their wait for a CPU then (/proc/TID/schedstat). */
	struct lag_task {
		pid_t tid;
		char state; /* at the look: R, D, S..., X exiting */
		uint64_t run_ns, wait_ns;
	} lag[KREX_LAG_FOLLOW];
	unsigned nlag;
	uint64_t t_lag;
	struct sib *sibs;
	size_t nsibs;
	uint64_t *pending; /* conn serials that owe an ack */
	size_t npending;
	char **undo;  /* isolation undo lines, oldest first */
	int *undo_fd; /* what each needs, opened with the change (-1: none) */
	size_t nundo;
	struct krex_certificate cert;
	/* The GPU's state (settle, samples): doc/architecture.md "Settle". */
	uint64_t t_settle, settle_deadline, settle_poll_at, sample_at;
	int clock_wait; /* PH_SETTLE: waits for the GPU's clock (settle = wait) */
	/* The start's process list held back: every process in it that would
	 * make the region degraded was exiting (exit_wait, region_judge.c). */
	int exit_wait;
	uint64_t
	        exit_t0; /* when the settle began to wait for them (the bound's start), 0 not yet */
	unsigned exit_lists; /* lists taken for it */
	/* The start's process list, come before the settle: judged there
	 * (region_start_settle()), once every drain ack is in. */
	struct gp_result *start_res;
	int procs_stale; /* the list on its way was asked before an exiting ack: dropped */
	int32_t busy_min, busy_max; /* SM clock over samples without the idle reason, -1 none */
	int32_t all_min, all_max;   /* over every sample */
	int low_grant;         /* the grant's sample: a busy clock under the tolerance, no reason */
	int low_busy;          /* later: the same (gpujudge.c decides whether a cap explains it) */
	uint32_t cap_samples;  /* samples with sw_power_cap, from the grant on */
	int64_t cap_first_us;  /* grant to the first of them, -1 none */
	int32_t foreign_end;   /* non-participants on the GPUs at the end, -1 unknown */
	uint64_t procs_ticket; /* the start's process list, with its thread (gpuprocs.c); 0 none */
	uint64_t procs_t0;
	uint64_t procs_deadline; /* ended: its certificate waits for that list until then */
	int end_listed;          /* -1 not ended yet; 1 the end listed the processes itself */
	int end_why;             /* how it ended (enum end_why), when, who released it */
	uint64_t end_ns;
	char end_who[64];
	int end_asked; /* revoked, certificate pending: its owner's END came (end_seq) */
	uint32_t end_seq;
	int sample_failed;                     /* an NVML read during the region failed */
	int32_t nominal[KREX_MAX_GPUS];        /* per GPU slot, -1 unknown */
	struct nvml_edge edge0[KREX_MAX_GPUS]; /* temperature, violation counters at grant */
	uint64_t viol_window_us;               /* span of NVML's counter readings, the widest */
	struct region_cost cost;               /* krexd's own work for it (the cost log line) */
	uint64_t turn;                         /* loop turn it was asked in */
	uint64_t conn_ns;                      /* its connection's accept (the cost line) */
	uint32_t chained;                      /* its place in a chain (0: entered on its own) */
	uint64_t chain_t0;                     /* the chain's first grant */
	int chain_own; /* chained after a region of the same owner: the power cap at its grant is the owner's own */
	int rq_gone; /* rq_remove() done (a chain's predecessor leaves the queue early) */
	uid_t uid;   /* its owner's, for the per-uid limits */
	pid_t pid;   /* the owner's root pid, job, step, label: history */
	uint32_t job, step;
	char label[128];
	struct region *next; /* every region, for ticks and status */
};

/*
 * Fairness grace: after a region that froze siblings which ask for regions
 * themselves, the owner's next request waits up to this long, so that a
 * thawed sibling that wanted to begin (and could not: frozen) gets its
 * request in first.  Without it the owner, which runs while the siblings
 * are still waking up, can win again and again.  An owner whose siblings
 * never ask (or alone) is not slowed.
 */
/* The longest a region's end waits for its start's process list (gpuprocs.c). */
#define KREXD_PROCS_WAIT_MS 1000

#define KREXD_FAIR_GRACE_NS (2 * 1000 * 1000ULL)

/* Every region, for ticks and status (region_unwind.c). */
extern struct region *regions;

/* for each GPU slot i of region r */
#define FOR_GPU(k, r, i)                                                                           \
	for ((i) = 0; (i) < (k)->ngpus; (i)++)                                                     \
		if ((r)->rq.mask >> (i)&1)

static inline uint64_t us(uint64_t ns)
{
	return ns / NS_PER_US;
}

static inline void gate_line(char *buf, size_t len, unsigned slot, uint32_t owner)
{
	snprintf(buf, len, "gate %u %u", slot, owner);
}

/* ---- region_entry.c ---- */
int pending_take(struct region *r, uint64_t serial);
void region_close(struct krexd *k, struct region *r, uint64_t now, const struct region *prev);
void region_drain_or_freeze(struct krexd *k, struct region *r);
void region_freeze(struct krexd *k, struct region *r, uint64_t now);
void region_late_part(struct part *p);
void region_late_judge(struct krexd *k, struct region *r);
/*
 * Whether region_late_judge() will list r's GPUs' processes at its end (it
 * had participants made during it, and NVML): region_unwind_rest() then
 * opens its gates with new GPU contexts still held (gate page ctx_by), so
 * that one of such a participant, held at the gate, is not made between the
 * open and the list and taken for one made during the region.
 * region_ctx_release() lets them go, with the certificate.
 */
static inline int region_late_listed(const struct region *r)
{
	return r->phase == PH_HELD && r->nlate && nvml_open() >= 0;
}
/* ---- region_defer.c ---- */
/* 1 when r, about to start, waits for siblings' contexts being made
 * (ctx_defer): its not_before_ns is set, rq_next() passes it over. */
int region_ctx_defer(struct krexd *k, struct region *r, uint64_t now);
/* r ends: a wait for contexts it was in is counted (history_ctx_defer()),
 * and if it never started, the contexts its wait held go */
void region_ctx_gone(struct krexd *k, struct region *r);
void region_ctx_release(struct krexd *k, struct region *r);
void region_poll(struct krexd *k, struct region *r, uint64_t now, int woken);
uint64_t region_run_delay(void);
void region_settle_poll(struct krexd *k, struct region *r, uint64_t now);
struct sib *sib_find(struct region *r, uint32_t part);
void sib_freeze_batch(struct krexd *k, struct region *r, int soon_only);
int sib_freeze_prepare(struct krexd *k, struct region *r, struct sib *s);
void sib_freeze_soon(struct krexd *k, struct region *r, struct sib *s);

/* ---- region_unwind.c ---- */
void region_certify(struct krexd *k, struct region *r, int why, const char *who, uint64_t now);
void region_cost_log(struct krexd *k, const struct region *r);
void region_isolate(struct krexd *k, struct region *r);
void region_record(struct krexd *k, struct region *r, int why, uint64_t now);
void region_sign(struct krexd *k, struct region *r);
void region_unlink(struct region *r);
void region_unwind(struct krexd *k, struct region *r);
void region_unwind_iso(struct krexd *k, struct region *r);
void region_unwind_rest(struct krexd *k, struct region *r, uint64_t keep);

/* ---- region_clocks.c ---- */
void region_judge_clocks(struct krexd *k, struct region *r);

/* ---- region_judge.c ---- */
void region_note(struct region *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int region_sample(struct krexd *k, struct region *r, struct nvml_sample *all);
int region_sampling(const struct krexd *k, const struct region *r);
int region_settled(struct krexd *k, struct region *r);
void region_state_sync(struct krexd *k, struct region *r, const char *doing);
void region_telemetry_end(struct krexd *k, struct region *r);
void region_telemetry_start(struct krexd *k, struct region *r);
int region_procs_done(struct krexd *k, struct region *r, struct gp_result *res);
void region_start_settle(struct krexd *k, struct region *r);
void region_procs_lost(struct krexd *k, struct region *r);
int region_exit_poll(struct krexd *k, struct region *r, uint64_t now);

/* ---- region_exit.c ---- */
/* 1: hold r's start list res back (bad: the processes that would make r
 * degraded, one flag per listed pid), the grant waits; 0: judge r on it. */
int region_exit_hold(struct krexd *k, struct region *r, const struct gp_result *res,
                     const unsigned char *bad);

#endif /* KREXD_REGION_INT_H */
