/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex-keepconn.c - drives libregion's kept connection (the connection a
 * process keeps open to krexd between its regions) for krexd-keepconn.sh.
 *
 *	krex-keepconn STEP...
 *
 *	region       krex_region_begin + krex_region_end; prints "region ID OUTCOME"
 *	             or "region error CODE TEXT"
 *	signed       the same with krex_region_end_signed; prints "signed ID LEN"
 *	             (LEN: the signed form's length, 0 with why) or the error
 *	socket PATH  set KREX_SOCKET to PATH (the next region goes to that krexd)
 *	mark FILE    create FILE (tells the test this point is reached)
 *	wait FILE    wait (at most 60 s) until FILE exists
 *	fork         a child does one region and exits; prints "child RC PID"
 *	clobber      close every socket this process holds and put a pipe's
 *	             write end on each of their fd numbers (as an application
 *	             that closes fds it does not know and reuses the numbers)
 *	check        prints "clobber kept N" when the pipe is still on each of
 *	             those numbers and can be written, "clobber lost N" if not
 *
 * Exit status 0 when every step worked, 1 when a region failed, 2 on a
 * usage or system error.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "krex/region.h"

#define MAX_CLOBBER 64

static int clobbered[MAX_CLOBBER], nclobbered;
static ino_t pipe_ino;

static int do_region(const char *tag, int want_signed)
{
	struct krex_region_opts o = KREX_REGION_OPTS_INIT;
	struct krex_certificate c;
	char buf[8192], why[256];
	int rc;

	o.timeout_ms = 30000;
	rc = krex_region_begin(&o);
	if (rc == KREX_OK)
		rc = want_signed ? krex_region_end_signed(&c, buf, sizeof(buf), why, sizeof(why))
		                 : krex_region_end(&c);
	if (rc != KREX_OK) {
		printf("%s error %d %s\n", tag, rc, krex_strerror(rc));
		return 1;
	}
	if (want_signed)
		printf("%s %llu %zu%s%s\n", tag, (unsigned long long)c.region_id, strlen(buf),
		       buf[0] ? "" : " ", buf[0] ? "" : why);
	else
		printf("%s %llu %s\n", tag, (unsigned long long)c.region_id,
		       krex_outcome_name(c.outcome));
	return 0;
}

static int wait_file(const char *path)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	int i;

	for (i = 0; i < 6000; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "krex-keepconn: %s did not appear\n", path);
	return 2;
}

static int clobber(void)
{
	char link[64], target[256];
	struct dirent *d;
	struct stat st;
	int p[2], fds[MAX_CLOBBER], n = 0, i, fd;
	ssize_t len;
	DIR *dir;

	if (pipe(p) < 0)
		return 2;
	dir = opendir("/proc/self/fd");
	if (!dir)
		return 2;
	while ((d = readdir(dir)) && n < MAX_CLOBBER) {
		fd = atoi(d->d_name);
		if (fd <= 2 || fd == dirfd(dir))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len > 0 && (target[len] = '\0', strncmp(target, "socket:", 7) == 0))
			fds[n++] = fd;
	}
	closedir(dir);
	for (i = 0; i < n; i++) {
		close(fds[i]);
		if (dup2(p[1], fds[i]) < 0)
			return 2;
		clobbered[nclobbered++] = fds[i];
	}
	if (fstat(p[1], &st) < 0)
		return 2;
	pipe_ino = st.st_ino;
	printf("clobbered %d\n", n);
	return 0;
}

static int check(void)
{
	struct stat st;
	int i, lost = 0;

	for (i = 0; i < nclobbered; i++)
		if (fstat(clobbered[i], &st) < 0 || st.st_ino != pipe_ino ||
		    write(clobbered[i], "x", 1) != 1)
			lost++;
	printf("clobber %s %d\n", lost ? "lost" : "kept", lost ? lost : nclobbered);
	return lost ? 1 : 0;
}

int main(int argc, char **argv)
{
	int i, rc = 0, r, status;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "region"))
			r = do_region("region", 0);
		else if (!strcmp(argv[i], "signed"))
			r = do_region("signed", 1);
		else if (!strcmp(argv[i], "socket") && i + 1 < argc)
			r = setenv("KREX_SOCKET", argv[++i], 1) == 0 ? 0 : 2;
		else if (!strcmp(argv[i], "mark") && i + 1 < argc) {
			FILE *f = fopen(argv[++i], "w");
			r = f ? 0 : 2;
			if (f)
				fclose(f);
		} else if (!strcmp(argv[i], "wait") && i + 1 < argc)
			r = wait_file(argv[++i]);
		else if (!strcmp(argv[i], "fork")) {
			fflush(stdout);
			pid = fork();
			if (pid < 0)
				return 2;
			if (pid == 0)
				_exit(do_region("childregion", 0));
			if (waitpid(pid, &status, 0) < 0)
				return 2;
			r = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
			printf("child %d %d\n", r, (int)pid);
		} else if (!strcmp(argv[i], "clobber"))
			r = clobber();
		else if (!strcmp(argv[i], "check"))
			r = check();
		else {
			fprintf(stderr, "krex-keepconn: bad step %s\n", argv[i]);
			return 2;
		}
		if (r > rc)
			rc = r;
	}
	return rc;
}
