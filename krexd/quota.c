/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * quota.c - what each uid holds in krexd, and the per-uid limits
 * (doc/security.md "Limits"): connections, participants, queued regions,
 * buffered bytes and region time per minute.  Root is counted, never limited.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "krexd.h"
#include "quota.h"
#include "conn.h"
#include "timeutil.h"

#define UACCT_WINDOW_NS (60 * NS_PER_S)

struct uacct *uacct_get(struct krexd *k, uid_t uid)
{
	struct uacct *a;

	for (a = k->uaccts; a; a = a->next)
		if (a->uid == uid)
			return a;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->uid = uid;
	a->next = k->uaccts;
	k->uaccts = a;
	return a;
}

/* Free the accounts of uids that hold nothing and whose window has passed. */
void uacct_gc(struct krexd *k)
{
	uint64_t now = time_now_ns();
	struct uacct **pp = &k->uaccts, *a;

	while ((a = *pp)) {
		if (a->conns || a->parts || a->queued || a->bytes ||
		    (a->win_used_ns && now - a->win_start_ns < UACCT_WINDOW_NS)) {
			pp = &a->next;
			continue;
		}
		*pp = a->next;
		free(a);
	}
}

int uacct_charge(struct krexd *k, struct conn *c, size_t n)
{
	struct uacct *a = c->ua;

	if (!a)
		return 0;
	if (a->uid != 0 && a->bytes + n > k->cfg.max_buffer_per_uid) {
		errno = ENOBUFS;
		return -1;
	}
	a->bytes += n;
	c->charged += n;
	return 0;
}

void uacct_uncharge(struct conn *c, size_t n)
{
	struct uacct *a = c->ua;

	if (!a)
		return;
	if (n > c->charged)
		n = c->charged;
	a->bytes -= n;
	c->charged -= n;
}

static void window_roll(struct uacct *a, uint64_t now)
{
	if (now - a->win_start_ns >= UACCT_WINDOW_NS) {
		a->win_start_ns = now;
		a->win_used_ns = 0;
	}
}

int uacct_region_allowed(struct krexd *k, struct uacct *a, uint64_t now, uint64_t *wait_ns)
{
	uint64_t cap = k->cfg.region_time_per_uid;

	if (!a || !cap || a->uid == 0)
		return 0;
	window_roll(a, now);
	if (a->win_used_ns < cap)
		return 0;
	*wait_ns = a->win_start_ns + UACCT_WINDOW_NS - now;
	return -1;
}

int uacct_region_start(struct krexd *k, uid_t uid, uint64_t *lease_ns, uint64_t now,
                       uint64_t *charged_ns, uint64_t *win, uint64_t *wait_ns)
{
	uint64_t cap = k->cfg.region_time_per_uid, left;
	struct uacct *a;

	*charged_ns = 0;
	*win = 0;
	if (!cap || uid == 0 || !(a = uacct_get(k, uid)))
		return 0;
	window_roll(a, now);
	left = a->win_used_ns < cap ? cap - a->win_used_ns : 0;
	if (!left) {
		*wait_ns = a->win_start_ns + UACCT_WINDOW_NS - now;
		return -1;
	}
	if (!*lease_ns || *lease_ns > left)
		*lease_ns = left;
	a->win_used_ns += *lease_ns;
	*charged_ns = *lease_ns;
	*win = a->win_start_ns;
	return 0;
}

void uacct_region_end(struct krexd *k, uid_t uid, uint64_t charged_ns, uint64_t win,
                      uint64_t held_ns, uint64_t now)
{
	struct uacct *a;

	if (!charged_ns || !(a = uacct_get(k, uid)))
		return;
	window_roll(a, now);
	if (a->win_start_ns == win) {
		/* the lease was charged whole: give back what it did not hold */
		a->win_used_ns -= charged_ns < a->win_used_ns ? charged_ns : a->win_used_ns;
		a->win_used_ns += held_ns;
	} else {
		/* charged to a window gone by: this one gets what it held since it began */
		a->win_used_ns += held_ns < now - a->win_start_ns ? held_ns : now - a->win_start_ns;
	}
}
