/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * logwriter.c - the region log and metrics file writer thread (logwriter.h).
 *
 * Two line buffers: the loop appends to one under the mutex (a memcpy), the
 * thread swaps it for its empty one and writes without the mutex.  Nothing
 * the thread does (open, write, rename, a disk that hangs) holds the mutex,
 * so the loop never waits for a disk.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "log.h"
#include "logwriter.h"
#include "proc.h"

#define LW_MSGS 8

struct lw_msg {
	int level;
	char text[400];
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	int running, stop, done, efd;
	char *buf; /* the loop's side */
	size_t len;
	char *metrics; /* latest metrics text not yet written */
	size_t mlen;
	int reopen;
	char log_path[256], metrics_path[256];
	uint64_t max;
	unsigned keep;
	uint64_t dropped, errors;
	struct lw_msg msg[LW_MSGS];
	unsigned nmsg, msg_lost;
} lw = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .efd = -1};

/* Post a message for the loop to log (the thread does not log itself). */
static void __attribute__((format(printf, 2, 3))) lw_post(int level, const char *fmt, ...)
{
	uint64_t one = 1;
	va_list ap;

	pthread_mutex_lock(&lw.mu);
	if (lw.nmsg < LW_MSGS) {
		lw.msg[lw.nmsg].level = level;
		va_start(ap, fmt);
		vsnprintf(lw.msg[lw.nmsg].text, sizeof(lw.msg[0].text), fmt, ap);
		va_end(ap);
		lw.nmsg++;
	} else
		lw.msg_lost++;
	pthread_mutex_unlock(&lw.mu);
	(void)!write(lw.efd, &one, sizeof(one));
}

void lw_messages(void)
{
	struct lw_msg m[LW_MSGS];
	unsigned n, lost, i;
	uint64_t v;

	(void)!read(lw.efd, &v, sizeof(v));
	pthread_mutex_lock(&lw.mu);
	n = lw.nmsg;
	lost = lw.msg_lost;
	memcpy(m, lw.msg, n * sizeof(m[0]));
	lw.nmsg = lw.msg_lost = 0;
	pthread_mutex_unlock(&lw.mu);
	for (i = 0; i < n; i++)
		log_msg(m[i].level, "%s", m[i].text);
	if (lost)
		log_warn("region log writer: %u more message(s) not shown", lost);
}

/* ---- the thread's side ---- */

struct lw_file {
	int fd;
	uint64_t size;
	int failing;   /* the last open or write failed: said once, said again when it works */
	uint64_t lost; /* lines lost while failing */
	char path[256];
};

static void lw_close(struct lw_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

static void lw_fail(struct lw_file *f, const char *what, size_t lines)
{
	pthread_mutex_lock(&lw.mu);
	lw.errors++;
	lw.dropped += lines;
	pthread_mutex_unlock(&lw.mu);
	f->lost += lines;
	lw_close(f);
	if (!f->failing)
		lw_post(LOG_LVL_ERROR,
		        "region log %s: %s; its lines are dropped until it works again (logged once)",
		        f->path, what);
	f->failing = 1;
}

/* Open the region log (file_open_safe: a file of krexd's only); -1 with why. */
static int lw_open(struct lw_file *f, char *why, size_t len)
{
	struct stat st;
	char dir[256], *slash;

	if (f->fd >= 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s", f->path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir_p(dir, 0755);
	}
	f->fd = file_open_safe(f->path, O_APPEND | O_CREAT, 0640, why, len);
	if (f->fd < 0)
		return -1;
	f->size = fstat(f->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	return 0;
}

/* path.(keep-1) -> path.keep, ..., path -> path.1 (keep 0: path is removed). */
static void lw_rotate(struct lw_file *f, unsigned keep)
{
	char from[300], to[300];
	unsigned i;

	lw_close(f);
	if (!keep) {
		unlink(f->path);
		return;
	}
	for (i = keep; i > 1; i--) {
		snprintf(from, sizeof(from), "%s.%u", f->path, i - 1);
		snprintf(to, sizeof(to), "%s.%u", f->path, i);
		if (rename(from, to) < 0 && errno != ENOENT)
			lw_post(LOG_LVL_WARN, "region log: rename %s to %s: %s", from, to,
			        strerror(errno));
	}
	snprintf(to, sizeof(to), "%s.1", f->path);
	if (rename(f->path, to) < 0 && errno != ENOENT)
		lw_post(LOG_LVL_WARN, "region log: rename %s to %s: %s", f->path, to,
		        strerror(errno));
}

static size_t count_lines(const char *p, size_t n)
{
	const char *end = p + n, *q;
	size_t c = 0;

	while (p < end && (q = memchr(p, '\n', (size_t)(end - p)))) {
		c++;
		p = q + 1;
	}
	return c;
}

/* The bytes of the whole lines at p (n bytes) that fit in room; 0 when the first does not. */
static size_t lines_fitting(const char *p, size_t n, size_t room)
{
	const char *nl;

	if (n <= room)
		return n;
	nl = memrchr(p, '\n', room);
	return nl ? (size_t)(nl - p) + 1 : 0;
}

/* Write n bytes of whole lines; a file passes max only with a single line longer than max. */
static void lw_write_lines(struct lw_file *f, const char *p, size_t n, uint64_t max, unsigned keep)
{
	size_t off = 0, piece, cut, room;
	char why[400];
	ssize_t w;

	while (off < n) {
		if (lw_open(f, why, sizeof(why)) < 0) {
			lw_fail(f, why, count_lines(p + off, n - off));
			return;
		}
		room = 65536;
		if (max && max - (f->size < max ? f->size : max) < room)
			room = (size_t)(max - (f->size < max ? f->size : max));
		piece = lines_fitting(p + off, n - off, room);
		if (!piece && f->size) { /* full: rotate, then fill the new file */
			lw_rotate(f, keep);
			continue;
		}
		if (!piece) { /* one line longer than max: it goes alone */
			const char *nl = memchr(p + off, '\n', n - off);
			piece = nl ? (size_t)(nl - (p + off)) + 1 : n - off;
		}
		for (cut = 0; cut < piece;) {
			w = write(f->fd, p + off + cut, piece - cut);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				/* what was written of a line stays; the rest of the piece is lost */
				snprintf(why, sizeof(why), "write: %s",
				         strerror(w < 0 ? errno : ENOSPC));
				lw_fail(f, why, count_lines(p + off + cut, n - off - cut));
				return;
			}
			cut += (size_t)w;
			f->size += (uint64_t)w;
		}
		off += piece;
		if (f->failing) {
			lw_post(LOG_LVL_INFO, "region log %s: writing again (%llu line(s) lost)",
			        f->path, (unsigned long long)f->lost);
			f->failing = 0;
			f->lost = 0;
		}
	}
}

/*
 * The metrics file's temporary, made new (O_EXCL).  One left there is
 * removed first only when it is krexd's own (a regular file of its uid with
 * one link: a crash between the write and the rename); anything else in its
 * place (another user's file, a FIFO, a link) is refused, and why says so.
 */
static int lw_metrics_tmp(const char *tmp, char *why, size_t len)
{
	struct stat st;
	int fd;

	fd = file_open_safe(tmp, O_CREAT | O_EXCL, 0644, why, len);
	if (fd >= 0 || errno != EEXIST)
		return fd;
	if (lstat(tmp, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1 || unlink(tmp) < 0)
		return -1; /* why says what is there */
	return file_open_safe(tmp, O_CREAT | O_EXCL, 0644, why, len);
}

static void lw_write_metrics(const char *path, const char *text, size_t n, int *failing)
{
	char tmp[300], why[400] = "";
	size_t off = 0;
	ssize_t w;
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path); /* node_exporter reads *.prom only */
	fd = lw_metrics_tmp(tmp, why, sizeof(why));
	if (fd < 0)
		err = errno ? errno : EPERM;
	while (!err && off < n) {
		w = write(fd, text + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			err = w < 0 ? errno : ENOSPC;
		else
			off += (size_t)w;
	}
	if (fd >= 0 && !err && fchmod(fd, 0644) < 0)
		err = errno;
	if (fd >= 0 && close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(tmp, path) < 0)
		err = errno;
	if (err) {
		if (fd >= 0)
			unlink(tmp); /* ours: made above */
		pthread_mutex_lock(&lw.mu);
		lw.errors++;
		pthread_mutex_unlock(&lw.mu);
		if (!why[0])
			snprintf(why, sizeof(why), "%s", strerror(err));
		if (!*failing)
			lw_post(LOG_LVL_ERROR,
			        "metrics file %s: %s; tried again at each update (logged once)",
			        path, why);
		*failing = 1;
	} else if (*failing) {
		lw_post(LOG_LVL_INFO, "metrics file %s: written again", path);
		*failing = 0;
	}
}

static void *lw_main(void *arg)
{
	struct lw_file f = {.fd = -1};
	char *mine = malloc(LW_BUFFER), *t, *metrics, mpath[256];
	size_t n, mlen;
	uint64_t max;
	unsigned keep;
	int reopen, stop, mfail = 0;

	proc_thread_normal(); /* not krexd's real-time priority */
	(void)arg;
	pthread_mutex_lock(&lw.mu);
	for (;;) {
		while (!lw.stop && !lw.len && !lw.metrics && !lw.reopen)
			pthread_cond_wait(&lw.cv, &lw.mu);
		/* take the loop's lines: swap the buffers */
		t = lw.buf;
		lw.buf = mine;
		mine = t;
		n = lw.len;
		lw.len = 0;
		metrics = lw.metrics;
		mlen = lw.mlen;
		lw.metrics = NULL;
		reopen = lw.reopen;
		lw.reopen = 0;
		stop = lw.stop;
		max = lw.max;
		keep = lw.keep;
		snprintf(mpath, sizeof(mpath), "%s", lw.metrics_path);
		if (strcmp(f.path, lw.log_path)) {
			reopen = 1;
			snprintf(f.path, sizeof(f.path), "%s", lw.log_path);
			f.failing = 0;
		}
		pthread_mutex_unlock(&lw.mu);

		if (reopen)
			lw_close(&f);
		if (n && f.path[0])
			lw_write_lines(&f, mine, n, max, keep);
		if (metrics && mpath[0])
			lw_write_metrics(mpath, metrics, mlen, &mfail);
		free(metrics);

		pthread_mutex_lock(&lw.mu);
		if (stop && !lw.len && !lw.metrics)
			break;
	}
	lw.done = 1;
	pthread_mutex_unlock(&lw.mu);
	lw_close(&f);
	free(mine);
	return NULL;
}

/* ---- the loop's side ---- */

int lw_start(void)
{
	int err;

	if (lw.running)
		return lw.efd;
	lw.buf = malloc(LW_BUFFER);
	lw.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!lw.buf || lw.efd < 0)
		return -1;
	err = pthread_create(&lw.th, NULL, lw_main, NULL);
	if (err) {
		errno = err;
		return -1;
	}
	lw.running = 1;
	return lw.efd;
}

void lw_config(const char *log_path, uint64_t max, unsigned keep, const char *metrics_path)
{
	pthread_mutex_lock(&lw.mu);
	snprintf(lw.log_path, sizeof(lw.log_path), "%s", log_path);
	snprintf(lw.metrics_path, sizeof(lw.metrics_path), "%s", metrics_path);
	lw.max = max;
	lw.keep = keep;
	pthread_mutex_unlock(&lw.mu);
}

void lw_reopen(void)
{
	pthread_mutex_lock(&lw.mu);
	lw.reopen = 1;
	pthread_cond_signal(&lw.cv);
	pthread_mutex_unlock(&lw.mu);
}

int lw_line(const char *line, size_t n)
{
	int rc = 0;

	pthread_mutex_lock(&lw.mu);
	if (!lw.running || lw.len + n + 1 > LW_BUFFER) {
		lw.dropped++;
		rc = -1;
	} else {
		memcpy(lw.buf + lw.len, line, n);
		lw.buf[lw.len + n] = '\n';
		lw.len += n + 1;
		pthread_cond_signal(&lw.cv);
	}
	pthread_mutex_unlock(&lw.mu);
	return rc;
}

void lw_metrics(char *text, size_t n)
{
	char *old;

	pthread_mutex_lock(&lw.mu);
	if (!lw.running) {
		pthread_mutex_unlock(&lw.mu);
		free(text);
		return;
	}
	old = lw.metrics;
	lw.metrics = text;
	lw.mlen = n;
	pthread_cond_signal(&lw.cv);
	pthread_mutex_unlock(&lw.mu);
	free(old);
}

void lw_counts(uint64_t *dropped, uint64_t *errors)
{
	pthread_mutex_lock(&lw.mu);
	*dropped = lw.dropped;
	*errors = lw.errors;
	pthread_mutex_unlock(&lw.mu);
}

void lw_stop(unsigned wait_ms)
{
	struct timespec ts;
	int done = 0;

	if (!lw.running)
		return;
	pthread_mutex_lock(&lw.mu);
	lw.stop = 1;
	pthread_cond_signal(&lw.cv);
	pthread_mutex_unlock(&lw.mu);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += wait_ms / 1000;
	ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	done = pthread_timedjoin_np(lw.th, NULL, &ts) == 0;
	lw_messages();
	if (!done)
		log_warn(
		        "region log writer: still writing after %u ms (a hung disk?); not waiting for it",
		        wait_ms);
	lw.running = 0;
}
