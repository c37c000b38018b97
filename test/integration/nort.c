/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nort.c - a TEST DOUBLE, preloaded into krexd by krexd-sched.sh: real-time
 * scheduling refused with EPERM, as a kernel that gives a non-root cgroup
 * no real-time time refuses it (the H200 machine, even to root).  Every
 * other policy goes to the C library's sched_setscheduler.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <sys/types.h>

int sched_setscheduler(pid_t pid, int policy, const struct sched_param *sp)
{
	static int (*next)(pid_t, int, const struct sched_param *);
	int p = policy & ~SCHED_RESET_ON_FORK;

	if (p == SCHED_FIFO || p == SCHED_RR) {
		errno = EPERM;
		return -1;
	}
	if (!next)
		next = (int (*)(pid_t, int, const struct sched_param *))dlsym(RTLD_NEXT,
		                                                              "sched_setscheduler");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	return next(pid, policy, sp);
}
