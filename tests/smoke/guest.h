/* SPDX-License-Identifier: GPL-2.0 */
/* guest.h — what every guest program of tests/ shares.  Each runs in a guest
 * through `bpfuml exec --file OBJECT -- GUEST OBJECT [ARGS...]`: the agent
 * has mounted what BPF needs, the working directory is the run directory
 * holding OBJECT, and what the program prints is its report (bpfuml scans
 * the guest's console for kernel trouble itself).
 */
#ifndef BPFUML_TESTS_GUEST_H
#define BPFUML_TESTS_GUEST_H

#include <stdarg.h>

/* Raises RLIMIT_NOFILE, makes stdout line-buffered (what was reported
 * survives a crash later on) and lets libbpf's warnings through.  Returns
 * OBJECT (argv[1]), or NULL after a usage message. */
const char *guest_boot(int argc, char **argv, const char *name);

/* A line (or more) of the report, on stdout. */
void guest_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* libbpf's warnings go to stderr unless a guest silences them (when it
 * provokes errors on purpose). */
void guest_quiet_libbpf(void);

/* Ends the program: exit 0 once it has reported (PASS and FAIL lines say
 * the rest), 2 when it could not start. */
void guest_power_off(void) __attribute__((noreturn));

#endif
