/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_queue_test.c - the gate's bounded queue (gate/gate_queue.c)
 * against a TEST DOUBLE: a virtual-time GPU with one stream.  Nothing
 * sleeps: time is a counter, so every figure here is exact and the same on
 * every machine.
 *
 * The double: the host spends launch_ns per launch; a kernel starts when
 * the stream's previous work ends (or at its launch, if the GPU idles) and
 * runs its duration; an event completes when the work before it has; sync
 * moves host time to the event; elapsed is the difference of event times.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate_queue.h"
#include "tap.h"

struct vev {
	uint64_t t; /* completion time */
	int recorded, timing;
};

static struct vgpu {
	uint64_t now;     /* host time */
	uint64_t free_at; /* when the stream's queued work ends */
	unsigned events, syncs, creates, waited;
	unsigned queries, elapsed; /* calls of each */
	unsigned before_calls;     /* event calls gq_before() made, in all */
	struct vev *evs[64];       /* every event created (a spin's release moves them) */
	int fail_query, capturing;
	uint64_t kend[4096]; /* end times of the kernels launched (ring) */
	uint64_t kdur[4096];
	unsigned nk;
	uint64_t suspect_max; /* the longest suspect_ns a wait was given */
} g;

static int v_create(void **ev, int timing)
{
	struct vev *e = calloc(1, sizeof(*e));

	if (!e)
		return -1;
	e->timing = timing;
	if (g.creates < 64)
		g.evs[g.creates] = e;
	g.creates++;
	*ev = e;
	return 0;
}

static int v_record(void *ev, void *s)
{
	struct vev *e = ev;

	(void)s;
	e->t = g.free_at > g.now ? g.free_at : g.now;
	e->recorded = 1;
	g.events++;
	return 0;
}

static int v_sync(void *ev)
{
	struct vev *e = ev;

	g.syncs++;
	if (e->t > g.now)
		g.now = e->t;
	return 0;
}

static int v_query(void *ev)
{
	struct vev *e = ev;

	g.queries++;
	if (g.fail_query)
		return -1;
	return e->t <= g.now;
}

static int v_elapsed(float *ms, void *a, void *b)
{
	struct vev *x = a, *y = b;

	g.elapsed++;
	if (!x->timing || !y->timing || x->t > g.now || y->t > g.now)
		return -1;
	*ms = (float)((double)(y->t - x->t) / 1e6);
	return 0;
}

/* Wait at most limit ns of host time (gate_gq_wait on a GPU). */
static int v_wait(void *ev, uint64_t limit, uint64_t suspect)
{
	struct vev *e = ev;

	if (suspect > g.suspect_max)
		g.suspect_max = suspect;
	g.waited++;
	if (e->t <= g.now + limit) {
		if (e->t > g.now)
			g.now = e->t;
		return 1;
	}
	g.now += limit;
	return 0;
}

static int v_capturing(void *s)
{
	(void)s;
	return g.capturing;
}

static const struct gq_ops ops = {v_create,  v_record,    v_sync, v_query,
                                  v_elapsed, v_capturing, NULL};
/* The same with the bounded wait that may give up, as on a GPU. */
static const struct gq_ops wops = {v_create,  v_record,    v_sync, v_query,
                                   v_elapsed, v_capturing, v_wait};

/* Kernels of at least min_dur launched and not finished at host time now. */
static unsigned queued_kernels(uint64_t min_dur)
{
	unsigned i, n = 0, lim = g.nk < 4096 ? g.nk : 4096;

	for (i = 0; i < lim; i++)
		n += g.kend[i] > g.now && g.kdur[i] >= min_dur;
	return n;
}

struct run {
	unsigned max_kernels; /* most kernels (this long or longer) queued after a launch */
	uint64_t max_work;    /* most GPU time queued right after a launch */
};

static const struct gq_ops *cur = &ops;

static unsigned event_calls(void)
{
	return g.events + g.syncs + g.creates + g.waited + g.queries + g.elapsed;
}

/* One launch of a kernel of dur ns through the gate's queue logic. */
static void launch(struct gq *q, unsigned cap, uint64_t budget, uint64_t dur, uint64_t launch_ns,
                   struct run *r)
{
	unsigned calls0 = event_calls();
	int rec = gq_before(q, cur, cap, budget);
	uint64_t start;
	unsigned k;

	g.before_calls += event_calls() - calls0;
	g.now += launch_ns;
	start = g.free_at > g.now ? g.free_at : g.now;
	g.free_at = start + dur;
	g.kdur[g.nk % 4096] = dur;
	g.kend[g.nk++ % 4096] = g.free_at;
	if (rec)
		gq_after(q, cur, budget);
	k = queued_kernels(dur);
	if (r && k > r->max_kernels)
		r->max_kernels = k;
	if (r && g.free_at - g.now > r->max_work)
		r->max_work = g.free_at - g.now;
}

/* One launch by a region's owner: no queue (gq_count), the kernel queued. */
static void held_launch(struct gq *q, uint64_t dur, uint64_t launch_ns)
{
	uint64_t start;

	gq_count(q);
	g.now += launch_ns;
	start = g.free_at > g.now ? g.free_at : g.now;
	g.free_at = start + dur;
	g.kdur[g.nk % 4096] = dur;
	g.kend[g.nk++ % 4096] = g.free_at;
}

static void reset(struct gq *tab, int n)
{
	memset(&g, 0, sizeof(g));
	memset(tab, 0, sizeof(*tab) * (size_t)n);
	cur = &ops;
}

/* A fresh stream in a table of 2, its waits through o. */
static struct gq *fresh(struct gq *tab, const struct gq_ops *o)
{
	reset(tab, 2);
	cur = o;
	return gq_find(tab, 2, (void *)1);
}

/*
 * A kernel that spins until the host releases it or its own timeout (XLA's
 * delay kernel): launched, it is modelled as running until the timeout;
 * spin_release() at host time now ends it there and moves the work and
 * the events behind it earlier.  Returns the spin's start.
 */
static uint64_t spin_start, spin_end;

static void spin_launch(struct gq *q, unsigned cap, uint64_t budget, uint64_t timeout)
{
	launch(q, cap, budget, timeout, 5 * 1000ull, NULL);
	spin_end = g.free_at;
	spin_start = spin_end - timeout;
}

/* 1 when the host released the spin before its timeout. */
static int spin_release(void)
{
	uint64_t shift;
	unsigned i, lim = g.creates < 64 ? g.creates : 64;

	if (g.now >= spin_end)
		return 0;
	shift = spin_end - (g.now > spin_start ? g.now : spin_start);
	for (i = 0; i < lim; i++)
		if (g.evs[i]->recorded && g.evs[i]->t >= spin_end)
			g.evs[i]->t -= shift;
	for (i = 0; i < 4096; i++)
		if (g.kend[i] >= spin_end)
			g.kend[i] -= shift;
	g.free_at -= shift;
	return 1;
}

#define US 1000ull
#define MS 1000000ull

/*
 * XLA's autotuner, rounds times: a host pause of pause ns (a compile), the
 * delay kernel (100 ms timeout), 40 timed launches of 10 us kernels, the
 * host's release, 3 launches.  Adds the releases in time to *released;
 * returns the longest the host was held in the 40 launches.  The waits'
 * suspect_max counts from the second round on (the first may be untimed).
 */
static uint64_t xla_rounds(struct gq *q, int rounds, uint64_t pause, int *released)
{
	uint64_t t0, stall, worst = 0;
	int r, i;

	for (r = 0; r < rounds; r++) {
		if (r == 1)
			g.suspect_max = 0;
		g.now += pause;
		spin_launch(q, 2, 1 * MS, 100 * MS);
		t0 = g.now;
		for (i = 0; i < 40; i++)
			launch(q, 2, 1 * MS, 10 * US, 5 * US, NULL);
		stall = g.now - t0;
		worst = stall > worst ? stall : worst;
		*released += spin_release();
		for (i = 0; i < 3; i++)
			launch(q, 2, 1 * MS, 10 * US, 5 * US, NULL);
	}
	return worst;
}

int main(void)
{
	struct gq tab[2], *q;
	struct run r;
	unsigned i, ev0;
	uint64_t t0, gave0;

	plan(36);

	/* 1. Off: no event, and the queue grows without bound. */
	reset(tab, 2);
	q = gq_find(tab, 2, (void *)1);
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 200; i++)
		launch(q, 0, 0, 5 * MS, 5 * US, &r);
	ok(g.events == 0 && g.syncs == 0, "queue_cap 0: no event recorded, no wait");
	ok(r.max_kernels > 190, "queue_cap 0: an async launcher queues everything (%u kernels)",
	   r.max_kernels);

	/* 2. Launch count only (queue_cap 2, queue_time 0), 5 ms kernels. */
	reset(tab, 2);
	q = gq_find(tab, 2, (void *)1);
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 200; i++)
		launch(q, 2, 0, 5 * MS, 5 * US, &r);
	ok(r.max_kernels <= 5 && r.max_kernels >= 3,
	   "queue_cap 2 by count: at most 2 x cap + 1 kernels queued (%u)", r.max_kernels);
	ok(g.events == 100, "queue_cap 2 by count: an event every 2 launches (%u)", g.events);
	ok(q->est_ns == 0, "by count: no timing");

	/* 3. Time rule, 5 ms kernels, queue_time 1 ms: one kernel at a time. */
	reset(tab, 2);
	q = gq_find(tab, 2, (void *)1);
	for (i = 0; i < 20; i++)
		launch(q, 2, 1 * MS, 5 * MS, 5 * US, NULL);
	ok(q->est_ns >= 5 * MS && q->est_ns < 5 * MS + 100 * US,
	   "time rule: estimate of a 5 ms kernel (%llu ns)", (unsigned long long)q->est_ns);
	ok(q->stride == 1, "time rule: long kernels, an event every launch (stride %u)", q->stride);
	memset(&r, 0, sizeof(r));
	t0 = g.free_at;
	for (i = 0; i < 200; i++)
		launch(q, 2, 1 * MS, 5 * MS, 5 * US, &r);
	ok(r.max_kernels == 1, "time rule: long kernels are queued one at a time (%u)",
	   r.max_kernels);
	ok((double)(200 * 5 * MS) / (double)(g.free_at - t0) > 0.99,
	   "time rule: the GPU still runs them back to back (>= 99%% busy)");

	/* 4. Time rule, 10 us kernels launched every 2 us: many queued, few events. */
	reset(tab, 2);
	q = gq_find(tab, 2, (void *)1);
	for (i = 0; i < 1000; i++)
		launch(q, 2, 1 * MS, 10 * US, 2 * US, NULL);
	ev0 = g.events;
	t0 = g.now;
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 20000; i++)
		launch(q, 2, 1 * MS, 10 * US, 2 * US, &r);
	ok(q->stride == GQ_MAX_STRIDE || q->stride == 1 * MS / (2 * q->est_ns),
	   "time rule: short kernels, stride %u (estimate %llu ns)", q->stride,
	   (unsigned long long)q->est_ns);
	ok(g.events - ev0 <= 20000 / GQ_MAX_STRIDE + 1,
	   "time rule: short kernels, a mark every %u launches (%u marks)", GQ_MAX_STRIDE,
	   g.events - ev0);
	ok(r.max_work <= 1 * MS + GQ_MAX_STRIDE * 10 * US,
	   "time rule: queued work stays within queue_time + one stride (%llu us)",
	   (unsigned long long)(r.max_work / US));
	ok(r.max_kernels >= 2 * GQ_MAX_STRIDE,
	   "time rule: short kernels still queue deep enough (%u)", r.max_kernels);
	ok((double)(20000 * 10 * US) / (double)(g.free_at - t0) > 0.98,
	   "time rule: the GPU stays busy with short kernels (>= 98%%)");

	/* 5. A switch from 10 us to 5 ms kernels: one stride of them at most,
	 * then one at a time again. */
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 40; i++)
		launch(q, 2, 1 * MS, 5 * MS, 2 * US, &r);
	ok(r.max_kernels <= 3 * GQ_MAX_STRIDE,
	   "after a switch to long kernels at most 3 strides of them queued (%u)", r.max_kernels);
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 40; i++)
		launch(q, 2, 1 * MS, 5 * MS, 2 * US, &r);
	ok(r.max_kernels == 1, "and then one at a time (%u)", r.max_kernels);

	/* 6. A host pause inflates one sample; the estimate recovers. */
	for (i = 0; i < 1000; i++)
		launch(q, 2, 1 * MS, 10 * US, 2 * US, NULL);
	g.now += 500 * MS;
	for (i = 0; i < 2000; i++)
		launch(q, 2, 1 * MS, 10 * US, 2 * US, NULL);
	ok(q->est_ns < 20 * US && q->stride == GQ_MAX_STRIDE,
	   "after a 500 ms pause the estimate is back to the kernel (%llu ns, stride %u)",
	   (unsigned long long)q->est_ns, q->stride);

	/* 7. A capturing stream gets no event and no wait. */
	reset(tab, 2);
	q = gq_find(tab, 2, (void *)1);
	g.capturing = 1;
	for (i = 0; i < 100; i++)
		launch(q, 2, 1 * MS, 5 * MS, 5 * US, NULL);
	ok(g.events == 0 && g.syncs == 0, "capturing stream: no event, no wait");

	/* 8. A failing event call breaks the queue for that stream: pass through. */
	reset(tab, 2);
	q = gq_find(tab, 2, (void *)1);
	for (i = 0; i < 10; i++)
		launch(q, 2, 1 * MS, 5 * MS, 5 * US, NULL);
	g.fail_query = 1;
	ev0 = g.events;
	for (i = 0; i < 10; i++)
		launch(q, 2, 1 * MS, 5 * MS, 5 * US, NULL);
	ok(q->broken && g.events == ev0, "a failing query: that stream passes through unbounded");

	/* 10. A GPU shared with siblings, ordinary kernels: each kernel of the
	 * stream ends 60 ms after it could start (4 siblings of 15 ms kernels
	 * taking turns), so the wait for the previous mark is ~60 ms, more
	 * than GQ_WAIT_MAX_NS.  Once the stream is timed (the first 100
	 * launches) the queue stays bounded: no give-up, one kernel at a time.
	 * (Before: every wait gave up at 50 ms and let 64 launches through.) */
	q = fresh(tab, &wops);
	for (i = 0; i < 100; i++)
		launch(q, 2, 1 * MS, 60 * MS, 5 * US, NULL);
	gave0 = q->gave_up;
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 200; i++)
		launch(q, 2, 1 * MS, 60 * MS, 5 * US, &r);
	ok(q->gave_up == gave0, "shared GPU, 60 ms a kernel: no give-up in 200 launches (%llu)",
	   (unsigned long long)(q->gave_up - gave0));
	ok(r.max_kernels <= 2, "shared GPU, 60 ms a kernel: at most 2 kernels queued (%u)",
	   r.max_kernels);

	/* 11. Slower than any wait may be (200 ms a kernel, over the cap): the
	 * waits give up, but a give-up lets through only launches worth
	 * GQ_WAIT_MAX_NS of estimated GPU time (one here), not GQ_HELD_MAX: the
	 * next launch waits again. */
	q = fresh(tab, &wops);
	for (i = 0; i < 30; i++)
		launch(q, 2, 1 * MS, 200 * MS, 5 * US, NULL);
	gave0 = q->waits;
	for (i = 0; i < 10; i++)
		launch(q, 2, 1 * MS, 200 * MS, 5 * US, NULL);
	ok(q->gave_up > 0 && q->waits - gave0 >= 10,
	   "200 ms a kernel: gave up %llu times, yet each of 10 launches waited (%llu waits)",
	   (unsigned long long)q->gave_up, (unsigned long long)(q->waits - gave0));

	/* 12. Host-released work on a stream of short kernels (XLA's autotuner:
	 * a delay kernel with a 100 ms timeout, then the timed kernels, then
	 * the host releases it), three rounds back to back (3 launches between
	 * them): each round the host gets its 40
	 * launches through in GQ_WAIT_MAX_NS (+ launch time), releases the
	 * spin before its timeout, and the estimate stays the kernels' (the
	 * sample of a mark the gate gave up on is host time, not taken). */
	q = fresh(tab, &wops);
	for (i = 0; i < 100; i++)
		launch(q, 2, 1 * MS, 10 * US, 5 * US, NULL);
	{
		int released = 0;
		uint64_t worst = xla_rounds(q, 3, 0, &released);

		ok(released == 3 && worst <= GQ_WAIT_CAP_NS + 2 * MS,
		   "host-released spin, 3 rounds: released in time %d of 3, host held at most %llu ms",
		   released, (unsigned long long)(worst / MS));
		/* the given-up marks' host time did not inflate the estimate: a
		 * stalled drain may cut the host's waits after GQ_SUSPECT_MIN_NS */
		ok(g.suspect_max <= GQ_SUSPECT_MIN_NS,
		   "host-released spin, rounds 2-3: waits suspect after %llu ms (at most %llu)",
		   (unsigned long long)(g.suspect_max / MS),
		   (unsigned long long)(GQ_SUSPECT_MIN_NS / MS));
		for (i = 0; i < 100; i++)
			launch(q, 2, 1 * MS, 10 * US, 5 * US, NULL);
		ok(q->est_ns < 1 * MS,
		   "host-released spin: 100 launches later the estimate is the kernels' (%llu us)",
		   (unsigned long long)(q->est_ns / US));
	}

	/* 14. The same on a fresh stream, not timed yet (time rule on), XLA's
	 * shape: the delay kernel among its first launches, then the timed
	 * kernel(s), then the release.  A give-up on an untimed stream lets
	 * through as many launches as the mark it gave up on held, plus one
	 * (3 here, queue_cap 2): 3 launches pass within GQ_WAIT_MAX_NS and the
	 * spin is released in time.  (A longer chain waits again: 40 launches
	 * are held 100 ms here, the delay kernel's timeout; doc/gate.md.) */
	q = fresh(tab, &wops);
	launch(q, 2, 1 * MS, 10 * US, 5 * US, NULL);
	spin_launch(q, 2, 1 * MS, 100 * MS);
	t0 = g.now;
	for (i = 0; i < 3; i++)
		launch(q, 2, 1 * MS, 10 * US, 5 * US, NULL);
	ok(g.now - t0 <= GQ_WAIT_MAX_NS + 2 * MS && spin_release(),
	   "fresh stream, host-released spin, 3 launches: host held %llu ms, released in time",
	   (unsigned long long)((g.now - t0) / MS));

	/* 13. The same on a GPU shared with siblings (20 ms a kernel here):
	 * the waits are longer, but never past GQ_WAIT_CAP_NS, so the host
	 * releases a 100 ms delay kernel in time. */
	q = fresh(tab, &wops);
	for (i = 0; i < 20; i++)
		launch(q, 2, 1 * MS, 20 * MS, 5 * US, NULL);
	spin_launch(q, 2, 1 * MS, 100 * MS);
	t0 = g.now;
	launch(q, 2, 1 * MS, 20 * MS, 5 * US, NULL);
	ok(g.now - t0 <= GQ_WAIT_CAP_NS + 1 * MS && spin_release(),
	   "shared GPU, host-released spin: host held %llu ms (cap %llu ms), released in time",
	   (unsigned long long)((g.now - t0) / MS), (unsigned long long)(GQ_WAIT_CAP_NS / MS));

	/* 15. XLA's autotuner as seen on the H200: a host pause (a compile of
	 * seconds) before each candidate, then the delay kernel, the timed
	 * launches, the release.  A mark whose launches came after its
	 * predecessor completed may hold the pause: it is no sample.  Before,
	 * it was one (20 s over a stride), the estimate became seconds, the
	 * waits behind the delay kernel never suspect and 80 ms long (the
	 * cap), and XLA's 100 ms timeout passed. */
	q = fresh(tab, &wops);
	for (i = 0; i < 100; i++)
		launch(q, 2, 1 * MS, 10 * US, 5 * US, NULL);
	{
		int released = 0;
		uint64_t worst;

		g.suspect_max = 0;
		worst = xla_rounds(q, 4, 20000 * MS /* the compile */, &released);
		ok(released == 4 && worst <= GQ_WAIT_MAX_NS + 2 * MS,
		   "host pauses of 20 s between candidates: released in time %d of 4, host held at most %llu ms",
		   released, (unsigned long long)(worst / MS));
		ok(g.suspect_max <= GQ_SUSPECT_UNTIMED_NS && q->est_ns < 1 * MS,
		   "host pauses of 20 s: waits suspect after at most %llu ms, estimate %llu us",
		   (unsigned long long)(g.suspect_max / MS), (unsigned long long)(q->est_ns / US));
	}

	/* 18. A thread that times its own kernels outside any region
	 * (cuEventRecord, the launch, cuEventRecord, synchronize): what
	 * gq_before() calls sits between its two events.  0.1 ms kernels: a
	 * mark every few launches, never a wait, and no event call at all
	 * before a launch (gq_after() collects and samples after it).  Before,
	 * a query and an elapsed time before each mark's launch: +3 % at the
	 * p95 of a 0.1 ms kernel under the gate on the H200 (session 22). */
	q = fresh(tab, &ops);
	for (i = 0; i < 100; i++) {
		launch(q, 2, 1 * MS, 100 * US, 5 * US, NULL);
		g.now = g.free_at + 5 * US; /* it synchronizes, then records */
	}
	g.before_calls = 0;
	ev0 = g.events;
	for (i = 0; i < 1000; i++) {
		launch(q, 2, 1 * MS, 100 * US, 5 * US, NULL);
		g.now = g.free_at + 5 * US;
	}
	ok(g.before_calls == 0 && g.events - ev0 >= 1000 / 5,
	   "timed 0.1 ms kernels: no event call before a launch (%u), a mark every %u launches",
	   g.before_calls, q->stride);
	ok(q->est_ns >= 100 * US && q->est_ns < 110 * US && q->stride == 4,
	   "timed 0.1 ms kernels: estimate %llu ns, stride %u (queue_time / 2 launches)",
	   (unsigned long long)q->est_ns, q->stride);
	/* 1 ms kernels (stride 1, the estimated queue over queue_time): one
	 * query before each launch, the completion it must know, no elapsed
	 * time and no wait. */
	q = fresh(tab, &ops);
	for (i = 0; i < 20; i++) {
		launch(q, 2, 1 * MS, 1 * MS, 5 * US, NULL);
		g.now = g.free_at + 5 * US;
	}
	g.before_calls = 0;
	t0 = g.elapsed;
	for (i = 0; i < 100; i++) {
		launch(q, 2, 1 * MS, 1 * MS, 5 * US, NULL);
		g.now = g.free_at + 5 * US;
	}
	ok(g.before_calls == 100 && g.syncs == 0 && g.waited == 0,
	   "timed 1 ms kernels: one query before each launch (%u in 100), no wait", g.before_calls);
	ok(q->est_ns >= 1 * MS && q->est_ns < 1 * MS + 10 * US && q->stride == 1,
	   "timed 1 ms kernels: estimate %llu ns (the idle spans between marks are no samples: %llu elapsed calls), stride %u",
	   (unsigned long long)q->est_ns, (unsigned long long)(g.elapsed - t0), q->stride);

	/* 9. The per-thread table: full means unbounded, never a crash. */
	reset(tab, 2);
	ok(gq_find(tab, 2, (void *)1) && gq_find(tab, 2, (void *)2) &&
	           !gq_find(tab, 2, (void *)3) && gq_before(NULL, &ops, 2, 0) == 0,
	   "a full table answers NULL and a NULL queue passes");
	/* 17. The owner in its region: 30 launches of 5 ms kernels through
	 * gq_count(), no wait and no event, all 30 queued; its next launches
	 * outside the region wait until what it left is back under the bound
	 * (waits that give up at the 80 ms cap included: 150 ms were left). */
	q = fresh(tab, &wops);
	for (i = 0; i < 20; i++)
		launch(q, 2, 1 * MS, 5 * MS, 5 * US, NULL);
	ev0 = g.events;
	gave0 = q->waits;
	for (i = 0; i < 30; i++)
		held_launch(q, 5 * MS, 5 * US);
	ok(g.events == ev0 && q->waits == gave0 && queued_kernels(5 * MS) >= 30,
	   "in its region the owner is not bounded: no event, no wait, %u kernels queued",
	   queued_kernels(5 * MS));
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 40; i++)
		launch(q, 2, 1 * MS, 5 * MS, 5 * US, NULL);
	for (i = 0; i < 20; i++)
		launch(q, 2, 1 * MS, 5 * MS, 5 * US, &r);
	ok(q->waits > gave0 && r.max_kernels <= 2,
	   "after it, its launches wait: bounded again (at most %u queued, %llu waits, %llu gave up)",
	   r.max_kernels, (unsigned long long)(q->waits - gave0), (unsigned long long)q->gave_up);
	held_launch(NULL, 5 * MS, 5 * US); /* no queue for that stream: nothing to count */
	return tap_done();
}
