/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sign.h - signed certificates: krexd encodes each certificate it hands out
 * with munge (doc/protocol.md "Signed certificates", doc/admin.md "Signed
 * certificates").  munge_encode can block (munged stopped, slow or gone):
 * it runs on a thread of its own, never in the epoll loop; the loop hands it
 * the payload and picks the credential up through an eventfd.
 */
#ifndef KREXD_SIGN_H
#define KREXD_SIGN_H

#include <stdint.h>
#include <sys/types.h>

#include "krex/region.h"

struct krexd;
struct conn;

/* Start the signing thread (sign = munge) and register its eventfd as EP_SIGN. */
void sign_start(struct krexd *k);
/* The certificate of a region ended for owner uid/job/step: queue its signing. */
void sign_cert(struct krexd *k, uid_t uid, uint32_t job, uint32_t step,
               const struct krex_certificate *c);
/* PROTO_SIGNED from c. */
int sign_request(struct krexd *k, struct conn *c, uint32_t seq, uint64_t region_id);
int sign_waiting(uint64_t serial);
/* The eventfd is readable: answer the clients waiting for what was signed. */
void sign_event(struct krexd *k);
/* Answer clients whose wait passed sign_timeout. */
void sign_tick(struct krexd *k, uint64_t now);
uint64_t sign_next_deadline(struct krexd *k);

#endif /* KREXD_SIGN_H */
