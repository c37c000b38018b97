/* SPDX-License-Identifier: BSD-3-Clause */
/* warm_ptx_print - print the gate's warm-up kernel (PTX) for warm_ptx.sh. */
#include <stdio.h>

#include "warm_ptx.h"

int main(void)
{
	fputs(cu_warm_ptx, stdout);
	return 0;
}
