/*
 * isolate.c - the isolation hook (see isolate.h).  A no-op until the hwloc
 * module and its cpuset/affinity backends are wired in: nothing is moved
 * and the certificate says so (isolation unknown).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "isolate.h"
#include "log.h"

const char *const isolate_undo_kinds[] = {"cpuset", "affinity", NULL};

const char *isolate_backend_name(void)
{
	return "none";
}

int isolate_enter(const struct isolate_req *req, isolate_rec_fn rec, void *ctx,
                  struct krex_certificate *cert)
{
	(void)req;
	(void)rec;
	(void)ctx;
	cert->known &= ~KREX_CERT_ISOLATION;
	cert->moved = -1;
	cert->owner_cores[0] = '\0';
	return 0;
}

int isolate_undo_line(const char *line)
{
	/* No backend yet: a line can only come from a newer krexd. */
	log_warn("isolate: cannot undo '%s' (no isolation backend built in)", line);
	errno = ENOTSUP;
	return -1;
}
