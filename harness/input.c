// SPDX-License-Identifier: GPL-2.0
/* input.c — validate objects, compile sources. */
#define _GNU_SOURCE
#include <elf.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/*
 * vmlinux.h is ~140,000 lines: parsing it is most of a small program's
 * compile (~0.26 s of 0.29 measured).  make precompiles it next to itself
 * (INCLUDE_DIR/vmlinux.h.pch, with the same flags), and a compile that
 * cannot tell the difference uses it: the object is byte for byte the same.
 * That is when the source's first directive includes vmlinux.h (nothing it
 * defines can reach vmlinux.h first), no --cflags are given (a -D could
 * change vmlinux.h), and the PCH is newer than the header.  A compile that
 * fails with it runs again without it, so that errors are clang's own.
 */
static bool pch_usable(const char *source, const char *pch, const char *header, const char *cflags)
{
	struct stat pch_st, header_st;
	char buf[4096], *p;
	ssize_t n;
	int fd;

	if (cflags || stat(pch, &pch_st) || stat(header, &header_st) ||
	    pch_st.st_mtim.tv_sec < header_st.st_mtim.tv_sec)
		return false;
	fd = open(source, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* Past blanks and comments to the first directive. */
	for (p = buf; *p;) {
		if (isspace((unsigned char)*p)) {
			p++;
		} else if (p[0] == '/' && p[1] == '/') {
			p = strchrnul(p, '\n');
		} else if (p[0] == '/' && p[1] == '*') {
			char *end = strstr(p + 2, "*/");

			if (!end)
				return false;
			p = end + 2;
		} else {
			break;
		}
	}
	if (*p++ != '#')
		return false;
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "include", 7))
		return false;
	for (p += 7; *p == ' ' || *p == '\t'; p++)
		;
	return !strncmp(p, "\"vmlinux.h\"", 11) || !strncmp(p, "<vmlinux.h>", 11);
}

static int run_clang(char **argv, const char *diag_file)
{
	int status, fd;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* clang's output never lands on stdout (JSON mode owns it). */
		if (diag_file && (fd = open(diag_file, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0)
			dup2(fd, 2);
		dup2(2, 1);
		execvp(CLANG, argv);
		dprintf(2, "bpfuml: cannot run %s: %s\n", CLANG, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return status;
}

enum input_error input_compile(const char *source, const char *out, const char *include_dir,
			       const char *cflags, const char *diag_file, const char *depfile,
			       char *msg, size_t msg_len)
{
	char inc[4200], src_inc[4200], src_copy[4200], src_arg[4200], pch[4200], header[4200];
	char *argv[96], *flags = NULL, *tok, *save;
	int argc = 0, status, pch_at;

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
	snprintf(pch, sizeof(pch), "%s/vmlinux.h.pch", include_dir);
	snprintf(header, sizeof(header), "%s/vmlinux.h", include_dir);

	argv[argc++] = CLANG;
	for (size_t i = 0; i < sizeof(bpf_cflags) / sizeof(bpf_cflags[0]); i++)
		argv[argc++] = (char *)bpf_cflags[i];
	argv[argc++] = inc;
	argv[argc++] = src_inc;
	if (cflags) {
		flags = strdup(cflags);
		for (tok = strtok_r(flags, " \t", &save); tok && argc < 83;
		     tok = strtok_r(NULL, " \t", &save))
			argv[argc++] = tok;
	}
	if (depfile) {
		argv[argc++] = "-MD";
		argv[argc++] = "-MF";
		argv[argc++] = (char *)depfile;
	}
	argv[argc++] = "-c";
	argv[argc++] = "-o";
	argv[argc++] = (char *)out;
	pch_at = argc;
	argv[argc++] = "-include-pch";
	argv[argc++] = pch;
	argv[argc++] = "--";
	argv[argc++] = src_arg;
	argv[argc] = NULL;

	status = -1;
	if (pch_usable(source, pch, header, cflags))
		status = run_clang(argv, diag_file);
	if (status) {
		/* Without the PCH: the two arguments go. */
		memmove(argv + pch_at, argv + pch_at + 2, (argc - pch_at - 1) * sizeof(*argv));
		status = run_clang(argv, diag_file);
	}
	free(flags);
	if (status < 0) {
		snprintf(msg, msg_len, "cannot start %s: %s", CLANG, strerror(-status));
		return INPUT_NO_COMPILER;
	}
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
