/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.c - client connections: accept, incremental reads (a buffer per
 * connection, never blocking the loop on one client), dispatch, replies.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdio.h"
#include "isolate.h"
#include "krexd.h"
#include "log.h"
#include "timeutil.h"

/* A reply that cannot be written at once (the client does not read) waits this long at most. */
#define CONN_WRITE_MS 100

void conn_accept(struct krexd *k)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};
	struct conn *c;
	int fd;

	for (;;) {
		fd = accept4(k->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				log_warn("accept: %s", strerror(errno));
			return;
		}
		if (k->nconns >= KREX_MAX_CONNECTIONS || k->stopping) {
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->serial = ++k->next_serial;
		if (unix_peer_cred(fd, &c->pid, &c->uid, NULL) < 0) {
			free(c);
			close(fd);
			continue;
		}
		c->ep.kind = EP_CONN;
		c->ep.ptr = c;
		ev.data.ptr = &c->ep;
		if (epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			free(c);
			close(fd);
			continue;
		}
		c->next = k->conns;
		k->conns = c;
		k->nconns++;
		log_debug("connection %llu from pid %d uid %u", (unsigned long long)c->serial,
		          (int)c->pid, (unsigned)c->uid);
	}
}

int conn_send(struct krexd *k, struct conn *c, uint16_t type, uint32_t seq,
              const union proto_body *m)
{
	if (c->dead)
		return -1;
	if (proto_send(c->fd, type, seq, m, time_deadline_ms(CONN_WRITE_MS)) < 0) {
		log_warn("connection %llu (pid %d): cannot send %s: %s",
		         (unsigned long long)c->serial, (int)c->pid, proto_type_name(type),
		         strerror(errno));
		conn_close(k, c);
		return -1;
	}
	return 0;
}

int conn_error(struct krexd *k, struct conn *c, uint32_t seq, int code, const char *fmt, ...)
{
	union proto_body m;
	va_list ap;

	memset(&m, 0, sizeof(m));
	m.error.code = (uint32_t)code;
	va_start(ap, fmt);
	vsnprintf(m.error.message, sizeof(m.error.message), fmt, ap);
	va_end(ap);
	log_debug("connection %llu (pid %d): error %d: %s", (unsigned long long)c->serial,
	          (int)c->pid, code, m.error.message);
	return conn_send(k, c, PROTO_ERROR, seq, &m);
}

/* Answer a protocol violation and drop the connection. */
static void conn_reject(struct krexd *k, struct conn *c, int code, const char *why)
{
	static uint64_t last;

	if (log_ratelimit(&last, NS_PER_S))
		log_info("connection %llu (pid %d uid %u): %s; closing",
		         (unsigned long long)c->serial, (int)c->pid, (unsigned)c->uid, why);
	conn_error(k, c, c->h.seq, code, "%s", why);
	conn_close(k, c);
}

static void conn_status(struct krexd *k, struct conn *c, uint32_t seq)
{
	union proto_body m;
	struct proto_status_reply *s = &m.status_reply;
	struct part *p;
	unsigned i;
	struct rq_req *h;

	memset(&m, 0, sizeof(m));
	snprintf(s->node, sizeof(s->node), "%s", k->cfg.node_name);
	snprintf(s->freezer, sizeof(s->freezer), "%s", freezer_name(&k->fz));
	snprintf(s->isolation, sizeof(s->isolation), "%s", isolate_backend_name());
	s->uptime_us = (time_now_ns() - k->start_ns) / NS_PER_US;
	s->regions_total = k->regions_total;
	s->ngpus = (uint16_t)k->ngpus;
	for (i = 0; i < k->ngpus; i++) {
		snprintf(s->gpu[i].name, sizeof(s->gpu[i].name), "%s", k->gpu[i]);
		s->gpu[i].slot = i;
		h = rq_holder(&k->rq, i);
		s->gpu[i].holder = h ? h->owner : 0;
		s->gpu[i].region_id = h ? h->id : 0;
		s->gpu[i].queued = rq_queued_on(&k->rq, i);
	}
	s->parts = calloc(k->nparts ? k->nparts : 1, sizeof(*s->parts));
	if (!s->parts || region_status(k, s) < 0) {
		proto_body_free(PROTO_STATUS_REPLY, &m);
		conn_error(k, c, seq, KREX_ENOMEM, "out of memory");
		return;
	}
	for (p = k->parts; p; p = p->next) {
		struct proto_status_part *o = &s->parts[s->nparts++];
		struct rq_req *q = rq_find_owner(&k->rq, p->id);
		o->id = p->id;
		o->pid = (uint32_t)p->pid;
		o->uid = (uint32_t)p->uid;
		o->job = p->job;
		o->step = p->step;
		o->state = (p->freeze_refs ? PROTO_PART_FROZEN : 0) |
		           (p->gated ? PROTO_PART_GATED : 0) |
		           (q && q->state != RQ_QUEUED ? PROTO_PART_OWNER : 0) |
		           (q && q->state == RQ_QUEUED ? PROTO_PART_WAITING : 0);
		o->members = p->members;
		snprintf(o->label, sizeof(o->label), "%s", p->label);
		gpu_list(k, p->mask, o->gpus, sizeof(o->gpus));
		snprintf(o->cgroup, sizeof(o->cgroup), "%s", p->ft.cg);
	}
	/* A reply over the payload limit is cut: fewest lines lost first. */
	for (;;) {
		struct pbuf b;
		int rc;
		pbuf_init(&b);
		rc = proto_pack(&b, PROTO_STATUS_REPLY, seq, &m);
		pbuf_free(&b);
		if (rc == 0 || errno != EMSGSIZE || (!s->nparts && !s->nregions))
			break;
		s->nparts /= 2;
		s->nregions /= 2;
	}
	conn_send(k, c, PROTO_STATUS_REPLY, seq, &m);
	proto_body_free(PROTO_STATUS_REPLY, &m);
}

/* The types a client may send. */
static int conn_type_ok(uint16_t type)
{
	switch (type) {
	case PROTO_REGISTER:
	case PROTO_UNREGISTER:
	case PROTO_REGION_BEGIN:
	case PROTO_REGION_END:
	case PROTO_STATUS:
	case PROTO_DRAIN_ACK:
	case PROTO_RELEASE:
		return 1;
	}
	return 0;
}

/* One whole message arrived: act on it. */
static void conn_dispatch(struct krexd *k, struct conn *c)
{
	static union proto_body m; /* large; the loop is single-threaded */
	uint32_t seq = c->h.seq;

	if (proto_unpack(c->h.type, c->payload, c->h.length, &m) < 0) {
		conn_reject(k, c, KREX_EPROTO, "malformed payload");
		return;
	}
	log_debug("connection %llu: %s", (unsigned long long)c->serial, proto_type_name(c->h.type));
	switch (c->h.type) {
	case PROTO_REGISTER:
		part_register(k, c, seq, &m.reg);
		break;
	case PROTO_UNREGISTER:
		part_unregister(k, c, seq, &m.unreg);
		break;
	case PROTO_REGION_BEGIN:
		region_begin(k, c, seq, &m.begin);
		break;
	case PROTO_REGION_END:
		region_end(k, c, seq, &m.end);
		break;
	case PROTO_STATUS:
		conn_status(k, c, seq);
		break;
	case PROTO_DRAIN_ACK:
		if (c->part && c->gate)
			region_ack(k, c, &m.ack);
		else
			conn_error(k, c, seq, KREX_ENOTREG,
			           "DRAIN_ACK from a connection without a drain thread");
		break;
	case PROTO_RELEASE:
		region_release(k, c, seq, &m.release);
		break;
	default:
		conn_reject(k, c, KREX_EPROTO, "message type not accepted by krexd");
		break;
	}
	proto_body_free(c->h.type, &m);
}

/* Read what is there; dispatch each whole message.  Returns -1 once c is closed. */
static int conn_read(struct krexd *k, struct conn *c)
{
	ssize_t n;
	int herr;

	for (;;) {
		if (c->got < PROTO_HDR_LEN)
			n = read(c->fd, c->hdr + c->got, PROTO_HDR_LEN - c->got);
		else
			n = read(c->fd, c->payload + (c->got - PROTO_HDR_LEN),
			         c->h.length - (c->got - PROTO_HDR_LEN));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			conn_close(k, c);
			return -1;
		}
		if (!c->read_deadline_ns)
			c->read_deadline_ns =
			        time_now_ns() + KREX_DEFAULT_IO_TIMEOUT_MS * NS_PER_MS;
		c->got += (size_t)n;
		if (c->got == PROTO_HDR_LEN) {
			herr = proto_hdr_parse(c->hdr, &c->h);
			if (herr != PROTO_HDR_OK) {
				conn_reject(k, c,
				            herr == PROTO_HDR_BADVERSION ? KREX_EVERSION
				                                         : KREX_EPROTO,
				            proto_hdr_strerror(herr));
				return -1;
			}
			if (!conn_type_ok(c->h.type)) {
				conn_reject(k, c, KREX_EPROTO,
				            "message type not accepted by krexd");
				return -1;
			}
			free(c->payload);
			c->payload = malloc(c->h.length ? c->h.length : 1);
			if (!c->payload) {
				conn_reject(k, c, KREX_ENOMEM, "out of memory");
				return -1;
			}
		}
		if (c->got >= PROTO_HDR_LEN && c->got == PROTO_HDR_LEN + c->h.length) {
			c->got = 0;
			c->read_deadline_ns = 0;
			conn_dispatch(k, c);
			if (c->dead)
				return -1;
		}
	}
}

void conn_event(struct krexd *k, struct conn *c, uint32_t events)
{
	if (c->dead)
		return;
	if (events & EPOLLIN) {
		if (conn_read(k, c) < 0)
			return;
	}
	if (events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP))
		conn_read(k, c); /* reads the EOF and closes */
}

void conn_close(struct krexd *k, struct conn *c)
{
	if (c->dead)
		return;
	c->dead = 1;
	log_debug("connection %llu (pid %d) closed", (unsigned long long)c->serial, (int)c->pid);
	epoll_ctl(k->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	region_conn_gone(k, c);
	if (c->part) {
		c->part->conns--;
		if (c->gate)
			c->part->members--;
		c->part = NULL;
	}
}

/* Free closed connections (after the events of one loop turn are handled). */
void conn_reap(struct krexd *k)
{
	struct conn **pp = &k->conns, *c;

	while ((c = *pp)) {
		if (!c->dead) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		k->nconns--;
		free(c->payload);
		free(c);
	}
}

void conn_tick(struct krexd *k, uint64_t now)
{
	struct conn *c;

	for (c = k->conns; c; c = c->next)
		if (!c->dead && c->read_deadline_ns && now >= c->read_deadline_ns)
			conn_reject(k, c, KREX_ETIMEDOUT,
			            "message not complete within the I/O timeout");
}

uint64_t conn_next_deadline(struct krexd *k)
{
	uint64_t best = 0;
	struct conn *c;

	for (c = k->conns; c; c = c->next)
		if (!c->dead && c->read_deadline_ns && (!best || c->read_deadline_ns < best))
			best = c->read_deadline_ns;
	return best;
}
