/* SPDX-License-Identifier: GPL-2.0 */
/* guest_result.h — what the guest wrote, read as hostile input.
 *
 * Everything in the run directory after a guest ran may have been written
 * by guest root (test_progs runs as root; so does whatever a kernel bug
 * lets a BPF program reach): a file the host expects may be a symbolic
 * link, a FIFO that blocks the reader, a sparse file of many GiB, and
 * result.json may name any path or hold any JSON.  The host reads guest
 * files only through guest_file_read() and takes result.json only from
 * guest_result_parse(), which checks its shape once for the job it was.
 */
#ifndef BPFUML_GUEST_RESULT_H
#define BPFUML_GUEST_RESULT_H

#include <json-c/json.h>
#include <stddef.h>

/* result.json: the agent's records are ~1 KiB per program plus libbpf's
 * messages; the 5,036 programs of the 7.3 selftests in one run stay far
 * below 64 MiB. */
#define GUEST_RESULT_MAX (64u << 20)
/* Any other file: a verifier log is at most the agent's largest log buffer
 * (AGENT_LOG_MAX, 256 MiB), which the host must be able to read whole;
 * data_out and test_progs' output stay far below it. */
#define GUEST_FILE_MAX (256u << 20)

/* A single path component: no '/', not "" or "." or "..". */
int guest_name_ok(const char *name);
/* The cap for a file of the run directory, by its name. */
size_t guest_file_cap(const char *name);

/*
 * Read DIR_FD/NAME into a NUL-terminated malloc'ed buffer without following
 * a symbolic link or blocking on a FIFO: only a regular file of at most CAP
 * bytes is read.  Returns 0 or -errno: -EINVAL for a bad name, -ELOOP for a
 * symbolic link, -ENODEV for what is not a regular file, -EFBIG above CAP.
 */
int guest_file_read(int dir_fd, const char *name, size_t cap, char **buf, size_t *len);
/* What guest_file_read()'s error means, for a message. */
const char *guest_file_strerror(int err);

/*
 * Parse TEXT (LEN bytes) as the result of a COMMAND job ("verify", "run",
 * "probe", "bench", "exec") and check its shape: the members the host reads
 * have the types it expects, verdicts are known words, and the files it names
 * are the ones that job writes (checked in DIR_FD: regular, within the cap;
 * DIR_FD < 0 skips that).  Returns the document, or NULL with WHY said.
 */
json_object *guest_result_parse(const char *text, size_t len, const char *command, int dir_fd,
				char *why, size_t why_len);

#endif
