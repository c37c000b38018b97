/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hiphog - a HIP hog for the gate tests, against the mock libamdhip64.so:
 * launches kernels of US microseconds with hipLaunchKernel on a stream
 * (asynchronously) until killed or 60 s, writing its launch count to FILE
 * every 100 launches.
 *
 *	hiphog US FILE
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gate_types.h"

hipError_t hipInit(unsigned int);
hipError_t hipStreamCreate(hipStream_t *);
hipError_t hipLaunchKernel(const void *, dim3, dim3, void **, size_t, hipStream_t);

int main(int argc, char **argv)
{
	long long us = argc > 2 ? atoll(argv[1]) : 1000;
	void *out = NULL;
	void *args[] = {&out, &us};
	dim3 grid = {1, 1, 1}, block = {32, 1, 1};
	hipStream_t s;
	time_t t0 = time(NULL);
	unsigned long n = 0;
	FILE *f;

	if (argc != 3 || hipInit(0) != hipSuccess || hipStreamCreate(&s) != hipSuccess)
		return 2;
	while (time(NULL) - t0 < 60) {
		if (hipLaunchKernel((const void *)main, grid, block, args, 0, s) != hipSuccess)
			return 1;
		if (++n % 100 == 0 && (f = fopen(argv[2], "w"))) {
			fprintf(f, "%lu\n", n);
			fclose(f);
		}
	}
	return 0;
}
