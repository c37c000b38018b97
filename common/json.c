/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.c - the JSON string escaper (json.h).
 */
#include "config.h"

#include <stdint.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "certjson.h"
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
	char t0[24], t1[24], vp[24], vt[24], reasons[600], op[24], of[24], os[24];
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
	        "\"chained\":%u,\"chain_us\":%llu}",
	        (unsigned long long)c->region_id, cert_outcome_name(c->outcome), gpus,
	        (unsigned long long)c->wait_us, (unsigned long long)c->drain_us,
	        (unsigned long long)c->freeze_us, (unsigned long long)c->isolate_us, settle,
	        (unsigned long long)c->held_us, (unsigned long long)c->lease_us, c->siblings,
	        c->drained, c->late, c->frozen, foreign, moved, iso ? "\"" : "",
	        iso ? cores : "null", iso ? "\"" : "", clk0, clk1, cmin, cmax, cnom,
	        c->clock_samples, reasons, (unsigned long long)c->throttle_start,
	        (unsigned long long)c->throttle_end, t0, t1, vp, vt, note, op, of, os, c->chained,
	        (unsigned long long)c->chain_us);
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

/* ---- reading -------------------------------------------------------------- */

#define JSON_MAX_DEPTH 32

static size_t json_ws(const char *t, size_t len, size_t i)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/* The end of the string whose opening quote is at t[i], or 0 when unterminated. */
static size_t json_skip_string(const char *t, size_t len, size_t i)
{
	size_t h;

	for (i++; i < len; i++) {
		if (t[i] == '\\') {
			/* only JSON's escapes: a \u with four hex digits */
			if (++i >= len || !strchr("\"\\/bfnrtu", t[i]))
				return 0;
			if (t[i] == 'u')
				for (h = 0; h < 4; h++)
					if (++i >= len || !isxdigit((unsigned char)t[i]))
						return 0;
		} else if (t[i] == '"')
			return i + 1;
		else if ((unsigned char)t[i] < 0x20)
			return 0;
	}
	return 0;
}

/* The end of the digits at t[i] (at least one), or 0. */
static size_t json_skip_digits(const char *t, size_t len, size_t i)
{
	size_t s = i;

	while (i < len && t[i] >= '0' && t[i] <= '9')
		i++;
	return i > s ? i : 0;
}

/* The end of the true, false, null or number (RFC 8259's grammar) at t[i], or 0. */
static size_t json_skip_literal(const char *t, size_t len, size_t i)
{
	static const char *const words[] = {"true", "false", "null"};
	size_t w, n;

	for (w = 0; w < 3; w++) {
		n = strlen(words[w]);
		if (len - i >= n && !memcmp(t + i, words[w], n))
			return i + n;
	}
	if (t[i] == '-')
		i++;
	if (i < len && t[i] == '0')
		i++;
	else if (!(i = json_skip_digits(t, len, i)))
		return 0;
	if (i < len && t[i] == '.' && !(i = json_skip_digits(t, len, i + 1)))
		return 0;
	if (i < len && (t[i] == 'e' || t[i] == 'E')) {
		i++;
		if (i < len && (t[i] == '+' || t[i] == '-'))
			i++;
		if (!(i = json_skip_digits(t, len, i)))
			return 0;
	}
	return i;
}

/* The end of the value at t[i] (after whitespace), or 0 when malformed. */
static size_t json_skip_value(const char *t, size_t len, size_t i, int depth)
{
	char open, close;

	i = json_ws(t, len, i);
	if (i >= len || depth > JSON_MAX_DEPTH)
		return 0;
	if (t[i] == '"')
		return json_skip_string(t, len, i);
	if (t[i] == '{' || t[i] == '[') {
		open = t[i];
		close = open == '{' ? '}' : ']';
		i = json_ws(t, len, i + 1);
		if (i < len && t[i] == close)
			return i + 1;
		for (;;) {
			if (open == '{') {
				if (i >= len || t[i] != '"' || !(i = json_skip_string(t, len, i)))
					return 0;
				i = json_ws(t, len, i);
				if (i >= len || t[i] != ':')
					return 0;
				i++;
			}
			if (!(i = json_skip_value(t, len, i, depth + 1)))
				return 0;
			i = json_ws(t, len, i);
			if (i < len && t[i] == ',') {
				i = json_ws(t, len, i + 1);
				continue;
			}
			return i < len && t[i] == close ? i + 1 : 0;
		}
	}
	return json_skip_literal(t, len, i);
}

int json_object_next(const char *t, size_t len, size_t *pos, const char **key, size_t *keylen,
                     const char **val, size_t *vallen)
{
	size_t i = *pos, k, e;

	if (i == 0) {
		i = json_ws(t, len, 0);
		/* the whole text must be one object */
		e = json_skip_value(t, len, i, 0);
		if (i >= len || t[i] != '{' || !e || json_ws(t, len, e) != len)
			return -1;
		i = json_ws(t, len, i + 1);
	} else {
		i = json_ws(t, len, i);
		if (i < len && t[i] == ',')
			i = json_ws(t, len, i + 1);
	}
	if (i < len && t[i] == '}')
		return 0;
	if (i >= len || t[i] != '"' || !(k = json_skip_string(t, len, i)))
		return -1;
	*key = t + i + 1;
	*keylen = k - i - 2;
	i = json_ws(t, len, k);
	if (i >= len || t[i] != ':')
		return -1;
	i = json_ws(t, len, i + 1);
	if (!(e = json_skip_value(t, len, i, 1)))
		return -1;
	*val = t + i;
	*vallen = e - i;
	*pos = e;
	return 1;
}

int json_object_get(const char *t, size_t len, const char *key, const char **val, size_t *vallen)
{
	size_t pos = 0, kl;
	const char *k;
	int rc;

	while ((rc = json_object_next(t, len, &pos, &k, &kl, val, vallen)) == 1)
		if (kl == strlen(key) && !memcmp(k, key, kl))
			return 1;
	return rc;
}

int json_string_value(const char *v, size_t n, char *out, size_t outlen)
{
	size_t i, o = 0;
	unsigned cp;

	if (n < 2 || v[0] != '"' || v[n - 1] != '"' || !outlen)
		return -1;
	for (i = 1; i < n - 1; i++) {
		char c = v[i];
		if (c == '\\') {
			if (++i >= n - 1)
				return -1;
			switch (v[i]) {
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'n':
				c = '\n';
				break;
			case 'r':
				c = '\r';
				break;
			case 't':
				c = '\t';
				break;
			case 'u':
				if (i + 4 >= n - 1 || sscanf(v + i + 1, "%4x", &cp) != 1)
					return -1;
				i += 4;
				c = cp < 0x80 && cp ? (char)cp : '?';
				break;
			default:
				c = v[i];
				break;
			}
		}
		if (o + 1 >= outlen)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int json_uint_value(const char *v, size_t n, unsigned long long *out)
{
	unsigned long long u = 0;
	size_t i;

	if (!n || n > 19)
		return -1;
	for (i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		u = u * 10 + (unsigned)(v[i] - '0');
	}
	*out = u;
	return 0;
}

/* The next byte of t that counts (whitespace outside strings skipped); *instr:
 * 0 outside a string, 1 inside, 2 right after a backslash inside. */
static int json_same_next(const char *t, size_t len, size_t *i, int *instr)
{
	while (*i < len) {
		unsigned char c = (unsigned char)t[(*i)++];
		if (*instr == 2) {
			*instr = 1;
			return c;
		}
		if (*instr == 1) {
			if (c == '\\')
				*instr = 2;
			else if (c == '"')
				*instr = 0;
			return c;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (c == '"')
			*instr = 1;
		return c;
	}
	return -1;
}

int json_same(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i = 0, j = 0;
	int sa = 0, sb = 0, ca, cb;

	do {
		ca = json_same_next(a, alen, &i, &sa);
		cb = json_same_next(b, blen, &j, &sb);
		if (ca != cb)
			return 0;
	} while (ca >= 0);
	return 1;
}
