/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_ctx.c - the contexts this process is making (doc/gate.md "Making a
 * context waits at a closed gate"), counted from the gate's check
 * (gate_context_wait()) to the driver call's return (gate_context_made()),
 * so that the freeze does not stop one halfway: krexd hears when the count
 * leaves and reaches 0 (krex_gate_ctx_making(): a region about to close
 * our gates waits for them, krexd.conf(5) ctx_defer), and with
 * KREX_GATE_CONTEXTS=finish a drain waits for them first, at most
 * gate_ctx_finish_ms.  Not in flight either way.
 */
#include "config.h"

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "defs.h"
#include "gate.h"
#include "krex/region.h"
#include "log.h"
#include "timeutil.h"

/* a context made under load took 0.3-0.4 s at p50 (an H100 over MPS, 32
 * sessions, notebook/h200-session-35) */
#define GATE_CTX_FINISH_MS 500
#define GATE_CTX_FINISH_MAX_MS 86400000u

int gate_ctx_finish;
unsigned gate_ctx_finish_ms = GATE_CTX_FINISH_MS;
static _Atomic int making;

void gate_ctx_finish_init(const char *contexts)
{
	const char *s = getenv("KREX_GATE_FINISH_MS");
	unsigned long v;
	char *end;

	gate_ctx_finish = contexts && strcmp(contexts, "finish") == 0;
	if (!s || !*s)
		return;
	v = strtoul(s, &end, 10);
	/* any drain's own deadline bounds it (krexd.conf drain_timeout, up to a day) */
	if (*end || v > GATE_CTX_FINISH_MAX_MS)
		log_warn("KREX_GATE_FINISH_MS=%s: not a number of ms up to %u; %u", s,
		         GATE_CTX_FINISH_MAX_MS, GATE_CTX_FINISH_MS);
	else
		gate_ctx_finish_ms = (unsigned)v;
}

int gate_ctx_making_begin(void)
{
	if (atomic_fetch_add(&making, 1) == 0)
		krex_gate_ctx_making(1); /* krexd: a region about to close waits for it */
	return 1;
}

void gate_context_made(int counted)
{
	if (!counted || atomic_fetch_sub(&making, 1) != 1)
		return;
	krex_gate_ctx_making(0);
	syscall(SYS_futex, (int *)&making, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void gate_ctx_making_forget(void)
{
	atomic_store(&making, 0);
}

int gate_ctx_making_now(void)
{
	return atomic_load(&making);
}

int gate_ctx_wait_made(uint64_t deadline)
{
	int n;

	while ((n = atomic_load(&making)) > 0 && time_now_ns() < deadline) {
		struct timespec slice = {0, 5 * 1000 * 1000};

		syscall(SYS_futex, (int *)&making, FUTEX_WAIT_PRIVATE, n, &slice, NULL, 0);
	}
	return n > 0 ? n : 0;
}
