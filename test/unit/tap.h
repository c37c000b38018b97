/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tap.h - a minimal TAP producer for unit tests (header only).
 *
 *	plan(3); ok(x == 1, "x is one"); ... return tap_done();
 */
#ifndef KREX_TAP_H
#define KREX_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed, tap_planned;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3))) static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 1, 2))) static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline int tap_done(void)
{
	if (tap_planned && tap_n != tap_planned)
		diag("planned %d tests but ran %d", tap_planned, tap_n);
	return tap_failed || (tap_planned && tap_n != tap_planned) ? 1 : 0;
}

#endif /* KREX_TAP_H */
