// SPDX-License-Identifier: GPL-2.0
/* cmd_bench.c — `bpfuml bench`: BPF_MAP_TYPE_RHASH against BPF_MAP_TYPE_HASH,
 * side by side, on a chosen backend.
 *
 * Each row of the matrix (benchmark, key size, max_entries, fill, value
 * size) runs once per map type; a row is one guest boot (or one run of the
 * agent on the host), so progress shows as rows finish.  Figures are the
 * median of the samples with their min-max spread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfuml.h"
#include "kernels.h"
#include "options.h"
#include "term.h"

/* --backend is a common option (options.h); bench also takes host. */
enum { OPT_QUICK = 0x200, OPT_PNG, OPT_SAMPLES };
static const char *const bench_backends[] = { "uml", "qemu", "host", NULL };
#define SAMPLES_MAX 64		/* summarize()'s array */

struct bench_row {
	const char *bench;	/* lookup, full-update, mem */
	unsigned int key_size, value_size, max_entries, fill;
};

/* The quick profile: the published table's rows that matter most, small
 * enough for under a minute on UML. */
static const struct bench_row quick_rows[] = {
	{ "lookup", 8, 8, 1000, 750 },
	{ "lookup", 8, 8, 1000000, 750000 },
	{ "lookup", 32, 8, 1000000, 750000 },
	{ "full-update", 4, 8, 65536, 65536 },
	{ "mem", 4, 32, 8192, 8192 },
	{ "mem", 4, 4096, 8192, 8192 },
};

static int full_rows(struct bench_row **rows)
{
	static const unsigned int keys[] = { 4, 8, 32, 256 };
	static const unsigned int maxes[] = { 1000, 1000000 };
	static const unsigned int fills[] = { 50, 75, 100 };
	struct bench_row *r = calloc(32, sizeof(*r));
	int n = 0;
	size_t k, m, f;

	if (!r)
		return -ENOMEM;
	for (k = 0; k < 4; k++)
		for (m = 0; m < 2; m++)
			for (f = 0; f < 3; f++)
				r[n++] = (struct bench_row){ "lookup", keys[k], 8, maxes[m],
							     maxes[m] / 100 * fills[f] };
	r[n++] = (struct bench_row){ "full-update", 4, 8, 65536, 65536 };
	r[n++] = (struct bench_row){ "full-update", 8, 8, 1000000, 1000000 };
	r[n++] = (struct bench_row){ "mem", 4, 32, 8192, 8192 };
	r[n++] = (struct bench_row){ "mem", 4, 4096, 8192, 8192 };
	*rows = r;
	return n;
}

static json_object *row_case(const struct bench_row *row, const char *map, int samples)
{
	json_object *c = json_object_new_object();

	json_object_object_add(c, "bench", json_object_new_string(row->bench));
	json_object_object_add(c, "map", json_object_new_string(map));
	json_object_object_add(c, "key_size", json_object_new_int(row->key_size));
	json_object_object_add(c, "value_size", json_object_new_int(row->value_size));
	json_object_object_add(c, "max_entries", json_object_new_int(row->max_entries));
	json_object_object_add(c, "fill", json_object_new_int(row->fill));
	json_object_object_add(c, "samples", json_object_new_int(samples));
	json_object_object_add(c, "runs", json_object_new_int(row->max_entries >= 1000000 ? 200 : 500));
	return c;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, min and max of a case's samples, or -1 when it has none. */
static double summarize(json_object *out, double *lo, double *hi)
{
	json_object *rates;
	double v[SAMPLES_MAX];
	size_t i, n;

	if (!json_object_object_get_ex(out, "ops_per_sec", &rates))
		return -1;
	n = json_object_array_length(rates);
	if (!n || json_str(out, "error"))
		return -1;
	for (i = 0; i < n && i < SAMPLES_MAX; i++)
		v[i] = json_object_get_double(json_object_array_get_idx(rates, i));
	n = i;
	qsort(v, n, sizeof(v[0]), compare_double);
	*lo = v[0];
	*hi = v[n - 1];
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Run the agent directly on the host: the host kernel is the one measured. */
static int run_on_host(struct session *s, const struct bpfuml_paths *paths, json_object *job)
{
	int status, err;
	pid_t pid;

	err = session_write_file(s, JOB_FILE, json_object_to_json_string(job));
	if (err)
		return err;
	pid = fork();
	if (pid == 0) {
		execl(paths->agent, paths->agent, s->run_dir, NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -errno;
	return session_read_result(s, "bench") ? -EIO : 0;
}

static const char *kernel_of(const char *backend, const struct session *s, char *buf, size_t size)
{
	json_object *result = s->result;
	bool jit = !strcmp(s->bpf_mode ?: bpf_mode_default(backend), "jit");
	struct utsname u;

	if (!strcmp(backend, "host")) {
		uname(&u);
		snprintf(buf, size, "host kernel %s %s (JIT as configured on the host)", u.release, u.machine);
	} else if (!strcmp(backend, "qemu")) {
		snprintf(buf, size, "x86_64 %s with the BPF %s under QEMU %s%s",
			 json_str(result, "kernel") ?: "?", jit ? "JIT" : "interpreter", s->accel ?: "?",
			 s->accel && !strcmp(s->accel, "kvm") ? "" :
			 " (emulated: compare the ratios only, not the absolute figures)");
	} else {
		snprintf(buf, size, "UML %s (BPF %s; kernel C code native)",
			 json_str(result, "kernel") ?: "?", jit ? "JITed by x86_64's JIT" : "interpreted");
	}
	return buf;
}

/* What an error most likely means, on this backend. */
static const char *bench_hint(const char *backend, json_object *out)
{
	long long err = json_int(out, "errno", 0);
	json_object *c = NULL;

	json_object_object_get_ex(out, "case", &c);
	if (json_str(out, "error_detail"))
		return json_str(out, "error_detail");
	if (err == ENOMEM && !strcmp(backend, "uml"))
		return "stock UML has no irq_work interrupt, so BPF's allocator refills its caches "
		       "only on the next timer tick (the kernel-patches irq_work fix closes this)";
	if (err == EINVAL && !strcmp(backend, "host") && c && !strcmp(json_str(c, "map") ?: "", "rhash"))
		return "unsupported: the running kernel has no BPF_MAP_TYPE_RHASH (new in 7.x)";
	return "see the case's errno";
}

static void print_figure(double median, double lo, double hi, json_object *out)
{
	if (median < 0)
		printf(" %22s", json_str(out, "error") ? "failed (below)" : "-");
	else
		printf(" %8.2fM (%5.2f-%5.2f)", median / 1e6, lo / 1e6, hi / 1e6);
}

/* scripts/plot_bench.py draws DOC into PNG.  Its arguments go as an argv
 * array: no shell sees the user's path. */
static void draw_png(const struct bpfuml_paths *paths, json_object *doc, const char *png)
{
	char json_path[] = "/tmp/bpfuml-bench.XXXXXX", script[PATH_MAX + 64];
	int fd = mkstemp(json_path), status = -1;
	pid_t pid;

	if (fd < 0) {
		fprintf(stderr, "bpfuml: could not draw %s: %s: %s\n", png, json_path, strerror(errno));
		return;
	}
	dprintf(fd, "%s", json_object_to_json_string(doc));
	close(fd);
	snprintf(script, sizeof(script), "%s/../scripts/plot_bench.py", paths->build_dir);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* Debian's python3, which has Debian's matplotlib; argv[0]
		 * its full path too, from which Python finds its library (as
		 * "python3" it would take the first one on PATH's).  stdout is
		 * the JSON document's: the script's words go to stderr. */
		dup2(2, 1);
		execl("/usr/bin/python3", "/usr/bin/python3", script, json_path, png, (char *)NULL);
		fprintf(stderr, "bpfuml: cannot run /usr/bin/python3: %s\n", strerror(errno));
		_exit(127);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "bpfuml: could not draw %s (see above)\n", png);
	unlink(json_path);
}

int cmd_bench(int argc, char **argv)
{
	struct common_opts opts = COMMON_OPTS_DEFAULT;
	const char *backend = "uml", *png = NULL;
	struct bench_row *rows = (struct bench_row *)quick_rows;
	int nr_rows = sizeof(quick_rows) / sizeof(quick_rows[0]);
	int c, code = EXIT_OK, r, choice;
	unsigned int samples = 5;
	struct bpfuml_paths paths;
	json_object *doc, *results;
	char object[PATH_MAX + 32], kernel[256] = "";
	bool quick = false;

	static const struct option longopts[] = {
		COMMON_LONGOPTS,
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "png", required_argument, NULL, OPT_PNG },
		{ "samples", required_argument, NULL, OPT_SAMPLES },
		{ 0 },
	};
	opts.timeout_s = 1800;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_QUICK: quick = true; continue;
		case OPT_BACKEND:
			if ((code = option_enum(&opts, "--backend", optarg, bench_backends, &choice)))
				return code;
			backend = bench_backends[choice];
			continue;
		case OPT_PNG: png = optarg; continue;
		case OPT_SAMPLES:
			if ((code = option_uint(&opts, "--samples", optarg, 1, SAMPLES_MAX, NULL, &samples)))
				return code;
			continue;
		}
		code = common_option(&opts, c, optarg);
		if (code >= 0)
			return code;
	}
	code = EXIT_OK;
	common_finish(&opts);
	if (optind != argc)
		return fail(&opts, EXIT_USAGE, "usage", "usage: bpfuml bench [--quick] [--backend uml|qemu|host] "
			    "[--samples N] [--png FILE] [--json]");
	if (strcmp(backend, "host"))
		opts.backend = backend;		/* the guest boot_guest() starts */
	if (!strcmp(backend, "host") && geteuid())
		return fail(&opts, EXIT_USAGE, "usage", "--backend host loads BPF into the running "
			    "kernel and needs root");
	if (!quick && (nr_rows = full_rows(&rows)) < 0)
		return fail(&opts, EXIT_INFRA, "infrastructure", "out of memory");
	if (paths_init(&paths))
		return fail(&opts, EXIT_INFRA, "infrastructure", "cannot locate bpfuml's build directory");
	if (strcmp(backend, "host") && (code = kernel_select(&paths, &opts)) != EXIT_OK)
		return code;
	snprintf(object, sizeof(object), "%s/progs/map_bench.bpf.o", paths.build_dir);

	doc = json_object_new_object();
	results = json_object_new_array();
	json_object_object_add(doc, "schema", json_object_new_string("bpfuml-bench/1"));
	json_object_object_add(doc, "backend", json_object_new_string(backend));
	if (strcmp(backend, "host"))
		json_object_object_add(doc, "bpf_mode", json_object_new_string(bpf_mode_of(&opts)));
	json_object_object_add(doc, "profile", json_object_new_string(quick ? "quick" : "full"));
	json_object_object_add(doc, "rows", results);
	if (!opts.json)
		printf("%-12s %4s %5s %8s %8s %22s %22s %7s\n", "bench", "key", "value", "max", "entries",
		       "htab ev/s (min-max)", "rhtab ev/s (min-max)", "ratio");

	for (r = 0; r < nr_rows && code == EXIT_OK; r++) {
		const struct bench_row *row = &rows[r];
		json_object *job = json_object_new_object(), *cases = json_object_new_array();
		json_object *outs = NULL, *entry;
		double med[2], lo[2], hi[2];
		struct session s;
		int i, err;

		json_object_array_add(cases, row_case(row, "hash", samples));
		json_object_array_add(cases, row_case(row, "rhash", samples));
		json_object_object_add(job, "command", json_object_new_string("bench"));
		json_object_object_add(job, "object", json_object_new_string("map_bench.bpf.o"));
		json_object_object_add(job, "cases", cases);
		if (session_create(&s)) {
			json_object_put(job);
			code = fail(&opts, EXIT_INFRA, "infrastructure", "cannot create a run directory");
			break;
		}
		s.keep = opts.keep;
		if (s.keep)
			fprintf(stderr, "bpfuml: run directory kept: %s\n", s.run_dir);
		session_install_signal_handlers();
		err = session_add_file(&s, "map_bench.bpf.o", object);
		if (err)
			code = fail(&opts, EXIT_INFRA, "infrastructure", "%s: %s; run make", object,
				    strerror(-err));
		else if (!strcmp(backend, "host"))
			code = run_on_host(&s, &paths, job) ? fail(&opts, EXIT_INFRA, "infrastructure",
								   "the agent failed on the host") : EXIT_OK;
		else
			code = boot_guest(&s, &paths, &opts, job);
		if (code == EXIT_OK && json_object_object_get_ex(s.result, "cases", &outs)) {
			entry = json_object_new_object();
			json_object_object_add(entry, "bench", json_object_new_string(row->bench));
			json_object_object_add(entry, "key_size", json_object_new_int(row->key_size));
			json_object_object_add(entry, "value_size", json_object_new_int(row->value_size));
			json_object_object_add(entry, "max_entries", json_object_new_int(row->max_entries));
			json_object_object_add(entry, "entries", json_object_new_int(row->fill));
			for (i = 0; i < 2; i++) {
				json_object *out = json_object_array_get_idx(outs, i);
				json_object *fig = json_object_new_object();

				med[i] = summarize(out, &lo[i], &hi[i]);
				json_object_object_add(fig, "median_ops_per_sec",
						       med[i] < 0 ? NULL : json_object_new_double(med[i]));
				json_object_object_add(fig, "min", med[i] < 0 ? NULL : json_object_new_double(lo[i]));
				json_object_object_add(fig, "max", med[i] < 0 ? NULL : json_object_new_double(hi[i]));
				json_object_object_add(fig, "raw", json_object_get(out));
				json_object_object_add(entry, i ? "rhtab" : "htab", fig);
			}
			json_object_object_add(entry, "ratio", med[0] > 0 && med[1] > 0 ?
					       json_object_new_double(med[1] / med[0]) : NULL);
			json_object_array_add(results, entry);
			if (!kernel[0])
				kernel_of(backend, &s, kernel, sizeof(kernel));
			if (!opts.json) {
				printf("%-12s %4u %5u %8u %8u", row->bench, row->key_size, row->value_size,
				       row->max_entries, row->fill);
				print_figure(med[0], lo[0], hi[0], json_object_array_get_idx(outs, 0));
				print_figure(med[1], lo[1], hi[1], json_object_array_get_idx(outs, 1));
				if (med[0] > 0 && med[1] > 0)
					printf(" %6.2fx", med[1] / med[0]);
				putchar('\n');
				for (i = 0; i < 2; i++) {
					json_object *out = json_object_array_get_idx(outs, i);

					if (json_str(out, "error")) {
						/* The guest's words: see term.h. */
						printf("    %s: ", i ? "rhtab" : "htab");
						term_puts(stdout, json_str(out, "error"));
						fputs(": ", stdout);
						term_puts(stdout, bench_hint(backend, out));
						putchar('\n');
					}
					if (json_int(out, "memory_steady_bytes", -1) >= 0)
						printf("    %s memory: steady %.2f MiB, peak %.2f MiB\n",
						       i ? "rhtab" : "htab",
						       json_int(out, "memory_steady_bytes", 0) / 1048576.0,
						       json_int(out, "memory_peak_bytes", 0) / 1048576.0);
				}
				fflush(stdout);
			} else {
				fprintf(stderr, "bench: row %d of %d done\n", r + 1, nr_rows);
			}
		}
		session_destroy(&s);
		json_object_put(job);
	}
	json_object_object_add(doc, "kernel", json_object_new_string(kernel));
	if (opts.json) {
		json_object_object_add(doc, "exit_code", json_object_new_int(code));
		print_document(doc);
	} else {
		printf("backend %s: ", backend);
		term_puts(stdout, kernel[0] ? kernel : "(no row finished)");	/* the guest's uname */
		putchar('\n');
	}
	if (png && code == EXIT_OK)
		draw_png(&paths, doc, png);
	json_object_put(doc);
	if (rows != quick_rows)
		free(rows);
	return code;
}
