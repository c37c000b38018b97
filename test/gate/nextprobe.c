/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nextprobe.c - libnextprobe.so, an interposer of nextprobe_fn@@NEXTPROBE_1
 * (defined by libnextbase.so), preloaded after the gate
 * (test/gate/dlsym_next.sh).  Like any interposer (and like a sanitizer
 * runtime) it finds the function it wraps with dlsym(RTLD_NEXT) and
 * dlvsym(RTLD_NEXT): in its constructor, which runs before the gate's, and
 * again at every call, after them.  Each lookup prints one line
 * "nextprobe WHEN HOW ANSWER", ANSWER being "next" (libnextbase's, right),
 * "self" (this library's own: a call would recurse forever), "null" or
 * "other".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int nextprobe_fn(void);

static const char *answer(void *p)
{
	void *base = dlopen("libnextbase.so", RTLD_NOLOAD | RTLD_LAZY);
	void *real = base ? dlsym(base, "nextprobe_fn") : NULL;

	if (base)
		dlclose(base);
	if (!p)
		return "null";
	if (p == (void *)nextprobe_fn)
		return "self";
	return p == real ? "next" : "other";
}

static void probe(const char *when)
{
	fprintf(stderr, "nextprobe %s dlsym %s\n", when, answer(dlsym(RTLD_NEXT, "nextprobe_fn")));
	fprintf(stderr, "nextprobe %s dlvsym %s\n", when,
	        answer(dlvsym(RTLD_NEXT, "nextprobe_fn", "NEXTPROBE_1")));
}

__attribute__((constructor)) static void nextprobe_init(void)
{
	probe("early");
}

int nextprobe_fn(void)
{
	int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "nextprobe_fn");

	probe("late");
	if (!next || next == nextprobe_fn)
		return -1;
	return next() + 1;
}
