/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gatectl.c - the gate page, written by krexd only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "conf.h"
#include "gatectl.h"
#include "timeutil.h"

/*
 * Wake every waiter on word.  The futex is shared (no FUTEX_PRIVATE_FLAG):
 * the waiters are other processes mapping the same file page, keyed by inode
 * and offset (futex(2)).
 */
static void gate_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int gatectl_open(struct gatectl *g, const char *path)
{
	struct gate_page *p;
	uint32_t gen = 0;
	unsigned i;

	memset(g, 0, sizeof(*g));
	g->fd = -1;
	if (xstrcpy(g->path, sizeof(g->path), path) < 0)
		return -1;
	g->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (g->fd < 0)
		return -1;
	/* The umask must not take the read bit from participants. */
	if (fchmod(g->fd, 0644) < 0 || ftruncate(g->fd, GATE_PAGE_SIZE) < 0)
		goto fail;
	p = mmap(NULL, GATE_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	g->page = p;
	if (p->magic == GATE_MAGIC && p->version == GATE_VERSION)
		gen = p->generation; /* keep counting: old drain threads wait on it */
	for (i = 0; i < KREX_MAX_GPUS; i++) {
		__atomic_store_n(&p->slot[i].closed_by, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&p->slot[i].ctx_by, 0, __ATOMIC_RELEASE);
		p->slot[i].region_lo = 0;
	}
	p->magic = GATE_MAGIC;
	p->version = GATE_VERSION;
	p->krexd_pid = (uint32_t)getpid();
	__atomic_store_n(&p->alive, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&p->generation, gen, __ATOMIC_RELEASE);
	gatectl_bump(g);
	for (i = 0; i < KREX_MAX_GPUS; i++) {
		gate_wake(&p->slot[i].closed_by);
		gate_wake(&p->slot[i].ctx_by);
	}
	return 0;
fail:
	i = (unsigned)errno;
	close(g->fd);
	g->fd = -1;
	errno = (int)i;
	return -1;
}

void gatectl_drain_timeout(struct gatectl *g, uint64_t ns)
{
	uint64_t ms = ns / NS_PER_MS;

	__atomic_store_n(&g->page->drain_ms, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms,
	                 __ATOMIC_RELEASE);
}

void gatectl_name(struct gatectl *g, unsigned slot, const char *name, unsigned nslots)
{
	snprintf(g->page->slot[slot].name, sizeof(g->page->slot[slot].name), "%s", name);
	__atomic_store_n(&g->page->nslots, nslots, __ATOMIC_RELEASE);
}

void gatectl_close_slot(struct gatectl *g, unsigned slot, uint32_t owner, uint64_t region)
{
	struct gate_slot *s = &g->page->slot[slot];
	uint32_t old = __atomic_load_n(&s->closed_by, __ATOMIC_ACQUIRE);
	uint32_t old_ctx = __atomic_load_n(&s->ctx_by, __ATOMIC_ACQUIRE);

	s->region_lo = (uint32_t)region;
	s->closes++;
	__atomic_store_n(&s->closed_by, owner, __ATOMIC_RELEASE);
	__atomic_store_n(&s->ctx_by, owner, __ATOMIC_RELEASE);
	/* Closed for another owner already (a chained region): the new owner's
	 * threads that wait on the slot may pass now. */
	if (old && old != owner)
		gate_wake(&s->closed_by);
	if (old_ctx && old_ctx != owner)
		gate_wake(&s->ctx_by);
}

void gatectl_open_slot(struct gatectl *g, unsigned slot, int hold_ctx)
{
	struct gate_slot *s = &g->page->slot[slot];

	if (!hold_ctx)
		__atomic_store_n(&s->ctx_by, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->closed_by, 0, __ATOMIC_RELEASE);
	gate_wake(&s->closed_by);
	if (!hold_ctx)
		gate_wake(&s->ctx_by);
}

void gatectl_release_ctx(struct gatectl *g, unsigned slot)
{
	struct gate_slot *s = &g->page->slot[slot];
	uint32_t now = __atomic_load_n(&s->closed_by, __ATOMIC_ACQUIRE);

	if (__atomic_exchange_n(&s->ctx_by, now, __ATOMIC_ACQ_REL) != now)
		gate_wake(&s->ctx_by);
}

int gatectl_hold_ctx(struct gatectl *g, unsigned slot, uint32_t owner)
{
	struct gate_slot *s = &g->page->slot[slot];
	uint32_t none = 0;

	if (__atomic_load_n(&s->closed_by, __ATOMIC_ACQUIRE))
		return 0;
	return __atomic_compare_exchange_n(&s->ctx_by, &none, owner, 0, __ATOMIC_ACQ_REL,
	                                   __ATOMIC_ACQUIRE);
}

void gatectl_unhold_ctx(struct gatectl *g, unsigned slot, uint32_t owner)
{
	struct gate_slot *s = &g->page->slot[slot];

	if (__atomic_load_n(&s->closed_by, __ATOMIC_ACQUIRE) == 0 &&
	    __atomic_compare_exchange_n(&s->ctx_by, &owner, 0, 0, __ATOMIC_ACQ_REL,
	                                __ATOMIC_ACQUIRE))
		gate_wake(&s->ctx_by);
}

uint32_t gatectl_bump(struct gatectl *g)
{
	uint32_t gen = __atomic_add_fetch(&g->page->generation, 1, __ATOMIC_ACQ_REL);

	gate_wake(&g->page->generation);
	return gen;
}

uint32_t gatectl_generation(const struct gatectl *g)
{
	return __atomic_load_n(&g->page->generation, __ATOMIC_ACQUIRE);
}

void gatectl_shutdown(struct gatectl *g)
{
	unsigned i;

	if (!g->page)
		return;
	__atomic_store_n(&g->page->alive, 0, __ATOMIC_RELEASE);
	for (i = 0; i < KREX_MAX_GPUS; i++)
		gatectl_open_slot(g, i, 0);
	gatectl_bump(g);
	gatectl_close(g);
}

void gatectl_close(struct gatectl *g)
{
	if (g->page)
		munmap(g->page, GATE_PAGE_SIZE);
	if (g->fd >= 0)
		close(g->fd);
	g->page = NULL;
	g->fd = -1;
}
