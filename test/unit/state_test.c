/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state_test.c - krexd's state file (written whole before each change,
 * undone at start, unknown kinds handed to registered handlers) and the
 * gate page it guards.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gatectl.h"
#include "state.h"
#include "tap.h"

static char seen[8][128];
static int nseen;

static int record(const char *line)
{
	if (nseen < 8)
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", line);
	return 0;
}

/* A handler that fails while fails_left > 0 (for "flaky" lines). */
static int fails_left;
static char order[16][64];
static int norder;

static int flaky(const char *line)
{
	if (norder < 16)
		snprintf(order[norder++], sizeof(order[0]), "%s", line);
	if (strstr(line, "bad") && fails_left > 0) {
		fails_left--;
		return -1;
	}
	return 0;
}

static int file_lines(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return f ? n : -1;
}

int main(void)
{
	char dir[] = "/tmp/krexd-state-XXXXXX", path[600];
	struct state st;
	struct gatectl g;
	uint32_t gen;

	plan(26);
	if (!mkdtemp(dir))
		return 1;
	ok(state_init(&st, dir) == 0, "state_init");
	ok(state_add(&st, "gate 0 7") == 0 && state_add(&st, "cgroup1 /x/p1") == 0 &&
	           state_add(&st, "cpuset /y/p2 0-3") == 0 && state_add(&st, "mystery 1") == 0,
	   "four lines added");
	ok(file_lines(st.path) == -1, "nothing written before state_sync");
	ok(state_sync(&st) == 0 && file_lines(st.path) == 4, "state_sync writes them");
	state_drop(&st, "cgroup1 /x/p1");
	ok(state_count(&st) == 3 && state_sync(&st) == 0 && file_lines(st.path) == 3,
	   "a dropped line is gone after the next sync");
	ok(state_add(&st, "two\nlines") < 0, "a line with a newline is refused");
	state_free(&st);

	ok(state_register_undo("cpuset", record) == 0, "an undo handler for cpuset lines");
	nseen = 0;
	ok(state_init(&st, dir) == 0 && state_recover(&st, record) == 2,
	   "recover undoes the lines it has handlers for (not 'mystery')");
	ok(nseen == 2 && !strcmp(seen[0], "cpuset /y/p2 0-3") && !strcmp(seen[1], "gate 0 7"),
	   "built-in and registered handlers called newest line first (as a region unwinds)");
	ok(file_lines(st.path) == 0, "the file is empty after recovery");
	state_free(&st);

	/* Retries: kept lines, backoff, a failed line holds back its group, give-up keeps it. */
	ok(state_register_undo("flaky", flaky) == 0 && state_init(&st, dir) == 0 &&
	           state_add(&st, "flaky bad 1") == 0 && state_add(&st, "flaky good 1") == 0 &&
	           state_add(&st, "flaky good 2") == 0 && state_sync(&st) == 0,
	   "retry: three lines on disk");
	fails_left = 2;
	norder = 0;
	ok(state_retry_add(&st, "flaky bad 1", 7, "participant 1", 0) == 0 &&
	           state_retry_add(&st, "flaky good 1", 7, "participant 1", 0) == 0 &&
	           state_retry_add(&st, "flaky good 2", 8, "participant 2", 0) == 0 &&
	           state_retry_next(&st) == 10 * 1000000ULL,
	   "retry: first one due after 10 ms");
	ok(state_retry_run(&st, 5 * 1000000ULL) == 3 && norder == 0,
	   "retry: nothing before it is due");
	ok(state_retry_run(&st, 10 * 1000000ULL) == 2 && norder == 2 &&
	           !strcmp(order[0], "flaky bad 1") && !strcmp(order[1], "flaky good 2") &&
	           file_lines(st.path) == 2,
	   "retry: the failing line holds back its group; another group's line is undone and dropped");
	ok(state_retry_next(&st) == 30 * 1000000ULL, "retry: backoff doubles (20 ms)");
	ok(state_retry_run(&st, 30 * 1000000ULL) == 2 && fails_left == 0,
	   "retry: fails again, still held");
	ok(state_retry_run(&st, 200 * 1000000ULL) == 0 && file_lines(st.path) == 0 &&
	           state_retry_pending(&st, NULL) == 0,
	   "retry: succeeds, then its group follows, both dropped from the file");
	fails_left = 1000;
	state_add(&st, "flaky bad 2");
	state_sync(&st);
	state_retry_add(&st, "flaky bad 2", 0, "participant 3", 0);
	for (gen = 0; gen < STATE_RETRY_MAX + 2; gen++)
		state_retry_run(&st, (uint64_t)(gen + 1) * 10000000000ULL);
	ok(state_retry_pending(&st, NULL) == 0 && file_lines(st.path) == 1,
	   "retry: given up after STATE_RETRY_MAX, its line kept for the next start");
	state_free(&st);
	nseen = 0;
	fails_left = 1000;
	ok(state_init(&st, dir) == 0 && state_recover(&st, record) == 0 &&
	           state_retry_pending(&st, "flaky bad 2") == 1 && file_lines(st.path) == 1,
	   "recover: a line that cannot be undone is kept and retried");
	ok(state_retry_cancel(&st, "flaky bad 2") == 1 && state_sync(&st) == 0 &&
	           file_lines(st.path) == 0 && state_retry_pending(&st, NULL) == 0,
	   "cancel: a change made again stops the retry and drops the old copy");
	state_free(&st);

	snprintf(path, sizeof(path), "%s/gate", dir);
	ok(gatectl_open(&g, path) == 0 && g.page->magic == GATE_MAGIC && g.page->alive == 1,
	   "gate page created, alive");
	gatectl_name(&g, 0, "g0", 1);
	gen = gatectl_generation(&g);
	gatectl_close_slot(&g, 0, 5, 42);
	ok(gatectl_bump(&g) == gen + 1 && g.page->slot[0].closed_by == 5 &&
	           g.page->slot[0].region_lo == 42 && g.page->slot[0].closes == 1,
	   "close a slot, generation bumped");
	gatectl_close(&g);
	ok(gatectl_open(&g, path) == 0 && g.page->slot[0].closed_by == 0 &&
	           g.page->generation > gen + 1,
	   "reopened page: slots open, generation keeps counting");
	gatectl_shutdown(&g);
	ok(g.page == NULL, "shutdown unmaps");
	ok(gatectl_open(&g, path) == 0 && g.page->nslots == 1 &&
	           !strcmp(g.page->slot[0].name, "g0"),
	   "slot names survive a reopen");
	gatectl_shutdown(&g);
	{
		FILE *f = fopen(path, "r");
		struct gate_page p;
		ok(f && fread(&p, sizeof(p), 1, f) == 1 && p.alive == 0 && p.slot[0].closed_by == 0,
		   "after shutdown: alive = 0, every slot open");
		if (f)
			fclose(f);
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/krexd.state", dir);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
