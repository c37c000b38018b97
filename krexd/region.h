/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region.h - regions, as the rest of krexd sees them (region.c,
 * region_entry.c, region_unwind.c; their own types: region_int.h).
 */
#ifndef KREXD_REGION_H
#define KREXD_REGION_H

#include <stdint.h>

#include "proto.h"

struct krexd;
struct conn;
struct part;

int region_begin(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_region_begin *b);
int region_end(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_region_end *e);
int region_release(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_release *r);
void region_ack(struct krexd *k, struct conn *c, const struct proto_drain_ack *a);
void region_conn_gone(struct krexd *k, struct conn *c);
/* A member's CTX_MAKING (region_defer.c): its process began (on) or ended
 * making GPU contexts; a region waiting for them looks again. */
void region_ctx_making(struct krexd *k, struct conn *c, int on);
int region_conn_busy(const struct conn *c);
void region_part_gone(struct krexd *k, struct part *p);
void region_part_new(struct krexd *k, struct part *p);
void region_tick(struct krexd *k, uint64_t now);
/* The GPU process-list thread's answers (EP_PROCS, gpuprocs.c). */
void region_procs_event(struct krexd *k);
uint64_t region_next_deadline(struct krexd *k);
void region_schedule(struct krexd *k);
/* Hold the mover's moves not begun while a region enters (KREXD_MOVE_HOLD_MS,
 * mover.h); once per loop turn. */
void region_move_hold(struct krexd *k, uint64_t now);
void region_stop_all(struct krexd *k);
/* Someone else suspended p (during a drain: its acks are not awaited) or thawed it while a region holds it. */
void region_ext_suspended(struct krexd *k, struct part *p);
void region_ext_resumed(struct krexd *k, struct part *p, int how);
int region_status(struct krexd *k, struct proto_status_reply *s);

#endif /* KREXD_REGION_H */
