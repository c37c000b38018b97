/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * freezer_fork_test.c - the signal freezer and a process that forks after
 * krexd's /proc snapshot: the child must be stopped too before the freeze
 * is reported done (issue: 1 of 20 runs left such a child running), and
 * resumed by the thaw.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "freezer.h"
#include "proc.h"
#include "tap.h"

static int nrec;
static int rec(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
	nrec++;
	return 0;
}
static void drop(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
}

static char state_of(pid_t pid)
{
	char st = '?';
	pid_t pp;

	return proc_state(pid, &st, &pp) < 0 ? '?' : st;
}

int main(void)
{
	struct freezer fz;
	struct freezer_target t;
	char err[256], c;
	int go[2], back[2], i, rc = 0;
	pid_t parent, child = 0;

	plan(4);
	memset(&fz, 0, sizeof(fz));
	if (freezer_init(&fz, FREEZER_SIGNAL, "krex-test/fork", err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return 1;
	}
	if (pipe(go) < 0 || pipe(back) < 0)
		return 1;
	parent = fork();
	if (parent == 0) {
		/* wait for "go", fork a busy child, report its pid, then spin */
		pid_t ch;
		(void)!read(go[0], &c, 1);
		ch = fork();
		if (ch == 0)
			for (;;)
				;
		(void)!write(back[1], &ch, sizeof(ch));
		for (;;)
			pause();
	}
	memset(&t, 0, sizeof(t));
	t.root = parent;
	freezer_snapshot(&fz); /* the snapshot: parent only */
	ok(freezer_prepare(&fz, &t, rec, NULL) == 0, "freeze prepared from the snapshot");
	(void)!write(go[1], "g", 1); /* now the parent forks */
	(void)!read(back[0], &child, sizeof(child));
	usleep(20 * 1000);
	freezer_start(&fz, &t);
	for (i = 0; i < 500 && (rc = freezer_poll(&fz, &t)) == 0; i++)
		usleep(2000);
	ok(rc == 1, "freeze reported done");
	printf("# %zu pids stopped, %d recorded, parent %d child %d\n", t.nstopped, nrec,
	       (int)parent, (int)child);
	usleep(50 * 1000);
	ok(state_of(child) == 'T', "the child forked after the snapshot is stopped too (state %c)",
	   state_of(child));
	freezer_thaw(&fz, &t, drop, NULL);
	usleep(50 * 1000);
	ok(state_of(child) != 'T' && state_of(parent) != 'T', "the thaw resumes parent and child");
	kill(child, SIGKILL);
	kill(parent, SIGKILL);
	waitpid(parent, NULL, 0);
	freezer_fini(&fz);
	return tap_done();
}
