/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hookcov - reaches every hooked symbol of cuda_hooks.def (each variant)
 * through the four paths programs use: direct binding, dlsym(handle, name),
 * the dlsym that dlvsym(RTLD_DEFAULT, "dlsym", GLIBC version) answers (as
 * interposers take it) and cuGetProcAddress_v2(proc, version, flags); and
 * every symbol of hip_hooks.def directly and through both dlsyms.  A
 * driver name looked up with dlvsym itself must give what dlsym gives
 * (NULL with glibc: the driver's symbols are unversioned).  Then prints, for each, how
 * many calls reached the mock driver:
 *	mock NAME COUNT
 * hookcov.sh runs it under the gate and compares with the gate's counts.
 *
 * Arguments are all zero: the mock fails such calls harmlessly, and only
 * the counts matter.  The calls go through a pointer of 11 long arguments,
 * which the x86-64 and aarch64 C ABIs pass in registers and the callee
 * ignores beyond its own (test code, not portable C).
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gate_types.h"
#include "mock_cuda.h"
#include "mock_hip.h"

typedef long (*anyfn)(long, long, long, long, long, long, long, long, long, long, long);
#define CALL(p) ((anyfn)(p))(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

#define CU_DECL_NONE(name, params)
#define CU_DECL_PTDS(name, params) CUresult name##_ptds params;
#define CU_DECL_PTSZ(name, params) CUresult name##_ptsz params;
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream)                                 \
	CUresult name params;                                                                      \
	CU_DECL_##PT(name, params)
#include "cuda_hooks.def"
#undef CU_HOOK
#define HIP_HOOK(name, kind, params, args, stream) hipError_t name params;
#include "hip_hooks.def"
#undef HIP_HOOK

struct entry {
	const char *name, *proc;
	void *direct;
	int pt, since;
};

#define CU_E_NONE(name, proc, since)
#define CU_E_PTDS(name, proc, since) {#name "_ptds", #proc, (void *)name##_ptds, 1, since},
#define CU_E_PTSZ(name, proc, since) {#name "_ptsz", #proc, (void *)name##_ptsz, 1, since},
/* cuGetProcAddress is asked with the entry's own version: an older ABI
 * (CU_HOOK_OLD) is what a program built against that CUDA gets. */
static const struct entry cu_entries[] = {
#define CU_HOOK(PT, name, proc, since, kind, params, args, stream)                                 \
	{#name, #proc, (void *)name, 0, since}, CU_E_##PT(name, proc, since)
#include "cuda_hooks.def"
#undef CU_HOOK
};

static const struct entry hip_entries[] = {
#define HIP_HOOK(name, kind, params, args, stream) {#name, NULL, (void *)name, 0},
#include "hip_hooks.def"
#undef HIP_HOOK
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

int main(void)
{
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *hip = dlopen("libamdhip64.so", RTLD_NOW | RTLD_NOLOAD);
	CUresult (*gpa)(const char *, void **, int, cuuint64_t, int *);
	void *(*vdlsym)(void *, const char *) = NULL;
	const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
	unsigned i;
	int rc = 0;
	void *p;

	if (!cu || !hip) {
		fprintf(stderr, "hookcov: mock libraries not loaded\n");
		return 1;
	}
	*(void **)&gpa = dlsym(cu, "cuGetProcAddress_v2");
	for (i = 0; !vdlsym && i < N(versions); i++)
		*(void **)&vdlsym = dlvsym(RTLD_DEFAULT, "dlsym", versions[i]);
	if (!vdlsym)
		fprintf(stderr, "hookcov: no dlsym through dlvsym\n");
	for (i = 0; i < N(cu_entries); i++) {
		const struct entry *e = &cu_entries[i];

		CALL(e->direct);
		p = dlsym(cu, e->name);
		if (p)
			CALL(p);
		if (vdlsym && (p = vdlsym(cu, e->name)))
			CALL(p);
		if ((p = dlvsym(cu, e->name, "KREX_ANY")) && p != dlsym(cu, e->name)) {
			fprintf(stderr, "hookcov: dlvsym(%s) is not dlsym's answer\n", e->name);
			rc = 1;
		}
		p = NULL;
		if (gpa && gpa(e->proc, &p, e->since, e->pt ? 2 : 0, NULL) == CUDA_SUCCESS && p)
			CALL(p);
	}
	for (i = 0; i < N(hip_entries); i++) {
		CALL(hip_entries[i].direct);
		p = dlsym(hip, hip_entries[i].name);
		if (p)
			CALL(p);
		if (vdlsym && (p = vdlsym(hip, hip_entries[i].name)))
			CALL(p);
	}
	for (i = 0; i < N(cu_entries); i++)
		printf("mock %s %lu\n", cu_entries[i].name, mock_cuda_calls(cu_entries[i].name));
	for (i = 0; i < N(hip_entries); i++)
		printf("mock %s %lu\n", hip_entries[i].name, mock_hip_calls(hip_entries[i].name));
	return rc || !vdlsym;
}
