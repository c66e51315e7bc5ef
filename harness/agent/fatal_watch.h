/* SPDX-License-Identifier: GPL-2.0 */
/* fatal_watch.h — the exec job's watch over a program's output for lines
 * that mean it is done for (agent_exec.c; tested on recorded output by
 * tests/unit/test_parsers.c).
 *
 * test_progs' watchdog "kills" a test that runs too long with SIGSEGV sent
 * to itself; its handler prints "Caught signal #11!" and returns, which a
 * real fault would turn into death but a signal sent by pthread_kill() does
 * not: a test blocked in waitpid() or read() goes on waiting.  The output is
 * scanned for such lines, and the program killed when it has not exited
 * within the grace period after the first.
 */
#ifndef BPFUML_FATAL_WATCH_H
#define BPFUML_FATAL_WATCH_H

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

/* At most this many lines are kept, each cut to FATAL_LINE_MAX bytes. */
#define FATAL_MAX_LINES 4
#define FATAL_LINE_MAX 300

struct fatal_watch {
	const char *markers[8];
	size_t n_markers, max_len;
	char path[512];
	int fd;			/* the output, opened once the program made it */
	off_t off;		/* scanned up to here */
	json_object *lines;	/* the fatal lines seen, NULL before the first */
	long long first_ns;	/* when the first was seen */
};

/* Watch the file PATH for the strings of MARKERS (a JSON array, or NULL:
 * nothing to watch); the strings stay MARKERS'. */
void fatal_watch_init(struct fatal_watch *w, json_object *markers, const char *path);
/* Scan what the program wrote since the last call; NOW_NS is recorded with
 * the first fatal line.  True once a fatal line has been seen.  Markers may
 * sit in the middle of a line (a crash handler's stderr cuts into buffered
 * stdout): the line kept is the whole line, or the marker up to its end
 * when the line is long. */
bool fatal_watch_scan(struct fatal_watch *w, long long now_ns);
void fatal_watch_free(struct fatal_watch *w);

#endif
