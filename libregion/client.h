/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.h - libregion's connection to krexd (private to the library and the
 * krex CLI).
 */
#ifndef KREX_CLIENT_H
#define KREX_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

/*
 * The socket path clients use: $KREX_SOCKET, else the system krexd's socket
 * (KREX_DEFAULT_RUNDIR/krexd.sock).  Returns 0 or -1 if it does not fit.
 */
int client_socket_path(char *buf, size_t len);

/*
 * Connect to krexd at path (NULL: client_socket_path()).  Returns the socket
 * or -1 with *kerr set to an enum krex_error (KREX_ENOKREXD when nothing
 * listens there, KREX_EPERM when client_peer_check() refuses the peer:
 * client_error() then says who it is and why).
 */
int client_connect(const char *path, int *kerr);

/* Why the last client_connect() of this thread refused a peer (one line). */
const char *client_error(void);

/*
 * Is the krexd at path, the peer of the connected fd, one to trust: root,
 * this user, or, in a user namespace that does not map root, root's krexd
 * at the system socket seen as the overflow uid (peer.c, doc/security.md)?
 * Its uid into *uid.  Returns 1, or 0 with a one-line reason in err.
 */
int client_peer_check(int fd, const char *path, uid_t *uid, char *err, size_t errlen);

/*
 * Send a request and wait for its reply until deadline_ns.  On a PROTO_ERROR
 * reply returns its code (and copies its text into errbuf if given); on an
 * unexpected type KREX_EPROTO; on I/O failure KREX_ENOKREXD, KREX_ESHUTDOWN
 * (krexd closed the connection) or KREX_ETIMEDOUT.  On success returns KREX_OK
 * with the reply in *reply (free with proto_body_free(want, reply)).
 */
int client_call(int fd, uint16_t type, const union proto_body *req, uint16_t want,
                union proto_body *reply, uint64_t deadline_ns, char *errbuf, size_t errlen);

/*
 * client_call, the calling thread polling the socket without sleeping for
 * up to spin_ns after the request went out (a region's edges,
 * KREX_REGION_SPIN_US in krex_region_begin(3)), then waiting as client_call.
 */
int client_call_spin(int fd, uint16_t type, const union proto_body *req, uint16_t want,
                     union proto_body *reply, uint64_t deadline_ns, uint64_t spin_ns, char *errbuf,
                     size_t errlen);

/*
 * The GPUs this process uses, node-wide names: $KREX_GPUS, else the numeric
 * entries of CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES,
 * else none (krexd then gives the participant every GPU it knows).
 */
void client_env_gpus(struct proto_gpus *g);

/* Fill g from a comma-separated list; returns 0 or KREX_EINVAL. */
int client_parse_gpus(const char *list, struct proto_gpus *g);

/* A REGISTER for this process with the given GPUs and flags. */
void client_fill_register(union proto_body *m, const struct proto_gpus *g, uint32_t flags);

/* After a grant: the joiner's warm callback, if any (join.c). */
void join_warm(void);

/* Forget, in a child after fork(), a region the parent holds (region.c). */
void region_atfork_child(void);

#endif /* KREX_CLIENT_H */
