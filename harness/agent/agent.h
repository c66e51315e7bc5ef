/* SPDX-License-Identifier: GPL-2.0 */
/* agent.h — the guest agent: PID 1 inside the bpfuml guest.
 *
 * It reads job.json from the run directory (the host's per-run directory,
 * mounted at RUN_DIR_IN_GUEST), does the job with libbpf, and writes result.json
 * and any large outputs (verifier logs, data_out) as files beside it.
 */
#ifndef BPFUML_AGENT_H
#define BPFUML_AGENT_H

#include <json-c/json.h>

#include "run_dir.h"


/* The run directory in use: RUN_DIR_IN_GUEST as PID 1 in a guest, or the
 * directory given on the command line in host mode (bench --backend host). */
extern const char *agent_run_dir;

/* First and largest verifier log buffer per program.  The buffer grows
 * fourfold on ENOSPC instead of letting the kernel truncate the log: every
 * retry verifies the program again, so few large steps beat many small ones.
 * Untouched pages of a large calloc() cost nothing.  A level-1 log of a
 * program that hits the 1M-instruction limit is ~100 MB. */
#define AGENT_LOG_MIN (16u << 20)
#define AGENT_LOG_GROWTH 4
#define AGENT_LOG_MAX (256u << 20)

/* The job's "test_fault" (tests only, never in host mode), or NULL: faults
 * that act in the middle of a job look here. */
extern const char *agent_test_fault;

/* Each job fills RESULT and returns 0, or a negative errno when it could not
 * be done at all (the reason is then in RESULT's "error"). */
int agent_verify(json_object *job, json_object *result);
int agent_run(json_object *job, json_object *result);
int agent_bench(json_object *job, json_object *result);
int agent_probe(json_object *job, json_object *result);
/* Run a host program in the guest (agent_exec.c): the kernel's selftests. */
int agent_exec(json_object *job, json_object *result);

/* Test fault "escape=PATH": try to write the host file PATH from inside the
 * guest, and record how each attempt went in RESULT (agent_escape.c). */
void agent_try_escape(const char *target, json_object *result);

/* The guest's /tmp is a tmpfs over the host's: make the host directory
 * /tmp/X of PATH (/tmp/X/...) reachable again, bound at the same place. */
int agent_expose_host_tmp(const char *path);
void agent_mount_bpffs(void);
/* A warm guest's job, in a mount namespace of its own: the next
 * agent_mount_bpffs() mounts a bpffs instance of the job's own over the
 * guest's, so that nothing the job pins outlives it. */
void agent_bpffs_of_its_own(void);

/* job.json of agent_run_dir, parsed (NULL when missing or not an object). */
json_object *agent_read_job(void);
/* A result with its first members: the agent's START_NS, the mounts' end,
 * the kernel release. */
json_object *agent_new_result(long long start_ns);
/* Do JOB (NULL: say it is missing) into RESULT, and write result.json. */
void agent_do_job(json_object *job, json_object *result);
/* A warm guest's loop (agent_serve.c): never returns. */
void agent_serve(json_object *job) __attribute__((noreturn));

/* Write BUF to agent_run_dir/NAME (through fsync, so the host sees it). */
int agent_write_file(const char *name, const void *buf, size_t len);
/* Read agent_run_dir/NAME into a malloc'ed buffer. */
int agent_read_file(const char *name, void **buf, size_t *len);

#endif
