/* SPDX-License-Identifier: GPL-2.0 */
/* verify_matrix.h — verify on several kernels at once (--kernels). */
#ifndef BPFUML_VERIFY_MATRIX_H
#define BPFUML_VERIFY_MATRIX_H

struct common_opts;

/* Run `verify` (ARGC, ARGV: the command's own arguments, after option
 * parsing) once per kernel of KERNELS ("7.3,7.2" or "all") and print the
 * combined result in OPTS's format.  Returns the exit code. */
int verify_matrix(const struct common_opts *opts, const char *kernels, int argc, char **argv);

#endif
