/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_golden_test.c - every wire message type, filled field by field with
 * distinct values, packs to the bytes of proto_golden.txt, unpacks from them
 * to the same message, and packs again to the same bytes.
 *
 * proto_golden.txt was written by the hand-written packer that
 * common/messages.def replaced (proto_golden_test --write FILE, run on that
 * code): it proves the wire format did not change.  A new message type needs
 * rows there (the test fails for a type without one).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "tap.h"

#define VARIANTS 3 /* 0: zeros and empty; 1: typical; 2: every string and list full */

static uint64_t rng_state;

static uint64_t next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t u64(int v)
{
	return v ? next() : 0;
}

static uint32_t u32(int v)
{
	return (uint32_t)u64(v);
}

static uint16_t u16(int v)
{
	return (uint16_t)u64(v);
}

/* A string for a field of size bytes: empty, a few characters, or full. */
static void str(int v, char *out, size_t size)
{
	size_t n = v == 0 ? 0 : v == 1 ? 1 + next() % (size / 4 + 1) : size - 1, i;

	if (n > PROTO_MAX_STR)
		n = PROTO_MAX_STR;
	if (n >= size)
		n = size - 1;
	for (i = 0; i < n; i++)
		out[i] = (char)(' ' + 1 + next() % 94);
	out[n] = '\0';
}

#define STR(v, f) str(v, f, sizeof(f))

static unsigned count(int v, unsigned typical, unsigned max)
{
	return v == 0 ? 0 : v == 1 ? typical : max;
}

static void fill_gpus(int v, struct proto_gpus *g)
{
	unsigned i;

	g->n = (uint16_t)count(v, 2, KREX_MAX_GPUS);
	for (i = 0; i < g->n; i++) {
		STR(v, g->name[i]);
		if (!g->name[i][0])
			strcpy(g->name[i], "g");
	}
}

static void fill_cert(int v, struct krex_certificate *c)
{
	c->size = sizeof(*c);
	c->region_id = u64(v);
	c->outcome = v ? (uint32_t)(next() % (KREX_OUTCOME_UNPROTECTED + 1)) : 0;
	c->wait_us = u64(v);
	c->drain_us = u64(v);
	c->freeze_us = u64(v);
	c->isolate_us = u64(v);
	c->held_us = u64(v);
	c->lease_us = u64(v);
	c->siblings = u32(v);
	c->drained = u32(v);
	c->late = u32(v);
	c->frozen = u32(v);
	c->known = u32(v);
	c->foreign = (int32_t)u32(v);
	c->moved = (int32_t)u32(v);
	STR(v, c->owner_cores);
	c->sm_clock_start_mhz = (int32_t)u32(v);
	c->sm_clock_end_mhz = (int32_t)u32(v);
	c->throttle_start = u64(v);
	c->throttle_end = u64(v);
	STR(v, c->gpus);
	STR(v, c->note);
	c->settle_us = u64(v);
	c->sm_clock_min_mhz = (int32_t)u32(v);
	c->sm_clock_max_mhz = (int32_t)u32(v);
	c->sm_clock_nominal_mhz = (int32_t)u32(v);
	c->clock_samples = u32(v);
	c->clock_reasons = u64(v);
	c->temp_start_c = (int32_t)u32(v);
	c->temp_end_c = (int32_t)u32(v);
	c->violation_power_us = u64(v);
	c->violation_thermal_us = u64(v);
	c->own_power_cap_us = u64(v);
	c->own_power_cap_first_us = (int64_t)u64(v);
	c->own_power_cap_samples = u32(v);
	c->chain_us = u64(v);
	c->chained = u32(v);
	c->ungated = u32(v);
	c->ungated_gpu = (int32_t)u32(v);
	STR(v, c->ungated_who);
}

static void fill_status_reply(int v, struct proto_status_reply *s)
{
	unsigned i;

	STR(v, s->node);
	STR(v, s->freezer);
	STR(v, s->isolation);
	s->uptime_us = u64(v);
	s->regions_total = u64(v);
	s->ngpus = (uint16_t)count(v, 2, KREX_MAX_GPUS);
	for (i = 0; i < s->ngpus; i++) {
		STR(v, s->gpu[i].name);
		s->gpu[i].slot = u32(v);
		s->gpu[i].holder = u32(v);
		s->gpu[i].region_id = u64(v);
		s->gpu[i].queued = u32(v);
	}
	s->nparts = (uint16_t)count(v, 3, 20);
	s->parts = s->nparts ? calloc(s->nparts, sizeof(*s->parts)) : NULL;
	for (i = 0; i < s->nparts; i++) {
		struct proto_status_part *p = &s->parts[i];
		p->id = u32(v);
		p->pid = u32(v);
		p->uid = u32(v);
		p->job = u32(v);
		p->step = u32(v);
		p->state = u32(v);
		p->members = u32(v);
		STR(v, p->label);
		STR(v, p->gpus);
		STR(v, p->cgroup);
	}
	s->nregions = (uint16_t)count(v, 2, 20);
	s->regions = s->nregions ? calloc(s->nregions, sizeof(*s->regions)) : NULL;
	for (i = 0; i < s->nregions; i++) {
		struct proto_status_region *r = &s->regions[i];
		r->id = u64(v);
		r->owner = u32(v);
		r->pid = u32(v);
		r->state = u32(v);
		r->age_us = u64(v);
		r->lease_us = u64(v);
		STR(v, r->gpus);
	}
}

static void fill_log_reply(int v, struct proto_log_reply *l)
{
	unsigned i;

	STR(v, l->node);
	l->total = u64(v);
	l->kept = u64(v);
	l->next = u64(v);
	l->n = (uint16_t)count(v, 2, 8);
	l->e = l->n ? calloc(l->n, sizeof(*l->e)) : NULL;
	for (i = 0; i < l->n; i++) {
		struct proto_log_entry *e = &l->e[i];
		e->seq = u64(v);
		e->begin_us = u64(v);
		e->end_us = u64(v);
		e->uid = u32(v);
		e->pid = u32(v);
		e->job = u32(v);
		e->step = u32(v);
		STR(v, e->label);
		fill_cert(v, &e->cert);
	}
}

static void fill_signed_reply(int v, struct proto_signed_reply *r)
{
	uint32_t i;

	r->region_id = u64(v);
	r->status = u32(v);
	STR(v, r->reason);
	r->cred_len = count(v, 40, PROTO_SIGNED_MAX_CRED);
	r->cred = r->cred_len ? malloc(r->cred_len + 1) : NULL;
	for (i = 0; i < r->cred_len; i++)
		r->cred[i] = (char)(' ' + 1 + next() % 94);
	if (r->cred)
		r->cred[r->cred_len] = '\0';
}

/* Fill message type with variant v; the same (type, v) always gives the same message. */
static void fill(uint16_t type, int v, union proto_body *m)
{
	unsigned i;

	memset(m, 0, sizeof(*m));
	rng_state = (uint64_t)type * 1000 + (uint64_t)v;
	switch (type) {
	case PROTO_REGISTER:
		m->reg.pid = u32(v);
		m->reg.job = u32(v);
		m->reg.step = u32(v);
		m->reg.flags = u32(v);
		STR(v, m->reg.cgroup);
		STR(v, m->reg.cpus);
		STR(v, m->reg.label);
		fill_gpus(v, &m->reg.gpus);
		break;
	case PROTO_REGISTERED:
		m->registered.participant = u32(v);
		m->registered.queue_cap = u32(v);
		m->registered.queue_us = u32(v);
		m->registered.gate_timeout_ms = u32(v);
		STR(v, m->registered.gate_path);
		m->registered.nslots = (uint16_t)count(v, 3, KREX_MAX_GPUS);
		for (i = 0; i < m->registered.nslots; i++)
			m->registered.slot[i] = (uint16_t)(u16(v) % KREX_MAX_GPUS);
		break;
	case PROTO_UNREGISTER:
		m->unreg.pid = u32(v);
		break;
	case PROTO_OK:
		m->ok.value = u32(v);
		break;
	case PROTO_REGION_BEGIN:
		fill_gpus(v, &m->begin.gpus);
		m->begin.expected_us = u64(v);
		m->begin.max_us = u64(v);
		m->begin.timeout_ms = u32(v);
		m->begin.flags = u32(v);
		break;
	case PROTO_GRANT:
		m->grant.region_id = u64(v);
		m->grant.lease_us = u64(v);
		m->grant.wait_us = u64(v);
		m->grant.drain_us = u64(v);
		m->grant.freeze_us = u64(v);
		m->grant.isolate_us = u64(v);
		break;
	case PROTO_REGION_END:
		m->end.region_id = u64(v);
		break;
	case PROTO_CERT:
		fill_cert(v, &m->cert);
		break;
	case PROTO_STATUS:
		m->status.flags = u32(v);
		break;
	case PROTO_STATUS_REPLY:
		fill_status_reply(v, &m->status_reply);
		break;
	case PROTO_DRAIN_ACK:
		m->ack.generation = u32(v);
		m->ack.status = u32(v);
		m->ack.drain_us = u64(v);
		break;
	case PROTO_CTX_MAKING:
		m->ctxm.making = u32(v);
		break;
	case PROTO_RELEASE:
		m->release.region_id = u64(v);
		break;
	case PROTO_ERROR:
		m->error.code = u32(v);
		STR(v, m->error.message);
		break;
	case PROTO_LOG:
		m->log.job = u32(v);
		m->log.step = u32(v);
		m->log.outcomes = u32(v);
		m->log.since_us = u64(v);
		m->log.before = u64(v);
		m->log.max = u32(v);
		break;
	case PROTO_LOG_REPLY:
		fill_log_reply(v, &m->log_reply);
		break;
	case PROTO_SUMMARY:
		m->summary.job = u32(v);
		m->summary.step = u32(v);
		break;
	case PROTO_SUMMARY_REPLY:
		m->summary_reply.job = u32(v);
		m->summary_reply.step = u32(v);
		m->summary_reply.regions = u32(v);
		m->summary_reply.clean = u32(v);
		m->summary_reply.degraded = u32(v);
		m->summary_reply.expired = u32(v);
		m->summary_reply.late = u32(v);
		m->summary_reply.entry_p50_us = u64(v);
		m->summary_reply.entry_p95_us = u64(v);
		m->summary_reply.entry_max_us = u64(v);
		m->summary_reply.held_us = u64(v);
		break;
	case PROTO_SIGNED:
		m->sig.region_id = u64(v);
		break;
	case PROTO_SIGNED_REPLY:
		fill_signed_reply(v, &m->sig_reply);
		break;
	}
}

/* The same message?  Plain structs compare whole (both were zeroed before
 * being filled); the three with lists compare their fixed part and each list. */
static int same(uint16_t type, const union proto_body *a, const union proto_body *b)
{
	union proto_body x = *a, y = *b;

	switch (type) {
	case PROTO_STATUS_REPLY:
		if (a->status_reply.nparts != b->status_reply.nparts ||
		    a->status_reply.nregions != b->status_reply.nregions)
			return 0;
		if (a->status_reply.nparts &&
		    memcmp(a->status_reply.parts, b->status_reply.parts,
		           a->status_reply.nparts * sizeof(*a->status_reply.parts)))
			return 0;
		if (a->status_reply.nregions &&
		    memcmp(a->status_reply.regions, b->status_reply.regions,
		           a->status_reply.nregions * sizeof(*a->status_reply.regions)))
			return 0;
		x.status_reply.parts = y.status_reply.parts = NULL;
		x.status_reply.regions = y.status_reply.regions = NULL;
		break;
	case PROTO_LOG_REPLY:
		if (a->log_reply.n != b->log_reply.n ||
		    (a->log_reply.n && memcmp(a->log_reply.e, b->log_reply.e,
		                              a->log_reply.n * sizeof(*a->log_reply.e))))
			return 0;
		x.log_reply.e = y.log_reply.e = NULL;
		break;
	case PROTO_SIGNED_REPLY:
		if (a->sig_reply.cred_len != b->sig_reply.cred_len ||
		    (a->sig_reply.cred_len &&
		     memcmp(a->sig_reply.cred, b->sig_reply.cred, a->sig_reply.cred_len + 1)))
			return 0;
		x.sig_reply.cred = y.sig_reply.cred = NULL;
		break;
	}
	return memcmp(&x, &y, sizeof(x)) == 0;
}

static char *hex(const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *s = malloc(2 * n + 1);
	size_t i;

	for (i = 0; i < n; i++) {
		s[2 * i] = digits[p[i] >> 4];
		s[2 * i + 1] = digits[p[i] & 15];
	}
	s[2 * n] = '\0';
	return s;
}

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = strlen(s) / 2, i;
	unsigned x;

	if (n > cap)
		return 0;
	for (i = 0; i < n; i++) {
		if (sscanf(s + 2 * i, "%2x", &x) != 1)
			return 0;
		out[i] = (uint8_t)x;
	}
	return n;
}

/* The golden file: one line per (type, variant): NAME TYPE VARIANT HEX. */
static int write_golden(const char *path)
{
	FILE *f = fopen(path, "w");
	union proto_body m;
	uint16_t t;
	int v;

	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "# proto_golden_test.c: NAME TYPE VARIANT HEX (header + payload), seq = TYPE\n");
	for (t = 1; t < PROTO_TYPE_MAX; t++) {
		for (v = 0; v < VARIANTS; v++) {
			struct pbuf b;
			char *h;

			fill(t, v, &m);
			pbuf_init(&b);
			if (proto_pack(&b, t, t, &m) < 0) {
				fprintf(stderr, "%s %d: pack: %s\n", proto_type_name(t), v,
				        strerror(errno));
				return 1;
			}
			h = hex(b.data, b.len);
			fprintf(f, "%s %u %d %s\n", proto_type_name(t), t, v, h);
			free(h);
			pbuf_free(&b);
			proto_body_free(t, &m);
		}
	}
	return fclose(f) ? 1 : 0;
}

/* One golden row: pack, unpack, pack again. */
static void check_row(const char *name, unsigned t, int v, const char *hexbytes)
{
	static uint8_t want[PROTO_HDR_LEN + PROTO_MAX_PAYLOAD];
	size_t n = unhex(hexbytes, want, sizeof(want));
	union proto_body m, got;
	struct proto_hdr h;
	struct pbuf b;
	char *h1;
	int rc;

	ok(strcmp(proto_type_name((uint16_t)t), name) == 0, "type %u is named %s", t, name);
	fill((uint16_t)t, v, &m);
	pbuf_init(&b);
	rc = proto_pack(&b, (uint16_t)t, t, &m);
	if (!ok(rc == 0 && b.len == n && memcmp(b.data, want, n) == 0,
	        "%s variant %d packs to the golden bytes (%zu)", name, v, n)) {
		h1 = hex(b.data, b.len);
		diag("got  %s", h1);
		diag("want %s", hexbytes);
		free(h1);
	}
	pbuf_free(&b);

	rc = n >= PROTO_HDR_LEN ? proto_hdr_parse(want, &h) : -1;
	ok(rc == PROTO_HDR_OK && h.type == t && h.seq == t && h.length == n - PROTO_HDR_LEN &&
	           proto_unpack(h.type, want + PROTO_HDR_LEN, h.length, &got) == 0 &&
	           same((uint16_t)t, &m, &got),
	   "%s variant %d unpacks from the golden bytes to the same message", name, v);
	pbuf_init(&b);
	ok(proto_pack(&b, (uint16_t)t, t, &got) == 0 && b.len == n && memcmp(b.data, want, n) == 0,
	   "%s variant %d packs back to the golden bytes", name, v);
	pbuf_free(&b);
	proto_body_free((uint16_t)t, &got);
	proto_body_free((uint16_t)t, &m);
}

int main(int argc, char **argv)
{
	static char line[2 * (PROTO_HDR_LEN + PROTO_MAX_PAYLOAD) + 256];
	int rows[PROTO_TYPE_MAX] = {0}, nrows = 0;
	const char *path = PROTO_GOLDEN;
	FILE *f;
	unsigned t;

	if (argc == 3 && strcmp(argv[1], "--write") == 0)
		return write_golden(argv[2]);
	f = fopen(path, "r");
	if (!f) {
		printf("1..1\nnot ok 1 - open %s: %s\n", path, strerror(errno));
		return 1;
	}
	plan(4 * (PROTO_TYPE_MAX - 1) * VARIANTS + (PROTO_TYPE_MAX - 1));
	while (fgets(line, sizeof(line), f)) {
		char name[64], *hexbytes;
		int v, used;

		if (line[0] == '#')
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%63s %u %d %n", name, &t, &v, &used) != 3 || t == 0 ||
		    t >= PROTO_TYPE_MAX) {
			ok(0, "golden row: %.60s", line);
			continue;
		}
		hexbytes = line + used;
		check_row(name, t, v, hexbytes);
		rows[t]++;
		nrows++;
	}
	fclose(f);
	for (t = 1; t < PROTO_TYPE_MAX; t++)
		ok(rows[t] == VARIANTS, "%s has %d golden rows", proto_type_name((uint16_t)t),
		   rows[t]);
	diag("%d golden rows", nrows);
	return tap_done();
}
