/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * certjson.c - a certificate as JSON (krex_certificate_json) and the payload
 * krexd signs with munge (certjson.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "certjson.h"
#include "json.h"

int cert_signed_payload(char *buf, size_t len, const char *node, uint32_t uid, uint32_t job,
                        uint32_t step, const struct krex_certificate *c)
{
	char enode[6 * 64 + 1], cert[JSON_CERT_MAX];
	int n = json_certificate(c, cert, sizeof(cert));

	if (n < 0 || (size_t)n >= sizeof(cert))
		return -1;
	json_escape(enode, sizeof(enode), node);
	return snprintf(buf, len,
	                "{\"krex\":\"%s\",\"node\":\"%s\",\"uid\":%u,\"job\":%u,\"step\":%u,"
	                "\"region\":%llu,\"outcome\":\"%s\",\"certificate\":%s}",
	                CERT_SIGNED_MARK, enode, uid, job, step, (unsigned long long)c->region_id,
	                cert_outcome_name(c->outcome), cert);
}

const char *cert_outcome_name(uint32_t outcome)
{
	static const char *const names[] = {"clean", "expired", "degraded", "unprotected"};

	return outcome <= KREX_OUTCOME_UNPROTECTED ? names[outcome] : "unknown";
}
