/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * certjson.h - a certificate and a history entry as JSON, and the payload
 * krexd signs with munge (doc/protocol.md "Signed certificates"): one writer
 * for libkrexregion's krex_certificate_json(), krex log and krexd, so that the
 * signed certificate and the one the client prints are the same text.
 */
#ifndef KREX_CERTJSON_H
#define KREX_CERTJSON_H

#include <stddef.h>
#include <stdint.h>

#include "krex/region.h"

struct proto_log_entry;

/* The "krex" member of a signed payload: what it is. */
#define CERT_SIGNED_MARK "signed certificate 1"

/* Room for any certificate's JSON (every string field escaped at its worst:
 * about 5.6 KiB, test/unit/json_test.c). */
#define JSON_CERT_MAX 8192
/* And for a history entry's (json_log_entry): label and node at their worst. */
#define JSON_LOG_ENTRY_MAX (JSON_CERT_MAX + 2048)

/* A certificate as one JSON object (krex_certificate_json(3)); snprintf's return. */
int json_certificate(const struct krex_certificate *c, char *buf, size_t len);

/*
 * One region of krexd's history as one JSON object, one line: the end time
 * ("time") and the begin, RFC 3339 UTC; node, seq, job, step, uid, pid,
 * label, and the certificate (json_certificate).  The region log's line and
 * krex log --json's.  snprintf's return, or -1 when the certificate did not
 * fit JSON_CERT_MAX (it always does).
 */
int json_log_entry(const struct proto_log_entry *e, const char *node, char *buf, size_t len);

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
