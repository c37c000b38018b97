/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpuprocs.c - the GPU process-list thread (gpuprocs.h).  One thread, a
 * FIFO of requests under a mutex; nothing the thread waits for (NVML, /proc)
 * holds the mutex, so the loop never waits for NVML.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuprocs.h"
#include "log.h"
#include "nvml.h"
#include "proc.h"
#include "timeutil.h"

struct gp_req {
	uint64_t ticket, queued_ns;
	unsigned n;
	int clocks; /* the nominal clocks too */
	char gpu[KREX_MAX_GPUS][KREX_MAX_GPU_NAME + 1];
	const struct freezer *f;
	struct gp_req *next;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work;
	int on, efd, stop;
	struct ep_item ep;
	struct gp_req *qhead, *qtail;
	unsigned queued;
	struct gp_result *dhead, *dtail;
	uint64_t next_ticket;
	uint64_t busy_ticket, busy_since; /* the request the thread is in, 0 none */
	int slow; /* found hung or full: gp_recovered() says when it has caught up */
	/* The nominal clocks of the GPUs named by requests that asked for
	 * them, read when the thread has no request left (clk_due), never
	 * before a list: a list waits for nothing but itself.  -1 unknown. */
	unsigned clk_n;
	int clk_due;
	char clk_gpu[KREX_MAX_GPUS][KREX_MAX_GPU_NAME + 1];
	int32_t clk_mhz[KREX_MAX_GPUS];
	uint64_t clk_ns;    /* the last read's time (both calls, every GPU) */
	uint64_t clk_since; /* the read going on began then, 0 none */
	uint64_t clk_reads; /* reads made */
} gp = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .efd = -1};

int gp_inline(void)
{
	const char *e = getenv("KREXD_PROCS_INLINE");

	return e && *e && strcmp(e, "0") != 0;
}

void gp_list(struct gp_result *res, const char *const *gpus, unsigned n, const struct freezer *f)
{
	uint64_t t0 = time_now_ns(), t1;
	unsigned g;
	int i, got, mps;

	res->n = 0;
	res->mps_known = n > 0;
	for (g = 0; g < n; g++) {
		got = nvml_gpu_pids(gpus[g], res->pid + res->n, res->mem + res->n,
		                    GP_MAX_PIDS - (unsigned)res->n, &mps);
		if (got < 0) {
			res->n = -1;
			break;
		}
		res->n += got;
		res->mps_known &= mps;
	}
	t1 = time_now_ns();
	for (i = 0; i < res->n; i++) {
		struct proc_stat st;
		res->key_err[i] = freezer_key(f, res->pid[i], &res->key[i]) < 0;
		/* only where it counts: with the MPS client list (region_judge.c) */
		res->mps_server[i] = res->mps_known ? (unsigned char)gp_mps_server(res->pid[i]) : 0;
		res->exiting[i] = 0;
		res->start[i] = 0;
		if (proc_stat_read(res->pid[i], &st) >= 22) {
			res->exiting[i] =
			        (st.flags & KREX_PF_EXITING) || st.state == 'Z' || st.state == 'X';
			res->start[i] = st.start;
		}
	}
	res->list_ns = t1 - t0;
	res->keys_ns = time_now_ns() - t1;
}

int gp_mps_server(pid_t pid)
{
	char link[64], exe[PATH_MAX];
	const char *base;
	struct stat sb;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	/* a server whose file was replaced since it started (a driver update)
	 * is still the server: stat() below sees the file it runs */
	if ((size_t)n > sizeof(" (deleted)") - 1 &&
	    !strcmp(exe + n - (sizeof(" (deleted)") - 1), " (deleted)"))
		exe[n - (sizeof(" (deleted)") - 1)] = '\0';
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	if (strcmp(base, "nvidia-cuda-mps-server") != 0 || stat(link, &sb) < 0)
		return 0;
	return sb.st_uid == 0 && !(sb.st_mode & (S_IWGRP | S_IWOTH));
}

/* With gp.mu held: note that the nominal clocks of q's GPUs are wanted. */
static void gp_clocks_want(const struct gp_req *q)
{
	unsigned i, j;

	for (i = 0; i < q->n; i++) {
		for (j = 0; j < gp.clk_n && strcmp(gp.clk_gpu[j], q->gpu[i]) != 0; j++)
			;
		if (j == gp.clk_n && gp.clk_n < KREX_MAX_GPUS) {
			snprintf(gp.clk_gpu[j], sizeof(gp.clk_gpu[j]), "%s", q->gpu[i]);
			gp.clk_mhz[j] = -1;
			gp.clk_n++;
		}
	}
	gp.clk_due = 1;
}

/* With gp.mu held, released meanwhile: read the nominal clocks wanted. */
static void gp_clocks_read(void)
{
	char gpu[KREX_MAX_GPUS][KREX_MAX_GPU_NAME + 1];
	int32_t mhz[KREX_MAX_GPUS];
	unsigned i, n = gp.clk_n;
	uint64_t t0;

	gp.clk_due = 0;
	memcpy(gpu, gp.clk_gpu, sizeof(gpu));
	gp.clk_since = time_now_ns(); /* gp_hung(): NVML may hang here too */
	pthread_mutex_unlock(&gp.mu);
	t0 = time_now_ns();
	for (i = 0; i < n; i++)
		mhz[i] = nvml_nominal_clock(gpu[i]);
	t0 = time_now_ns() - t0;
	pthread_mutex_lock(&gp.mu);
	for (i = 0; i < n; i++)
		gp.clk_mhz[i] = mhz[i];
	gp.clk_ns = t0;
	gp.clk_since = 0;
	gp.clk_reads++;
}

int32_t gp_nominal(const char *gpu, uint64_t *read_ns, uint64_t *reads)
{
	int32_t mhz = -1;
	unsigned j;

	pthread_mutex_lock(&gp.mu);
	for (j = 0; j < gp.clk_n; j++)
		if (strcmp(gp.clk_gpu[j], gpu) == 0)
			mhz = gp.clk_mhz[j];
	if (read_ns)
		*read_ns = gp.clk_ns;
	if (reads)
		*reads = gp.clk_reads;
	pthread_mutex_unlock(&gp.mu);
	return mhz;
}

static void *gp_main(void *arg)
{
	struct gp_result *res;
	struct gp_req *q;
	const char *names[KREX_MAX_GPUS];
	uint64_t one = 1;
	unsigned i;

	(void)arg;
	proc_thread_normal(); /* not krexd's raised priority */
	pthread_mutex_lock(&gp.mu);
	for (;;) {
		while (!gp.stop && !gp.qhead) {
			if (gp.clk_due) {
				gp_clocks_read(); /* no list waits: none is asked for */
				continue;
			}
			pthread_cond_wait(&gp.work, &gp.mu);
		}
		if (gp.stop)
			break;
		q = gp.qhead;
		gp.qhead = q->next;
		if (!gp.qhead)
			gp.qtail = NULL;
		gp.queued--;
		gp.busy_ticket = q->ticket;
		gp.busy_since = time_now_ns();
		if (q->clocks)
			gp_clocks_want(q);
		pthread_mutex_unlock(&gp.mu);

		res = calloc(1, sizeof(*res));
		if (res) {
			res->ticket = q->ticket;
			res->queued_ns = time_now_ns() - q->queued_ns;
			for (i = 0; i < q->n; i++)
				names[i] = q->gpu[i];
			gp_list(res, names, q->n, q->f);
		}

		pthread_mutex_lock(&gp.mu);
		if (res) {
			if (gp.dtail)
				gp.dtail->next = res;
			else
				gp.dhead = res;
			gp.dtail = res;
		}
		gp.busy_ticket = 0;
		free(q);
		(void)!write(gp.efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&gp.mu);
	return NULL;
}

int gp_start(struct krexd *k)
{
	struct epoll_event ev = {.events = EPOLLIN};
	pthread_attr_t a;
	pthread_t th;
	int err;

	if (gp.on)
		return 0;
	gp.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (gp.efd < 0)
		return -1;
	gp.ep.kind = EP_PROCS;
	gp.ep.ptr = k;
	ev.data.ptr = &gp.ep;
	if (epoll_ctl(k->epfd, EPOLL_CTL_ADD, gp.efd, &ev) < 0) {
		err = errno;
		close(gp.efd);
		gp.efd = -1;
		errno = err;
		return -1;
	}
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&th, &a, gp_main, NULL);
	pthread_attr_destroy(&a);
	if (err) {
		epoll_ctl(k->epfd, EPOLL_CTL_DEL, gp.efd, NULL);
		close(gp.efd);
		gp.efd = -1;
		errno = err;
		return -1;
	}
	gp.on = 1;
	return 0;
}

int64_t gp_submit(const char *const *gpus, unsigned n, const struct freezer *f, int clocks)
{
	struct gp_req *q;
	unsigned i;
	int64_t t;

	if (!gp.on)
		return 0;
	pthread_mutex_lock(&gp.mu);
	if (gp.queued >= GP_MAX_QUEUED) {
		gp.slow = 1;
		pthread_mutex_unlock(&gp.mu);
		return -1;
	}
	pthread_mutex_unlock(&gp.mu);
	q = calloc(1, sizeof(*q));
	if (!q)
		return -1;
	for (i = 0; i < n && i < KREX_MAX_GPUS; i++)
		snprintf(q->gpu[i], sizeof(q->gpu[i]), "%s", gpus[i]);
	q->n = i;
	q->clocks = clocks;
	q->f = f;
	q->queued_ns = time_now_ns();
	pthread_mutex_lock(&gp.mu);
	q->ticket = ++gp.next_ticket;
	if (gp.qtail)
		gp.qtail->next = q;
	else
		gp.qhead = q;
	gp.qtail = q;
	gp.queued++;
	t = (int64_t)q->ticket;
	pthread_cond_signal(&gp.work);
	pthread_mutex_unlock(&gp.mu);
	return t;
}

struct gp_result *gp_take(void)
{
	struct gp_result *r;
	uint64_t v;

	if (gp.efd >= 0)
		(void)!read(gp.efd, &v, sizeof(v));
	pthread_mutex_lock(&gp.mu);
	r = gp.dhead;
	gp.dhead = gp.dtail = NULL;
	pthread_mutex_unlock(&gp.mu);
	return r;
}

int gp_hung(unsigned ms)
{
	int hung;

	pthread_mutex_lock(&gp.mu);
	hung = (gp.busy_ticket && time_now_ns() - gp.busy_since >= (uint64_t)ms * NS_PER_MS) ||
	       (gp.clk_since && time_now_ns() - gp.clk_since >= (uint64_t)ms * NS_PER_MS);
	gp.slow |= hung;
	pthread_mutex_unlock(&gp.mu);
	return hung;
}

int gp_recovered(void)
{
	int r;

	pthread_mutex_lock(&gp.mu);
	r = gp.slow && !gp.busy_ticket && !gp.qhead;
	if (r)
		gp.slow = 0;
	pthread_mutex_unlock(&gp.mu);
	return r;
}

void gp_stop(void)
{
	struct gp_req *q;
	struct gp_result *r;

	if (!gp.on)
		return;
	pthread_mutex_lock(&gp.mu);
	gp.stop = 1;
	while ((q = gp.qhead)) {
		gp.qhead = q->next;
		free(q);
	}
	gp.qtail = NULL;
	gp.queued = 0;
	pthread_cond_signal(&gp.work);
	pthread_mutex_unlock(&gp.mu);
	while ((r = gp_take())) {
		while (r) {
			struct gp_result *n = r->next;
			free(r);
			r = n;
		}
	}
	gp.on = 0;
}
