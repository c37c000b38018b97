/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krexd.h - the daemon's state (struct krexd), shared by its modules, and the
 * events the floors below the region code report to it.  Each module has a
 * header of its own: conn.h, ident.h, outbox.h, part.h, gpuslot.h, quota.h,
 * region.h (region_int.h inside the region code), history.h, sign.h ...
 * Everything runs in the epoll loop of krexd.c but for four threads: the
 * region log / metrics writer (logwriter.c), munge_encode (sign.c), NVML's
 * process list (gpuprocs.c) and the moves of new participants into their
 * cgroups (mover.c), each handing its results back to the loop through an
 * eventfd.
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
	EP_SIGN,
	EP_PROCS,
	EP_MOVER
};

struct ep_item {
	int kind;
	void *ptr;
};

struct conn;
struct krexd;
struct part;
struct uacct;

/*
 * What the floors below the region code (part.c: a participant registered,
 * gone, suspended or resumed by another; outbox.c, part.c: a connection
 * gone) report to it.  Called at once, in place of a direct call: the region
 * code sees a participant or a connection before it is freed.  krexd.c fills
 * the table at start with region.c's handlers, so that part.c and outbox.c
 * call nothing above them.
 */
enum { REGION_EXT_LEFT_THAWED = 0, REGION_EXT_FROZEN_AGAIN, REGION_EXT_KILLED };
struct krexd_events {
	void (*part_new)(struct krexd *k, struct part *p);              /* region_part_new */
	void (*part_gone)(struct krexd *k, struct part *p);             /* region_part_gone */
	void (*part_suspended)(struct krexd *k, struct part *p);        /* region_ext_suspended */
	void (*part_resumed)(struct krexd *k, struct part *p, int how); /* region_ext_resumed */
	void (*conn_gone)(struct krexd *k, struct conn *c);             /* region_conn_gone */
};

struct krexd {
	struct krexd_events ev; /* set by krexd.c at start */
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
	struct part *dead_parts; /* ended, freed after the event batch (part_reap) */
	struct part *moving;     /* made, their pid being moved in by the mover thread: not
	                          * in parts yet (part.c "registration") */
	unsigned nparts;         /* in parts and moving */
	uint32_t next_part_id;
	uint64_t parts_made;         /* participants made since the start (metrics) */
	uint64_t parts_made_ns;      /* their making, summed: REGISTER to linked (part_create) */
	uint64_t parts_move_held_ns; /* moves not begun, held for regions' entries (mover.h) */
	uint64_t parts_moved_ns; /* of which the moves into their cgroups, on the mover thread */
	int favordynmods;        /* the cgroup hierarchy's: 1 on, 0 off, -1 unknown or none */
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
	/* Each GPU slot's nominal SM clock (MHz, -1 unknown): read at start-up
	 * and again by each region's process-list request (gpuprocs.c), so
	 * that a region's entry makes no NVML call for it. */
	int32_t nominal[KREX_MAX_GPUS];
	int sched_now;  /* main thread: > 0 its SCHED_FIFO priority, KREXD_SCHED_NICE, 0 normal */
	int sched_want; /* the sched_priority last applied */
};

/* krexd's main thread's nice where real-time priority is refused */
#define KREXD_SCHED_NICE (-20)

#endif /* KREXD_KREXD_H */
