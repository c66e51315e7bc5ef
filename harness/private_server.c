// SPDX-License-Identifier: GPL-2.0
/* private_server.c — start and stop a `bpfuml serve` of our own. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "private_server.h"

#define READY_WITHIN_S 120

void private_server_stop(struct private_server *ps)
{
	if (ps->pid > 0) {
		kill(ps->pid, SIGTERM);
		while (waitpid(ps->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	ps->pid = 0;
	if (ps->dir[0]) {
		unlink(ps->socket);	/* the server removes it; a killed one does not */
		rmdir(ps->dir);
	}
	ps->dir[0] = '\0';
}

int private_server_start(struct private_server *ps)
{
	struct pollfd pfd = { .events = POLLIN };
	char line[512];
	int out[2], err = 0;
	FILE *f;

	snprintf(ps->dir, sizeof(ps->dir), "%s/bpfuml-serve.XXXXXX", getenv("TMPDIR") ?: "/tmp");
	if (!mkdtemp(ps->dir)) {
		ps->dir[0] = '\0';
		return -errno;
	}
	snprintf(ps->socket, sizeof(ps->socket), "%s/serve.sock", ps->dir);
	if (pipe2(out, O_CLOEXEC)) {
		err = -errno;
		private_server_stop(ps);
		return err;
	}
	ps->pid = fork();
	if (ps->pid < 0) {
		err = -errno;
		close(out[0]);
		close(out[1]);
		private_server_stop(ps);
		return err;
	}
	if (ps->pid == 0) {
		dup2(out[1], 1);
		execl("/proc/self/exe", "bpfuml", "serve", "--socket", ps->socket, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	/* Its one line on stdout says that its guests are ready. */
	pfd.fd = out[0];
	f = poll(&pfd, 1, READY_WITHIN_S * 1000) == 1 ? fdopen(out[0], "r") : NULL;
	if (!f)
		close(out[0]);
	if (!f || !fgets(line, sizeof(line), f) || !strstr(line, "ready"))
		err = f ? -EIO : -ETIMEDOUT;
	if (f)
		fclose(f);
	if (err)
		private_server_stop(ps);
	return err;
}
