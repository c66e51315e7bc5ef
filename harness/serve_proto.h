/* SPDX-License-Identifier: GPL-2.0 */
/* serve_proto.h — how a client (session.c, for verify/run/probe/exec) and
 * `bpfuml serve` (cmd_serve.c) talk: one JSON object per message on a Unix
 * SOCK_SEQPACKET socket, one job per connection.
 *
 *   client {"op": "job", "command": C}
 *   server {"dir": HOST PATH, "guest_dir": ITS PATH IN THE GUEST, "backend",
 *           "bpf_mode", "mem_mb", "cpus", "confinement"}  (or {"error": TEXT})
 *   ... the client puts the job's files and job.json into "dir" ...
 *   client {"op": "run", "timeout_s": T}
 *   server {"status": STATUS, "trouble": TEXT, "start_ns", "exit_ns"}
 *   ... the client reads result.json and the logs from "dir", then closes:
 *       the server removes "dir"; a job whose client goes first is cancelled.
 *   client {"op": "status"}  server {"guests": [...], "rss_kb", "fds", ...}
 *
 * STATUS is session_status_name()'s: "ok", "timeout", "kernel", "no-answer",
 * "start-failed".  The server is trusted only as far as its owner: the
 * client connects only to a socket that is its own user's.
 */
#ifndef BPFUML_SERVE_PROTO_H
#define BPFUML_SERVE_PROTO_H

#include <json-c/json.h>
#include <stddef.h>

/* Largest message: a reply quoting console lines is cut to fit. */
#define SERVE_MSG_MAX (256u << 10)
#define SERVE_TROUBLE_MAX (200u << 10)

/* 0, or -errno (-EMSGSIZE for a message over SERVE_MSG_MAX). */
int serve_send(int fd, json_object *msg);
/* One message into *MSG (an object): 0; -EAGAIN (non-blocking, none yet);
 * -ECONNRESET when the peer has gone; -EPROTO for one that is not a JSON
 * object. */
int serve_recv(int fd, json_object **msg, int flags);
/* $XDG_RUNTIME_DIR/bpfuml/serve.sock where XDG_RUNTIME_DIR is set, else
 * /tmp/bpfuml-UID/serve.sock. */
int serve_default_socket(char *buf, size_t size);
/* Is PATH's directory one only we can enter (ours, no group or other
 * permissions)?  0, or -EPERM / -errno with the reason in WHY. */
int serve_private_dir(const char *dir, char *why, size_t why_size);

#endif
