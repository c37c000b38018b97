/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.h - a client connection (struct conn, shared by the modules that
 * answer clients) and conn.c's accept, reads and dispatch.
 */
#ifndef KREXD_CONN_H
#define KREXD_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "krexd.h"
#include "proto.h"

struct region;

struct conn {
	struct ep_item ep;
	int fd;
	uint64_t serial;
	pid_t pid; /* SO_PEERCRED */
	uid_t uid;
	int pidfd; /* of the process that connected (SO_PEERPIDFD; else pidfd_open of
	                       * pid at accept); -1 when unavailable */
	uint64_t
	        start_ticks; /* pid's start time (/proc/PID/stat field 22) at accept; 0: no identity */
	int ident;           /* why no identity: CONN_IDENT_* */
	struct uacct *ua;    /* its uid's account */
	uint8_t *out;        /* replies not yet written (non-blocking, EPOLLOUT) */
	size_t out_off, out_len, out_cap;
	uint64_t write_deadline_ns; /* replies pending and no progress: dropped then; 0 idle */
	uint64_t accepted_ns;       /* when krexd accepted it (a region's cost line) */
	uint64_t msg_ns;            /* when the current message's first byte was read */
	unsigned regions;           /* regions asked for on it: libregion keeps it open
	                             * between regions (an idle one can be evicted) */
	int want_out;               /* EPOLLOUT armed */
	size_t charged;             /* bytes of ua->bytes charged to this connection */
	uint8_t hdr[PROTO_HDR_LEN];
	struct proto_hdr h;
	uint8_t *payload;
	size_t got;                /* bytes of the current message so far */
	uint64_t read_deadline_ns; /* a message is half read; 0 when idle */
	struct part *part;
	uint32_t reg_wait;          /* its REGISTER waits for participant reg_wait's move */
	uint32_t reg_seq;           /* ... that message's seq */
	struct proto_register *reg; /* ... and a copy of it (malloc'd) */
	pid_t member_pid;
	int gate;              /* registered with PROTO_REG_GATE */
	int holdctx;           /* ... and PROTO_REG_HOLDCTX: its contexts wait at the gate */
	uint64_t ctx_since;    /* its process makes GPU contexts since (CTX_MAKING), 0 not */
	struct region *region; /* queued or held by this connection */
	struct krex_certificate expired; /* a revoked region's, kept for END */
	int have_expired;
	int dead;
	struct conn *next;
};

void conn_accept(struct krexd *k);
void conn_accept_tick(struct krexd *k, uint64_t now);
void conn_event(struct krexd *k, struct conn *c, uint32_t events);
void conn_reap(struct krexd *k);
void conn_tick(struct krexd *k, uint64_t now);
uint64_t conn_next_deadline(struct krexd *k);

#endif /* KREXD_CONN_H */
