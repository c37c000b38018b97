/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * freezer_order_test.c - the signal freezer and a parent that watches its
 * child with waitpid(WUNTRACED) and stops itself when the child stops, as
 * su, runuser and sudo do (issue 20, item 3): stopped before its child and
 * continued after it, it never sees the stop, and nothing is left stopped.
 * And a stop signal that comes while krexd holds a process (a shell's
 * Ctrl-Z, Slurm's suspend) is not undone by krexd's SIGCONT.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "freezer.h"
#include "proctree.h"
#include "tap.h"

#define CYCLES 100

/* The freezer's record and drop callbacks: no state file here. */
static int rec(void *ctx, const char *line)
{
	return (void)ctx, (void)line, 0;
}

static void drop(void *ctx, const char *line)
{
	(void)ctx, (void)line;
}

static char state_of(pid_t pid)
{
	char st = '?';
	pid_t pp;

	return proc_state(pid, &st, &pp) < 0 ? '?' : st;
}

/* One byte from fd within ms (a guard against a hang only), or 0. */
static char read_byte(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char c = 0;

	if (poll(&p, 1, ms) == 1 && read(fd, &c, 1) != 1)
		c = 0;
	return c;
}

/* Freeze t (snapshot, prepare, start, poll until done) and thaw it.  1 if it froze. */
static int cycle(struct freezer *fz, struct freezer_target *t, pid_t root)
{
	int i, rc = 0;

	memset(t, 0, sizeof(*t));
	t->root = root;
	freezer_snapshot(fz);
	if (freezer_prepare(fz, t, rec, NULL) < 0 || freezer_start(fz, t) < 0)
		return 0;
	for (i = 0; i < 5000 && (rc = freezer_poll(fz, t)) == 0; i++)
		usleep(200);
	return rc == 1;
}

/* su's loop (util-linux su-common.c wait_for_child): stop with the child. */
static void su_like(int ev)
{
	pid_t kid = fork();
	int st;

	if (kid == 0)
		for (;;)
			pause();
	for (;;) {
		if (waitpid(kid, &st, WUNTRACED) < 0 && errno == EINTR)
			continue;
		if (WIFSTOPPED(st)) {
			(void)!write(ev, "S", 1);
			kill(getpid(), SIGSTOP);
			kill(kid, SIGCONT);
			continue;
		}
		(void)!write(ev, "D", 1);
		_exit(0);
	}
}

static void on_tstp(int sig)
{
	(void)sig;
	(void)!write(3, "H", 1);
}

int main(void)
{
	struct freezer fz;
	struct freezer_target t;
	char err[256], c;
	int ev[2], i, froze = 0, saw = 0;
	pid_t su, kid, x;

	plan(10);
	memset(&fz, 0, sizeof(fz));
	if (freezer_init(&fz, FREEZER_SIGNAL, "krex-test/order", err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return 1;
	}
	if (pipe(ev) < 0)
		return 1;

	/* a su-like parent inside the participant, its child below it */
	su = fork();
	if (su == 0)
		su_like(ev[1]);
	for (i = 0; i < 1000; i++) { /* its child forked (a guard only) */
		char p[64];
		FILE *f;
		snprintf(p, sizeof(p), "/proc/%d/task/%d/children", (int)su, (int)su);
		f = fopen(p, "r");
		kid = 0;
		if (f) {
			if (fscanf(f, "%d", &kid) != 1)
				kid = 0;
			fclose(f);
		}
		if (kid > 0)
			break;
		usleep(1000);
	}
	for (i = 0; i < CYCLES; i++) {
		froze += cycle(&fz, &t, su);
		freezer_thaw(&fz, &t, drop, NULL);
		freezer_release(&fz, &t, drop, NULL);
	}
	ok(froze == CYCLES, "%d of %d freezes of a su-like parent and its child done", froze,
	   CYCLES);
	c = state_of(su);
	ok(c != 'T', "after them the parent is not stopped (state %c)", c);
	kill(kid, SIGKILL);
	kill(su, SIGCONT); /* let a parent left stopped report */
	while ((c = read_byte(ev[0], 10000)) == 'S')
		saw++;
	ok(c == 'D' && saw == 0, "the parent saw its child stop %d times in %d regions (0 wanted)",
	   saw, CYCLES);
	waitpid(su, NULL, 0);

	/* a Ctrl-Z (SIGTSTP, default action) while krexd holds it: left stopped */
	x = fork();
	if (x == 0)
		for (;;)
			pause();
	ok(cycle(&fz, &t, x), "a process frozen");
	kill(x, SIGTSTP);
	freezer_thaw(&fz, &t, drop, NULL);
	c = state_of(x);
	ok(c == 'T', "a SIGTSTP that came while frozen: left stopped by the thaw (state %c)", c);
	/* the same through its state file line (a krexd restart's recovery) */
	snprintf(err, sizeof(err), "pid %d", (int)x);
	ok(freezer_undo_line(err) == 0 && state_of(x) == 'T',
	   "... and by the recovery of its state file line (state %c)", state_of(x));
	freezer_release(&fz, &t, drop, NULL);
	kill(x, SIGKILL);
	waitpid(x, NULL, 0);

	/* a SIGTSTP it handles: continued, and its handler runs */
	x = fork();
	if (x == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_tstp;
		dup2(ev[1], 3);
		sigaction(SIGTSTP, &sa, NULL);
		(void)!write(3, "R", 1);
		for (;;)
			pause();
	}
	read_byte(ev[0], 10000); /* its handler is set */
	ok(cycle(&fz, &t, x), "a process with a SIGTSTP handler frozen");
	kill(x, SIGTSTP);
	freezer_thaw(&fz, &t, drop, NULL);
	c = read_byte(ev[0], 10000);
	ok(c == 'H' && state_of(x) != 'T',
	   "its SIGTSTP is delivered after the thaw (handler ran: %c)", c ? c : '-');
	freezer_release(&fz, &t, drop, NULL);
	kill(x, SIGKILL);
	waitpid(x, NULL, 0);
	/* a vfork() parent (dash runs its commands so) whose child is not
	 * exec'd yet: the parent waits in D for the child, whose stop keeps it
	 * there; the freeze must not wait for it to show T */
	x = fork();
	if (x == 0) {
		if (vfork() == 0)
			for (;;)
				pause(); /* the window between vfork and exec, held open */
		_exit(0);
	}
	for (i = 0; i < 1000 && state_of(x) != 'D'; i++)
		usleep(1000); /* a guard only: in vfork at once */
	ok(cycle(&fz, &t, x), "a vfork parent and its child not exec'd yet: frozen (parent %c)",
	   state_of(x));
	freezer_thaw(&fz, &t, drop, NULL);
	freezer_release(&fz, &t, drop, NULL);
	kid = 0;
	{
		char p[64];
		FILE *f;
		snprintf(p, sizeof(p), "/proc/%d/task/%d/children", (int)x, (int)x);
		if ((f = fopen(p, "r"))) {
			if (fscanf(f, "%d", &kid) != 1)
				kid = 0;
			fclose(f);
		}
	}
	ok(kid > 0 && state_of(kid) != 'T' && state_of(x) != 'T',
	   "after the thaw neither is stopped (%c, %c)", kid > 0 ? state_of(kid) : '-',
	   state_of(x));
	if (kid > 0)
		kill(kid, SIGKILL);
	waitpid(x, NULL, 0);
	freezer_fini(&fz);
	return tap_done();
}
