/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cgtest.h - small helpers the topology tier's C tests share: cgroup files
 * (put/get a value) and thread masks as CPU lists.
 */
#ifndef KREX_CGTEST_H
#define KREX_CGTEST_H

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "cpulist.h"

/* Write val into dir/file (one write, as a shell's echo). */
static inline int put(const char *dir, const char *file, const char *val)
{
	char path[700];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "we");
	if (!f)
		return -1;
	rc = fputs(val, f) < 0 ? -1 : 0;
	return fclose(f) < 0 ? -1 : rc;
}

/* The first line of dir/file, newline removed ("" when unreadable). */
static inline void get(const char *dir, const char *file, char *buf, size_t len)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* The CPU list of one thread ("" when it is gone). */
static inline void mask_of(pid_t tid, char *buf, size_t len)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	cpu_set_t cs;

	buf[0] = '\0';
	if (sched_getaffinity(tid, sizeof(cs), &cs) == 0) {
		cpulist_from_cpuset(&cs, set);
		cpulist_format(set, buf, len);
	}
	hwloc_bitmap_free(set);
}

/* Pin one thread to a CPU list. */
static inline int set_mask(pid_t tid, const char *list)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	cpu_set_t cs;
	int rc = cpulist_parse(list, set) < 0 || cpulist_to_cpuset(set, &cs) < 0
	                 ? -1
	                 : sched_setaffinity(tid, sizeof(cs), &cs);

	hwloc_bitmap_free(set);
	return rc;
}

#endif /* KREX_CGTEST_H */
