/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region.c - krex_region_begin() / krex_region_end() and the certificate.
 *
 * One region per process at a time.  The connection that asked for the
 * region stays open until the end: krexd ends a region whose owner's
 * connection closes, so a crashed owner never leaves its siblings frozen.
 *
 * It also stays open between regions, for the next one: a connect() wakes
 * krexd before the request is written, and a krexd of higher priority then
 * preempts the caller with nothing to read (the entry's tail on a busy
 * node).  A kept connection is used again only by the process that opened
 * it, while it is the same socket (the application may have closed and
 * reused the fd number), toward the same KREX_SOCKET, and with nothing to
 * read on it (krexd restarted or closed it for room: conn.c).  A request
 * that finds it closed all the same is sent once more on a fresh one.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "conf.h"
#include "defs.h"
#include "certjson.h"
#include "json.h"
#include "krex/region.h"
#include "log.h"
#include "timeutil.h"

#define KREX_EXPORT __attribute__((visibility("default")))

/* Extra time, past the queue timeout krexd applies, before we give up. */
#define REGION_REPLY_SLACK_MS 5000

static struct {
	pthread_mutex_t lock;
	int active;      /* a region was begun and not ended */
	int unprotected; /* ... without krexd */
	int fd;
	uint64_t region_id;
	uint64_t t_grant_ns;
	struct proto_grant grant;
	/* the kept connection: who opened it, toward where, and which socket */
	pid_t pid;
	dev_t dev;
	ino_t ino;
	char path[512];
} region_state = {PTHREAD_MUTEX_INITIALIZER, 0, 0, -1, 0, 0, {0}, 0, 0, 0, ""};

/* krex_region_held(): a region granted by krexd, not yet ended (read by the
 * gate on every launch its queue bounds, so an atomic of its own and not under the lock). */
static _Atomic int region_held;

static pthread_once_t region_once = PTHREAD_ONCE_INIT;

static const char *const krex_errors[KREX_ERROR_MAX] = {
        [KREX_OK] = "success",
        [KREX_ENOKREXD] = "no krexd is running (socket not reachable)",
        [KREX_EPROTO] = "protocol error talking to krexd",
        [KREX_EPERM] = "permission denied",
        [KREX_EBUSY] = "this process already holds or waits for a region",
        [KREX_ETIMEDOUT] = "timed out",
        [KREX_EINVAL] = "invalid argument",
        [KREX_ENOTREG] = "not a KREX participant",
        [KREX_ENOREGION] = "no such region",
        [KREX_ENOMEM] = "out of memory",
        [KREX_ESYS] = "system call failed",
        [KREX_ENOGPU] = "unknown GPU",
        [KREX_ESHUTDOWN] = "krexd closed the connection",
        [KREX_EVERSION] = "krexd speaks another protocol version",
        [KREX_ELIMIT] = "a krexd limit was reached",
};

KREX_EXPORT const char *krex_strerror(int err)
{
	if (err < 0 || err >= KREX_ERROR_MAX || !krex_errors[err])
		return "unknown KREX error";
	return krex_errors[err];
}

KREX_EXPORT int krex_api_version(void)
{
	return KREX_API_VERSION;
}

KREX_EXPORT const char *krex_outcome_name(uint32_t outcome)
{
	return cert_outcome_name(outcome);
}

static int env_unprotected(void)
{
	const char *e = getenv(KREX_ENV_UNPROTECTED);

	return e && strcmp(e, "1") == 0;
}

/*
 * KREX_REGION_SPIN_US: how long, in microseconds, the thread polls for
 * krexd's reply at a region's edges (the grant, the certificate) before it
 * sleeps in the kernel; 0: it sleeps at once.  A thread that slept runs its
 * next CUDA calls slower for a while (H200, every sibling: a 0.1 ms sample's
 * wall p95 +2.8 % over alone asleep, +1.75 % spinning; doc/performance.md).
 * It spins on its own CPU, yielding it to any other thread there each round
 * (fd_spin_readable).  Bad or out of range: the default, said once.
 */
#define REGION_SPIN_US_DEFAULT 10000
#define REGION_SPIN_US_MAX 100000
#define REGION_STR_(x) #x
#define REGION_STR(x) REGION_STR_(x)
static uint64_t region_spin_ns(void)
{
	static int said;

	return conf_env_uint("KREX_REGION_SPIN_US", REGION_SPIN_US_MAX, REGION_SPIN_US_DEFAULT,
	                     &said, "microseconds",
	                     "the default, " REGION_STR(REGION_SPIN_US_DEFAULT)) *
	       1000u;
}

/* Fill a BEGIN from the caller's options. */
static int region_fill_begin(const struct krex_region_opts *o, union proto_body *m)
{
	unsigned i;

	memset(m, 0, sizeof(*m));
	if (o->ngpus > KREX_MAX_GPUS || (o->ngpus && !o->gpus))
		return KREX_EINVAL;
	for (i = 0; i < o->ngpus; i++) {
		if (!o->gpus[i] || !*o->gpus[i] || strlen(o->gpus[i]) > KREX_MAX_GPU_NAME)
			return KREX_EINVAL;
		strcpy(m->begin.gpus.name[i], o->gpus[i]);
	}
	m->begin.gpus.n = (uint16_t)o->ngpus;
	m->begin.expected_us = o->expected_us;
	m->begin.max_us = o->max_us;
	m->begin.timeout_ms = o->timeout_ms;
	m->begin.flags = o->flags;
	return KREX_OK;
}

/* Forget the kept connection; close it only when it is still ours. */
static void region_conn_drop(int ours)
{
	if (region_state.fd >= 0 && ours)
		close(region_state.fd);
	region_state.fd = -1;
}

/* Whether region_state.fd is still the socket we opened (not an fd number the application reused). */
static int region_conn_ours(void)
{
	struct stat st;

	return region_state.fd >= 0 && fstat(region_state.fd, &st) == 0 &&
	       st.st_dev == region_state.dev && st.st_ino == region_state.ino;
}

/* Whether the kept connection can carry the next request to path. */
static int region_conn_good(const char *path)
{
	struct pollfd pfd = {.fd = region_state.fd, .events = POLLIN};

	if (region_state.pid != getpid() || !region_conn_ours()) {
		region_conn_drop(0); /* not ours any more: the application's fd now */
		return 0;
	}
	if (strcmp(path, region_state.path) != 0 || poll(&pfd, 1, 0) != 0) {
		region_conn_drop(1); /* another krexd, or EOF or stray bytes on it */
		return 0;
	}
	return 1;
}

/* A connection to krexd for a request: the kept one (*reused) or a fresh one. */
static int region_conn_get(int *reused, int *kerr)
{
	char path[sizeof(region_state.path)];
	struct stat st;
	int fd;

	*reused = 0;
	if (client_socket_path(path, sizeof(path)) < 0) {
		*kerr = KREX_EINVAL;
		return -1;
	}
	if (region_state.fd >= 0 && region_conn_good(path)) {
		*reused = 1;
		*kerr = KREX_OK;
		return region_state.fd;
	}
	fd = client_connect(path, kerr);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		close(fd);
		*kerr = KREX_ESYS;
		return -1;
	}
	region_state.fd = fd;
	region_state.pid = getpid();
	region_state.dev = st.st_dev;
	region_state.ino = st.st_ino;
	memcpy(region_state.path, path, sizeof(path));
	return fd;
}

/* A kept connection that failed this way was closed before krexd read the request. */
static int region_conn_lost(int reused, int rc)
{
	return reused && (rc == KREX_ESHUTDOWN || rc == KREX_ENOKREXD);
}

static void region_atfork_register(void)
{
	pthread_atfork(NULL, NULL, region_atfork_child);
}

/*
 * Ask for the region on fd; if krexd does not know us yet, register this
 * process (with the region's GPUs, or the environment's) and ask again.
 */
static int region_request(int fd, const union proto_body *begin, union proto_body *reply,
                          uint64_t deadline)
{
	union proto_body reg;
	struct proto_gpus g;
	int rc;

	rc = client_call_spin(fd, PROTO_REGION_BEGIN, begin, PROTO_GRANT, reply, deadline,
	                      region_spin_ns(), NULL, 0);
	if (rc != KREX_ENOTREG)
		return rc;
	if (begin->begin.gpus.n)
		g = begin->begin.gpus;
	else
		client_env_gpus(&g);
	client_fill_register(&reg, &g, 0);
	rc = client_call(fd, PROTO_REGISTER, &reg, PROTO_REGISTERED, reply,
	                 time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS), NULL, 0);
	if (rc != KREX_OK)
		return rc;
	return client_call_spin(fd, PROTO_REGION_BEGIN, begin, PROTO_GRANT, reply, deadline,
	                        region_spin_ns(), NULL, 0);
}

KREX_EXPORT int krex_region_begin(const struct krex_region_opts *opts)
{
	static const struct krex_region_opts defaults = KREX_REGION_OPTS_INIT;
	const struct krex_region_opts *o = opts ? opts : &defaults;
	union proto_body begin, reply;
	unsigned wait_ms;
	int fd, rc, reused;

	if (o->size < sizeof(struct krex_region_opts))
		return KREX_EINVAL;
	rc = region_fill_begin(o, &begin);
	if (rc != KREX_OK)
		return rc;
	pthread_once(&region_once, region_atfork_register);
	pthread_mutex_lock(&region_state.lock);
	if (region_state.active) {
		rc = KREX_EBUSY;
		goto out;
	}
	fd = region_conn_get(&reused, &rc);
	if (fd >= 0) {
		wait_ms = o->timeout_ms ? o->timeout_ms : KREX_DEFAULT_QUEUE_TIMEOUT_MS;
		rc = region_request(fd, &begin, &reply,
		                    time_deadline_ms(wait_ms + REGION_REPLY_SLACK_MS));
		if (region_conn_lost(reused, rc)) {
			region_conn_drop(1);
			fd = region_conn_get(&reused, &rc);
			if (fd >= 0)
				rc = region_request(
				        fd, &begin, &reply,
				        time_deadline_ms(wait_ms + REGION_REPLY_SLACK_MS));
		}
		if (rc != KREX_OK) /* a refusal, a timeout (a late reply could follow): not kept */
			region_conn_drop(1);
	}
	if (fd < 0) {
		if (rc == KREX_ENOKREXD &&
		    ((o->flags & KREX_REGION_UNPROTECTED_OK) || env_unprotected())) {
			region_state.active = 1;
			region_state.unprotected = 1;
			region_state.t_grant_ns = time_now_ns();
			rc = KREX_OK;
		}
		goto out;
	}
	if (rc != KREX_OK)
		goto out;
	region_state.active = 1;
	region_state.unprotected = 0;
	atomic_store(&region_held, 1);
	region_state.grant = reply.grant;
	region_state.region_id = reply.grant.region_id;
	join_warm();
	region_state.t_grant_ns = time_now_ns();
out:
	pthread_mutex_unlock(&region_state.lock);
	return rc;
}

/* The certificate of a region run without krexd. */
static void region_cert_unprotected(struct krex_certificate *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->outcome = KREX_OUTCOME_UNPROTECTED;
	c->held_us = (time_now_ns() - region_state.t_grant_ns) / NS_PER_US;
	c->foreign = -1;
	c->moved = -1;
	c->sm_clock_start_mhz = -1;
	c->sm_clock_end_mhz = -1;
	c->sm_clock_min_mhz = c->sm_clock_max_mhz = c->sm_clock_nominal_mhz = -1;
	c->temp_start_c = c->temp_end_c = -1;
	snprintf(c->note, sizeof(c->note), "no krexd: the GPU was not quieted");
}

/*
 * Ask krexd on fd for the signed form of region id: the credential into buf,
 * or "" and why.  An older krexd answers "unknown message type".
 */
static int region_fetch_signed(int fd, uint64_t id, char *buf, unsigned long len, char *why,
                               unsigned long whylen)
{
	union proto_body req, reply;
	char err[256];
	int rc;

	memset(&req, 0, sizeof(req));
	req.sig.region_id = id;
	rc = client_call(fd, PROTO_SIGNED, &req, PROTO_SIGNED_REPLY, &reply,
	                 time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS + KREX_MAX_SIGN_TIMEOUT_MS),
	                 err, sizeof(err));
	if (rc != KREX_OK) {
		snprintf(why, whylen, "krexd gave no signed form: %s",
		         err[0] ? err : krex_strerror(rc));
		return rc;
	}
	if (reply.sig_reply.status != PROTO_SIGNED_OK || !reply.sig_reply.cred)
		snprintf(why, whylen, "%s",
		         reply.sig_reply.reason[0] ? reply.sig_reply.reason
		                                   : "krexd signed nothing");
	else if (reply.sig_reply.cred_len >= len)
		snprintf(why, whylen, "the signed form needs %u bytes, the buffer has %lu",
		         reply.sig_reply.cred_len + 1, len);
	else
		memcpy(buf, reply.sig_reply.cred, (size_t)reply.sig_reply.cred_len + 1);
	proto_body_free(PROTO_SIGNED_REPLY, &reply);
	return KREX_OK;
}

/* End the region; with want_signed, also fetch its signed form (buf, why). */
static int region_end_as(struct krex_certificate *cert, int want_signed, char *buf,
                         unsigned long len, char *why, unsigned long whylen)
{
	union proto_body req, reply;
	struct krex_certificate local;
	int rc, src, fd, reused;

	pthread_mutex_lock(&region_state.lock);
	if (!region_state.active) {
		rc = KREX_ENOREGION;
		goto out;
	}
	if (region_state.unprotected) {
		region_cert_unprotected(&local);
		if (want_signed)
			snprintf(why, whylen, "no krexd: nothing was signed");
		rc = KREX_OK;
		goto done;
	}
	atomic_store(&region_held, 0); /* launches from here on are outside it */
	memset(&req, 0, sizeof(req));
	req.end.region_id = region_state.region_id;
	rc = client_call_spin(
	        region_state.fd, PROTO_REGION_END, &req, PROTO_CERT, &reply,
	        time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS + KREX_DEFAULT_DRAIN_TIMEOUT_MS),
	        region_spin_ns(), NULL, 0);
	if (rc != KREX_OK) {
		region_conn_drop(1); /* the region ends with it, if krexd still held it */
		goto done;
	}
	local = reply.cert;
	if (want_signed) {
		src = region_fetch_signed(region_state.fd, local.region_id, buf, len, why, whylen);
		if (region_conn_lost(1, src)) {
			/* closed for room between the two (conn.c): any connection of ours may ask */
			region_conn_drop(1);
			fd = region_conn_get(&reused, &src);
			if (fd >= 0) {
				why[0] = '\0';
				src = region_fetch_signed(fd, local.region_id, buf, len, why,
				                          whylen);
			}
		}
		if (src != KREX_OK) /* a late reply could follow on it */
			region_conn_drop(1);
	}
done:
	region_state.active = 0;
	region_state.unprotected = 0;
	if (rc == KREX_OK && cert)
		*cert = local;
out:
	pthread_mutex_unlock(&region_state.lock);
	return rc;
}

KREX_EXPORT int krex_region_end(struct krex_certificate *cert)
{
	return region_end_as(cert, 0, NULL, 0, NULL, 0);
}

KREX_EXPORT int krex_region_end_signed(struct krex_certificate *cert, char *buf, unsigned long len,
                                       char *why, unsigned long whylen)
{
	char whybuf[256];

	if (!buf || !len)
		return KREX_EINVAL;
	buf[0] = '\0';
	if (!why || !whylen) {
		why = whybuf;
		whylen = sizeof(whybuf);
	}
	why[0] = '\0';
	return region_end_as(cert, 1, buf, len, why, whylen);
}

/* Forget a region inherited across fork(): it belongs to the parent. */
void region_atfork_child(void)
{
	pthread_mutex_init(&region_state.lock, NULL);
	region_conn_drop(region_conn_ours());
	region_state.active = 0;
	region_state.unprotected = 0;
	atomic_store(&region_held, 0);
}

KREX_EXPORT int krex_region_held(void)
{
	return atomic_load_explicit(&region_held, memory_order_relaxed);
}

KREX_EXPORT int krex_certificate_json(const struct krex_certificate *c, char *buf,
                                      unsigned long len)
{
	return json_certificate(c, buf, len);
}
