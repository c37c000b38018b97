/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_gpu.c - TEST DOUBLE: the simulated GPU (see mock_gpu.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mock_gpu.h"

/*
 * The device lock is a ticket lock: kernels run in the order their worker
 * threads asked for the lock, across processes, so N busy processes take
 * turns kernel by kernel, as a real GPU's time slicing roughly shares it
 * between contexts (no process waits for more than the kernels queued
 * ahead of it).  A ticket whose thread does not take its turn is skipped:
 * at once when the thread is gone, after MOCK_TURN_STOPPED_NS when it is
 * frozen or stopped (it asks again when it wakes), after MOCK_TURN_MAX_NS
 * in any case (a thread that cannot run that long on a loaded machine is
 * passed once, and asks again).  A dead holder's lock is taken over.
 */
#define MOCK_TURN_SLOTS 256
#define MOCK_TURN_STOPPED_NS 2000000ull /* 2 ms */
#define MOCK_TURN_MAX_NS 50000000ull    /* 50 ms */

/* The machine-wide part, in /dev/shm. */
struct mock_shm {
	_Atomic uint32_t lock;    /* 0 free, else the holder's pid */
	_Atomic uint32_t seq;     /* bumped on every release (futex word) */
	_Atomic uint32_t last;    /* pid of the last holder */
	_Atomic uint32_t waiters; /* threads waiting for the lock */
	_Atomic uint64_t kernels;
	_Atomic uint32_t maxq; /* most kernels one process had queued (not finished) */
	uint32_t pad;
	/* the ticket lock (dev_lock); the fields above keep their places
	 * (test/gate/fakegate.c reads kernels and maxq) */
	_Atomic uint32_t next;                   /* the next ticket to hand out */
	_Atomic uint32_t serving;                /* the ticket whose turn it is */
	_Atomic uint32_t owner[MOCK_TURN_SLOTS]; /* thread id waiting with ticket t % SLOTS */
};

static struct mock_shm *shm;
static struct mock_shm shm_private; /* when shm_open fails: one process only */

static pthread_once_t dev_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t dev_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dev_cv = PTHREAD_COND_INITIALIZER;
static unsigned q_len, q_kernels; /* ops and kernels queued in the process */
static struct mock_stream legacy_stream = {.legacy = 1};
static struct mock_stream legacy_more[MOCK_MAX_DEVICES]; /* devices 1.. (mock_legacy) */
static struct mock_stream *streams;                      /* registered streams (dev_mu) */
static __thread struct mock_stream *pt_stream;
static __thread int cap_mode_tls; /* MOCK_MODE_GLOBAL */
static uint64_t cap_ids;
static int cap_active;

/* Every stream that captures, registered or not, is on this list. */
static struct mock_stream *cap_streams[64];

static void cap_track(struct mock_stream *s)
{
	int i, freeslot = -1;

	for (i = 0; i < 64; i++) {
		if (cap_streams[i] == s)
			return;
		if (!cap_streams[i] && freeslot < 0)
			freeslot = i;
	}
	if (freeslot >= 0)
		cap_streams[freeslot] = s;
}

static void cap_untrack(struct mock_stream *s)
{
	int i;

	for (i = 0; i < 64; i++)
		if (cap_streams[i] == s)
			cap_streams[i] = NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void shm_futex(_Atomic uint32_t *w, int op, uint32_t val, long ns)
{
	struct timespec ts = {0, ns};

	syscall(SYS_futex, (uint32_t *)w, op, val, ns ? &ts : NULL, NULL, 0);
}

static void shm_attach(void)
{
	const char *name = getenv("KREX_MOCK_GPU");
	char def[64];
	int fd;

	if (!name || !*name) {
		snprintf(def, sizeof(def), "/krex-mock-gpu-%u", (unsigned)getuid());
		name = def;
	}
	fd = shm_open(name, O_RDWR | O_CREAT, 0600);
	if (fd >= 0 && ftruncate(fd, sizeof(struct mock_shm)) == 0)
		shm = mmap(NULL, sizeof(struct mock_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		           0);
	if (fd >= 0)
		close(fd);
	if (!shm || shm == MAP_FAILED)
		shm = &shm_private;
}

static int alive(uint32_t id)
{
	return !(kill((pid_t)id, 0) < 0 && errno == ESRCH);
}

/* Thread tid is frozen (cgroup freezer: D) or stopped (T, t). */
static int stopped(uint32_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", (unsigned)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'D' || p[2] == 'T' || p[2] == 't');
}

/* Move the turn from ticket sv to the next one, unless it moved already. */
static void turn_pass(uint32_t sv)
{
	atomic_compare_exchange_strong(&shm->serving, &sv, sv + 1);
	atomic_fetch_add(&shm->seq, 1);
	shm_futex(&shm->seq, FUTEX_WAKE, INT_MAX, 0);
}

static __thread uint32_t my_ticket;

static uint32_t take_ticket(uint32_t tid)
{
	uint32_t t = atomic_fetch_add(&shm->next, 1);

	atomic_store(&shm->owner[t % MOCK_TURN_SLOTS], tid);
	return t;
}

static void dev_lock(void)
{
	uint32_t me = (uint32_t)getpid(), tid = (uint32_t)syscall(SYS_gettid);
	uint32_t t, s, sv, h, o, seen = 0;
	uint64_t seen_at = 0, since;
	int32_t d;

	atomic_fetch_add(&shm->waiters, 1);
	t = take_ticket(tid);
	for (;;) {
		s = atomic_load(&shm->seq);
		sv = atomic_load(&shm->serving);
		h = atomic_load(&shm->lock);
		d = (int32_t)(sv - t);
		if (d > 0) { /* skipped while away: ask again */
			t = take_ticket(tid);
			continue;
		}
		if (h) {
			if (!alive(h)) { /* the holder died mid-kernel */
				if (atomic_compare_exchange_strong(&shm->lock, &h, 0))
					turn_pass(sv);
				continue;
			}
			shm_futex(&shm->seq, FUTEX_WAIT, s, 5000000);
			continue;
		}
		if (d == 0) {
			if (atomic_compare_exchange_strong(&shm->lock, &h, me))
				break;
			continue;
		}
		/* Free, and another ticket's turn: skip it if nobody takes it.
		 * How long it has been its turn is counted from when this thread
		 * first saw it (the lock may have been idle long before). */
		if (!seen_at || seen != sv) {
			seen = sv;
			seen_at = now_ns();
		}
		since = now_ns() - seen_at;
		o = atomic_load(&shm->owner[sv % MOCK_TURN_SLOTS]);
		if (since > MOCK_TURN_MAX_NS || (o && !alive(o)) ||
		    (since > MOCK_TURN_STOPPED_NS && o && stopped(o))) {
			if (!atomic_load(&shm->lock))
				turn_pass(sv);
			continue;
		}
		shm_futex(&shm->seq, FUTEX_WAIT, s, 1000000);
	}
	my_ticket = t;
	atomic_store(&shm->owner[t % MOCK_TURN_SLOTS], 0);
	atomic_fetch_sub(&shm->waiters, 1);
}

static void dev_unlock(void)
{
	atomic_store(&shm->last, (uint32_t)getpid());
	atomic_store(&shm->lock, 0);
	turn_pass(my_ticket); /* no-op when its turn was skipped while it held the lock */
}

/* Poll a host word the host writes without any driver call. */
static int word_met(const struct mock_op *op)
{
	uint64_t v = op->elem == 8 ? atomic_load((_Atomic uint64_t *)op->dst)
	                           : atomic_load((_Atomic uint32_t *)op->dst);

	switch (op->cond) {
	case MOCK_WAIT_EQ:
		return v == op->value;
	case MOCK_WAIT_AND:
		return (v & op->value) != 0;
	case MOCK_WAIT_NOR:
		return ~(v | op->value) != 0;
	default:
		return op->elem == 8 ? v >= op->value : (uint32_t)v >= (uint32_t)op->value;
	}
}

/* Run one op; *busy_end is the simulated end of the work before it on its
 * stream, 0 when the stream was idle. */
static void op_run(struct mock_op *op, uint64_t *busy_end)
{
	uint64_t t, start, deadline;
	size_t i;

	switch (op->type) {
	case MOP_KERNEL:
		dev_lock();
		t = now_ns();
		start = *busy_end > t ? *busy_end : t;
		sleep_until(start + op->us * 1000ull);
		atomic_fetch_add(&shm->kernels, 1);
		dev_unlock();
		if (op->dst)
			*(uint32_t *)op->dst = (uint32_t)op->us;
		*busy_end = start + op->us * 1000ull;
		break;
	case MOP_SPIN:
		/* A kernel spinning on a host flag (XLA's delay kernel): holds
		 * no device lock, ends when the host writes the flag or at its
		 * own timeout, and says which in its status word. */
		deadline = now_ns() + op->us * 1000ull;
		while (!atomic_load((_Atomic uint32_t *)op->src) && now_ns() < deadline)
			sleep_until(now_ns() + 20000);
		atomic_fetch_add(&shm->kernels, 1);
		if (op->dst)
			atomic_store((_Atomic uint32_t *)op->dst,
			             atomic_load((_Atomic uint32_t *)op->src) ? 1 : 2);
		*busy_end = now_ns();
		break;
	case MOP_WAITVAL:
		while (!word_met(op))
			sleep_until(now_ns() + 20000);
		*busy_end = 0;
		break;
	case MOP_WRITEVAL:
		if (op->elem == 8)
			atomic_store((_Atomic uint64_t *)op->dst, op->value);
		else
			atomic_store((_Atomic uint32_t *)op->dst, (uint32_t)op->value);
		break;
	case MOP_COPY:
		if (op->n) /* a 0-byte copy may carry NULL pointers: memmove's are nonnull */
			memmove(op->dst, op->src, op->n);
		break;
	case MOP_SET:
		for (i = 0; i < op->n; i++)
			memcpy((char *)op->dst + i * op->elem, &op->value, op->elem);
		break;
	case MOP_EVENT:
		op->ev->t_ns = *busy_end ? *busy_end : now_ns();
		break;
	case MOP_HOSTFN:
		op->fn(op->arg);
		break;
	case MOP_NOP:
		break;
	}
}

/* All of op's dependencies ran (dev_mu held). */
static int deps_met(const struct mock_op *op)
{
	unsigned i;

	if (op->dep_s && op->dep_s->done < op->dep_seq)
		return 0;
	for (i = 0; i < op->ndeps; i++)
		if (op->deps[i]->done < op->dep_seqs[i])
			return 0;
	return 1;
}

static void op_free(struct mock_op *op)
{
	free(op->deps);
	free(op->dep_seqs);
	free(op);
}

static void *stream_worker(void *arg)
{
	struct mock_stream *s = arg;
	struct mock_op *op;

	/* A kernel is a sleep to its simulated end: with the default 50 us
	 * timer slack every kernel would end up to 50 us late, and the next
	 * kernel on the stream start that late after the event between them
	 * (stamped with the simulated end). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_mutex_lock(&dev_mu);
	for (;;) {
		if (!s->head) {
			if (s->dying)
				break;
			s->busy_end = 0; /* idle: the next event is stamped with real time */
			pthread_cond_wait(&dev_cv, &dev_mu);
			continue;
		}
		op = s->head;
		if (!deps_met(op)) {
			pthread_cond_wait(&dev_cv, &dev_mu);
			continue;
		}
		pthread_mutex_unlock(&dev_mu);
		op_run(op, &s->busy_end);
		pthread_mutex_lock(&dev_mu);
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		q_len--;
		if (op->type == MOP_KERNEL || op->type == MOP_SPIN)
			q_kernels--;
		s->done = op->seq;
		op_free(op);
		pthread_cond_broadcast(&dev_cv);
	}
	s->worker_done = 1;
	pthread_cond_broadcast(&dev_cv);
	pthread_mutex_unlock(&dev_mu);
	return NULL;
}

/* Register s and start its worker (dev_mu held). */
static void stream_register(struct mock_stream *s)
{
	sigset_t all, old;

	if (s->registered)
		return;
	s->registered = 1;
	s->next = streams;
	streams = s;
	/* The worker takes no signals: they belong to the application. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_create(&s->worker, NULL, stream_worker, s);
	pthread_detach(s->worker);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void dev_start(void)
{
	shm_attach();
}

static void dev_atfork_child(void)
{
	/* No worker exists in the child: start afresh (the parent's streams
	 * and their queues are forgotten). */
	pthread_mutex_init(&dev_mu, NULL);
	pthread_cond_init(&dev_cv, NULL);
	q_len = 0;
	q_kernels = 0;
	streams = NULL;
	memset(&legacy_stream, 0, sizeof(legacy_stream));
	memset(legacy_more, 0, sizeof(legacy_more));
	legacy_stream.legacy = 1;
	pt_stream = NULL;
	cap_active = 0;
	dev_once = (pthread_once_t)PTHREAD_ONCE_INIT;
}

__attribute__((constructor)) static void dev_init(void)
{
	pthread_atfork(NULL, NULL, dev_atfork_child);
}

struct mock_stream *mock_per_thread(void)
{
	if (!pt_stream)
		pt_stream = calloc(1, sizeof(*pt_stream)); /* lives as long as the process */
	return pt_stream;
}

static struct mock_stream *real_stream(struct mock_stream *s)
{
	return s ? s : &legacy_stream;
}

struct mock_stream *mock_legacy(int dev)
{
	struct mock_stream *l;

	if (dev <= 0 || dev >= MOCK_MAX_DEVICES)
		return NULL;
	l = &legacy_more[dev];
	l->dev = dev;
	l->legacy = 1;
	return l;
}

/* The legacy stream of s's device (dev_mu held). */
static struct mock_stream *legacy_of(const struct mock_stream *s)
{
	return s->dev ? mock_legacy(s->dev) : &legacy_stream;
}

/* The legacy stream's implicit synchronization (dev_mu held). */
static void add_implicit_deps(struct mock_stream *s, struct mock_op *op)
{
	struct mock_stream *o;
	unsigned n = 0;

	struct mock_stream *l;

#define IMPLICIT(o)                                                                                \
	(!(o)->legacy && !((o)->flags & MOCK_STREAM_NONBLOCKING) && (o)->dev == s->dev &&          \
	 (o)->submitted > (o)->done)
	if (s->legacy) {
		for (o = streams; o; o = o->next)
			if (IMPLICIT(o))
				n++;
		if (!n)
			return;
		op->deps = calloc(n, sizeof(*op->deps));
		op->dep_seqs = calloc(n, sizeof(*op->dep_seqs));
		for (o = streams; o && op->ndeps < n; o = o->next)
			if (IMPLICIT(o)) {
				op->deps[op->ndeps] = o;
				op->dep_seqs[op->ndeps++] = o->submitted;
			}
	} else if (!(s->flags & MOCK_STREAM_NONBLOCKING) && (l = legacy_of(s)) &&
	           l->submitted > l->done) {
		op->deps = calloc(1, sizeof(*op->deps));
		op->dep_seqs = calloc(1, sizeof(*op->dep_seqs));
		op->deps[0] = l;
		op->dep_seqs[0] = l->submitted;
		op->ndeps = 1;
	}
#undef IMPLICIT
}

uint64_t mock_submit(struct mock_stream *s, const struct mock_op *src)
{
	struct mock_op *op = malloc(sizeof(*op));
	uint64_t seq;

	pthread_once(&dev_once, dev_start);
	s = real_stream(s);
	*op = *src;
	op->next = NULL;
	op->deps = NULL;
	op->dep_seqs = NULL;
	op->ndeps = 0;
	pthread_mutex_lock(&dev_mu);
	while (q_len >= MOCK_QUEUE_MAX)
		pthread_cond_wait(&dev_cv, &dev_mu);
	stream_register(s);
	add_implicit_deps(s, op);
	seq = op->seq = ++s->submitted;
	if (op->type == MOP_EVENT) {
		op->ev->s = s;
		op->ev->seq = seq;
		op->ev->captured = 0;
	}
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	q_len++;
	if (op->type == MOP_KERNEL || op->type == MOP_SPIN) {
		uint32_t m = atomic_load(&shm->maxq);

		q_kernels++;
		while (q_kernels > m && !atomic_compare_exchange_weak(&shm->maxq, &m, q_kernels))
			;
	}
	pthread_cond_broadcast(&dev_cv);
	pthread_mutex_unlock(&dev_mu);
	return seq;
}

void mock_wait(struct mock_stream *s, uint64_t seq)
{
	s = real_stream(s);
	pthread_mutex_lock(&dev_mu);
	while (s->done < seq)
		pthread_cond_wait(&dev_cv, &dev_mu);
	pthread_mutex_unlock(&dev_mu);
}

int mock_done(struct mock_stream *s, uint64_t seq)
{
	int done;

	s = real_stream(s);
	pthread_mutex_lock(&dev_mu);
	done = s->done >= seq;
	pthread_mutex_unlock(&dev_mu);
	return done;
}

void mock_sync_all(void)
{
	mock_sync_ctx(NULL);
}

void mock_sync_ctx(const void *ctx)
{
	struct mock_stream *o;
	int busy = 1;

	pthread_mutex_lock(&dev_mu);
	while (busy) {
		busy = 0;
		for (o = streams; o; o = o->next)
			if ((!ctx || !o->ctx || o->ctx == ctx) && o->done < o->submitted) {
				busy = 1;
				pthread_cond_wait(&dev_cv, &dev_mu);
				break; /* the list may have changed */
			}
	}
	pthread_mutex_unlock(&dev_mu);
}

void mock_sync_stream(struct mock_stream *s)
{
	s = real_stream(s);
	mock_wait(s, s->submitted);
}

void mock_stream_release(struct mock_stream *s)
{
	struct mock_stream **pp;

	if (!s || s->legacy)
		return;
	pthread_mutex_lock(&dev_mu);
	if (s->registered) {
		s->dying = 1;
		pthread_cond_broadcast(&dev_cv);
		while (!s->worker_done)
			pthread_cond_wait(&dev_cv, &dev_mu);
		for (pp = &streams; *pp; pp = &(*pp)->next)
			if (*pp == s) {
				*pp = s->next;
				break;
			}
	}
	if (s->cap_status != MOCK_CAP_NONE) {
		cap_active--;
		cap_untrack(s);
	}
	mock_graph_free(s->cap_head);
	pthread_mutex_unlock(&dev_mu);
}

uint64_t mock_kernels_total(void)
{
	pthread_once(&dev_once, dev_start);
	return atomic_load(&shm->kernels);
}

/* ---- stream capture --------------------------------------------------------- */

void mock_capture_exchange_mode(int *mode)
{
	int old = cap_mode_tls;

	cap_mode_tls = *mode;
	*mode = old;
}

int mock_capture_begin(struct mock_stream *s, int mode)
{
	int rc = 0;

	if (!s || mode < MOCK_MODE_GLOBAL || mode > MOCK_MODE_RELAXED)
		return -1;
	pthread_mutex_lock(&dev_mu);
	if (s->cap_status != MOCK_CAP_NONE) {
		rc = -1;
	} else {
		s->cap_status = MOCK_CAP_ACTIVE;
		s->cap_mode = mode;
		s->cap_thread = pthread_self();
		s->cap_id = ++cap_ids;
		s->cap_head = s->cap_tail = NULL;
		cap_active++;
		cap_track(s);
	}
	pthread_mutex_unlock(&dev_mu);
	return rc;
}

int mock_capture_end(struct mock_stream *s, struct mock_op **graph)
{
	int st;

	*graph = NULL;
	if (!s)
		return MOCK_CAP_NONE;
	pthread_mutex_lock(&dev_mu);
	st = s->cap_status;
	if (st != MOCK_CAP_NONE) {
		cap_active--;
		cap_untrack(s);
		s->cap_status = MOCK_CAP_NONE;
		if (st == MOCK_CAP_ACTIVE)
			*graph = s->cap_head;
		else
			mock_graph_free(s->cap_head);
		s->cap_head = s->cap_tail = NULL;
	}
	pthread_mutex_unlock(&dev_mu);
	return st;
}

int mock_capture_status(struct mock_stream *s, uint64_t *id)
{
	int st;

	pthread_mutex_lock(&dev_mu);
	s = real_stream(s);
	st = s->cap_status;
	if (id)
		*id = st ? s->cap_id : 0;
	if (s == &legacy_stream && cap_active) {
		/* The legacy stream is never captured; asking about it while a
		 * blocking stream captures is an implicit dependency. */
		int i;

		for (i = 0; i < 64; i++)
			if (cap_streams[i] && cap_streams[i]->cap_status == MOCK_CAP_ACTIVE &&
			    !(cap_streams[i]->flags & MOCK_STREAM_NONBLOCKING))
				st = -1;
	}
	pthread_mutex_unlock(&dev_mu);
	return st;
}

int mock_captures_active(void)
{
	int n;

	pthread_mutex_lock(&dev_mu);
	n = cap_active;
	pthread_mutex_unlock(&dev_mu);
	return n;
}

int mock_unsafe(struct mock_stream *target, int device_wide)
{
	pthread_t me = pthread_self();
	struct mock_stream *c;
	int i, rc = 0, bad;

	pthread_mutex_lock(&dev_mu);
	if (!cap_active) {
		pthread_mutex_unlock(&dev_mu);
		return 0;
	}
	for (i = 0; i < 64; i++) {
		c = cap_streams[i];
		if (!c || c->cap_status == MOCK_CAP_NONE)
			continue;
		/* the calling thread's mode decides (cuThreadExchangeStreamCaptureMode):
		 * global, prohibited by a capture of its own not begun relaxed or by
		 * another thread's begun global; thread-local, by its own only;
		 * relaxed, by none (only what conflicts with a capture itself) */
		bad = device_wide || c == target ||
		      (cap_mode_tls != MOCK_MODE_RELAXED && pthread_equal(c->cap_thread, me) &&
		       c->cap_mode != MOCK_MODE_RELAXED) ||
		      (cap_mode_tls == MOCK_MODE_GLOBAL && !pthread_equal(c->cap_thread, me) &&
		       c->cap_mode == MOCK_MODE_GLOBAL);
		if (bad) {
			if (c->cap_status == MOCK_CAP_ACTIVE && getenv("KREX_MOCK_DEBUG"))
				fprintf(stderr,
				        "mock: capture %llu invalidated by an unsafe call\n",
				        (unsigned long long)c->cap_id);
			c->cap_status = MOCK_CAP_INVALIDATED;
			rc = -1;
		}
	}
	pthread_mutex_unlock(&dev_mu);
	return rc;
}

int mock_capture_op(struct mock_stream *s, const struct mock_op *src)
{
	struct mock_op *op;
	struct mock_stream *c;
	int i, rc = 0;

	pthread_mutex_lock(&dev_mu);
	if (!cap_active) {
		pthread_mutex_unlock(&dev_mu);
		return 0;
	}
	if (!s) {
		/* legacy stream: an implicit dependency on every capturing
		 * blocking stream */
		for (i = 0; i < 64; i++) {
			c = cap_streams[i];
			if (c && c->cap_status == MOCK_CAP_ACTIVE &&
			    !(c->flags & MOCK_STREAM_NONBLOCKING)) {
				c->cap_status = MOCK_CAP_INVALIDATED;
				rc = -1;
			}
		}
	} else if (s->cap_status == MOCK_CAP_INVALIDATED) {
		rc = -1;
	} else if (s->cap_status == MOCK_CAP_ACTIVE) {
		op = malloc(sizeof(*op));
		*op = *src;
		op->next = NULL;
		op->deps = NULL;
		op->dep_seqs = NULL;
		op->ndeps = 0;
		op->dep_s = NULL;
		if (op->type == MOP_EVENT) {
			op->ev->captured = 1;
			op->ev->s = s;
		}
		if (s->cap_tail)
			s->cap_tail->next = op;
		else
			s->cap_head = op;
		s->cap_tail = op;
		rc = 1;
	}
	pthread_mutex_unlock(&dev_mu);
	return rc;
}

void mock_graph_launch(const struct mock_op *g, struct mock_stream *s)
{
	for (; g; g = g->next)
		if (g->type != MOP_EVENT)
			mock_submit(s, g);
}

void mock_graph_free(struct mock_op *g)
{
	struct mock_op *n;

	for (; g; g = n) {
		n = g->next;
		op_free(g);
	}
}

int mock_deinitialized(const char *env)
{
	static _Atomic int done;
	const char *p;

	if (!atomic_load(&done) && (p = getenv(env)) && access(p, F_OK) == 0)
		atomic_store(&done, 1);
	return atomic_load(&done);
}

void mock_used_after_end(const char *api, const char *what, const void *p)
{
	fprintf(stderr, "mock %s: %s %p used after its context or stream was ended\n", api, what,
	        p);
	abort();
}
