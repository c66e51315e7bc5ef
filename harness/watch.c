// SPDX-License-Identifier: GPL-2.0
/* watch.c — `verify --watch` and `run --watch`: the command again on every
 * save of its files (a .bpf.c and the headers it includes, or a .bpf.o),
 * through a warm guest, with a line saying what changed since the last pass.
 *
 * Each pass is the command itself in a forked process, so that its output,
 * its exit code and its one JSON document are exactly the command's; what
 * the supervisor needs from a pass (the files a source includes, the
 * verdicts) the pass leaves in two files of a private directory
 * (watch_depfile, watch_verdicts).  The warm guest is a `bpfuml serve` of
 * our own, unless --server or BPFUML_SERVER names one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "bpfuml.h"
#include "private_server.h"
#include "options.h"
#include "session.h"
#include "watch.h"

const char *watch_depfile;
const char *watch_verdicts;

/* Quiet this long after the last change before a pass: editors write a
 * file in several steps (truncate, write, rename, chmod). */
#define WATCH_SETTLE_MS 30
#define WATCH_FILES_MAX 512

struct watched {
	char *path;		/* as found: the user's FILE, or a header */
	char *dir, *name;	/* what inotify watches: the directory, and the name in it */
	int wd;
};

struct watch {
	struct watched files[WATCH_FILES_MAX];
	size_t nr;
	int inotify;
	char scratch[PATH_MAX];
	char depfile[PATH_MAX + 16], verdicts[PATH_MAX + 16];
	struct private_server server;
	char *last_verdicts;
};

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	/* stderr: stdout is the command's (one JSON document per pass). */
	fputs("bpfuml watch: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void watch_file(struct watch *w, const char *path)
{
	char copy[PATH_MAX];
	struct watched *f;

	for (size_t i = 0; i < w->nr; i++)
		if (!strcmp(w->files[i].path, path))
			return;
	if (w->nr == WATCH_FILES_MAX)
		return;
	f = &w->files[w->nr];
	snprintf(copy, sizeof(copy), "%s", path);
	f->dir = strdup(dirname(copy));
	snprintf(copy, sizeof(copy), "%s", path);
	f->name = strdup(basename(copy));
	f->path = strdup(path);
	/* The directory: an editor that saves by renaming a new file over the
	 * old one leaves a watch on the file itself watching nothing. */
	f->wd = inotify_add_watch(w->inotify, f->dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE |
				  IN_ATTRIB | IN_DELETE_SELF);
	if (f->wd < 0)
		note("cannot watch %s: %s", f->dir, strerror(errno));
	w->nr++;
}

/* The files a pass's clang read, from its make-style depfile:
 * "out.o: a.c b.h \\\n c.h". */
static void watch_dependencies(struct watch *w)
{
	FILE *f = fopen(w->depfile, "re");
	char word[PATH_MAX];
	bool target = true;
	int c;
	size_t n = 0;

	if (!f)
		return;
	do {
		c = fgetc(f);
		if (c == '\\') {
			int next = fgetc(f);

			if (next == '\n')
				continue;	/* a continued line */
			c = next;	/* an escaped character: part of the name */
		} else if (c == EOF || c == ' ' || c == '\n' || c == '\t') {
			if (n) {
				word[n] = '\0';
				if (target && word[n - 1] == ':')
					target = false;
				else if (!target)
					watch_file(w, word);
				n = 0;
			}
			continue;
		}
		if (n < sizeof(word) - 1)
			word[n++] = (char)c;
	} while (c != EOF);
	fclose(f);
	unlink(w->depfile);
}

static char *read_text(const char *path)
{
	char *text = NULL;
	size_t len;

	read_whole_file(path, 1 << 20, &text, &len);
	return text;
}

/* "since last: ..." from two passes' verdicts ("WHAT\tVERDICT" lines). */
static void say_changes(const char *before, const char *now)
{
	char *n = now ? strdup(now) : NULL, *line, *save, out[2048] = "";
	size_t changed = 0, len = 0;

	if (!n) {
		note("this pass gave no verdicts (see above)");
		return;
	}
	for (line = strtok_r(n, "\n", &save); before && line; line = strtok_r(NULL, "\n", &save)) {
		const char *tab = strchr(line, '\t'), *p, *was = NULL;
		size_t key_len;

		if (!tab)
			continue;
		key_len = tab + 1 - line;	/* "WHAT\t" */
		for (p = before; *p; p = strchrnul(p, '\n') + !!*strchrnul(p, '\n'))
			if (!strncmp(p, line, key_len)) {
				was = p + key_len;
				break;
			}
		if (was && !strncmp(was, tab + 1, strlen(tab + 1)) &&
		    (was[strlen(tab + 1)] == '\n' || !was[strlen(tab + 1)]))
			continue;
		if (len < sizeof(out))
			len += snprintf(out + len, sizeof(out) - len, "%s%.*s: %.*s -> %s", changed ? "; " : "",
					(int)(tab - line), line, was ? (int)(strchrnul(was, '\n') - was) : 3,
					was ?: "new", tab + 1);
		changed++;
	}
	if (before)
		note("since last: %s", changed ? out : "no verdict changed");
	free(n);
}

void watch_note_verdict(const char *what, const char *verdict)
{
	FILE *f;

	if (!watch_verdicts || !(f = fopen(watch_verdicts, "ae")))
		return;
	fprintf(f, "%s\t%s\n", what, verdict);
	fclose(f);
}

/* A FILE of the command: a BPF object or source that exists (never an
 * option's value such as --summary's, which a pass writes). */
static bool is_input(const char *arg)
{
	size_t len = strlen(arg);

	return arg[0] != '-' && len > 2 && (!strcmp(arg + len - 2, ".c") || !strcmp(arg + len - 2, ".o")) &&
	       !access(arg, R_OK);
}

/* One pass: the command, forked. */
static int pass(int (*command)(int, char **), int argc, char **argv)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return EXIT_INFRA;
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		exit(output_finish(command(argc, argv)));
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR || session_interrupted) {
			kill(pid, SIGTERM);
			waitpid(pid, &status, 0);
			break;
		}
	return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_INTERRUPTED;
}

/* Until one of the watched files changes and then stays as it is for
 * WATCH_SETTLE_MS: the name of what changed, or NULL when interrupted. */
static const char *wait_for_change(struct watch *w)
{
	char buf[sizeof(struct inotify_event) * 64 + NAME_MAX + 1] __attribute__((aligned(8)));
	const char *changed = NULL;
	long long quiet_until = 0;

	for (;;) {
		struct pollfd pfd = { .fd = w->inotify, .events = POLLIN };
		int timeout = changed ? (int)(quiet_until - mono_ms()) : -1;
		ssize_t n;

		if (changed && timeout <= 0)
			return changed;
		if (session_ppoll(&pfd, 1, timeout) < 0 && session_interrupted)
			return NULL;
		if (!(pfd.revents & POLLIN))
			continue;
		n = read(w->inotify, buf, sizeof(buf));
		for (char *p = buf; n > 0 && p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;

			for (size_t i = 0; i < w->nr; i++)
				if (w->files[i].wd == e->wd && e->len && !strcmp(e->name, w->files[i].name)) {
					changed = w->files[i].path;
					quiet_until = mono_ms() + WATCH_SETTLE_MS;
				}
			p += sizeof(*e) + e->len;
		}
	}
}

int watch_command(int (*command)(int, char **), int argc, char **argv)
{
	static struct watch w = { .inotify = -1 };
	const struct common_opts opts = COMMON_OPTS_DEFAULT;
	bool own_server = !getenv("BPFUML_SERVER") || !*getenv("BPFUML_SERVER");
	const char *changed;
	int code = EXIT_OK, i, err;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--server") || !strncmp(argv[i], "--server=", 9))
			own_server = false;
	w.inotify = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	snprintf(w.scratch, sizeof(w.scratch), "%s/bpfuml-watch.XXXXXX", getenv("TMPDIR") ?: "/tmp");
	if (w.inotify < 0 || !mkdtemp(w.scratch))
		return fail(&opts, EXIT_INFRA, "infrastructure", "cannot set up --watch: %s", strerror(errno));
	snprintf(w.depfile, sizeof(w.depfile), "%s/deps.d", w.scratch);
	snprintf(w.verdicts, sizeof(w.verdicts), "%s/verdicts", w.scratch);
	watch_depfile = w.depfile;
	watch_verdicts = w.verdicts;
	session_install_signal_handlers();
	if (own_server) {
		err = private_server_start(&w.server);
		if (!err)
			setenv("BPFUML_SERVER", w.server.socket, 1);
		else
			note("no warm guest (bpfuml serve did not start: %s); each pass boots one",
			     strerror(-err));
	}
	/* The command's FILEs, found before any pass (their headers after each). */
	for (i = 1; i < argc; i++)
		if (is_input(argv[i]))
			watch_file(&w, argv[i]);
	if (!w.nr)
		note("no FILE to watch among the arguments; running once");

	for (;;) {
		char *verdicts;

		unlink(w.verdicts);
		code = pass(command, argc, argv);
		if (session_interrupted)
			break;
		watch_dependencies(&w);
		verdicts = read_text(w.verdicts);
		say_changes(w.last_verdicts, verdicts);
		free(w.last_verdicts);
		w.last_verdicts = verdicts;
		if (!w.nr)
			break;
		note("watching %zu file%s; Ctrl-C stops", w.nr, w.nr == 1 ? "" : "s");
		changed = wait_for_change(&w);
		if (!changed)
			break;
		note("%s changed", changed);
	}
	private_server_stop(&w.server);
	unlink(w.depfile);
	unlink(w.verdicts);
	rmdir(w.scratch);
	free(w.last_verdicts);
	for (size_t k = 0; k < w.nr; k++) {
		free(w.files[k].path);
		free(w.files[k].dir);
		free(w.files[k].name);
	}
	return session_interrupted ? EXIT_INTERRUPTED : code;
}
