/* SPDX-License-Identifier: BSD-3-Clause */
// fma.cu - the workloads' kernels for a real GPU (test/gpu/build.sh compiles
// it with nvcc to fma.fatbin; KREX_WL_MODULE points at it).  The same shape
// as the spike's timer.cu: 4 blocks per SM x 256 threads of dependent FMAs.
extern "C" __global__ void fma_loop(float *out, long long iters)
{
	float a = threadIdx.x * 1e-3f, b = blockIdx.x * 1e-3f + 1.0f;
	for (long long i = 0; i < iters; i++) {
		a = fmaf(a, b, 1e-7f);
		b = fmaf(b, a, -1e-7f);
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = a + b;
}

extern "C" __global__ void empty(void)
{
}
