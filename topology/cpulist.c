/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpulist.c - parse and format kernel-style CPU lists.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpulist.h"

/* Read one CPU number at *p; -1 on anything else. */
static long read_cpu(const char **p)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	v = strtol(*p, &end, 10);
	if (errno || v > CPULIST_MAX_CPU)
		return -1;
	*p = end;
	return v;
}

int cpulist_parse(const char *s, hwloc_bitmap_t set)
{
	const char *p = s;
	long lo, hi;

	hwloc_bitmap_zero(set);
	if (*p == '\0' || (p[0] == '\n' && p[1] == '\0'))
		return 0;
	for (;;) {
		lo = hi = read_cpu(&p);
		if (lo < 0)
			goto bad;
		if (*p == '-') {
			p++;
			hi = read_cpu(&p);
			if (hi < lo)
				goto bad;
		}
		hwloc_bitmap_set_range(set, (unsigned)lo, (int)hi);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\0' || (p[0] == '\n' && p[1] == '\0'))
			return 0;
		goto bad;
	}
bad:
	hwloc_bitmap_zero(set);
	errno = EINVAL;
	return -1;
}

int cpulist_format(hwloc_const_bitmap_t set, char *buf, size_t len)
{
	int n;

	if (hwloc_bitmap_weight(set) < 0) { /* infinite: not a CPU list */
		if (len)
			buf[0] = '\0';
		errno = EINVAL;
		return -1;
	}
	/* hwloc writes the kernel's list form ("0-3,8", "" when empty). */
	n = hwloc_bitmap_list_snprintf(buf, len, set);
	if (n < 0 || (size_t)n >= len) {
		if (len)
			buf[0] = '\0';
		errno = ENAMETOOLONG;
		return -1;
	}
	return n;
}

int cpulist_to_cpuset(hwloc_const_bitmap_t set, cpu_set_t *out)
{
	int i;

	CPU_ZERO(out);
	hwloc_bitmap_foreach_begin(i, set)
	{
		if (i >= CPU_SETSIZE) {
			errno = EINVAL;
			return -1;
		}
		CPU_SET(i, out);
	}
	hwloc_bitmap_foreach_end();
	return 0;
}

void cpulist_from_cpuset(const cpu_set_t *in, hwloc_bitmap_t set)
{
	int i;

	hwloc_bitmap_zero(set);
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, in))
			hwloc_bitmap_set(set, (unsigned)i);
}
