/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mover.h - the mover thread (mover.c): a new participant's pid written into
 * its cgroup off krexd's loop (doc/architecture.md "Making a participant").
 * The loop submits, the thread writes (freezer_move()), the loop takes the
 * results when the eventfd (EP_MOVER) is readable.  The thread touches
 * nothing of krexd's but its own queue: each request carries copies of the
 * paths.
 */
#ifndef KREXD_MOVER_H
#define KREXD_MOVER_H

#include <stdint.h>
#include <sys/types.h>

struct krexd;

struct mv_done {
	uint32_t id;    /* the participant's */
	int err;        /* errno of the move into its freezer cgroup, 0 when it took */
	int cpuset_err; /* of the move into its cpuset cgroup (cgroup v1), 0 when it took or none */
	uint64_t queued_ns; /* waited for the thread */
	uint64_t move_ns;   /* the writes */
	uint64_t held_ns;   /* of queued_ns, waited for regions' entries (mv_hold_until()) */
	struct mv_done *next;
};

/* Start the thread, its eventfd in k's epoll as EP_MOVER.  0, or -1/errno
 * (krexd then moves on its loop, as before). */
int mv_start(struct krexd *k);
/* KREXD_MOVE_INLINE=1 in krexd's environment: no thread, the moves on the
 * loop as before it (for side-by-side measurements). */
int mv_inline(void);
/* KREXD_MOVE_HOLD_MS=N in krexd's environment at mv_start() (0 to 3600000;
 * else 0, off): moves not begun wait while a region's gates are closed and
 * it is not yet granted, at most N ms from its close (region_move_hold())
 * and at most N ms from their own queueing.  In ns; 0 without the thread. */
uint64_t mv_hold_ns(void);
/* Moves not begun wait until until_ns (time_now_ns()'s clock); 0: no more. */
void mv_hold_until(uint64_t until_ns);
/* Whether it runs. */
int mv_on(void);
/* Queue a move of pid into cg, then into cpuset_cg ("": none).  0, or
 * -1/errno (the caller moves it itself). */
int mv_submit(uint32_t id, pid_t pid, const char *cg, const char *cpuset_cg);
/* The moves done since the last take, in their order (the caller frees each). */
struct mv_done *mv_take(void);
/* Moves queued or under way. */
unsigned mv_pending(void);
/* Let the thread finish what is queued, then join it and close its eventfd;
 * mv_take() has the rest. */
void mv_stop(void);

#endif /* KREXD_MOVER_H */
