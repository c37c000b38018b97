/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_test.c - wire protocol: golden bytes, round trips, and every class of
 * malformed input (short, long, bad magic, bad version, unknown type, length
 * lies).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdio.h"
#include "proto.h"
#include "tap.h"
#include "timeutil.h"

static int unpack_bytes(const uint8_t *bytes, size_t len, union proto_body *m, int *herr)
{
	struct proto_hdr h;

	*herr = proto_hdr_parse(bytes, &h);
	if (*herr != PROTO_HDR_OK)
		return -1;
	if (h.length != len - PROTO_HDR_LEN)
		return -2;
	return proto_unpack(h.type, bytes + PROTO_HDR_LEN, h.length, m);
}

static void test_golden(void)
{
	static const uint8_t want[] = {0x4b, 0x52, 0x45, 0x58, 0x00, 0x06, 0x00, 0x07,
	                               0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x07,
	                               0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
	static const uint8_t want_err[] = {0x4b, 0x52, 0x45, 0x58, 0x00, 0x06, 0x00, 0x0d,
	                                   0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
	                                   0x00, 0x00, 0x00, 0x05, 0x00, 0x02, 'h',  'i'};
	union proto_body m;
	struct pbuf b;

	memset(&m, 0, sizeof(m));
	m.end.region_id = 0x0102030405060708ULL;
	pbuf_init(&b);
	ok(proto_pack(&b, PROTO_REGION_END, 7, &m) == 0 && b.len == sizeof(want) &&
	           memcmp(b.data, want, sizeof(want)) == 0,
	   "REGION_END packs to the golden bytes");
	pbuf_free(&b);

	proto_error_set(&m, KREX_ETIMEDOUT, "hi");
	pbuf_init(&b);
	ok(proto_pack(&b, PROTO_ERROR, 0, &m) == 0 && b.len == sizeof(want_err) &&
	           memcmp(b.data, want_err, sizeof(want_err)) == 0,
	   "ERROR packs to the golden bytes");
	pbuf_free(&b);
}

static void fill_register(union proto_body *m)
{
	memset(m, 0, sizeof(*m));
	m->reg.pid = 4242;
	m->reg.job = 17;
	m->reg.step = 2;
	m->reg.flags = PROTO_REG_GATE;
	strcpy(m->reg.cgroup, "/slurm/uid_0/job_17/step_2");
	strcpy(m->reg.cpus, "0-3,8");
	strcpy(m->reg.label, "job 17.2");
	m->reg.gpus.n = 2;
	strcpy(m->reg.gpus.name[0], "00000000:19:00.0");
	strcpy(m->reg.gpus.name[1], "00000000:3b:00.0");
}

static void test_roundtrips(void)
{
	union proto_body a, b;
	struct pbuf buf;
	int herr;

	fill_register(&a);
	pbuf_init(&buf);
	ok(proto_pack(&buf, PROTO_REGISTER, 1, &a) == 0 &&
	           unpack_bytes(buf.data, buf.len, &b, &herr) == 0 &&
	           memcmp(&a.reg, &b.reg, sizeof(a.reg)) == 0,
	   "REGISTER round trip");
	pbuf_free(&buf);

	memset(&a, 0, sizeof(a));
	a.cert.size = sizeof(a.cert);
	a.cert.region_id = 99;
	a.cert.outcome = KREX_OUTCOME_DEGRADED;
	a.cert.wait_us = 1;
	a.cert.drain_us = 2;
	a.cert.freeze_us = 3;
	a.cert.isolate_us = 4;
	a.cert.held_us = 5;
	a.cert.lease_us = 6;
	a.cert.siblings = 3;
	a.cert.drained = 2;
	a.cert.late = 1;
	a.cert.frozen = 3;
	a.cert.known = KREX_CERT_ISOLATION;
	a.cert.foreign = -1;
	a.cert.moved = 12;
	strcpy(a.cert.owner_cores, "0-1");
	a.cert.sm_clock_start_mhz = -1;
	a.cert.sm_clock_end_mhz = -1;
	strcpy(a.cert.gpus, "gpu0");
	strcpy(a.cert.note, "1 sibling late");
	a.cert.settle_us = 515000;
	a.cert.sm_clock_min_mhz = 1500;
	a.cert.sm_clock_max_mhz = 1980;
	a.cert.sm_clock_nominal_mhz = 1980;
	a.cert.clock_samples = 7;
	a.cert.clock_reasons = 0x5;
	a.cert.temp_start_c = -1;
	a.cert.temp_end_c = 61;
	a.cert.violation_power_us = 0x0102030405060708ULL;
	a.cert.violation_thermal_us = 9;
	a.cert.own_power_cap_us = 0x0a0b;
	a.cert.own_power_cap_first_us = -1;
	a.cert.own_power_cap_samples = 3;
	a.cert.chain_us = 0x1122334455667788ULL;
	a.cert.chained = 3;
	a.cert.ungated = 2;
	a.cert.ungated_gpu = -1;
	snprintf(a.cert.ungated_who, sizeof(a.cert.ungated_who), "p3");
	pbuf_init(&buf);
	ok(proto_pack(&buf, PROTO_CERT, 2, &a) == 0 &&
	           unpack_bytes(buf.data, buf.len, &b, &herr) == 0 &&
	           memcmp(&a.cert, &b.cert, sizeof(a.cert)) == 0,
	   "CERT round trip, negative 'unknown' fields kept");
	{
		/* The protocol 3 tail, after the note: settle_us, min, max, nominal,
		 * samples, reasons, temperatures, violation counters. */
		static const uint8_t tail[] = {
		        0,    0,    0, 0, 0,    0x07, 0xdb, 0xb8, 0, 0, 0x05, 0xdc, 0, 0,
		        0x07, 0xbc, 0, 0, 0x07, 0xbc, 0,    0,    0, 7, 0,    0,    0, 0,
		        0,    0,    0, 5, 0xff, 0xff, 0xff, 0xff, 0, 0, 0,    61,   1, 2,
		        3,    4,    5, 6, 7,    8,    0,    0,    0, 0, 0,    0,    0, 9};
		/* The protocol 5 tails: the owner's own power cap, then the chain. */
		static const uint8_t tail5[] = {0,    0,    0,    0,    0,    0,    0x0a,
		                                0x0b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		                                0xff, 0xff, 0,    0,    0,    3};
		static const uint8_t chain[] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
		                                0x77, 0x88, 0,    0,    0,    3};
		/* The protocol 6 tail: ungated, ungated_gpu (-1), ungated_who. */
		static const uint8_t tail6[] = {0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0, 2, 'p', '3'};
		size_t n6 = sizeof(tail6), n5 = sizeof(tail5) + sizeof(chain) + n6;

		ok(buf.len > sizeof(tail) + n5 &&
		           memcmp(buf.data + buf.len - n5 - sizeof(tail), tail, sizeof(tail)) == 0,
		   "CERT carries the protocol 3 GPU-state fields, golden bytes");
		ok(memcmp(buf.data + buf.len - n5, tail5, sizeof(tail5)) == 0,
		   "CERT carries the protocol 5 own power cap fields, golden bytes");
		ok(memcmp(buf.data + buf.len - n6 - sizeof(chain), chain, sizeof(chain)) == 0,
		   "CERT carries the protocol 5 chain fields, golden bytes");
		ok(memcmp(buf.data + buf.len - n6, tail6, n6) == 0,
		   "CERT ends with the protocol 6 ungated fields, golden bytes");
	}
	pbuf_free(&buf);

	memset(&a, 0, sizeof(a));
	a.status_reply.ngpus = 1;
	strcpy(a.status_reply.gpu[0].name, "gpu0");
	a.status_reply.nparts = 2;
	a.status_reply.parts = calloc(2, sizeof(struct proto_status_part));
	a.status_reply.parts[1].pid = 77;
	strcpy(a.status_reply.parts[1].label, "x");
	a.status_reply.nregions = 1;
	a.status_reply.regions = calloc(1, sizeof(struct proto_status_region));
	a.status_reply.regions[0].id = 5;
	pbuf_init(&buf);
	ok(proto_pack(&buf, PROTO_STATUS_REPLY, 3, &a) == 0 &&
	           unpack_bytes(buf.data, buf.len, &b, &herr) == 0 && b.status_reply.nparts == 2 &&
	           b.status_reply.parts[1].pid == 77 &&
	           strcmp(b.status_reply.parts[1].label, "x") == 0 &&
	           b.status_reply.regions[0].id == 5,
	   "STATUS_REPLY round trip");
	proto_body_free(PROTO_STATUS_REPLY, &b);
	proto_body_free(PROTO_STATUS_REPLY, &a);
	pbuf_free(&buf);
}

static void test_malformed(void)
{
	union proto_body a, b;
	struct pbuf buf;
	struct proto_hdr h;
	uint8_t *d;
	int herr;

	fill_register(&a);
	pbuf_init(&buf);
	proto_pack(&buf, PROTO_REGISTER, 1, &a);
	d = buf.data;

	d[0] ^= 0xff;
	ok(proto_hdr_parse(d, &h) == PROTO_HDR_BADMAGIC, "bad magic detected");
	d[0] ^= 0xff;
	d[5] = 9;
	ok(proto_hdr_parse(d, &h) == PROTO_HDR_BADVERSION, "bad version detected");
	d[5] = PROTO_VERSION;
	d[7] = 200;
	ok(proto_hdr_parse(d, &h) == PROTO_HDR_BADTYPE, "unknown type detected");
	d[7] = 0;
	ok(proto_hdr_parse(d, &h) == PROTO_HDR_BADTYPE, "type 0 detected");
	d[7] = PROTO_REGISTER;
	d[9] = 0x10; /* length 1 MiB + */
	ok(proto_hdr_parse(d, &h) == PROTO_HDR_TOOLONG, "length over the limit detected");
	d[9] = 0;
	ok(proto_hdr_parse(d, &h) == PROTO_HDR_OK, "restored header parses");
	ok(strcmp(proto_hdr_strerror(PROTO_HDR_BADMAGIC),
	          proto_hdr_strerror(PROTO_HDR_BADVERSION)) &&
	           strcmp(proto_hdr_strerror(PROTO_HDR_BADVERSION),
	                  proto_hdr_strerror(PROTO_HDR_BADTYPE)),
	   "distinct texts for magic, version and type errors");

	errno = 0;
	ok(proto_unpack(PROTO_REGISTER, d + PROTO_HDR_LEN, buf.len - PROTO_HDR_LEN - 1, &b) < 0 &&
	           errno == EPROTO,
	   "short payload refused");
	d = realloc(buf.data, buf.len + 1);
	buf.data = d;
	d[buf.len] = 0;
	ok(proto_unpack(PROTO_REGISTER, d + PROTO_HDR_LEN, buf.len - PROTO_HDR_LEN + 1, &b) < 0,
	   "trailing byte (long payload) refused");
	/* a string whose length says more than the payload holds */
	d[PROTO_HDR_LEN + 16] = 0x7f;
	ok(proto_unpack(PROTO_REGISTER, d + PROTO_HDR_LEN, buf.len - PROTO_HDR_LEN, &b) < 0,
	   "string length lie refused");
	pbuf_free(&buf);

	{
		/* STATUS_REPLY claiming 65535 participants in a few bytes: refused
		 * before allocating for them. */
		struct pbuf p;
		pbuf_init(&p);
		pbuf_put_str(&p, "n");
		pbuf_put_str(&p, "f");
		pbuf_put_str(&p, "i");
		pbuf_put_u64(&p, 0);
		pbuf_put_u64(&p, 0);
		pbuf_put_u16(&p, 0);
		pbuf_put_u16(&p, 0xffff);
		ok(proto_unpack(PROTO_STATUS_REPLY, p.data, p.len, &b) < 0,
		   "participant count larger than the payload refused");
		pbuf_free(&p);
	}
	{
		struct pbuf p;
		pbuf_init(&p);
		pbuf_put_u16(&p, KREX_MAX_GPUS + 1);
		ok(proto_unpack(PROTO_REGION_BEGIN, p.data, p.len, &b) < 0,
		   "too many GPUs refused");
		pbuf_free(&p);
	}
	{
		struct pbuf p;
		pbuf_init(&p);
		pbuf_put_u32(&p, 1);
		pbuf_put_u16(&p, 3);
		pbuf_put_u8(&p, 'a');
		pbuf_put_u8(&p, 0);
		pbuf_put_u8(&p, 'b');
		ok(proto_unpack(PROTO_ERROR, p.data, p.len, &b) < 0, "embedded NUL refused");
		pbuf_free(&p);
	}
	{
		char big[PROTO_MAX_STR + 2];
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		struct pbuf p;
		pbuf_init(&p);
		pbuf_put_str(&p, big);
		ok(p.err == EINVAL, "packing an over-long string fails");
		pbuf_free(&p);
	}
	ok(unpack_bytes((const uint8_t *)"KREX\0\1\0\4\0\0\0\0\0\0\0\0", 16, &b, &herr) < 0,
	   "OK with an empty payload refused (needs 4 bytes)");
}

static void test_socket(void)
{
	union proto_body a, b;
	uint16_t type;
	uint32_t seq;
	int sv[2], herr;
	static const uint8_t junk[16] = "GARBAGE-GARBAGE";

	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	memset(&a, 0, sizeof(a));
	a.grant.region_id = 12;
	a.grant.lease_us = 1000;
	ok(proto_send(sv[0], PROTO_GRANT, 9, &a, time_deadline_ms(1000)) == 0 &&
	           proto_recv(sv[1], &type, &seq, &b, time_deadline_ms(1000), &herr) == 0 &&
	           type == PROTO_GRANT && seq == 9 && b.grant.region_id == 12,
	   "send and receive over a socket");
	errno = 0;
	ok(proto_recv(sv[1], &type, &seq, &b, time_deadline_ms(50), &herr) < 0 &&
	           errno == ETIMEDOUT,
	   "receive with nothing sent times out");
	write(sv[0], junk, sizeof(junk));
	ok(proto_recv(sv[1], &type, &seq, &b, time_deadline_ms(1000), &herr) < 0 &&
	           errno == EPROTO && herr == PROTO_HDR_BADMAGIC,
	   "garbage on the socket is a bad magic");
	{
		uint64_t until = time_now_ns() + 2000000u;

		ok(fd_spin_readable(sv[1], until) == 0 && time_now_ns() >= until,
		   "spinning on a socket with nothing to read ends at its deadline, 0");
	}
	write(sv[0], "K", 1);
	ok(fd_spin_readable(sv[1], time_now_ns() + 60000000000ull) == 1,
	   "spinning on a socket with a byte to read answers 1 at once");
	write(sv[0], "REX", 3);
	close(sv[0]);
	ok(fd_spin_readable(sv[1], time_now_ns() + 60000000000ull) == 1,
	   "and on one whose peer closed (the read then says so)");
	ok(proto_recv(sv[1], &type, &seq, &b, time_deadline_ms(1000), &herr) < 0 &&
	           errno == ECONNRESET,
	   "a header cut short by close is reported");
	close(sv[1]);
}

/* LOG, LOG_REPLY (entries with strings), SUMMARY, SUMMARY_REPLY; a lying count. */
static void test_history_messages(void)
{
	static union proto_body a, b;
	struct proto_log_entry e[3];
	struct pbuf buf;
	int herr, i, same;

	memset(&a, 0, sizeof(a));
	a.log.job = 7;
	a.log.step = PROTO_LOG_ANY_STEP;
	a.log.outcomes = 1u << KREX_OUTCOME_DEGRADED;
	a.log.since_us = 1796000000000000ULL;
	a.log.before = 42;
	a.log.max = 10;
	pbuf_init(&buf);
	ok(proto_pack(&buf, PROTO_LOG, 1, &a) == 0 &&
	           unpack_bytes(buf.data, buf.len, &b, &herr) == 0 &&
	           memcmp(&a.log, &b.log, sizeof(a.log)) == 0 && buf.len == PROTO_HDR_LEN + 32,
	   "LOG round trip, 32 bytes");
	pbuf_free(&buf);

	memset(e, 0, sizeof(e));
	for (i = 0; i < 3; i++) {
		e[i].seq = (uint64_t)i + 1;
		e[i].begin_us = 1000 + (uint64_t)i;
		e[i].end_us = 2000 + (uint64_t)i;
		e[i].uid = 1000;
		e[i].pid = 77;
		e[i].job = 7;
		e[i].step = (uint32_t)i;
		snprintf(e[i].label, sizeof(e[i].label), "job 7.%d", i);
		e[i].cert.size = sizeof(e[i].cert);
		e[i].cert.region_id = (uint64_t)i + 10;
		e[i].cert.outcome = (uint32_t)i;
		e[i].cert.late = (uint32_t)i;
		snprintf(e[i].cert.gpus, sizeof(e[i].cert.gpus), "0,1");
		snprintf(e[i].cert.note, sizeof(e[i].cert.note), "note %d", i);
	}
	memset(&a, 0, sizeof(a));
	snprintf(a.log_reply.node, sizeof(a.log_reply.node), "node1");
	a.log_reply.total = 5;
	a.log_reply.kept = 3;
	a.log_reply.next = 1;
	a.log_reply.n = 3;
	a.log_reply.e = e;
	pbuf_init(&buf);
	same = proto_pack(&buf, PROTO_LOG_REPLY, 1, &a) == 0 &&
	       unpack_bytes(buf.data, buf.len, &b, &herr) == 0 && b.log_reply.n == 3 &&
	       b.log_reply.total == 5 && b.log_reply.kept == 3 && b.log_reply.next == 1 &&
	       !strcmp(b.log_reply.node, "node1");
	for (i = 0; same && i < 3; i++)
		same = memcmp(&e[i], &b.log_reply.e[i], sizeof(e[i])) == 0;
	ok(same, "LOG_REPLY round trip with 3 entries");
	{
		/* PROTO_LOG_ENTRY_MIN (krexd cuts its pages by it) is an entry whose
		 * strings are empty: the label, and 3 of the certificate's */
		size_t strs = strlen(e[0].label) + strlen(e[0].cert.gpus) + strlen(e[0].cert.note) +
		              strlen(e[1].label) + strlen(e[1].cert.gpus) + strlen(e[1].cert.note) +
		              strlen(e[2].label) + strlen(e[2].cert.gpus) + strlen(e[2].cert.note);
		ok(buf.len == PROTO_HDR_LEN + 2 + 5 + 3 * 8 + 2 + 3 * PROTO_LOG_ENTRY_MIN + strs,
		   "a LOG_REPLY entry packs to PROTO_LOG_ENTRY_MIN plus its strings");
	}
	if (same) {
		proto_body_free(PROTO_LOG_REPLY, &b);
		/* a count of 1000 entries in a payload that holds 3 */
		buf.data[PROTO_HDR_LEN + 2 + 5 + 24] = 0x03;
		buf.data[PROTO_HDR_LEN + 2 + 5 + 25] = 0xe8;
		errno = 0;
		ok(proto_unpack(PROTO_LOG_REPLY, buf.data + PROTO_HDR_LEN, buf.len - PROTO_HDR_LEN,
		                &b) < 0 &&
		           errno == EPROTO && b.log_reply.e == NULL,
		   "LOG_REPLY whose count the payload cannot hold refused before allocating");
	} else
		ok(0, "LOG_REPLY whose count the payload cannot hold refused before allocating");
	pbuf_free(&buf);
	{
		/* PROTO_LOG_ENTRY_MIN is what one entry with every string empty packs to
		 * (krexd's page size and the count check rely on it). */
		struct proto_log_entry one;
		size_t len0;

		memset(&one, 0, sizeof(one));
		memset(&a, 0, sizeof(a));
		pbuf_init(&buf);
		proto_pack(&buf, PROTO_LOG_REPLY, 1, &a);
		len0 = buf.len;
		pbuf_free(&buf);
		a.log_reply.n = 1;
		a.log_reply.e = &one;
		pbuf_init(&buf);
		proto_pack(&buf, PROTO_LOG_REPLY, 1, &a);
		ok(buf.len - len0 == PROTO_LOG_ENTRY_MIN,
		   "an empty LOG_REPLY entry packs to %zu bytes", buf.len - len0);
		pbuf_free(&buf);
	}

	memset(&a, 0, sizeof(a));
	a.summary.job = 12;
	a.summary.step = 0xfffffffbu;
	pbuf_init(&buf);
	ok(proto_pack(&buf, PROTO_SUMMARY, 1, &a) == 0 &&
	           unpack_bytes(buf.data, buf.len, &b, &herr) == 0 &&
	           memcmp(&a.summary, &b.summary, sizeof(a.summary)) == 0,
	   "SUMMARY round trip");
	pbuf_free(&buf);
	memset(&a, 0, sizeof(a));
	a.summary_reply.job = 12;
	a.summary_reply.step = 1;
	a.summary_reply.regions = 9;
	a.summary_reply.clean = 6;
	a.summary_reply.degraded = 2;
	a.summary_reply.expired = 1;
	a.summary_reply.late = 3;
	a.summary_reply.entry_p50_us = 300;
	a.summary_reply.entry_p95_us = 9000;
	a.summary_reply.entry_max_us = 12000;
	a.summary_reply.held_us = 123456;
	pbuf_init(&buf);
	ok(proto_pack(&buf, PROTO_SUMMARY_REPLY, 1, &a) == 0 &&
	           unpack_bytes(buf.data, buf.len, &b, &herr) == 0 &&
	           memcmp(&a.summary_reply, &b.summary_reply, sizeof(a.summary_reply)) == 0,
	   "SUMMARY_REPLY round trip");
	pbuf_free(&buf);
	ok(!strcmp(proto_type_name(PROTO_LOG), "LOG") &&
	           !strcmp(proto_type_name(PROTO_SUMMARY_REPLY), "SUMMARY_REPLY"),
	   "the new types have names");
}

/* The signed form: golden bytes, round trip, length lies and NULs refused. */
static void test_signed(void)
{
	static const uint8_t want[] = {0x4b, 0x52, 0x45, 0x58, 0x00, 0x06, 0x00, 0x13, 0x00, 0x00,
	                               0x00, 0x17, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
	                               0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	                               'x',  0x00, 0x00, 0x00, 0x04, 'M',  'U',  'N',  'G'};
	union proto_body m, r;
	struct pbuf b;
	char *big;
	int herr;

	memset(&m, 0, sizeof(m));
	m.sig_reply.region_id = 9;
	m.sig_reply.status = PROTO_SIGNED_OK;
	snprintf(m.sig_reply.reason, sizeof(m.sig_reply.reason), "x");
	m.sig_reply.cred = "MUNG";
	m.sig_reply.cred_len = 4;
	pbuf_init(&b);
	ok(proto_pack(&b, PROTO_SIGNED_REPLY, 2, &m) == 0 && b.len == sizeof(want) &&
	           memcmp(b.data, want, sizeof(want)) == 0,
	   "SIGNED_REPLY packs to the golden bytes");
	ok(unpack_bytes(b.data, b.len, &r, &herr) == 0 && r.sig_reply.region_id == 9 &&
	           r.sig_reply.cred_len == 4 && r.sig_reply.cred &&
	           !strcmp(r.sig_reply.cred, "MUNG") && !strcmp(r.sig_reply.reason, "x"),
	   "SIGNED_REPLY round trip, the credential NUL-terminated");
	proto_body_free(PROTO_SIGNED_REPLY, &r);
	ok(r.sig_reply.cred == NULL, "proto_body_free frees the credential");
	b.data[b.len - 5] = 5; /* the credential's length runs past the payload */
	ok(unpack_bytes(b.data, b.len, &r, &herr) == -1 && errno == EPROTO,
	   "a credential length past the payload refused");
	b.data[b.len - 5] = 4;
	b.data[b.len - 2] = 0;
	ok(unpack_bytes(b.data, b.len, &r, &herr) == -1 && errno == EPROTO,
	   "a NUL inside the credential refused");
	pbuf_free(&b);
	big = malloc(KREX_SIGNED_MAX + 1);
	memset(big, 'A', KREX_SIGNED_MAX);
	big[KREX_SIGNED_MAX] = '\0';
	m.sig_reply.cred = big;
	m.sig_reply.cred_len = KREX_SIGNED_MAX;
	pbuf_init(&b);
	ok(proto_pack(&b, PROTO_SIGNED_REPLY, 2, &m) < 0 && errno == EINVAL,
	   "packing a credential over %d bytes fails", PROTO_SIGNED_MAX_CRED);
	pbuf_free(&b);
	free(big);
	memset(&m, 0, sizeof(m));
	m.sig.region_id = 77;
	pbuf_init(&b);
	ok(proto_pack(&b, PROTO_SIGNED, 3, &m) == 0 && b.len == PROTO_HDR_LEN + 8 &&
	           unpack_bytes(b.data, b.len, &r, &herr) == 0 && r.sig.region_id == 77,
	   "SIGNED round trip");
	pbuf_free(&b);
}

/* proto_part_state: the words krex status prints for a participant. */
static void test_part_state(void)
{
	char b[64], small[10];

	ok(!strcmp(proto_part_state(0, b, sizeof(b)), "running"), "state 0: running");
	ok(!strcmp(proto_part_state(PROTO_PART_OWNER, b, sizeof(b)), "owner"), "owner alone");
	ok(!strcmp(proto_part_state(PROTO_PART_FROZEN | PROTO_PART_GATED, b, sizeof(b)),
	           "gated,frozen"),
	   "gated and frozen, in the fixed order");
	ok(!strcmp(proto_part_state(PROTO_PART_MOVING, b, sizeof(b)), "moving"), "moving");
	ok(!strcmp(proto_part_state(0x100u, b, sizeof(b)), "0x100"),
	   "a bit this build does not know alone: its hex, not an empty word");
	ok(!strcmp(proto_part_state(0x100u | PROTO_PART_WAITING, b, sizeof(b)), "waiting,0x100"),
	   "a known bit and an unknown one");
	ok(!strcmp(proto_part_state(0xffffffffu, b, sizeof(b)),
	           "moving,owner,waiting,gated,frozen,0xffffffe0"),
	   "every bit: fits the CLI's 64 bytes");
	ok(!strcmp(proto_part_state(PROTO_PART_OWNER | PROTO_PART_WAITING, small, sizeof(small)),
	           "owner"),
	   "cut to a short buffer: a string, whole words");
	ok(!strcmp(proto_part_state(PROTO_PART_OWNER | 0x10000000u, small, sizeof(small)), "owner"),
	   "an unknown bit that does not fit: left out whole");
	ok(proto_part_state(PROTO_PART_OWNER, b, 0) == b, "len 0: nothing written");
}

int main(void)
{
	plan(56);
	test_golden();
	test_roundtrips();
	test_malformed();
	test_socket();
	test_history_messages();
	test_signed();
	test_part_state();
	return tap_done();
}
