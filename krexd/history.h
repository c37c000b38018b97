/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * history.h - what happened: the last regions' certificates in memory (krex
 * log), one Slurm step's regions in figures (the SPANK plugin's line at
 * step end), the region log (JSON lines) and the node's metrics for
 * Prometheus (a node_exporter textfile).  doc/admin.md "History, region
 * log, metrics".
 */
#ifndef KREXD_HISTORY_H
#define KREXD_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

struct krexd;
struct conn;

/* Degraded causes by class: the metrics' cause label (bounded cardinality). */
enum hist_cause {
	CAUSE_DRAIN = 0, /* a sibling did not acknowledge the drain in time, or its drain failed */
	CAUSE_FREEZE,    /* a sibling was not frozen */
	CAUSE_SUSPEND,   /* someone else suspended, resumed or killed a sibling */
	CAUSE_SETTLE,    /* the GPU did not settle within settle_timeout */
	CAUSE_CLOCKS,    /* power cap, thermal slowdown, a low SM clock */
	CAUSE_CLOCKS_UNKNOWN, /* NVML could not tell */
	CAUSE_FOREIGN,        /* processes on the GPU that are not participants */
	CAUSE_ISOLATION,      /* the CPU isolation or its undo */
	CAUSE_THAW,           /* a thaw failed (retried) */
	CAUSE_STATE_FILE,     /* the state file could not be written */
	CAUSE_EARLY_END,      /* ended before the grant */
	CAUSE_UNGATED,        /* a sibling that never joined the gate had a process on the GPU */
	CAUSE_OTHER,
	CAUSE_MAX
};

/* The cause classes of a certificate's note ("; "-separated causes): a bit per class. */
unsigned history_cause_classes(const char *note);
const char *history_cause_name(int cause);

/* Start (the writer thread when a file is configured) with k->cfg; the eventfd to watch
 * or -1 (no thread). */
int history_init(struct krexd *k);
/* After a reload: history size, files.  reopen: close and open the region log again. */
void history_reconfigure(struct krexd *k, int reopen);
/* A region that was granted (or entered: it closed gates) ended; e is its entry without seq. */
void history_region_end(struct krexd *k, struct proto_log_entry *e, int granted);
/* A request left the queue without entering: timed out (timeout), or given up. */
void history_queue_end(struct krexd *k, int timeout);
/* A region's wait for siblings' contexts being made (ctx_defer) ended. */
void history_ctx_defer(uint64_t wait_ns);
/* Metrics due: build and hand them to the writer. */
void history_tick(struct krexd *k, uint64_t now);
uint64_t history_next_deadline(struct krexd *k);
void history_fini(struct krexd *k);

/* The requests (conn.c). */
void history_log(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_log *q);
void history_summary(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_summary *q);

/* One step's figures as uid may see them (root: every uid's); zeros for an unknown step. */
void history_step_summary(uid_t uid, uint32_t job, uint32_t step, struct proto_summary_reply *r);

/* The metrics text as it would be written now (malloc'd, NUL-terminated; *len set). */
char *history_metrics_text(struct krexd *k, size_t *len);

#endif /* KREXD_HISTORY_H */
