/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex-hog - a GPU hog: launches kernels of ITERS work in a loop.
 *
 *	krex-hog ITERS [--sync] [--seconds S] [--counter FILE [--every MS]]
 *
 * Async (default): launches without waiting (the driver queues them, up to
 * its queue depth).  --sync: waits for each kernel.  Runs until killed
 * (SIGTERM/SIGINT end it cleanly) or S seconds.  --counter writes the number
 * of launches to FILE, every MS milliseconds (default 500) and at the end.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl_cuda.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void write_counter(const char *path, unsigned long n)
{
	char tmp[4096];
	FILE *f;

	if (!path || snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return;
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%lu\n", n);
	fclose(f);
	rename(tmp, path);
}

int main(int argc, char **argv)
{
	struct wl_kernel k;
	const char *counter = NULL;
	double seconds = 0, every = 500, t0, last;
	unsigned long n = 0;
	int sync = 0, i;
	long long iters;

	if (argc < 2) {
		fprintf(stderr,
		        "usage: krex-hog ITERS [--sync] [--seconds S] [--counter FILE [--every MS]]\n");
		return 2;
	}
	iters = atoll(argv[1]);
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--sync") == 0)
			sync = 1;
		else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (strcmp(argv[i], "--counter") == 0 && i + 1 < argc)
			counter = argv[++i];
		else if (strcmp(argv[i], "--every") == 0 && i + 1 < argc &&
		         (every = atof(argv[++i])) > 0)
			;
		else {
			fprintf(stderr, "krex-hog: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	wl_open(&k);
	t0 = last = wl_now_ms();
	while (!stop) {
		double now;

		wl_launch(&k, iters);
		n++;
		if (sync)
			wl_check(k.cu.cuCtxSynchronize(), "cuCtxSynchronize");
		now = wl_now_ms();
		if (seconds > 0 && now - t0 >= seconds * 1e3)
			break;
		if (counter && now - last >= every) {
			write_counter(counter, n);
			last = now;
		}
	}
	write_counter(counter, n);
	return 0;
}
