/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.c - the JSON string escaper (json.h).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "nvmlapi.h"
#include "proto.h"

/*
 * Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when the
 * bytes there are not one (RFC 3629 table 3-7: shortest form only, no
 * surrogates, at most U+10FFFF).
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* no overlong 3-byte forms */
	else if (c == 0xed)
		hi = 0x9f; /* no surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* no overlong 4-byte forms */
	else if (c == 0xf4)
		hi = 0x8f; /* nothing above U+10FFFF */
	if (n < len)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/*
 * The escaped form of the character at s (n bytes left) into out (at least
 * 7 bytes); returns its length and sets *used to the input bytes it takes.
 */
static size_t escape_one(const unsigned char *s, size_t n, char *out, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	static const char short_from[] = "\"\\\b\f\n\r\t", short_to[] = "\"\\bfnrt";
	unsigned char c = s[0];
	const char *e;
	size_t len;

	*used = 1;
	e = c ? strchr(short_from, c) : NULL;
	if (e) {
		out[0] = '\\';
		out[1] = short_to[e - short_from];
		return 2;
	}
	if (c < 0x20 || c == 0x7f) {
		memcpy(out, "\\u00", 4);
		out[4] = hex[c >> 4];
		out[5] = hex[c & 15];
		return 6;
	}
	len = utf8_len(s, n);
	if (len == 0) {
		memcpy(out, "\\ufffd", 6);
		return 6;
	}
	memcpy(out, s, len);
	*used = len;
	return len;
}

size_t json_escape_n(char *buf, size_t len, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char one[8];
	size_t o = 0, k, used;

	if (len == 0)
		return 0;
	while (n > 0) {
		k = escape_one(p, n, one, &used);
		if (o + k >= len)
			break;
		memcpy(buf + o, one, k);
		o += k;
		p += used;
		n -= used;
	}
	buf[o] = '\0';
	return o;
}

size_t json_escape(char *buf, size_t len, const char *s)
{
	return json_escape_n(buf, len, s, strlen(s));
}

void json_fput_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), k, used;
	char one[8];

	fputc('"', f);
	while (n > 0) {
		k = escape_one(p, n, one, &used);
		fwrite(one, 1, k, f);
		p += used;
		n -= used;
	}
	fputc('"', f);
}

/* ---- certificates and history entries ---- */

/* krex_outcome_name()'s names: libkrexcommon does not link libkrexregion. */
static const char *outcome_name(uint32_t outcome)
{
	static const char *const names[] = {"clean", "expired", "degraded", "unprotected"};

	return outcome <= KREX_OUTCOME_UNPROTECTED ? names[outcome] : "unknown";
}

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
	        cores[6 * sizeof(c->owner_cores)];
	char foreign[24], moved[24], clk0[24], clk1[24], cmin[24], cmax[24], cnom[24], settle[24];
	char t0[24], t1[24], vp[24], vt[24], reasons[600];
	int iso = (c->known & KREX_CERT_ISOLATION) != 0, clk = (c->known & KREX_CERT_CLOCKS) != 0;
	int temp = (c->known & KREX_CERT_TEMP) != 0, viol = (c->known & KREX_CERT_VIOLATION) != 0;

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
	        "\"violation_power_us\":%s,\"violation_thermal_us\":%s,\"note\":\"%s\"}",
	        (unsigned long long)c->region_id, outcome_name(c->outcome), gpus,
	        (unsigned long long)c->wait_us, (unsigned long long)c->drain_us,
	        (unsigned long long)c->freeze_us, (unsigned long long)c->isolate_us, settle,
	        (unsigned long long)c->held_us, (unsigned long long)c->lease_us, c->siblings,
	        c->drained, c->late, c->frozen, foreign, moved, iso ? "\"" : "",
	        iso ? cores : "null", iso ? "\"" : "", clk0, clk1, cmin, cmax, cnom,
	        c->clock_samples, reasons, (unsigned long long)c->throttle_start,
	        (unsigned long long)c->throttle_end, t0, t1, vp, vt, note);
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
