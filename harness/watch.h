/* SPDX-License-Identifier: GPL-2.0 */
/* watch.h — `verify --watch`, `run --watch` (watch.c). */
#ifndef BPFUML_WATCH_H
#define BPFUML_WATCH_H

/* Run COMMAND (cmd_verify, cmd_run) with ARGC/ARGV (--watch taken out) once,
 * then again each time one of its files changes, until interrupted. */
int watch_command(int (*command)(int, char **), int argc, char **argv);

/* Set in a pass: where clang writes the files a source includes (-MD -MF),
 * and where the pass notes its verdicts (watch_note_verdict); NULL
 * otherwise. */
extern const char *watch_depfile;
extern const char *watch_verdicts;
/* One verdict of this pass: WHAT (a file and program) is VERDICT. */
void watch_note_verdict(const char *what, const char *verdict);

#endif
