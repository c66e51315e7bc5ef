/* SPDX-License-Identifier: GPL-2.0 */
/* guest.h — what every guest program of tests/ needs to run as PID 1 in UML:
 * the mounts, the result file in the host's run directory, the power-off.
 * tests/smoke/run.sh boots a guest as: init=GUEST -- OBJECT RESULT_DIR
 */
#ifndef BPFUML_TESTS_GUEST_H
#define BPFUML_TESTS_GUEST_H

#include <stdarg.h>

/* Mounts proc, sysfs, bpffs, a tmpfs on /tmp and the host's RESULT_DIR
 * (argv[2]) on /tmp/out with hostfs, raises RLIMIT_NOFILE, opens
 * /tmp/out/result and quiets libbpf's debug output.  Returns the guest's
 * path of OBJECT (argv[1], a file inside RESULT_DIR: the guest's /tmp is
 * its own tmpfs), or NULL when the guest cannot report anything; then the
 * caller just calls guest_power_off(). */
const char *guest_boot(int argc, char **argv, const char *name);

/* A line (or more) into the result file; stderr before it is open. */
void guest_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* libbpf's warnings go to the console unless a guest silences them
 * (when it provokes errors on purpose). */
void guest_quiet_libbpf(void);

/* Flushes the result file to the host and powers the guest off. */
void guest_power_off(void) __attribute__((noreturn));

#endif
