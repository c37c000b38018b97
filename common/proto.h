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
 * bytes).  doc/protocol.md has the table of every message.
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
 * chain fields): a count the payload cannot hold is refused before anything
 * is allocated for it, and krexd's pages are cut by it. */
#define PROTO_LOG_ENTRY_MIN 248
#define PROTO_VERSION 5 /* bump on any change, and say so in NEWS.md */
#define PROTO_HDR_LEN 16
#define PROTO_MAX_PAYLOAD 65536
#define PROTO_MAX_STR 1024 /* any one string field */

enum proto_type {
	PROTO_REGISTER = 1,       /* C->D join as (a member of) a participant */
	PROTO_REGISTERED = 2,     /* D->C */
	PROTO_UNREGISTER = 3,     /* C->D */
	PROTO_OK = 4,             /* D->C */
	PROTO_REGION_BEGIN = 5,   /* C->D */
	PROTO_GRANT = 6,          /* D->C */
	PROTO_REGION_END = 7,     /* C->D */
	PROTO_CERT = 8,           /* D->C */
	PROTO_STATUS = 9,         /* C->D */
	PROTO_STATUS_REPLY = 10,  /* D->C */
	PROTO_DRAIN_ACK = 11,     /* C->D, from the drain thread */
	PROTO_RELEASE = 12,       /* C->D, root or the owner's uid: end a region by force */
	PROTO_ERROR = 13,         /* D->C */
	PROTO_LOG = 14,           /* C->D: the last regions' certificates (krex log) */
	PROTO_LOG_REPLY = 15,     /* D->C */
	PROTO_SUMMARY = 16,       /* C->D: one Slurm step's regions in figures (SPANK, step end) */
	PROTO_SUMMARY_REPLY = 17, /* D->C */
	PROTO_SIGNED = 18,        /* C->D the signed form of a certificate (munge) */
	PROTO_SIGNED_REPLY = 19,  /* D->C */
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
#define PROTO_REG_GATE 0x1u  /* this member runs a drain thread and will ACK drains */
#define PROTO_REG_NEWCG 0x2u /* make it a participant of its own even inside another's cgroup */

#define PROTO_GPU_NAME_LEN (KREX_MAX_GPU_NAME + 1)

struct proto_gpus {
	uint16_t n;
	char name[KREX_MAX_GPUS][PROTO_GPU_NAME_LEN];
};

struct proto_register {
	uint32_t pid;     /* the process to register: the sender, unless the sender is root */
	uint32_t job;     /* Slurm job id, 0 if none */
	uint32_t step;    /* Slurm step id */
	uint32_t flags;   /* PROTO_REG_* */
	char cgroup[512]; /* its cgroup if it has one of its own (e.g. a Slurm step), or "" */
	char cpus[256];   /* cpu list it may use, or "" for its current affinity */
	char label[128];  /* for krex status */
	struct proto_gpus gpus;
};

struct proto_registered {
	uint32_t participant; /* id; the gate word of a GPU holds the owner's id */
	uint32_t queue_cap;   /* launches between gate events, 0 = off */
	uint32_t queue_us;    /* GPU time a stream may have queued, 0 = count only */
	uint32_t gate_timeout_ms;
	char gate_path[512]; /* the gate page to map read-only */
	uint16_t nslots;
	uint16_t slot[KREX_MAX_GPUS]; /* gate page slot of each registered GPU, in order */
};

struct proto_unregister {
	uint32_t pid;
};

struct proto_ok {
	uint32_t value;
};

struct proto_region_begin {
	struct proto_gpus gpus; /* n == 0: all of the participant's GPUs */
	uint64_t expected_us;
	uint64_t max_us;
	uint32_t timeout_ms;
	uint32_t flags;
};

struct proto_grant {
	uint64_t region_id;
	uint64_t lease_us;
	uint64_t wait_us;
	uint64_t drain_us;
	uint64_t freeze_us;
	uint64_t isolate_us;
};

struct proto_region_end {
	uint64_t region_id; /* 0: the region the sender holds */
};

/* PROTO_CERT carries a struct krex_certificate, packed field by field. */

struct proto_status {
	uint32_t flags;
};

struct proto_status_gpu {
	char name[PROTO_GPU_NAME_LEN];
	uint32_t slot;
	uint32_t holder; /* participant id holding a region on it, 0 if none */
	uint64_t region_id;
	uint32_t queued; /* regions waiting for it */
};

struct proto_status_part {
	uint32_t id;
	uint32_t pid;
	uint32_t uid;
	uint32_t job;
	uint32_t step;
	uint32_t state;   /* PROTO_PART_* bits */
	uint32_t members; /* connected members with a drain thread */
	char label[128];
	char gpus[256];
	char cgroup[512];
};

#define PROTO_PART_FROZEN 0x1u
#define PROTO_PART_GATED 0x2u
#define PROTO_PART_OWNER 0x4u
#define PROTO_PART_WAITING 0x8u

struct proto_status_region {
	uint64_t id;
	uint32_t owner; /* participant id */
	uint32_t pid;   /* owner's pid */
	uint32_t state; /* 0 queued, 1 held */
	uint64_t age_us;
	uint64_t lease_us;
	char gpus[256];
};

struct proto_status_reply {
	char node[64];
	char freezer[32];
	char isolation[32];
	uint64_t uptime_us;
	uint64_t regions_total;
	uint16_t ngpus;
	struct proto_status_gpu gpu[KREX_MAX_GPUS];
	uint16_t nparts;
	struct proto_status_part *parts; /* malloc'd by unpack; proto_status_free() */
	uint16_t nregions;
	struct proto_status_region *regions; /* likewise */
};

struct proto_drain_ack {
	uint32_t generation; /* the gate page generation that was drained */
	uint32_t status;     /* 0 drained, else the drain callback's error */
	uint64_t drain_us;
};

struct proto_release {
	uint64_t region_id;
};

/* PROTO_LOG: filters (all must match); entries come newest first. */
#define PROTO_LOG_ANY_STEP 0xffffffffu
struct proto_log {
	uint32_t job;      /* 0: any */
	uint32_t step;     /* PROTO_LOG_ANY_STEP: any */
	uint32_t outcomes; /* bit (1 << outcome) for each outcome wanted; 0: any */
	uint64_t since_us; /* wall clock (Unix us): regions that ended at or after it; 0: any */
	uint64_t before;   /* entry seq: only older ones (the next page); 0: from the newest */
	uint32_t max;      /* at most this many entries; 0: as many as fit one reply */
};

/* One region that ended, as krexd's history keeps it. */
struct proto_log_entry {
	uint64_t seq;                 /* 1, 2, ... since krexd started */
	uint64_t begin_us;            /* wall clock (Unix us) of REGION_BEGIN */
	uint64_t end_us;              /* and of the end */
	uint32_t uid, pid, job, step; /* the owner participant's */
	char label[128];
	struct krex_certificate cert;
};

struct proto_log_reply {
	char node[64];
	uint64_t total; /* regions recorded since krexd started */
	uint64_t kept;  /* entries krexd holds now (krexd.conf history) */
	uint64_t next;  /* pass as before for the next page; 0: nothing older matches */
	uint16_t n;
	struct proto_log_entry *e; /* malloc'd by unpack; proto_body_free() */
};

struct proto_summary {
	uint32_t job, step;
};

struct proto_summary_reply {
	uint32_t job, step;
	uint32_t regions; /* regions of the step that ended (granted or entering) */
	uint32_t clean, degraded, expired;
	uint32_t late;                                     /* late siblings over those regions */
	uint64_t entry_p50_us, entry_p95_us, entry_max_us; /* begin to grant */
	uint64_t held_us;                                  /* total time held */
};

/* PROTO_SIGNED: the signed form of a region's certificate (doc/protocol.md). */
struct proto_signed {
	uint64_t region_id; /* a region this connection's uid owned (root: any) */
};

/* PROTO_SIGNED_REPLY status */
#define PROTO_SIGNED_OK 0   /* cred holds the munge credential */
#define PROTO_SIGNED_NONE 1 /* no signed form: reason says why */
#define PROTO_SIGNED_MAX_CRED (KREX_SIGNED_MAX - 1)

struct proto_signed_reply {
	uint64_t region_id;
	uint32_t status;   /* PROTO_SIGNED_* */
	char reason[256];  /* why there is none */
	uint32_t cred_len; /* bytes of cred, at most PROTO_SIGNED_MAX_CRED */
	char *cred;        /* NUL-terminated; malloc'd by unpack (proto_body_free) */
};

struct proto_error {
	uint32_t code; /* enum krex_error */
	char message[256];
};

union proto_body {
	struct proto_register reg;
	struct proto_registered registered;
	struct proto_unregister unreg;
	struct proto_ok ok;
	struct proto_region_begin begin;
	struct proto_grant grant;
	struct proto_region_end end;
	struct krex_certificate cert;
	struct proto_status status;
	struct proto_status_reply status_reply;
	struct proto_drain_ack ack;
	struct proto_release release;
	struct proto_error error;
	struct proto_log log;
	struct proto_log_reply log_reply;
	struct proto_summary summary;
	struct proto_summary_reply summary_reply;
	struct proto_signed sig;
	struct proto_signed_reply sig_reply;
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
