// SPDX-License-Identifier: GPL-2.0
/* serve_proto.c — the messages between clients and `bpfuml serve`. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve_proto.h"

int serve_send(int fd, json_object *msg)
{
	const char *text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(text);

	if (len > SERVE_MSG_MAX)
		return -EMSGSIZE;
	while (send(fd, text, len, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int serve_recv(int fd, json_object **msg, int flags)
{
	static char buf[SERVE_MSG_MAX + 1];
	ssize_t n;

	*msg = NULL;
	do
		n = recv(fd, buf, SERVE_MSG_MAX, flags | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -ECONNRESET;
	if (n == 0)
		return -ECONNRESET;
	if (n > (ssize_t)SERVE_MSG_MAX)
		return -EPROTO;		/* cut: MSG_TRUNC says how long it was */
	buf[n] = '\0';
	*msg = json_tokener_parse(buf);
	if (!*msg || !json_object_is_type(*msg, json_type_object)) {
		json_object_put(*msg);
		*msg = NULL;
		return -EPROTO;
	}
	return 0;
}

int serve_default_socket(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (xdg && *xdg == '/')
		n = snprintf(buf, size, "%s/bpfuml/serve.sock", xdg);
	else
		n = snprintf(buf, size, "/tmp/bpfuml-%u/serve.sock", (unsigned int)getuid());
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int serve_private_dir(const char *dir, char *why, size_t why_size)
{
	struct stat st;

	if (lstat(dir, &st)) {
		snprintf(why, why_size, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
		snprintf(why, why_size, "%s is not a directory that only its owner (you) can enter "
			 "(mode %03o, owner %u)", dir, st.st_mode & 0777, (unsigned int)st.st_uid);
		return -EPERM;
	}
	return 0;
}
