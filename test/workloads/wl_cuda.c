/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_cuda.c - driver API access shared by the test workloads.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wl_cuda.h"

void wl_check(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "workload: %s failed: CUresult %d\n", what, r);
		exit(1);
	}
}

double wl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double wl_epoch_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define WL_SYM(name)                                                                               \
	do {                                                                                       \
		*(void **)&k->cu.name = dlsym(h, #name);                                           \
		if (!k->cu.name) {                                                                 \
			fprintf(stderr, "workload: libcuda lacks %s\n", #name);                    \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* fma.fatbin beside the executable (or beside its libtool wrapper). */
static const char *wl_module_path(char *buf, size_t len)
{
	static const char *const rel[] = {"fma.fatbin", "../fma.fatbin"};
	char exe[4096], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	unsigned i;

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	for (i = 0; i < 2; i++)
		if (snprintf(buf, len, "%s/%s", exe, rel[i]) < (int)len && access(buf, R_OK) == 0)
			return buf;
	return NULL;
}

/* The module image: KREX_WL_MODULE, else fma.fatbin beside the program
 * (nvcc builds it from fma.cu where it exists), else a placeholder only the
 * mock accepts. */
void *wl_module_image(void)
{
	const char *path = getenv("KREX_WL_MODULE");
	char found[4096];
	FILE *f;
	long n;
	char *buf;

	if (!path || !*path)
		path = wl_module_path(found, sizeof(found));
	if (!path)
		return (void *)"krex-mock-module";
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "workload: cannot read %s\n", path);
		exit(1);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "workload: cannot read %s\n", path);
		exit(1);
	}
	buf[n] = 0;
	fclose(f);
	return buf;
}

/*
 * KREX_WL_SCHED=spin|yield|blocking: how the primary context's host threads
 * wait for the GPU (cuDevicePrimaryCtxSetFlags; unset: the driver's auto,
 * which spins while there are no more contexts in the process than CPUs).
 * agents.py's sessions wait on a shared GPU: do spinning waiters take the
 * CPU the others need?
 */
static void wl_sched(void *h, CUdevice dev)
{
	static const struct {
		const char *name;
		unsigned flag;
	} how[] = {{"spin", 1}, {"yield", 2}, {"blocking", 4}};
	CUresult (*set)(CUdevice, unsigned);
	const char *want = getenv("KREX_WL_SCHED");
	size_t i;

	if (!want || !*want)
		return;
	for (i = 0; i < sizeof(how) / sizeof(how[0]) && strcmp(want, how[i].name); i++)
		;
	if (i == sizeof(how) / sizeof(how[0])) {
		fprintf(stderr, "workload: KREX_WL_SCHED=%s: not spin, yield or blocking\n", want);
		exit(1);
	}
	*(void **)&set = dlsym(h, "cuDevicePrimaryCtxSetFlags_v2");
	if (!set)
		*(void **)&set = dlsym(h, "cuDevicePrimaryCtxSetFlags");
	if (!set) {
		fprintf(stderr,
		        "workload: KREX_WL_SCHED: libcuda lacks cuDevicePrimaryCtxSetFlags\n");
		exit(1);
	}
	wl_check(set(dev, how[i].flag), "cuDevicePrimaryCtxSetFlags (KREX_WL_SCHED)");
}

void wl_open(struct wl_kernel *k)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	int sms = 0;

	if (!h) {
		fprintf(stderr, "workload: %s\n", dlerror());
		exit(1);
	}
	WL_SYM(cuInit);
	WL_SYM(cuDeviceGet);
	WL_SYM(cuDeviceGetAttribute);
	WL_SYM(cuDevicePrimaryCtxRetain);
	WL_SYM(cuCtxSetCurrent);
	WL_SYM(cuCtxSynchronize);
	WL_SYM(cuModuleLoadData);
	WL_SYM(cuModuleGetFunction);
	WL_SYM(cuMemAlloc_v2);
	WL_SYM(cuLaunchKernel);
	WL_SYM(cuEventCreate);
	WL_SYM(cuEventRecord);
	WL_SYM(cuEventSynchronize);
	WL_SYM(cuEventElapsedTime);
	WL_SYM(cuStreamSynchronize);
	WL_SYM(cuMemcpyHtoD_v2);
	WL_SYM(cuMemcpyDtoH_v2);
	WL_SYM(cuMemsetD32_v2);
	WL_SYM(cuStreamCreate);
	WL_SYM(cuStreamDestroy_v2);
	wl_check(k->cu.cuInit(0), "cuInit");
	k->t_init = wl_epoch_s();
	wl_check(k->cu.cuDeviceGet(&dev, 0), "cuDeviceGet");
	wl_sched(h, dev);
	wl_check(k->cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	wl_check(k->cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	k->t_ctx = wl_epoch_s();
	/* 16 = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT; 4 blocks per SM as
	 * in the spike (528 on an H200). */
	wl_check(k->cu.cuDeviceGetAttribute(&sms, 16, dev), "cuDeviceGetAttribute");
	k->blocks = (unsigned)(sms > 0 ? sms * 4 : 4);
	wl_check(k->cu.cuModuleLoadData(&mod, wl_module_image()),
	         "cuModuleLoadData (a real GPU needs fma.fatbin: nvcc, or KREX_WL_MODULE)");
	k->t_mod = wl_epoch_s();
	wl_check(k->cu.cuModuleGetFunction(&k->fma, mod, "fma_loop"), "cuModuleGetFunction");
	wl_check(k->cu.cuModuleGetFunction(&k->empty, mod, "empty"), "cuModuleGetFunction");
	wl_check(k->cu.cuMemAlloc_v2(&k->out, (size_t)k->blocks * 256 * sizeof(float)),
	         "cuMemAlloc");
}

void wl_launch(struct wl_kernel *k, long long iters)
{
	void *params[] = {&k->out, &iters};

	wl_check(k->cu.cuLaunchKernel(k->fma, k->blocks, 1, 1, 256, 1, 1, 0, NULL, params, NULL),
	         "cuLaunchKernel");
}

void wl_launch_empty(struct wl_kernel *k)
{
	wl_check(k->cu.cuLaunchKernel(k->empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL),
	         "cuLaunchKernel");
}

long long wl_calibrate(struct wl_kernel *k, double ms)
{
	long long iters = 1000;
	CUevent e0, e1;
	float t = 0;
	int i;

	wl_check(k->cu.cuEventCreate(&e0, 0), "cuEventCreate");
	wl_check(k->cu.cuEventCreate(&e1, 0), "cuEventCreate");
	for (i = 0; i < 40; i++) {
		k->cu.cuEventRecord(e0, NULL);
		wl_launch(k, iters);
		k->cu.cuEventRecord(e1, NULL);
		wl_check(k->cu.cuEventSynchronize(e1), "cuEventSynchronize");
		wl_check(k->cu.cuEventElapsedTime(&t, e0, e1), "cuEventElapsedTime");
		if (i > 3 && t > ms * 0.99 && t < ms * 1.01)
			break;
		iters = (long long)((double)iters * ms / (t > 0.001 ? t : 0.001));
		if (iters < 1)
			iters = 1;
	}
	return iters;
}
