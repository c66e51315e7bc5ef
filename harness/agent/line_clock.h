/* SPDX-License-Identifier: GPL-2.0 */
/* line_clock.h — the exec job's clock on a program's output: when each line
 * that starts with a given prefix appeared (agent_exec.c, job field
 * "time_lines"; result "line_times": [[line, ms since start], ...]).
 *
 * test_progs prints one "#N name:OK" line as each test ends and records no
 * durations of its own; the times of those lines are the tests' durations,
 * which `kselftest --shard --durations` balances CI jobs by.
 */
#ifndef BPFUML_LINE_CLOCK_H
#define BPFUML_LINE_CLOCK_H

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#define LINE_CLOCK_MAX_LINES 8192	/* the rest go untimed */
#define LINE_CLOCK_LINE_MAX 256		/* each cut to this many bytes */

struct line_clock {
	char prefix[16];	/* "" = off */
	char path[512];
	int fd;			/* the output, opened once the program made it */
	off_t off;		/* read up to here */
	char line[LINE_CLOCK_LINE_MAX + 1];
	size_t line_len;	/* of the line being read, cut at LINE_CLOCK_LINE_MAX */
	long long start_ns;
	json_object *times;
};

/* Time the lines of the file PATH that start with PREFIX (NULL or "": off),
 * in milliseconds since START_NS. */
void line_clock_init(struct line_clock *c, const char *prefix, const char *path, long long start_ns);
/* Read what the program wrote since the last call; each complete line is
 * stamped NOW_NS. */
void line_clock_scan(struct line_clock *c, long long now_ns);
static inline bool line_clock_on(const struct line_clock *c) { return c->prefix[0]; }
/* The [line, ms] pairs (a new reference; NULL when off). */
json_object *line_clock_times(struct line_clock *c);
void line_clock_free(struct line_clock *c);

#endif
