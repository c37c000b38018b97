/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h - one logging module for krexd, the CLI and the libraries.
 *
 * krexd logs to stderr in the foreground and to syslog otherwise.  The
 * libraries that live inside a user's process (libregion, the gate) log to
 * stderr only when KREX_LOG asks for it, and never above debug per launch.
 */
#ifndef KREX_LOG_H
#define KREX_LOG_H

#include <stdarg.h>
#include <stdint.h>

enum log_level { LOG_LVL_NONE = 0, LOG_LVL_ERROR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

enum log_dest { LOG_TO_STDERR = 0, LOG_TO_SYSLOG };

/* Set the program name, the level and where messages go. */
void log_init(const char *ident, enum log_level level, enum log_dest dest);
void log_set_level(enum log_level level);

/* 1 when stderr is the systemd journal's stream ($JOURNAL_STREAM names fd
 * 2's device and inode): log_init then prefixes each stderr line with its
 * sd-daemon(3) priority, "<3>" .. "<7>". */
int log_stderr_is_journal(void);
enum log_level log_get_level(void);

/* Parse "none|error|warn|info|debug" or a digit; returns -1 if neither. */
int log_parse_level(const char *s);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level level, const char *fmt, va_list ap);

/*
 * Rate limiting for a repeating runtime error: returns 1 when a message for
 * *last_ns may be logged now (at most one per interval_ns) and updates it.
 */
int log_ratelimit(uint64_t *last_ns, uint64_t interval_ns);

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif /* KREX_LOG_H */
