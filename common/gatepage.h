/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gatepage.h - the gate page: one shared-memory page, written by krexd and
 * mapped read-only by every participant.
 *
 * Each GPU krexd knows has a slot.  slot.closed_by is 0 while the gate is
 * open, or the participant id of the region owner while it is closed: the
 * owner's own submissions pass, everyone else's wait on that word (futex)
 * until krexd opens it and wakes them (a thread about to make a GPU context
 * also waits on ctx_by).  generation is bumped on every close
 * and open; drain threads wait on it (futex) and acknowledge the generation
 * they drained over their socket.
 *
 * The page is a file in krexd's run directory (mode 0644), so the futex is a
 * shared (not PROCESS_PRIVATE) one keyed by the file page.
 */
#ifndef KREX_GATEPAGE_H
#define KREX_GATEPAGE_H

#include <stdint.h>

#include "defs.h"

#define GATE_MAGIC 0x4b47504bu /* "KGPK" */
#define GATE_VERSION 1
#define GATE_PAGE_SIZE 8192

struct gate_slot {
	uint32_t closed_by; /* 0 open, else the owner's participant id */
	uint32_t region_lo; /* low 32 bits of the region id that closed it */
	uint32_t closes;    /* times this gate was closed (for tests and status) */
	/* 0, or the participant whose new GPU contexts pass while everyone
	 * else's wait (libkrexregion's krex_gate_wait_contexts()): closed_by
	 * from the close, and after the open until krexd has listed the GPU's
	 * processes for the region's participants made during it; before the
	 * close too while the region waits for contexts being made (ctx_defer).
	 * 0 on a page of a krexd before it (the word was padding). */
	uint32_t ctx_by;
	char name[KREX_MAX_GPU_NAME + 1];
};

struct gate_page {
	uint32_t magic;
	uint32_t version;
	uint32_t nslots;     /* slots in use */
	uint32_t krexd_pid;  /* the krexd that owns the page */
	uint32_t generation; /* bumped on every close and open (futex word) */
	uint32_t alive;      /* 1 while krexd runs; 0 after a clean stop */
	/* krexd.conf(5) drain_timeout in ms (at most UINT32_MAX), which a drain
	 * answers a little before (krex_drain_timeout_ms()); 0 on a page of a
	 * krexd before it (the word was padding): the default then */
	uint32_t drain_ms;
	uint32_t pad;
	struct gate_slot slot[KREX_MAX_GPUS];
};

_Static_assert(sizeof(struct gate_page) <= GATE_PAGE_SIZE, "gate page too large");

#endif /* KREX_GATEPAGE_H */
