// SPDX-License-Identifier: GPL-2.0
/* cmd_kselftest.c — `bpfuml kselftest`: the kernel tree's own BPF selftests
 * (build/selftests: test_progs, test_verifier, test_maps, bpf_testmod.ko)
 * run inside UML guests, sharded over parallel guests.
 *
 * One guest lists test_progs' tests; the tests not in DENYLIST.uml are cut
 * into batches, and up to -j guests run one batch each at a time (a batch
 * whose guest dies or times out costs only its own tests, reported as
 * errors).  One loop, on the session engine (session.h), starts the guests,
 * waits for any of them and collects each as it ends.  Each guest runs
 * `test_progs -a @batch -d @DENYLIST.uml -J ...` with the guest agent's exec
 * job; per-test results come from test_progs' own "#N name:STATUS" lines and
 * its -J summary (failure logs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpfuml.h"
#include "kernels.h"
#include "kselftest.h"
#include "junit.h"
#include "options.h"
#include "summary.h"

enum { OPT_FILTER = 't', OPT_JOBS = 'j', OPT_MEM = 0x200, OPT_CPUS, OPT_BATCH, OPT_RUNNERS, OPT_DENYLIST,
       OPT_SUMMARY, OPT_JUNIT, OPT_BASELINE, OPT_WRITE_BASELINE, OPT_RETRIES, OPT_SHARD, OPT_DURATIONS };

#define KS_TIMEOUT_S 1200	/* per guest: a batch of tests, or one runner */
/* test_maps runs whole, its ~114 M bpf() calls at several us each in UML:
 * 815 s measured alone with 2 CPUs, more beside other guests. */
#define KS_MAPS_TIMEOUT_S 2400
#define KS_MEM_MB 1536		/* test_progs' larger maps and bpf_testmod */
/* As x86_64 CI runs them: several CPUs (cpumask's tests set CPU 1, others
 * pin to a second CPU).  UML needs seccomp userspace for this. */
#define KS_CPUS 2
/* Without --cpus, a test runs first in a guest of this many CPUs, pinned to
 * one host CPU (vm_uml.c), where the kernel and the process it runs hand
 * over without crossing CPUs: a full run takes half the time.  What fails
 * or skips there runs again with KS_CPUS, whose result counts. */
#define KS_CPUS_FIRST 1
/* The ranges of -j, --mem, --cpus (uml-config's NR_CPUS) and --batch. */
#define KS_JOBS_MAX 256
#define KS_MEM_MIN_MB 128
#define KS_MEM_MAX_MB 65536
#define KS_CPUS_MAX 64
#define KS_BATCH_MAX 100000
#define KS_LIST_TIMEOUT_S 60
/* After a line of ks_fatal_output, test_progs has this long to exit on its
 * own before the agent kills it. */
#define KS_FATAL_GRACE_S 10
#define MAX_SHARDS 1024
/* --retries: runs of a regressed test alone before it is called one. */
#define KS_RETRIES_MAX 5
/* --shard I/N: CI jobs sharing one run. */
#define KS_PARTS_MAX 256

struct ks_opts {
	struct common_opts common;
	const char *filter;	/* test_progs -t */
	unsigned int jobs;	/* guests at a time (-j) */
	unsigned int batch;	/* tests per guest; 0: automatic */
	unsigned int mem_mb;
	unsigned int cpus;	/* per guest; 0: KS_CPUS_FIRST, then KS_CPUS again */
	bool timeout_given;	/* --timeout: for every guest, test_maps' too */
	const char *runners;	/* comma list */
	const char *denylist;
	char *deny_text;	/* its entries for this mode: test_progs' -d file */
	unsigned int part, parts;	/* --shard I/N: this CI job's part; 0/0 for all */
	const char *durations;		/* --durations: a --json run whose times balance the parts */
	/* What is written besides the report, and the gate (kselftest and
	 * kselftest-merge alike). */
	const char *summary, *junit, *baseline, *write_baseline;
	unsigned int retries;
};

/* One guest's work: a batch of test_progs tests, or a whole runner. */
struct shard {
	const char *runner;
	char **tests;		/* test_progs only */
	size_t n_tests;
	unsigned int cpus;	/* its guest's */
	struct session session;
	bool started;
};

/* The value of the line "NAME: VALUE" of FILE (NAME NULL: its first line),
 * or "" when there is none. */
static void file_field(const char *file, const char *name, char *value, size_t size)
{
	char *text, *line, *at;
	size_t len, n = name ? strlen(name) : 0;

	value[0] = '\0';
	if (read_whole_file(file, 1 << 16, &text, &len))
		return;
	at = name ? NULL : text;
	for (line = text; name && line && !at; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (!strncmp(line, name, n) && line[n] == ':')
			at = line + n + 1 + strspn(line + n + 1, " ");
	if (at)
		snprintf(value, size, "%.*s", (int)strcspn(at, "\n"), at);
	free(text);
}

/*
 * bpf_testmod.ko and the other modules load only into the kernel they were
 * built against: once build/kernel has moved on without `make
 * kselftest-build`, every test that needs them would fail (ENOEXEC).  Say
 * so instead.  Build directories without the two keys are not checked.
 */
static int selftests_match_kernel(const struct ks_opts *o, const struct bpfuml_paths *paths)
{
	char file[PATH_MAX], built_for[64], kernel[64];

	if (snprintf(file, sizeof(file), "%s/selftests/manifest", paths->build_dir) >= (int)sizeof(file))
		return EXIT_OK;
	file_field(file, "kernel-key", built_for, sizeof(built_for));
	if (snprintf(file, sizeof(file), "%s/.kernel-key", paths->build_dir) >= (int)sizeof(file))
		return EXIT_OK;
	file_field(file, NULL, kernel, sizeof(kernel));
	if (!built_for[0] || !kernel[0] || !strcmp(built_for, kernel))
		return EXIT_OK;
	return fail(&o->common, EXIT_INFRA, "infrastructure",
		    "the BPF selftests in %s/selftests were built for kernel %s, the kernel is %s; "
		    "run `make kselftest-build` or ./run.sh kselftest",
		    paths->build_dir, built_for, kernel);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool runner_wanted(const struct ks_opts *o, const char *name)
{
	const char *p = o->runners;
	size_t len = strlen(name);

	while (p && *p) {
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return false;
}

static int shard_timeout(const struct ks_opts *o, const struct shard *sh)
{
	if (!o->timeout_given && !strcmp(sh->runner, "test_maps"))
		return KS_MAPS_TIMEOUT_S;
	return o->common.timeout_s;
}

/* ---- listing ------------------------------------------------------------- */

static int list_tests(const struct bpfuml_paths *paths, const struct ks_opts *o,
		      const char *dir, char ***names, size_t *n)
{
	char test_progs[2 * PATH_MAX], *out = NULL, *line, *save = NULL;
	struct session s;
	json_object *job;
	int err;

	snprintf(test_progs, sizeof(test_progs), "%s/test_progs", dir);
	err = session_create(&s);
	if (err)
		return fail(&o->common, EXIT_INFRA, "infrastructure", "cannot create a run directory: %s",
			    strerror(-err));
	s.mem_mb = o->mem_mb;
	s.cpus = o->cpus ?: KS_CPUS_FIRST;
	s.keep = o->common.keep;
	job = exec_job(dir, "list.out", KS_LIST_TIMEOUT_S, test_progs,
		       o->filter ? (const char *const[]){ "-l", "-t", o->filter, NULL }
				 : (const char *const[]){ "-l", NULL });
	err = boot_guest(&s, paths, &o->common, job);
	json_object_put(job);
	if (err == EXIT_OK && session_read_file(&s, "list.out", &out, NULL))
		err = fail(&o->common, EXIT_INFRA, "infrastructure", "test_progs -l wrote no output");
	if (err == EXIT_OK && json_int(s.result, "exit_status", -1) != 0)
		err = fail(&o->common, EXIT_INFRA, "infrastructure", "test_progs -l failed in the guest:\n%s", out);
	if (err == EXIT_OK) {
		*names = NULL;
		*n = 0;
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			if (!*line || strchr(line, ' '))
				continue;
			*names = realloc(*names, (*n + 1) * sizeof(**names));
			(*names)[(*n)++] = strdup(line);
		}
	}
	free(out);
	if (s.keep)
		fprintf(stderr, "bpfuml: kept %s (test_progs -l)\n", s.run_dir);
	session_destroy(&s);
	return err;
}

/* Tests whose objects did not compile against UML's vmlinux.h: the build
 * lists them (not-built.txt); test_progs reports them as "SKIP (not built)"
 * when asked to run them, and never lists them. */
static void add_not_built(const struct ks_opts *o, const char *dir, char ***names, size_t *n)
{
	char path[2 * PATH_MAX], *line = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/not-built.txt", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (!*line)
			continue;
		/* -t matches names that contain one of its comma-separated words. */
		if (o->filter) {
			char *words = strdup(o->filter), *w, *save = NULL;
			bool match = false;

			for (w = strtok_r(words, ",", &save); w && !match; w = strtok_r(NULL, ",", &save))
				match = !!strstr(line, w);
			free(words);
			if (!match)
				continue;
		}
		*names = realloc(*names, (*n + 1) * sizeof(**names));
		(*names)[(*n)++] = strdup(line);
	}
	free(line);
	fclose(f);
}

/* ---- running ------------------------------------------------------------- */

/* The host's deadline for a shard: the guest's own, and time to report it. */
static int host_timeout(const struct ks_opts *o, const struct shard *sh)
{
	return shard_timeout(o, sh) + EXEC_REPORT_S;
}

/* Create SH's run directory, write its job and boot its guest.  An exit
 * code: what stops the whole run (no run directory, a guest that can never
 * boot here); a guest that fails to start is SH's own outcome. */
static int shard_start(struct shard *sh, const struct bpfuml_paths *paths, const struct ks_opts *o,
		       const char *dir)
{
	char runner[2 * PATH_MAX], json_path[64], allow[64], deny[64];
	struct session *s = &sh->session;
	json_object *job;
	int code, err, timeout_s = shard_timeout(o, sh);

	err = session_create(s);
	if (err)
		return fail(&o->common, EXIT_INFRA, "infrastructure", "cannot create a run directory: %s",
			    strerror(-err));
	sh->started = true;
	s->mem_mb = o->mem_mb;
	s->cpus = sh->cpus;
	s->keep = o->common.keep;
	s->backend = o->common.backend;
	s->bpf_mode = o->common.bpf_mode;
	code = guest_can_boot(s, paths, &o->common);
	if (code != EXIT_OK)
		return code;
	snprintf(runner, sizeof(runner), "%s/%s", dir, sh->runner);
	if (!strcmp(sh->runner, "test_progs")) {
		size_t i, len = 0;
		char *list;

		for (i = 0; i < sh->n_tests; i++)
			len += strlen(sh->tests[i]) + 1;
		list = calloc(1, len + 1);
		for (i = 0; i < sh->n_tests; i++) {
			strcat(list, sh->tests[i]);
			strcat(list, "\n");
		}
		session_write_file(s, "allow.txt", list);
		free(list);
		session_write_file(s, "deny.txt", o->deny_text);
		snprintf(json_path, sizeof(json_path), "%s/summary.json", RUN_DIR_IN_GUEST);
		snprintf(allow, sizeof(allow), "@%s/allow.txt", RUN_DIR_IN_GUEST);
		snprintf(deny, sizeof(deny), "@%s/deny.txt", RUN_DIR_IN_GUEST);
		job = exec_job(dir, "output.txt", timeout_s, runner,
			       (const char *const[]){ "-a", allow, "-d", deny, "-J", json_path, NULL });
		json_object_object_add(job, "time_lines", json_object_new_string(KS_TIMED_LINES));
		json_object *fatal = json_object_new_array();

		for (size_t f = 0; ks_fatal_output[f]; f++)
			json_object_array_add(fatal, json_object_new_string(ks_fatal_output[f]));
		json_object_object_add(job, "fatal_output", fatal);
		json_object_object_add(job, "fatal_grace_s", json_object_new_int(KS_FATAL_GRACE_S));
	} else {
		job = exec_job(dir, "output.txt", timeout_s, runner, (const char *const[]){ NULL });
	}
	/* UML's interpreter runs programs verified for the JIT: the selftests
	 * that choose their expectations by the JIT's sysctl read it as 1. */
	if (!strcmp(o->common.backend, "uml") && !strcmp(bpf_mode_of(&o->common), "interpreter"))
		json_object_object_add(job, "jit_enable_shown", json_object_new_string("1"));
	if (o->common.test_fault)
		json_object_object_add(job, "test_fault", json_object_new_string(o->common.test_fault));
	/* A guest that fails to start is collected as any other. */
	session_start(s, paths, job, host_timeout(o, sh));
	json_object_put(job);
	return EXIT_OK;
}

/* Why test_progs ended short of its batch, from the agent's RESULT, or NULL
 * when it ended normally. */
static char *runner_trouble(json_object *result, int sh_timeout)
{
	json_object *lines = NULL, *procs = NULL;
	char *why = NULL, *text = NULL, *sig_note = NULL;
	size_t len = 0, i;
	FILE *f;
	int sig = (int)json_int(result, "signal", 0);

	json_object_object_get_ex(result, "fatal_output", &lines);
	json_object_object_get_ex(result, "processes", &procs);
	/* "Caught signal #11!": the signal test_progs caught. */
	for (i = 0; lines && i < json_object_array_length(lines); i++) {
		const char *line = json_object_get_string(json_object_array_get_idx(lines, i));
		const char *p = strstr(line, "Caught signal #");

		if (p && atoi(p + 15) > 0) {
			sig = atoi(p + 15);
			break;
		}
	}
	if (sig > 0 && sig < 65)
		asprintf(&sig_note, "signal %d (SIG%s)", sig, sigabbrev_np(sig) ?: "?");
	else
		asprintf(&sig_note, "signal %d", sig);
	if (json_int(result, "timed_out", 0))
		asprintf(&why, "test_progs killed after %d s (--timeout)", sh_timeout);
	else if (json_int(result, "fatal_killed", 0))
		asprintf(&why, "test_progs caught %s while this test ran and did not exit; "
			 "killed %d s later", sig_note, KS_FATAL_GRACE_S);
	else if (json_int(result, "exit_status", -1) > 1)
		asprintf(&why, "test_progs ended with exit status %lld while this test ran",
			 json_int(result, "exit_status", -1));
	else if (json_int(result, "signal", 0))
		asprintf(&why, "test_progs killed by %s while this test ran", sig_note);
	free(sig_note);
	if (!why)
		return NULL;
	/* What it said and what was left of it: where a stuck test waited. */
	f = open_memstream(&text, &len);
	fputs(why, f);
	for (i = 0; lines && i < json_object_array_length(lines); i++)
		fprintf(f, "\n  %s", json_object_get_string(json_object_array_get_idx(lines, i)));
	if (procs && json_object_array_length(procs))
		fputs("\nprocesses left (pid ppid state name wchan):", f);
	for (i = 0; procs && i < json_object_array_length(procs); i++)
		fprintf(f, "\n  %s", json_object_get_string(json_object_array_get_idx(procs, i)));
	fclose(f);
	free(why);
	return text;
}

/* RETRY, when not NULL, is a free shard that gets the tests this one never
 * reached. */
static void collect_shard(struct ks_results *r, struct shard *sh, struct shard *retry,
			  int sh_timeout, int host_timeout_s)
{
	struct session *s = &sh->session;
	char *out = NULL, *json = NULL, *trouble = NULL;
	const char *category;
	size_t i;

	session_read_file(s, "output.txt", &out, NULL);
	if (s->status != SESSION_OK)
		trouble = session_failure_text(s, host_timeout_s, &category);
	if (!strcmp(sh->runner, "test_progs")) {
		if (!trouble)
			trouble = runner_trouble(s->result, sh_timeout);
		if (out)
			ks_parse_test_progs(r, out);
		if (s->result) {
			json_object *times = NULL;

			json_object_object_get_ex(s->result, "line_times", &times);
			ks_attach_line_times(r, times);
		}
		if (!session_read_file(s, "summary.json", &json, NULL)) {
			json_object *summary = json_tokener_parse(json);

			ks_attach_test_progs_json(r, summary);
			json_object_put(summary);
		}
		/* The first test without a result line is the one that was
		 * running when its guest (or test_progs) died; the ones after it
		 * never started and go to a new guest.  When test_progs instead
		 * ended normally short of the batch (a test that exits in a
		 * forked child, say), none is blamed: they all go to a new
		 * guest, as long as this one made progress. */
		size_t found = 0;

		for (i = 0; i < sh->n_tests; i++)
			found += !!ks_find(r, "test_progs", sh->tests[i]);
		for (i = 0; i < sh->n_tests; i++) {
			if (ks_find(r, "test_progs", sh->tests[i]))
				continue;
			if (!trouble && found && i > 0 && retry) {
				retry->runner = "test_progs";
				retry->tests = sh->tests + i;
				retry->n_tests = sh->n_tests - i;
				break;
			}
			ks_add(r, "test_progs", sh->tests[i], false, KS_ERROR,
			       trouble ?: "no result: test_progs ended while this test ran");
			if (i + 1 < sh->n_tests && retry) {
				retry->runner = "test_progs";
				retry->tests = sh->tests + i + 1;
				retry->n_tests = sh->n_tests - i - 1;
			}
			break;
		}
	} else {
		enum ks_status status = KS_FAIL;
		char *reason = NULL;
		int exit_status = -1;

		if (!trouble)
			exit_status = json_int(s->result, "exit_status", -1);
		if (!strcmp(sh->runner, "test_verifier") && out)
			ks_parse_test_verifier(r, out);
		if (trouble)
			status = KS_ERROR;
		else if (exit_status == 0)
			status = KS_PASS;
		if (status != KS_PASS) {
			/* The end of its output says why. */
			size_t len = out ? strlen(out) : 0;

			asprintf(&reason, "%s%sexit status %d; output ends:\n%s", trouble ?: "", trouble ? "\n" : "",
				 exit_status, out ? out + (len > 2000 ? len - 2000 : 0) : "");
		}
		struct ks_result *x = ks_add(r, sh->runner, sh->runner, false, status, reason);

		if (s->result && json_int(s->result, "elapsed_ns", -1) >= 0)
			x->duration_s = json_int(s->result, "elapsed_ns", 0) / 1e9;
		free(reason);
	}
	free(out);
	free(json);
	free(trouble);
}

/* R's results from FROM on, a shard's just collected, ran with CPUS. */
static void mark_cpus(struct ks_results *r, size_t from, unsigned int cpus)
{
	for (size_t i = from; i < r->n; i++)
		r->v[i].cpus = cpus;
}

/* Remove the run directories of the shards started (their guests killed)
 * and not collected: for the paths that give up with guests running. */
static void stop_shards(struct shard *shards, size_t started)
{
	for (size_t i = 0; i < started; i++)
		if (shards[i].started) {
			session_destroy(&shards[i].session);
			shards[i].started = false;
		}
}

static int run_shards(struct shard *shards, size_t n, size_t max, struct ks_results *r,
		      const struct bpfuml_paths *paths, const struct ks_opts *o, const char *dir)
{
	struct session **running = calloc(o->jobs, sizeof(*running));
	size_t next = 0, n_running = 0, done = 0, i;
	long long start = now_ns();
	int code = EXIT_OK;

	while (code == EXIT_OK && (next < n || n_running)) {
		while (!session_interrupted && n_running < o->jobs && next < n) {
			code = shard_start(&shards[next], paths, o, dir);
			next++;
			if (code != EXIT_OK)
				break;
			running[n_running++] = &shards[next - 1].session;
		}
		if (code != EXIT_OK || (session_interrupted && !n_running))
			break;
		session_wait_any(running, n_running);
		for (i = 0; i < n_running; i++) {
			struct shard *sh = (struct shard *)((char *)running[i] -
							    offsetof(struct shard, session));

			if (!session_poll(&sh->session))
				continue;
			running[i--] = running[--n_running];
			done++;
			if (!session_interrupted) {
				struct shard *retry = n < max ? &shards[n] : NULL;
				size_t collected = r->n;

				collect_shard(r, sh, retry, shard_timeout(o, sh), host_timeout(o, sh));
				mark_cpus(r, collected, sh->cpus);
				if (retry && retry->runner) {
					retry->cpus = sh->cpus;
					n++;
				}
				if (o->common.keep && !o->common.json)
					fprintf(stderr, "bpfuml: kept %s (%s)\n", sh->session.run_dir, sh->runner);
				/* Progress on stderr, in JSON mode too: stdout
				 * keeps the one document. */
				fprintf(stderr, "  guest %zu/%zu done (%s, %zu test(s), %.0f s so far)\n",
					done, n, sh->runner, sh->n_tests, (now_ns() - start) / 1e9);
			}
			session_destroy(&sh->session);
			sh->started = false;
		}
	}
	stop_shards(shards, next);
	free(running);
	if (code != EXIT_OK)
		return code;
	return session_interrupted ? fail(&o->common, EXIT_INTERRUPTED, "interrupted",
					  "interrupted; the guests were killed and their files removed") :
				     EXIT_OK;
}

/* Denied whole tests are not run; denied subtests are filtered by test_progs
 * (-d) and reported here, per entry, for the tests that were selected. */
static void add_denied(struct ks_results *r, const struct ks_denylist *d, char **names, size_t n)
{
	size_t i, j;

	for (i = 0; i < d->n; i++) {
		const char *pattern = d->v[i].pattern, *slash = strchr(pattern, '/');

		if (!slash)
			continue;
		for (j = 0; j < n; j++)
			if (strlen(names[j]) == (size_t)(slash - pattern) &&
			    !strncmp(names[j], pattern, slash - pattern) && !ks_denied_test(d, names[j])) {
				ks_add(r, "test_progs", pattern, true, KS_DENIED, d->v[i].reason);
				break;
			}
	}
}

static bool all_runners(const char *runner, void *ctx)
{
	return true;
}

static bool runner_selected(const char *runner, void *ctx)
{
	return runner_wanted(ctx, runner);
}

/* NAME's test ("test" of "test/subtest") appended to TESTS (room for it)
 * unless it is there. */
static void add_test_of(char **tests, size_t *n, const char *name)
{
	size_t len = strcspn(name, "/"), j;

	for (j = 0; j < *n; j++)
		if (strlen(tests[j]) == len && !strncmp(tests[j], name, len))
			return;
	tests[(*n)++] = strndup(name, len);
}

/* The test_progs tests of GATE's regressions not yet shown flaky, once
 * each (a subtest's test), into *TESTS (malloc'ed names); their number. */
static size_t regressed_tests(const struct ks_gate *gate, char ***tests)
{
	size_t n = 0, i;

	*tests = calloc(gate->n_changes + 1, sizeof(**tests));
	for (i = 0; *tests && i < gate->n_changes; i++) {
		const struct ks_change *c = &gate->changes[i];

		if (ks_change_is_regression(c) && !c->flaky && !strcmp(c->runner, "test_progs"))
			add_test_of(*tests, &n, c->name);
	}
	return n;
}

/* The test_progs tests a baseline's regressions belong to, each run once
 * more alone (RETRIES times at most): one that passes then is flaky. */
static int gate_against_baseline(struct ks_gate *gate, struct ks_results *results, unsigned int retries,
				 const struct bpfuml_paths *paths, const struct ks_opts *o, const char *dir)
{
	struct ks_results retried = { 0 };
	struct shard *shards = NULL;
	char **tests = NULL;
	size_t n, i;
	int code = EXIT_OK;

	/* A run of some tests (-t, or one --shard part) is judged on those it
	 * ran; the whole run, on everything of the baseline. */
	if (ks_gate_compare(gate, results, runner_selected, !o->filter && !o->parts, (void *)o))
		return fail(&o->common, EXIT_INFRA, "infrastructure", "out of memory");
	for (unsigned int round = 0; round < retries && code == EXIT_OK; round++) {
		/* Only what still fails: a test shown flaky is not run again. */
		n = regressed_tests(gate, &tests);
		if (!n) {
			free(tests);
			break;
		}
		/* One guest per test, and as many spare slots for their retries. */
		shards = calloc(2 * n, sizeof(*shards));
		for (i = 0; shards && i < n; i++)
			shards[i] = (struct shard){ .runner = "test_progs", .tests = &tests[i], .n_tests = 1,
						    .cpus = o->cpus ?: KS_CPUS };
		fprintf(stderr, "bpfuml: kselftest: %zu regressed test(s) run again alone (%u of %u)\n", n,
			round + 1, retries);
		code = shards ? run_shards(shards, n, 2 * n, &retried, paths, o, dir) :
				fail(&o->common, EXIT_INFRA, "infrastructure", "out of memory");
		free(shards);
		ks_gate_mark_flaky(gate, &retried);
		ks_free(&retried);
		for (i = 0; i < n; i++)
			free(tests[i]);
		free(tests);
		tests = NULL;
	}
	return code;
}

/* --write-baseline FILE: this run as the next baseline (its JSON). */
static void save_baseline(const struct ks_results *results, double wall_s, int jobs, const char *path)
{
	json_object *doc = ks_results_json(results, wall_s, jobs);
	int err = write_document(path, doc);

	if (err)
		fprintf(stderr, "bpfuml: --write-baseline %s: %s\n", path, strerror(-err));
	json_object_put(doc);
}

static unsigned int least_loaded(const unsigned long long *load, unsigned int n)
{
	unsigned int p, best = 0;

	for (p = 1; p < n; p++)
		if (load[p] < load[best])
			best = p;
	return best;
}

/* --shard I/N, 1 <= I <= N <= KS_PARTS_MAX. */
static int parse_part(struct ks_opts *o, const char *arg)
{
	const char *slash = strchr(arg, '/');
	int code;

	if (!slash)
		return fail(&o->common, EXIT_USAGE, "usage", "--shard wants I/N (this job's part of N), not '%s'", arg);
	code = option_uint(&o->common, "--shard's N", slash + 1, 1, KS_PARTS_MAX, "parts", &o->parts);
	if (code == EXIT_OK)
		code = option_uint(&o->common, "--shard's I", strndupa(arg, slash - arg), 1, o->parts, NULL, &o->part);
	return code;
}

/*
 * --shard I/N: keep this CI job's part of the work.  The units are the two
 * whole runners and each test_progs test left after the denylist.  Each
 * unit, the costliest first (in listing order among equals), goes to the
 * part with the least so far (the lowest on a tie): the longest-first rule,
 * within 4/3 of the best split.  A unit costs what it took in the
 * --durations run when that recorded it; else a test costs the median of
 * the recorded tests, and without a file the rough seconds measured here in
 * 2-CPU guests: test_maps ~800, test_verifier ~5, a test_progs test ~1.
 * Every job computes the same split from the same list and file, so N jobs
 * run each unit exactly once.
 */
#define KS_COST_MAPS_MS 800000
#define KS_COST_VERIFIER_MS 5000
#define KS_COST_TEST_MS 1000

struct unit {
	size_t order;			/* listing order: runners, then tests */
	unsigned long long cost_ms;
};

static int costliest_first(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;

	if (x->cost_ms != y->cost_ms)
		return x->cost_ms < y->cost_ms ? 1 : -1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_ms(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* X's recorded time as a cost in ms (never 0: a unit always weighs). */
static unsigned long long cost_ms(const struct ks_result *x)
{
	return (unsigned long long)(x->duration_s * 1000) + 1;
}

/* What RUNNER's NAME took in DURATIONS (ms), or DEFAULT_MS. */
static unsigned long long recorded_ms(struct ks_results *durations, const char *runner, const char *name,
				      unsigned long long default_ms)
{
	struct ks_result *x = durations ? ks_find(durations, runner, name) : NULL;

	return x && x->duration_s >= 0 ? cost_ms(x) : default_ms;
}

/* The median recorded test_progs test, or KS_COST_TEST_MS. */
static unsigned long long median_test_ms(const struct ks_results *durations)
{
	unsigned long long *ms, median = KS_COST_TEST_MS;
	size_t i, n = 0;

	if (!durations || !(ms = calloc(durations->n + 1, sizeof(*ms))))
		return median;
	for (i = 0; i < durations->n; i++)
		if (!durations->v[i].subtest && durations->v[i].duration_s >= 0 &&
		    !strcmp(durations->v[i].runner, "test_progs"))
			ms[n++] = cost_ms(&durations->v[i]);
	if (n) {
		qsort(ms, n, sizeof(*ms), by_ms);
		median = ms[n / 2];
	}
	free(ms);
	return median;
}

static int pick_part(const struct ks_opts *o, struct ks_results *durations, bool *verifier, bool *maps,
		     char **run, size_t *n_run)
{
	unsigned long long *load = calloc(o->parts, sizeof(*load)), test_ms = median_test_ms(durations);
	struct unit *units = calloc(*n_run + 2, sizeof(*units));
	bool *mine = calloc(*n_run + 2, sizeof(*mine));
	size_t i, n = 0, kept = 0;

	if (!load || !units || !mine) {
		free(load);
		free(units);
		free(mine);
		return -ENOMEM;
	}
	/* Orders 0 and 1 are the runners, 2 + i the test run[i]. */
	if (*maps)
		units[n++] = (struct unit){ 0, recorded_ms(durations, "test_maps", "test_maps", KS_COST_MAPS_MS) };
	if (*verifier)
		units[n++] = (struct unit){ 1, recorded_ms(durations, "test_verifier", "test_verifier",
							   KS_COST_VERIFIER_MS) };
	for (i = 0; i < *n_run; i++)
		units[n++] = (struct unit){ 2 + i, recorded_ms(durations, "test_progs", run[i], test_ms) };
	qsort(units, n, sizeof(*units), costliest_first);
	for (i = 0; i < n; i++) {
		unsigned int p = least_loaded(load, o->parts);

		load[p] += units[i].cost_ms;
		mine[units[i].order] = p == o->part - 1;
	}
	*maps = *maps && mine[0];
	*verifier = *verifier && mine[1];
	for (i = 0; i < *n_run; i++)
		if (mine[2 + i])
			run[kept++] = run[i];
	*n_run = kept;
	free(load);
	free(units);
	free(mine);
	return 0;
}

#define REPORT_LONGOPTS								\
	{ "summary", required_argument, NULL, OPT_SUMMARY },		\
	{ "junit", required_argument, NULL, OPT_JUNIT },		\
	{ "baseline", required_argument, NULL, OPT_BASELINE },		\
	{ "write-baseline", required_argument, NULL, OPT_WRITE_BASELINE }

/* The options of what is written and of the gate; -1 when C is none. */
static int report_option(struct ks_opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_SUMMARY: o->summary = arg; return EXIT_OK;
	case OPT_JUNIT: o->junit = arg; return EXIT_OK;
	case OPT_BASELINE: o->baseline = arg; return EXIT_OK;
	case OPT_WRITE_BASELINE: o->write_baseline = arg; return EXIT_OK;
	case OPT_RETRIES:
		return option_uint(&o->common, "--retries", arg, 0, KS_RETRIES_MAX, "runs", &o->retries);
	}
	return -1;
}

/* Before anything runs: the files to write can be written, the baseline
 * read (into GATE). */
static int reports_check(const struct ks_opts *o, struct ks_gate *gate)
{
	char why[256];
	int code = EXIT_OK;

	if (o->summary)
		code = report_file_check(&o->common, "--summary", o->summary);
	if (code == EXIT_OK && o->junit)
		code = report_file_check(&o->common, "--junit", o->junit);
	if (code == EXIT_OK && o->baseline && ks_results_load(&gate->base, o->baseline, NULL, NULL, why, sizeof(why)))
		code = fail(&o->common, EXIT_USAGE, "input", "--baseline %s %s", o->baseline, why);
	return code;
}

/* The report (KTAP and summary, or JSON), the files asked for, and the exit
 * code: against a baseline (GATE, compared) only what it lost fails. */
static int report(const struct ks_opts *o, struct ks_results *results, double wall_s, int jobs,
		  struct ks_gate *gate)
{
	int counts[KS_NR_STATUS], sub_counts[KS_NR_STATUS];

	if (o->write_baseline)
		save_baseline(results, wall_s, jobs, o->write_baseline);
	if (o->common.json) {
		json_object *doc = ks_results_json(results, wall_s, jobs);

		json_object_object_add(doc, "bpf_mode", json_object_new_string(bpf_mode_of(&o->common)));
		if (gate)
			json_object_object_add(doc, "baseline", ks_gate_json(gate, o->baseline));
		print_document(doc);
		json_object_put(doc);
	} else {
		ks_print_ktap(stdout, results);
		ks_print_summary(stdout, results, wall_s, jobs);
		if (gate)
			ks_gate_print(stdout, gate, o->baseline);
	}
	if (o->summary && summary_kselftest(o->summary, results, wall_s))
		fprintf(stderr, "bpfuml: --summary %s: %s\n", o->summary, strerror(errno));
	if (o->junit && junit_kselftest(o->junit, results, wall_s))
		fprintf(stderr, "bpfuml: --junit %s: cannot write it\n", o->junit);
	if (gate)
		return ks_gate_regressions(gate, false) ? EXIT_REJECTED : EXIT_OK;
	ks_count(results, false, counts);
	ks_count(results, true, sub_counts);
	return counts[KS_ERROR] || sub_counts[KS_ERROR] ? EXIT_INFRA :
	       counts[KS_FAIL] || sub_counts[KS_FAIL] ? EXIT_REJECTED : EXIT_OK;
}

/* SHARDS (room for MAX_SHARDS + 2) for the runners wanted and RUN's
 * test_progs tests, in guests of CPUS; their number.  test_maps starts with
 * KS_CPUS without --cpus: it runs whole, its threads on every CPU, and took
 * 1650 s with one CPU against 815 s with two (README). */
static size_t plan_shards(struct shard *shards, const struct ks_opts *o, bool verifier, bool maps, char **run,
			  size_t n_run, unsigned int cpus)
{
	size_t n = 0, per, i;

	/* The long single-process runners first, so they overlap the batches. */
	if (verifier)
		shards[n++] = (struct shard){ .runner = "test_verifier", .cpus = cpus };
	if (maps)
		shards[n++] = (struct shard){ .runner = "test_maps", .cpus = o->cpus ?: KS_CPUS };
	if (!n_run)
		return n;
	/* Several batches per guest slot even out long and short tests. */
	per = o->batch > 0 ? (size_t)o->batch : (n_run + o->jobs * 6 - 1) / (o->jobs * 6);
	/* Half the slots at most: the rest are for retries. */
	if (per < 1 || n_run / per >= MAX_SHARDS / 2)
		per = n_run / (MAX_SHARDS / 2) + 1;
	for (i = 0; i < n_run; i += per)
		shards[n++] = (struct shard){ .runner = "test_progs", .tests = run + i,
					      .n_tests = n_run - i < per ? n_run - i : per, .cpus = cpus };
	return n;
}

static bool passed(enum ks_status status)
{
	return status == KS_PASS || status == KS_DENIED;
}

/* Without --cpus: what did not pass in the first guests (1 CPU) runs again
 * in guests of KS_CPUS, and their result replaces the first: a test that
 * wants a second CPU skips or fails without one.  test_progs tests with a
 * subtest that did not pass are run again whole; test_verifier and
 * test_maps when the runner itself did not pass. */
static int run_again_with_more_cpus(struct ks_results *r, const struct bpfuml_paths *paths,
				    const struct ks_opts *o, const char *dir)
{
	struct shard *shards = calloc(MAX_SHARDS + 2, sizeof(*shards));
	char **tests = calloc(r->n + 1, sizeof(*tests));
	struct ks_results first = { 0 };
	bool verifier = false, maps = false;
	size_t n = 0, i, n_shards;
	int code;

	if (!shards || !tests) {
		free(shards);
		free(tests);
		return fail(&o->common, EXIT_INFRA, "infrastructure", "out of memory");
	}
	for (i = 0; i < r->n; i++) {
		const struct ks_result *x = &r->v[i];

		/* test_maps that ran with KS_CPUS already is not run again. */
		if (passed(x->status) || (!strcmp(x->runner, "test_maps") && x->cpus >= KS_CPUS))
			continue;
		/* How its first run ended, for the result that replaces it. */
		if (!x->subtest)
			ks_add(&first, x->runner, x->name, false, x->status, x->reason)->cpus = x->cpus;
		if (!strcmp(x->runner, "test_progs"))
			add_test_of(tests, &n, x->name);
		verifier |= !strcmp(x->name, "test_verifier");
		maps |= !strcmp(x->name, "test_maps");
	}
	for (i = 0; i < n; i++)
		ks_remove_test(r, "test_progs", tests[i]);
	if (verifier)
		ks_remove_test(r, "test_verifier", "test_verifier");
	if (maps)
		ks_remove_test(r, "test_maps", "test_maps");
	n_shards = plan_shards(shards, o, verifier, maps, tests, n, KS_CPUS);
	code = EXIT_OK;
	if (n_shards) {
		fprintf(stderr, "bpfuml: kselftest: %zu test(s)%s%s did not pass with %u CPU: run again with %u\n",
			n, verifier ? ", test_verifier" : "", maps ? ", test_maps" : "", KS_CPUS_FIRST, KS_CPUS);
		code = run_shards(shards, n_shards, MAX_SHARDS + 2, r, paths, o, dir);
	}
	for (i = 0; i < first.n; i++) {
		struct ks_result *now = ks_find(r, first.v[i].runner, first.v[i].name);

		if (!now)
			continue;
		now->first_status = first.v[i].status;
		now->first_cpus = first.v[i].cpus;
		now->first_reason = first.v[i].reason ? strdup(first.v[i].reason) : NULL;
	}
	ks_free(&first);
	for (i = 0; i < n; i++)
		free(tests[i]);
	free(tests);
	free(shards);
	return code;
}

static int usage(const struct ks_opts *o, const char *msg)
{
	return fail(&o->common, EXIT_USAGE, "usage", "%s; see bpfuml help kselftest", msg);
}

int cmd_kselftest(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "mem", required_argument, NULL, OPT_MEM },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "runners", required_argument, NULL, OPT_RUNNERS },
		{ "denylist", required_argument, NULL, OPT_DENYLIST },
		REPORT_LONGOPTS,
		{ "retries", required_argument, NULL, OPT_RETRIES },
		{ "shard", required_argument, NULL, OPT_SHARD },
		{ "durations", required_argument, NULL, OPT_DURATIONS },
		COMMON_LONGOPTS,
		{ 0 },
	};
	struct ks_opts o = { .common = COMMON_OPTS_DEFAULT };
	struct bpfuml_paths paths;
	struct ks_denylist deny = { 0 };
	struct ks_results results = { 0 };
	struct shard *shards = NULL;
	size_t n_names = 0, n_shards = 0, i, n_run = 0;
	bool with_verifier, with_maps;
	char **names = NULL, **run = NULL, dir[PATH_MAX + 32], default_deny[PATH_MAX + 64];
	char denylist_abs[PATH_MAX], base[PATH_MAX];
	long long start = now_ns();
	struct ks_gate gate = { 0 };
	int c, code, bad_line = 0;

	o.jobs = sysconf(_SC_NPROCESSORS_ONLN);
	o.retries = 1;
	o.mem_mb = KS_MEM_MB;
	while ((c = getopt_long(argc, argv, "t:j:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FILTER:
			o.filter = optarg;
			code = EXIT_OK;
			break;
		case OPT_JOBS:
			code = option_uint(&o.common, "-j", optarg, 1, KS_JOBS_MAX, "guests", &o.jobs);
			break;
		case OPT_MEM:
			code = option_uint(&o.common, "--mem", optarg, KS_MEM_MIN_MB, KS_MEM_MAX_MB, "MiB",
					   &o.mem_mb);
			break;
		case OPT_CPUS:
			code = option_uint(&o.common, "--cpus", optarg, 1, KS_CPUS_MAX, "CPUs per guest",
					   &o.cpus);
			break;
		case OPT_BATCH:
			code = option_uint(&o.common, "--batch", optarg, 1, KS_BATCH_MAX, "tests per guest",
					   &o.batch);
			break;
		case OPT_RUNNERS:
			o.runners = optarg;
			code = EXIT_OK;
			break;
		case OPT_DENYLIST:
			o.denylist = optarg;
			code = EXIT_OK;
			break;
		case OPT_SHARD:
			code = parse_part(&o, optarg);
			break;
		case OPT_DURATIONS:
			o.durations = optarg;
			code = EXIT_OK;
			break;
		default:
			code = report_option(&o, c, optarg);
			if (code < 0)
				code = common_option(&o.common, c, optarg);
			if (code < 0)
				code = EXIT_OK;
		}
		if (code != EXIT_OK)
			return code;
	}
	if (optind != argc)
		return usage(&o, "kselftest takes no file arguments");
	if (o.durations && !o.parts)
		return usage(&o, "--durations balances the parts of --shard I/N; give --shard too");
	o.timeout_given = o.common.timeout_s != 0;
	if (!o.common.timeout_s)
		o.common.timeout_s = KS_TIMEOUT_S;
	common_finish(&o.common);
	if ((code = reports_check(&o, &gate)) != EXIT_OK)
		return code;
	if (strcmp(o.common.backend, "uml"))
		return usage(&o, "kselftest runs on the uml backend only");
	/* -t alone means test_progs alone; a full run has all three runners. */
	if (!o.runners)
		o.runners = o.filter ? "test_progs" : "test_progs,test_verifier,test_maps";

	if (paths_init(&paths))
		return fail(&o.common, EXIT_INFRA, "infrastructure", "cannot locate the build directory");
	if ((code = kernel_select(&paths, &o.common)) != EXIT_OK)
		return code;
	if (!paths.kernel_is_default)
		return fail(&o.common, EXIT_USAGE, "usage", "the BPF selftests are built for the default "
			    "kernel only, not --kernel %s", paths.kernel_version);
	snprintf(dir, sizeof(dir), "%s/selftests/bpf", paths.build_dir);
	snprintf(default_deny, sizeof(default_deny), "%s/kselftest/DENYLIST.uml", paths.build_dir);
	if (access(dir, R_OK))
		return fail(&o.common, EXIT_INFRA, "infrastructure",
			    "the BPF selftests are not built (%s); run `make kselftest-build` or ./run.sh kselftest",
			    dir);
	if ((code = selftests_match_kernel(&o, &paths)) != EXIT_OK)
		return code;
	if (!realpath(o.denylist ?: default_deny, denylist_abs))
		return fail(&o.common, EXIT_USAGE, "usage", "denylist %s: %s", o.denylist ?: default_deny,
			    strerror(errno));
	o.denylist = denylist_abs;
	code = ks_denylist_load(&deny, o.denylist, !strcmp(bpf_mode_of(&o.common), "jit"), &bad_line);
	if (code && bad_line)
		return fail(&o.common, EXIT_USAGE, "usage",
			    "%s:%d: want `test[/subtest]  # reason (the missing kernel feature)`",
			    o.denylist, bad_line);
	if (code)
		return fail(&o.common, EXIT_USAGE, "usage", "%s: %s", o.denylist, strerror(-code));
	o.deny_text = ks_denylist_text(&deny);
	if (!o.deny_text) {
		ks_denylist_free(&deny);
	free(o.deny_text);
		return fail(&o.common, EXIT_INFRA, "infrastructure", "out of memory");
	}

	session_install_signal_handlers();

	shards = calloc(MAX_SHARDS + 2, sizeof(*shards));
	with_verifier = runner_wanted(&o, "test_verifier");
	with_maps = runner_wanted(&o, "test_maps");
	if (runner_wanted(&o, "test_progs")) {
		code = list_tests(&paths, &o, dir, &names, &n_names);
		if (code != EXIT_OK)
			goto out;
		add_not_built(&o, dir, &names, &n_names);
		run = calloc(n_names + 1, sizeof(*run));
		for (i = 0; i < n_names; i++) {
			const struct ks_deny *d = ks_denied_test(&deny, names[i]);

			/* Denied tests are reported once, by the first part. */
			if (d && o.part <= 1)
				ks_add(&results, "test_progs", names[i], false, KS_DENIED, d->reason);
			else if (!d)
				run[n_run++] = names[i];
		}
		if (o.part <= 1)
			add_denied(&results, &deny, names, n_names);
	}
	if (o.parts) {
		struct ks_results durations = { 0 };
		char why[256];

		if (o.durations && ks_results_load(&durations, o.durations, NULL, NULL, why, sizeof(why))) {
			code = fail(&o.common, EXIT_USAGE, "input", "--durations %s %s", o.durations, why);
			goto out;
		}
		if (pick_part(&o, o.durations ? &durations : NULL, &with_verifier, &with_maps, run, &n_run)) {
			ks_free(&durations);
			code = fail(&o.common, EXIT_INFRA, "infrastructure", "out of memory");
			goto out;
		}
		ks_free(&durations);
	}
	n_shards = plan_shards(shards, &o, with_verifier, with_maps, run, n_run, o.cpus ?: KS_CPUS_FIRST);
	/* Room for the guests that run at once, before the first of them boots. */
	if (!session_base_dir(base, sizeof(base)) &&
	    (code = check_space(&o.common, base, n_shards < o.jobs ? n_shards : o.jobs, o.mem_mb,
				", or use fewer -j or a smaller --mem")) != EXIT_OK)
		goto out;
	if (o.parts)
		fprintf(stderr, "bpfuml: kselftest: part %u of %u: %zu test_progs test(s)%s%s, ", o.part, o.parts,
			n_run, with_verifier ? ", test_verifier" : "", with_maps ? ", test_maps" : "");
	else
		fprintf(stderr, "bpfuml: kselftest: %zu test_progs test(s) to run, %zu denied, ", n_run,
			n_names - n_run);
	fprintf(stderr, "%zu guest run(s), %u in parallel\n", n_shards, o.jobs);
	code = run_shards(shards, n_shards, MAX_SHARDS + 2, &results, &paths, &o, dir);
	if (code == EXIT_OK && !o.cpus)
		code = run_again_with_more_cpus(&results, &paths, &o, dir);
	if (code != EXIT_OK)
		goto out;

	double wall_s = (now_ns() - start) / 1e9;

	ks_sort(&results);

	if (o.baseline) {
		code = gate_against_baseline(&gate, &results, o.retries, &paths, &o, dir);
		if (code != EXIT_OK)
			goto out;
	}
	code = report(&o, &results, wall_s, o.jobs, o.baseline ? &gate : NULL);
out:
	for (i = 0; i < n_names; i++)
		free(names[i]);
	free(names);
	free(run);
	free(shards);
	ks_free(&results);
	ks_denylist_free(&deny);
	free(o.deny_text);
	ks_gate_free(&gate);
	return code;
}

/*
 * `bpfuml kselftest-merge PART.json...`: the results of `kselftest --shard
 * I/N --json` jobs joined into one run's, reported as kselftest reports
 * (KTAP and summary or JSON, --junit, --summary, --baseline without retries:
 * no guest runs here).  A test in two parts means the parts do not belong
 * to one split: refused.  Wall time is the longest part's (they ran side
 * by side), jobs the sum.
 */
int cmd_kselftest_merge(int argc, char **argv)
{
	static const struct option longopts[] = { REPORT_LONGOPTS, COMMON_LONGOPTS, { 0 } };
	struct ks_opts o = { .common = COMMON_OPTS_DEFAULT };
	struct ks_results merged = { 0 };
	struct ks_gate gate = { 0 };
	double wall_s = 0;
	int c, code, jobs = 0;
	char why[256];

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		code = report_option(&o, c, optarg);
		if (code < 0)
			code = common_option(&o.common, c, optarg);
		if (code >= 0 && code != EXIT_OK)
			return code;
	}
	common_finish(&o.common);
	if (optind >= argc)
		return fail(&o.common, EXIT_USAGE, "usage", "usage: bpfuml kselftest-merge PART.json... [--json] "
			    "[--junit FILE] [--summary FILE] [--baseline FILE]; see bpfuml help kselftest-merge");
	code = reports_check(&o, &gate);
	for (int f = optind; code == EXIT_OK && f < argc; f++) {
		struct ks_results part = { 0 };
		double part_wall = 0;
		int part_jobs = 0;

		if (ks_results_load(&part, argv[f], &part_wall, &part_jobs, why, sizeof(why))) {
			code = fail(&o.common, EXIT_USAGE, "input", "%s %s", argv[f], why);
		} else {
			for (size_t i = 0; code == EXIT_OK && i < part.n; i++) {
				const struct ks_result *x = &part.v[i];

				if (ks_find(&merged, x->runner, x->name))
					code = fail(&o.common, EXIT_USAGE, "input", "%s: %s is in an earlier part too: "
						    "give each part of one --shard split once", argv[f], x->name);
				else
					ks_add(&merged, x->runner, x->name, x->subtest, x->status,
					       x->reason)->duration_s = x->duration_s;
			}
			wall_s = part_wall > wall_s ? part_wall : wall_s;
			jobs += part_jobs;
		}
		ks_free(&part);
	}
	if (code == EXIT_OK && o.baseline && ks_gate_compare(&gate, &merged, all_runners, true, NULL))
		code = fail(&o.common, EXIT_INFRA, "infrastructure", "out of memory");
	if (code == EXIT_OK) {
		ks_sort(&merged);
		code = report(&o, &merged, wall_s, jobs, o.baseline ? &gate : NULL);
	}
	ks_free(&merged);
	ks_gate_free(&gate);
	return code;
}
