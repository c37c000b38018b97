/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c - connecting to krexd and request/reply with deadlines.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "conf.h"
#include "defs.h"
#include "fdio.h"
#include "text.h"
#include "timeutil.h"

int client_socket_path(char *buf, size_t len)
{
	const char *env = getenv(KREX_ENV_SOCKET);

	if (env && *env)
		return xstrcpy(buf, len, env);
	return xsnprintf(buf, len, "%s/%s", KREX_DEFAULT_RUNDIR, KREX_SOCKET_NAME) < 0 ? -1 : 0;
}

/* Why the last client_connect() of this thread refused a krexd. */
static __thread char client_err[640];

const char *client_error(void)
{
	return client_err;
}

int client_connect(const char *path, int *kerr)
{
	char buf[512];
	uid_t uid = (uid_t)-1;
	int fd;

	if (!path) {
		if (client_socket_path(buf, sizeof(buf)) < 0) {
			*kerr = KREX_EINVAL;
			return -1;
		}
		path = buf;
	}
	fd = unix_connect(path, KREX_DEFAULT_CONNECT_TIMEOUT_MS);
	if (fd < 0) {
		*kerr = errno == ETIMEDOUT ? KREX_ETIMEDOUT : KREX_ENOKREXD;
		return -1;
	}
	/* Only root's krexd or our own (peer.c): a socket served by another
	 * user (a squatted run directory) could close our gates forever. */
	if (!client_peer_check(fd, path, &uid, client_err, sizeof(client_err))) {
		close(fd);
		*kerr = KREX_EPERM;
		return -1;
	}
	*kerr = KREX_OK;
	return fd;
}

/* Map a failed proto_send/proto_recv to a krex error. */
static int client_io_error(int err)
{
	switch (err) {
	case ETIMEDOUT:
		return KREX_ETIMEDOUT;
	case ECONNRESET:
	case EPIPE:
		return KREX_ESHUTDOWN;
	case EPROTO:
		return KREX_EPROTO;
	case ENOMEM:
		return KREX_ENOMEM;
	}
	return KREX_ENOKREXD;
}

int client_call_spin(int fd, uint16_t type, const union proto_body *req, uint16_t want,
                     union proto_body *reply, uint64_t deadline_ns, uint64_t spin_ns, char *errbuf,
                     size_t errlen)
{
	uint16_t got;
	int herr = PROTO_HDR_OK, code;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (proto_send(fd, type, 0, req, time_deadline_ms(KREX_DEFAULT_IO_TIMEOUT_MS)) < 0)
		return client_io_error(errno);
	if (spin_ns)
		fd_spin_readable(fd, time_now_ns() + spin_ns);
	if (proto_recv(fd, &got, NULL, reply, deadline_ns, &herr) < 0) {
		if (herr == PROTO_HDR_BADVERSION) {
			if (errbuf)
				snprintf(errbuf, errlen, "krexd speaks another protocol version");
			return KREX_EVERSION;
		}
		return client_io_error(errno);
	}
	if (got == PROTO_ERROR) {
		code = (int)reply->error.code;
		if (errbuf)
			snprintf(errbuf, errlen, "%s", reply->error.message);
		return code > 0 && code < KREX_ERROR_MAX ? code : KREX_EPROTO;
	}
	if (got != want) {
		proto_body_free(got, reply);
		if (errbuf)
			snprintf(errbuf, errlen, "krexd answered %s, expected %s",
			         proto_type_name(got), proto_type_name(want));
		return KREX_EPROTO;
	}
	return KREX_OK;
}

int client_call(int fd, uint16_t type, const union proto_body *req, uint16_t want,
                union proto_body *reply, uint64_t deadline_ns, char *errbuf, size_t errlen)
{
	return client_call_spin(fd, type, req, want, reply, deadline_ns, 0, errbuf, errlen);
}

int client_parse_gpus(const char *list, struct proto_gpus *g)
{
	int n;

	memset(g, 0, sizeof(*g));
	n = conf_split_list(list, &g->name[0][0], sizeof(g->name[0]), KREX_MAX_GPUS);
	if (n < 0)
		return KREX_EINVAL;
	g->n = (uint16_t)n;
	return KREX_OK;
}

/* Keep only entries that are node indices (digits); UUIDs and MIG names are
 * process-visible names krexd cannot place, so they are left out. */
static int gpus_from_visible(const char *list, struct proto_gpus *g)
{
	struct proto_gpus all;
	unsigned i;

	if (client_parse_gpus(list, &all) != KREX_OK)
		return -1;
	memset(g, 0, sizeof(*g));
	for (i = 0; i < all.n; i++)
		if (strspn(all.name[i], "0123456789") == strlen(all.name[i]))
			memcpy(g->name[g->n++], all.name[i], sizeof(all.name[i]));
	return g->n ? 0 : -1;
}

void client_env_gpus(struct proto_gpus *g)
{
	static const char *const vars[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
	                                   "HIP_VISIBLE_DEVICES"};
	const char *env = getenv(KREX_ENV_GPUS);
	unsigned i;

	memset(g, 0, sizeof(*g));
	if (env && *env && client_parse_gpus(env, g) == KREX_OK)
		return;
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		env = getenv(vars[i]);
		if (env && *env && gpus_from_visible(env, g) == 0)
			return;
	}
	memset(g, 0, sizeof(*g));
}

/* Our command name, for krex status. */
static void client_label(char *buf, size_t len)
{
	const char *env = getenv(KREX_ENV_JOB);
	char comm[64] = "";
	FILE *f;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	f = fopen("/proc/self/comm", "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(buf, len, "%s[%d]", comm[0] ? comm : "pid", (int)getpid());
}

/* krexd refuses a label with control characters (they could forge log
 * lines) or malformed UTF-8: a label taken from the environment or the
 * command name, or cut to the field's size, is made to obey (text.h). */
void client_fill_register(union proto_body *m, const struct proto_gpus *g, uint32_t flags)
{
	memset(m, 0, sizeof(*m));
	m->reg.pid = (uint32_t)getpid();
	m->reg.flags = flags;
	client_label(m->reg.label, sizeof(m->reg.label));
	text_clean(m->reg.label); /* krexd refuses a label that breaks the rule */
	if (g)
		m->reg.gpus = *g;
}
