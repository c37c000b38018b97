/* SPDX-License-Identifier: BSD-3-Clause */
/* nextcall.c - calls nextprobe_fn() once (test/gate/dlsym_next.sh) and
 * prints its answer: 1 from libnextbase alone, 2 through libnextprobe, -1
 * when libnextprobe found no next nextprobe_fn. */
#include <stdio.h>

int nextprobe_fn(void);

int main(void)
{
	int n = nextprobe_fn();

	printf("nextcall %d\n", n);
	return n == 2 ? 0 : 1;
}
