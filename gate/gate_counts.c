/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_counts.c - the gate's counts: its own (enum gate_stat) and, at exit,
 * every backend's wrapper entries, to KREX_GATE_COUNTS=FILE (or stderr with
 * KREX_LOG=debug).  Tests and the GPU checks read them.  And the list of the
 * process's threads that a stalled drain logs.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "defs.h"
#include "gate.h"
#include "proc.h"

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

/* Read a small /proc file of this process into buf: its length, or -1. */
static ssize_t gate_read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

unsigned gate_threads_line(char *line, size_t len)
{
	char path[64], st[512], name[32], sc[128];
	size_t off = 0;
	unsigned more = 0;
	struct proc_stat ps;
	struct dirent *e;
	DIR *d;

	line[0] = 0;
	d = opendir("/proc/self/task");
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.16s/stat", e->d_name);
		if (gate_read_small(path, st, sizeof(st)) < 0 || proc_stat_parse(st, &ps) < 3)
			continue; /* gone meanwhile */
		snprintf(path, sizeof(path), "/proc/self/task/%.16s/comm", e->d_name);
		if (gate_read_small(path, name, sizeof(name)) < 0)
			strcpy(name, "?");
		name[strcspn(name, "\n")] = 0;
		snprintf(path, sizeof(path), "/proc/self/task/%.16s/syscall", e->d_name);
		if (gate_read_small(path, sc, sizeof(sc)) < 0)
			strcpy(sc, "?");
		sc[strcspn(sc, " \n")] = 0;
		if (off + 64 >= len) {
			more++;
			continue;
		}
		off += (size_t)snprintf(line + off, len - off, " %s/%s:%c:%s", e->d_name, name,
		                        ps.state, sc);
	}
	closedir(d);
	return more;
}
