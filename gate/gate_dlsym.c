/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gate_dlsym.c - the dlsym override.
 *
 * Why: on the H200 the CUDA runtime, PyTorch, CuPy and Triton reached every
 * launch through dlsym(libcuda handle, "cuGetProcAddress_v2") (or
 * "cuLaunchKernelEx") and the pointers it returned, never through direct
 * symbol binding (doc/design.md "The gate").  So the gate exports dlsym: a
 * hooked name found by the real dlsym is answered with its wrapper.
 * The gate exports dlvsym too (a driver symbol looked up with a version is
 * answered the same way).  Since the gate's own dlvsym then shadows libc's,
 * the real dlvsym is found once by reading libc's dynamic symbol table
 * (dl_iterate_phdr, DT_GNU_HASH/DT_HASH): no recursion, no glibc-private
 * symbols; the real dlsym comes from it.
 */
#include "config.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "gate.h"

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);
static _Atomic(dlsym_fn) real_dlsym;
static _Atomic(dlvsym_fn) real_dlvsym;

/*
 * Until the gate's constructors run, dlsym and dlvsym only forward to the
 * real ones.  A sanitizer runtime (ASan, loaded after the preloaded gate)
 * looks up every function it intercepts with dlsym(RTLD_NEXT, ...) and
 * dlvsym(RTLD_NEXT, ...) during its own start-up, before its shadow memory
 * and its interceptors exist.  So everything on that path is built without
 * instrumentation (GATE_EARLY) and calls nothing a sanitizer intercepts (no
 * str* or mem* function, no dlopen, no thread-local variable): only
 * dl_iterate_phdr and libc's dlvsym and dlsym (doc/security.md
 * "Sanitizers").
 */
static atomic_int dlsym_ready;

#define GATE_EARLY __attribute__((no_sanitize("address", "undefined")))

__attribute__((constructor(101))) static void gate_dlsym_ready(void)
{
	atomic_store_explicit(&dlsym_ready, 1, memory_order_release);
}

GATE_EARLY static int early_streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* The file name of path (after its last '/') starts with prefix. */
GATE_EARLY static int early_base_is(const char *path, const char *prefix)
{
	const char *base = path;

	for (; *path; path++)
		if (*path == '/')
			base = path + 1;
	while (*prefix && *prefix == *base)
		prefix++, base++;
	return *prefix == 0;
}

/* ---- libc's dlvsym, from its dynamic symbol table ------------------------------ */

/* Symbols in a DT_GNU_HASH table: past the highest chain's end. */
GATE_EARLY static size_t gnu_hash_count(const uint32_t *h)
{
	uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
	const uint32_t *buckets = h + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t i, last = 0;

	for (i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1))
		last++;
	return last + 1;
}

/* dl_iterate_phdr callback: the address of function "dlvsym" in libc (or libdl). */
GATE_EARLY static int elf_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	void **addr = arg;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const uint32_t *gnu = NULL, *sysv = NULL;
	size_t n, i;
	int j;

	(void)size;
	if (!info->dlpi_name || (!early_base_is(info->dlpi_name, "libc.so") &&
	                         !early_base_is(info->dlpi_name, "libdl.so")))
		return 0;
	for (j = 0; j < info->dlpi_phnum; j++)
		if (info->dlpi_phdr[j].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[j].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		/* glibc's loader relocates these d_ptr entries to addresses */
		if (dyn->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_GNU_HASH)
			gnu = (const uint32_t *)dyn->d_un.d_ptr;
		else if (dyn->d_tag == DT_HASH)
			sysv = (const uint32_t *)dyn->d_un.d_ptr;
	}
	if (!symtab || !strtab || (!gnu && !sysv))
		return 0;
	n = gnu ? gnu_hash_count(gnu) : sysv[1];
	for (i = 0; i < n; i++)
		if (symtab[i].st_shndx != SHN_UNDEF &&
		    ELF64_ST_TYPE(symtab[i].st_info) == STT_FUNC &&
		    early_streq(strtab + symtab[i].st_name, "dlvsym")) {
			*addr = (void *)(info->dlpi_addr + symtab[i].st_value);
			return 1;
		}
	return 0;
}

GATE_EXPORT void *dlvsym(void *handle, const char *name, const char *version);

GATE_EARLY static dlvsym_fn gate_real_dlvsym(void)
{
	dlvsym_fn fn = atomic_load_explicit(&real_dlvsym, memory_order_acquire);
	void *addr = NULL;

	if (fn)
		return fn;
	dl_iterate_phdr(elf_find_cb, &addr);
	fn = (dlvsym_fn)addr;
	if (fn && (void *)fn != (void *)dlvsym)
		atomic_store_explicit(&real_dlvsym, fn, memory_order_release);
	return atomic_load(&real_dlvsym);
}

/* libc's dlsym, through libc's dlvsym (the gate's own dlsym shadows it). */
GATE_EARLY static dlsym_fn gate_libc_dlsym(void)
{
	/* glibc >= 2.34 moved dlsym into libc as GLIBC_2.34; older ones have
	 * the base version (2.2.5 on x86_64, 2.17 on aarch64). */
	static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", NULL};
	dlsym_fn fn = atomic_load_explicit(&real_dlsym, memory_order_acquire);
	dlvsym_fn vsym;
	int i;

	if (fn)
		return fn;
	vsym = gate_real_dlvsym();
	for (i = 0; !fn && vsym && versions[i]; i++)
		fn = (dlsym_fn)vsym(RTLD_NEXT, "dlsym", versions[i]);
	if (fn)
		atomic_store_explicit(&real_dlsym, fn, memory_order_release);
	return fn;
}

GATE_EARLY void *gate_real_dlsym(void *handle, const char *name)
{
	dlsym_fn fn = gate_libc_dlsym();

	return fn ? fn(handle, name) : NULL;
}

void *gate_open_first(const char *const *names)
{
	void *h = NULL;
	int i;

	for (i = 0; !h && names[i]; i++)
		h = dlopen(names[i], RTLD_NOLOAD | RTLD_LAZY | RTLD_GLOBAL);
	for (i = 0; !h && names[i]; i++)
		h = dlopen(names[i], RTLD_LAZY | RTLD_GLOBAL);
	return h;
}

/* ---- RTLD_NEXT ----------------------------------------------------------------- */

/*
 * RTLD_NEXT means "after the object that called dlsym"; called from here the
 * real dlsym would search after libkrexgate instead, and an interposer
 * loaded after the gate that looks itself up would get itself and recurse
 * forever.  Before the gate's constructors ran, dlsym and dlvsym jump to the
 * real ones (a tail call: the caller's return address stays the one libc
 * sees).  After, the search is redone: the loaded objects in load order
 * (dl_iterate_phdr), skipping up to the caller's, then the first that
 * defines name (of version, for dlvsym) itself.
 */
#define NEXT_MAX_OBJS 512
struct next_obj {
	const char *name;
	uintptr_t lo, hi;
};
struct next_walk {
	struct next_obj obj[NEXT_MAX_OBJS];
	int n;
};

static int next_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct next_walk *w = arg;
	struct next_obj *o;
	int i;

	(void)size;
	if (w->n >= NEXT_MAX_OBJS)
		return 1;
	o = &w->obj[w->n++];
	o->name = info->dlpi_name;
	o->lo = UINTPTR_MAX;
	o->hi = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (a < o->lo)
			o->lo = a;
		if (a + ph->p_memsz > o->hi)
			o->hi = a + ph->p_memsz;
	}
	return 0;
}

static int next_owner(const struct next_walk *w, const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	int i;

	for (i = 0; i < w->n; i++)
		if (a >= w->obj[i].lo && a < w->obj[i].hi)
			return i;
	return -1;
}

/* name (of version, or any for dlsym when version is NULL) in handle. */
static void *next_sym(void *handle, const char *name, const char *version)
{
	dlvsym_fn vsym;

	if (!version)
		return gate_real_dlsym(handle, name);
	vsym = gate_real_dlvsym();
	return vsym ? vsym(handle, name, version) : NULL;
}

static void *next_lookup(const void *caller, const char *name, const char *version)
{
	static __thread struct next_walk w; /* 12 KiB: keep it off small stacks */
	int i, me;
	void *h, *p;

	w.n = 0;
	dl_iterate_phdr(next_collect, &w); /* no dlopen inside: the loader lock is held */
	me = next_owner(&w, caller);
	if (me < 0)
		return next_sym(RTLD_NEXT, name, version);
	for (i = me + 1; i < w.n; i++) {
		if (!w.obj[i].name || !w.obj[i].name[0])
			continue;
		h = dlopen(w.obj[i].name, RTLD_NOLOAD | RTLD_LAZY);
		if (!h)
			continue;
		p = next_sym(h, name, version);
		dlclose(h);
		if (p && next_owner(&w, p) == i)
			return p;
	}
	return NULL;
}

/* ---- the override ---------------------------------------------------------------- */

/* name may be one that backend b hooks: it starts with b's prefix, or is
 * the C++-mangled name of a global function that does (_Z<length><name>...:
 * HIP 5.2's hip_ext.h launches). */
static int gate_name_hooked(const struct gate_backend *b, const char *name)
{
	if (name[0] == '_' && name[1] == 'Z')
		for (name += 2; *name >= '0' && *name <= '9';)
			name++;
	return strncmp(name, b->prefix, strlen(b->prefix)) == 0;
}

/* Every backend's wrapper in place of p, the real function found for name. */
static void *gate_swap(const char *name, void *p)
{
	const struct gate_backend *const *b;

	for (b = gate_backends; b < gate_backends_end; b++)
		if ((*b)->swap && gate_name_hooked(*b, name))
			p = (*b)->swap(name, p);
	return p;
}

/* The gate's dlsym, once the gate's constructors ran. */
static void *dlsym_hooked(void *handle, const char *name, const void *caller)
{
	const struct gate_backend *const *b;
	void *p, *wrapper = NULL;

	if (handle == RTLD_NEXT) {
		for (b = gate_backends; b < gate_backends_end; b++) {
			if (!(*b)->lookup || !gate_name_hooked(*b, name))
				continue;
			p = (*b)->lookup(name, &wrapper);
			if (wrapper)
				return p ? wrapper : NULL;
		}
		return next_lookup(caller, name, NULL);
	}
	p = gate_real_dlsym(handle, name);
	return p ? gate_swap(name, p) : NULL;
}

GATE_EXPORT void *dlsym(void *handle, const char *name);

GATE_EARLY void *dlsym(void *handle, const char *name)
{
	dlsym_fn real;

	if (atomic_load_explicit(&dlsym_ready, memory_order_acquire))
		return dlsym_hooked(handle, name, __builtin_return_address(0));
	real = gate_libc_dlsym();
	if (!real)
		return NULL;
	return real(handle, name); /* a tail call (RTLD_NEXT, above): test/gate/dlsym_next.sh */
}

/*
 * dlvsym: the versioned way to the same symbols.  "dlsym" and "dlvsym"
 * are answered with the gate's own (a program or library that takes
 * libc's dlsym through dlvsym, as interposers do, would otherwise reach
 * the driver around the gate; the gate's dlsym passes every other name
 * through unchanged, so nothing recurses).  A hooked driver name is
 * answered with its wrapper, as by dlsym (the driver's symbols are
 * unversioned, and glibc finds them only with a version they define).
 * RTLD_NEXT is searched after the caller, as by dlsym.
 */
static void *dlvsym_hooked(void *handle, const char *name, const char *version, const void *caller)
{
	void *p;

	if (handle == RTLD_NEXT)
		p = next_lookup(caller, name, version);
	else
		p = next_sym(handle, name, version);
	if (!p)
		return NULL;
	if (strcmp(name, "dlsym") == 0)
		return (void *)dlsym;
	if (strcmp(name, "dlvsym") == 0)
		return (void *)dlvsym;
	return gate_swap(name, p);
}

GATE_EARLY void *dlvsym(void *handle, const char *name, const char *version)
{
	dlvsym_fn real;

	if (atomic_load_explicit(&dlsym_ready, memory_order_acquire))
		return dlvsym_hooked(handle, name, version, __builtin_return_address(0));
	real = gate_real_dlvsym();
	if (!real)
		return NULL;
	return real(handle, name, version); /* a tail call, as in dlsym */
}
