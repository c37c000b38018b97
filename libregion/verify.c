/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verify.c - krex_certificate_verify(): check a signed certificate with
 * this node's munged (krex_certificate_verify(3), doc/protocol.md "Signed
 * certificates").
 *
 * The order of the checks: the text holds a credential; munged decodes it
 * (its MAC, then its time, then its replay cache); the credential was
 * encoded by krexd's uid (anyone can munge a payload: only krexd's is a
 * certificate); its payload is a KREX certificate; the certificate next to
 * the credential, if any, is the one signed.
 */
#include "config.h"

#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certjson.h"
#include "json.h"
#include "krex/region.h"
#include "mungeapi.h"

#define KREX_EXPORT __attribute__((visibility("default")))

static int verdict(struct krex_verify *v, int verdict, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int verdict(struct krex_verify *v, int verdict, const char *fmt, ...)
{
	va_list ap;

	v->verdict = (uint32_t)verdict;
	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
	return KREX_OK;
}

/* The credential in text: a bare one, or the "signed" member of an object.
 * 0, -1 with a verdict given, -2 out of memory. */
static int find_cred(struct krex_verify *v, const char *text, char **cred, const char **obj,
                     size_t *objlen)
{
	const char *t = text, *val;
	size_t n = strlen(text), vl;
	int rc;

	*obj = NULL;
	while (n && strchr(" \t\r\n", *t))
		t++, n--;
	while (n && strchr(" \t\r\n", t[n - 1]))
		n--;
	if (n > 6 && !strncmp(t, "MUNGE:", 6)) {
		*cred = strndup(t, n);
		return *cred ? 0 : -2;
	}
	rc = json_object_get(t, n, "signed", &val, &vl);
	if (rc < 0)
		return verdict(v, KREX_VERIFY_MALFORMED,
		               "neither a munge credential (MUNGE:...:) nor a JSON object"),
		       -1;
	if (rc == 0)
		return verdict(v, KREX_VERIFY_MALFORMED,
		               "the JSON object has no \"signed\" member (a certificate from krex region --json of a krexd that signs)"),
		       -1;
	if (vl == 4 && !memcmp(val, "null", 4)) {
		char why[256] = "";
		const char *u;
		size_t ul;
		if (json_object_get(t, n, "unsigned", &u, &ul) == 1)
			json_string_value(u, ul, why, sizeof(why));
		return verdict(v, KREX_VERIFY_MALFORMED, "the certificate is not signed%s%s",
		               why[0] ? ": " : "", why),
		       -1;
	}
	*cred = malloc(vl + 1);
	if (!*cred)
		return -2;
	if (json_string_value(val, vl, *cred, vl + 1) < 0 || strncmp(*cred, "MUNGE:", 6)) {
		free(*cred);
		*cred = NULL;
		return verdict(v, KREX_VERIFY_MALFORMED,
		               "the \"signed\" member is not a munge credential (MUNGE:...:)"),
		       -1;
	}
	*obj = t;
	*objlen = n;
	return 0;
}

/* The members of the payload v names: 0, or -1 (a verdict given). */
static int read_payload(struct krex_verify *v, const char *p, size_t n, const char **cert,
                        size_t *certlen)
{
	static const char *const keys[] = {"krex", "node",   "uid",     "job",
	                                   "step", "region", "outcome", "certificate"};
	const char *val[8];
	size_t vl[8], i;
	char mark[64], outcome[32];
	unsigned long long u[4];

	const char *k0, *v0;
	size_t kl0, vl0, pos = 0;

	/* the whole payload is one JSON object, strictly (RFC 8259), or nothing of it is read */
	if (json_object_next(p, n, &pos, &k0, &kl0, &v0, &vl0) < 0)
		return verdict(v, KREX_VERIFY_MALFORMED,
		               "the credential is valid but its payload is not a JSON object"),
		       -1;
	for (i = 0; i < 8; i++)
		if (json_object_get(p, n, keys[i], &val[i], &vl[i]) != 1)
			return verdict(v, KREX_VERIFY_MALFORMED,
			               "the credential is valid but its payload is not a KREX certificate (no \"%s\")",
			               keys[i]),
			       -1;
	if (json_string_value(val[0], vl[0], mark, sizeof(mark)) < 0 ||
	    strcmp(mark, CERT_SIGNED_MARK) ||
	    json_string_value(val[1], vl[1], v->node, sizeof(v->node)) < 0 ||
	    json_uint_value(val[2], vl[2], &u[0]) < 0 ||
	    json_uint_value(val[3], vl[3], &u[1]) < 0 ||
	    json_uint_value(val[4], vl[4], &u[2]) < 0 ||
	    json_uint_value(val[5], vl[5], &u[3]) < 0 ||
	    json_string_value(val[6], vl[6], outcome, sizeof(outcome)) < 0 || vl[7] < 2 ||
	    val[7][0] != '{' || vl[7] >= sizeof(v->certificate))
		return verdict(v, KREX_VERIFY_MALFORMED,
		               "the credential is valid but its payload is not a KREX certificate of this version"),
		       -1;
	v->uid = (uint32_t)u[0];
	v->job = (uint32_t)u[1];
	v->step = (uint32_t)u[2];
	v->region_id = u[3];
	for (v->outcome = 0; v->outcome <= KREX_OUTCOME_UNPROTECTED; v->outcome++)
		if (!strcmp(outcome, krex_outcome_name(v->outcome)))
			break;
	memcpy(v->certificate, val[7], vl[7]);
	v->certificate[vl[7]] = '\0';
	*cert = val[7];
	*certlen = vl[7];
	return 0;
}

/*
 * The certificate next to the credential (obj's members but "signed" and
 * "unsigned") against the signed one: the same members with the same values.
 * Returns 1 when obj holds no certificate member at all, 0 when they match,
 * -1 (a verdict given) when they do not.
 */
static int compare(struct krex_verify *v, const char *obj, size_t objlen, const char *cert,
                   size_t certlen)
{
	const char *k, *val, *sv;
	size_t kl, vl, svl, pos = 0, seen = 0, total = 0;
	char key[64];
	int rc;

	while ((rc = json_object_next(obj, objlen, &pos, &k, &kl, &val, &vl)) == 1) {
		if ((kl == 6 && !memcmp(k, "signed", 6)) || (kl == 8 && !memcmp(k, "unsigned", 8)))
			continue;
		seen++;
		snprintf(key, sizeof(key), "%.*s", (int)(kl < 60 ? kl : 60), k);
		if (json_object_get(obj, objlen, key, &sv, &svl) != 1 || sv != val)
			return verdict(v, KREX_VERIFY_MISMATCH,
			               "the certificate next to the credential has \"%s\" twice",
			               key),
			       -1;
		if (json_object_get(cert, certlen, key, &sv, &svl) != 1)
			return verdict(v, KREX_VERIFY_MISMATCH,
			               "the certificate next to the credential has \"%s\", the signed one has not",
			               key),
			       -1;
		if (!json_same(val, vl, sv, svl))
			return verdict(v, KREX_VERIFY_MISMATCH,
			               "the certificate next to the credential does not match the signed one: \"%s\" is %.*s, signed %.*s",
			               key, (int)(vl < 60 ? vl : 60), val,
			               (int)(svl < 60 ? svl : 60), sv),
			       -1;
	}
	if (rc < 0)
		return verdict(v, KREX_VERIFY_MALFORMED, "the certificate is not valid JSON"), -1;
	if (!seen)
		return 1;
	pos = 0;
	while (json_object_next(cert, certlen, &pos, &k, &kl, &val, &vl) == 1)
		total++;
	if (seen != total)
		return verdict(v, KREX_VERIFY_MISMATCH,
		               "the certificate next to the credential lacks %zu of the signed one's members",
		               total - seen),
		       -1;
	return 0;
}

KREX_EXPORT int krex_certificate_verify(const char *text, struct krex_verify *v)
{
	struct mapi_decoded d;
	const char *obj, *cert;
	size_t objlen = 0, certlen;
	char *cred = NULL, why[256], when[64], by[96];
	struct passwd pw, *pwp;
	char pwbuf[1024];
	struct tm tm;
	time_t t;
	int r, cmp;

	if (!text || !v || v->size < sizeof(*v))
		return KREX_EINVAL;
	memset((char *)v + offsetof(struct krex_verify, verdict), 0,
	       sizeof(*v) - offsetof(struct krex_verify, verdict));
	/* never valid by default: each way out gives its verdict */
	v->verdict = KREX_VERIFY_MALFORMED;
	r = find_cred(v, text, &cred, &obj, &objlen);
	if (r < 0)
		return r == -2 ? KREX_ENOMEM : KREX_OK;
	r = mapi_decode(v->munge_socket, cred, &d, why, sizeof(why));
	free(cred);
	switch (r) {
	case MAPI_OK:
		break;
	case MAPI_REPLAYED:
		v->replayed = 1;
		break;
	case MAPI_EXPIRED:
		v->expired = 1;
		break;
	case MAPI_REWOUND:
		free(d.payload);
		return verdict(
		        v, KREX_VERIFY_BAD,
		        "the credential was encoded in the future (clocks of the nodes differ): %s",
		        why);
	case MAPI_INVALID:
		return verdict(
		        v, KREX_VERIFY_BAD,
		        "not a valid credential of this cluster's munge key (tampered with, or another key): %s",
		        why);
	case MAPI_SOCKET:
	case MAPI_UNAVAIL:
		return verdict(v, KREX_VERIFY_NOMUNGE, "cannot verify: %s", why);
	default:
		return verdict(v, KREX_VERIFY_NOMUNGE, "cannot verify: munge_decode: %s", why);
	}
	v->cred_uid = d.uid;
	v->cred_gid = d.gid;
	v->encoded = (int64_t)d.encoded;
	v->ttl = d.ttl;
	if (!d.payload)
		return KREX_ENOMEM;
	if (v->cred_uid != v->signer_uid && !(v->flags & KREX_VERIFY_ANY_SIGNER)) {
		if (getpwuid_r((uid_t)v->cred_uid, &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 && pwp)
			snprintf(by, sizeof(by), " (%s)", pw.pw_name);
		else
			by[0] = '\0';
		free(d.payload);
		return verdict(
		        v, KREX_VERIFY_SIGNER,
		        "the credential was encoded by uid %u%s, not by krexd's uid %u: any user can munge a payload, only krexd's is a certificate",
		        v->cred_uid, by, v->signer_uid);
	}
	if (read_payload(v, d.payload, d.len, &cert, &certlen) < 0) {
		free(d.payload);
		return KREX_OK;
	}
	cmp = obj ? compare(v, obj, objlen, cert, certlen) : 1;
	free(d.payload);
	if (cmp < 0)
		return KREX_OK;
	if (getpwuid_r((uid_t)v->uid, &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 && pwp)
		snprintf(v->user, sizeof(v->user), "%s", pw.pw_name);
	t = (time_t)v->encoded;
	if (!localtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", &tm))
		snprintf(when, sizeof(when), "%lld", (long long)v->encoded);
	if (v->expired && !(v->flags & KREX_VERIFY_ALLOW_EXPIRED))
		return verdict(
		        v, KREX_VERIFY_EXPIRED,
		        "the credential expired: encoded %s with a time-to-live of %d s (munged checked its MAC; --allow-expired accepts it)",
		        when, v->ttl);
	if (v->cred_uid != v->signer_uid) /* KREX_VERIFY_ANY_SIGNER: only what that uid says */
		return verdict(
		        v, KREX_VERIFY_VALID,
		        "signed by uid %u, not by krexd's uid %u (any signer accepted: this is only what uid %u says), on %s at %s%s%s",
		        v->cred_uid, v->signer_uid, v->cred_uid, v->node, when,
		        v->replayed ? " (verified before on this node)" : "",
		        v->expired ? " (expired, accepted)" : "");
	return verdict(v, KREX_VERIFY_VALID, "signed by krexd on %s at %s%s%s", v->node, when,
	               v->replayed ? " (verified before on this node)" : "",
	               v->expired ? " (expired, accepted)" : "");
}
