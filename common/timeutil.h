/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * timeutil.h - monotonic time and deadlines.
 */
#ifndef KREX_TIMEUTIL_H
#define KREX_TIMEUTIL_H

#include <stdint.h>

#define NS_PER_US 1000ULL
#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t time_now_ns(void);

/* CLOCK_REALTIME in nanoseconds (for state files and logs only). */
uint64_t time_wall_ns(void);

/* A deadline timeout_ms from now; 0 ms means "already passed". */
uint64_t time_deadline_ms(unsigned timeout_ms);

/* Milliseconds left until deadline_ns, 0 if passed, for poll(). */
int time_left_ms(uint64_t deadline_ns);

/* us in ns, saturated at UINT64_MAX (a client's max_us never wraps to a tiny lease). */
uint64_t time_us_to_ns(uint64_t us);

/*
 * Parse a duration: a number with an optional unit (us, ms, s, m, h; no unit
 * means default_unit_ns).  Stores nanoseconds.  Returns 0, or -1 with errno
 * EINVAL on junk or ERANGE on overflow.
 */
int time_parse_duration(const char *s, uint64_t default_unit_ns, uint64_t *out_ns);

#endif /* KREX_TIMEUTIL_H */
