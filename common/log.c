/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c - logging to stderr or syslog with levels and rate limiting.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "timeutil.h"

static const char *log_ident = "krex";
static enum log_level log_level = LOG_LVL_WARN;
static enum log_dest log_dest = LOG_TO_STDERR;
static int log_journal;

int log_stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char extra;

	/* systemd.exec(5): JOURNAL_STREAM=DEV:INODE names the stream of the
	 * service's stderr; it holds only while fd 2 is still that stream (a
	 * child whose stderr was redirected inherits the variable). */
	if (!e || sscanf(e, "%llu:%llu%c", &dev, &ino, &extra) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(const char *ident, enum log_level level, enum log_dest dest)
{
	log_ident = ident ? ident : "krex";
	log_level = level;
	log_dest = dest;
	log_journal = dest == LOG_TO_STDERR && log_stderr_is_journal();
	if (dest == LOG_TO_SYSLOG)
		openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

int log_parse_level(const char *s)
{
	static const char *const names[] = {"none", "error", "warn", "info", "debug"};
	unsigned i;

	if (!s || !*s)
		return -1;
	if (s[0] >= '0' && s[0] <= '4' && s[1] == '\0')
		return s[0] - '0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

/*
 * The flood limit, whatever the caller: at most LOG_BURST lines per second;
 * past it lines are counted, and the next second's first line says how many
 * were suppressed.  Not thread-safe across threads that log at once (krexd
 * logs from one thread; a lost count in a library is harmless).
 */
#define LOG_BURST 1000

/* A log line is one line: control characters (a newline in a label or a
 * path could forge a line of its own) become '?'. */
static void log_clean(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static void log_emit(enum log_level level, char *buf)
{
	static const int prio[] = {LOG_ERR, LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
	static const char *const tag[] = {"", "error", "warning", "info", "debug"};

	log_clean(buf);
	if (log_dest == LOG_TO_SYSLOG)
		syslog(prio[level], "%s", buf);
	else if (log_journal)
		/* sd-daemon(3) prefix: the journal takes the priority from it
		 * and names the program itself. */
		fprintf(stderr, "<%d>%s: %s\n", prio[level], tag[level], buf);
	else
		fprintf(stderr, "%s: %s: %s\n", log_ident, tag[level], buf);
}

void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	static uint64_t win_ns;
	static unsigned in_win, suppressed;
	uint64_t now;
	char buf[1024];
	int saved = errno;

	if (level == LOG_LVL_NONE || level > log_level)
		return;
	now = time_now_ns();
	if (now - win_ns >= NS_PER_S) {
		win_ns = now;
		in_win = 0;
		if (suppressed) {
			snprintf(
			        buf, sizeof(buf),
			        "%u log messages suppressed in the last second (more than %d a second)",
			        suppressed, LOG_BURST);
			suppressed = 0;
			log_emit(LOG_LVL_WARN, buf);
		}
	}
	if (in_win >= LOG_BURST) {
		suppressed++;
		errno = saved;
		return;
	}
	in_win++;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_emit(level, buf);
	errno = saved;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

int log_ratelimit(uint64_t *last_ns, uint64_t interval_ns)
{
	uint64_t now = time_now_ns();

	if (*last_ns && now - *last_ns < interval_ns)
		return 0;
	*last_ns = now;
	return 1;
}
