/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * join.c - krex_join(): register this process as a gate member, map the gate
 * page read-only, run the drain thread; krex_gate_wait(): the check in front
 * of every GPU submission.
 *
 * The drain thread owns the member's connection.  It sleeps on the gate
 * page's generation word (a shared futex); when krexd closes a gate on one of
 * our GPUs for another participant's region it calls the drain callback and
 * acknowledges that generation.  When the connection breaks (krexd stopped or
 * died) the gate fails open at once and the thread tries to join the next
 * krexd every JOIN_RETRY_MS.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "client.h"
#include "defs.h"
#include "fdio.h"
#include "gatepage.h"
#include "krex/region.h"
#include "log.h"
#include "timeutil.h"

#define KREX_EXPORT __attribute__((visibility("default")))

#define GATE_SLICE_MS 100   /* a gated thread re-checks krexd at least this often */
#define DRAIN_SLICE_MS 200  /* the drain thread checks its socket this often */
#define JOIN_RETRY_MS 500   /* after krexd went away, try to join again */
#define RETIRE_WAIT_MS 2000 /* longest wait for gated threads before unmapping */
#define RETIRED_MAX 8       /* views replaced but not yet unmapped */

/* What krexd told us at registration; replaced whole on a re-join. */
struct join_view {
	const struct gate_page *page;
	uint32_t participant;
	uint32_t nslots;
	uint16_t slot[KREX_MAX_GPUS];
};

static struct {
	pthread_mutex_t lock;
	int joined;                       /* krex_join() succeeded and no krex_leave() */
	_Atomic(struct join_view *) view; /* NULL: fail open */
	_Atomic int connected;            /* the drain thread's socket is up */
	_Atomic int stop;
	int fd;
	pthread_t thread;
	struct proto_gpus gpus;
	krex_drain_fn drain;
	void *drain_arg;
	krex_drain_fn warm;
	void *warm_arg;
	unsigned queue_cap;
	unsigned queue_us;
	_Atomic unsigned drain_ms; /* the page's drain_ms at the drain's start (0: none) */
	unsigned gate_timeout_ms;
	uint32_t reg_flags; /* PROTO_REG_HOLDCTX from krex_join_opts.flags, re-joins too */
	int atfork_done;
} join_state = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static uint64_t join_log_last;

/*
 * Threads inside krex_gate_wait(), which may hold a view pointer, counted in
 * join_readers[join_epoch & 1].  To free views no longer published, the
 * epoch is flipped and the old counter waited for: threads that come later
 * count in the other one and load the new view, so the old count only falls.
 */
static _Atomic unsigned join_epoch;
static _Atomic unsigned join_readers[2];
static struct join_view *join_retired[RETIRED_MAX];

/* Threads waiting in gate_wait_slow() now, and the drain's pass: while
 * join_pass is set, krex_gate_wait() lets this process's threads through
 * (krex_gate_pass()). */
static _Atomic unsigned join_parked;
static _Atomic int join_pass;

/* Set in the drain thread: it never waits at the gate (the drain callback
 * synchronizes through the GPU runtime, which may pass through the gate). */
static __thread int in_drain_thread;

/* Logging inside a user's process is off unless KREX_LOG asks for it. */
__attribute__((constructor)) static void join_log_init(void)
{
	int lvl = log_parse_level(getenv(KREX_ENV_LOG));

	log_init("krex", lvl < 0 ? LOG_LVL_NONE : (enum log_level)lvl, LOG_TO_STDERR);
}

static long futex(const void *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static void futex_wait_ms(const uint32_t *addr, uint32_t val, int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	/* Shared (not PRIVATE) futex: krexd wakes us through its own mapping. */
	(void)futex(addr, FUTEX_WAIT, val, &ts);
}

static uint32_t load32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/*
 * Map the gate page read-only and check it.  Before mapping: a regular file,
 * owned by krexd's uid (the peer we checked), at least GATE_PAGE_SIZE long: a
 * shorter file would kill us with SIGBUS at the first read past its end.
 */
static const struct gate_page *join_map_page(const char *path, uid_t krexd_uid)
{
	const struct gate_page *p;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		log_warn("gate page %s: %s; GPU gate open", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != krexd_uid ||
	    st.st_size < GATE_PAGE_SIZE) {
		log_warn(
		        "gate page %s refused (owner uid %d, krexd uid %d, %lld bytes, %d needed); GPU gate open",
		        path, (int)st.st_uid, (int)krexd_uid, (long long)st.st_size,
		        GATE_PAGE_SIZE);
		close(fd);
		errno = EPROTO;
		return NULL;
	}
	p = mmap(NULL, GATE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	if (p->magic != GATE_MAGIC || p->version != GATE_VERSION) {
		log_warn("gate page %s: bad magic or version; GPU gate open", path);
		munmap((void *)p, GATE_PAGE_SIZE);
		errno = EPROTO;
		return NULL;
	}
	return p;
}

static void view_free(struct join_view *v)
{
	if (!v)
		return;
	if (v->page)
		munmap((void *)v->page, GATE_PAGE_SIZE);
	free(v);
}

/*
 * Retire a view nobody can load any more (join_state.view no longer points
 * to it): wait, bounded, until no thread is inside krex_gate_wait() (which
 * may still hold the old pointer), then unmap and free it.  A view still in
 * use after the wait is kept on the retired list and freed by a later call.
 */
static void view_retire(struct join_view *v)
{
	uint64_t deadline = time_deadline_ms(RETIRE_WAIT_MS);
	unsigned i, e, n = 0;

	if (v) {
		for (i = 0; i < RETIRED_MAX && join_retired[i]; i++)
			;
		if (i < RETIRED_MAX)
			join_retired[i] = v;
		else
			log_warn("gate page views still in use; one left mapped");
	}
	for (i = 0; i < RETIRED_MAX; i++)
		n += join_retired[i] != NULL;
	if (!n)
		return;
	e = atomic_fetch_add(&join_epoch, 1) & 1;
	while (atomic_load(&join_readers[e]) != 0 && time_left_ms(deadline) > 0)
		usleep(1000);
	if (atomic_load(&join_readers[e]) != 0)
		return; /* a thread stuck inside: try again at the next retire */
	for (i = 0; i < RETIRED_MAX; i++) {
		view_free(join_retired[i]);
		join_retired[i] = NULL;
	}
}

/*
 * Register with krexd and build a view.  Returns the connected socket and the
 * view, or -1 with a krex error in *kerr.
 */
static int join_register(struct join_view **out, int *kerr)
{
	union proto_body req, reply;
	struct join_view *v;
	uid_t krexd_uid;
	unsigned i;
	int fd;

	fd = client_connect(NULL, kerr);
	if (fd < 0) {
		if (*kerr == KREX_EPERM)
			log_warn("%s; GPU gate open", client_error());
		return -1;
	}
	/* trusted by client_connect; its uid, as seen here, owns the gate page */
	if (unix_peer_cred(fd, NULL, &krexd_uid, NULL) < 0) {
		*kerr = KREX_ESYS;
		goto fail;
	}
	client_fill_register(&req, &join_state.gpus, PROTO_REG_GATE | join_state.reg_flags);
	*kerr = client_call(fd, PROTO_REGISTER, &req, PROTO_REGISTERED, &reply,
	                    time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS), NULL, 0);
	if (*kerr != KREX_OK)
		goto fail;
	v = calloc(1, sizeof(*v));
	if (!v) {
		*kerr = KREX_ENOMEM;
		goto fail;
	}
	v->page = join_map_page(reply.registered.gate_path, krexd_uid);
	if (!v->page) {
		free(v);
		*kerr = errno == EPROTO ? KREX_EPROTO : KREX_ESYS;
		goto fail;
	}
	v->participant = reply.registered.participant;
	v->nslots = reply.registered.nslots;
	for (i = 0; i < v->nslots; i++)
		v->slot[i] = reply.registered.slot[i];
	join_state.queue_cap = reply.registered.queue_cap;
	join_state.queue_us = reply.registered.queue_us;
	join_state.gate_timeout_ms = reply.registered.gate_timeout_ms
	                                     ? reply.registered.gate_timeout_ms
	                                     : KREX_DEFAULT_GATE_TIMEOUT_MS;
	*out = v;
	return fd;
fail:
	close(fd);
	return -1;
}

/* Is one of our gates closed for another participant's region? */
static int view_closed(const struct join_view *v)
{
	uint32_t i, w;

	for (i = 0; i < v->nslots; i++) {
		w = load32(&v->page->slot[v->slot[i]].closed_by);
		if (w && w != v->participant)
			return 1;
	}
	return 0;
}

/* Sends on the member's socket: the drain thread's acks and any thread's
 * CTX_MAKING (krex_gate_ctx_making()); join_state.fd changes under it. */
static pthread_mutex_t join_send_lock = PTHREAD_MUTEX_INITIALIZER;

/* Drain and acknowledge generation gen. */
static void drain_ack(int fd, uint32_t gen)
{
	union proto_body ack;
	uint64_t t0 = time_now_ns();
	int st = 0;

	if (join_state.drain)
		st = join_state.drain(join_state.drain_arg);
	memset(&ack, 0, sizeof(ack));
	ack.ack.generation = gen;
	ack.ack.status = (uint32_t)(st < 0 ? -st : st);
	ack.ack.drain_us = (time_now_ns() - t0) / NS_PER_US;
	pthread_mutex_lock(&join_send_lock);
	st = proto_send(fd, PROTO_DRAIN_ACK, 0, &ack, time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS));
	pthread_mutex_unlock(&join_send_lock);
	if (st < 0)
		log_debug("drain ack for generation %u not sent: %s", gen, strerror(errno));
}

/*
 * Tell krexd that this process began (on) or ended (!on) making GPU
 * contexts (a CTX_MAKING on the member's socket, no answer): a region about
 * to close a gate of ours then waits for them, at most krexd.conf(5)
 * ctx_defer, with the gates still open.  Nothing when not connected.
 */
KREX_EXPORT void krex_gate_ctx_making(int on)
{
	union proto_body m;

	if (!atomic_load(&join_state.connected))
		return;
	memset(&m, 0, sizeof(m));
	m.ctxm.making = on != 0;
	pthread_mutex_lock(&join_send_lock);
	if (join_state.fd >= 0 && proto_send(join_state.fd, PROTO_CTX_MAKING, 0, &m,
	                                     time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS)) < 0)
		log_debug("CTX_MAKING %d not sent: %s", on != 0, strerror(errno));
	pthread_mutex_unlock(&join_send_lock);
}

/*
 * True when krexd closed our connection.  krexd answers a bad ack with an
 * ERROR message: read and log it; anything unreadable counts as broken.
 */
static int socket_broken(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	union proto_body m;
	uint16_t type;
	int herr;

	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (p.revents & (POLLHUP | POLLERR))
		return 1;
	if (proto_recv(fd, &type, NULL, &m, time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS), &herr) <
	    0)
		return 1;
	if (type == PROTO_ERROR)
		log_warn("krexd: %s", m.error.message);
	proto_body_free(type, &m);
	return 0;
}

/* Wake gated threads so that they see the gate fail open. */
static void join_fail_open(void)
{
	struct join_view *v = atomic_load(&join_state.view);
	uint32_t i;

	atomic_store(&join_state.connected, 0);
	if (!v)
		return;
	for (i = 0; i < v->nslots; i++)
		(void)futex(&v->page->slot[v->slot[i]].closed_by, FUTEX_WAKE, INT_MAX, NULL);
}

static void *drain_main(void *arg)
{
	struct join_view *v, *old;
	uint32_t gen, acked = 0;
	int kerr, fd;

	(void)arg;
	in_drain_thread = 1;
	/* by this name the gate's stall snapshot (KREX_LOG=debug) shows it */
	(void)prctl(PR_SET_NAME, KREX_DRAIN_THREAD_NAME, 0, 0, 0);
	while (!atomic_load(&join_state.stop)) {
		v = atomic_load(&join_state.view);
		fd = join_state.fd;
		if (!atomic_load(&join_state.connected)) {
			usleep(JOIN_RETRY_MS * 1000);
			old = atomic_load(&join_state.view);
			fd = join_register(&v, &kerr);
			if (fd < 0)
				continue;
			pthread_mutex_lock(&join_send_lock);
			join_state.fd = fd;
			pthread_mutex_unlock(&join_send_lock);
			atomic_store(&join_state.view, v);
			/* Gated threads may still read the old page: unmapped once they left. */
			view_retire(old);
			atomic_store(&join_state.connected, 1);
			acked = 0;
			log_info("re-joined krexd as participant %u", v->participant);
		}
		gen = load32(&v->page->generation);
		if (gen != acked && view_closed(v)) {
			atomic_store(&join_state.drain_ms, load32(&v->page->drain_ms));
			drain_ack(fd, gen);
			acked = gen;
			continue;
		}
		futex_wait_ms(&v->page->generation, gen, DRAIN_SLICE_MS);
		if (socket_broken(fd)) {
			if (log_ratelimit(&join_log_last, 10 * NS_PER_S))
				log_warn("krexd went away; GPU gate open until it is back");
			pthread_mutex_lock(&join_send_lock);
			close(fd);
			join_state.fd = -1;
			pthread_mutex_unlock(&join_send_lock);
			join_fail_open();
		}
	}
	return NULL;
}

static void join_atfork_child(void)
{
	region_atfork_child();
	/* The drain thread did not survive fork(); the child re-joins by itself
	 * (the gate does it) and until then passes through. */
	pthread_mutex_init(&join_state.lock, NULL);
	pthread_mutex_init(&join_send_lock, NULL);
	if (join_state.fd >= 0)
		close(join_state.fd);
	join_state.fd = -1;
	join_state.joined = 0;
	/* Only this thread survived fork(): nobody else reads the views. */
	view_free(atomic_exchange(&join_state.view, NULL));
	atomic_store(&join_readers[0], 0);
	atomic_store(&join_readers[1], 0);
	view_retire(NULL);
	atomic_store(&join_state.connected, 0);
	atomic_store(&join_state.stop, 0);
}

KREX_EXPORT int krex_join(const struct krex_join_opts *opts)
{
	struct join_view *v = NULL;
	sigset_t all, old;
	unsigned i;
	int rc = KREX_OK, fd;

	if (opts && (opts->size < sizeof(struct krex_join_opts) ||
	             (opts->flags & ~KREX_JOIN_HOLDS_CONTEXTS)))
		return KREX_EINVAL;
	pthread_mutex_lock(&join_state.lock);
	if (join_state.joined)
		goto out;
	if (!join_state.atfork_done) {
		pthread_atfork(NULL, NULL, join_atfork_child);
		join_state.atfork_done = 1;
	}
	memset(&join_state.gpus, 0, sizeof(join_state.gpus));
	if (opts && opts->gpus) {
		if (opts->ngpus > KREX_MAX_GPUS) {
			rc = KREX_EINVAL;
			goto out;
		}
		for (i = 0; i < opts->ngpus; i++)
			if (snprintf(join_state.gpus.name[i], sizeof(join_state.gpus.name[i]), "%s",
			             opts->gpus[i]) >= (int)sizeof(join_state.gpus.name[i])) {
				rc = KREX_EINVAL;
				goto out;
			}
		join_state.gpus.n = (uint16_t)opts->ngpus;
	} else {
		client_env_gpus(&join_state.gpus);
	}
	join_state.drain = opts ? opts->drain : NULL;
	join_state.drain_arg = opts ? opts->drain_arg : NULL;
	/* warm and warm_arg came in 0.2: an older caller's struct ends before them */
	if (opts && opts->size >= offsetof(struct krex_join_opts, warm_arg) + sizeof(void *)) {
		join_state.warm = opts->warm;
		join_state.warm_arg = opts->warm_arg;
	} else {
		join_state.warm = NULL;
		join_state.warm_arg = NULL;
	}
	join_state.reg_flags =
	        opts && opts->flags & KREX_JOIN_HOLDS_CONTEXTS ? PROTO_REG_HOLDCTX : 0;
	fd = join_register(&v, &rc);
	if (fd < 0)
		goto out;
	pthread_mutex_lock(&join_send_lock);
	join_state.fd = fd;
	pthread_mutex_unlock(&join_send_lock);
	atomic_store(&join_state.view, v);
	atomic_store(&join_state.connected, 1);
	atomic_store(&join_state.stop, 0);
	/* The drain thread takes no signals: they belong to the application. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&join_state.thread, NULL, drain_main, NULL) != 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_mutex_lock(&join_send_lock);
		close(fd);
		join_state.fd = -1;
		pthread_mutex_unlock(&join_send_lock);
		view_free(atomic_exchange(&join_state.view, NULL));
		rc = KREX_ESYS;
		goto out;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	join_state.joined = 1;
out:
	pthread_mutex_unlock(&join_state.lock);
	return rc;
}

KREX_EXPORT int krex_leave(void)
{
	struct join_view *v;
	uint32_t i;
	unsigned e;

	pthread_mutex_lock(&join_state.lock);
	if (!join_state.joined)
		goto out;
	atomic_store(&join_state.stop, 1);
	/* Counted as a reader: the drain thread may retire this view meanwhile. */
	e = atomic_load(&join_epoch) & 1;
	atomic_fetch_add(&join_readers[e], 1);
	v = atomic_load(&join_state.view);
	if (v)
		(void)futex(&v->page->generation, FUTEX_WAKE, INT_MAX, NULL);
	atomic_fetch_sub(&join_readers[e], 1);
	pthread_join(join_state.thread, NULL);
	pthread_mutex_lock(&join_send_lock);
	if (join_state.fd >= 0)
		close(join_state.fd); /* krexd drops the member; the participant stays */
	join_state.fd = -1;
	pthread_mutex_unlock(&join_send_lock);
	v = atomic_exchange(&join_state.view, NULL);
	atomic_store(&join_state.connected, 0);
	/* Wake threads gated on the old page: they see the view gone and pass. */
	if (v)
		for (i = 0; i < v->nslots; i++)
			(void)futex(&v->page->slot[v->slot[i]].closed_by, FUTEX_WAKE, INT_MAX,
			            NULL);
	view_retire(v);
	join_state.joined = 0;
out:
	pthread_mutex_unlock(&join_state.lock);
	return KREX_OK;
}

KREX_EXPORT unsigned krex_queue_cap(void)
{
	return join_state.queue_cap;
}

KREX_EXPORT unsigned krex_queue_time_us(void)
{
	return join_state.queue_us;
}

KREX_EXPORT unsigned krex_drain_timeout_ms(void)
{
	unsigned ms = atomic_load(&join_state.drain_ms);

	return ms ? ms : KREX_DEFAULT_DRAIN_TIMEOUT_MS;
}

/* The word of slot i a thread waits on: closed_by, or for a new context
 * (ctx) ctx_by once closed_by lets it by; 0 when neither holds it. */
static const uint32_t *gate_word(struct join_view *v, uint32_t i, int ctx, uint32_t *w)
{
	const struct gate_slot *s = &v->page->slot[v->slot[i]];

	*w = load32(&s->closed_by);
	if (*w && *w != v->participant)
		return &s->closed_by;
	*w = ctx ? load32(&s->ctx_by) : 0;
	return *w && *w != v->participant ? &s->ctx_by : NULL;
}

/* The slow path: wait until our gates open (ctx: and new contexts may be
 * made), krexd goes away or time runs out. */
static int gate_wait_slow(struct join_view *v, int ctx)
{
	uint64_t deadline = time_deadline_ms(join_state.gate_timeout_ms);
	const uint32_t *word;
	uint32_t i, w;
	int left;

	if (in_drain_thread)
		return 0;
	atomic_fetch_add(&join_parked, 1);
	for (;;) {
		if (!atomic_load(&join_state.connected) || atomic_load(&join_state.view) != v ||
		    atomic_load(&join_pass))
			break;
		for (word = NULL, i = 0; i < v->nslots; i++)
			if ((word = gate_word(v, i, ctx, &w)))
				break;
		if (!word)
			break;
		left = time_left_ms(deadline);
		if (left == 0) {
			if (log_ratelimit(&join_log_last, 10 * NS_PER_S))
				log_warn("GPU gate closed for over %u ms; passing through",
				         join_state.gate_timeout_ms);
			break;
		}
		futex_wait_ms(word, w, left < GATE_SLICE_MS ? left : GATE_SLICE_MS);
	}
	atomic_fetch_sub(&join_parked, 1);
	return 1;
}

KREX_EXPORT unsigned krex_gate_parked(void)
{
	return atomic_load(&join_parked);
}

/*
 * Turn the drain's pass on or off.  On: threads waiting in krex_gate_wait()
 * are woken through the gate words they sleep on (a shared futex: waiters of
 * other processes on the same GPU wake too, see the gate closed and sleep
 * again) and return; later calls return at once until it is turned off.
 */
KREX_EXPORT void krex_gate_pass(int on)
{
	struct join_view *v;
	uint32_t i;
	unsigned e;

	atomic_store(&join_pass, on != 0);
	if (!on)
		return;
	e = atomic_load(&join_epoch) & 1;
	atomic_fetch_add(&join_readers[e], 1);
	v = atomic_load(&join_state.view);
	for (i = 0; v && i < v->nslots; i++)
		(void)futex(&v->page->slot[v->slot[i]].closed_by, FUTEX_WAKE, INT_MAX, NULL);
	atomic_fetch_sub(&join_readers[e], 1);
}

static int gate_wait(int ctx)
{
	struct join_view *v;
	uint32_t i, w;
	unsigned e;
	int rc = 0;

	/* Counted before the view is loaded, so that krex_leave() and a
	 * re-join unmap an old view only once no thread can be reading it. */
	e = atomic_load(&join_epoch) & 1;
	atomic_fetch_add(&join_readers[e], 1);
	v = atomic_load(&join_state.view);
	if (v) {
		for (i = 0; i < v->nslots; i++) {
			if (gate_word(v, i, ctx, &w) && !atomic_load(&join_pass)) {
				rc = gate_wait_slow(v, ctx);
				break;
			}
		}
	}
	atomic_fetch_sub(&join_readers[e], 1);
	return rc;
}

KREX_EXPORT int krex_gate_wait(void)
{
	return gate_wait(0);
}

KREX_EXPORT int krex_gate_wait_contexts(void)
{
	return gate_wait(1);
}

/*
 * After a grant (krex_region_begin): run the joiner's warm callback, which
 * makes this process's GPU contexts resident.  Measured on the H200: without
 * it the first launch of a region after a sibling's drain pays the GPU's
 * context switch, about 0.14 ms of wall time (doc/performance.md).
 * KREX_REGION_WARM=0 turns it off (for that measurement).
 */
void join_warm(void)
{
	krex_drain_fn warm;
	void *arg;
	const char *e = getenv("KREX_REGION_WARM");

	if (e && strcmp(e, "0") == 0)
		return;
	pthread_mutex_lock(&join_state.lock);
	warm = join_state.joined ? join_state.warm : NULL;
	arg = join_state.warm_arg;
	pthread_mutex_unlock(&join_state.lock);
	if (warm && warm(arg) != 0)
		log_debug("region warm-up: the GPU operation failed (ignored)");
}
