/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krex-launchrate - the open-gate cost: launches N empty kernels
 * (synchronizing every 256) and prints launches per second.
 *
 *	krex-launchrate N
 *	-> launchrate n=N per_s=X us_per_launch=Y
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "wl_cuda.h"

int main(int argc, char **argv)
{
	struct wl_kernel k;
	long n = argc > 1 ? atol(argv[1]) : 100000, i;
	double t0, t;

	if (n <= 0) {
		fprintf(stderr, "usage: krex-launchrate N\n");
		return 2;
	}
	wl_open(&k);
	for (i = 0; i < 256; i++)
		wl_launch_empty(&k);
	wl_check(k.cu.cuCtxSynchronize(), "cuCtxSynchronize");
	t0 = wl_now_ms();
	for (i = 0; i < n; i++) {
		wl_launch_empty(&k);
		if (i % 256 == 255)
			wl_check(k.cu.cuCtxSynchronize(), "cuCtxSynchronize");
	}
	wl_check(k.cu.cuCtxSynchronize(), "cuCtxSynchronize");
	t = (wl_now_ms() - t0) / 1e3;
	printf("launchrate n=%ld per_s=%.0f us_per_launch=%.3f\n", n, n / t, t * 1e6 / n);
	return 0;
}
