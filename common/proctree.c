/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proctree.c - stop and continue processes in an order their parents do not
 * see (see proctree.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proctree.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

int proc_pidfd(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int proc_state_still(char state)
{
	return state == 'T' || state == 't' || state == 'Z' || state == 'X';
}

#define STOP_SIGS                                                                                  \
	(1UL << (SIGSTOP - 1) | 1UL << (SIGTSTP - 1) | 1UL << (SIGTTIN - 1) | 1UL << (SIGTTOU - 1))

unsigned long proc_stop_pending(pid_t pid, unsigned long *caught)
{
	unsigned long long pend, cgt;

	proc_sig_pending(pid, &pend, &cgt);
	*caught = (unsigned long)cgt & STOP_SIGS;
	return (unsigned long)pend & STOP_SIGS;
}

static int send_sig(pid_t pid, int pidfd, int sig)
{
	if (pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
	return kill(pid, sig);
}

int proc_cont(pid_t pid, int pidfd, int seen_stopped)
{
	unsigned long caught, pend = proc_stop_pending(pid, &caught);
	int sig;

	/* krexd's own SIGSTOP may still be pending when it was not seen stopped */
	if (!seen_stopped)
		pend &= ~(1UL << (SIGSTOP - 1));
	/* A stop signal arrived while it was stopped: it would have stopped it
	 * (a SIGSTOP, or one without a handler): whoever sent it wants it stopped. */
	if (pend & ~caught)
		return 1;
	if (send_sig(pid, pidfd, SIGCONT) < 0)
		return errno == ESRCH ? 0 : -1;
	/* SIGCONT discarded the ones it has a handler for: deliver them again. */
	for (sig = 1; pend && sig <= 31; sig++)
		if (pend & 1UL << (sig - 1))
			send_sig(pid, pidfd, sig);
	return 0;
}

static int index_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct proc_index *)a)->pid, y = ((const struct proc_index *)b)->pid;

	return x < y ? -1 : x > y;
}

struct proc_index *proc_index(const pid_t *pids, size_t n)
{
	struct proc_index *x = calloc(n + 1, sizeof(*x));
	size_t i;

	if (!x)
		return NULL;
	for (i = 0; i < n; i++) {
		x[i].pid = pids[i];
		x[i].i = i;
	}
	qsort(x, n, sizeof(*x), index_cmp);
	return x;
}

long proc_index_find(const struct proc_index *x, size_t n, pid_t pid)
{
	struct proc_index key = {.pid = pid}, *hit;

	hit = bsearch(&key, x, n, sizeof(*x), index_cmp);
	return hit ? (long)hit->i : -1;
}

void proc_depths(const pid_t *pids, const pid_t *ppids, size_t n, unsigned *depth)
{
	struct proc_index *e = proc_index(pids, n);
	size_t i;
	long hit;
	pid_t up;
	char st;
	int hops;

	for (i = 0; i < n; i++)
		depth[i] = 0;
	if (!e)
		return; /* no order: every one at depth 0 */
	for (i = 0; i < n; i++) {
		if (ppids)
			up = ppids[i];
		else if (proc_state(pids[i], &st, &up) < 0)
			continue;
		for (hops = 0; hops < 64 && up > 1; hops++) {
			hit = proc_index_find(e, n, up);
			if (hit >= 0)
				depth[i]++;
			if (hit >= 0 && ppids)
				up = ppids[hit];
			else if (proc_state(up, &st, &up) < 0)
				break;
		}
	}
	free(e);
}

static const unsigned *order_depth;
static int order_deepest;

static int idx_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	unsigned dx = order_depth[x], dy = order_depth[y];

	if (dx != dy)
		return (dx < dy) == !order_deepest ? -1 : 1;
	return x < y ? -1 : x > y;
}

void proc_order(const unsigned *depth, size_t n, size_t *idx, int deepest)
{
	size_t i;

	for (i = 0; i < n; i++)
		idx[i] = i;
	order_depth = depth;
	order_deepest = deepest;
	qsort(idx, n, sizeof(*idx), idx_cmp);
}
