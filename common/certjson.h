/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * certjson.h - a certificate as JSON, and the payload krexd signs with munge
 * (doc/protocol.md "Signed certificates"): one writer for libkrexregion's
 * krex_certificate_json() and for krexd, so that the signed certificate and
 * the one the client prints are the same text.
 */
#ifndef KREX_CERTJSON_H
#define KREX_CERTJSON_H

#include <stddef.h>
#include <stdint.h>

#include "krex/region.h"

/* The "krex" member of a signed payload: what it is. */
#define CERT_SIGNED_MARK "signed certificate 1"

/* (The certificate's own JSON is json_certificate(), json.h.) */

/*
 * The payload krexd signs:
 * {"krex":"signed certificate 1","node":N,"uid":U,"job":J,"step":S,
 *  "region":ID,"outcome":"clean","certificate":{...json_certificate...}}
 * Returns the length it needed, like snprintf, or -1.
 */
int cert_signed_payload(char *buf, size_t len, const char *node, uint32_t uid, uint32_t job,
                        uint32_t step, const struct krex_certificate *c);

/* "clean", "expired", "degraded", "unprotected", else "unknown". */
const char *cert_outcome_name(uint32_t outcome);

#endif /* KREX_CERTJSON_H */
