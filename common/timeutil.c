/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * timeutil.c - monotonic time, deadlines and duration parsing.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timeutil.h"

uint64_t time_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t time_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t time_deadline_ms(unsigned timeout_ms)
{
	return time_now_ns() + (uint64_t)timeout_ms * NS_PER_MS;
}

int time_left_ms(uint64_t deadline_ns)
{
	uint64_t now = time_now_ns();
	uint64_t left;

	if (now >= deadline_ns)
		return 0;
	left = (deadline_ns - now + NS_PER_MS - 1) / NS_PER_MS;
	return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

uint64_t time_us_to_ns(uint64_t us)
{
	return us > UINT64_MAX / NS_PER_US ? UINT64_MAX : us * NS_PER_US;
}

int time_parse_duration(const char *s, uint64_t default_unit_ns, uint64_t *out_ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {{"us", NS_PER_US},
	             {"ms", NS_PER_MS},
	             {"s", NS_PER_S},
	             {"m", 60 * NS_PER_S},
	             {"h", 3600 * NS_PER_S}};
	char *end;
	double v;
	uint64_t unit = default_unit_ns;
	unsigned i;

	if (!s || !*s) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtod(s, &end);
	/* !(v >= 0) is also true of NaN; inf and 1e300 fail the range check below */
	if (errno || end == s || !(v >= 0) || !isfinite(v)) {
		errno = errno ? errno : EINVAL;
		return -1;
	}
	if (*end) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(end, units[i].suffix) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0])) {
			errno = EINVAL;
			return -1;
		}
		unit = units[i].ns;
	}
	if (!(v * (double)unit < 1.8e19)) {
		errno = ERANGE;
		return -1;
	}
	*out_ns = (uint64_t)(v * (double)unit);
	return 0;
}
