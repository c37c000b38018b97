/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * logwriter.h - krexd's writer thread (its other thread is sign.c's
 * signer): it writes the region log (JSON lines, size-based rotation) and
 * the metrics file (tmp + rename), so that a slow or full disk never stalls
 * the epoll loop.  The loop hands over
 * whole lines into a bounded buffer (lines that do not fit are dropped and
 * counted) and the latest metrics text; the thread posts what it has to say
 * (errors, recoveries) to a mailbox and wakes the loop through an eventfd,
 * and the loop logs it (lw_messages).  doc/admin.md "History, region log,
 * metrics".
 */
#ifndef KREXD_LOGWRITER_H
#define KREXD_LOGWRITER_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of lines the loop may have handed over and the thread not written yet. */
#define LW_BUFFER (1u << 20)

/* Start the thread; returns the eventfd the loop watches (EPOLLIN), or -1 with errno. */
int lw_start(void);

/* The files: region log path ("" none), rotation size (0 never), files kept, metrics path
 * ("" none).  A changed region log path is opened anew. */
void lw_config(const char *log_path, uint64_t max, unsigned keep, const char *metrics_path);

/* Close and open the region log again (SIGHUP: logrotate moved it). */
void lw_reopen(void);

/* One line (without its newline).  0, or -1 when the buffer is full (the line is dropped). */
int lw_line(const char *line, size_t n);

/* The metrics text (malloc'd; the thread frees it), replacing one not written yet. */
void lw_metrics(char *text, size_t n);

/* Counters for the metrics: lines dropped (buffer full or a write error), write errors. */
void lw_counts(uint64_t *dropped, uint64_t *errors);

/* Read the eventfd and log what the thread posted. */
void lw_messages(void);

/* Write what is left and stop, waiting at most wait_ms for the thread (a hung disk). */
void lw_stop(unsigned wait_ms);

#endif /* KREXD_LOGWRITER_H */
