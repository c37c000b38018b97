/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex - the KREX command line: run a command as a participant, run one in a
 * region, show krexd's state, end a region by force, stop a private krexd.
 *
 * Errors are one line on stderr and a non-zero exit: 2 for usage, 1 for
 * everything else; `run` and `region` otherwise exit with the command's status.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "conf.h"
#include "defs.h"
#include "krex/region.h"
#include "timeutil.h"
#include "krex_cmd.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "Usage: krex COMMAND [OPTIONS]\n"
	        "\n"
	        "  run [--gpus LIST] [--label NAME] [--no-gate] -- CMD [ARGS]\n"
	        "        run CMD as a KREX participant (starts a private krexd if none runs)\n"
	        "  region [--gpus LIST] [--max SECONDS] [--timeout SECONDS] [--json]\n"
	        "         [--cert FILE] [--unprotected] -- CMD [ARGS]\n"
	        "        run CMD inside one critical region and print its certificate\n"
	        "        (starts a private krexd too, unless --unprotected)\n"
	        "  status [--json] [--watch [--interval SECONDS]]\n"
	        "        participants, regions held and queued, per GPU (--watch: every second)\n"
	        "  log [--json] [--job JOB[.STEP]] [--since DURATION] [--outcome LIST] [--limit N]\n"
	        "        the last regions' certificates krexd keeps (yours; root: everyone's)\n"
	        "  release ID          end region ID by force (root, or its owner's user)\n"
	        "  stop                stop this user's private krexd (embedded mode)\n"
	        "  verify [--allow-expired] [--signer UID] [--socket PATH] [--json] FILE\n"
	        "        check a signed certificate (krex region --json) with munge\n"
	        "  version             print the version\n"
	        "\n"
	        "Environment: KREX_SOCKET (krexd's socket, default %s/%s), KREX_GPUS,\n"
	        "KREX_KREXD (krexd for embedded mode), KREX_GATE_LIB (the gate to preload).\n"
	        "See krex(1).\n",
	        KREX_DEFAULT_RUNDIR, KREX_SOCKET_NAME);
}

/* "krex: " fmt, then tail; exit with code. */
static __attribute__((noreturn)) void vdie(int code, const char *tail, const char *fmt, va_list ap)
{
	fprintf(stderr, "krex: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "%s", tail);
	exit(code);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(1, "\n", fmt, ap);
}

void die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(2, " (see krex --help)\n", fmt, ap);
}

int wait_child(pid_t child)
{
	int st;

	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

static pid_t forward_to;

static void forward_signal(int sig)
{
	if (forward_to > 0)
		kill(forward_to, sig);
}

static pid_t forward_sent_to;

/* Only what a process sent: the terminal's signals reach the whole process group. */
static void forward_sent(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (forward_sent_to > 0 && si && si->si_code != SI_KERNEL)
		kill(forward_sent_to, sig);
}

void forward_signals(pid_t pid)
{
	struct sigaction sa;
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	unsigned i;

	forward_sent_to = pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_sent;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

pid_t spawn_command(char **argv)
{
	struct sigaction sa;
	pid_t pid;
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	unsigned i;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "krex: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	forward_to = pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward_signal;
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	return pid;
}

/* The subcommands, each called with argv[0] = its name. */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
        {"run", cmd_run},         {"region", cmd_region}, {"status", cmd_status},
        {"release", cmd_release}, {"stop", cmd_stop},     {"log", cmd_log},
        {"verify", cmd_verify},
};

int main(int argc, char **argv)
{
	const char *cmd;
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("krex %s (protocol %d, API %d)\n", PACKAGE_VERSION, PROTO_VERSION,
		       krex_api_version());
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	die_usage("unknown command '%s'", cmd);
	return 2;
}
