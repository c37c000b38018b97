/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_region.h - TEST DOUBLE of libkrexregion's joining API (krex_join,
 * krex_gate_wait, krex_gate_wait_contexts, krex_gate_parked, krex_gate_pass,
 * krex_gate_ctx_making, krex_queue_cap, krex_queue_time_us,
 * krex_drain_timeout_ms, krex_leave) for the gate's CPU tests,
 * until they run against the real libregion and krexd.  Never shipped.
 *
 * KREX_FAKE_GATE names a file holding struct fake_page; fakegate(1) (this
 * directory) closes and opens the gate in it and waits for drain acks,
 * standing in for krexd.  Without KREX_FAKE_GATE, krex_join fails with
 * KREX_ENOKREXD, as with no krexd.
 */
#ifndef KREX_FAKE_REGION_H
#define KREX_FAKE_REGION_H

#include <stdint.h>

struct fake_page {
	uint32_t closed;     /* 1 while the gate is closed (futex word) */
	uint32_t generation; /* bumped on close and open (futex word) */
	uint32_t alive;      /* 0: "krexd" is gone, gates fail open */
	uint32_t cap;        /* queue cap handed to joiners */
	uint32_t joins;      /* successful krex_join calls */
	uint32_t acks;       /* drain acknowledgements */
	uint32_t ack_gen;    /* generation of the last ack (futex word) */
	uint32_t ack_status; /* the drain callback's return value */
	uint64_t drain_us;   /* the last drain's duration */
	uint32_t waits;      /* krex_gate_wait calls that waited */
	uint32_t queue_us;   /* queue time handed to joiners */
};

#endif /* KREX_FAKE_REGION_H */
