/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpulist.h - CPU lists as the kernel writes them ("0-3,8,10-11").
 *
 * The one text form KREX uses for sets of CPUs: cpuset.cpus, the state
 * file's undo lines, the certificate's owner_cores and krexd.conf.  Parsing
 * is strict (no spaces inside, ascending or not, no open ranges), unlike
 * hwloc_bitmap_list_sscanf() which accepts "3-" as "3 to infinity".
 */
#ifndef KREX_CPULIST_H
#define KREX_CPULIST_H

#include <sched.h>
#include <stddef.h>

#include <hwloc.h>

/* Highest CPU number a list may name (the kernel's NR_CPUS ceiling). */
#define CPULIST_MAX_CPU 8191

/*
 * Parse s into set (emptied first).  "" and "\n" give the empty set.
 * Returns 0, or -1 with errno EINVAL (bad syntax, CPU above CPULIST_MAX_CPU).
 */
int cpulist_parse(const char *s, hwloc_bitmap_t set);

/*
 * Write set as a list into buf ("" for the empty set).  Returns the length,
 * or -1 with errno ENAMETOOLONG when it does not fit.
 */
int cpulist_format(hwloc_const_bitmap_t set, char *buf, size_t len);

/* The same, for the cpu_set_t of sched_{get,set}affinity (CPU_SETSIZE CPUs). */
int cpulist_to_cpuset(hwloc_const_bitmap_t set, cpu_set_t *out);
void cpulist_from_cpuset(const cpu_set_t *in, hwloc_bitmap_t set);

#endif /* KREX_CPULIST_H */
