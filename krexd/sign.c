/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sign.c - krexd's signed certificates (sign.h).
 *
 * One worker thread runs munge_encode for the jobs the loop queues; the loop
 * never calls munge.  A job is the canonical payload (certjson.h) of one
 * region's certificate; when done it holds the credential or why there is
 * none.  The last SIGN_KEEP jobs are kept for PROTO_SIGNED requests.  A
 * client that asks before the job is done waits, at most sign_timeout.
 *
 * munged unreachable: the first failure is logged once (warn), later jobs
 * fail at once with the same reason without calling munge, and every
 * SIGN_RETRY_NS one job tries munged again; the first success is logged
 * (info).  Regions never wait for any of it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "certjson.h"
#include "krexd.h"
#include "proc.h"
#include "conn.h"
#include "outbox.h"
#include "log.h"
#include "mungeapi.h"
#include "sign.h"
#include "timeutil.h"

#define SIGN_KEEP 256                 /* signed certificates kept for SIGNED requests */
#define SIGN_QUEUE_MAX 1024           /* jobs waiting for the thread */
#define SIGN_RETRY_NS (10 * NS_PER_S) /* munged down: how often one job tries again */

enum { SJ_QUEUED, SJ_RUNNING, SJ_DONE };

struct sign_job {
	uint64_t region_id; /* 0: the start-up probe */
	uid_t uid;          /* the owner: who may fetch it (and root) */
	char *payload;
	int ttl; /* sign_ttl when it was queued (reloadable) */
	/* under sg.lock until done */
	int state;
	int result;      /* enum mapi_result */
	char *cred;      /* malloc'd, NULL when none */
	char why[256];   /* why none */
	uint64_t enc_ns; /* munge_encode's time */
	struct sign_job *qnext;
	/* the loop's own */
	uint64_t waiter; /* connection serial waiting for it, 0 none */
	uint32_t waiter_seq;
	uint64_t waiter_deadline;
	int reported;          /* its completion was seen by the loop */
	struct sign_job *next; /* newest first */
};

static struct {
	int on;
	int efd;
	struct ep_item ep;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sign_job *qhead, *qtail; /* for the thread */
	unsigned queued;
	struct sign_job *jobs; /* every kept job, newest first (loop only) */
	unsigned njobs;
	char socket[256]; /* munge_socket (fixed while krexd runs) */
	/* the loop's view of munged */
	int down;          /* the last job failed to reach munged */
	uint64_t retry_ns; /* down: the next job tries again from then */
	char down_why[256];
	uint64_t signed_total; /* for the log */
} sg = {.efd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void *sign_thread(void *arg)
{
	uint64_t one = 1;
	(void)arg;

	proc_thread_normal(); /* not krexd's real-time priority */
	for (;;) {
		struct sign_job *j;
		char *cred = NULL, why[256] = "";
		uint64_t t0;
		int r;

		pthread_mutex_lock(&sg.lock);
		while (!sg.qhead)
			pthread_cond_wait(&sg.cond, &sg.lock);
		j = sg.qhead;
		sg.qhead = j->qnext;
		if (!sg.qhead)
			sg.qtail = NULL;
		sg.queued--;
		j->state = SJ_RUNNING;
		pthread_mutex_unlock(&sg.lock);

		t0 = time_now_ns();
		r = mapi_encode(sg.socket, j->ttl, j->payload, strlen(j->payload), &cred, why,
		                sizeof(why));

		pthread_mutex_lock(&sg.lock);
		j->enc_ns = time_now_ns() - t0;
		j->result = r;
		j->cred = cred;
		snprintf(j->why, sizeof(j->why), "%s", why);
		j->state = SJ_DONE;
		pthread_mutex_unlock(&sg.lock);
		(void)!write(sg.efd, &one, sizeof(one));
	}
	return NULL;
}

static void job_free(struct sign_job *j)
{
	free(j->payload);
	free(j->cred);
	free(j);
}

/* Keep at most SIGN_KEEP jobs: drop the oldest that are done and seen. */
static void sign_trim(void)
{
	struct sign_job **pp, *j, **last = NULL;

	while (sg.njobs > SIGN_KEEP) {
		last = NULL;
		for (pp = &sg.jobs; *pp; pp = &(*pp)->next)
			if ((*pp)->reported)
				last = pp;
		if (!last)
			return;
		j = *last;
		*last = j->next;
		sg.njobs--;
		job_free(j);
	}
}

/* A new job, done at once (with why) when munged is known down or the queue is full. */
static void sign_submit(struct krexd *k, uint64_t region_id, uid_t uid, char *payload)
{
	struct sign_job *j = calloc(1, sizeof(*j));
	uint64_t now = time_now_ns();

	if (!j) {
		free(payload);
		return;
	}
	j->region_id = region_id;
	j->uid = uid;
	j->payload = payload;
	j->ttl = (int)k->cfg.sign_ttl;
	j->next = sg.jobs;
	sg.jobs = j;
	sg.njobs++;
	pthread_mutex_lock(&sg.lock);
	if ((sg.down && now < sg.retry_ns) || sg.queued >= SIGN_QUEUE_MAX) {
		j->state = SJ_DONE;
		j->result = MAPI_SOCKET;
		if (sg.queued >= SIGN_QUEUE_MAX)
			snprintf(j->why, sizeof(j->why), "%u certificates wait for munged already",
			         sg.queued);
		else
			snprintf(j->why, sizeof(j->why), "%s", sg.down_why);
		j->reported = 1;
	} else {
		if (sg.down)
			sg.retry_ns = now + SIGN_RETRY_NS; /* this one tries; the next wait */
		j->state = SJ_QUEUED;
		if (sg.qtail)
			sg.qtail->qnext = j;
		else
			sg.qhead = j;
		sg.qtail = j;
		sg.queued++;
		pthread_cond_signal(&sg.cond);
	}
	pthread_mutex_unlock(&sg.lock);
	sign_trim();
}

void sign_start(struct krexd *k)
{
	struct epoll_event ev = {.events = EPOLLIN};
	pthread_attr_t a;
	char *probe;

	if (k->cfg.sign == SIGN_OFF) {
		log_info("certificates are not signed (sign = off)");
		return;
	}
	snprintf(sg.socket, sizeof(sg.socket), "%s", k->cfg.munge_socket);
	sg.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (sg.efd < 0) {
		log_warn("certificates are not signed: eventfd: %s", strerror(errno));
		return;
	}
	sg.ep.kind = EP_SIGN;
	sg.ep.ptr = k;
	ev.data.ptr = &sg.ep;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (epoll_ctl(k->epfd, EPOLL_CTL_ADD, sg.efd, &ev) < 0 ||
	    pthread_create(&sg.thread, &a, sign_thread, NULL) != 0) {
		log_warn("certificates are not signed: the signing thread did not start: %s",
		         strerror(errno));
		pthread_attr_destroy(&a);
		close(sg.efd);
		sg.efd = -1;
		return;
	}
	pthread_attr_destroy(&a);
	sg.on = 1;
	/* One encode now, so that the log says at start whether signing works. */
	probe = strdup("{\"krex\":\"start-up probe\"}");
	if (probe)
		sign_submit(k, 0, 0, probe);
}

void sign_cert(struct krexd *k, uid_t uid, uint32_t job, uint32_t step,
               const struct krex_certificate *c)
{
	char *payload;
	int n;

	if (!sg.on)
		return;
	n = cert_signed_payload(NULL, 0, k->cfg.node_name, (uint32_t)uid, job, step, c);
	if (n < 0 || n >= KREX_SIGNED_MAX / 2 || !(payload = malloc((size_t)n + 1))) {
		log_warn("region %llu: certificate too large to sign",
		         (unsigned long long)c->region_id);
		return;
	}
	cert_signed_payload(payload, (size_t)n + 1, k->cfg.node_name, (uint32_t)uid, job, step, c);
	sign_submit(k, c->region_id, uid, payload);
}

static struct conn *conn_by_serial(struct krexd *k, uint64_t serial)
{
	struct conn *c;

	for (c = k->conns; c; c = c->next)
		if (c->serial == serial && !c->dead)
			return c;
	return NULL;
}

/* Answer one request for j (done, or given up on with why). */
static int sign_reply(struct krexd *k, struct conn *c, uint32_t seq, uint64_t region_id,
                      const struct sign_job *j, const char *why)
{
	union proto_body m;

	memset(&m, 0, sizeof(m));
	m.sig_reply.region_id = region_id;
	if (j && j->cred && !why) {
		m.sig_reply.status = PROTO_SIGNED_OK;
		m.sig_reply.cred = j->cred;
		m.sig_reply.cred_len = (uint32_t)strlen(j->cred);
		if (m.sig_reply.cred_len > PROTO_SIGNED_MAX_CRED) {
			m.sig_reply.cred = NULL;
			m.sig_reply.cred_len = 0;
			why = "the credential is larger than the protocol carries";
		}
	}
	if (!m.sig_reply.cred) {
		m.sig_reply.status = PROTO_SIGNED_NONE;
		snprintf(m.sig_reply.reason, sizeof(m.sig_reply.reason), "%s",
		         why         ? why
		         : j->why[0] ? j->why
		                     : "not signed");
	}
	return conn_send(k, c, PROTO_SIGNED_REPLY, seq, &m);
}

/* Whether the connection of this serial waits for a signed form. */
int sign_waiting(uint64_t serial)
{
	struct sign_job *j;

	for (j = sg.jobs; j; j = j->next)
		if (j->waiter == serial)
			return 1;
	return 0;
}

int sign_request(struct krexd *k, struct conn *c, uint32_t seq, uint64_t region_id)
{
	struct sign_job *j;
	int state;

	if (!sg.on)
		return sign_reply(k, c, seq, region_id, NULL,
		                  k->cfg.sign == SIGN_OFF
		                          ? "krexd signs no certificate (sign = off)"
		                          : "krexd's signing did not start (see its log)");
	for (j = sg.jobs; j; j = j->next)
		if (region_id && j->region_id == region_id && (j->uid == c->uid || c->uid == 0))
			break;
	if (!j)
		return sign_reply(
		        k, c, seq, region_id, NULL,
		        "no signed certificate of that region for this user (ended long ago, or not yours)");
	pthread_mutex_lock(&sg.lock);
	state = j->state;
	pthread_mutex_unlock(&sg.lock);
	if (state == SJ_DONE)
		return sign_reply(k, c, seq, region_id, j, NULL);
	if (j->waiter) {
		struct conn *w = conn_by_serial(k, j->waiter);
		if (w)
			sign_reply(k, w, j->waiter_seq, region_id, NULL,
			           "asked again on another connection");
	}
	j->waiter = c->serial;
	j->waiter_seq = seq;
	j->waiter_deadline = time_now_ns() + k->cfg.sign_timeout_ns;
	return 0;
}

/* munged failed or hangs: logged once until it answers again (sg.lock held). */
static void sign_down(const char *why, uint64_t now)
{
	if (!sg.down)
		log_warn(
		        "certificates are not signed: %s; regions go on unsigned, munged is tried again every %llu s",
		        why, (unsigned long long)(SIGN_RETRY_NS / NS_PER_S));
	sg.down = 1;
	sg.retry_ns = now + SIGN_RETRY_NS;
	snprintf(sg.down_why, sizeof(sg.down_why), "%s", why);
}

/* The loop learns how a job went: munged down or up again, logged once each way. */
static void sign_seen(struct sign_job *j, uint64_t now)
{
	j->reported = 1;
	if (j->result == MAPI_OK) {
		sg.signed_total++;
		if (sg.down)
			log_info("munged answers again: certificates are signed (%s)",
			         sg.socket[0] ? sg.socket : "munge's default socket");
		else if (!j->region_id)
			log_info("certificates are signed with munge (socket %s, time-to-live %s)",
			         sg.socket[0] ? sg.socket : "munge's default",
			         j->ttl ? "sign_ttl" : "munged's maximum");
		sg.down = 0;
		log_debug("region %llu signed in %llu us", (unsigned long long)j->region_id,
		          (unsigned long long)(j->enc_ns / NS_PER_US));
		return;
	}
	sign_down(j->why, now);
}

void sign_event(struct krexd *k)
{
	struct sign_job *j;
	uint64_t v, now = time_now_ns();

	(void)!read(sg.efd, &v, sizeof(v));
	for (j = sg.jobs; j; j = j->next) {
		int state;
		if (j->reported)
			continue;
		pthread_mutex_lock(&sg.lock);
		state = j->state;
		pthread_mutex_unlock(&sg.lock);
		if (state != SJ_DONE)
			continue;
		pthread_mutex_lock(&sg.lock);
		sign_seen(j, now);
		pthread_mutex_unlock(&sg.lock);
		if (j->waiter) {
			struct conn *c = conn_by_serial(k, j->waiter);
			if (c)
				sign_reply(k, c, j->waiter_seq, j->region_id, j, NULL);
			j->waiter = 0;
		}
	}
	sign_trim();
}

void sign_tick(struct krexd *k, uint64_t now)
{
	struct sign_job *j;
	char why[256];

	for (j = sg.jobs; j; j = j->next) {
		struct conn *c;
		if (!j->waiter || now < j->waiter_deadline)
			continue;
		c = conn_by_serial(k, j->waiter);
		snprintf(why, sizeof(why), "munged did not answer within sign_timeout (%llu ms)",
		         (unsigned long long)(k->cfg.sign_timeout_ns / NS_PER_MS));
		/* munged hangs (stopped, overloaded): the next certificates do not
		 * wait for it too; one tries again after SIGN_RETRY_NS */
		pthread_mutex_lock(&sg.lock);
		sign_down(why, now);
		pthread_mutex_unlock(&sg.lock);
		if (c)
			sign_reply(k, c, j->waiter_seq, j->region_id, NULL, why);
		j->waiter = 0;
	}
}

uint64_t sign_next_deadline(struct krexd *k)
{
	struct sign_job *j;
	uint64_t best = 0;
	(void)k;

	for (j = sg.jobs; j; j = j->next)
		if (j->waiter && (!best || j->waiter_deadline < best))
			best = j->waiter_deadline;
	return best;
}
