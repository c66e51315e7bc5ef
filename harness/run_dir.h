/* SPDX-License-Identifier: GPL-2.0 */
/* run_dir.h — what the host (the .c files of harness/) and the guest agent
 * (harness/agent/) agree on: where the run directory is in the guest, the
 * names of the files in it, and the members of each job.
 *
 * job.json, written by the host (session_write_job), read by the agent:
 *   "command"        verify | run | bench | probe | exec
 *   "test_fault"     tests only (--test-fault), never in host mode
 *   verify  "objects" [VERIFY_OBJECT names]  "programs" [names] (absent: all)
 *           "log_level"  "fixups"  "attach_targets" {program: function}
 *   run     "object" (RUN_OBJECT)  "program"  "log_level"  "repeat"  "attach"
 *           "data_in"  "ctx_in"
 *   bench   "object"  "cases" [...]
 *   probe   "objects" [rows to try]
 *   exec    "argv"  "cwd"  "output"  "timeout_s"
 *   serve   (none: a warm guest, below)
 *
 * result.json, written by the agent, is read by the host only through
 * guest_result.c, which checks every member the host uses; a verify result
 * always has "objects", one entry per job object, in the job's order.
 */
#ifndef BPFUML_RUN_DIR_H
#define BPFUML_RUN_DIR_H

/* Where the run directory appears inside the guest. */
#define RUN_DIR_IN_GUEST "/tmp/run"
/* QEMU shares the run directory over 9p with this mount tag. */
#define RUN_DIR_9P_TAG "bpfuml_run"

#define JOB_FILE "job.json"
#define RESULT_FILE "result.json"

/* verify: the Nth object of the job is staged as VERIFY_OBJECT (N), and the
 * log of its program with index M is VERIFY_LOG (N, M). */
#define VERIFY_OBJECT "object-%zu.bpf.o"
#define VERIFY_LOG_PREFIX "obj-%zu-"
#define PROG_LOG "%sprog-%d.log"	/* a prefix, then the program's index */

/* run: its one object. */
#define RUN_OBJECT "object.bpf.o"

/*
 * A warm guest (bpfuml serve) boots on the job {"command": "serve"}.  Its
 * agent then waits for jobs on a tty line whose other end the server holds
 * (UML: con1, the kernel process's descriptor SERVE_CHANNEL_FD; in the
 * guest the tty SERVE_TTY_MAJOR:SERVE_TTY_MINOR).  Each job has its own
 * directory, SERVE_JOBS_DIR/ID in the run directory, laid out as the run
 * directory of a cold guest and seen by the job where a cold guest's run
 * directory is (a bind mount in its own mount namespace), and runs in a
 * process of its own.  Lines:
 *   guest: "ready P M L B KB"   once, when it takes jobs
 *   host:  "job ID"             do the job in SERVE_JOBS_DIR/ID
 *   guest: "done ID STATUS"     its process is done (STATUS 0: it wrote its
 *                               result; else its wait status)
 *   guest: "clean P M L B KB US"  its programs and links are gone (after US
 *                               µs): ready for the next job
 *   guest: "leak M B"           M maps and B BTF objects of a job were still
 *                               there SERVE_CLEAN_WAIT_MS after it
 * where P M L B count the guest's BPF programs, maps, links and BTF objects
 * and KB is its MemAvailable.  A program's maps and BTF are let go after an
 * RCU grace period and a work item, ~15 ms at HZ=100: unreachable by then,
 * they are watched going while the next job runs (agent_serve.c).  The host
 * replaces a guest whose programs or links outlive a job, or that leaks.
 */
#define SERVE_JOBS_DIR "jobs"
#define SERVE_CHANNEL_FD 3
#define SERVE_TTY_MAJOR 4
#define SERVE_TTY_MINOR 1
#define SERVE_LINE_MAX 256
#define SERVE_CLEAN_WAIT_MS 2000

#endif
