/* SPDX-License-Identifier: GPL-2.0 */
/* options.h — options every command takes, parsed in one place. */
#ifndef BPFUML_OPTIONS_H
#define BPFUML_OPTIONS_H

#include <getopt.h>

#include "bpfuml.h"

enum {
	OPT_JSON = 0x100, OPT_TIMEOUT, OPT_LOG_LEVEL, OPT_NO_COLOR, OPT_KEEP, OPT_CFLAGS,
	OPT_TEST_FAULT, OPT_FORMAT, OPT_BACKEND, OPT_SERVER, OPT_JIT, OPT_INTERPRETER,
	OPT_KERNEL,
};

#define COMMON_LONGOPTS							\
	{ "json", no_argument, NULL, OPT_JSON },			\
	{ "format", required_argument, NULL, OPT_FORMAT },		\
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },		\
	{ "backend", required_argument, NULL, OPT_BACKEND },		\
	{ "kernel", required_argument, NULL, OPT_KERNEL },		\
	{ "server", required_argument, NULL, OPT_SERVER },		\
	{ "jit", no_argument, NULL, OPT_JIT },				\
	{ "interpreter", no_argument, NULL, OPT_INTERPRETER },		\
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },	\
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },		\
	{ "keep", no_argument, NULL, OPT_KEEP },			\
	{ "cflags", required_argument, NULL, OPT_CFLAGS },		\
	{ "test-fault", required_argument, NULL, OPT_TEST_FAULT }

#define COMMON_OPTS_DEFAULT { .backend = "uml", .log_level = 1 }
/* Default --timeout per backend: UML boots in ~0.1 s, QEMU's TCG in seconds
 * and runs the job several times slower. */
#define TIMEOUT_UML_S 60
#define TIMEOUT_QEMU_S 300

/* Ranges of the common numeric options. */
#define TIMEOUT_MAX_S 86400
#define LOG_LEVEL_MAX 2

/* Parse ARG, the value of option NAME, as a whole number from MIN to MAX
 * (decimal digits only: no sign, suffix or blank); UNIT (or NULL) names what
 * it counts in the message.  Returns EXIT_OK with *OUT set, or EXIT_USAGE
 * after saying what NAME accepts. */
int option_uint(const struct common_opts *opts, const char *name, const char *arg,
		unsigned int min, unsigned int max, const char *unit, unsigned int *out);
/* ARG must be one of CHOICES (NULL-terminated): EXIT_OK with *OUT its index,
 * or EXIT_USAGE after listing the choices. */
int option_enum(const struct common_opts *opts, const char *name, const char *arg,
		const char *const choices[], int *out);

/* Apply one common option.  Returns -1 when handled (keep parsing), or the
 * exit code to return (bad value, unknown option). */
int common_option(struct common_opts *opts, int c, const char *arg);
/* After parsing: colour only on a terminal, never in JSON or with NO_COLOR. */
void common_finish(struct common_opts *opts);

#endif
