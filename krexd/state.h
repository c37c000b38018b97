/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state.h - the state file: every change krexd makes to other processes
 * (closed gate, frozen cgroup or pid, changed cpuset or affinity), written
 * before the change is made, so that a krexd killed in the middle can be
 * undone by the next one.
 *
 * One line per change, "KIND ARGS...":
 *	gate SLOT OWNER             a closed gate slot
 *	cgroup1 PATH                a frozen v1 freezer cgroup (absolute path)
 *	cgroup2 PATH                a frozen v2 cgroup (absolute path)
 *	pid PID                     a stopped process (SIGSTOP)
 *	OTHER ...                   handed to the undo handler registered for OTHER
 *	                            (the isolation work: cpuset, affinity)
 */
#ifndef KREXD_STATE_H
#define KREXD_STATE_H

#include <stddef.h>
#include <stdint.h>

#define STATE_LINE_MAX 1024

/* Undo one line; returns 0, or -1 (logged by the caller, the line is dropped). */
typedef int (*state_undo_fn)(const char *line);

struct state_retry;

struct state {
	char path[512];
	char tmp[520];
	char **lines;
	size_t n, cap;
	int dirty;
	size_t on_disk;              /* lines in the file now */
	struct state_retry *retries; /* undos that failed, retried in order */
	unsigned long writes;        /* files written (temp + rename), for the cost log */
	uint64_t write_ns;           /* time they took */
};

/* Retries of one failed undo: this many, the first after 10 ms, doubling up to 5 s. */
#define STATE_RETRY_MAX 12

int state_init(struct state *st, const char *run_dir);
void state_free(struct state *st);

/* Register the handler for lines whose first word is kind (a few at most). */
int state_register_undo(const char *kind, state_undo_fn fn);

/*
 * Read the file a previous krexd left and undo every line: built-in kinds
 * with builtin (gate, cgroup1, cgroup2, pid), others with registered handlers.
 * A line whose undo fails stays in the file and is retried (state_retry_add);
 * the others go.  Returns the number of lines undone, -1 on an I/O error.
 */
int state_recover(struct state *st, state_undo_fn builtin);

/* Add a line (not written until state_sync).  -1/ENOMEM. */
int state_add(struct state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Drop the first line equal to line (not written until state_sync). */
void state_drop(struct state *st, const char *line);

/*
 * Write the whole file (temp + rename) if anything changed.  "gate" lines
 * alone are not written: a starting krexd reopens every slot of the gate
 * page whatever the file says, so they ride along with the next line that
 * needs the file (a freeze), which keeps a region without siblings free of
 * file I/O.  0 or -1/errno.
 */
int state_sync(struct state *st);

/*
 * An undo of line failed (or must run again after one that failed): keep
 * line in the file and retry it from the event loop (state_retry_run),
 * with the handler for its kind, after 10 ms, then with a doubling delay.
 * Lines of one group (a region) are retried in the order given, and a
 * failed one holds back the rest of its group (a cpuset must be widened
 * before the affinity inside it can be restored).  who names the
 * participant in the log.  On success the line is dropped from the file;
 * after STATE_RETRY_MAX failures krexd stops retrying, logs it, and keeps
 * the line for the next krexd start.  0 or -1/ENOMEM.
 */
int state_retry_add(struct state *st, const char *line, uint64_t group, const char *who,
                    uint64_t now);

/* Run the retries that are due; returns how many are still waiting. */
int state_retry_run(struct state *st, uint64_t now);

/* Run every retry now, due or not (before a region changes anything). */
void state_retry_flush(struct state *st, uint64_t now);

/* Retries still waiting whose line starts with prefix (NULL: any). */
int state_retry_pending(const struct state *st, const char *prefix);

/*
 * The change of line is made again (a sibling frozen again while its thaw
 * is still retried): stop retrying it and drop the failed undo's copy of
 * the line (the new change has its own).  1 if it was being retried.
 */
int state_retry_cancel(struct state *st, const char *line);

/* When the next retry is due (0: none). */
uint64_t state_retry_next(const struct state *st);

/* Lines held now (tests, status). */
size_t state_count(const struct state *st);

#endif /* KREXD_STATE_H */
