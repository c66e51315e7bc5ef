// SPDX-License-Identifier: GPL-2.0
/* main.c — bpfuml's entry: the command table, help, and common options. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfuml.h"
#include "confine.h"
#include "kernels.h"
#include "options.h"
#include "watch.h"

static const struct command commands[] = {
	{ "verify", cmd_verify, "verify FILE... [--prog NAME]... [--log-level 1|2] [--cflags FLAGS] [--no-fixups] [--attach-target PROG=FUNC]... [--set-global NAME=VALUE]... [--summary FILE] [--junit FILE] [--sarif FILE] [--mem MB] [--watch] [--kernels V,W|all]",
	  "Load every BPF program of FILE (a .bpf.o, or a .bpf.c compiled with clang-19\n"
	  "against the UML kernel's vmlinux.h) in a UML guest (or, with --backend qemu,\n"
	  "the x86_64 reference kernel under QEMU) and report, per program:\n"
	  "accepted / rejected / could not be loaded, the verifier's statistics line, its\n"
	  "final error line, and the structured 7.3 diagnostic report when the kernel\n"
	  "printed one.  Programs are first loaded together, as libbpf does; if that\n"
	  "fails each is loaded on its own, so one rejection hides no other verdict.\n"
	  "--prog NAME limits the job to the named program(s).  Several FILEs are\n"
	  "judged in one boot, each as if alone; --json then gives one document per\n"
	  "file in \"files\", and the exit code is the worst: 2 if a file could not\n"
	  "be opened, else 1 if a program was not accepted.\n"
	  "Loader fixups (as veristat's): the agent stands in for the object's own user\n"
	  "space: maps left at 0 entries (inner maps too) get the smallest size their\n"
	  "type takes, a stack map without a value size 127 frames, ring buffers no\n"
	  "value size, a program in a section libbpf knows only by its prefix\n"
	  "(\"perf_event/...\") that prefix's type, pinning is dropped; each fixup is\n"
	  "listed in the output.\n"
	  "--no-fixups verifies the object exactly as built.  --attach-target\n"
	  "PROG=FUNC sets a tracing program's attach target as its loader would;\n"
	  "--set-global NAME=VALUE (-G, also \"NAME = VALUE\") a global variable before\n"
	  "load, as a skeleton sets its const volatile settings (an integer, true or\n"
	  "false, or an enum's name).  --summary FILE appends a Markdown summary (a\n"
	  "table of verdicts, each failure with the end of its log) for a CI page\n"
	  "such as $GITHUB_STEP_SUMMARY; --junit FILE writes JUnit XML (a testcase\n"
	  "per program; rejected: failure with the report and log; not loaded: error);\n"
	  "--sarif FILE writes the SARIF log that --format sarif prints, whatever\n"
	  "--format prints (so one run gives annotations and a file to upload).\n"
	  "--mem MB gives the guest MB MiB of memory instead of 512: maps are\n"
	  "allocated when the object loads, and a few objects need more.\n"
	  "--watch verifies again on every save of a FILE (and of each header a .bpf.c\n"
	  "includes), through a warm guest (a `bpfuml serve` of its own, or --server's);\n"
	  "after each pass a line on stderr says which verdicts changed since the\n"
	  "last.  It runs until interrupted (exit 130); --json gives a document per\n"
	  "pass.\n"
	  "--kernels 7.3,7.2 (or all: every kernel of kernel-patches/versions.conf)\n"
	  "verifies on each of those kernels, as many guests at once as there are\n"
	  "CPUs, and prints a matrix, program x kernel (accepted / rejected / not\n"
	  "loaded / refused after verification), then each failure's first error;\n"
	  "--json gives {\"kernels\": [{\"kernel\", \"exit_code\", \"result\": that\n"
	  "kernel's verify document}]}, gcc, github and SARIF output name the kernel\n"
	  "in each message.  Exit 1 when any kernel rejects a program." },
	{ "run", cmd_run, "run FILE --prog NAME [--data-in F] [--ctx-in F] [--data-out F] [--repeat N] [--attach] [--watch]",
	  "Load program NAME of FILE and run it with BPF_PROG_TEST_RUN.  Prints the\n"
	  "return value, duration, data_out (saved to --data-out F if given) and the\n"
	  "object's global variables (.bss/.data/.rodata, by name, decoded with BTF)\n"
	  "after the run.  Raw tracepoint and syscall programs run once (the kernel\n"
	  "takes no repeat count for them).  --attach attaches the program first, as\n"
	  "libbpf does from its section (struct_ops: the object's struct_ops maps),\n"
	  "so that a test run reaches tracing programs; an attachment UML cannot make\n"
	  "(multi-kprobes and multi-function trampolines; freplace without\n"
	  "--jit) is said plainly with its reason, and exits 1.  --watch runs it\n"
	  "again on every save of FILE (or a header of a .bpf.c), as verify --watch\n"
	  "does." },
	{ "exec", cmd_exec, "exec [--file FILE]... [--] PROGRAM [ARG...]",
	  "Run a host program inside a guest, as root there, with the guest kernel's\n"
	  "BPF under it: a loader, a test binary, a bpftool of the same tree.  Its\n"
	  "working directory is the guest's run directory, holding a copy of each\n"
	  "--file (under its own name); the guest sees the host's / read-only, so\n"
	  "PROGRAM is any host path.  What it printed (stdout and stderr) is printed\n"
	  "when it ends, and bpfuml exits with its exit status (128+N when killed by\n"
	  "signal N).  Exit 3 also means the guest failed (kernel trouble, time-out:\n"
	  "--timeout SEC bounds the program, default 60): --json tells them apart\n"
	  "(exit_status, signal, timed_out, output, and \"error\" when the guest failed)." },
	{ "parse", cmd_parse, "parse LOGFILE [--prog NAME] [--source FILE]",
	  "Parse a saved verifier log (no kernel needed): the 7.3 structured report\n"
	  "(category, problem, reason, location, source and instruction context,\n"
	  "causal path, suggestion), the legacy error line, the statistics line, and\n"
	  "whether the log was truncated.  Without a report, it falls back to the\n"
	  "legacy line, the failing instruction and the last source line of the log.\n"
	  "--prog names the program in gcc/sarif output; --source is where source file\n"
	  "names of the log are looked for (beside it) when not found from the current\n"
	  "directory.  Exit 0 when the log shows an accepted program, 1 when it shows\n"
	  "a rejection." },
	{ "compare", cmd_compare, "compare OLD.json NEW.json",
	  "Compare two `verify --json` documents, as veristat -C compares two runs:\n"
	  "for each program (matched by its object's file name and its own name), its\n"
	  "verdict and the instructions the verifier processed in OLD and in NEW, and\n"
	  "the difference; a program in one document only counts as changed.  No\n"
	  "guest is booted.  --json: one document (schema bpfuml-compare/1).  Exit 0\n"
	  "when no verdict changed, 1 when one did, 2 when a document cannot be read\n"
	  "or is not a verify document." },
	{ "bench", cmd_bench, "bench [--quick] [--backend uml|qemu|host] [--samples N] [--png FILE]",
	  "Benchmark BPF_MAP_TYPE_RHASH against BPF_MAP_TYPE_HASH, side by side:\n"
	  "lookups (key size 4/8/32/256 x max_entries 1K/1M x fill 50/75/100%),\n"
	  "full update (overwrite of present keys) and memory (steady and peak under\n"
	  "an overwrite workload, value size 32 and 4096).  Figures are events per\n"
	  "second, the median of --samples runs (default 5) with the min-max spread,\n"
	  "and the rhtab/htab ratio.  --quick runs a short profile.  Backends: uml\n"
	  "(kernel C code native, BPF interpreted), qemu (the x86_64 kernel with the\n"
	  "JIT; under TCG emulated, so only its ratios mean something) and host (the\n"
	  "running kernel, as root; RHASH exists only from 7.x on).  --png draws a\n"
	  "chart." },
	{ "probe", cmd_probe, "probe [--backend uml|qemu]",
	  "What the backend's kernel can do: for each program type, a minimal\n"
	  "program's verify / run (BPF_PROG_TEST_RUN) / attach outcome; for each\n"
	  "verifier feature (kfunc calls, callbacks, tail calls, arena, timers, ...)\n"
	  "whether a program using it verifies and computes the right result; and\n"
	  "which map types can be created.  Failures carry the verifier's error line,\n"
	  "and on UML a note when the cause is UML itself.  Compare with\n"
	  "--backend qemu, the x86_64 answer." },
	{ "kselftest", cmd_kselftest, "kselftest [-t FILTER] [-j N] [--runners LIST] [--batch N] [--mem MB] [--cpus N] [--summary FILE] [--junit FILE] [--baseline FILE] [--write-baseline FILE] [--retries N] [--shard I/N [--durations FILE]]",
	  "Run the kernel tree's own BPF selftests in UML guests: test_progs (sharded:\n"
	  "batches of tests, -j guests at a time, default the number of cores),\n"
	  "test_verifier and test_maps (one guest each), built by `make kselftest-build`\n"
	  "into build/selftests.  -t FILTER selects test_progs tests as test_progs -t\n"
	  "does (names containing one of the comma-separated words) and runs\n"
	  "test_progs alone unless --runners names others.  Tests and subtests of\n"
	  "DENYLIST.uml (--denylist FILE) are not run and are reported as denied, with\n"
	  "the missing kernel feature.  --timeout SEC bounds each guest (default 1200;\n"
	  "test_maps' 2400); --mem MB is each guest's memory (default 1536).  CPUs:\n"
	  "a test runs first in a 1-CPU guest (pinned: fast); what fails or skips\n"
	  "there runs again in a 2-CPU guest, as x86_64 CI has several, and that\n"
	  "result counts (test_maps starts with 2).  --cpus N runs every test once\n"
	  "with N CPUs (UML then runs in seccomp mode).  Output: KTAP, then a summary\n"
	  "of tests and subtests passed/failed/skipped/denied/error; --json: one JSON\n"
	  "document (schema bpfuml-kselftest/1).  --summary FILE appends a Markdown\n"
	  "summary (counts, each failure with the end of its log) for a CI page such\n"
	  "as $GITHUB_STEP_SUMMARY; --junit FILE writes JUnit XML (tests and\n"
	  "subtests; skipped and denied as skipped).  --shard I/N runs this CI\n"
	  "job's part of N (the same split in every job, the denied tests reported\n"
	  "by part 1; kselftest-merge joins the parts); --durations FILE (an earlier\n"
	  "--json run, which records each test's time) balances the parts by those\n"
	  "times, longest first.  --write-baseline FILE saves\n"
	  "the run; --baseline FILE judges it against one: only a test or subtest\n"
	  "that passed there and not now fails the run (exit 1), each regressed test\n"
	  "run once more alone first (--retries N) and called flaky if it passes;\n"
	  "new passes are listed.  Exit 0 when nothing failed, 1 when a\n"
	  "test failed, 3 when a guest died or timed out (its tests: error)." },
	{ "kselftest-merge", cmd_kselftest_merge, "kselftest-merge PART.json... [--junit FILE] [--summary FILE] [--baseline FILE] [--write-baseline FILE]",
	  "Join the --json results of `kselftest --shard I/N` jobs (CI jobs that each\n"
	  "ran one part of the same split) into one run's, reported as kselftest\n"
	  "reports them: KTAP and summary, or --json; --junit, --summary,\n"
	  "--baseline and --write-baseline as for kselftest (no retries: nothing\n"
	  "runs here).  A test found in two parts is refused.  Exit codes as\n"
	  "kselftest's." },
	{ "serve", cmd_serve, "serve [--socket PATH] [--guests N] [--mem MB]",
	  "Keep N guests (default 1, at most 16) booted and waiting for jobs, so that\n"
	  "verify, run, probe and exec with --server PATH (or BPFUML_SERVER=PATH) answer\n"
	  "without a boot each.  A client gets what it would get from a guest of its\n"
	  "own: the same output and exit codes.  Each job runs in a process of its own\n"
	  "in the guest; a guest that panics, oopses, runs past a job's --timeout, is\n"
	  "left holding a job's BPF objects, or loses its client mid-job is killed and\n"
	  "replaced, and the jobs waiting for it wait on.  The socket (default\n"
	  "$XDG_RUNTIME_DIR/bpfuml/serve.sock, else /tmp/bpfuml-UID/serve.sock) is\n"
	  "mode 0600 in a directory only you can enter (a --socket elsewhere is\n"
	  "refused), so only you (and root) reach the server; clients connect only to\n"
	  "a socket of their own user.  Prints one line on stdout when every guest is\n"
	  "ready.  UML guests only (--backend qemu jobs boot cold).  SIGINT or SIGTERM\n"
	  "stop it: guests killed, run directories and the socket removed; exit 0.\n"
	  "Exit 3 when a guest cannot be booted three times in a row." },
	{ "mcp", cmd_mcp, "mcp",
	  "A Model Context Protocol server on stdin/stdout, for coding agents: tools\n"
	  "verify (a path, or C source text inline), run, parse_log, probe and\n"
	  "kselftest (progress notifications as its guests finish), each the command\n"
	  "itself with --json against warm guests of its own (a bpfuml serve started at\n"
	  "the first call that needs one; BPFUML_SERVER names another).  Results are\n"
	  "structured content: verify's bpfuml-verify/1 document with each program's\n"
	  "report (category, problem, reason, at, causal path, suggestion) first.\n"
	  "Speaks the 2026-07-28 revision (server/discover, version in _meta) and the\n"
	  "initialize handshake of 2025-11-25 back to 2024-11-05.  Paths are the\n"
	  "server's to read, relative to its working directory.  Ends when stdin\n"
	  "closes (exit 0) or on SIGINT/SIGTERM (130), its guests and files removed." },
	{ "help", cmd_help, "help [COMMAND]", "Show this help, or a command's." },
	{ 0 },
};

static const char common_help[] =
	"Options of every command:\n"
	"  --json          one JSON document on stdout and nothing else there\n"
	"  --format F      human (default), json, gcc (FILE:LINE:COL: error: ... lines for\n"
	"                  editors), sarif (SARIF 2.1.0 for code scanning), or github\n"
	"                  (::error lines: annotations on the diff in GitHub Actions)\n"
	"  --backend B     uml (default): the UML 7.3 kernel, booted in ~0.1 s; or qemu: the\n"
	"                  x86_64 reference kernel of the same source with the BPF JIT, under\n"
	"                  QEMU (KVM if it works here, else TCG; built on first use by\n"
	"                  `make qemu-kernel`, ~20 min)\n"
	"  --kernel V      boot kernel V of kernel-patches/versions.conf (7.3, the default, or\n"
	"                  7.2; also: BPFUML_KERNEL=V); ./run.sh builds it on first use\n"
	"                  (`make kernel KERNEL=V`); 7.2's UML has the interpreter only\n"
	"  --timeout SEC   kill the guest after SEC seconds (default 60; 300 with qemu; probe 5x)\n"
	"  --log-level N   verifier log level, 1 or 2 (default 1)\n"
	"  --no-color      no colour even on a terminal (also: NO_COLOR=1)\n"
	"  --keep          keep the run directory (console log, job, result)\n"
	"  --jit           run BPF with the x86_64 JIT (UML: kernel-patches 0040-0045;\n"
	"                  qemu's default); --interpreter: with the interpreter (UML's\n"
	"                  default; on qemu, x86_64 with bpf_jit_enable=0).  Verdicts are\n"
	"                  x86_64's JIT's either way; \"bpf_mode\" in JSON says which ran\n"
	"  --server SOCK   verify, run, probe, exec: have the job done by a warm guest of\n"
	"                  `bpfuml serve` listening at SOCK (also: BPFUML_SERVER=SOCK); when\n"
	"                  none answers there, a note says so and a guest is booted as usual\n"
	"  --cflags FLAGS  extra clang flags when FILE is a .bpf.c\n"
	"  --              the end of the options: a FILE named like one (-x.bpf.c) goes after it\n"
	"\n"
	"Exit codes:\n"
	"  0    all programs accepted / the run succeeded (parse: the log shows success)\n"
	"  1    a program was rejected or could not be loaded (parse: the log shows a rejection)\n"
	"  2    usage or input error (missing file, not a BPF ELF object, no such program)\n"
	"  3    infrastructure failure: kernel panic/oops/BUG/WARN, time-out, guest did not answer\n"
	"       or its result is malformed, no room for the guest's memory file under\n"
	"       BPFUML_RUNDIR (default /dev/shm)\n"
	"  4    a .bpf.c did not compile (clang's messages on stderr)\n"
	"  130  interrupted (SIGINT/SIGTERM/SIGHUP/SIGQUIT); the guest was killed\n";

int common_option(struct common_opts *opts, int c, const char *arg)
{
	static const char *const formats[] = { "human", "json", "gcc", "sarif", "github", NULL };
	static const char *const backends[] = { "uml", "qemu", NULL };
	unsigned int v;
	int code, i;

	switch (c) {
	case OPT_JSON:
		opts->json = true;
		opts->format = FORMAT_JSON;
		return -1;
	case OPT_FORMAT:
		if ((code = option_enum(opts, "--format", arg, formats, &i)))
			return code;
		/* formats[] is in the order of enum output_format. */
		opts->format = i;
		opts->json = opts->format == FORMAT_JSON || opts->format == FORMAT_SARIF;
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
	case OPT_BACKEND:
		if ((code = option_enum(opts, "--backend", arg, backends, &i)))
			return code;
		opts->backend = backends[i];
		return -1;
	case OPT_SERVER:
		opts->server = arg;
		return -1;
	case OPT_KERNEL:
		/* A version as versions.conf spells it; kernels.c looks it up. */
		if (!*arg || strlen(arg) >= KERNEL_NAME_MAX || strspn(arg, "0123456789.") != strlen(arg))
			return fail(opts, EXIT_USAGE, "usage", "--kernel %s: want a kernel version such "
				    "as 7.3 or 6.1", arg);
		opts->kernel = arg;
		return -1;
	case OPT_JIT:
	case OPT_INTERPRETER:
		opts->bpf_mode = c == OPT_JIT ? "jit" : "interpreter";
		return -1;
	case OPT_TIMEOUT:
		if ((code = option_uint(opts, "--timeout", arg, 1, TIMEOUT_MAX_S, "seconds", &v)))
			return code;
		opts->timeout_s = v;
		return -1;
	case OPT_LOG_LEVEL:
		if ((code = option_uint(opts, "--log-level", arg, 1, LOG_LEVEL_MAX, NULL, &v)))
			return code;
		opts->log_level = v;
		return -1;
	default:
		return fail(opts, EXIT_USAGE, "usage", "unknown option; see bpfuml help");
	}
}

void common_finish(struct common_opts *opts)
{
	const char *term = getenv("TERM");

	if (!opts->timeout_s)
		opts->timeout_s = strcmp(opts->backend, "qemu") ? TIMEOUT_UML_S : TIMEOUT_QEMU_S;
	if (!opts->server && getenv("BPFUML_SERVER") && *getenv("BPFUML_SERVER"))
		opts->server = getenv("BPFUML_SERVER");
	if (!opts->kernel && getenv("BPFUML_KERNEL") && *getenv("BPFUML_KERNEL"))
		opts->kernel = getenv("BPFUML_KERNEL");
	opts->color = !opts->no_color && !opts->json && isatty(STDOUT_FILENO) &&
		      !getenv("NO_COLOR") && term && strcmp(term, "dumb");
}

/* --watch (before any "--"), taken out of ARGV: verify and run then run
 * under watch.c.  ARGV ends with the NULL that argv[argc] is. */
static bool take_watch_option(int argc, char **argv)
{
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--watch")) {
			memmove(argv + i, argv + i + 1, (argc - i) * sizeof(*argv));
			return true;
		}
	return false;
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
	char line[1200];

	if (argc > 1 && (cmd = find_command(argv[1]))) {
		printf("usage: bpfuml %s\n\n%s\n\n%s", cmd->usage, cmd->help, common_help);
		return EXIT_OK;
	}
	printf("bpfuml — verify and run BPF programs in a user-mode Linux 7.3 guest\n\n"
	       "usage: bpfuml COMMAND [OPTIONS] ...\n\nCommands:\n");
	for (cmd = commands; cmd->name; cmd++)
		printf("  %s\n", cmd->usage);
	printf("\n%s", common_help);
	confine_describe(line, sizeof(line));
	printf("\n%s", line);
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
	/* `bpfuml CMD --help`: CMD's help, whatever else is on the line (for
	 * exec, before its PROGRAM: what follows is the program's). */
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (cmd->func == cmd_exec && argv[i][0] != '-')
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return cmd_help(2, (char *[]){ "help", argv[1], NULL });
	}
	if ((cmd->func == cmd_verify || cmd->func == cmd_run) && take_watch_option(argc, argv))
		return watch_command(cmd->func, argc - 2, argv + 1);
	return output_finish(cmd->func(argc - 1, argv + 1));
}
