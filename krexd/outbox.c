/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * outbox.c - replies: a bounded output queue per connection, written when
 * the socket takes it, and a connection's close.  The ground floor of krexd:
 * every module answers its clients through conn_send/conn_error here.
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

#include "krexd.h"
#include "conn.h"
#include "quota.h"
#include "outbox.h"
#include "part.h"
#include "log.h"
#include "timeutil.h"

/* Output buffers larger than this are freed once empty. */
#define OUT_KEEP 4096

/* An ERROR body from a format. */
static void error_body(union proto_body *m, int code, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));
static void error_body(union proto_body *m, int code, const char *fmt, va_list ap)
{
	memset(m, 0, sizeof(*m));
	m->error.code = (uint32_t)code;
	vsnprintf(m->error.message, sizeof(m->error.message), fmt, ap);
}

void conn_refuse(int fd, int code, const char *fmt, ...)
{
	union proto_body m;
	struct pbuf b;
	va_list ap;

	va_start(ap, fmt);
	error_body(&m, code, fmt, ap);
	va_end(ap);
	pbuf_init(&b);
	if (proto_pack(&b, PROTO_ERROR, 0, &m) == 0)
		(void)!send(fd, b.data, b.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	pbuf_free(&b);
	close(fd);
}

/* ---- output: a bounded queue per connection, written when the socket takes it ---- */

static void conn_want_out(struct krexd *k, struct conn *c, int on)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0),
	                         .data.ptr = &c->ep};

	if (c->want_out == on)
		return;
	c->want_out = on;
	epoll_ctl(k->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

int conn_flush(struct krexd *k, struct conn *c)
{
	ssize_t n;

	while (c->out_off < c->out_len) {
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
		         MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			log_debug("connection %llu (pid %d): write: %s",
			          (unsigned long long)c->serial, (int)c->pid, strerror(errno));
			conn_close(k, c);
			return -1;
		}
		c->out_off += (size_t)n;
		uacct_uncharge(c, (size_t)n);
		c->write_deadline_ns = time_now_ns() + KREX_DEFAULT_IO_TIMEOUT_MS * NS_PER_MS;
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		c->write_deadline_ns = 0;
		if (c->out_cap > OUT_KEEP) {
			free(c->out);
			c->out = NULL;
			c->out_cap = 0;
		}
		conn_want_out(k, c, 0);
	} else {
		if (!c->write_deadline_ns)
			c->write_deadline_ns =
			        time_now_ns() + KREX_DEFAULT_IO_TIMEOUT_MS * NS_PER_MS;
		conn_want_out(k, c, 1);
	}
	return 0;
}

void conn_drop_slow(struct krexd *k, struct conn *c, const char *why)
{
	static uint64_t last;

	if (log_ratelimit(&last, NS_PER_S))
		log_warn(
		        "connection %llu (pid %d uid %u) does not read its replies (%zu bytes queued, %s); dropping it (logged once per s)",
		        (unsigned long long)c->serial, (int)c->pid, (unsigned)c->uid,
		        c->out_len - c->out_off, why);
	conn_close(k, c);
}

int conn_send(struct krexd *k, struct conn *c, uint16_t type, uint32_t seq,
              const union proto_body *m)
{
	struct pbuf b;
	size_t pending;
	uint8_t *n;

	if (c->dead)
		return -1;
	pbuf_init(&b);
	if (proto_pack(&b, type, seq, m) < 0) {
		log_warn("connection %llu (pid %d): cannot encode %s: %s",
		         (unsigned long long)c->serial, (int)c->pid, proto_type_name(type),
		         strerror(errno));
		pbuf_free(&b);
		conn_close(k, c);
		return -1;
	}
	pending = c->out_len - c->out_off;
	if (pending + b.len > k->cfg.conn_buffer) {
		pbuf_free(&b);
		conn_drop_slow(k, c, "conn_buffer full");
		return -1;
	}
	if (uacct_charge(k, c, b.len) < 0) {
		pbuf_free(&b);
		conn_drop_slow(k, c, "max_buffer_per_uid reached");
		return -1;
	}
	if (c->out_off && pending + b.len > c->out_cap) {
		memmove(c->out, c->out + c->out_off, pending);
		c->out_off = 0;
		c->out_len = pending;
	}
	if (c->out_len + b.len > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 1024;
		while (cap < c->out_len + b.len)
			cap *= 2;
		n = realloc(c->out, cap);
		if (!n) {
			pbuf_free(&b);
			uacct_uncharge(c, b.len);
			conn_close(k, c);
			return -1;
		}
		c->out = n;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, b.data, b.len);
	c->out_len += b.len;
	pbuf_free(&b);
	return conn_flush(k, c);
}

int conn_error(struct krexd *k, struct conn *c, uint32_t seq, int code, const char *fmt, ...)
{
	union proto_body m;
	va_list ap;

	va_start(ap, fmt);
	error_body(&m, code, fmt, ap);
	va_end(ap);
	log_debug("connection %llu (pid %d): error %d: %s", (unsigned long long)c->serial,
	          (int)c->pid, code, m.error.message);
	return conn_send(k, c, PROTO_ERROR, seq, &m);
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
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
	/* buffers go back now, not at the reap */
	free(c->out);
	c->out = NULL;
	c->out_off = c->out_len = c->out_cap = 0;
	free(c->payload);
	c->payload = NULL;
	uacct_uncharge(c, c->charged);
	if (c->ua)
		c->ua->conns--;
	free(c->reg); /* a REGISTER waiting for its move: never answered */
	c->reg = NULL;
	c->reg_wait = 0;
	k->ev.conn_gone(k, c);
	if (c->part) {
		c->part->conns--;
		if (c->gate)
			c->part->members--;
		c->part = NULL;
	}
}
