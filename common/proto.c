/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.c - packing and unpacking of KREX wire messages.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdio.h"
#include "proto.h"

/* ---- packing buffer ------------------------------------------------------ */

void pbuf_init(struct pbuf *b)
{
	memset(b, 0, sizeof(*b));
	b->owned = 1;
}

void pbuf_reader(struct pbuf *b, const uint8_t *data, size_t len)
{
	memset(b, 0, sizeof(*b));
	b->data = (uint8_t *)data;
	b->len = len;
}

void pbuf_free(struct pbuf *b)
{
	if (b->owned)
		free(b->data);
	memset(b, 0, sizeof(*b));
}

/* Make room for n more bytes; the buffer never grows past one message. */
static uint8_t *pbuf_room(struct pbuf *b, size_t n)
{
	size_t want = b->len + n;
	uint8_t *p;

	if (b->err)
		return NULL;
	if (want > PROTO_HDR_LEN + PROTO_MAX_PAYLOAD) {
		b->err = EMSGSIZE;
		return NULL;
	}
	if (want > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < want)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p) {
			b->err = ENOMEM;
			return NULL;
		}
		b->data = p;
		b->cap = cap;
	}
	p = b->data + b->len;
	b->len = want;
	return p;
}

void pbuf_put_u8(struct pbuf *b, uint8_t v)
{
	uint8_t *p = pbuf_room(b, 1);

	if (p)
		p[0] = v;
}

void pbuf_put_u16(struct pbuf *b, uint16_t v)
{
	uint8_t *p = pbuf_room(b, 2);

	if (p) {
		p[0] = (uint8_t)(v >> 8);
		p[1] = (uint8_t)v;
	}
}

void pbuf_put_u32(struct pbuf *b, uint32_t v)
{
	pbuf_put_u16(b, (uint16_t)(v >> 16));
	pbuf_put_u16(b, (uint16_t)v);
}

void pbuf_put_u64(struct pbuf *b, uint64_t v)
{
	pbuf_put_u32(b, (uint32_t)(v >> 32));
	pbuf_put_u32(b, (uint32_t)v);
}

void pbuf_put_str(struct pbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	uint8_t *p;

	if (n > PROTO_MAX_STR) {
		b->err = EINVAL;
		return;
	}
	pbuf_put_u16(b, (uint16_t)n);
	p = pbuf_room(b, n);
	if (p && n)
		memcpy(p, s, n);
}

static const uint8_t *pbuf_take(struct pbuf *b, size_t n)
{
	const uint8_t *p;

	if (b->err || b->len - b->pos < n) {
		b->err = EPROTO;
		return NULL;
	}
	p = b->data + b->pos;
	b->pos += n;
	return p;
}

uint8_t pbuf_get_u8(struct pbuf *b)
{
	const uint8_t *p = pbuf_take(b, 1);

	return p ? p[0] : 0;
}

uint16_t pbuf_get_u16(struct pbuf *b)
{
	const uint8_t *p = pbuf_take(b, 2);

	return p ? (uint16_t)((p[0] << 8) | p[1]) : 0;
}

uint32_t pbuf_get_u32(struct pbuf *b)
{
	uint32_t hi = pbuf_get_u16(b);

	return (hi << 16) | pbuf_get_u16(b);
}

uint64_t pbuf_get_u64(struct pbuf *b)
{
	uint64_t hi = pbuf_get_u32(b);

	return (hi << 32) | pbuf_get_u32(b);
}

void pbuf_get_str(struct pbuf *b, char *out, size_t outlen)
{
	uint16_t n = pbuf_get_u16(b);
	const uint8_t *p;

	out[0] = '\0';
	if (b->err)
		return;
	if (n > PROTO_MAX_STR || (size_t)n >= outlen) {
		b->err = EPROTO;
		return;
	}
	p = pbuf_take(b, n);
	if (!p)
		return;
	if (memchr(p, '\0', n)) { /* an embedded NUL is a lie about the length */
		b->err = EPROTO;
		return;
	}
	memcpy(out, p, n);
	out[n] = '\0';
}

/* ---- the messages of messages.def ------------------------------------------- */

/* The smallest packed form of each struct (every string empty, every list
 * empty): PROTO_MIN_proto_status_part, ...  A list's count is checked
 * against it before anything is allocated. */
/* clang-format off */
#define WIRE_STRUCT(s) PROTO_MIN_##s = 0
#define WIRE_EXTERN(s) WIRE_STRUCT(s)
#define WIRE_END(s) ,
#define W_U32(f) + 4
#define W_U64(f) + 8
#define W_I32(f) + 4
#define W_I64(f) + 8
#define W_U32_UPTO(f, max) + 4
#define W_STR(f, size) + 2
#define W_SUB(s, f) + PROTO_MIN_##s
#define W_STRS(n, f, max, size) + 2
#define W_IDXS(n, f, max) + 2
#define W_ARRAY(s, n, f, max) + 2
#define W_LIST(s, n, f) + 2
#define W_BYTES(n, f, max) + 4
/* clang-format on */
enum proto_min {
#include "messages.def"
};

_Static_assert(PROTO_MIN_proto_log_entry == PROTO_LOG_ENTRY_MIN,
               "PROTO_LOG_ENTRY_MIN is the smallest log entry of messages.def");
_Static_assert(sizeof(struct krex_certificate_wire) == sizeof(struct krex_certificate),
               "messages.def lists every field of struct krex_certificate");

/* u32 length, then the bytes (none of them NUL); a NULL s sends none. */
static void put_bytes(struct pbuf *b, const char *s, uint32_t len, uint32_t max)
{
	uint32_t n = s ? len : 0;
	uint8_t *p;

	if (n > max || (n && memchr(s, '\0', n))) {
		b->err = EINVAL;
		return;
	}
	pbuf_put_u32(b, n);
	p = pbuf_room(b, n);
	if (p && n)
		memcpy(p, s, n);
}

/* What put_bytes sent, malloc'd and NUL-terminated, its length in *len. */
static char *get_bytes(struct pbuf *b, uint32_t *len, uint32_t max)
{
	const uint8_t *p;
	char *s;

	*len = pbuf_get_u32(b);
	if (b->err)
		return NULL;
	if (*len > max) {
		b->err = EPROTO;
		return NULL;
	}
	p = pbuf_take(b, *len);
	if (!p)
		return NULL;
	if (memchr(p, '\0', *len)) {
		b->err = EPROTO;
		return NULL;
	}
	s = malloc((size_t)*len + 1);
	if (!s) {
		b->err = ENOMEM;
		return NULL;
	}
	memcpy(s, p, *len);
	s[*len] = '\0';
	return s;
}

/* put_proto_register(), ...: each row of a struct in turn.  A count over its
 * maximum stops the struct with EINVAL. */
/* clang-format off */
#define WIRE_STRUCT(s) \
	static void put_##s(struct pbuf *b, const struct s *m) \
	{ \
		unsigned i; \
		(void)i;
#define WIRE_EXTERN(s) WIRE_STRUCT(s)
#define WIRE_END(s) }
#define W_U32(f) pbuf_put_u32(b, m->f);
#define W_U64(f) pbuf_put_u64(b, m->f);
#define W_I32(f) pbuf_put_u32(b, (uint32_t)m->f);
#define W_I64(f) pbuf_put_u64(b, (uint64_t)m->f);
#define W_U32_UPTO(f, max) pbuf_put_u32(b, m->f);
#define W_STR(f, size) pbuf_put_str(b, m->f);
#define W_SUB(s, f) put_##s(b, &m->f);
#define W_COUNT(n, max) \
	if (m->n > (max)) { \
		b->err = EINVAL; \
		return; \
	} \
	pbuf_put_u16(b, m->n);
#define W_STRS(n, f, max, size) \
	W_COUNT(n, max) \
	for (i = 0; i < m->n; i++) \
		pbuf_put_str(b, m->f[i]);
#define W_IDXS(n, f, max) \
	W_COUNT(n, max) \
	for (i = 0; i < m->n; i++) \
		pbuf_put_u16(b, m->f[i]);
#define W_ARRAY(s, n, f, max) \
	W_COUNT(n, max) \
	for (i = 0; i < m->n; i++) \
		put_##s(b, &m->f[i]);
#define W_LIST(s, n, f) \
	pbuf_put_u16(b, m->n); \
	for (i = 0; i < m->n; i++) \
		put_##s(b, &m->f[i]);
#define W_BYTES(n, f, max) put_bytes(b, m->f, m->n, max);
/* clang-format on */
#include "messages.def"
#undef W_COUNT

/* get_proto_register(), ...: the same rows read back, each checked: a count
 * over its maximum, an empty GPU name, an index out of range, a value over
 * its maximum stop it with EPROTO. */
/* clang-format off */
#define WIRE_STRUCT(s) \
	static void get_##s(struct pbuf *b, struct s *m) \
	{ \
		unsigned i; \
		(void)i;
#define WIRE_EXTERN(s) WIRE_STRUCT(s)
#define WIRE_END(s) }
#define W_U32(f) m->f = pbuf_get_u32(b);
#define W_U64(f) m->f = pbuf_get_u64(b);
#define W_I32(f) m->f = (int32_t)pbuf_get_u32(b);
#define W_I64(f) m->f = (int64_t)pbuf_get_u64(b);
#define W_U32_UPTO(f, max) \
	m->f = pbuf_get_u32(b); \
	if (!b->err && m->f > (max)) \
		b->err = EPROTO;
#define W_STR(f, size) pbuf_get_str(b, m->f, sizeof(m->f));
#define W_SIZE(f) m->f = sizeof(*m);
#define W_SUB(s, f) get_##s(b, &m->f);
#define W_COUNT(n, max) \
	m->n = pbuf_get_u16(b); \
	if (m->n > (max)) { \
		b->err = EPROTO; \
		return; \
	}
#define W_STRS(n, f, max, size) \
	W_COUNT(n, max) \
	for (i = 0; i < m->n && !b->err; i++) { \
		pbuf_get_str(b, m->f[i], sizeof(m->f[i])); \
		if (!b->err && m->f[i][0] == '\0') \
			b->err = EPROTO; \
	}
#define W_IDXS(n, f, max) \
	W_COUNT(n, max) \
	for (i = 0; i < m->n && !b->err; i++) { \
		m->f[i] = pbuf_get_u16(b); \
		if (m->f[i] >= (max)) \
			b->err = EPROTO; \
	}
#define W_ARRAY(s, n, f, max) \
	W_COUNT(n, max) \
	for (i = 0; i < m->n && !b->err; i++) \
		get_##s(b, &m->f[i]);
#define W_LIST(s, n, f) \
	m->n = pbuf_get_u16(b); \
	if (b->err || (size_t)m->n * PROTO_MIN_##s > b->len - b->pos) { \
		b->err = EPROTO; \
		m->n = 0; \
		return; \
	} \
	m->f = calloc(m->n ? m->n : 1, sizeof(*m->f)); \
	if (!m->f) { \
		b->err = ENOMEM; \
		return; \
	} \
	for (i = 0; i < m->n && !b->err; i++) \
		get_##s(b, &m->f[i]);
#define W_BYTES(n, f, max) m->f = get_bytes(b, &m->n, max);
/* clang-format on */
#include "messages.def"
#undef W_COUNT

/* free_proto_register(), ...: what get_ allocated (lists and bytes). */
/* clang-format off */
#define WIRE_STRUCT(s) \
	static inline void free_##s(struct s *m) \
	{ \
		(void)m;
#define WIRE_EXTERN(s) WIRE_STRUCT(s)
#define WIRE_END(s) }
#define W_LIST(s, n, f) \
	free(m->f); \
	m->f = NULL; \
	m->n = 0;
#define W_BYTES(n, f, max) W_LIST(, n, f)
/* clang-format on */
#include "messages.def"

static void put_body(struct pbuf *b, uint16_t type, const union proto_body *m)
{
	switch (type) {
#define MSG(NAME, n, member, s)                                                                    \
	case PROTO_##NAME:                                                                         \
		put_##s(b, &m->member);                                                            \
		break;
#include "messages.def"
	default:
		b->err = EINVAL;
	}
}

int proto_pack(struct pbuf *out, uint16_t type, uint32_t seq, const union proto_body *msg)
{
	size_t start = out->len, plen;
	uint8_t *h;

	pbuf_put_u32(out, PROTO_MAGIC);
	pbuf_put_u16(out, PROTO_VERSION);
	pbuf_put_u16(out, type);
	pbuf_put_u32(out, 0); /* length, patched below */
	pbuf_put_u32(out, seq);
	put_body(out, type, msg);
	if (out->err) {
		errno = out->err;
		return -1;
	}
	plen = out->len - start - PROTO_HDR_LEN;
	h = out->data + start + 8;
	h[0] = (uint8_t)(plen >> 24);
	h[1] = (uint8_t)(plen >> 16);
	h[2] = (uint8_t)(plen >> 8);
	h[3] = (uint8_t)plen;
	return 0;
}

int proto_hdr_parse(const uint8_t *buf, struct proto_hdr *h)
{
	struct pbuf b;

	pbuf_reader(&b, buf, PROTO_HDR_LEN);
	h->magic = pbuf_get_u32(&b);
	h->version = pbuf_get_u16(&b);
	h->type = pbuf_get_u16(&b);
	h->length = pbuf_get_u32(&b);
	h->seq = pbuf_get_u32(&b);
	if (h->magic != PROTO_MAGIC)
		return PROTO_HDR_BADMAGIC;
	if (h->version != PROTO_VERSION)
		return PROTO_HDR_BADVERSION;
	if (h->type == 0 || h->type >= PROTO_TYPE_MAX)
		return PROTO_HDR_BADTYPE;
	if (h->length > PROTO_MAX_PAYLOAD)
		return PROTO_HDR_TOOLONG;
	return PROTO_HDR_OK;
}

static void get_body(struct pbuf *b, uint16_t type, union proto_body *m)
{
	switch (type) {
#define MSG(NAME, n, member, s)                                                                    \
	case PROTO_##NAME:                                                                         \
		get_##s(b, &m->member);                                                            \
		break;
#include "messages.def"
	default:
		b->err = EPROTO;
	}
}

int proto_unpack(uint16_t type, const uint8_t *payload, size_t len, union proto_body *msg)
{
	struct pbuf b;

	memset(msg, 0, sizeof(*msg));
	if (len > PROTO_MAX_PAYLOAD) {
		errno = EPROTO;
		return -1;
	}
	pbuf_reader(&b, payload, len);
	get_body(&b, type, msg);
	if (!b.err && b.pos != b.len)
		b.err = EPROTO; /* trailing bytes: the length lied */
	if (b.err) {
		proto_body_free(type, msg);
		errno = b.err == ENOMEM ? ENOMEM : EPROTO;
		return -1;
	}
	return 0;
}

void proto_body_free(uint16_t type, union proto_body *msg)
{
	switch (type) {
#define MSG(NAME, n, member, s)                                                                    \
	case PROTO_##NAME:                                                                         \
		free_##s(&msg->member);                                                            \
		break;
#include "messages.def"
	}
}

const char *proto_type_name(uint16_t type)
{
	static const char *const names[PROTO_TYPE_MAX] = {
#define MSG(NAME, n, member, s) [PROTO_##NAME] = #NAME,
#include "messages.def"
	};

	return type < PROTO_TYPE_MAX && names[type] ? names[type] : "?";
}

const char *proto_part_state(uint32_t state, char *buf, size_t len)
{
	static const struct {
		uint32_t bit;
		const char *word;
	} w[] = {{PROTO_PART_MOVING, "moving"},
	         {PROTO_PART_OWNER, "owner"},
	         {PROTO_PART_WAITING, "waiting"},
	         {PROTO_PART_GATED, "gated"},
	         {PROTO_PART_FROZEN, "frozen"}};
	uint32_t rest = state;
	size_t n = 0, i;
	int k;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		if (!(state & w[i].bit))
			continue;
		rest &= ~w[i].bit;
		k = snprintf(buf + n, len - n, "%s%s", n ? "," : "", w[i].word);
		if (k < 0 || (size_t)k >= len - n) {
			buf[n] = '\0'; /* cut at the last whole word */
			return buf;
		}
		n += (size_t)k;
	}
	if (rest) {
		k = snprintf(buf + n, len - n, "%s0x%x", n ? "," : "", (unsigned)rest);
		if (k < 0 || (size_t)k >= len - n)
			buf[n] = '\0';
	} else if (!state) {
		snprintf(buf, len, "running");
	}
	return buf;
}

const char *proto_hdr_strerror(int err)
{
	switch (err) {
	case PROTO_HDR_OK:
		return "ok";
	case PROTO_HDR_BADMAGIC:
		return "bad magic (not a KREX message)";
	case PROTO_HDR_BADVERSION:
		return "unsupported protocol version";
	case PROTO_HDR_BADTYPE:
		return "unknown message type";
	case PROTO_HDR_TOOLONG:
		return "message length over the limit";
	}
	return "unknown header error";
}

/* ---- blocking helpers -------------------------------------------------------- */

int proto_send(int fd, uint16_t type, uint32_t seq, const union proto_body *msg,
               uint64_t deadline_ns)
{
	struct pbuf b;
	int rc;

	pbuf_init(&b);
	rc = proto_pack(&b, type, seq, msg);
	if (rc == 0)
		rc = fd_write_full(fd, b.data, b.len, deadline_ns);
	pbuf_free(&b);
	return rc;
}

int proto_recv(int fd, uint16_t *type, uint32_t *seq, union proto_body *msg, uint64_t deadline_ns,
               int *hdr_err)
{
	uint8_t hdr[PROTO_HDR_LEN];
	struct proto_hdr h;
	uint8_t *payload = NULL;
	int rc, herr;

	if (hdr_err)
		*hdr_err = PROTO_HDR_OK;
	if (fd_read_full(fd, hdr, sizeof(hdr), deadline_ns) < 0)
		return -1;
	herr = proto_hdr_parse(hdr, &h);
	if (herr != PROTO_HDR_OK) {
		if (hdr_err)
			*hdr_err = herr;
		errno = EPROTO;
		return -1;
	}
	if (h.length) {
		payload = malloc(h.length);
		if (!payload)
			return -1;
		if (fd_read_full(fd, payload, h.length, deadline_ns) < 0) {
			free(payload);
			return -1;
		}
	}
	rc = proto_unpack(h.type, payload, h.length, msg);
	free(payload);
	if (rc < 0)
		return -1;
	*type = h.type;
	if (seq)
		*seq = h.seq;
	return 0;
}

int proto_call(int fd, uint16_t type, uint32_t seq, const union proto_body *req,
               uint64_t send_deadline_ns, uint16_t *rtype, union proto_body *rep,
               uint64_t deadline_ns, int *hdr_err)
{
	if (hdr_err)
		*hdr_err = PROTO_HDR_OK;
	if (proto_send(fd, type, seq, req, send_deadline_ns) < 0)
		return -1;
	return proto_recv(fd, rtype, NULL, rep, deadline_ns, hdr_err);
}

void proto_error_set(union proto_body *msg, int code, const char *fmt, ...)
{
	va_list ap;

	memset(&msg->error, 0, sizeof(msg->error));
	msg->error.code = (uint32_t)code;
	va_start(ap, fmt);
	vsnprintf(msg->error.message, sizeof(msg->error.message), fmt, ap);
	va_end(ap);
}
