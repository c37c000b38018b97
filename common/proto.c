/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.c - packing and unpacking of KREX wire messages.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "proto.h"

/* ---- packing buffer ------------------------------------------------------ */

void pbuf_init(struct pbuf *b)
{
	memset(b, 0, sizeof(*b));
	b->owned = 1;
}

void pbuf_reader(struct pbuf *b, const uint8_t *data, size_t len)
{
	memset(b, 0, sizeof(*b));
	b->data = (uint8_t *)data;
	b->len = len;
}

void pbuf_free(struct pbuf *b)
{
	if (b->owned)
		free(b->data);
	memset(b, 0, sizeof(*b));
}

/* Make room for n more bytes; the buffer never grows past one message. */
static uint8_t *pbuf_room(struct pbuf *b, size_t n)
{
	size_t want = b->len + n;
	uint8_t *p;

	if (b->err)
		return NULL;
	if (want > PROTO_HDR_LEN + PROTO_MAX_PAYLOAD) {
		b->err = EMSGSIZE;
		return NULL;
	}
	if (want > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < want)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p) {
			b->err = ENOMEM;
			return NULL;
		}
		b->data = p;
		b->cap = cap;
	}
	p = b->data + b->len;
	b->len = want;
	return p;
}

void pbuf_put_u8(struct pbuf *b, uint8_t v)
{
	uint8_t *p = pbuf_room(b, 1);

	if (p)
		p[0] = v;
}

void pbuf_put_u16(struct pbuf *b, uint16_t v)
{
	uint8_t *p = pbuf_room(b, 2);

	if (p) {
		p[0] = (uint8_t)(v >> 8);
		p[1] = (uint8_t)v;
	}
}

void pbuf_put_u32(struct pbuf *b, uint32_t v)
{
	pbuf_put_u16(b, (uint16_t)(v >> 16));
	pbuf_put_u16(b, (uint16_t)v);
}

void pbuf_put_u64(struct pbuf *b, uint64_t v)
{
	pbuf_put_u32(b, (uint32_t)(v >> 32));
	pbuf_put_u32(b, (uint32_t)v);
}

void pbuf_put_str(struct pbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	uint8_t *p;

	if (n > PROTO_MAX_STR) {
		b->err = EINVAL;
		return;
	}
	pbuf_put_u16(b, (uint16_t)n);
	p = pbuf_room(b, n);
	if (p && n)
		memcpy(p, s, n);
}

static const uint8_t *pbuf_take(struct pbuf *b, size_t n)
{
	const uint8_t *p;

	if (b->err || b->len - b->pos < n) {
		b->err = EPROTO;
		return NULL;
	}
	p = b->data + b->pos;
	b->pos += n;
	return p;
}

uint8_t pbuf_get_u8(struct pbuf *b)
{
	const uint8_t *p = pbuf_take(b, 1);

	return p ? p[0] : 0;
}

uint16_t pbuf_get_u16(struct pbuf *b)
{
	const uint8_t *p = pbuf_take(b, 2);

	return p ? (uint16_t)((p[0] << 8) | p[1]) : 0;
}

uint32_t pbuf_get_u32(struct pbuf *b)
{
	uint32_t hi = pbuf_get_u16(b);

	return (hi << 16) | pbuf_get_u16(b);
}

uint64_t pbuf_get_u64(struct pbuf *b)
{
	uint64_t hi = pbuf_get_u32(b);

	return (hi << 32) | pbuf_get_u32(b);
}

void pbuf_get_str(struct pbuf *b, char *out, size_t outlen)
{
	uint16_t n = pbuf_get_u16(b);
	const uint8_t *p;

	out[0] = '\0';
	if (b->err)
		return;
	if (n > PROTO_MAX_STR || (size_t)n >= outlen) {
		b->err = EPROTO;
		return;
	}
	p = pbuf_take(b, n);
	if (!p)
		return;
	if (memchr(p, '\0', n)) { /* an embedded NUL is a lie about the length */
		b->err = EPROTO;
		return;
	}
	memcpy(out, p, n);
	out[n] = '\0';
}

/* ---- field groups ---------------------------------------------------------- */

static void put_gpus(struct pbuf *b, const struct proto_gpus *g)
{
	unsigned i;

	if (g->n > KREX_MAX_GPUS) {
		b->err = EINVAL;
		return;
	}
	pbuf_put_u16(b, g->n);
	for (i = 0; i < g->n; i++)
		pbuf_put_str(b, g->name[i]);
}

static void get_gpus(struct pbuf *b, struct proto_gpus *g)
{
	unsigned i;

	g->n = pbuf_get_u16(b);
	if (g->n > KREX_MAX_GPUS) {
		b->err = EPROTO;
		return;
	}
	for (i = 0; i < g->n && !b->err; i++) {
		pbuf_get_str(b, g->name[i], sizeof(g->name[i]));
		if (!b->err && g->name[i][0] == '\0')
			b->err = EPROTO;
	}
}

static void put_cert(struct pbuf *b, const struct krex_certificate *c)
{
	pbuf_put_u64(b, c->region_id);
	pbuf_put_u32(b, c->outcome);
	pbuf_put_u64(b, c->wait_us);
	pbuf_put_u64(b, c->drain_us);
	pbuf_put_u64(b, c->freeze_us);
	pbuf_put_u64(b, c->isolate_us);
	pbuf_put_u64(b, c->held_us);
	pbuf_put_u64(b, c->lease_us);
	pbuf_put_u32(b, c->siblings);
	pbuf_put_u32(b, c->drained);
	pbuf_put_u32(b, c->late);
	pbuf_put_u32(b, c->frozen);
	pbuf_put_u32(b, c->known);
	pbuf_put_u32(b, (uint32_t)c->foreign);
	pbuf_put_u32(b, (uint32_t)c->moved);
	pbuf_put_str(b, c->owner_cores);
	pbuf_put_u32(b, (uint32_t)c->sm_clock_start_mhz);
	pbuf_put_u32(b, (uint32_t)c->sm_clock_end_mhz);
	pbuf_put_u64(b, c->throttle_start);
	pbuf_put_u64(b, c->throttle_end);
	pbuf_put_str(b, c->gpus);
	pbuf_put_str(b, c->note);
	pbuf_put_u64(b, c->settle_us);
	pbuf_put_u32(b, (uint32_t)c->sm_clock_min_mhz);
	pbuf_put_u32(b, (uint32_t)c->sm_clock_max_mhz);
	pbuf_put_u32(b, (uint32_t)c->sm_clock_nominal_mhz);
	pbuf_put_u32(b, c->clock_samples);
	pbuf_put_u64(b, c->clock_reasons);
	pbuf_put_u32(b, (uint32_t)c->temp_start_c);
	pbuf_put_u32(b, (uint32_t)c->temp_end_c);
	pbuf_put_u64(b, c->violation_power_us);
	pbuf_put_u64(b, c->violation_thermal_us);
	pbuf_put_u64(b, c->own_power_cap_us);
	pbuf_put_u64(b, (uint64_t)c->own_power_cap_first_us);
	pbuf_put_u32(b, c->own_power_cap_samples);
	pbuf_put_u64(b, c->chain_us);
	pbuf_put_u32(b, c->chained);
}

static void get_cert(struct pbuf *b, struct krex_certificate *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->region_id = pbuf_get_u64(b);
	c->outcome = pbuf_get_u32(b);
	c->wait_us = pbuf_get_u64(b);
	c->drain_us = pbuf_get_u64(b);
	c->freeze_us = pbuf_get_u64(b);
	c->isolate_us = pbuf_get_u64(b);
	c->held_us = pbuf_get_u64(b);
	c->lease_us = pbuf_get_u64(b);
	c->siblings = pbuf_get_u32(b);
	c->drained = pbuf_get_u32(b);
	c->late = pbuf_get_u32(b);
	c->frozen = pbuf_get_u32(b);
	c->known = pbuf_get_u32(b);
	c->foreign = (int32_t)pbuf_get_u32(b);
	c->moved = (int32_t)pbuf_get_u32(b);
	pbuf_get_str(b, c->owner_cores, sizeof(c->owner_cores));
	c->sm_clock_start_mhz = (int32_t)pbuf_get_u32(b);
	c->sm_clock_end_mhz = (int32_t)pbuf_get_u32(b);
	c->throttle_start = pbuf_get_u64(b);
	c->throttle_end = pbuf_get_u64(b);
	pbuf_get_str(b, c->gpus, sizeof(c->gpus));
	pbuf_get_str(b, c->note, sizeof(c->note));
	c->settle_us = pbuf_get_u64(b);
	c->sm_clock_min_mhz = (int32_t)pbuf_get_u32(b);
	c->sm_clock_max_mhz = (int32_t)pbuf_get_u32(b);
	c->sm_clock_nominal_mhz = (int32_t)pbuf_get_u32(b);
	c->clock_samples = pbuf_get_u32(b);
	c->clock_reasons = pbuf_get_u64(b);
	c->temp_start_c = (int32_t)pbuf_get_u32(b);
	c->temp_end_c = (int32_t)pbuf_get_u32(b);
	c->violation_power_us = pbuf_get_u64(b);
	c->violation_thermal_us = pbuf_get_u64(b);
	c->own_power_cap_us = pbuf_get_u64(b);
	c->own_power_cap_first_us = (int64_t)pbuf_get_u64(b);
	c->own_power_cap_samples = pbuf_get_u32(b);
	c->chain_us = pbuf_get_u64(b);
	c->chained = pbuf_get_u32(b);
	if (!b->err && c->outcome > KREX_OUTCOME_UNPROTECTED)
		b->err = EPROTO;
}

static void put_status_reply(struct pbuf *b, const struct proto_status_reply *s)
{
	unsigned i;

	pbuf_put_str(b, s->node);
	pbuf_put_str(b, s->freezer);
	pbuf_put_str(b, s->isolation);
	pbuf_put_u64(b, s->uptime_us);
	pbuf_put_u64(b, s->regions_total);
	if (s->ngpus > KREX_MAX_GPUS) {
		b->err = EINVAL;
		return;
	}
	pbuf_put_u16(b, s->ngpus);
	for (i = 0; i < s->ngpus; i++) {
		pbuf_put_str(b, s->gpu[i].name);
		pbuf_put_u32(b, s->gpu[i].slot);
		pbuf_put_u32(b, s->gpu[i].holder);
		pbuf_put_u64(b, s->gpu[i].region_id);
		pbuf_put_u32(b, s->gpu[i].queued);
	}
	pbuf_put_u16(b, s->nparts);
	for (i = 0; i < s->nparts; i++) {
		const struct proto_status_part *p = &s->parts[i];
		pbuf_put_u32(b, p->id);
		pbuf_put_u32(b, p->pid);
		pbuf_put_u32(b, p->uid);
		pbuf_put_u32(b, p->job);
		pbuf_put_u32(b, p->step);
		pbuf_put_u32(b, p->state);
		pbuf_put_u32(b, p->members);
		pbuf_put_str(b, p->label);
		pbuf_put_str(b, p->gpus);
		pbuf_put_str(b, p->cgroup);
	}
	pbuf_put_u16(b, s->nregions);
	for (i = 0; i < s->nregions; i++) {
		const struct proto_status_region *r = &s->regions[i];
		pbuf_put_u64(b, r->id);
		pbuf_put_u32(b, r->owner);
		pbuf_put_u32(b, r->pid);
		pbuf_put_u32(b, r->state);
		pbuf_put_u64(b, r->age_us);
		pbuf_put_u64(b, r->lease_us);
		pbuf_put_str(b, r->gpus);
	}
}

static void get_status_reply(struct pbuf *b, struct proto_status_reply *s)
{
	unsigned i;

	pbuf_get_str(b, s->node, sizeof(s->node));
	pbuf_get_str(b, s->freezer, sizeof(s->freezer));
	pbuf_get_str(b, s->isolation, sizeof(s->isolation));
	s->uptime_us = pbuf_get_u64(b);
	s->regions_total = pbuf_get_u64(b);
	s->ngpus = pbuf_get_u16(b);
	if (s->ngpus > KREX_MAX_GPUS)
		b->err = EPROTO;
	for (i = 0; i < s->ngpus && !b->err; i++) {
		pbuf_get_str(b, s->gpu[i].name, sizeof(s->gpu[i].name));
		s->gpu[i].slot = pbuf_get_u32(b);
		s->gpu[i].holder = pbuf_get_u32(b);
		s->gpu[i].region_id = pbuf_get_u64(b);
		s->gpu[i].queued = pbuf_get_u32(b);
	}
	s->nparts = pbuf_get_u16(b);
	/* Each entry takes at least 34 bytes: refuse counts the payload cannot hold
	 * before allocating for them. */
	if (b->err || (size_t)s->nparts * 34 > b->len - b->pos) {
		b->err = EPROTO;
		s->nparts = 0;
		return;
	}
	s->parts = calloc(s->nparts ? s->nparts : 1, sizeof(*s->parts));
	if (!s->parts) {
		b->err = ENOMEM;
		return;
	}
	for (i = 0; i < s->nparts && !b->err; i++) {
		struct proto_status_part *p = &s->parts[i];
		p->id = pbuf_get_u32(b);
		p->pid = pbuf_get_u32(b);
		p->uid = pbuf_get_u32(b);
		p->job = pbuf_get_u32(b);
		p->step = pbuf_get_u32(b);
		p->state = pbuf_get_u32(b);
		p->members = pbuf_get_u32(b);
		pbuf_get_str(b, p->label, sizeof(p->label));
		pbuf_get_str(b, p->gpus, sizeof(p->gpus));
		pbuf_get_str(b, p->cgroup, sizeof(p->cgroup));
	}
	s->nregions = pbuf_get_u16(b);
	if (b->err || (size_t)s->nregions * 38 > b->len - b->pos) {
		b->err = EPROTO;
		s->nregions = 0;
		return;
	}
	s->regions = calloc(s->nregions ? s->nregions : 1, sizeof(*s->regions));
	if (!s->regions) {
		b->err = ENOMEM;
		return;
	}
	for (i = 0; i < s->nregions && !b->err; i++) {
		struct proto_status_region *r = &s->regions[i];
		r->id = pbuf_get_u64(b);
		r->owner = pbuf_get_u32(b);
		r->pid = pbuf_get_u32(b);
		r->state = pbuf_get_u32(b);
		r->age_us = pbuf_get_u64(b);
		r->lease_us = pbuf_get_u64(b);
		pbuf_get_str(b, r->gpus, sizeof(r->gpus));
	}
}

static void put_log_reply(struct pbuf *b, const struct proto_log_reply *l)
{
	unsigned i;

	pbuf_put_str(b, l->node);
	pbuf_put_u64(b, l->total);
	pbuf_put_u64(b, l->kept);
	pbuf_put_u64(b, l->next);
	pbuf_put_u16(b, l->n);
	for (i = 0; i < l->n; i++) {
		const struct proto_log_entry *e = &l->e[i];
		pbuf_put_u64(b, e->seq);
		pbuf_put_u64(b, e->begin_us);
		pbuf_put_u64(b, e->end_us);
		pbuf_put_u32(b, e->uid);
		pbuf_put_u32(b, e->pid);
		pbuf_put_u32(b, e->job);
		pbuf_put_u32(b, e->step);
		pbuf_put_str(b, e->label);
		put_cert(b, &e->cert);
	}
}

static void get_log_reply(struct pbuf *b, struct proto_log_reply *l)
{
	unsigned i;

	pbuf_get_str(b, l->node, sizeof(l->node));
	l->total = pbuf_get_u64(b);
	l->kept = pbuf_get_u64(b);
	l->next = pbuf_get_u64(b);
	l->n = pbuf_get_u16(b);
	if (b->err || (size_t)l->n * PROTO_LOG_ENTRY_MIN > b->len - b->pos) {
		b->err = EPROTO;
		l->n = 0;
		return;
	}
	l->e = calloc(l->n ? l->n : 1, sizeof(*l->e));
	if (!l->e) {
		b->err = ENOMEM;
		return;
	}
	for (i = 0; i < l->n && !b->err; i++) {
		struct proto_log_entry *e = &l->e[i];
		e->seq = pbuf_get_u64(b);
		e->begin_us = pbuf_get_u64(b);
		e->end_us = pbuf_get_u64(b);
		e->uid = pbuf_get_u32(b);
		e->pid = pbuf_get_u32(b);
		e->job = pbuf_get_u32(b);
		e->step = pbuf_get_u32(b);
		pbuf_get_str(b, e->label, sizeof(e->label));
		get_cert(b, &e->cert);
	}
}

/* The signed form: u64 region, u32 status, str reason, u32 length + bytes (no NUL). */
static void put_signed_reply(struct pbuf *b, const struct proto_signed_reply *r)
{
	uint32_t n = r->cred ? r->cred_len : 0;
	uint8_t *p;

	if (n > PROTO_SIGNED_MAX_CRED || (n && memchr(r->cred, '\0', n))) {
		b->err = EINVAL;
		return;
	}
	pbuf_put_u64(b, r->region_id);
	pbuf_put_u32(b, r->status);
	pbuf_put_str(b, r->reason);
	pbuf_put_u32(b, n);
	p = pbuf_room(b, n);
	if (p && n)
		memcpy(p, r->cred, n);
}

static void get_signed_reply(struct pbuf *b, struct proto_signed_reply *r)
{
	const uint8_t *p;

	r->region_id = pbuf_get_u64(b);
	r->status = pbuf_get_u32(b);
	pbuf_get_str(b, r->reason, sizeof(r->reason));
	r->cred_len = pbuf_get_u32(b);
	if (b->err)
		return;
	if (r->cred_len > PROTO_SIGNED_MAX_CRED) {
		b->err = EPROTO;
		return;
	}
	p = pbuf_take(b, r->cred_len);
	if (!p)
		return;
	if (memchr(p, '\0', r->cred_len)) {
		b->err = EPROTO;
		return;
	}
	r->cred = malloc((size_t)r->cred_len + 1);
	if (!r->cred) {
		b->err = ENOMEM;
		return;
	}
	memcpy(r->cred, p, r->cred_len);
	r->cred[r->cred_len] = '\0';
}

/* ---- messages -------------------------------------------------------------- */

static void put_body(struct pbuf *b, uint16_t type, const union proto_body *m)
{
	unsigned i;

	switch (type) {
	case PROTO_REGISTER:
		pbuf_put_u32(b, m->reg.pid);
		pbuf_put_u32(b, m->reg.job);
		pbuf_put_u32(b, m->reg.step);
		pbuf_put_u32(b, m->reg.flags);
		pbuf_put_str(b, m->reg.cgroup);
		pbuf_put_str(b, m->reg.cpus);
		pbuf_put_str(b, m->reg.label);
		put_gpus(b, &m->reg.gpus);
		break;
	case PROTO_REGISTERED:
		pbuf_put_u32(b, m->registered.participant);
		pbuf_put_u32(b, m->registered.queue_cap);
		pbuf_put_u32(b, m->registered.queue_us);
		pbuf_put_u32(b, m->registered.gate_timeout_ms);
		pbuf_put_str(b, m->registered.gate_path);
		if (m->registered.nslots > KREX_MAX_GPUS) {
			b->err = EINVAL;
			break;
		}
		pbuf_put_u16(b, m->registered.nslots);
		for (i = 0; i < m->registered.nslots; i++)
			pbuf_put_u16(b, m->registered.slot[i]);
		break;
	case PROTO_UNREGISTER:
		pbuf_put_u32(b, m->unreg.pid);
		break;
	case PROTO_OK:
		pbuf_put_u32(b, m->ok.value);
		break;
	case PROTO_REGION_BEGIN:
		put_gpus(b, &m->begin.gpus);
		pbuf_put_u64(b, m->begin.expected_us);
		pbuf_put_u64(b, m->begin.max_us);
		pbuf_put_u32(b, m->begin.timeout_ms);
		pbuf_put_u32(b, m->begin.flags);
		break;
	case PROTO_GRANT:
		pbuf_put_u64(b, m->grant.region_id);
		pbuf_put_u64(b, m->grant.lease_us);
		pbuf_put_u64(b, m->grant.wait_us);
		pbuf_put_u64(b, m->grant.drain_us);
		pbuf_put_u64(b, m->grant.freeze_us);
		pbuf_put_u64(b, m->grant.isolate_us);
		break;
	case PROTO_REGION_END:
		pbuf_put_u64(b, m->end.region_id);
		break;
	case PROTO_CERT:
		put_cert(b, &m->cert);
		break;
	case PROTO_STATUS:
		pbuf_put_u32(b, m->status.flags);
		break;
	case PROTO_STATUS_REPLY:
		put_status_reply(b, &m->status_reply);
		break;
	case PROTO_DRAIN_ACK:
		pbuf_put_u32(b, m->ack.generation);
		pbuf_put_u32(b, m->ack.status);
		pbuf_put_u64(b, m->ack.drain_us);
		break;
	case PROTO_RELEASE:
		pbuf_put_u64(b, m->release.region_id);
		break;
	case PROTO_ERROR:
		pbuf_put_u32(b, m->error.code);
		pbuf_put_str(b, m->error.message);
		break;
	case PROTO_LOG:
		pbuf_put_u32(b, m->log.job);
		pbuf_put_u32(b, m->log.step);
		pbuf_put_u32(b, m->log.outcomes);
		pbuf_put_u64(b, m->log.since_us);
		pbuf_put_u64(b, m->log.before);
		pbuf_put_u32(b, m->log.max);
		break;
	case PROTO_LOG_REPLY:
		put_log_reply(b, &m->log_reply);
		break;
	case PROTO_SUMMARY:
		pbuf_put_u32(b, m->summary.job);
		pbuf_put_u32(b, m->summary.step);
		break;
	case PROTO_SUMMARY_REPLY:
		pbuf_put_u32(b, m->summary_reply.job);
		pbuf_put_u32(b, m->summary_reply.step);
		pbuf_put_u32(b, m->summary_reply.regions);
		pbuf_put_u32(b, m->summary_reply.clean);
		pbuf_put_u32(b, m->summary_reply.degraded);
		pbuf_put_u32(b, m->summary_reply.expired);
		pbuf_put_u32(b, m->summary_reply.late);
		pbuf_put_u64(b, m->summary_reply.entry_p50_us);
		pbuf_put_u64(b, m->summary_reply.entry_p95_us);
		pbuf_put_u64(b, m->summary_reply.entry_max_us);
		pbuf_put_u64(b, m->summary_reply.held_us);
		break;
	case PROTO_SIGNED:
		pbuf_put_u64(b, m->sig.region_id);
		break;
	case PROTO_SIGNED_REPLY:
		put_signed_reply(b, &m->sig_reply);
		break;
	default:
		b->err = EINVAL;
	}
}

int proto_pack(struct pbuf *out, uint16_t type, uint32_t seq, const union proto_body *msg)
{
	size_t start = out->len, plen;
	uint8_t *h;

	pbuf_put_u32(out, PROTO_MAGIC);
	pbuf_put_u16(out, PROTO_VERSION);
	pbuf_put_u16(out, type);
	pbuf_put_u32(out, 0); /* length, patched below */
	pbuf_put_u32(out, seq);
	put_body(out, type, msg);
	if (out->err) {
		errno = out->err;
		return -1;
	}
	plen = out->len - start - PROTO_HDR_LEN;
	h = out->data + start + 8;
	h[0] = (uint8_t)(plen >> 24);
	h[1] = (uint8_t)(plen >> 16);
	h[2] = (uint8_t)(plen >> 8);
	h[3] = (uint8_t)plen;
	return 0;
}

int proto_hdr_parse(const uint8_t *buf, struct proto_hdr *h)
{
	struct pbuf b;

	pbuf_reader(&b, buf, PROTO_HDR_LEN);
	h->magic = pbuf_get_u32(&b);
	h->version = pbuf_get_u16(&b);
	h->type = pbuf_get_u16(&b);
	h->length = pbuf_get_u32(&b);
	h->seq = pbuf_get_u32(&b);
	if (h->magic != PROTO_MAGIC)
		return PROTO_HDR_BADMAGIC;
	if (h->version != PROTO_VERSION)
		return PROTO_HDR_BADVERSION;
	if (h->type == 0 || h->type >= PROTO_TYPE_MAX)
		return PROTO_HDR_BADTYPE;
	if (h->length > PROTO_MAX_PAYLOAD)
		return PROTO_HDR_TOOLONG;
	return PROTO_HDR_OK;
}

static void get_body(struct pbuf *b, uint16_t type, union proto_body *m)
{
	unsigned i;

	switch (type) {
	case PROTO_REGISTER:
		m->reg.pid = pbuf_get_u32(b);
		m->reg.job = pbuf_get_u32(b);
		m->reg.step = pbuf_get_u32(b);
		m->reg.flags = pbuf_get_u32(b);
		pbuf_get_str(b, m->reg.cgroup, sizeof(m->reg.cgroup));
		pbuf_get_str(b, m->reg.cpus, sizeof(m->reg.cpus));
		pbuf_get_str(b, m->reg.label, sizeof(m->reg.label));
		get_gpus(b, &m->reg.gpus);
		break;
	case PROTO_REGISTERED:
		m->registered.participant = pbuf_get_u32(b);
		m->registered.queue_cap = pbuf_get_u32(b);
		m->registered.queue_us = pbuf_get_u32(b);
		m->registered.gate_timeout_ms = pbuf_get_u32(b);
		pbuf_get_str(b, m->registered.gate_path, sizeof(m->registered.gate_path));
		m->registered.nslots = pbuf_get_u16(b);
		if (m->registered.nslots > KREX_MAX_GPUS) {
			b->err = EPROTO;
			break;
		}
		for (i = 0; i < m->registered.nslots; i++) {
			m->registered.slot[i] = pbuf_get_u16(b);
			if (m->registered.slot[i] >= KREX_MAX_GPUS)
				b->err = EPROTO;
		}
		break;
	case PROTO_UNREGISTER:
		m->unreg.pid = pbuf_get_u32(b);
		break;
	case PROTO_OK:
		m->ok.value = pbuf_get_u32(b);
		break;
	case PROTO_REGION_BEGIN:
		get_gpus(b, &m->begin.gpus);
		m->begin.expected_us = pbuf_get_u64(b);
		m->begin.max_us = pbuf_get_u64(b);
		m->begin.timeout_ms = pbuf_get_u32(b);
		m->begin.flags = pbuf_get_u32(b);
		break;
	case PROTO_GRANT:
		m->grant.region_id = pbuf_get_u64(b);
		m->grant.lease_us = pbuf_get_u64(b);
		m->grant.wait_us = pbuf_get_u64(b);
		m->grant.drain_us = pbuf_get_u64(b);
		m->grant.freeze_us = pbuf_get_u64(b);
		m->grant.isolate_us = pbuf_get_u64(b);
		break;
	case PROTO_REGION_END:
		m->end.region_id = pbuf_get_u64(b);
		break;
	case PROTO_CERT:
		get_cert(b, &m->cert);
		break;
	case PROTO_STATUS:
		m->status.flags = pbuf_get_u32(b);
		break;
	case PROTO_STATUS_REPLY:
		get_status_reply(b, &m->status_reply);
		break;
	case PROTO_DRAIN_ACK:
		m->ack.generation = pbuf_get_u32(b);
		m->ack.status = pbuf_get_u32(b);
		m->ack.drain_us = pbuf_get_u64(b);
		break;
	case PROTO_RELEASE:
		m->release.region_id = pbuf_get_u64(b);
		break;
	case PROTO_ERROR:
		m->error.code = pbuf_get_u32(b);
		pbuf_get_str(b, m->error.message, sizeof(m->error.message));
		break;
	case PROTO_LOG:
		m->log.job = pbuf_get_u32(b);
		m->log.step = pbuf_get_u32(b);
		m->log.outcomes = pbuf_get_u32(b);
		m->log.since_us = pbuf_get_u64(b);
		m->log.before = pbuf_get_u64(b);
		m->log.max = pbuf_get_u32(b);
		break;
	case PROTO_LOG_REPLY:
		get_log_reply(b, &m->log_reply);
		break;
	case PROTO_SUMMARY:
		m->summary.job = pbuf_get_u32(b);
		m->summary.step = pbuf_get_u32(b);
		break;
	case PROTO_SUMMARY_REPLY:
		m->summary_reply.job = pbuf_get_u32(b);
		m->summary_reply.step = pbuf_get_u32(b);
		m->summary_reply.regions = pbuf_get_u32(b);
		m->summary_reply.clean = pbuf_get_u32(b);
		m->summary_reply.degraded = pbuf_get_u32(b);
		m->summary_reply.expired = pbuf_get_u32(b);
		m->summary_reply.late = pbuf_get_u32(b);
		m->summary_reply.entry_p50_us = pbuf_get_u64(b);
		m->summary_reply.entry_p95_us = pbuf_get_u64(b);
		m->summary_reply.entry_max_us = pbuf_get_u64(b);
		m->summary_reply.held_us = pbuf_get_u64(b);
		break;
	case PROTO_SIGNED:
		m->sig.region_id = pbuf_get_u64(b);
		break;
	case PROTO_SIGNED_REPLY:
		get_signed_reply(b, &m->sig_reply);
		break;
	default:
		b->err = EPROTO;
	}
}

int proto_unpack(uint16_t type, const uint8_t *payload, size_t len, union proto_body *msg)
{
	struct pbuf b;

	memset(msg, 0, sizeof(*msg));
	if (len > PROTO_MAX_PAYLOAD) {
		errno = EPROTO;
		return -1;
	}
	pbuf_reader(&b, payload, len);
	get_body(&b, type, msg);
	if (!b.err && b.pos != b.len)
		b.err = EPROTO; /* trailing bytes: the length lied */
	if (b.err) {
		proto_body_free(type, msg);
		errno = b.err == ENOMEM ? ENOMEM : EPROTO;
		return -1;
	}
	return 0;
}

void proto_body_free(uint16_t type, union proto_body *msg)
{
	if (type == PROTO_LOG_REPLY) {
		free(msg->log_reply.e);
		msg->log_reply.e = NULL;
		msg->log_reply.n = 0;
	}
	if (type == PROTO_SIGNED_REPLY) {
		free(msg->sig_reply.cred);
		msg->sig_reply.cred = NULL;
		msg->sig_reply.cred_len = 0;
		return;
	}
	if (type != PROTO_STATUS_REPLY)
		return;
	free(msg->status_reply.parts);
	free(msg->status_reply.regions);
	msg->status_reply.parts = NULL;
	msg->status_reply.regions = NULL;
	msg->status_reply.nparts = 0;
	msg->status_reply.nregions = 0;
}

const char *proto_type_name(uint16_t type)
{
	static const char *const names[] = {
	        "?",       "REGISTER",      "REGISTERED",   "UNREGISTER",
	        "OK",      "REGION_BEGIN",  "GRANT",        "REGION_END",
	        "CERT",    "STATUS",        "STATUS_REPLY", "DRAIN_ACK",
	        "RELEASE", "ERROR",         "LOG",          "LOG_REPLY",
	        "SUMMARY", "SUMMARY_REPLY", "SIGNED",       "SIGNED_REPLY"};

	return type < PROTO_TYPE_MAX ? names[type] : "?";
}

const char *proto_hdr_strerror(int err)
{
	switch (err) {
	case PROTO_HDR_OK:
		return "ok";
	case PROTO_HDR_BADMAGIC:
		return "bad magic (not a KREX message)";
	case PROTO_HDR_BADVERSION:
		return "unsupported protocol version";
	case PROTO_HDR_BADTYPE:
		return "unknown message type";
	case PROTO_HDR_TOOLONG:
		return "message length over the limit";
	}
	return "unknown header error";
}

/* ---- blocking helpers -------------------------------------------------------- */

int proto_send(int fd, uint16_t type, uint32_t seq, const union proto_body *msg,
               uint64_t deadline_ns)
{
	struct pbuf b;
	int rc;

	pbuf_init(&b);
	rc = proto_pack(&b, type, seq, msg);
	if (rc == 0)
		rc = fd_write_full(fd, b.data, b.len, deadline_ns);
	pbuf_free(&b);
	return rc;
}

int proto_recv(int fd, uint16_t *type, uint32_t *seq, union proto_body *msg, uint64_t deadline_ns,
               int *hdr_err)
{
	uint8_t hdr[PROTO_HDR_LEN];
	struct proto_hdr h;
	uint8_t *payload = NULL;
	int rc, herr;

	if (hdr_err)
		*hdr_err = PROTO_HDR_OK;
	if (fd_read_full(fd, hdr, sizeof(hdr), deadline_ns) < 0)
		return -1;
	herr = proto_hdr_parse(hdr, &h);
	if (herr != PROTO_HDR_OK) {
		if (hdr_err)
			*hdr_err = herr;
		errno = EPROTO;
		return -1;
	}
	if (h.length) {
		payload = malloc(h.length);
		if (!payload)
			return -1;
		if (fd_read_full(fd, payload, h.length, deadline_ns) < 0) {
			free(payload);
			return -1;
		}
	}
	rc = proto_unpack(h.type, payload, h.length, msg);
	free(payload);
	if (rc < 0)
		return -1;
	*type = h.type;
	if (seq)
		*seq = h.seq;
	return 0;
}

int proto_call(int fd, uint16_t type, uint32_t seq, const union proto_body *req,
               uint64_t send_deadline_ns, uint16_t *rtype, union proto_body *rep,
               uint64_t deadline_ns, int *hdr_err)
{
	if (hdr_err)
		*hdr_err = PROTO_HDR_OK;
	if (proto_send(fd, type, seq, req, send_deadline_ns) < 0)
		return -1;
	return proto_recv(fd, rtype, NULL, rep, deadline_ns, hdr_err);
}

void proto_error_set(union proto_body *msg, int code, const char *fmt, ...)
{
	va_list ap;

	memset(&msg->error, 0, sizeof(msg->error));
	msg->error.code = (uint32_t)code;
	va_start(ap, fmt);
	vsnprintf(msg->error.message, sizeof(msg->error.message), fmt, ap);
	va_end(ap);
}
