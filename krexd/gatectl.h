/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gatectl.h - krexd's side of the gate page (common/gatepage.h): create it,
 * close and open slots, wake the waiters.
 */
#ifndef KREXD_GATECTL_H
#define KREXD_GATECTL_H

#include <stdint.h>

#include "gatepage.h"

struct gatectl {
	int fd;
	struct gate_page *page;
	char path[512];
};

/*
 * Create or reuse the gate file at path (0644, GATE_PAGE_SIZE) and map it.
 * An existing page is reused so that participants of a previous krexd that
 * still map it see the reopened slots; every slot starts open.  0 or -1/errno.
 */
int gatectl_open(struct gatectl *g, const char *path);

/* Name slot i (the GPU table grows only). */
void gatectl_name(struct gatectl *g, unsigned slot, const char *name, unsigned nslots);
/* Publish krexd.conf drain_timeout (ns) on the page, for the drains. */
void gatectl_drain_timeout(struct gatectl *g, uint64_t ns);

/*
 * Close slot for owner's region (ctx_by too); open it again, its new
 * contexts still held for the owner with hold_ctx (until
 * gatectl_release_ctx()).  Neither bumps the generation.
 */
void gatectl_close_slot(struct gatectl *g, unsigned slot, uint32_t owner, uint64_t region);
void gatectl_open_slot(struct gatectl *g, unsigned slot, int hold_ctx);
/* ctx_by follows closed_by again (0 when open, the owner while closed). */
void gatectl_release_ctx(struct gatectl *g, unsigned slot);
/*
 * An open slot's new contexts held for owner before its region closes the
 * gate (ctx_by only): 1, or 0 when the slot is closed or holds them already
 * for someone.  gatectl_unhold_ctx() lets them go if that hold is still
 * owner's and the slot still open (a close took it over otherwise).
 */
int gatectl_hold_ctx(struct gatectl *g, unsigned slot, uint32_t owner);
void gatectl_unhold_ctx(struct gatectl *g, unsigned slot, uint32_t owner);

/* Bump the generation and wake every waiter on it; returns the new value. */
uint32_t gatectl_bump(struct gatectl *g);

uint32_t gatectl_generation(const struct gatectl *g);

/* Clean stop: alive = 0, every slot open, everyone woken; unmap. */
void gatectl_shutdown(struct gatectl *g);

/* Unmap without touching the page (a forked child, or after shutdown). */
void gatectl_close(struct gatectl *g);

#endif /* KREXD_GATECTL_H */
