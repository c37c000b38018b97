/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_gpu.h - TEST DOUBLE.  The simulated GPU behind the fake libcuda.so.1
 * and libamdhip64.so used by make check on machines without a GPU.
 *
 * One simulated GPU is shared by every process of the machine (or of one
 * test: KREX_MOCK_GPU names the POSIX shared-memory object).  Each process
 * has a host-side "device": one worker thread that executes the process's
 * queued operations in submission order (streams are FIFO queues; one
 * process-wide FIFO keeps every stream's order and makes cross-stream
 * waits trivially satisfied).  A kernel takes the machine-wide device lock
 * only while its simulated time runs, so kernels of all processes execute
 * one at a time and a hog sibling really delays a victim.
 *
 * A process frozen while its worker holds the lock (mid-kernel) keeps every
 * other process waiting until it is thawed: that is exactly what KREX's
 * drain-before-freeze prevents.  A dead holder is detected (kill(pid, 0))
 * and its lock taken over.
 *
 * Event times are simulated device time: a kernel that follows other queued
 * work starts when the previous one ended (or when it got the lock, if
 * later) and ends exactly its duration later; an event records the end of
 * the work before it, or the time the worker reached it if the device was
 * idle.  So alone, event time = kernel duration + a few microseconds.
 */
#ifndef KREX_MOCK_GPU_H
#define KREX_MOCK_GPU_H

#include <stddef.h>
#include <stdint.h>

struct mock_stream {
	uint64_t last_seq; /* seq of the last op queued on it */
};

struct mock_event {
	uint64_t seq; /* op that records it; 0 = never recorded */
	uint64_t t_ns;
	int done;
};

enum mock_op_type { MOP_KERNEL, MOP_COPY, MOP_SET, MOP_EVENT, MOP_HOSTFN, MOP_NOP };

struct mock_op {
	enum mock_op_type type;
	uint64_t seq;
	uint64_t us; /* MOP_KERNEL: simulated duration */
	void *dst;   /* MOP_KERNEL: optional result word; MOP_COPY/SET target */
	const void *src;
	size_t n, elem; /* bytes (COPY), elements and element size (SET) */
	uint32_t value;
	struct mock_event *ev;
	void (*fn)(void *);
	void *arg;
	struct mock_op *next;
};

/* Queue op (copied) on stream s (NULL: the default stream); blocks while
 * the process has MOCK_QUEUE_MAX ops queued.  Returns its seq. */
uint64_t mock_submit(struct mock_stream *s, const struct mock_op *op);

/* Wait until every op up to seq has run. */
void mock_wait_seq(uint64_t seq);

/* Everything this process queued. */
void mock_sync_all(void);

/* Every op of stream s (NULL: default stream). */
void mock_sync_stream(struct mock_stream *s);

/* 1 if every op up to seq has run. */
int mock_done_seq(uint64_t seq);

/* Kernels run by every process on the simulated GPU. */
uint64_t mock_kernels_total(void);

#define MOCK_QUEUE_MAX 1024

#endif /* KREX_MOCK_GPU_H */
