/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mover_test.c - krexd's mover thread (krexd/mover.c) on plain files that
 * stand in for cgroup.procs: the moves are written in the order asked, each
 * result names its participant and its error (the freezer cgroup's, the
 * cpuset cgroup's apart), the loop's eventfd wakes only when one is done
 * (KREX_TEST_MOVE_HOLD holds them), and the stop finishes what is queued.
 * The real cgroups are test/integration/krexd-mover.sh's.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "krexd.h"
#include "mover.h"
#include "tap.h"
#include "timeutil.h"

static struct krexd K;
static char dir[256];

static void path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

/* A directory NAME with an empty cgroup.procs file; its path in out. */
static void fake_cg(char *out, size_t len, const char *name)
{
	char f[512];
	FILE *fp;

	path(out, len, name);
	mkdir(out, 0755);
	snprintf(f, sizeof(f), "%s/cgroup.procs", out);
	fp = fopen(f, "w");
	if (fp)
		fclose(fp);
}

static int holds(const char *cg, const char *want)
{
	char f[512], buf[64];

	snprintf(f, sizeof(f), "%s/cgroup.procs", cg);
	return file_read(f, buf, sizeof(buf)) >= 0 && !strcmp(buf, want);
}

/* Wait (at most 10 s) for the eventfd, then take; appends to *all. */
static unsigned take_until(struct mv_done **all, unsigned want)
{
	struct epoll_event ev;
	struct mv_done *d, **tail;
	unsigned n = 0, i;

	for (d = *all; d; d = d->next)
		n++;
	for (i = 0; n < want && i < 100; i++) {
		if (epoll_wait(K.epfd, &ev, 1, 100) == 1 &&
		    ((struct ep_item *)ev.data.ptr)->kind == EP_MOVER) {
			for (tail = all; *tail; tail = &(*tail)->next)
				;
			*tail = mv_take();
			for (n = 0, d = *all; d; d = d->next)
				n++;
		}
	}
	return n;
}

static void free_all(struct mv_done *d)
{
	while (d) {
		struct mv_done *n = d->next;
		free(d);
		d = n;
	}
}

int main(void)
{
	char a[300], b[300], cs[300], hold[300], gone[300];
	struct epoll_event ev;
	struct mv_done *all = NULL, *d;
	FILE *fp;

	plan(24);
	snprintf(dir, sizeof(dir), "/tmp/mover_test.XXXXXX");
	if (!mkdtemp(dir)) {
		ok(0, "a temp dir");
		return tap_done();
	}
	fake_cg(a, sizeof(a), "a");
	fake_cg(b, sizeof(b), "b");
	fake_cg(cs, sizeof(cs), "cs");
	path(gone, sizeof(gone), "gone");
	path(hold, sizeof(hold), "hold");
	fp = fopen(hold, "w");
	if (fp)
		fclose(fp);
	setenv("KREX_TEST_MOVE_HOLD", hold, 1);
	K.epfd = epoll_create1(EPOLL_CLOEXEC);

	ok(mv_submit(1, 101, a, "") < 0 && errno == ENOSYS,
	   "no thread yet: a move is refused (ENOSYS)");
	ok(mv_start(&K) == 0 && mv_on(), "the thread starts");
	ok(mv_submit(1, 101, a, "") == 0 && mv_submit(2, 102, b, cs) == 0 &&
	           mv_submit(3, 103, gone, "") == 0,
	   "three moves queued");
	ok(epoll_wait(K.epfd, &ev, 1, 100) == 0 && mv_pending() == 3,
	   "held: nothing done, three pending, the eventfd quiet");
	unlink(hold);
	ok(take_until(&all, 3) == 3, "the hold gone: three results");
	d = all;
	ok(d && d->id == 1 && d->err == 0 && d->cpuset_err == 0 && holds(a, "101"),
	   "1st: pid 101 written into a/cgroup.procs");
	d = d ? d->next : NULL;
	ok(d && d->id == 2 && d->err == 0 && d->cpuset_err == 0 && holds(b, "102") &&
	           holds(cs, "102"),
	   "2nd: pid 102 into b, then into the cpuset cgroup");
	d = d ? d->next : NULL;
	ok(d && d->id == 3 && d->err == ENOENT, "3rd: a cgroup that is not there: ENOENT");
	ok(all && all->move_ns > 0 && mv_pending() == 0, "each timed; nothing pending");
	free_all(all);
	all = NULL;

	ok(mv_submit(4, 104, a, gone) == 0 && take_until(&all, 1) == 1 && all->id == 4 &&
	           all->err == 0 && all->cpuset_err == ENOENT && holds(a, "104"),
	   "the cpuset cgroup's failure apart: the move itself took");
	free_all(all);
	all = NULL;

	fp = fopen(hold, "w");
	if (fp)
		fclose(fp);
	ok(mv_submit(5, 105, b, "") == 0 && mv_submit(6, 106, a, "") == 0 && mv_pending() == 2,
	   "held again: two queued");
	mv_stop();
	ok(!mv_on() && mv_pending() == 0,
	   "the stop does not wait for the hold and finishes the queue");
	all = mv_take();
	ok(all && all->id == 5 && all->err == 0 && all->next && all->next->id == 6 &&
	           holds(b, "105") && holds(a, "106"),
	   "... both written, in order");
	ok(mv_take() == NULL, "nothing more to take");
	ok(mv_submit(7, 107, a, "") < 0 && errno == ENOSYS, "after the stop a move is refused");
	unlink(hold);
	/* the loop's hold while a region enters (region_move_hold()) */
	setenv("KREXD_MOVE_HOLD_MS", "600000", 1);
	ok(mv_start(&K) == 0 && mv_on(), "and the thread starts again");
	free_all(all);
	all = NULL;
	ok(mv_hold_ns() == 600 * NS_PER_S,
	   "KREXD_MOVE_HOLD_MS=600000 at its start: holds of 10 min");
	mv_hold_until(time_now_ns() + 600 * NS_PER_S);
	ok(mv_submit(8, 108, a, "") == 0 && epoll_wait(K.epfd, &ev, 1, 100) == 0 &&
	           mv_pending() == 1,
	   "a region's hold: a move not begun waits");
	mv_hold_until(0);
	ok(take_until(&all, 1) == 1 && all->id == 8 && all->err == 0 && all->held_ns > 0 &&
	           all->held_ns <= all->queued_ns && holds(a, "108"),
	   "released: written, its wait counted as held");
	free_all(all);
	all = NULL;
	mv_hold_until(time_now_ns() + 50 * NS_PER_MS);
	ok(mv_submit(9, 109, b, "") == 0 && take_until(&all, 1) == 1 && all->id == 9 &&
	           all->held_ns > 0 && holds(b, "109"),
	   "a hold that runs out lets the move go by itself");
	free_all(all);
	all = NULL;
	mv_hold_until(time_now_ns() + 600 * NS_PER_S);
	ok(mv_submit(10, 110, a, "") == 0, "held once more");
	mv_stop();
	all = mv_take();
	ok(!mv_on() && all && all->id == 10 && holds(a, "110"),
	   "the stop does not wait for a region's hold: the move written");
	free_all(all);
	all = NULL;
	setenv("KREXD_MOVE_HOLD_MS", "50", 1);
	ok(mv_start(&K) == 0 && mv_hold_ns() == 50 * NS_PER_MS, "restarted with holds of 50 ms");
	mv_hold_until(time_now_ns() + 600 * NS_PER_S);
	ok(mv_submit(11, 111, b, "") == 0 && take_until(&all, 1) == 1 && all->id == 11 &&
	           all->held_ns > 0 && holds(b, "111"),
	   "a move waits no longer than that for holds, whatever the regions");
	mv_stop();
	free_all(all);
	{
		char f[512];
		const char *names[] = {"a", "b", "cs"};
		for (unsigned i = 0; i < 3; i++) {
			path(f, sizeof(f), names[i]);
			strcat(f, "/cgroup.procs");
			unlink(f);
			path(f, sizeof(f), names[i]);
			rmdir(f);
		}
		rmdir(dir);
	}
	return tap_done();
}
