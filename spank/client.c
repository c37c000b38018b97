/*
 * client.c - the plugin's requests to krexd: one message, one reply, each
 * with a deadline (the plugin runs inside slurmstepd and the task: it must
 * never hang them).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "fdio.h"
#include "krex_spank.h"
#include "timeutil.h"

int client_call(const char *sock, uint16_t type, const union proto_body *req, uint16_t *rtype,
                union proto_body *rep, char *err, size_t errlen)
{
	uint64_t deadline;
	uint32_t seq;
	int fd, hdr_err = PROTO_HDR_OK, e;

	fd = unix_connect(sock, KREX_DEFAULT_CONNECT_TIMEOUT_MS);
	if (fd < 0) {
		e = errno;
		xsnprintf(err, errlen, "%s", strerror(e));
		errno = e;
		return -1;
	}
	deadline = time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS);
	if (proto_send(fd, type, 1, req, deadline) < 0) {
		e = errno;
		xsnprintf(err, errlen, "sending %s: %s", proto_type_name(type), strerror(e));
		goto fail;
	}
	if (proto_recv(fd, rtype, &seq, rep, deadline, &hdr_err) < 0) {
		e = errno;
		if (hdr_err != PROTO_HDR_OK)
			xsnprintf(err, errlen, "reply: %s", proto_hdr_strerror(hdr_err));
		else
			xsnprintf(err, errlen, "reply to %s: %s", proto_type_name(type),
			          strerror(e));
		goto fail;
	}
	close(fd);
	return 0;
fail:
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
