/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * outbox.h - replies to clients (outbox.c): the per-connection output
 * queue, written when the socket takes it, and a connection's close.
 */
#ifndef KREXD_OUTBOX_H
#define KREXD_OUTBOX_H

#include <stdint.h>

#include "proto.h"

struct krexd;
struct conn;

/* Queue a reply and write what the socket takes now; -1 once c is closed. */
int conn_send(struct krexd *k, struct conn *c, uint16_t type, uint32_t seq,
              const union proto_body *m);
int conn_error(struct krexd *k, struct conn *c, uint32_t seq, int code, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
/* Write a one-off ERROR to a connection krexd does not keep, then close it. */
void conn_refuse(int fd, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Write what the socket takes now.  -1 once c is closed. */
int conn_flush(struct krexd *k, struct conn *c);
/* Drop a client that does not read what krexd answers. */
void conn_drop_slow(struct krexd *k, struct conn *c, const char *why);
void conn_close(struct krexd *k, struct conn *c);

#endif /* KREXD_OUTBOX_H */
