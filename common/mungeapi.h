/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mungeapi.h - the one munge loader of KREX: libmunge.so.2 through dlopen
 * (never linked, so libkrexregion, which loads into every user's process,
 * needs no munge on a node without it), used by krexd to sign certificates
 * (krexd/sign.c) and by krex_certificate_verify() to check them.
 * Built with munge.h only when configure found it (--with-munge, HAVE_MUNGE);
 * otherwise every call says why it cannot work.
 */
#ifndef KREX_MUNGEAPI_H
#define KREX_MUNGEAPI_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* What a decode said, beyond success (munge's own error codes, kept apart). */
enum mapi_result {
	MAPI_OK = 0,   /* valid, first decode */
	MAPI_REPLAYED, /* valid (MAC checked), decoded before on this munged */
	MAPI_EXPIRED,  /* valid MAC, older than its TTL */
	MAPI_REWOUND,  /* valid MAC, encoded in the future (clock skew) */
	MAPI_INVALID,  /* not a credential of this munge key, or tampered with */
	MAPI_SOCKET,   /* munged not reachable */
	MAPI_UNAVAIL,  /* no libmunge (not built with munge, or not installed) */
	MAPI_ERROR,    /* anything else */
};

/*
 * Encode len bytes of payload into a credential (NUL-terminated, malloc'd:
 * free() it) with the given socket ("" or NULL: libmunge's default) and
 * time-to-live in seconds (0: munged's maximum, its --max-ttl).  Returns
 * MAPI_OK, or another result with why (one line) filled.
 */
int mapi_encode(const char *socket, int ttl, const void *payload, size_t len, char **cred,
                char *why, size_t whylen);

struct mapi_decoded {
	void *payload; /* malloc'd, NUL-terminated (free it), NULL when none came back */
	size_t len;
	uint32_t uid, gid; /* the encoder's */
	time_t encoded;    /* when it was encoded (0 unknown) */
	int ttl;           /* its time-to-live, seconds */
};

/* Decode cred.  Returns an enum mapi_result, why filled unless MAPI_OK; the
 * payload and identity are filled for MAPI_OK, REPLAYED, EXPIRED, REWOUND. */
int mapi_decode(const char *socket, const char *cred, struct mapi_decoded *out, char *why,
                size_t whylen);

#endif /* KREX_MUNGEAPI_H */
