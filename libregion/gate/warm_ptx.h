/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warm_ptx.h - the region warm-up kernel of the gate (gate_cuda.c), as PTX.
 * test/gate/warm_ptx.sh assembles it with ptxas where the toolkit is.
 */
#ifndef KREX_WARM_PTX_H
#define KREX_WARM_PTX_H

/*
 * The warm-up kernel: one block of 128 threads per multiprocessor, each
 * running a chain of n dependent FMAs (n = KREX_REGION_WARM_ITERS, default
 * below; 0 = an empty kernel).  It writes to out only if the chain ends on a
 * value it never reaches, so the compiler keeps the loop.
 * PTX text, so the gate needs no CUDA toolkit to build; the driver compiles
 * it once per context, at the first region.  Measured on the H200: an event
 * alone does not do it (the compute engine switches context only for a
 * kernel), an empty kernel does (doc/performance.md).
 */
static const char cu_warm_ptx[] = ".version 6.0\n"
                                  ".target sm_60\n"
                                  ".address_size 64\n"
                                  ".visible .entry krex_warm(.param .u32 n, .param .u64 out)\n"
                                  "{\n"
                                  "\t.reg .pred p;\n"
                                  "\t.reg .b32 i, m;\n"
                                  "\t.reg .f32 a;\n"
                                  "\t.reg .b64 o;\n"
                                  "\tld.param.u32 m, [n];\n"
                                  "\tmov.u32 i, 0;\n"
                                  "\tmov.f32 a, 0f3F800000;\n"
                                  "\tsetp.ge.u32 p, i, m;\n"
                                  "\t@p bra DONE;\n"
                                  "LOOP:\n"
                                  "\tfma.rn.f32 a, a, 0f3F7FFFFF, 0f3A800000;\n"
                                  "\tadd.u32 i, i, 1;\n"
                                  "\tsetp.lt.u32 p, i, m;\n"
                                  "\t@p bra LOOP;\n"
                                  "DONE:\n"
                                  "\tsetp.eq.f32 p, a, 0f12345678;\n"
                                  "\t@!p bra END;\n"
                                  "\tld.param.u64 o, [out];\n"
                                  "\tst.global.f32 [o], a;\n"
                                  "END:\n"
                                  "\tret;\n"
                                  "}\n";
#endif /* KREX_WARM_PTX_H */
