/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c - logging to stderr or syslog with levels and rate limiting.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "timeutil.h"

static const char *log_ident = "krex";
static enum log_level log_level = LOG_LVL_WARN;
static enum log_dest log_dest = LOG_TO_STDERR;

void log_init(const char *ident, enum log_level level, enum log_dest dest)
{
	log_ident = ident ? ident : "krex";
	log_level = level;
	log_dest = dest;
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

/* A log line is one line: control characters (a newline in a label or a
 * path could forge a line of its own) become '?'. */
static void log_clean(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	static const int prio[] = {LOG_ERR, LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
	static const char *const tag[] = {"", "error", "warning", "info", "debug"};
	char buf[1024];
	int saved = errno;

	if (level == LOG_LVL_NONE || level > log_level)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_clean(buf);
	if (log_dest == LOG_TO_SYSLOG)
		syslog(prio[level], "%s", buf);
	else
		fprintf(stderr, "%s: %s: %s\n", log_ident, tag[level], buf);
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
