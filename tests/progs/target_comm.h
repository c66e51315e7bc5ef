/* SPDX-License-Identifier: GPL-2.0 */
/* target_comm.h — whether the current task is the test's workload: the
 * process whose comm is target_comm (set by the program, or by its loader
 * before load).  Tracing programs of tests/progs count only that one. */
#ifndef TARGET_COMM_H
#define TARGET_COMM_H

char target_comm[16] = "python3";

static bool is_target(void)
{
	char comm[16];
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < sizeof(comm); i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

#endif
