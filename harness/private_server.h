/* SPDX-License-Identifier: GPL-2.0 */
/* private_server.h — a `bpfuml serve` of a command's own (verify --watch,
 * mcp), in a private directory, for the command's life. */
#ifndef BPFUML_PRIVATE_SERVER_H
#define BPFUML_PRIVATE_SERVER_H

#include <limits.h>
#include <sys/types.h>

struct private_server {
	char dir[PATH_MAX];		/* private (0700), removed by the stop */
	char socket[PATH_MAX + 16];	/* DIR/serve.sock */
	pid_t pid;
};

/* Start one and wait (up to 120 s) until its guests are ready: 0, or
 * -errno (nothing left running then).  Its stderr is ours. */
int private_server_start(struct private_server *ps);
/* SIGTERM, and wait for its clean-up; idempotent. */
void private_server_stop(struct private_server *ps);

#endif
