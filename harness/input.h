/* SPDX-License-Identifier: GPL-2.0 */
/* input.h — check what the user handed us before any guest boots: the file
 * exists and is a BPF ELF object, or is a .bpf.c that clang compiles.
 */
#ifndef BPFUML_INPUT_H
#define BPFUML_INPUT_H

#include <stddef.h>

enum input_error {
	INPUT_OK,
	INPUT_MISSING,		/* no such file, or unreadable */
	INPUT_NOT_ELF,
	INPUT_NOT_BPF,		/* ELF, but not for the BPF machine */
	INPUT_COMPILE_FAILED,	/* clang printed why on stderr */
	INPUT_NO_COMPILER,
};

/* Is PATH a source file that needs compiling? */
int input_is_source(const char *path);
/* Check that PATH is an ELF object for EM_BPF; message in MSG. */
enum input_error input_check_object(const char *path, char *msg, size_t msg_len);
/* Compile SOURCE to OUT with clang against INCLUDE_DIR; extra flags in CFLAGS
 * (split on spaces).  clang's diagnostics go to our stderr, or into
 * DIAG_FILE when it is not NULL (JSON mode keeps stdout clean either way);
 * the files it read, as a make rule, into DEPFILE when it is not NULL. */
enum input_error input_compile(const char *source, const char *out, const char *include_dir,
			       const char *cflags, const char *diag_file, const char *depfile,
			       char *msg, size_t msg_len);

#endif
