/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex-jointest.c - drives krex_join()/krex_leave() for krex-squat.sh.
 *
 *	krex-jointest join          krex_join() once; prints "join N NAME"; exits 0
 *	                            unless a signal killed it
 *	krex-jointest hold SECS     join, sleep SECS (krexd may restart meanwhile:
 *	                            the drain thread re-joins), print "mapped M"
 *	                            (mappings of the run dir), leave, print
 *	                            "after_leave M"
 *	krex-jointest cycle N       N rounds of join, check the gate page is mapped,
 *	                            leave, check it is not, while a second thread
 *	                            calls krex_gate_wait() all along; then one
 *	                            more join and leave with no thread inside;
 *	                            prints "cycles N joined J mapped_after_leave M
 *	                            mapped_at_end E" (M: rounds after which a view
 *	                            a preempted thread still held stayed mapped, a
 *	                            matter of scheduling; E: views never unmapped)"
 *
 * The gate page is found in /proc/self/maps by the directory of KREX_SOCKET.
 */
#include "config.h"

#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krex/region.h"

static char rundir[4096];
static atomic_int stop;

/* Mappings of files under rundir. */
static int mapped(void)
{
	char line[8192];
	FILE *f = fopen("/proc/self/maps", "re");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, rundir))
			n++;
	fclose(f);
	return n;
}

static void *hammer(void *arg)
{
	unsigned i = 0;

	(void)arg;
	/* a yield now and then: under valgrind a thread that never makes a
	 * system call can keep the others from running at all */
	while (!atomic_load(&stop))
		if (krex_gate_wait() == 0 && ++i % 1024 == 0)
			sched_yield();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *sock = getenv("KREX_SOCKET");
	int i, n, rc, joined = 0, after = 0;
	char tmp[sizeof(rundir) - 1];
	pthread_t t;

	if (argc < 2 || !sock) {
		fprintf(stderr, "usage: KREX_SOCKET=... krex-jointest join | cycle N\n");
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "%s", sock);
	snprintf(rundir, sizeof(rundir), "%s/", dirname(tmp));
	if (!strcmp(argv[1], "join")) {
		rc = krex_join(NULL);
		printf("join %d %s\n", rc, krex_strerror(rc));
		krex_leave();
		return 0;
	}
	if (!strcmp(argv[1], "hold") && argc > 2) {
		rc = krex_join(NULL);
		printf("join %d %s\n", rc, krex_strerror(rc));
		fflush(stdout);
		sleep((unsigned)atoi(argv[2]));
		printf("mapped %d\n", mapped());
		krex_leave();
		printf("after_leave %d\n", mapped());
		return 0;
	}
	if (strcmp(argv[1], "cycle") || argc < 3)
		return 2;
	n = atoi(argv[2]);
	pthread_create(&t, NULL, hammer, NULL);
	for (i = 0; i < n; i++) {
		if (krex_join(NULL) == KREX_OK && mapped() > 0)
			joined++;
		krex_leave();
		if (mapped() != 0)
			after++;
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	/* No thread inside now: this leave unmaps every view still retired. */
	krex_join(NULL);
	krex_leave();
	printf("cycles %d joined %d mapped_after_leave %d mapped_at_end %d\n", n, joined, after,
	       mapped());
	return 0;
}
