/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_exit.c - exiting processes on a region's GPUs: whether its grant
 * waits for them to leave (krexd.conf(5) exit_wait).  Called by
 * region_judge.c with each start list; calls nothing of the region code.
 */
#include "config.h"

#include "region_int.h"
#include "gpuprocs.h"
#include "log.h"
#include "timeutil.h"

/*
 * Exiting processes (exit_wait, krexd.conf(5)).  A command that exits
 * leaves its gate at once, but NVML lists it while the driver tears its
 * context down (H200, 24-32 sessions: 2-10 % of the regions were degraded
 * for such a process, a sibling's whose gated processes had left).  When
 * every process that would make a region degraded is exiting, the region's
 * start list is held back and the grant waits, listing again each settle
 * poll, until a list without them comes, at most exit_wait: a region is
 * clean only when nothing but its participants' gated work is on its GPUs
 * at the grant.  One that outlives the wait is judged as it is, and
 * remembered (its pid and start time) so that it never makes a region
 * wait again.
 */
#define EXIT_SLOW_MAX 32
static struct {
	pid_t pid;
	unsigned long long start;
} exit_slow[EXIT_SLOW_MAX];
static unsigned exit_slow_next;

static int exit_slow_has(pid_t pid, unsigned long long start)
{
	unsigned i;

	for (i = 0; i < EXIT_SLOW_MAX; i++)
		if (exit_slow[i].pid == pid && exit_slow[i].start == start)
			return 1;
	return 0;
}

static void exit_slow_add(pid_t pid, unsigned long long start)
{
	if (exit_slow_has(pid, start))
		return;
	exit_slow[exit_slow_next].pid = pid;
	exit_slow[exit_slow_next].start = start;
	exit_slow_next = (exit_slow_next + 1) % EXIT_SLOW_MAX;
}

/* 1: hold r's start list res back (bad: region_foreign_of's), the grant
 * waits; 0: judge r on it. */
int region_exit_hold(struct krexd *k, struct region *r, const struct gp_result *res,
                     const unsigned char *bad)
{
	uint64_t now = time_now_ns(), wait = k->cfg.exit_wait_ns;
	int j, nbad = 0, nexit = 0, first = 0;
	size_t x;

	for (j = 0; j < res->n; j++)
		if (bad[j]) {
			nbad++;
			if (res->exiting[j] && !exit_slow_has(res->pid[j], res->start[j]) &&
			    nexit++ == 0)
				first = res->pid[j];
		}
	if (r->phase >= PH_HELD || r->end_listed >= 0 || !wait || !nbad || nexit < nbad) {
		if (r->exit_lists)
			log_debug(
			        "region %llu: waited %llu us after the freeze for exiting processes to leave its GPUs (%u lists): %s",
			        (unsigned long long)r->rq.id,
			        (unsigned long long)(r->exit_t0 ? us(now - r->exit_t0) : 0),
			        r->exit_lists, !nbad ? "gone" : "judged as they are");
		return 0;
	}
	if (!r->exit_wait && !r->exit_lists)
		log_debug(
		        "region %llu: %d process(es) on its GPUs would make it degraded and are exiting (pid %d): the grant waits for them to leave, at most exit_wait (%llu ms) after the freeze",
		        (unsigned long long)r->rq.id, nbad, first,
		        (unsigned long long)(wait / NS_PER_MS));
	/* The bound counts from the settle (region_settle()): before it the
	 * drain and the freeze are still under way, and the wait costs nothing. */
	if (r->phase == PH_SETTLE && !r->exit_t0)
		r->exit_t0 = now;
	if (r->exit_t0 && now - r->exit_t0 >= wait) {
		for (j = 0; j < res->n; j++)
			if (bad[j])
				exit_slow_add(res->pid[j], res->start[j]);
		log_info(
		        "region %llu: %d exiting process(es) still on its GPUs after exit_wait (%llu ms, %u lists; pid %d): judged as they are, not waited for again",
		        (unsigned long long)r->rq.id, nbad, (unsigned long long)(wait / NS_PER_MS),
		        r->exit_lists, first);
		return 0;
	}
	for (x = 0; x < r->nsibs; x++) /* the next list says again who is there */
		r->sibs[x].on_gpu = 0;
	r->exit_wait = 1;
	r->exit_lists++;
	return 1;
}
