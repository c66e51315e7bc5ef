// SPDX-License-Identifier: GPL-2.0
/* main.c — bpfuml's entry: the command table, help, and common options. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfuml.h"
#include "options.h"

static const struct command commands[] = {
	{ "verify", cmd_verify, "verify FILE [--prog NAME]... [--log-level 1|2] [--cflags FLAGS]",
	  "Load every BPF program of FILE (a .bpf.o, or a .bpf.c compiled with clang-19\n"
	  "against the UML kernel's vmlinux.h) in a UML guest and report, per program:\n"
	  "accepted / rejected / could not be loaded, the verifier's statistics line, its\n"
	  "final error line, and the structured 7.3 diagnostic report when the kernel\n"
	  "printed one.  Programs are first loaded together, as libbpf does; if that\n"
	  "fails each is loaded on its own, so one rejection hides no other verdict.\n"
	  "--prog NAME limits the job to the named program(s)." },
	{ "run", cmd_run, "run FILE --prog NAME [--data-in F] [--ctx-in F] [--data-out F] [--repeat N]",
	  "Load program NAME of FILE and run it with BPF_PROG_TEST_RUN.  Prints the\n"
	  "return value, duration, data_out (saved to --data-out F if given) and the\n"
	  "object's global variables (.bss/.data/.rodata, by name, decoded with BTF)\n"
	  "after the run." },
	{ "help", cmd_help, "help [COMMAND]", "Show this help, or a command's." },
	{ 0 },
};

static const char common_help[] =
	"Options of every command:\n"
	"  --json          one JSON document on stdout and nothing else there\n"
	"  --timeout SEC   kill the guest after SEC seconds (default 60)\n"
	"  --log-level N   verifier log level, 1 or 2 (default 1)\n"
	"  --no-color      no colour even on a terminal (also: NO_COLOR=1)\n"
	"  --keep          keep the run directory (console log, job, result)\n"
	"  --cflags FLAGS  extra clang flags when FILE is a .bpf.c\n"
	"\n"
	"Exit codes:\n"
	"  0    all programs accepted / the run succeeded\n"
	"  1    a program was rejected or could not be loaded\n"
	"  2    usage or input error (missing file, not a BPF ELF object, no such program)\n"
	"  3    infrastructure failure: kernel panic/oops/BUG/WARN, time-out, guest did not answer\n"
	"  4    a .bpf.c did not compile (clang's messages on stderr)\n"
	"  130  interrupted (SIGINT/SIGTERM/SIGHUP); the guest was killed\n";

int common_option(struct common_opts *opts, int c, const char *arg)
{
	char *end;
	long v;

	switch (c) {
	case OPT_JSON:
		opts->json = true;
		return -1;
	case OPT_NO_COLOR:
		opts->no_color = true;
		return -1;
	case OPT_KEEP:
		opts->keep = true;
		return -1;
	case OPT_CFLAGS:
		opts->cflags = arg;
		return -1;
	case OPT_TEST_FAULT:
		opts->test_fault = arg;
		return -1;
	case OPT_TIMEOUT:
		v = strtol(arg, &end, 10);
		if (*end || v <= 0 || v > 86400)
			return fail(opts, EXIT_USAGE, "usage", "--timeout wants seconds (1..86400), not '%s'", arg);
		opts->timeout_s = v;
		return -1;
	case OPT_LOG_LEVEL:
		v = strtol(arg, &end, 10);
		if (*end || v < 1 || v > 2)
			return fail(opts, EXIT_USAGE, "usage", "--log-level wants 1 or 2, not '%s'", arg);
		opts->log_level = v;
		return -1;
	default:
		return fail(opts, EXIT_USAGE, "usage", "unknown option; see bpfuml help");
	}
}

void common_finish(struct common_opts *opts)
{
	const char *term = getenv("TERM");

	opts->color = !opts->no_color && !opts->json && isatty(STDOUT_FILENO) &&
		      !getenv("NO_COLOR") && term && strcmp(term, "dumb");
}

static const struct command *find_command(const char *name)
{
	const struct command *cmd;

	for (cmd = commands; cmd->name; cmd++)
		if (!strcmp(cmd->name, name))
			return cmd;
	return NULL;
}

int cmd_help(int argc, char **argv)
{
	const struct command *cmd;

	if (argc > 1 && (cmd = find_command(argv[1]))) {
		printf("usage: bpfuml %s\n\n%s\n\n%s", cmd->usage, cmd->help, common_help);
		return EXIT_OK;
	}
	printf("bpfuml — verify and run BPF programs in a user-mode Linux 7.3 guest\n\n"
	       "usage: bpfuml COMMAND [OPTIONS] ...\n\nCommands:\n");
	for (cmd = commands; cmd->name; cmd++)
		printf("  %s\n", cmd->usage);
	printf("\n%s", common_help);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		cmd_help(1, argv);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv);
	cmd = find_command(argv[1]);
	if (!cmd) {
		fprintf(stderr, "bpfuml: unknown command '%s'; see bpfuml help\n", argv[1]);
		return EXIT_USAGE;
	}
	return cmd->func(argc - 1, argv + 1);
}
