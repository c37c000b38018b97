/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * certjson.c - a certificate and a history entry as JSON (krex_certificate_json,
 * the region log) and the payload krexd signs with munge (certjson.h), written
 * with json.c's escaper.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "certjson.h"
#include "json.h"
#include "nvmlapi.h"
#include "proto.h"

/* A known integer, or null. */
static void json_int(char *out, size_t len, int known, long long v)
{
	if (known)
		snprintf(out, len, "%lld", v);
	else
		snprintf(out, len, "null");
}

/* The clocks-event reasons of mask as a JSON array of names, or null. */
static void json_reasons(char *out, size_t len, int known, uint64_t mask)
{
	char names[512];

	if (!known) {
		snprintf(out, len, "null");
		return;
	}
	nvml_reason_names(mask, "\",\"", names, sizeof(names));
	snprintf(out, len, names[0] ? "[\"%s\"]" : "[]", names);
}

int json_certificate(const struct krex_certificate *c, char *buf, size_t len)
{
	char gpus[6 * sizeof(c->gpus)], note[6 * sizeof(c->note)],
	        cores[6 * sizeof(c->owner_cores)], who[6 * sizeof(c->ungated_who)];
	char foreign[24], moved[24], clk0[24], clk1[24], cmin[24], cmax[24], cnom[24], settle[24];
	char t0[24], t1[24], vp[24], vt[24], reasons[600], op[24], of[24], os[24], ugpu[24];
	int iso = (c->known & KREX_CERT_ISOLATION) != 0, clk = (c->known & KREX_CERT_CLOCKS) != 0;
	int temp = (c->known & KREX_CERT_TEMP) != 0, viol = (c->known & KREX_CERT_VIOLATION) != 0;
	int own = (c->known & KREX_CERT_OWN_POWER) != 0;

	json_escape_n(gpus, sizeof(gpus), c->gpus, strnlen(c->gpus, sizeof(c->gpus)));
	json_escape_n(note, sizeof(note), c->note, strnlen(c->note, sizeof(c->note)));
	json_escape_n(cores, sizeof(cores), c->owner_cores,
	              strnlen(c->owner_cores, sizeof(c->owner_cores)));
	json_int(foreign, sizeof(foreign), (c->known & KREX_CERT_FOREIGN) != 0, c->foreign);
	json_int(moved, sizeof(moved), iso, c->moved);
	json_int(clk0, sizeof(clk0), clk, c->sm_clock_start_mhz);
	json_int(clk1, sizeof(clk1), clk, c->sm_clock_end_mhz);
	json_int(cmin, sizeof(cmin), clk && c->sm_clock_min_mhz >= 0, c->sm_clock_min_mhz);
	json_int(cmax, sizeof(cmax), clk && c->sm_clock_max_mhz >= 0, c->sm_clock_max_mhz);
	json_int(cnom, sizeof(cnom), clk && c->sm_clock_nominal_mhz >= 0, c->sm_clock_nominal_mhz);
	json_int(settle, sizeof(settle), (c->known & KREX_CERT_SETTLE) != 0,
	         (long long)c->settle_us);
	json_int(t0, sizeof(t0), temp, c->temp_start_c);
	json_int(t1, sizeof(t1), temp, c->temp_end_c);
	json_int(vp, sizeof(vp), viol, (long long)c->violation_power_us);
	json_int(vt, sizeof(vt), viol, (long long)c->violation_thermal_us);
	json_reasons(reasons, sizeof(reasons), clk, c->clock_reasons);
	json_int(op, sizeof(op), own, (long long)c->own_power_cap_us);
	json_int(of, sizeof(of), own && c->own_power_cap_first_us >= 0,
	         (long long)c->own_power_cap_first_us);
	json_int(os, sizeof(os), own, (long long)c->own_power_cap_samples);
	json_int(ugpu, sizeof(ugpu), c->ungated_gpu >= 0, c->ungated_gpu);
	json_escape_n(who, sizeof(who), c->ungated_who,
	              strnlen(c->ungated_who, sizeof(c->ungated_who)));
	return snprintf(
	        buf, len,
	        "{\"region\":%llu,\"outcome\":\"%s\",\"gpus\":\"%s\","
	        "\"wait_us\":%llu,\"drain_us\":%llu,\"freeze_us\":%llu,"
	        "\"isolate_us\":%llu,\"settle_us\":%s,\"held_us\":%llu,\"lease_us\":%llu,"
	        "\"siblings\":%u,\"drained\":%u,\"late\":%u,\"frozen\":%u,"
	        "\"foreign\":%s,\"moved\":%s,\"owner_cores\":%s%s%s,"
	        "\"sm_clock_start_mhz\":%s,\"sm_clock_end_mhz\":%s,"
	        "\"sm_clock_min_mhz\":%s,\"sm_clock_max_mhz\":%s,\"sm_clock_nominal_mhz\":%s,"
	        "\"clock_samples\":%u,\"clock_reasons\":%s,"
	        "\"throttle_start\":%llu,\"throttle_end\":%llu,"
	        "\"temp_start_c\":%s,\"temp_end_c\":%s,"
	        "\"violation_power_us\":%s,\"violation_thermal_us\":%s,\"note\":\"%s\","
	        "\"own_power_cap_us\":%s,\"own_power_cap_first_us\":%s,\"own_power_cap_samples\":%s,"
	        "\"chained\":%u,\"chain_us\":%llu,"
	        "\"ungated\":%u,\"ungated_gpu\":%s,\"ungated_who\":\"%s\"}",
	        (unsigned long long)c->region_id, cert_outcome_name(c->outcome), gpus,
	        (unsigned long long)c->wait_us, (unsigned long long)c->drain_us,
	        (unsigned long long)c->freeze_us, (unsigned long long)c->isolate_us, settle,
	        (unsigned long long)c->held_us, (unsigned long long)c->lease_us, c->siblings,
	        c->drained, c->late, c->frozen, foreign, moved, iso ? "\"" : "",
	        iso ? cores : "null", iso ? "\"" : "", clk0, clk1, cmin, cmax, cnom,
	        c->clock_samples, reasons, (unsigned long long)c->throttle_start,
	        (unsigned long long)c->throttle_end, t0, t1, vp, vt, note, op, of, os, c->chained,
	        (unsigned long long)c->chain_us, c->ungated, ugpu, who);
}

/* Unix microseconds as RFC 3339 UTC with microseconds. */
static void json_time(char *out, size_t len, uint64_t us)
{
	time_t s = (time_t)(us / 1000000);
	struct tm tm;

	if (!gmtime_r(&s, &tm))
		memset(&tm, 0, sizeof(tm));
	snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned)(us % 1000000));
}

int json_log_entry(const struct proto_log_entry *e, const char *node, char *buf, size_t len)
{
	char nd[6 * 64], label[6 * sizeof(e->label)], t0[96], t1[96];
	char cert[JSON_CERT_MAX];

	json_escape(nd, sizeof(nd), node);
	json_escape_n(label, sizeof(label), e->label, strnlen(e->label, sizeof(e->label)));
	json_time(t0, sizeof(t0), e->begin_us);
	json_time(t1, sizeof(t1), e->end_us);
	if (json_certificate(&e->cert, cert, sizeof(cert)) >= (int)sizeof(cert))
		return -1;
	return snprintf(buf, len,
	                "{\"time\":\"%s\",\"begin\":\"%s\",\"node\":\"%s\",\"seq\":%llu,"
	                "\"job\":%u,\"step\":%u,\"uid\":%u,\"pid\":%u,\"label\":\"%s\","
	                "\"certificate\":%s}",
	                t1, t0, nd, (unsigned long long)e->seq, e->job, e->step, e->uid, e->pid,
	                label, cert);
}

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
