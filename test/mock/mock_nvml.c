/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_nvml.c - TEST DOUBLE.  A fake libnvidia-ml.so.1 for make check on
 * machines without a GPU: it answers the read calls KREX makes
 * (common/nvmlapi.c) from a script, so that settle, sampling and the
 * outcome rule can be tested.  Never installed; it changes nothing.
 *
 * Without KREX_MOCK_NVML in the environment nvmlInit fails (driver not
 * loaded): the process then behaves as on a node without NVML.  With it,
 * KREX_MOCK_NVML names a script file:
 *
 *	# header keys (no time): GPUs, max and application SM clock (0 = not
 *	# supported), and which calls fail: none, sample (clock and reasons),
 *	# all (every device call after init)
 *	gpus=1 max=1980 app=1980 fail=none
 *	# from T ms after the file's mtime on: SM clock, reasons mask, temperature
 *	0 sm=1500 reasons=0x4 temp=70
 *	300 sm=1980 reasons=0 temp=65
 *
 * A time line's keys carry over to the next line.  Before the first time
 * the first line's state holds.  A time line with gpu=N applies to GPU N
 * only ("300 gpu=1 sm=1980"); one without to every GPU.  The file is read again whenever its mtime
 * or size changes, and the clock restarts at the new mtime: a test rewrites
 * it (write a temp file, mv) to start a new story.  The violation counters
 * integrate the scripted reasons: power (sw_power_cap, hw_power_brake) and
 * thermal (sw_thermal, hw_thermal) time since the mtime, in ns; "hidden=0x4"
 * adds reasons that only the counters see (a throttle between two samples).
 * "procs=N" puts N compute processes on the GPU that are nobody's
 * participants (pids above any pid_max: foreign to krexd).  "pids=P,Q"
 * (at most 64) puts these real pids on the GPU too, listed first, as
 * processes with a context there ("pids=" or "pids=0": none): a test
 * names a participant's process (krexd maps it to the participant).
 *
 * An event instead of a time: a line "on=PATH sm=1545 reasons=0x4" holds
 * from the moment PATH exists (its mtime) on, over the time lines, so that
 * a test makes the GPU change when something happened (an owner's command
 * inside a region touches PATH: the owner's own work reached the power
 * cap) rather than after a number of milliseconds.  At most 8 such lines.
 *
 * Header keys for the process list: "procs_ms=N" makes it take N ms,
 * "procs_wait=PATH" holds it until PATH exists (at most 60 s): a test
 * holds krexd's process list while the rest of NVML answers.  Likewise
 * "nominal_wait=PATH" holds the max and application clock calls (the
 * nominal clock's), logged "nominal_begin T_MS GPU", "nominal_end T_MS GPU".  MPS:
 * "mps_pids=P,Q" (at most 64) are the real pids that
 * nvmlDeviceGetMPSComputeRunningProcesses_v3 lists on every GPU (an MPS
 * server's clients; the server's own pid goes in pids=), none by default;
 * "mps=off" makes that call fail with NOT_SUPPORTED (a driver that cannot
 * list MPS clients); "mps_mem=BYTES" is the used GPU memory it gives each
 * (0 by default).
 *
 * KREX_MOCK_NVML_LOG, when set, names a file that gets one line per SM
 * clock read ("clock T_MS GPU MHZ REASONS") and temperature read ("temp
 * T_MS GPU"), T_MS since the script's mtime: a test reads from it when
 * krexd looked at the GPU (the settle's polls; the grant reads the
 * temperature first); the process list adds "procs_begin T_MS GPU" and
 * "procs_end T_MS GPU".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

#define OK 0
#define E_INVALID 2
#define E_NOT_SUPPORTED 3
#define E_NOT_FOUND 6
#define E_DRIVER_NOT_LOADED 9
#define E_UNKNOWN 999

#define MAX_STEPS 64
#define MAX_GPUS 8
#define MAX_ON 8
#define MAX_PIDS 64

struct step {
	double t_ms;
	unsigned sm, temp;
	unsigned long long reasons;
	unsigned long long hidden; /* counted by the violation counters, not reported */
	unsigned procs;            /* foreign compute processes */
	unsigned pids[MAX_PIDS];   /* real pids on the GPU */
	unsigned npids;
};

static struct {
	char path[512];
	struct timespec mtime;
	off_t size;
	int loaded;
	unsigned gpus, max, app;
	int fail;                               /* 0 none, 1 sample, 2 all */
	unsigned procs_ms;                      /* the process list takes this long */
	char procs_wait[256];                   /* and waits for this file to exist */
	char nominal_wait[256];                 /* the nominal clock's calls wait for it */
	unsigned mps_pids[MAX_PIDS], n_mps;     /* the MPS clients listed */
	int mps_off;                            /* the MPS list fails */
	unsigned long long mps_mem;             /* each MPS client's used memory */
	struct step steps[MAX_GPUS][MAX_STEPS]; /* per GPU */
	int nsteps[MAX_GPUS];
	struct delta_on {
		char path[256];
		int gpu, has_sm, has_reasons, has_temp, has_hidden, has_procs, has_pids;
		struct step v;
	} on[MAX_ON];
	int non;
} S;

static int dev_ids[MAX_GPUS];

/* Every exported call holds it: krexd calls NVML from two threads (its
 * process list has a thread of its own), and a call may reload the script. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* An exported call: its unlocked body under the lock. */
#define LOCKED(call)                                                                               \
	do {                                                                                       \
		int rc_;                                                                           \
		pthread_mutex_lock(&mu);                                                           \
		rc_ = call;                                                                        \
		pthread_mutex_unlock(&mu);                                                         \
		return rc_;                                                                        \
	} while (0)

/* Which keys a time line set, to apply them to one GPU or every GPU. */
struct delta {
	int gpu; /* -1 every GPU */
	int has_sm, has_reasons, has_temp, has_hidden, has_procs, has_pids;
	struct step v;
	char on[256]; /* an event line: the file whose existence starts it */
};

/* A comma list of pids into pids (at most MAX_PIDS; 0s left out); their count. */
static unsigned parse_pids(const char *v, unsigned *pids)
{
	unsigned n = 0;
	char *end;

	for (; *v && n < MAX_PIDS; v = *end ? end + 1 : end) {
		unsigned long pid = strtoul(v, &end, 10);
		if (end == v)
			break;
		if (pid)
			pids[n++] = (unsigned)pid;
	}
	return n;
}

static void parse_kv(char *tok, struct delta *d, int header)
{
	struct step *st = &d->v;
	char *eq = strchr(tok, '=');
	const char *k = tok, *v;

	if (!eq)
		return;
	*eq = '\0';
	v = eq + 1;
	if (!strcmp(k, "sm"))
		st->sm = (unsigned)strtoul(v, NULL, 0), d->has_sm = 1;
	else if (!strcmp(k, "reasons"))
		st->reasons = strtoull(v, NULL, 0), d->has_reasons = 1;
	else if (!strcmp(k, "temp"))
		st->temp = (unsigned)strtoul(v, NULL, 0), d->has_temp = 1;
	else if (!strcmp(k, "hidden"))
		st->hidden = strtoull(v, NULL, 0), d->has_hidden = 1;
	else if (!strcmp(k, "procs"))
		st->procs = (unsigned)strtoul(v, NULL, 0), d->has_procs = 1;
	else if (!strcmp(k, "pids"))
		st->npids = parse_pids(v, st->pids), d->has_pids = 1;
	else if (!strcmp(k, "on"))
		snprintf(d->on, sizeof(d->on), "%s", v);
	else if (!header && !strcmp(k, "gpu"))
		d->gpu = (int)strtol(v, NULL, 0);
	else if (header && !strcmp(k, "gpus"))
		S.gpus = (unsigned)strtoul(v, NULL, 0);
	else if (header && !strcmp(k, "max"))
		S.max = (unsigned)strtoul(v, NULL, 0);
	else if (header && !strcmp(k, "app"))
		S.app = (unsigned)strtoul(v, NULL, 0);
	else if (header && !strcmp(k, "procs_ms"))
		S.procs_ms = (unsigned)strtoul(v, NULL, 0);
	else if (header && !strcmp(k, "procs_wait"))
		snprintf(S.procs_wait, sizeof(S.procs_wait), "%s", v);
	else if (header && !strcmp(k, "nominal_wait"))
		snprintf(S.nominal_wait, sizeof(S.nominal_wait), "%s", v);
	else if (header && !strcmp(k, "mps_pids"))
		S.n_mps = parse_pids(v, S.mps_pids);
	else if (header && !strcmp(k, "mps"))
		S.mps_off = !strcmp(v, "off");
	else if (header && !strcmp(k, "mps_mem"))
		S.mps_mem = strtoull(v, NULL, 10);
	else if (header && !strcmp(k, "fail"))
		S.fail = !strcmp(v, "all") ? 2 : !strcmp(v, "sample") ? 1 : 0;
}

/* (Re)read the script when it changed; -1 when it cannot be read. */
static void apply(struct step *cur, const struct delta *d, double t)
{
	if (d->has_sm)
		cur->sm = d->v.sm;
	if (d->has_reasons)
		cur->reasons = d->v.reasons;
	if (d->has_temp)
		cur->temp = d->v.temp;
	if (d->has_hidden)
		cur->hidden = d->v.hidden;
	if (d->has_procs)
		cur->procs = d->v.procs;
	if (d->has_pids)
		memcpy(cur->pids, d->v.pids, sizeof(cur->pids)), cur->npids = d->v.npids;
	cur->t_ms = t;
}

static int load(void)
{
	struct step cur[MAX_GPUS];
	char line[512], *tok, *save, *end;
	struct delta d;
	struct stat sb;
	FILE *f;
	int g;

	if (!S.path[0] || stat(S.path, &sb) < 0)
		return -1;
	if (S.loaded && sb.st_mtim.tv_sec == S.mtime.tv_sec &&
	    sb.st_mtim.tv_nsec == S.mtime.tv_nsec && sb.st_size == S.size)
		return 0;
	f = fopen(S.path, "r");
	if (!f)
		return -1;
	S.gpus = 1;
	S.max = 1980;
	S.app = 1980;
	S.fail = 0;
	S.procs_ms = 0;
	S.procs_wait[0] = '\0';
	S.nominal_wait[0] = '\0';
	S.n_mps = 0;
	S.mps_off = 0;
	S.mps_mem = 0;
	S.non = 0;
	for (g = 0; g < MAX_GPUS; g++) {
		S.nsteps[g] = 0;
		cur[g] = (struct step){.sm = 1980, .temp = 40};
	}
	while (fgets(line, sizeof(line), f)) {
		double t;
		tok = strtok_r(line, " \t\r\n", &save);
		if (!tok || tok[0] == '#')
			continue;
		memset(&d, 0, sizeof(d));
		d.gpu = -1;
		t = strtod(tok, &end);
		if (!strncmp(tok, "on=", 3)) {
			for (; tok; tok = strtok_r(NULL, " \t\r\n", &save))
				parse_kv(tok, &d, 0);
			if (S.non < MAX_ON) {
				struct delta_on *o = &S.on[S.non++];
				snprintf(o->path, sizeof(o->path), "%s", d.on);
				o->gpu = d.gpu, o->has_sm = d.has_sm,
				o->has_reasons = d.has_reasons;
				o->has_temp = d.has_temp, o->has_hidden = d.has_hidden;
				o->has_procs = d.has_procs, o->has_pids = d.has_pids, o->v = d.v;
			}
			continue;
		}
		if (end == tok || *end != '\0') {
			for (; tok; tok = strtok_r(NULL, " \t\r\n", &save))
				parse_kv(tok, &d, 1);
			continue;
		}
		while ((tok = strtok_r(NULL, " \t\r\n", &save)))
			parse_kv(tok, &d, 0);
		for (g = 0; g < MAX_GPUS; g++) {
			if (d.gpu >= 0 && d.gpu != g)
				continue;
			apply(&cur[g], &d, t);
			if (S.nsteps[g] < MAX_STEPS)
				S.steps[g][S.nsteps[g]++] = cur[g];
		}
	}
	fclose(f);
	for (g = 0; g < MAX_GPUS; g++)
		if (S.nsteps[g] == 0)
			S.steps[g][S.nsteps[g]++] = cur[g];
	if (S.gpus > MAX_GPUS)
		S.gpus = MAX_GPUS;
	S.mtime = sb.st_mtim;
	S.size = sb.st_size;
	S.loaded = 1;
	return 0;
}

/* ms from the script's mtime to ts. */
static double ms_since(const struct timespec *ts)
{
	return (double)(ts->tv_sec - S.mtime.tv_sec) * 1e3 + (ts->tv_nsec - S.mtime.tv_nsec) / 1e6;
}

/* ms since the script's mtime. */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ms_since(&ts);
}

/* When event line i started (its file's mtime, in ms since the script's), or -1 if not yet. */
static double on_since(int i)
{
	struct stat sb;

	if (stat(S.on[i].path, &sb) < 0)
		return -1;
	return ms_since(&sb.st_mtim);
}

/* GPU g's state at t ms: the time lines, then the event lines started by then. */
static struct step state_at(int g, double t)
{
	struct step st;
	const struct delta_on *o;
	double since;
	int i, cur = 0;

	for (i = 0; i < S.nsteps[g]; i++)
		if (S.steps[g][i].t_ms <= t)
			cur = i;
	st = S.steps[g][cur];
	for (i = 0; i < S.non; i++) {
		o = &S.on[i];
		since = on_since(i);
		if (since < 0 || (since > t && since - t > 1e-6) || (o->gpu >= 0 && o->gpu != g))
			continue;
		if (o->has_sm)
			st.sm = o->v.sm;
		if (o->has_reasons)
			st.reasons = o->v.reasons;
		if (o->has_temp)
			st.temp = o->v.temp;
		if (o->has_hidden)
			st.hidden = o->v.hidden;
		if (o->has_procs)
			st.procs = o->v.procs;
		if (o->has_pids)
			memcpy(st.pids, o->v.pids, sizeof(st.pids)), st.npids = o->v.npids;
	}
	return st;
}

static struct step state_now(int g)
{
	return state_at(g, now_ms());
}

/* Nanoseconds since the mtime GPU g spent in states whose reasons hit mask:
 * the time lines and the event lines cut the time into pieces of one state. */
static unsigned long long integrate(int g, unsigned long long mask)
{
	double cut[MAX_STEPS + MAX_ON + 2], t = now_ms(), sum = 0, x;
	struct step st;
	int i, j, n = 0;

	cut[n++] = 0;
	for (i = 1; i < S.nsteps[g]; i++)
		if (S.steps[g][i].t_ms > 0 && S.steps[g][i].t_ms < t)
			cut[n++] = S.steps[g][i].t_ms;
	for (i = 0; i < S.non; i++)
		if ((x = on_since(i)) > 0 && x < t)
			cut[n++] = x;
	cut[n++] = t;
	for (i = 1; i < n; i++) /* insertion sort: a handful of cuts */
		for (j = i; j > 0 && cut[j - 1] > cut[j]; j--)
			x = cut[j], cut[j] = cut[j - 1], cut[j - 1] = x;
	for (i = 0; i + 1 < n; i++) {
		if (cut[i + 1] <= cut[i])
			continue;
		st = state_at(g, (cut[i] + cut[i + 1]) / 2);
		if ((st.reasons | st.hidden) & mask)
			sum += cut[i + 1] - cut[i];
	}
	return (unsigned long long)(sum * 1e6);
}

/* One line into $KREX_MOCK_NVML_LOG, if set. */
static void read_log(const char *what, int g, const struct step *st)
{
	const char *p = getenv("KREX_MOCK_NVML_LOG");
	FILE *f;

	if (!p || !*p || !(f = fopen(p, "a")))
		return;
	if (st)
		fprintf(f, "%s %.3f %d %u 0x%llx\n", what, now_ms(), g, st->sm, st->reasons);
	else
		fprintf(f, "%s %.3f %d\n", what, now_ms(), g);
	fclose(f);
}

/* Checks common to every device call; level 1 = a clock sample call. */
static int dev_check(void *dev, int level)
{
	int *id = dev;

	if (load() < 0)
		return E_UNKNOWN;
	if (!id || *id < 0 || (unsigned)*id >= S.gpus)
		return E_INVALID;
	if (S.fail == 2 || (S.fail == 1 && level == 1))
		return E_UNKNOWN;
	return OK;
}

static int nvmlInit_v2_u(void)
{
	const char *p = getenv("KREX_MOCK_NVML");
	int i;

	if (!p || !*p)
		return E_DRIVER_NOT_LOADED;
	snprintf(S.path, sizeof(S.path), "%s", p);
	for (i = 0; i < MAX_GPUS; i++)
		dev_ids[i] = i;
	return load() < 0 ? E_DRIVER_NOT_LOADED : OK;
}

EXPORT int nvmlInit_v2(void)
{
	LOCKED(nvmlInit_v2_u());
}

EXPORT int nvmlInit(void)
{
	return nvmlInit_v2();
}

EXPORT int nvmlShutdown(void)
{
	return OK;
}

EXPORT const char *nvmlErrorString(int rc)
{
	return rc == OK ? "Success" : "mock NVML error";
}

static int nvmlDeviceGetCount_v2_u(unsigned *n)
{
	if (load() < 0)
		return E_UNKNOWN;
	*n = S.gpus;
	return OK;
}

EXPORT int nvmlDeviceGetCount_v2(unsigned *n)
{
	LOCKED(nvmlDeviceGetCount_v2_u(n));
}

static int nvmlDeviceGetHandleByIndex_v2_u(unsigned i, void **dev)
{
	if (load() < 0)
		return E_UNKNOWN;
	if (i >= S.gpus)
		return E_INVALID;
	*dev = &dev_ids[i];
	return OK;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev)
{
	LOCKED(nvmlDeviceGetHandleByIndex_v2_u(i, dev));
}

/* Bus ids "0000:0N:00.0" with N = index + 1, in any of NVML's spellings. */
static int nvmlDeviceGetHandleByPciBusId_v2_u(const char *bus, void **dev)
{
	unsigned dom, b, d, fn;

	if (load() < 0)
		return E_UNKNOWN;
	if (sscanf(bus, "%x:%x:%x.%x", &dom, &b, &d, &fn) != 4 || b < 1 || b > S.gpus || d || fn)
		return E_NOT_FOUND;
	*dev = &dev_ids[b - 1];
	return OK;
}

EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
	LOCKED(nvmlDeviceGetHandleByPciBusId_v2_u(bus, dev));
}

static int nvmlDeviceGetHandleByUUID_u(const char *uuid, void **dev)
{
	unsigned i;

	if (load() < 0)
		return E_UNKNOWN;
	if (sscanf(uuid, "GPU-mock-%u", &i) != 1 || i >= S.gpus)
		return E_NOT_FOUND;
	*dev = &dev_ids[i];
	return OK;
}

EXPORT int nvmlDeviceGetHandleByUUID(const char *uuid, void **dev)
{
	LOCKED(nvmlDeviceGetHandleByUUID_u(uuid, dev));
}

struct pci_info {
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

static int nvmlDeviceGetPciInfo_v3_u(void *dev, struct pci_info *p)
{
	int rc = dev_check(dev, 0);

	if (rc)
		return rc;
	memset(p, 0, sizeof(*p));
	p->bus = (unsigned)*(int *)dev + 1;
	snprintf(p->bus_id, sizeof(p->bus_id), "00000000:%02X:00.0", p->bus);
	snprintf(p->bus_id_legacy, sizeof(p->bus_id_legacy), "0000:%02X:00.0", p->bus);
	return OK;
}

EXPORT int nvmlDeviceGetPciInfo_v3(void *dev, struct pci_info *p)
{
	LOCKED(nvmlDeviceGetPciInfo_v3_u(dev, p));
}

static int nvmlDeviceGetUUID_u(void *dev, char *buf, unsigned len)
{
	int rc = dev_check(dev, 0);

	if (rc)
		return rc;
	snprintf(buf, len, "GPU-mock-%d", *(int *)dev);
	return OK;
}

EXPORT int nvmlDeviceGetUUID(void *dev, char *buf, unsigned len)
{
	LOCKED(nvmlDeviceGetUUID_u(dev, buf, len));
}

static int nvmlDeviceGetClockInfo_u(void *dev, int type, unsigned *mhz)
{
	struct step st;
	int rc = dev_check(dev, 1);

	if (rc)
		return rc;
	if (type != 1 && type != 0)
		return E_NOT_SUPPORTED;
	st = state_now(*(int *)dev);
	*mhz = st.sm;
	if (type == 1)
		read_log("clock", *(int *)dev, &st);
	return OK;
}

EXPORT int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz)
{
	LOCKED(nvmlDeviceGetClockInfo_u(dev, type, mhz));
}

static int nvmlDeviceGetMaxClockInfo_u(void *dev, int type, unsigned *mhz)
{
	int rc = dev_check(dev, 0);

	if (rc)
		return rc;
	if ((type != 1 && type != 0) || !S.max)
		return E_NOT_SUPPORTED;
	*mhz = S.max;
	return OK;
}

/* A hold of the script's (procs_wait=, nominal_wait=): until the file at
 * path exists, at most 60 s, without the lock. */
static void wait_file(const char *path)
{
	unsigned i;

	for (i = 0; access(path, F_OK) != 0 && i < 60000; i++)
		usleep(1000);
}

/* The nominal clock's calls held until nominal_wait's file exists (at most
 * 60 s), without the lock, logged. */
static void nominal_hold(void *dev)
{
	char path[256];
	int g = dev ? *(int *)dev : -1;

	pthread_mutex_lock(&mu);
	path[0] = '\0';
	if (load() == 0)
		snprintf(path, sizeof(path), "%s", S.nominal_wait);
	if (path[0])
		read_log("nominal_begin", g, NULL);
	pthread_mutex_unlock(&mu);
	if (!path[0])
		return;
	wait_file(path);
	pthread_mutex_lock(&mu);
	read_log("nominal_end", g, NULL);
	pthread_mutex_unlock(&mu);
}

EXPORT int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz)
{
	nominal_hold(dev);
	LOCKED(nvmlDeviceGetMaxClockInfo_u(dev, type, mhz));
}

static int nvmlDeviceGetApplicationsClock_u(void *dev, int type, unsigned *mhz)
{
	int rc = dev_check(dev, 0);

	if (rc)
		return rc;
	if ((type != 1 && type != 0) || !S.app)
		return E_NOT_SUPPORTED;
	*mhz = S.app;
	return OK;
}

EXPORT int nvmlDeviceGetApplicationsClock(void *dev, int type, unsigned *mhz)
{
	nominal_hold(dev);
	LOCKED(nvmlDeviceGetApplicationsClock_u(dev, type, mhz));
}

static int nvmlDeviceGetCurrentClocksEventReasons_u(void *dev, unsigned long long *r)
{
	int rc = dev_check(dev, 1);

	if (rc)
		return rc;
	*r = state_now(*(int *)dev).reasons;
	return OK;
}

EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *r)
{
	LOCKED(nvmlDeviceGetCurrentClocksEventReasons_u(dev, r));
}

EXPORT int nvmlDeviceGetCurrentClocksThrottleReasons(void *dev, unsigned long long *r)
{
	return nvmlDeviceGetCurrentClocksEventReasons(dev, r);
}

static int nvmlDeviceGetTemperature_u(void *dev, int sensor, unsigned *c)
{
	int rc = dev_check(dev, 0);

	if (rc)
		return rc;
	if (sensor != 0)
		return E_NOT_SUPPORTED;
	*c = state_now(*(int *)dev).temp;
	read_log("temp", *(int *)dev, NULL);
	return OK;
}

EXPORT int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *c)
{
	LOCKED(nvmlDeviceGetTemperature_u(dev, sensor, c));
}

struct violation_time {
	unsigned long long reference_time, violation_time;
};

static int nvmlDeviceGetViolationStatus_u(void *dev, int policy, struct violation_time *v)
{
	struct timespec ts;
	int rc = dev_check(dev, 0);

	if (rc)
		return rc;
	if (policy != 0 && policy != 1)
		return E_NOT_SUPPORTED;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v->reference_time =
	        (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000;
	v->violation_time = integrate(*(int *)dev, policy == 0 ? 0x84ULL : 0x60ULL);
	return OK;
}

EXPORT int nvmlDeviceGetViolationStatus(void *dev, int policy, struct violation_time *v)
{
	LOCKED(nvmlDeviceGetViolationStatus_u(dev, policy, v));
}

struct process_info {
	unsigned pid;
	unsigned long long used;
	unsigned gi, ci;
};

static int nvmlDeviceGetComputeRunningProcesses_v3_u(void *dev, unsigned *n, struct process_info *p)
{
	unsigned i, want, have;
	struct step st;
	int rc = dev_check(dev, 0);

	if (rc)
		return rc;
	/* The mock GPU's own processes are not known to this double; the
	 * script's are: its pids= first, then its foreign ones, with pids no
	 * process can have. */
	st = state_now(*(int *)dev);
	want = st.npids + st.procs;
	have = *n;
	*n = want;
	if (want > have)
		return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
	for (i = 0; i < want; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		p[i].pid = i < st.npids ? st.pids[i] : 0x7ffffff0u + (i - st.npids);
	}
	return OK;
}

static int nvmlDeviceGetMPSComputeRunningProcesses_v3_u(void *dev, unsigned *n,
                                                        struct process_info *p)
{
	unsigned i, have = *n;
	int rc = dev_check(dev, 0);

	if (rc)
		return rc;
	if (S.mps_off)
		return E_NOT_SUPPORTED;
	*n = S.n_mps;
	if (S.n_mps > have)
		return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
	for (i = 0; i < S.n_mps; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		p[i].pid = S.mps_pids[i];
		p[i].used = S.mps_mem;
	}
	return OK;
}

EXPORT int nvmlDeviceGetMPSComputeRunningProcesses_v3(void *dev, unsigned *n,
                                                      struct process_info *p)
{
	LOCKED(nvmlDeviceGetMPSComputeRunningProcesses_v3_u(dev, n, p));
}

/*
 * The process list as slow as the script says (procs_ms=N), and held until a
 * file exists (procs_wait=PATH, at most 60 s), without the lock: a test
 * holds krexd's process list while the rest of NVML answers.  Logged as
 * "procs_begin T_MS GPU" and "procs_end T_MS GPU".
 */
static void procs_hold(int g)
{
	char path[256];
	unsigned ms;

	pthread_mutex_lock(&mu);
	ms = load() == 0 ? S.procs_ms : 0;
	snprintf(path, sizeof(path), "%s", S.procs_wait);
	read_log("procs_begin", g, NULL);
	pthread_mutex_unlock(&mu);
	if (ms)
		usleep(ms * 1000u);
	if (path[0])
		wait_file(path);
	pthread_mutex_lock(&mu);
	read_log("procs_end", g, NULL);
	pthread_mutex_unlock(&mu);
}

EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned *n, struct process_info *p)
{
	procs_hold(dev ? *(int *)dev : -1);
	LOCKED(nvmlDeviceGetComputeRunningProcesses_v3_u(dev, n, p));
}
