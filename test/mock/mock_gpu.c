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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mock_gpu.h"

/* The machine-wide part, in /dev/shm. */
struct mock_shm {
	_Atomic uint32_t lock;    /* 0 free, else the holder's pid */
	_Atomic uint32_t seq;     /* bumped on every release (futex word) */
	_Atomic uint32_t last;    /* pid of the last holder */
	_Atomic uint32_t waiters; /* threads waiting for the lock */
	_Atomic uint64_t kernels;
	_Atomic uint32_t maxq; /* most kernels one process had queued (not finished) */
	uint32_t pad;
};

static struct mock_shm *shm;
static struct mock_shm shm_private; /* when shm_open fails: one process only */

static pthread_once_t dev_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t dev_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dev_cv = PTHREAD_COND_INITIALIZER;
static struct mock_op *q_head, *q_tail;
static unsigned q_len, q_kernels;
static uint64_t seq_submitted, seq_done;
static struct mock_stream default_stream;

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

/*
 * Take the device lock.  Polite: a process that just released it lets a
 * waiting one go first (up to 2 ms), as a real GPU's time slicing would
 * interleave them.  A dead holder's lock is taken over.
 */
static void dev_lock(void)
{
	uint32_t me = (uint32_t)getpid(), s, h;
	uint64_t polite_until = now_ns() + 2000000ull;

	atomic_fetch_add(&shm->waiters, 1);
	for (;;) {
		s = atomic_load(&shm->seq);
		if (atomic_load(&shm->last) == me && atomic_load(&shm->waiters) > 1 &&
		    now_ns() < polite_until) {
			shm_futex(&shm->seq, FUTEX_WAIT, s, 200000);
			continue;
		}
		h = 0;
		if (atomic_compare_exchange_strong(&shm->lock, &h, me))
			break;
		if (h && kill((pid_t)h, 0) < 0 && errno == ESRCH)
			atomic_compare_exchange_strong(&shm->lock, &h, 0);
		else
			shm_futex(&shm->seq, FUTEX_WAIT, s, 5000000);
	}
	atomic_fetch_sub(&shm->waiters, 1);
}

static void dev_unlock(void)
{
	atomic_store(&shm->last, (uint32_t)getpid());
	atomic_store(&shm->lock, 0);
	atomic_fetch_add(&shm->seq, 1);
	shm_futex(&shm->seq, FUTEX_WAKE, INT_MAX, 0);
}

/* Run one op; *busy_end is the simulated end of the work before it, 0 when
 * the device was idle. */
static void op_run(struct mock_op *op, uint64_t *busy_end)
{
	uint64_t t, start;
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

static void *dev_worker(void *arg)
{
	uint64_t busy_end = 0;
	struct mock_op *op;

	(void)arg;
	pthread_mutex_lock(&dev_mu);
	for (;;) {
		if (!q_head) {
			busy_end = 0; /* idle: the next event is stamped with real time */
			pthread_cond_wait(&dev_cv, &dev_mu);
			continue;
		}
		op = q_head;
		pthread_mutex_unlock(&dev_mu);
		op_run(op, &busy_end);
		pthread_mutex_lock(&dev_mu);
		if (op->type == MOP_EVENT)
			op->ev->done = 1;
		q_head = op->next;
		if (!q_head)
			q_tail = NULL;
		q_len--;
		if (op->type == MOP_KERNEL)
			q_kernels--;
		seq_done = op->seq;
		free(op);
		pthread_cond_broadcast(&dev_cv);
	}
	return NULL;
}

static void dev_start(void)
{
	pthread_t t;
	sigset_t all, old;

	shm_attach();
	/* The worker takes no signals: they belong to the application. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_create(&t, NULL, dev_worker, NULL);
	pthread_detach(t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void dev_atfork_child(void)
{
	/* The worker does not exist in the child: start afresh. */
	pthread_mutex_init(&dev_mu, NULL);
	pthread_cond_init(&dev_cv, NULL);
	q_head = q_tail = NULL;
	q_len = 0;
	q_kernels = 0;
	seq_submitted = seq_done = 0;
	default_stream.last_seq = 0;
	dev_once = (pthread_once_t)PTHREAD_ONCE_INIT;
}

__attribute__((constructor)) static void dev_init(void)
{
	pthread_atfork(NULL, NULL, dev_atfork_child);
}

uint64_t mock_submit(struct mock_stream *s, const struct mock_op *src)
{
	struct mock_op *op = malloc(sizeof(*op));
	uint64_t seq;

	pthread_once(&dev_once, dev_start);
	if (!s)
		s = &default_stream;
	*op = *src;
	op->next = NULL;
	pthread_mutex_lock(&dev_mu);
	while (q_len >= MOCK_QUEUE_MAX)
		pthread_cond_wait(&dev_cv, &dev_mu);
	seq = op->seq = ++seq_submitted;
	if (op->type == MOP_EVENT) {
		op->ev->seq = seq;
		op->ev->done = 0;
	}
	s->last_seq = seq;
	if (q_tail)
		q_tail->next = op;
	else
		q_head = op;
	q_tail = op;
	q_len++;
	if (op->type == MOP_KERNEL) {
		uint32_t m = atomic_load(&shm->maxq);

		q_kernels++;
		while (q_kernels > m && !atomic_compare_exchange_weak(&shm->maxq, &m, q_kernels))
			;
	}
	pthread_cond_broadcast(&dev_cv);
	pthread_mutex_unlock(&dev_mu);
	return seq;
}

void mock_wait_seq(uint64_t seq)
{
	pthread_mutex_lock(&dev_mu);
	while (seq_done < seq)
		pthread_cond_wait(&dev_cv, &dev_mu);
	pthread_mutex_unlock(&dev_mu);
}

int mock_done_seq(uint64_t seq)
{
	int done;

	pthread_mutex_lock(&dev_mu);
	done = seq_done >= seq;
	pthread_mutex_unlock(&dev_mu);
	return done;
}

void mock_sync_all(void)
{
	uint64_t s;

	pthread_mutex_lock(&dev_mu);
	s = seq_submitted;
	pthread_mutex_unlock(&dev_mu);
	mock_wait_seq(s);
}

void mock_sync_stream(struct mock_stream *s)
{
	mock_wait_seq((s ? s : &default_stream)->last_seq);
}

uint64_t mock_kernels_total(void)
{
	pthread_once(&dev_once, dev_start);
	return atomic_load(&shm->kernels);
}
