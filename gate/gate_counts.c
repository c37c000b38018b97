/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_counts.c - the gate's counts: its own (enum gate_stat) and, at exit,
 * every backend's wrapper entries, to KREX_GATE_COUNTS=FILE (or stderr with
 * KREX_LOG=debug).  Tests and the GPU checks read them.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "defs.h"
#include "gate.h"

int gate_counting;
static char *gate_counts_path;
static _Atomic unsigned long gate_stats[GST_COUNT];
static const char *const gate_stat_names[GST_COUNT] = {"gate.queue_waits",
                                                       "gate.queue_gave_up",
                                                       "gate.drains",
                                                       "gate.drain_late",
                                                       "gate.drain_incomplete",
                                                       "gate.drain_passes",
                                                       "gate.passed_launches",
                                                       "gate.through_launches",
                                                       "gate.queue_marks",
                                                       "gate.context_held",
                                                       "gate.nested"};

unsigned long gate_stat_add(enum gate_stat st)
{
	return atomic_fetch_add_explicit(&gate_stats[st], 1, memory_order_relaxed);
}

unsigned long gate_stat(enum gate_stat st)
{
	return atomic_load(&gate_stats[st]);
}

void gate_counts_init(int debug)
{
	const char *s = getenv(KREX_ENV_GATE_COUNTS);

	if (s && *s) {
		gate_counts_path = strdup(s);
		gate_counting = gate_counts_path != NULL;
	}
	if (debug)
		gate_counting = 1;
}

/* Every backend's wrapper counts, then the gate's own. */
static void gate_write_all_counts(FILE *f)
{
	const struct gate_backend *const *b;
	int i;

	for (b = gate_backends; b < gate_backends_end; b++)
		if ((*b)->counts)
			(*b)->counts(f);
	for (i = 0; i < GST_COUNT; i++)
		fprintf(f, "%ld %s %lu\n", (long)getpid(), gate_stat_names[i],
		        atomic_load(&gate_stats[i]));
}

void gate_write_counts(void)
{
	FILE *f;

	if (!gate_counting)
		return;
	if (!gate_counts_path) {
		/* KREX_LOG=debug: the counts go to stderr, one line each */
		gate_write_all_counts(stderr);
		return;
	}
	f = fopen(gate_counts_path, "a");
	if (!f)
		return;
	gate_write_all_counts(f);
	fclose(f);
}
