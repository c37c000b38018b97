/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.h - the wire protocol between krexd and its clients (libregion, the
 * gate's drain thread, the krex CLI, the SPANK plugin).
 *
 * A message is a 16-byte header followed by a payload:
 *
 *	u32 magic "KREX"  u16 version  u16 type  u32 length  u32 seq
 *
 * all in network byte order.  Payload fields are packed one by one (never a
 * raw struct): integers big-endian, strings as u16 length + bytes without NUL.
 * The length is checked against PROTO_MAX_PAYLOAD before anything is
 * allocated, and a payload must be consumed exactly (no short, no trailing
 * bytes).  Every message and field is one row of messages.def, which gives
 * the type enum and the structs here and the packing in proto.c;
 * doc/protocol.md has the table of every message.
 */
#ifndef KREX_PROTO_H
#define KREX_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "defs.h"
#include "krex/region.h"

#define PROTO_MAGIC 0x4b524558u /* "KREX" */
/* The smallest packed LOG_REPLY entry (every string empty: 4 string lengths,
 * the fixed fields, the certificate's with protocol 5's own power cap and
 * chain fields and protocol 6's ungated siblings): a count the payload cannot hold is refused before anything
 * is allocated for it, and krexd's pages are cut by it (proto.c checks it
 * against messages.def). */
#define PROTO_LOG_ENTRY_MIN 258
#define PROTO_VERSION 6 /* bump on any change, and say so in NEWS.md */
#define PROTO_HDR_LEN 16
#define PROTO_MAX_PAYLOAD 65536
#define PROTO_MAX_STR 1024 /* any one string field */

/* The message types, PROTO_REGISTER = 1 ... (messages.def). */
enum proto_type {
#define MSG(NAME, n, member, s) PROTO_##NAME = n,
#include "messages.def"
	PROTO_TYPE_MAX
};

/* Header check results (distinct texts, doc/design.md "The protocol"). */
enum proto_hdr_err {
	PROTO_HDR_OK = 0,
	PROTO_HDR_BADMAGIC,
	PROTO_HDR_BADVERSION,
	PROTO_HDR_BADTYPE,
	PROTO_HDR_TOOLONG,
};

struct proto_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t length;
	uint32_t seq;
};

/* PROTO_REGISTER flags */
#define PROTO_REG_GATE 0x1u    /* this member runs a drain thread and will ACK drains */
#define PROTO_REG_NEWCG 0x2u   /* make it a participant of its own even inside another's cgroup */
#define PROTO_REG_HOLDCTX 0x4u /* with REG_GATE: its GPU contexts wait at the gate */

#define PROTO_GPU_NAME_LEN (KREX_MAX_GPU_NAME + 1)

/* proto_status_part.state */
#define PROTO_PART_FROZEN 0x1u
#define PROTO_PART_GATED 0x2u
#define PROTO_PART_OWNER 0x4u
#define PROTO_PART_WAITING 0x8u
#define PROTO_PART_MOVING 0x10u /* its pid being moved into its cgroup (krexd's mover thread) */

/* proto_log.step: any step */
#define PROTO_LOG_ANY_STEP 0xffffffffu

/* PROTO_SIGNED_REPLY status */
#define PROTO_SIGNED_OK 0   /* cred holds the munge credential */
#define PROTO_SIGNED_NONE 1 /* no signed form: reason says why */
#define PROTO_SIGNED_MAX_CRED (KREX_SIGNED_MAX - 1)

/*
 * The structs of the messages and of their parts, struct proto_register ...,
 * one member per row of messages.def, in wire order.  (PROTO_CERT carries a
 * struct krex_certificate, <krex/region.h>; struct krex_certificate_wire is
 * its rows, which proto.c checks against it.)
 */
/* clang-format off */
#define WIRE_STRUCT(s) struct s {
#define WIRE_EXTERN(s) struct s##_wire {
#define WIRE_END(s) };
#define W_U32(f) uint32_t f;
#define W_U64(f) uint64_t f;
#define W_I32(f) int32_t f;
#define W_I64(f) int64_t f;
#define W_U32_UPTO(f, max) uint32_t f;
#define W_STR(f, size) char f[size];
#define W_SIZE(f) uint32_t f;
#define W_SUB(s, f) struct s f;
#define W_STRS(n, f, max, size) uint16_t n; char f[max][size];
#define W_IDXS(n, f, max) uint16_t n; uint16_t f[max];
#define W_ARRAY(s, n, f, max) uint16_t n; struct s f[max];
#define W_LIST(s, n, f) uint16_t n; struct s *f;
#define W_BYTES(n, f, max) uint32_t n; char *f;
/* clang-format on */
#include "messages.def"

/* Any message, as the member that messages.def names for its type. */
union proto_body {
#define MSG(NAME, n, member, s) struct s member;
#include "messages.def"
};

/* ---- packing buffer ------------------------------------------------------ */

struct pbuf {
	uint8_t *data;
	size_t len; /* bytes written (writer) or available (reader) */
	size_t cap;
	size_t pos; /* read position */
	int err;    /* sticky: set on overflow, underrun or a string too long */
	int owned;  /* data is malloc'd by the buffer */
};

void pbuf_init(struct pbuf *b);
void pbuf_reader(struct pbuf *b, const uint8_t *data, size_t len);
void pbuf_free(struct pbuf *b);
void pbuf_put_u8(struct pbuf *b, uint8_t v);
void pbuf_put_u16(struct pbuf *b, uint16_t v);
void pbuf_put_u32(struct pbuf *b, uint32_t v);
void pbuf_put_u64(struct pbuf *b, uint64_t v);
void pbuf_put_str(struct pbuf *b, const char *s);
uint8_t pbuf_get_u8(struct pbuf *b);
uint16_t pbuf_get_u16(struct pbuf *b);
uint32_t pbuf_get_u32(struct pbuf *b);
uint64_t pbuf_get_u64(struct pbuf *b);
/* Copy a string into out (NUL-terminated); err if it does not fit. */
void pbuf_get_str(struct pbuf *b, char *out, size_t outlen);

/* ---- messages ------------------------------------------------------------ */

/* Pack header + payload for msg of type into out (initialised by the caller).
 * Returns 0, or -1 with errno EINVAL (bad type, string too long) or EMSGSIZE. */
int proto_pack(struct pbuf *out, uint16_t type, uint32_t seq, const union proto_body *msg);

/* Parse a 16-byte header.  Returns an enum proto_hdr_err. */
int proto_hdr_parse(const uint8_t *buf, struct proto_hdr *h);

/* Unpack a payload of type into msg.  Returns 0, or -1 (errno EPROTO) when the
 * payload is short, long, or a field is out of range. */
int proto_unpack(uint16_t type, const uint8_t *payload, size_t len, union proto_body *msg);

/* Free what proto_unpack allocated (STATUS_REPLY, LOG_REPLY and SIGNED_REPLY allocate). */
void proto_body_free(uint16_t type, union proto_body *msg);

const char *proto_type_name(uint16_t type);
const char *proto_hdr_strerror(int err);
/* A status reply's participant state (proto_status_part.state): its bits
 * as words joined by commas ("owner,frozen"), "running" for none, bits this
 * build does not know (a newer krexd's) as hex; cut to fit len.  Returns buf. */
const char *proto_part_state(uint32_t state, char *buf, size_t len);

/* ---- blocking helpers for clients ----------------------------------------- */

/* Send one message before deadline_ns. Returns 0 or -1 with errno. */
int proto_send(int fd, uint16_t type, uint32_t seq, const union proto_body *msg,
               uint64_t deadline_ns);

/*
 * Receive one message before deadline_ns into *type, *seq and *msg.  Returns
 * 0, or -1 with errno: ETIMEDOUT, ECONNRESET, EPROTO (bad header or payload;
 * *hdr_err says which header check failed, if one did).
 */
int proto_recv(int fd, uint16_t *type, uint32_t *seq, union proto_body *msg, uint64_t deadline_ns,
               int *hdr_err);

/*
 * One request and its reply, the exchange of every client (libregion's
 * client_call, the SPANK plugin's client_request_as): send type/seq/req
 * before send_deadline_ns, then receive the reply into *rtype and *rep before
 * deadline_ns.  Returns 0, or -1 with errno as proto_send / proto_recv
 * (*hdr_err says which header check failed, if one did).
 */
int proto_call(int fd, uint16_t type, uint32_t seq, const union proto_body *req,
               uint64_t send_deadline_ns, uint16_t *rtype, union proto_body *rep,
               uint64_t deadline_ns, int *hdr_err);

/* Fill an error message. */
void proto_error_set(union proto_body *msg, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#endif /* KREX_PROTO_H */
