/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * <krex/region.h> - ask KREX for a quiet GPU.
 *
 * A job calls krex_region_begin() before timing GPU work and krex_region_end()
 * after it.  Between the two, krexd has blocked and drained the GPU work of
 * every other participant on those GPUs, frozen them and moved CPU noise off
 * the caller's cores.  krex_region_end() hands back a certificate that says
 * how quiet the region really was.
 *
 *	struct krex_region_opts o = KREX_REGION_OPTS_INIT;
 *	struct krex_certificate c;
 *	if (krex_region_begin(&o) == KREX_OK) {
 *		time_kernels();
 *		krex_region_end(&c);
 *	}
 *
 * Every call returns an enum krex_error value; krex_strerror() names it.
 * Nothing here prints, exits or aborts.  See krex_region_begin(3).
 */
#ifndef KREX_REGION_H
#define KREX_REGION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct or a call below changes incompatibly. */
#define KREX_API_VERSION 1

enum krex_error {
	KREX_OK = 0,
	KREX_ENOKREXD = 1,   /* no krexd answers on the socket */
	KREX_EPROTO = 2,     /* malformed or unexpected message */
	KREX_EPERM = 3,      /* not allowed (acting for another process or user) */
	KREX_EBUSY = 4,      /* this process already holds or waits for a region */
	KREX_ETIMEDOUT = 5,  /* no grant before the deadline */
	KREX_EINVAL = 6,     /* bad argument */
	KREX_ENOTREG = 7,    /* caller is not a participant */
	KREX_ENOREGION = 8,  /* no such region (or none held) */
	KREX_ENOMEM = 9,     /* out of memory */
	KREX_ESYS = 10,      /* a system call failed (see errno) */
	KREX_ENOGPU = 11,    /* a GPU name krexd does not know */
	KREX_ESHUTDOWN = 12, /* krexd is stopping */
	KREX_EVERSION = 13,  /* krexd speaks another protocol version */
	KREX_ELIMIT = 14,    /* a limit was hit (participants, GPUs, sizes) */
	KREX_ERROR_MAX
};

/* Human-readable text for an enum krex_error value; never NULL. */
const char *krex_strerror(int err);

/* KREX_API_VERSION of the library actually loaded. */
int krex_api_version(void);

/*
 * 1 from a grant by krexd until krex_region_end() begins, in any thread of
 * this process; 0 otherwise (a region begun without krexd is not held).  One
 * atomic load.  The gate does not bound the owner's launches while it holds
 * a region (krexgate(7)).
 */
int krex_region_held(void);

/* ---- regions ------------------------------------------------------------ */

/* No krexd: krex_region_begin() returns KREX_OK and the certificate says
 * "unprotected" instead of failing with KREX_ENOKREXD.  KREX_UNPROTECTED=1 in
 * the environment sets it for every call. */
#define KREX_REGION_UNPROTECTED_OK 0x1u

struct krex_region_opts {
	uint32_t size;           /* sizeof(struct krex_region_opts) */
	const char *const *gpus; /* node-wide GPU names; NULL = all of the caller's */
	unsigned ngpus;
	uint64_t expected_us; /* how long the caller expects to hold it; 0 = unknown */
	uint64_t max_us;      /* lease asked for; 0 = krexd's max_region */
	unsigned timeout_ms;  /* longest wait for the grant; 0 = krexd's default */
	unsigned flags;       /* KREX_REGION_* */
};

#define KREX_REGION_OPTS_INIT                                                                      \
	{                                                                                          \
		sizeof(struct krex_region_opts), 0, 0, 0, 0, 0, 0                                  \
	}

enum krex_outcome {
	KREX_OUTCOME_CLEAN = 0,       /* every sibling drained, frozen and moved */
	KREX_OUTCOME_EXPIRED = 1,     /* the lease ran out and the region was revoked */
	KREX_OUTCOME_DEGRADED = 2,    /* protected, but something did not go to plan (note) */
	KREX_OUTCOME_UNPROTECTED = 3, /* no krexd: nothing was done */
};

/* Bits of krex_certificate.known: a field whose bit is clear is unknown. */
#define KREX_CERT_FOREIGN 0x1u    /* foreign */
#define KREX_CERT_ISOLATION 0x2u  /* owner_cores, moved */
#define KREX_CERT_CLOCKS 0x4u     /* sm_clock_*, throttle_*, clock_reasons, clock_samples */
#define KREX_CERT_TEMP 0x8u       /* temp_start_c, temp_end_c */
#define KREX_CERT_VIOLATION 0x10u /* violation_power_us, violation_thermal_us */
#define KREX_CERT_SETTLE 0x20u    /* settle_us: krexd waited for the GPU's clock */
#define KREX_CERT_OWN_POWER 0x40u /* own_power_cap_*: the GPU's power state was the owner's */

struct krex_certificate {
	uint32_t size; /* sizeof(struct krex_certificate), set by the library */
	uint64_t region_id;
	uint32_t outcome;      /* enum krex_outcome */
	uint64_t wait_us;      /* queued behind other regions */
	uint64_t drain_us;     /* blocking and draining siblings' GPU work */
	uint64_t freeze_us;    /* freezing siblings */
	uint64_t isolate_us;   /* moving processes off the owner's cores */
	uint64_t held_us;      /* from grant to end (or revocation) */
	uint64_t lease_us;     /* the lease granted */
	uint32_t siblings;     /* participants sharing the region's GPUs */
	uint32_t drained;      /* siblings that acknowledged the drain in time */
	uint32_t late;         /* siblings that did not, and were frozen anyway */
	uint32_t frozen;       /* siblings frozen */
	uint32_t known;        /* KREX_CERT_* */
	int32_t foreign;       /* processes on the GPUs that are not participants */
	int32_t moved;         /* processes moved off the owner's cores */
	char owner_cores[128]; /* cpu list the owner ran on, e.g. "0-3" */
	int32_t sm_clock_start_mhz;
	int32_t sm_clock_end_mhz;
	uint64_t throttle_start; /* NVML clocks-event reasons bit mask */
	uint64_t throttle_end;
	char gpus[256]; /* the region's GPUs, comma separated */
	char note[256]; /* why the outcome is not clean, if it is not */
	/* Added with protocol 3: the GPU's own state, over the region's
	 * GPUs, from NVML.  See krex_region_begin(3). */
	uint64_t
	        settle_us; /* waited after the freeze: clock (KREX_CERT_SETTLE), exiting processes */
	int32_t sm_clock_min_mhz;     /* lowest SM clock sampled from grant to end (not idle) */
	int32_t sm_clock_max_mhz;     /* highest */
	int32_t sm_clock_nominal_mhz; /* the unthrottled clock: application clock, else max */
	uint32_t clock_samples;       /* samples taken from grant to end */
	uint64_t clock_reasons;       /* OR of the clocks-event reasons seen from grant to end */
	int32_t temp_start_c;         /* GPU temperature at grant and at end (KREX_CERT_TEMP) */
	int32_t temp_end_c;
	uint64_t violation_power_us;   /* growth of NVML's power and thermal violation */
	uint64_t violation_thermal_us; /* counters during the region (KREX_CERT_VIOLATION) */
	/* Added with protocol 5: the power cap the owner's own work reached on
	 * a settled, quiet GPU, which keeps the region clean (as on a dedicated
	 * GPU); KREX_CERT_OWN_POWER.  See krex_region_begin(3). */
	uint64_t own_power_cap_us;      /* time at the power cap, at most held_us */
	int64_t own_power_cap_first_us; /* grant to the first sample that saw it; -1 never */
	uint32_t own_power_cap_samples; /* samples that saw it, of clock_samples */
	/* Added with protocol 5: chained regions (krex_region_begin(3)). */
	uint64_t chain_us; /* chained: from the chain's first grant to this region's grant */
	uint32_t chained;  /* 0: entered on its own; n: granted at the end of the chain's
	                    * n-th region, its siblings still frozen (no thaw, no settle) */
	/* Added with protocol 6: siblings that never joined the gate (their gate
	 * could not load): frozen, but their queued GPU work was not drained.
	 * Degraded when one had a process on the region's GPUs (NVML); not a
	 * cause when none had, or when NVML cannot tell.  krex_region_begin(3). */
	uint32_t ungated;      /* siblings without a gate member when the gates closed */
	int32_t ungated_gpu;   /* of them, those with a process on the GPUs; -1 unknown */
	char ungated_who[256]; /* each one: "participant 3 (pid 1234, job 17.0) on the GPU" */
};

/*
 * Enter a region.  Blocks until krexd grants it (or the timeout passes).
 * Returns KREX_OK, KREX_ENOKREXD (no krexd, and UNPROTECTED_OK not set),
 * KREX_EBUSY (this process already holds one), KREX_ETIMEDOUT, KREX_ENOGPU,
 * KREX_EPERM, KREX_ENOTREG, KREX_EPROTO, KREX_EINVAL.
 */
int krex_region_begin(const struct krex_region_opts *opts);

/*
 * Leave the region entered by this process and fill *cert (may be NULL).
 * A region that expired meanwhile still ends with KREX_OK and an outcome of
 * KREX_OUTCOME_EXPIRED.  Returns KREX_ENOREGION when none was begun.
 */
int krex_region_end(struct krex_certificate *cert);

/* Text for an outcome ("clean", "expired", "degraded", "unprotected"). */
const char *krex_outcome_name(uint32_t outcome);

/*
 * Write the certificate as one JSON object (no newline) into buf.
 * Returns the length it needed, like snprintf.
 */
int krex_certificate_json(const struct krex_certificate *cert, char *buf, unsigned long len);

/* ---- signed certificates (krex_certificate_verify(3)) ------------------ */

/* A buffer of this many bytes holds any signed form (and any certificate JSON). */
#define KREX_SIGNED_MAX 16384

/*
 * krex_region_end(), then ask krexd for the certificate's signed form: a
 * munge credential ("MUNGE:...:", one line of text) that krexd encoded with
 * the node's munge key and whose payload is the certificate as JSON with the
 * node, the owner's uid, job and step.  On KREX_OK *cert is filled as by
 * krex_region_end() and buf holds the credential, or "" when there is none
 * (krexd signs nothing: munged not reachable, sign = off, an older krexd,
 * buf too small, no krexd); then why (when not NULL) says why in one line.
 * Waits at most krexd's sign_timeout (krexd.conf(5)) for munged.
 */
int krex_region_end_signed(struct krex_certificate *cert, char *buf, unsigned long len, char *why,
                           unsigned long whylen);

/* Verdicts of krex_certificate_verify(). */
enum krex_verdict {
	KREX_VERIFY_VALID = 0, /* signed by krexd on the node it names; payload intact */
	KREX_VERIFY_BAD = 1,   /* not a credential of this cluster's munge key, or tampered with */
	KREX_VERIFY_EXPIRED = 2,  /* older than its time-to-live (krexd.conf sign_ttl) */
	KREX_VERIFY_SIGNER = 3,   /* valid credential, but not encoded by krexd's uid */
	KREX_VERIFY_MISMATCH = 4, /* the certificate next to the credential is not the one signed */
	KREX_VERIFY_MALFORMED = 5, /* no credential in the text, or its payload is no certificate */
	KREX_VERIFY_NOMUNGE = 6,   /* cannot check: munged not reachable, or no libmunge */
};

/* krex_verify.flags */
#define KREX_VERIFY_ALLOW_EXPIRED 0x1u /* an expired credential is valid (munged checked its MAC) */
#define KREX_VERIFY_ANY_SIGNER                                                                     \
	0x2u /* accept a credential encoded by any uid (cred_uid says which) */

struct krex_verify {
	uint32_t size;           /* in: sizeof(struct krex_verify) */
	uint32_t flags;          /* in: KREX_VERIFY_* flags */
	uint32_t signer_uid;     /* in: the uid krexd runs as (0: root) */
	char munge_socket[256];  /* in: munged's socket, "" for libmunge's default */
	uint32_t verdict;        /* out: enum krex_verdict */
	uint32_t replayed;       /* out: munged decoded this credential before (still valid) */
	uint32_t expired;        /* out: past its time-to-live (valid only with ALLOW_EXPIRED) */
	uint32_t uid, job, step; /* out: the region's owner, from the signed payload */
	uint64_t region_id;      /* out */
	uint32_t outcome;        /* out: enum krex_outcome */
	uint32_t cred_uid, cred_gid;       /* out: who encoded the credential (krexd's uid) */
	int64_t encoded;                   /* out: when, seconds since the epoch */
	int32_t ttl;                       /* out: its time-to-live, seconds */
	char node[256];                    /* out: the node krexd ran on */
	char user[64];                     /* out: the owner's user name on this node, "" unknown */
	char reason[512];                  /* out: the verdict in one line */
	char certificate[KREX_SIGNED_MAX]; /* out: the signed certificate as JSON */
};

/* Or memset it to 0 and set size. */
#define KREX_VERIFY_INIT                                                                           \
	{                                                                                          \
		.size = sizeof(struct krex_verify)                                                 \
	}

/*
 * Check a signed certificate on any node of the cluster (munge_decode with
 * that node's munged): text is a bare credential, or a JSON object with a
 * "signed" member (what `krex region --json` prints) whose other members,
 * when present, must be the signed certificate's (whitespace and member
 * order aside).  Returns KREX_OK with v->verdict and v->reason filled,
 * KREX_EINVAL for a NULL or short argument, KREX_ENOMEM.  See krex_certificate_verify(3).
 */
int krex_certificate_verify(const char *text, struct krex_verify *v);

/* ---- joining: for the GPU gate and other GPU runtimes ------------------- */

/*
 * Called by the drain thread when krexd closes a gate on one of the caller's
 * GPUs: wait until every piece of GPU work this process queued has finished.
 * Returns 0 on success.
 */
typedef int (*krex_drain_fn)(void *arg);

/*
 * What a drain callback returns when it could not drain because this
 * process's GPU runtime is shutting down (the process exits: the driver
 * answers "deinitialized"): its contexts go with it.  krexd then judges the
 * region on whether the process is still on the GPU, and waits for it to
 * leave (krexd.conf(5) exit_wait).  Any other non-zero return is a failed
 * drain.
 */
#define KREX_DRAIN_EXITING 2

struct krex_join_opts {
	uint32_t size;           /* sizeof(struct krex_join_opts) */
	const char *const *gpus; /* node-wide GPU names; NULL = from the environment */
	unsigned ngpus;
	krex_drain_fn drain; /* NULL: acknowledge at once (no GPU work) */
	void *drain_arg;
	unsigned flags; /* KREX_JOIN_* below; other bits: KREX_EINVAL */
	/*
	 * Called by krex_region_begin() in this process once the region is
	 * granted, before it returns: make this process's GPU contexts resident
	 * (one tiny GPU operation each, waited for), so that the first timed
	 * launch in the region does not pay the GPU's switch away from a
	 * sibling's context.  NULL: nothing.  Added in 0.2 (check size).
	 */
	krex_drain_fn warm;
	void *warm_arg;
};

/*
 * krex_join_opts.flags: KREX_JOIN_HOLDS_CONTEXTS promises that every GPU
 * context this process makes first passes krex_gate_wait_contexts() (the
 * preloaded gate with KREX_GATE_CONTEXTS=hold, its default).  Over NVIDIA
 * MPS, where NVML lists a process from its CUDA initialisation on, krexd
 * then does not take this process, listed at the end of a region it
 * started during, for one that made its context beside the owner's work.
 */
#define KREX_JOIN_HOLDS_CONTEXTS 0x1u

#define KREX_JOIN_OPTS_INIT                                                                        \
	{                                                                                          \
		sizeof(struct krex_join_opts), 0, 0, 0, 0, 0, 0, 0                                 \
	}

/*
 * Join krexd as (a member of) a participant: register this process, map the
 * gate page read-only and start the drain thread.  Idempotent.  Returns
 * KREX_OK or an error; after an error the gate stays open (fail open).
 */
int krex_join(const struct krex_join_opts *opts);

/* Stop the drain thread and unregister.  Safe to call when not joined. */
int krex_leave(void);

/*
 * The gate check, for code in front of every GPU submission.  With every gate
 * of this process's GPUs open it costs one atomic load.  When one is closed by
 * another participant's region it waits until it opens, krexd goes away or the
 * gate timeout passes (then fails open).  Returns 0 if it did not wait, 1 if it
 * waited.
 */
int krex_gate_wait(void);

/*
 * The same check in front of a call that makes a GPU context: it also waits
 * while krexd holds new contexts on one of this process's GPUs after a
 * region's gates opened, until it has listed the GPU's processes for the
 * participants made during that region (a few milliseconds; the gate page's
 * ctx_by).  Same deadline and fail-open; 0 if it did not wait, 1 if it did.
 */
int krex_gate_wait_contexts(void);

/*
 * For the drain callback, when its drain makes no progress: how many threads
 * of this process wait in krex_gate_wait() now, and a pass that lets them
 * (and every later caller) through while on, so that a thread that must
 * release queued work from the host (a kernel spinning on a host flag) is
 * not held behind the drain that waits for that work.  The drain callback
 * turns the pass off before it returns and then waits for what passed.
 */
unsigned krex_gate_parked(void);
void krex_gate_pass(int on);

/*
 * For the gate: this process began (on != 0) or ended (0) making GPU
 * contexts.  krexd lets a region that is about to close a gate of ours wait
 * for them (at most krexd.conf(5) ctx_defer), the gates still open, so that
 * its freeze does not stop a context halfway.  Nothing when not joined.
 */
void krex_gate_ctx_making(int on);

/*
 * The bounded queue krexd asks the gate to keep (krexd.conf(5) queue_cap and
 * queue_time), known after krex_join(): launches between gate events (0 =
 * off), and the GPU time in microseconds a stream may have queued (0 = by
 * launch count only).
 */
unsigned krex_queue_cap(void);
unsigned krex_queue_time_us(void);

/*
 * For the drain callback: krexd.conf(5) drain_timeout in milliseconds, as
 * krexd published it on the gate page when this drain began; a drain
 * answers a little before it, or krexd counts the member late.  The
 * default (2000) outside a drain or with a krexd that does not publish it.
 */
unsigned krex_drain_timeout_ms(void);

#ifdef __cplusplus
}
#endif

#endif /* KREX_REGION_H */
