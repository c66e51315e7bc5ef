// SPDX-License-Identifier: GPL-2.0
/* input.c — validate objects, compile sources. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "input.h"

static const char *const bpf_cflags[] = {
#define BPF_CFLAG(flag) flag,
#include "bpf_cflags.def"
#undef BPF_CFLAG
};

#ifndef EM_BPF
#define EM_BPF 247
#endif

#define CLANG "clang-19"

int input_is_source(const char *path)
{
	size_t len = strlen(path);

	return len > 2 && !strcmp(path + len - 2, ".c");
}

enum input_error input_check_object(const char *path, char *msg, size_t msg_len)
{
	Elf64_Ehdr ehdr;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(msg, msg_len, "%s: %s", path, strerror(errno));
		return INPUT_MISSING;
	}
	n = read(fd, &ehdr, sizeof(ehdr));
	close(fd);
	if (n < (ssize_t)sizeof(ehdr) || memcmp(ehdr.e_ident, ELFMAG, SELFMAG)) {
		snprintf(msg, msg_len, "%s is not an ELF object; give a BPF object (.bpf.o) "
			 "or a BPF C source (.bpf.c)", path);
		return INPUT_NOT_ELF;
	}
	if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_BPF) {
		snprintf(msg, msg_len, "%s is an ELF object for machine %u, not BPF (%u); "
			 "compile it with clang -target bpf", path, ehdr.e_machine, EM_BPF);
		return INPUT_NOT_BPF;
	}
	return INPUT_OK;
}

enum input_error input_compile(const char *source, const char *out, const char *include_dir,
			       const char *cflags, const char *diag_file, char *msg, size_t msg_len)
{
	char inc[4200], src_inc[4200], src_copy[4200], src_arg[4200];
	char *argv[96], *flags = NULL, *tok, *save;
	int argc = 0, status, fd;
	pid_t pid;

	if (access(source, R_OK)) {
		snprintf(msg, msg_len, "%s: %s", source, strerror(errno));
		return INPUT_MISSING;
	}
	/* A file that begins with '-' must not read as an option: clang's "--"
	 * ends its driver's options, but the driver hands the name on to cc1
	 * without it, so the name also goes as ./NAME. */
	snprintf(src_arg, sizeof(src_arg), "%s%s", source[0] == '-' ? "./" : "", source);
	snprintf(inc, sizeof(inc), "-I%s", include_dir);
	snprintf(src_copy, sizeof(src_copy), "%s", src_arg);
	snprintf(src_inc, sizeof(src_inc), "-I%s", dirname(src_copy));

	argv[argc++] = CLANG;
	for (size_t i = 0; i < sizeof(bpf_cflags) / sizeof(bpf_cflags[0]); i++)
		argv[argc++] = (char *)bpf_cflags[i];
	argv[argc++] = inc;
	argv[argc++] = src_inc;
	if (cflags) {
		flags = strdup(cflags);
		for (tok = strtok_r(flags, " \t", &save); tok && argc < 88;
		     tok = strtok_r(NULL, " \t", &save))
			argv[argc++] = tok;
	}
	argv[argc++] = "-c";
	argv[argc++] = "-o";
	argv[argc++] = (char *)out;
	argv[argc++] = "--";
	argv[argc++] = src_arg;
	argv[argc] = NULL;

	pid = fork();
	if (pid < 0) {
		free(flags);
		snprintf(msg, msg_len, "cannot start %s: %s", CLANG, strerror(errno));
		return INPUT_NO_COMPILER;
	}
	if (pid == 0) {
		/* clang's output never lands on stdout (JSON mode owns it). */
		if (diag_file && (fd = open(diag_file, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0)
			dup2(fd, 2);
		dup2(2, 1);
		execvp(CLANG, argv);
		dprintf(2, "bpfuml: cannot run %s: %s\n", CLANG, strerror(errno));
		_exit(127);
	}
	free(flags);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			break;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		snprintf(msg, msg_len, "%s is not installed; run make (it installs clang-19)", CLANG);
		return INPUT_NO_COMPILER;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(msg, msg_len, "%s did not compile (clang's messages above)", source);
		return INPUT_COMPILE_FAILED;
	}
	return INPUT_OK;
}
