/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex_cmd.h - the krex CLI's subcommands and shared helpers.
 */
#ifndef KREX_CMD_H
#define KREX_CMD_H

#include <stdarg.h>
#include <sys/types.h>

int cmd_run(int argc, char **argv);
int cmd_region(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_release(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_verify(int argc, char **argv);

/* One line "krex: ..." on stderr, exit 1 (die) or 2 (die_usage). */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* fork + exec argv, forwarding INT/TERM/HUP/QUIT/USR1/USR2 to it. */
pid_t spawn_command(char **argv);

/*
 * Forward INT/TERM/HUP/QUIT/USR1/USR2 that a process sent us (kill(2), not
 * the terminal, which signals the whole foreground process group) to pid.
 */
void forward_signals(pid_t pid);

/*
 * The krexd (pid krexd, socket sock) that root's job registered with died:
 * undo what its state file says it did to root's job (root and below).
 * 0, or -1 when something could not be undone (said on stderr).
 */
int run_rescue(pid_t root, pid_t krexd, const char *sock);

/* Wait for child; its exit status, or 128 + signal. */
int wait_child(pid_t child);

/*
 * Find krexd for `krex run`: $KREX_SOCKET if set (an error if nothing answers
 * there), else the system krexd, else this user's private krexd, started if
 * needed.  Writes the socket path into path and returns a connected fd.
 */
int krexd_find_or_start(char *path, size_t len);

/* Connect to the krexd krexd_locate() names, or die saying none answers. */
int krex_cli_connect(char *path, size_t len);

/*
 * Find the krexd clients talk to: $KREX_SOCKET, else the system krexd if it
 * answers, else this user's private krexd if it answers (then KREX_SOCKET is
 * set to it for libkrexregion).  Writes the path to try into path.
 */
void krexd_locate(char *path, size_t len);

/* The private krexd's run directory for this user (not checked). */
int embedded_rundir(char *buf, size_t len);

/*
 * Check that rundir is a private directory of ours (0700, owned by us, not a
 * link), making it first when create is set.  Dies when it is not; returns -1
 * when it does not exist and create is 0, else 0.
 */
int embedded_rundir_check(const char *rundir, int create);

#endif /* KREX_CMD_H */
