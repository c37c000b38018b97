/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_pass_test.c - the drain's pass decision (gate/gate.c, included here)
 * in its wait for calls inside the driver, with the threads of a process
 * played by this test in one thread: what they do happens at
 * GATE_TEST_STALL_FOUND(), the point where the drain, having found a stall,
 * counts the parked threads.  So the interleaving that a loaded machine
 * makes only rarely (CI run 78, test/gate/xla_deadlock.sh 26) is made
 * every time: a thread counted itself inside the driver, found the drain and
 * was preempted before it stepped back; the drain saw the count stand still
 * for GATE_STALL_NS; between its reading of the count and of the parked
 * threads, the thread stepped back and parked.
 *
 * TEST DOUBLES: libkrexregion's joining API (no krexd: nothing joins) and
 * the gate's counts (gate_counts.c) are stubs below; no GPU backend.
 */
#define GATE_TEST_STALL_FOUND() test_stall_found()
static void test_stall_found(void);

#include "../../gate/gate.c"
#include "../../gate/gate_ctx.c"

#include "tap.h"

/* ---- doubles ---------------------------------------------------------- */

static unsigned long stats[GST_COUNT];

unsigned long gate_stat_add(enum gate_stat st)
{
	return ++stats[st];
}

unsigned long gate_stat(enum gate_stat st)
{
	return stats[st];
}

void gate_counts_init(int debug)
{
	(void)debug;
}

void gate_write_counts(void)
{
}

unsigned gate_threads_line(char *line, size_t len)
{
	if (len)
		line[0] = 0;
	return 0;
}

int krex_join(const struct krex_join_opts *o)
{
	(void)o;
	return KREX_ENOKREXD;
}

int krex_leave(void)
{
	return KREX_OK;
}

int krex_gate_wait(void)
{
	return 0;
}

int krex_gate_wait_contexts(void)
{
	return 0;
}

unsigned krex_gate_parked(void)
{
	return 0;
}

void krex_gate_ctx_making(int on)
{
	(void)on;
}

static int region_pass;

void krex_gate_pass(int on)
{
	region_pass = on;
}

unsigned krex_queue_cap(void)
{
	return 0;
}

unsigned krex_queue_time_us(void)
{
	return 0;
}

unsigned krex_drain_timeout_ms(void)
{
	return 2000;
}

int krex_region_held(void)
{
	return 0;
}

const char *krex_strerror(int err)
{
	return err == KREX_OK ? "success" : "test double: no krexd";
}

/* No backend: the section gate.c iterates must exist all the same. */
GATE_BACKEND(test, "test", NULL, NULL, NULL, NULL, NULL, NULL);

/* ---- the threads, played at GATE_TEST_STALL_FOUND() ------------------- */

static int stepping_back; /* threads counted inside, about to step back and park */
static int founds;        /* stalls found */

/* What a thread does in gate_enter_once() after it found the drain: leave
 * (gate_leave()), then ask in the park of the current epoch. */
static void test_stall_found(void)
{
	founds++;
	while (stepping_back > 0) {
		stepping_back--;
		gate_leave(1);
		atomic_fetch_add(&gate_asked[atomic_load(&gate_epoch) % GATE_EPOCHS], 1);
	}
}

/* `inside` calls inside the driver that return only once a pass let the
 * parked thread through (a read-back behind work that thread releases),
 * played by a thread of the test; 10 s at most. */
static void *released_by_pass(void *arg)
{
	int i, n = (int)(intptr_t)arg;

	for (i = 0; i < 10000 && atomic_load(&gate_pass) == 0; i++)
		gate_sleep_us(1000);
	while (n-- > 0)
		gate_leave(1);
	return NULL;
}

/* A drain's wait for calls inside the driver: `inside` calls that wait for
 * a parked thread (released_by_pass()), `steps` threads in their step back,
 * `parked` parked already.  Bounded by 20 s, never reached. */
static int drain_wait(int inside, int steps, int parked)
{
	pthread_t t;
	int i, rc;

	for (i = 0; i < GATE_EPOCHS; i++)
		atomic_store(&gate_asked[i], 0);
	atomic_store(&gate_asked[atomic_load(&gate_epoch) % GATE_EPOCHS], parked);
	atomic_store(&gate_inflight, inside + steps);
	atomic_store(&gate_pass, 0);
	atomic_store(&gate_draining, 1);
	stepping_back = steps;
	founds = 0;
	gate_drain_passes = 0;
	gate_first_round = 0;
	if (inside && pthread_create(&t, NULL, released_by_pass, (void *)(intptr_t)inside) != 0)
		return -2;
	rc = gate_wait_inflight(time_deadline_ms(20000));
	if (inside)
		pthread_join(t, NULL);
	atomic_store(&gate_draining, 0);
	return rc;
}

int main(void)
{
	int rc;

	plan(12);
	/* gate_init() ran (the constructor): no krexd, so passing through */
	ok(!gate_joined(), "no krexd: not joined (the test drives the drain itself)");

	/* The race: one thread stepping back, nothing else inside. */
	rc = drain_wait(0, 1, 0);
	ok(rc == 0, "a thread stepping back: the wait ends (rc %d)", rc);
	ok(founds == 1, "the stall was found once, then the step back seen (found %d)", founds);
	ok(gate_drain_passes == 0 && atomic_load(&gate_pass) == 0,
	   "a step back read as parked is progress: no pass (passes %d)", gate_drain_passes);
	ok(stats[GST_DRAIN_PASSES] == 0, "gate.drain_passes stays 0 (%lu)",
	   stats[GST_DRAIN_PASSES]);

	/* A call inside the driver that waits for a parked thread (XLA's
	 * read-back behind its delay kernel): the pass is still made. */
	rc = drain_wait(1, 0, 1);
	ok(rc == 0, "a call waiting for a parked thread returned after the pass (rc %d)", rc);
	ok(gate_drain_passes == 1, "a stall with a thread parked: one pass (passes %d)",
	   gate_drain_passes);
	ok(region_pass == 1, "the pass opens libkrexregion's wait too");

	/* Both: such a call and a thread stepping back.  The step back is
	 * progress (no pass at the first stall); the stall that follows, with
	 * the thread parked, is real and passes. */
	stats[GST_DRAIN_PASSES] = 0;
	rc = drain_wait(1, 1, 0);
	ok(rc == 0, "a waiting call beside a step back: returned after the pass (rc %d)", rc);
	ok(founds == 2, "a stall found again after the step back (found %d)", founds);
	ok(gate_drain_passes == 1, "then one pass, for the real stall (passes %d)",
	   gate_drain_passes);
	ok(stats[GST_DRAIN_PASSES] == 1, "gate.drain_passes 1 (%lu)", stats[GST_DRAIN_PASSES]);
	return tap_done();
}
