/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mungeapi.c - libmunge.so.2 through dlopen (mungeapi.h).
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mungeapi.h"

#ifdef HAVE_MUNGE
#include <munge.h>

static struct {
	pthread_once_t once;
	void *handle;
	char why[256];
	munge_ctx_t (*ctx_create)(void);
	void (*ctx_destroy)(munge_ctx_t);
	munge_err_t (*ctx_set)(munge_ctx_t, int, ...);
	munge_err_t (*ctx_get)(munge_ctx_t, int, ...);
	const char *(*ctx_strerror)(munge_ctx_t);
	munge_err_t (*encode)(char **, munge_ctx_t, const void *, int);
	munge_err_t (*decode)(const char *, munge_ctx_t, void **, int *, uid_t *, gid_t *);
	const char *(*strerror)(munge_err_t);
} mu = {PTHREAD_ONCE_INIT};

static void mapi_load(void)
{
	mu.handle = dlopen("libmunge.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!mu.handle) {
		snprintf(mu.why, sizeof(mu.why), "libmunge.so.2 not found (%s)", dlerror());
		return;
	}
	*(void **)&mu.ctx_create = dlsym(mu.handle, "munge_ctx_create");
	*(void **)&mu.ctx_destroy = dlsym(mu.handle, "munge_ctx_destroy");
	*(void **)&mu.ctx_set = dlsym(mu.handle, "munge_ctx_set");
	*(void **)&mu.ctx_get = dlsym(mu.handle, "munge_ctx_get");
	*(void **)&mu.ctx_strerror = dlsym(mu.handle, "munge_ctx_strerror");
	*(void **)&mu.encode = dlsym(mu.handle, "munge_encode");
	*(void **)&mu.decode = dlsym(mu.handle, "munge_decode");
	*(void **)&mu.strerror = dlsym(mu.handle, "munge_strerror");
	if (!mu.ctx_create || !mu.ctx_destroy || !mu.ctx_set || !mu.ctx_get || !mu.ctx_strerror ||
	    !mu.encode || !mu.decode || !mu.strerror) {
		snprintf(mu.why, sizeof(mu.why), "libmunge.so.2 lacks a munge_* call KREX needs");
		dlclose(mu.handle);
		mu.handle = NULL;
	}
}

/* A context on socket, or NULL with why. */
static munge_ctx_t mapi_ctx(const char *socket, char *why, size_t whylen)
{
	munge_ctx_t ctx;

	pthread_once(&mu.once, mapi_load);
	if (!mu.handle) {
		snprintf(why, whylen, "%s", mu.why);
		return NULL;
	}
	ctx = mu.ctx_create();
	if (!ctx) {
		snprintf(why, whylen, "munge_ctx_create: out of memory");
		return NULL;
	}
	if (socket && socket[0] && mu.ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
		snprintf(why, whylen, "munge socket %s: %s", socket, mu.ctx_strerror(ctx));
		mu.ctx_destroy(ctx);
		return NULL;
	}
	return ctx;
}

static int mapi_result(munge_err_t e)
{
	switch (e) {
	case EMUNGE_SUCCESS:
		return MAPI_OK;
	case EMUNGE_CRED_REPLAYED:
		return MAPI_REPLAYED;
	case EMUNGE_CRED_EXPIRED:
		return MAPI_EXPIRED;
	case EMUNGE_CRED_REWOUND:
		return MAPI_REWOUND;
	case EMUNGE_SOCKET:
	case EMUNGE_TIMEOUT:
		return MAPI_SOCKET;
	case EMUNGE_BAD_CRED:
	case EMUNGE_BAD_VERSION:
	case EMUNGE_BAD_CIPHER:
	case EMUNGE_BAD_MAC:
	case EMUNGE_BAD_ZIP:
	case EMUNGE_BAD_REALM:
	case EMUNGE_CRED_INVALID:
	case EMUNGE_CRED_UNAUTHORIZED:
		return MAPI_INVALID;
	default:
		return MAPI_ERROR;
	}
}

int mapi_encode(const char *socket, int ttl, const void *payload, size_t len, char **cred,
                char *why, size_t whylen)
{
	munge_ctx_t ctx = mapi_ctx(socket, why, whylen);
	munge_err_t e;
	int r;

	*cred = NULL;
	if (!ctx)
		return mu.handle ? MAPI_ERROR : MAPI_UNAVAIL;
	if (mu.ctx_set(ctx, MUNGE_OPT_TTL, ttl > 0 ? ttl : MUNGE_TTL_MAXIMUM) != EMUNGE_SUCCESS) {
		snprintf(why, whylen, "munge ttl %d: %s", ttl, mu.ctx_strerror(ctx));
		mu.ctx_destroy(ctx);
		return MAPI_ERROR;
	}
	e = mu.encode(cred, ctx, payload, (int)len);
	r = mapi_result(e);
	if (e != EMUNGE_SUCCESS) {
		snprintf(why, whylen, "munge_encode: %s", mu.ctx_strerror(ctx));
		*cred = NULL;
	}
	mu.ctx_destroy(ctx);
	return r;
}

int mapi_decode(const char *socket, const char *cred, struct mapi_decoded *out, char *why,
                size_t whylen)
{
	munge_ctx_t ctx = mapi_ctx(socket, why, whylen);
	munge_err_t e;
	void *buf = NULL;
	int len = 0, r;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	time_t t = 0;

	memset(out, 0, sizeof(*out));
	if (!ctx)
		return mu.handle ? MAPI_ERROR : MAPI_UNAVAIL;
	e = mu.decode(cred, ctx, &buf, &len, &uid, &gid);
	r = mapi_result(e);
	if (e != EMUNGE_SUCCESS)
		snprintf(why, whylen, "%s",
		         mu.ctx_strerror(ctx) ? mu.ctx_strerror(ctx) : mu.strerror(e));
	if (r == MAPI_OK || r == MAPI_REPLAYED || r == MAPI_EXPIRED || r == MAPI_REWOUND) {
		out->payload = malloc((size_t)len + 1);
		if (out->payload) {
			if (len)
				memcpy(out->payload, buf, (size_t)len);
			((char *)out->payload)[len] = '\0';
			out->len = (size_t)len;
		}
		out->uid = (uint32_t)uid;
		out->gid = (uint32_t)gid;
		if (mu.ctx_get(ctx, MUNGE_OPT_ENCODE_TIME, &t) == EMUNGE_SUCCESS)
			out->encoded = t;
		if (mu.ctx_get(ctx, MUNGE_OPT_TTL, &out->ttl) != EMUNGE_SUCCESS)
			out->ttl = 0;
	}
	free(buf);
	mu.ctx_destroy(ctx);
	return r;
}

#else /* !HAVE_MUNGE */

int mapi_encode(const char *socket, int ttl, const void *payload, size_t len, char **cred,
                char *why, size_t whylen)
{
	(void)socket, (void)ttl, (void)payload, (void)len;
	*cred = NULL;
	snprintf(why, whylen,
	         "KREX was built without munge (configure --with-munge, Debian: libmunge-dev)");
	return MAPI_UNAVAIL;
}

int mapi_decode(const char *socket, const char *cred, struct mapi_decoded *out, char *why,
                size_t whylen)
{
	(void)socket, (void)cred;
	memset(out, 0, sizeof(*out));
	snprintf(why, whylen,
	         "KREX was built without munge (configure --with-munge, Debian: libmunge-dev)");
	return MAPI_UNAVAIL;
}

#endif
