/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * part.h - participants (part.c) and someone else's suspend (part_ext.c).
 */
#ifndef KREXD_PART_H
#define KREXD_PART_H

#include <stdint.h>

struct krexd;
struct part;

/* ---- part_ext.c, for part.c ---- */
/* A write left p FROZEN under krexd's freeze and no thaw followed: a suspend. */
void ext_confirm(struct krexd *k, struct part *p, uint64_t now);
/* Around each of krexd's own writes to a freezer file: its events are not another's. */
void ext_own_write_begin(struct krexd *k);
void ext_own_write_end(struct krexd *k, struct part *p);
/* Watch p's freezer file; without one (signals) p->ext is looked at region entry only. */
void ext_watch(struct krexd *k, struct part *p);
void ext_unwatch(struct krexd *k, struct part *p);

#endif /* KREXD_PART_H */
