/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warm_ptx.h - the region warm-up kernel of the gate (gate_cuda.c), as PTX
 * text, so the gate needs no CUDA toolkit to build; the driver compiles it
 * once per context, at the first region.  An empty kernel: it only has to
 * make the GPU run the owner's context (doc/gate.md "Region warm-up"; a chain
 * of up to 50000 FMAs a thread did no better on the H200).
 * test/gate/warm_ptx.sh assembles it with ptxas where the toolkit is.
 */
#ifndef KREX_WARM_PTX_H
#define KREX_WARM_PTX_H

static const char cu_warm_ptx[] = ".version 6.0\n"
                                  ".target sm_60\n"
                                  ".address_size 64\n"
                                  ".visible .entry krex_warm()\n"
                                  "{\n"
                                  "\tret;\n"
                                  "}\n";

#endif /* KREX_WARM_PTX_H */
