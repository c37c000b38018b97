/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ident.h - a client's identity (ident.c): the process that connected, and
 * whether a pid is still it.
 */
#ifndef KREXD_IDENT_H
#define KREXD_IDENT_H

#include <stdint.h>
#include <sys/types.h>

struct conn;

/* Identity of a process: its start time (clock ticks since boot, /proc/PID/stat field 22). */
int pid_start_ticks(pid_t pid, uint64_t *ticks, uid_t *uid);
/* c->ident: the peer's identity at accept */
enum { CONN_IDENT_OK, CONN_IDENT_GONE, CONN_IDENT_OWNER };
/* 1 when c's peer is still the process that connected (same pid, uid, start time), else 0
 * with c->ident saying why (gone, or its /proc is not the peer uid's: root's, non-dumpable). */
int conn_peer_alive(struct conn *c);
/* Take the peer's pidfd and start time at accept: a later pid reuse is seen. */
void conn_identity(struct conn *c);

#endif /* KREXD_IDENT_H */
