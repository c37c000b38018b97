/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krexd.h - the daemon's state, shared by its modules (participants,
 * connections, regions, the main loop).  Single-threaded: everything runs in
 * the epoll loop of krexd.c, but for munge_encode, on sign.c's own thread.
 */
#ifndef KREXD_KREXD_H
#define KREXD_KREXD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "krexd_config.h"
#include "freezer.h"
#include "gatectl.h"
#include "proto.h"
#include "region_queue.h"
#include "state.h"

/*
 * Fairness grace: after a region that froze siblings which ask for regions
 * themselves, the owner's next request waits up to this long, so that a
 * thawed sibling that wanted to begin (and could not: frozen) gets its
 * request in first.  Without it the owner, which runs while the siblings
 * are still waking up, can win again and again.  An owner whose siblings
 * never ask (or alone) is not slowed.
 */
#define KREXD_FAIR_GRACE_NS (2 * 1000 * 1000ULL)

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* same number on every architecture */
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

enum ep_kind {
	EP_LISTEN = 1,
	EP_SIGNAL,
	EP_TIMER,
	EP_CONN,
	EP_PIDFD,
	EP_INOTIFY,
	EP_HISTORY,
	EP_SIGN
};

struct ep_item {
	int kind;
	void *ptr;
};

struct part {
	struct ep_item ep; /* pidfd */
	uint32_t id;
	uid_t uid;
	pid_t pid; /* root pid */
	uint32_t job, step;
	char label[128];
	char cpus[256];
	uint64_t mask; /* GPU slots */
	struct freezer_target ft;
	int pidfd;             /* -1: watched through /proc */
	uint64_t ended_turn;   /* loop turn in which its last region ended */
	uint64_t last_end_ns;  /* when it ended */
	int end_thawed_askers; /* that region thawed siblings that ask for regions too */
	unsigned asked;        /* regions it asked for */
	int freeze_refs;       /* regions that froze it */
	int gated;             /* regions it is a sibling of */
	unsigned members;      /* connections with a drain thread */
	unsigned conns;
	/* Someone else's suspend (Slurm's scontrol suspend, a SIGSTOP): part.c
	 * "someone else's suspend", doc/architecture.md. */
	int ext;               /* FREEZER_EXT_* as krexd last saw it */
	uint64_t ext_since_ns; /* since when krexd has seen it so; 0 when not */
	uint64_t quiet_mask; /* GPU slots on which it queued nothing since an acknowledged drain */
	int ext_wd;          /* inotify watch on its freezer file, -1 none */
	int ext_dirty;       /* that file was written: look again */
	int ext_dying;       /* thawed by another to be killed: krexd does not freeze it again */
	uint64_t ext_kill_until; /* after krexd froze it again: watch for a SIGKILL until then */
	int ext_closed;          /* a writer of that file closed it (its write is whole) */
	uint64_t ext_confirm_ns; /* a write left it FROZEN under krexd's freeze: a suspend, unless
	                          * a thaw comes before its writer closes the file or by then */
	int by_root; /* root registered it for a user (the SPANK plugin): its GPUs are the step's */
	struct part *next;
};

/* What one uid holds (doc/security.md "Limits"); root's is counted, never limited. */
struct uacct {
	uid_t uid;
	unsigned conns, parts, queued; /* connections, participants, regions queued or held */
	uint64_t bytes;                /* partial frames and queued replies */
	uint64_t win_start_ns;         /* region time window (a minute) */
	uint64_t win_used_ns;          /* region time used in it */
	struct uacct *next;
};

struct region;

struct conn {
	struct ep_item ep;
	int fd;
	uint64_t serial;
	pid_t pid; /* SO_PEERCRED */
	uid_t uid;
	int pidfd; /* of the process that connected (SO_PEERPIDFD; else pidfd_open of
	                       * pid at accept); -1 when unavailable */
	uint64_t
	        start_ticks; /* pid's start time (/proc/PID/stat field 22) at accept; 0: no identity */
	int ident;           /* why no identity: CONN_IDENT_* */
	struct uacct *ua;    /* its uid's account */
	uint8_t *out;        /* replies not yet written (non-blocking, EPOLLOUT) */
	size_t out_off, out_len, out_cap;
	uint64_t write_deadline_ns; /* replies pending and no progress: dropped then; 0 idle */
	int want_out;               /* EPOLLOUT armed */
	size_t charged;             /* bytes of ua->bytes charged to this connection */
	uint8_t hdr[PROTO_HDR_LEN];
	struct proto_hdr h;
	uint8_t *payload;
	size_t got;                /* bytes of the current message so far */
	uint64_t read_deadline_ns; /* a message is half read; 0 when idle */
	struct part *part;
	pid_t member_pid;
	int gate;                        /* registered with PROTO_REG_GATE */
	struct region *region;           /* queued or held by this connection */
	struct krex_certificate expired; /* a revoked region's, kept for END */
	int have_expired;
	int dead;
	struct conn *next;
};

struct krexd {
	struct krexd_config cfg;
	const char *conf_path;
	int conf_missing_ok;
	char **overrides; /* -o key=value in order, applied again on reload */
	int noverrides;
	int foreground;
	int epfd, lfd, sigfd, tfd;
	int ifd; /* inotify: writes to the participants' freezer files (someone else's suspend) */
	struct ep_item ep_listen, ep_signal, ep_timer, ep_inotify, ep_history;
	struct gatectl gate;
	struct state st;
	struct freezer fz;
	struct region_queue rq;
	char gpu[KREX_MAX_GPUS][KREX_MAX_GPU_NAME + 1];
	uid_t gpu_adder[KREX_MAX_GPUS]; /* the uid that brought the name in (0: gpus=, root) */
	unsigned ngpus;
	unsigned nconf_gpus; /* slots 0.. seeded from gpus=: never pruned */
	struct part *parts;
	unsigned nparts;
	uint32_t next_part_id;
	struct conn *conns;
	unsigned nconns;
	uint64_t next_serial;
	uint64_t start_ns;
	uint64_t regions_total;
	uint64_t proc_check_ns;     /* next /proc check of participants without a pidfd */
	uint64_t ext_kill_check_ns; /* next SIGKILL check of participants frozen again (part.c) */
	uint64_t ext_confirm_ns;    /* next look at writes that may be suspends (part.c) */
	struct uacct *uaccts;
	int spare_fd; /* /dev/null kept open: closed to accept and shed a client at EMFILE */
	uint64_t
	        accept_resume_ns; /* accept() failed: the listener rests until then; 0 = listening */
	uint64_t accept_log_ns;   /* rate limit of the accept() error */
	unsigned fd_limit;        /* RLIMIT_NOFILE in force */
	int stopping;
	uint64_t turn;      /* loop turns, for the fairness tie-break */
	int resched;        /* something ended or arrived: run region_schedule this turn */
	int freeze_soon;    /* a region has drained siblings to freeze at the end of the turn */
	int freeze_event;   /* the freezer file of a participant being frozen changed (v2
	                     * cgroup.events "frozen 1"): regions poll now, not at their timer */
	unsigned nvml_gpus; /* GPUs NVML saw at start-up (require_clocks = auto) */
};

/* ---- part.c ---- */
int gpu_slot(struct krexd *k, const char *name, int add);
/* Free the slots no participant and no region names (configured ones stay). */
void gpu_prune(struct krexd *k);
/* May uid name the GPUs of mask (gpu_policy)?  0, or -1 with the refused name in why. */
int gpu_allowed(struct krexd *k, uid_t uid, uint64_t mask, char *why, size_t len);
int gpu_mask(struct krexd *k, const struct proto_gpus *g, int add, uint64_t *mask);
void gpu_list(const struct krexd *k, uint64_t mask, char *buf, size_t len);
/* text_check() of each GPU name of g ("GPU name N ..."). */
int gpus_check(const struct proto_gpus *g, char *err, size_t len);
struct part *part_find_id(struct krexd *k, uint32_t id);
struct part *part_find_pid(struct krexd *k, pid_t pid);
int part_register(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_register *reg);
int part_unregister(struct krexd *k, struct conn *c, uint32_t seq,
                    const struct proto_unregister *u);
void part_end(struct krexd *k, struct part *p, const char *why);
/* Take a freeze reference: 1 when the caller must part_freeze_start() it after writing
 * the state file, 0 when another region froze it already, -1/errno. */
int part_freeze_prepare(struct krexd *k, struct part *p);
int part_freeze_start(struct krexd *k, struct part *p);
/* Drop a freeze reference; the last thaws (0), or keeps the line and retries it (-1);
 * the state file is written after.  _nosync: the caller writes it once for a batch (a
 * region's end thaws every sibling, then writes once; a line still on disk for a moment
 * after its thaw only thaws again after a crash). */
int part_thaw(struct krexd *k, struct part *p);
int part_thaw_nosync(struct krexd *k, struct part *p);
void part_check_proc(struct krexd *k, uint64_t now);
/* The freeze poll of a region (v1 writes FROZEN again while FREEZING). */
int part_freeze_poll(struct krexd *k, struct part *p);
/* Someone else's suspend: look at p now (at region entry); FREEZER_EXT_*. */
int part_ext_check(struct krexd *k, struct part *p, uint64_t now);
/* The inotify fd is readable, or krexd's own writes left events to sort. */
void part_ext_events(struct krexd *k);
/* Participants frozen again after another's thaw: one being killed is let go. */
void part_ext_kill_check(struct krexd *k, uint64_t now);
/* Writes that left a participant FROZEN under krexd's freeze, whose writer kept the file open: suspends after EXT_CONFIRM_MS. */
void part_ext_confirm(struct krexd *k, uint64_t now);
int state_rec(void *ctx, const char *line);
void state_unrec(void *ctx, const char *line);

/* Identity of a process: its start time (clock ticks since boot, /proc/PID/stat field 22). */
int pid_start_ticks(pid_t pid, uint64_t *ticks, uid_t *uid);
/* c->ident: the peer's identity at accept */
enum { CONN_IDENT_OK, CONN_IDENT_GONE, CONN_IDENT_OWNER };
/* 1 when c's peer is still the process that connected (same pid, uid, start time), else 0
 * with c->ident saying why (gone, or its /proc is not the peer uid's: root's, non-dumpable). */
int conn_peer_alive(struct conn *c);

/* ---- quota.c ---- */
struct uacct *uacct_get(struct krexd *k, uid_t uid);
void uacct_gc(struct krexd *k);
/* 0 when uid may take n more bytes, -1 when that would pass max_buffer_per_uid. */
int uacct_charge(struct krexd *k, struct conn *c, size_t n);
void uacct_uncharge(struct conn *c, size_t n);
/* Region time: may uid begin a region now? 0, or -1 with the ns to wait in *wait_ns. */
int uacct_region_allowed(struct krexd *k, struct uacct *a, uint64_t now, uint64_t *wait_ns);
/*
 * region_time_per_uid when a region is granted (leaves its queue): *lease_ns is
 * cut to what uid has left of the minute and charged now, so that regions
 * queued together cannot pass the cap.  0 with *charged_ns (0: nothing
 * charged: no cap, or root) and *win (the window charged) set; -1 when
 * nothing is left, with *wait_ns until the window turns.
 */
int uacct_region_start(struct krexd *k, uid_t uid, uint64_t *lease_ns, uint64_t now,
                       uint64_t *charged_ns, uint64_t *win, uint64_t *wait_ns);
/* The region ended after holding held_ns: what was charged at the start is
 * replaced by what it held (the part of it in this window, if the window turned). */
void uacct_region_end(struct krexd *k, uid_t uid, uint64_t charged_ns, uint64_t win,
                      uint64_t held_ns, uint64_t now);

/* ---- region.c ---- */
int region_begin(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_region_begin *b);
int region_end(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_region_end *e);
int region_release(struct krexd *k, struct conn *c, uint32_t seq, const struct proto_release *r);
void region_ack(struct krexd *k, struct conn *c, const struct proto_drain_ack *a);
void region_conn_gone(struct krexd *k, struct conn *c);
void region_part_gone(struct krexd *k, struct part *p);
void region_part_new(struct krexd *k, struct part *p);
void region_tick(struct krexd *k, uint64_t now);
uint64_t region_next_deadline(struct krexd *k);
void region_schedule(struct krexd *k);
void region_stop_all(struct krexd *k);
/* Someone else suspended p (during a drain: its acks are not awaited) or thawed it while a region holds it. */
void region_ext_suspended(struct krexd *k, struct part *p);
enum { REGION_EXT_LEFT_THAWED = 0, REGION_EXT_FROZEN_AGAIN, REGION_EXT_KILLED };
void region_ext_resumed(struct krexd *k, struct part *p, int how);
int region_status(struct krexd *k, struct proto_status_reply *s);

/* ---- conn.c ---- */
void conn_accept(struct krexd *k);
void conn_accept_tick(struct krexd *k, uint64_t now);
void conn_event(struct krexd *k, struct conn *c, uint32_t events);
int conn_send(struct krexd *k, struct conn *c, uint16_t type, uint32_t seq,
              const union proto_body *m);
int conn_error(struct krexd *k, struct conn *c, uint32_t seq, int code, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
void conn_close(struct krexd *k, struct conn *c);
void conn_reap(struct krexd *k);
void conn_tick(struct krexd *k, uint64_t now);
uint64_t conn_next_deadline(struct krexd *k);

#endif /* KREXD_KREXD_H */
