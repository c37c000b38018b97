/* SPDX-License-Identifier: BSD-3-Clause */
// rt_prog.cu - a CUDA runtime program for the GPU checks (test/gpu/run-gpu.sh):
// vector adds launched with <<<>>> and async copies, in a loop for S seconds
// (or 200 rounds), then checks the result.  The runtime reaches the driver
// through cuGetProcAddress, so the gate must see these launches there.
//	rt_prog [SECONDS]   ->  "rt_prog ok launches=N" and exit 0 when right
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "rt_prog: %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

static double now_s()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const int n = 1 << 20;
	double seconds = argc > 1 ? atof(argv[1]) : 0, t0 = now_s();
	float *ha = new float[n], *hb = new float[n], *hc = new float[n], *a, *b, *c;
	long launches = 0;
	cudaStream_t s;

	for (int i = 0; i < n; i++) {
		ha[i] = i * 0.5f;
		hb[i] = 1.0f;
	}
	CK(cudaStreamCreate(&s));
	CK(cudaMalloc(&a, n * sizeof(float)));
	CK(cudaMalloc(&b, n * sizeof(float)));
	CK(cudaMalloc(&c, n * sizeof(float)));
	CK(cudaMemcpyAsync(a, ha, n * sizeof(float), cudaMemcpyHostToDevice, s));
	CK(cudaMemcpyAsync(b, hb, n * sizeof(float), cudaMemcpyHostToDevice, s));
	for (int r = 0;; r++) {
		add<<<(n + 255) / 256, 256, 0, s>>>(a, b, c, n);
		launches++;
		if (r % 10 == 9)
			CK(cudaStreamSynchronize(s));
		if (seconds > 0 ? now_s() - t0 >= seconds : r >= 199)
			break;
	}
	CK(cudaMemcpyAsync(hc, c, n * sizeof(float), cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < n; i++)
		if (hc[i] != ha[i] + hb[i]) {
			fprintf(stderr, "rt_prog: wrong result at %d\n", i);
			return 1;
		}
	printf("rt_prog ok launches=%ld\n", launches);
	return 0;
}
