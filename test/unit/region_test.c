/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_test.c - libkrexregion against a scripted stand-in for krexd (a
 * thread on a unix socket that answers from a script), and without krexd.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"
#include "gatepage.h"
#include "krex/region.h"
#include "proto.h"
#include "tap.h"
#include "timeutil.h"

static char sockpath[108], gatepath[128];
static int listen_fd;
static struct gate_page *page;

/* What the stand-in saw. */
static struct {
	int registers, begins, ends, acks;
	union proto_body last_reg, last_begin;
	uint32_t ack_gen;
} seen;

static int refuse_first_begin; /* answer ENOTREG once, as krexd does for strangers */

static int serve_one(int fd)
{
	union proto_body m, r;
	uint16_t type;
	int herr;

	if (proto_recv(fd, &type, NULL, &m, time_deadline_ms(5000), &herr) < 0)
		return -1;
	memset(&r, 0, sizeof(r));
	switch (type) {
	case PROTO_REGISTER:
		seen.registers++;
		seen.last_reg = m;
		r.registered.participant = 7;
		r.registered.queue_cap = 4;
		r.registered.queue_us = 1500;
		r.registered.gate_timeout_ms = 3000;
		strcpy(r.registered.gate_path, gatepath);
		r.registered.nslots = 1;
		r.registered.slot[0] = 0;
		return proto_send(fd, PROTO_REGISTERED, 0, &r, time_deadline_ms(1000));
	case PROTO_REGION_BEGIN:
		seen.begins++;
		seen.last_begin = m;
		if (refuse_first_begin) {
			refuse_first_begin = 0;
			proto_error_set(&r, KREX_ENOTREG, "not a participant");
			return proto_send(fd, PROTO_ERROR, 0, &r, time_deadline_ms(1000));
		}
		r.grant.region_id = 41;
		r.grant.lease_us = 5000000;
		return proto_send(fd, PROTO_GRANT, 0, &r, time_deadline_ms(1000));
	case PROTO_REGION_END:
		seen.ends++;
		r.cert.region_id = m.end.region_id;
		r.cert.outcome = KREX_OUTCOME_DEGRADED;
		r.cert.siblings = 2;
		r.cert.late = 1;
		strcpy(r.cert.note, "1 sibling \"late\"");
		return proto_send(fd, PROTO_CERT, 0, &r, time_deadline_ms(1000));
	case PROTO_DRAIN_ACK:
		seen.acks++;
		seen.ack_gen = m.ack.generation;
		return 0;
	}
	return -1;
}

static void *serve_conn(void *arg)
{
	int fd = (int)(long)arg;

	while (serve_one(fd) == 0)
		;
	close(fd);
	return NULL;
}

static void *server(void *arg)
{
	pthread_t t;
	int fd;

	(void)arg;
	for (;;) {
		fd = accept(listen_fd, NULL, NULL);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				usleep(1000);
				continue;
			}
			return NULL;
		}
		fd_set_nonblock(fd, 0);
		pthread_create(&t, NULL, serve_conn, (void *)(long)fd);
		pthread_detach(t);
	}
}

static int drains;
static unsigned drain_ms_seen; /* krex_drain_timeout_ms() in the last drain */

static int drain_cb(void *arg)
{
	(void)arg;
	__atomic_store_n(&drain_ms_seen, krex_drain_timeout_ms(), __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&drains, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static int wait_until(int *v, int want)
{
	for (int i = 0; i < 300; i++) {
		if (__atomic_load_n(v, __ATOMIC_SEQ_CST) >= want)
			return 1;
		usleep(10000);
	}
	return 0;
}

static void *gate_waiter(void *arg)
{
	*(int *)arg = krex_gate_wait();
	return NULL;
}

int main(void)
{
	struct krex_region_opts o = KREX_REGION_OPTS_INIT;
	struct krex_certificate c;
	const char *gpus[] = {"gpu0"};
	char json[2048], dir[] = "/tmp/krex-region-test-XXXXXX";
	pthread_t t, w;
	int fd, waited = -1;

	plan(29);
	mkdtemp(dir);
	snprintf(sockpath, sizeof(sockpath), "%s/krexd.sock", dir);
	snprintf(gatepath, sizeof(gatepath), "%s/gate", dir);

	/* No krexd. */
	setenv("KREX_SOCKET", sockpath, 1);
	ok(krex_region_begin(NULL) == KREX_ENOKREXD, "no krexd: KREX_ENOKREXD");
	ok(strstr(krex_strerror(KREX_ENOKREXD), "krexd") != NULL, "strerror names krexd");
	ok(krex_region_end(&c) == KREX_ENOREGION, "end without begin: KREX_ENOREGION");
	o.flags = KREX_REGION_UNPROTECTED_OK;
	ok(krex_region_begin(&o) == KREX_OK, "no krexd, unprotected allowed: OK");
	ok(krex_region_begin(&o) == KREX_EBUSY, "second begin: KREX_EBUSY");
	ok(krex_region_end(&c) == KREX_OK && c.outcome == KREX_OUTCOME_UNPROTECTED,
	   "unprotected certificate");
	ok(krex_join(NULL) == KREX_ENOKREXD && krex_gate_wait() == 0,
	   "join without krexd fails, gate stays open");
	o.flags = 0;
	o.ngpus = 1;
	o.gpus = NULL;
	ok(krex_region_begin(&o) == KREX_EINVAL, "ngpus without names: KREX_EINVAL");

	/* A stand-in krexd and gate page. */
	fd = open(gatepath, O_RDWR | O_CREAT, 0644);
	ftruncate(fd, GATE_PAGE_SIZE);
	page = mmap(NULL, GATE_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	page->magic = GATE_MAGIC;
	page->version = GATE_VERSION;
	page->nslots = 1;
	listen_fd = unix_listen(sockpath, 16, 0600);
	pthread_create(&t, NULL, server, NULL);

	refuse_first_begin = 1;
	o.gpus = gpus;
	ok(krex_region_begin(&o) == KREX_OK && seen.begins == 2 && seen.registers == 1,
	   "an unregistered caller registers itself and asks again");
	ok(seen.last_reg.reg.pid == (uint32_t)getpid() && seen.last_reg.reg.gpus.n == 1 &&
	           strcmp(seen.last_reg.reg.gpus.name[0], "gpu0") == 0,
	   "registration names this pid and the region's GPU");
	ok(krex_region_end(&c) == KREX_OK && c.region_id == 41 &&
	           c.outcome == KREX_OUTCOME_DEGRADED,
	   "end returns krexd's certificate");
	krex_certificate_json(&c, json, sizeof(json));
	ok(strstr(json, "\"outcome\":\"degraded\"") && strstr(json, "1 sibling \\\"late\\\"") &&
	           strstr(json, "\"moved\":null"),
	   "certificate JSON escapes and marks unknowns: %s", json);
	ok(strstr(json, "\"clock_reasons\":null") && strstr(json, "\"settle_us\":null") &&
	           strstr(json, "\"sm_clock_min_mhz\":null") &&
	           strstr(json, "\"temp_start_c\":null"),
	   "GPU state unknown (known bits clear): null in the JSON");
	c.known |= KREX_CERT_CLOCKS | KREX_CERT_SETTLE;
	c.clock_reasons = 0x4 | 0x20 | 0x400;
	c.sm_clock_min_mhz = 1500;
	c.settle_us = 750000;
	krex_certificate_json(&c, json, sizeof(json));
	ok(strstr(json, "\"clock_reasons\":[\"sw_power_cap\",\"sw_thermal\",\"0x400\"]") &&
	           strstr(json, "\"sm_clock_min_mhz\":1500") &&
	           strstr(json, "\"settle_us\":750000"),
	   "reasons named in the JSON (an undefined bit in hex): %s", json);
	c.clock_reasons = 0;
	krex_certificate_json(&c, json, sizeof(json));
	ok(strstr(json, "\"clock_reasons\":[]") != NULL, "no reason: an empty list");
	ok(strstr(json, "\"own_power_cap_us\":null,\"own_power_cap_first_us\":null,"
	                "\"own_power_cap_samples\":null,") != NULL,
	   "own power cap unknown: null");
	c.known |= KREX_CERT_OWN_POWER;
	c.own_power_cap_us = 60000;
	c.own_power_cap_first_us = 31000;
	c.own_power_cap_samples = 3;
	krex_certificate_json(&c, json, sizeof(json));
	ok(strstr(json, "\"own_power_cap_us\":60000,\"own_power_cap_first_us\":31000,"
	                "\"own_power_cap_samples\":3,") != NULL,
	   "own power cap in the JSON: %s", json);
	c.own_power_cap_us = 0;
	c.own_power_cap_first_us = -1;
	krex_certificate_json(&c, json, sizeof(json));
	ok(strstr(json, "\"own_power_cap_us\":0,\"own_power_cap_first_us\":null") != NULL,
	   "never at the cap: 0 us, first null");

	/* Joining: drain callback on a closed gate, acknowledgement, gate wait. */
	struct krex_join_opts jo = KREX_JOIN_OPTS_INIT;
	jo.gpus = gpus;
	jo.ngpus = 1;
	jo.drain = drain_cb;
	jo.flags = 0x80;
	ok(krex_join(&jo) == KREX_EINVAL, "join with an unknown flag: KREX_EINVAL");
	jo.flags = KREX_JOIN_HOLDS_CONTEXTS;
	ok(krex_drain_timeout_ms() == 2000, "no drain yet: drain_timeout's default, 2000 ms");
	__atomic_store_n(&page->drain_ms, 5000, __ATOMIC_RELEASE); /* krexd's drain_timeout 5s */
	ok(krex_join(&jo) == KREX_OK && krex_queue_cap() == 4 && krex_queue_time_us() == 1500,
	   "join, queue cap and queue time from krexd");
	ok(seen.last_reg.reg.flags == (PROTO_REG_GATE | PROTO_REG_HOLDCTX),
	   "KREX_JOIN_HOLDS_CONTEXTS registers as a gate member holding contexts");
	ok(krex_gate_wait() == 0, "open gate: no wait");
	__atomic_store_n(&page->slot[0].closed_by, 7, __ATOMIC_RELEASE);
	ok(krex_gate_wait() == 0, "gate closed by our own participant: no wait");
	__atomic_store_n(&page->slot[0].closed_by, 9, __ATOMIC_RELEASE);
	__atomic_add_fetch(&page->generation, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &page->generation, FUTEX_WAKE, 100, NULL, NULL, 0);
	ok(wait_until(&drains, 1) && wait_until(&seen.acks, 1) && seen.ack_gen == page->generation,
	   "closed gate: drain callback ran and the generation was acknowledged");
	ok(__atomic_load_n(&drain_ms_seen, __ATOMIC_SEQ_CST) == 5000,
	   "... and read krexd's drain_timeout off the gate page (5000 ms)");
	pthread_create(&w, NULL, gate_waiter, &waited);
	usleep(150000);
	ok(waited == -1, "a submitting thread waits while the gate is closed");
	__atomic_store_n(&page->slot[0].closed_by, 0, __ATOMIC_RELEASE);
	syscall(SYS_futex, &page->slot[0].closed_by, FUTEX_WAKE, 100, NULL, NULL, 0);
	pthread_join(w, NULL);
	ok(waited == 1, "and passes once it opens");
	ok(krex_leave() == KREX_OK, "leave");
	unlink(sockpath);
	unlink(gatepath);
	rmdir(dir);
	return tap_done();
}
