/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * boost.h - a sibling's drain thread runs ahead of its own busy threads
 * while krexd waits for its drain (drain_boost, krexd.conf(5)).
 */
#ifndef KREXD_BOOST_H
#define KREXD_BOOST_H

struct conn;

/* The gate member's drain thread (named KREX_DRAIN_THREAD_NAME by
 * libkrexregion) to nice -by until boost_end(); 0: nothing to do. */
void boost_begin(struct conn *c, unsigned by);
/* Its nice as it was (an ack, the drain's end, the connection closed). */
void boost_end(struct conn *c);

#endif /* KREXD_BOOST_H */
