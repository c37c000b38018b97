/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c - the plugin's requests to krexd: one message, one reply, each
 * with a deadline (the plugin runs inside slurmstepd and the task: it must
 * never hang them).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "conf.h"
#include "fdio.h"
#include "krex_spank.h"
#include "timeutil.h"

/*
 * Why the effective uid dance: krexd takes a participant's uid from the
 * owner of /proc/PID, i.e. the process's effective uid, and a task is still
 * root in task_init_privileged.  The connection is made as root (krexd
 * reads SO_PEERCRED at connect: root may name the step's cgroup), then the
 * euid is the job's while krexd handles the request; dumpable is set so
 * that /proc/PID is owned by that euid, not by root.  Both are restored.
 */
static void client_become(uid_t uid, int *dumpable)
{
	*dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (seteuid(uid) == 0)
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

static void client_unbecome(int dumpable)
{
	if (seteuid(0) < 0)
		return;
	if (dumpable >= 0)
		prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
}

int client_request_as(const char *sock, uid_t as_uid, uint16_t type, const union proto_body *req,
                      uint16_t *rtype, union proto_body *rep, char *err, size_t errlen)
{
	uint64_t deadline;
	int fd, hdr_err = PROTO_HDR_OK, e, dumpable = -1, become;

	fd = unix_connect(sock, KREX_DEFAULT_CONNECT_TIMEOUT_MS);
	if (fd < 0) {
		e = errno;
		xsnprintf(err, errlen, "%s", strerror(e));
		errno = e;
		return -1;
	}
	become = as_uid != 0 && geteuid() == 0;
	if (become)
		client_become(as_uid, &dumpable);
	deadline = time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS);
	if (proto_call(fd, type, 1, req, deadline, rtype, rep, deadline, &hdr_err) < 0) {
		e = errno;
		if (hdr_err != PROTO_HDR_OK)
			xsnprintf(err, errlen, "reply: %s", proto_hdr_strerror(hdr_err));
		else
			xsnprintf(err, errlen, "%s: %s", proto_type_name(type), strerror(e));
		goto fail;
	}
	if (become)
		client_unbecome(dumpable);
	close(fd);
	return 0;
fail:
	if (become)
		client_unbecome(dumpable);
	close(fd);
	errno = e;
	return -1;
}

int client_alive(const char *sock)
{
	int fd = unix_connect(sock, KREX_DEFAULT_CONNECT_TIMEOUT_MS);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}
