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

#endif
