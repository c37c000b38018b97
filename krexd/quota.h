/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * quota.h - per-uid accounts and limits (quota.c, doc/security.md "Limits").
 */
#ifndef KREXD_QUOTA_H
#define KREXD_QUOTA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct krexd;
struct conn;

/* What one uid holds (doc/security.md "Limits"); root's is counted, never limited. */
struct uacct {
	uid_t uid;
	unsigned conns, parts, queued; /* connections, participants, regions queued or held */
	uint64_t bytes;                /* partial frames and queued replies */
	uint64_t win_start_ns;         /* region time window (a minute) */
	uint64_t win_used_ns;          /* region time used in it */
	struct uacct *next;
};

struct uacct *uacct_get(struct krexd *k, uid_t uid);
void uacct_gc(struct krexd *k);
/* 0 when uid may take n more bytes, -1 when that would pass max_buffer_per_uid. */
int uacct_charge(struct krexd *k, struct conn *c, size_t n);
void uacct_uncharge(struct conn *c, size_t n);
/* Region time: may uid begin a region now? 0, or -1 with the ns to wait in *wait_ns. */
int uacct_region_allowed(struct krexd *k, struct uacct *a, uint64_t now, uint64_t *wait_ns);
/*
 * region_time_per_uid when a region is granted (leaves its queue): *lease_ns is
 * cut to what uid has left of the minute and charged now, so that regions
 * queued together cannot pass the cap.  0 with *charged_ns (0: nothing
 * charged: no cap, or root) and *win (the window charged) set; -1 when
 * nothing is left, with *wait_ns until the window turns.
 */
int uacct_region_start(struct krexd *k, uid_t uid, uint64_t *lease_ns, uint64_t now,
                       uint64_t *charged_ns, uint64_t *win, uint64_t *wait_ns);
/* The region ended after holding held_ns: what was charged at the start is
 * replaced by what it held (the part of it in this window, if the window turned). */
void uacct_region_end(struct krexd *k, uid_t uid, uint64_t charged_ns, uint64_t win,
                      uint64_t held_ns, uint64_t now);

#endif /* KREXD_QUOTA_H */
