/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state.c - the state file (see state.h for the line format).
 *
 * Written whole to a temp file and renamed over the old one, so a reader
 * sees either the old or the new list, never half of one.  No fsync: the
 * file guards against krexd dying (its writes are in the page cache and
 * survive that); after a power loss no process is frozen anyway.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "defs.h"
#include "log.h"
#include "state.h"
#include "timeutil.h"

struct state_retry {
	char *line;
	char who[96];
	uint64_t group;
	unsigned tries;
	uint64_t next_ns, step_ns;
	struct state_retry *next;
};

#define STATE_MAX_HANDLERS 8

static struct {
	char kind[32];
	state_undo_fn fn;
} handlers[STATE_MAX_HANDLERS];
static int nhandlers;

int state_register_undo(const char *kind, state_undo_fn fn)
{
	int i;

	for (i = 0; i < nhandlers; i++)
		if (!strcmp(handlers[i].kind, kind)) {
			handlers[i].fn = fn;
			return 0;
		}
	if (nhandlers == STATE_MAX_HANDLERS ||
	    xstrcpy(handlers[nhandlers].kind, sizeof(handlers[0].kind), kind) < 0) {
		errno = ENOSPC;
		return -1;
	}
	handlers[nhandlers++].fn = fn;
	return 0;
}

int state_init(struct state *st, const char *run_dir)
{
	memset(st, 0, sizeof(*st));
	st->on_disk = 1; /* unknown: the first sync rewrites it */
	if (xsnprintf(st->path, sizeof(st->path), "%s/%s", run_dir, KREX_STATE_NAME) < 0 ||
	    xsnprintf(st->tmp, sizeof(st->tmp), "%s.tmp", st->path) < 0)
		return -1;
	return 0;
}

void state_free(struct state *st)
{
	struct state_retry *r;
	size_t i;

	while ((r = st->retries)) {
		st->retries = r->next;
		free(r->line);
		free(r);
	}

	for (i = 0; i < st->n; i++)
		free(st->lines[i]);
	free(st->lines);
	st->lines = NULL;
	st->n = st->cap = 0;
}

static state_undo_fn state_builtin; /* the built-in kinds' handler, from state_recover */

static state_undo_fn state_handler(const char *line, state_undo_fn builtin)
{
	size_t k = strcspn(line, " ");
	int i;

	if ((k == 4 && !strncmp(line, "gate", 4)) || (k == 3 && !strncmp(line, "pid", 3)) ||
	    (k == 7 && (!strncmp(line, "cgroup1", 7) || !strncmp(line, "cgroup2", 7))))
		return builtin;
	for (i = 0; i < nhandlers; i++)
		if (strlen(handlers[i].kind) == k && !strncmp(line, handlers[i].kind, k))
			return handlers[i].fn;
	return NULL;
}

/* Undo line (left by a previous krexd).  1 undone, 0 no handler, -1 failed (keep it). */
static int state_recover_line(const char *line, state_undo_fn builtin)
{
	state_undo_fn fn = state_handler(line, builtin);

	if (!fn) {
		log_warn("state: no handler for '%s' left by a previous krexd", line);
		return 0;
	}
	if (fn(line) == 0)
		return 1;
	log_warn("state: could not undo '%s' left by a previous krexd: %s; kept, retrying", line,
	         strerror(errno));
	return -1;
}

int state_recover(struct state *st, state_undo_fn builtin)
{
	char line[STATE_LINE_MAX], **all = NULL, **grown;
	FILE *f = fopen(st->path, "re");
	size_t nall = 0, cap = 0, i;
	int n = 0, rc = 0;

	state_builtin = builtin;
	if (!f && errno != ENOENT)
		return -1;
	state_free(st);
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (nall == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(all, cap * sizeof(*all));
			if (!grown)
				break;
			all = grown;
		}
		if (!(all[nall] = strdup(line)))
			break;
		nall++;
	}
	if (f && !feof(f))
		rc = -1; /* out of memory: what was read is undone, the file is kept */
	if (f)
		fclose(f);
	/* Newest first, as a region unwinds: a child stopped after its parent is
	 * continued before it (proctree.h), isolation before the thaw before the gates. */
	for (i = nall; i-- > 0;) {
		int r = state_recover_line(all[i], builtin);
		n += r == 1;
		if (r >= 0) {
			free(all[i]);
			all[i] = NULL;
		}
	}
	/* the ones kept, in their order, retried */
	for (i = 0; i < nall; i++)
		if (all[i] && state_add(st, "%s", all[i]) == 0)
			state_retry_add(st, all[i], 0, "left by a previous krexd", time_now_ns());
	for (i = 0; i < nall; i++)
		free(all[i]);
	free(all);
	if (rc < 0)
		return -1;
	st->dirty = 1;
	if (state_sync(st) < 0)
		return -1;
	return n;
}

int state_add(struct state *st, const char *fmt, ...)
{
	char buf[STATE_LINE_MAX];
	va_list ap;
	char **nl;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(buf) || strchr(buf, '\n')) {
		errno = EINVAL;
		return -1;
	}
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16;
		nl = realloc(st->lines, cap * sizeof(*nl));
		if (!nl)
			return -1;
		st->lines = nl;
		st->cap = cap;
	}
	st->lines[st->n] = strdup(buf);
	if (!st->lines[st->n])
		return -1;
	st->n++;
	st->dirty = 1;
	return 0;
}

void state_drop(struct state *st, const char *line)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (!strcmp(st->lines[i], line)) {
			free(st->lines[i]);
			memmove(&st->lines[i], &st->lines[i + 1], (st->n - i - 1) * sizeof(char *));
			st->n--;
			st->dirty = 1;
			return;
		}
}

/* A line that must be on disk before its change ("gate" lines need not be). */
static int state_eager(const struct state *st)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (strncmp(st->lines[i], "gate ", 5))
			return 1;
	return 0;
}

int state_sync(struct state *st)
{
	uint64_t t0;
	FILE *f;
	size_t i;
	int fd, err;

	if (!st->dirty || (!st->on_disk && !state_eager(st)))
		return 0;
	t0 = time_now_ns();
	st->writes++;
	fd = open(st->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -1;
	}
	for (i = 0; i < st->n; i++)
		fprintf(f, "%s\n", st->lines[i]);
	if (fflush(f) != 0 || ferror(f)) {
		err = errno;
		fclose(f);
		unlink(st->tmp);
		errno = err;
		return -1;
	}
	fclose(f);
	if (rename(st->tmp, st->path) < 0)
		return -1;
	st->dirty = 0;
	st->on_disk = st->n;
	st->write_ns += time_now_ns() - t0;
	return 0;
}

size_t state_count(const struct state *st)
{
	return st->n;
}

/* ---- retries of failed undos ---- */

int state_retry_add(struct state *st, const char *line, uint64_t group, const char *who,
                    uint64_t now)
{
	struct state_retry *r = calloc(1, sizeof(*r)), **pp;

	if (!r || !(r->line = strdup(line))) {
		free(r);
		errno = ENOMEM;
		return -1;
	}
	snprintf(r->who, sizeof(r->who), "%s", who ? who : "");
	r->group = group;
	r->step_ns = 10 * NS_PER_MS;
	r->next_ns = now + r->step_ns;
	for (pp = &st->retries; *pp; pp = &(*pp)->next)
		;
	*pp = r;
	return 0;
}

int state_retry_run(struct state *st, uint64_t now)
{
	struct state_retry **pp = &st->retries, *r;
	uint64_t held = 0, until = 0;
	int left = 0, changed = 0;
	state_undo_fn fn;

	while ((r = *pp)) {
		if (held && r->group == held) {
			/* Behind a line of its group still failing: due no earlier. */
			if (r->next_ns < until)
				r->next_ns = until;
			pp = &r->next;
			left++;
			continue;
		}
		if (r->next_ns > now) {
			held = r->group;
			until = r->next_ns;
			pp = &r->next;
			left++;
			continue;
		}
		fn = state_handler(r->line, state_builtin);
		r->tries++;
		if (fn && fn(r->line) == 0) {
			log_info("state: '%s' (%s) undone on retry %u", r->line, r->who, r->tries);
			state_drop(st, r->line);
			changed = 1;
		} else if (r->tries >= STATE_RETRY_MAX || !fn) {
			log_error(
			        "state: '%s' (%s) still not undone after %u retries: %s; kept in %s for the next krexd start",
			        r->line, r->who, r->tries, fn ? strerror(errno) : "no handler",
			        st->path);
		} else {
			r->step_ns = r->step_ns * 2 > 5 * NS_PER_S ? 5 * NS_PER_S : r->step_ns * 2;
			r->next_ns = now + r->step_ns;
			held = r->group;
			until = r->next_ns;
			pp = &r->next;
			left++;
			continue;
		}
		*pp = r->next;
		free(r->line);
		free(r);
	}
	if (changed && state_sync(st) < 0)
		log_error("state file %s: %s", st->path, strerror(errno));
	return left;
}

uint64_t state_retry_next(const struct state *st)
{
	const struct state_retry *r;
	uint64_t best = 0;

	for (r = st->retries; r; r = r->next)
		if (!best || r->next_ns < best)
			best = r->next_ns;
	return best;
}

void state_retry_flush(struct state *st, uint64_t now)
{
	struct state_retry *r;

	for (r = st->retries; r; r = r->next)
		r->next_ns = now;
	state_retry_run(st, now);
}

int state_retry_pending(const struct state *st, const char *prefix)
{
	const struct state_retry *r;
	int n = 0;

	for (r = st->retries; r; r = r->next)
		n += !prefix || !strncmp(r->line, prefix, strlen(prefix));
	return n;
}

int state_retry_cancel(struct state *st, const char *line)
{
	struct state_retry **pp, *r;

	for (pp = &st->retries; (r = *pp); pp = &r->next)
		if (!strcmp(r->line, line)) {
			*pp = r->next;
			log_info("state: '%s' (%s) made again: no longer retried", r->line, r->who);
			state_drop(st, r->line);
			free(r->line);
			free(r);
			return 1;
		}
	return 0;
}
