/* SPDX-License-Identifier: BSD-3-Clause */
/* nextbase.c - libnextbase.so: nextprobe_fn@@NEXTPROBE_1, the function
 * libnextprobe.so interposes (test/gate/dlsym_next.sh). */
int nextprobe_fn(void);

int nextprobe_fn(void)
{
	return 1;
}
