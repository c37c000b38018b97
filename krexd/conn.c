/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.c - client connections: accept, incremental reads (a buffer per
 * connection, never blocking the loop on one client), dispatch.  Replies
 * go out through outbox.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdio.h"
#include "isolate.h"
#include "history.h"
#include "ident.h"
#include "conn.h"
#include "krexd.h"
#include "outbox.h"
#include "part.h"
#include "gpuslot.h"
#include "quota.h"
#include "region.h"
#include "sign.h"
#include "log.h"
#include "timeutil.h"

/* How long the listener rests after accept() failed (EMFILE, ENFILE, ENOMEM...). */
#define ACCEPT_BACKOFF_NS (100 * NS_PER_MS)
/* Messages of one connection handled in one loop turn. */
#define CONN_MSGS_PER_TURN 8

/* ---- accept ---- */

static void listen_rest(struct krexd *k, int on)
{
	struct epoll_event ev = {.events = on ? 0 : EPOLLIN, .data.ptr = &k->ep_listen};

	epoll_ctl(k->epfd, EPOLL_CTL_MOD, k->lfd, &ev);
	k->accept_resume_ns = on ? time_now_ns() + ACCEPT_BACKOFF_NS : 0;
}

/* accept() failed for want of fds or memory: shed one waiting client, rest, log once a while. */
static void accept_failed(struct krexd *k, int err)
{
	int fd;

	if ((err == EMFILE || err == ENFILE) && k->spare_fd >= 0) {
		close(k->spare_fd);
		fd = accept4(k->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			conn_refuse(fd, KREX_ELIMIT, "krexd is out of file descriptors");
		k->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	if (log_ratelimit(&k->accept_log_ns, 10 * NS_PER_S))
		log_warn("accept: %s; not accepting for %llu ms (logged once per 10 s)",
		         strerror(err), (unsigned long long)(ACCEPT_BACKOFF_NS / NS_PER_MS));
	listen_rest(k, 1);
}

void conn_accept_tick(struct krexd *k, uint64_t now)
{
	if (k->accept_resume_ns && now >= k->accept_resume_ns)
		listen_rest(k, 0);
}

/*
 * Room for one more connection of uid (any uid when uid is -1): close the
 * oldest idle connection that libregion kept open between regions (it had a
 * region and has nothing queued, held, unsent or half read, no certificate
 * to fetch).  Its owner connects again at its next region (libregion
 * retries once on a fresh connection).  Returns 0 when one was closed.
 */
static int conn_evict_idle(struct krexd *k, uid_t uid)
{
	struct conn *c, *best = NULL;
	int pending;

	for (c = k->conns; c; c = c->next) {
		if (c->dead || !c->regions || c->gate || c->got || c->out_off != c->out_len ||
		    (uid != (uid_t)-1 && c->uid != uid) || region_conn_busy(c) ||
		    sign_waiting(c->serial))
			continue;
		if (ioctl(c->fd, FIONREAD, &pending) < 0 || pending > 0)
			continue;
		if (!best || c->msg_ns < best->msg_ns)
			best = c;
	}
	if (!best)
		return -1;
	log_debug("connection %llu (pid %d uid %u): idle between regions, closed for room",
	          (unsigned long long)best->serial, (int)best->pid, (unsigned)best->uid);
	conn_close(k, best);
	return 0;
}

void conn_accept(struct krexd *k)
{
	static uint64_t last_full, last_quota;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};
	struct uacct *ua;
	struct conn *c;
	pid_t pid;
	uid_t uid;
	int fd;

	for (;;) {
		fd = accept4(k->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				accept_failed(k, errno);
			return;
		}
		if (k->stopping) {
			conn_refuse(fd, KREX_ESHUTDOWN, "krexd is stopping");
			continue;
		}
		if (unix_peer_cred(fd, &pid, &uid, NULL) < 0 || !(ua = uacct_get(k, uid))) {
			close(fd);
			continue;
		}
		/* fds are handed out lowest first: fd is about how many are open.  Users
		 * stop at reserve_fds from the limit, root (krex, the SPANK plugin) at half
		 * of it: the rest is for thaws and undos. */
		if ((k->nconns >= KREX_MAX_CONNECTIONS ||
		     (k->fd_limit &&
		      (unsigned)fd + (uid ? k->cfg.reserve_fds : k->cfg.reserve_fds / 2) >=
		              k->fd_limit)) &&
		    conn_evict_idle(k, (uid_t)-1) < 0) {
			if (log_ratelimit(&last_full, 10 * NS_PER_S))
				log_warn(
				        "connection refused: %u connections, fd %d of %u with %u reserved for thaws (logged once per 10 s)",
				        k->nconns, fd, k->fd_limit, k->cfg.reserve_fds);
			conn_refuse(fd, KREX_ELIMIT, "krexd has too many connections");
			continue;
		}
		if (uid != 0 && ua->conns >= k->cfg.max_conns_per_uid &&
		    conn_evict_idle(k, uid) < 0) {
			if (log_ratelimit(&last_quota, 10 * NS_PER_S))
				log_warn(
				        "uid %u: connection refused: %u open (max_conns_per_uid) (logged once per 10 s)",
				        (unsigned)uid, ua->conns);
			conn_refuse(fd, KREX_ELIMIT,
			            "uid %u has %u connections open (max_conns_per_uid)",
			            (unsigned)uid, ua->conns);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->accepted_ns = time_now_ns();
		c->pid = pid;
		c->uid = uid;
		c->serial = ++k->next_serial;
		conn_identity(c);
		c->ep.kind = EP_CONN;
		c->ep.ptr = c;
		ev.data.ptr = &c->ep;
		if (epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			if (c->pidfd >= 0)
				close(c->pidfd);
			free(c);
			close(fd);
			continue;
		}
		c->ua = ua;
		ua->conns++;
		c->next = k->conns;
		k->conns = c;
		k->nconns++;
		log_debug("connection %llu from pid %d uid %u", (unsigned long long)c->serial,
		          (int)c->pid, (unsigned)c->uid);
	}
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

/* One line of a status reply: participant p (one in k->moving has no region
 * yet and says "moving"). */
static void status_part(struct krexd *k, const struct conn *c, struct proto_status_reply *s,
                        const struct part *p)
{
	struct proto_status_part *o = &s->parts[s->nparts++];
	struct rq_req *q = p->moving ? NULL : rq_find_owner(&k->rq, p->id);

	o->id = p->id;
	o->pid = (uint32_t)p->pid;
	o->uid = (uint32_t)p->uid;
	o->job = p->job;
	o->step = p->step;
	o->state = (p->freeze_refs ? PROTO_PART_FROZEN : 0) | (p->gated ? PROTO_PART_GATED : 0) |
	           (q && q->state != RQ_QUEUED ? PROTO_PART_OWNER : 0) |
	           (q && q->state == RQ_QUEUED ? PROTO_PART_WAITING : 0) |
	           (p->moving ? PROTO_PART_MOVING : 0);
	o->members = p->members;
	gpu_list(k, p->mask, o->gpus, sizeof(o->gpus));
	/* another user's labels and cgroups are root's to see (doc/security.md) */
	if (c->uid == 0 || c->uid == p->uid) {
		snprintf(o->label, sizeof(o->label), "%s", p->label);
		snprintf(o->cgroup, sizeof(o->cgroup), "%s", p->ft.cg);
	}
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
	/* k->nparts counts both lists */
	for (p = k->parts; p; p = p->next)
		status_part(k, c, s, p);
	for (p = k->moving; p; p = p->next)
		status_part(k, c, s, p);
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
	case PROTO_CTX_MAKING:
	case PROTO_RELEASE:
	case PROTO_LOG:
	case PROTO_SUMMARY:
	case PROTO_SIGNED:
		return 1;
	}
	return 0;
}

/* One whole message arrived: act on it. */
static void conn_dispatch(struct krexd *k, struct conn *c)
{
	static union proto_body m; /* large; the loop is single-threaded */
	uint32_t seq = c->h.seq;
	char why[200];

	if (proto_unpack(c->h.type, c->payload, c->h.length, &m) < 0) {
		conn_reject(k, c, KREX_EPROTO, "malformed payload");
		return;
	}
	log_debug("connection %llu: %s", (unsigned long long)c->serial, proto_type_name(c->h.type));
	if (c->reg_wait) { /* its REGISTER's answer comes first (part_moves_done) */
		conn_error(k, c, seq, KREX_EBUSY,
		           "this connection's REGISTER is not answered yet: wait for its answer");
		proto_body_free(c->h.type, &m);
		return;
	}
	switch (c->h.type) {
	case PROTO_REGISTER:
		part_register(k, c, seq, &m.reg);
		break;
	case PROTO_UNREGISTER:
		part_unregister(k, c, seq, &m.unreg);
		break;
	case PROTO_REGION_BEGIN:
		/* its GPU names reach error texts and the log, as REGISTER's */
		if (gpus_check(&m.begin.gpus, why, sizeof(why)) < 0)
			conn_error(k, c, seq, KREX_EINVAL, "%s", why);
		else
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
	case PROTO_CTX_MAKING:
		if (c->part && c->gate)
			region_ctx_making(k, c, m.ctxm.making != 0);
		else
			conn_error(k, c, seq, KREX_ENOTREG,
			           "CTX_MAKING from a connection without a drain thread");
		break;
	case PROTO_RELEASE:
		region_release(k, c, seq, &m.release);
		break;
	case PROTO_LOG:
		history_log(k, c, seq, &m.log);
		break;
	case PROTO_SUMMARY:
		history_summary(k, c, seq, &m.summary);
		break;
	case PROTO_SIGNED:
		sign_request(k, c, seq, m.sig.region_id);
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
	unsigned handled = 0;
	ssize_t n;
	int herr;

	for (;;) {
		/* a pipelining client gets its share of a loop turn, not the turn:
		 * the rest waits for the next one (epoll is level-triggered) */
		if (handled >= CONN_MSGS_PER_TURN)
			return 0;
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
		if (!c->read_deadline_ns) {
			c->msg_ns = time_now_ns();
			c->read_deadline_ns = c->msg_ns + KREX_DEFAULT_IO_TIMEOUT_MS * NS_PER_MS;
		}
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
			if (uacct_charge(k, c, c->h.length) < 0) {
				conn_reject(
				        k, c, KREX_ELIMIT,
				        "max_buffer_per_uid reached (partial messages and unread replies of this uid)");
				return -1;
			}
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
			handled++;
			/* the frame is done: its buffer goes back (an idle connection holds none) */
			free(c->payload);
			c->payload = NULL;
			uacct_uncharge(c, c->h.length);
			if (c->dead)
				return -1;
		}
	}
}

void conn_event(struct krexd *k, struct conn *c, uint32_t events)
{
	if (c->dead)
		return;
	if ((events & EPOLLOUT) && conn_flush(k, c) < 0)
		return;
	if (events & EPOLLIN) {
		if (conn_read(k, c) < 0)
			return;
	}
	if ((events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) && !(events & EPOLLIN))
		conn_read(k, c); /* reads the EOF and closes */
}

/* Free closed connections (after the events of one loop turn are handled). */
void conn_reap(struct krexd *k)
{
	static uint64_t last_trim;
	struct conn **pp = &k->conns, *c;
	unsigned freed = 0;

	while ((c = *pp)) {
		if (!c->dead) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		k->nconns--;
		free(c);
		freed++;
	}
	if (freed) {
		uacct_gc(k);
		/* what a burst of connections took goes back to the system */
		if (log_ratelimit(&last_trim, NS_PER_S))
			malloc_trim(0);
	}
}

void conn_tick(struct krexd *k, uint64_t now)
{
	struct conn *c;

	for (c = k->conns; c; c = c->next) {
		if (!c->dead && c->read_deadline_ns && now >= c->read_deadline_ns)
			conn_reject(k, c, KREX_ETIMEDOUT,
			            "message not complete within the I/O timeout");
		if (!c->dead && c->write_deadline_ns && now >= c->write_deadline_ns)
			conn_drop_slow(k, c, "no progress within the I/O timeout");
	}
	conn_accept_tick(k, now);
}

uint64_t conn_next_deadline(struct krexd *k)
{
	uint64_t best = 0;
	struct conn *c;

	for (c = k->conns; c; c = c->next) {
		if (!c->dead && c->read_deadline_ns && (!best || c->read_deadline_ns < best))
			best = c->read_deadline_ns;
		if (!c->dead && c->write_deadline_ns && (!best || c->write_deadline_ns < best))
			best = c->write_deadline_ns;
	}
	if (k->accept_resume_ns && (!best || k->accept_resume_ns < best))
		best = k->accept_resume_ns;
	return best;
}
