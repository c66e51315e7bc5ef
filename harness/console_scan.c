// SPDX-License-Identifier: GPL-2.0
/* console_scan.c — what a guest's console says about its kernel: the lines
 * of kernel_trouble.def, found anywhere in it, and its last lines. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "console_scan.h"

/* Lines that mean the kernel itself is in trouble. */
static const char *const trouble_markers[] = {
#define TROUBLE(text) text,
#include "kernel_trouble.def"
#undef TROUBLE
};

char *console_find_trouble(const char *log, size_t len)
{
	const char *line = log, *end = log + len, *start = NULL;
	size_t i, lines = 0, out_len;
	char *out;

	while (line < end && !start) {
		const char *eol = memchr(line, '\n', end - line) ?: end;

		for (i = 0; i < sizeof(trouble_markers) / sizeof(trouble_markers[0]); i++)
			if (memmem(line, eol - line, trouble_markers[i], strlen(trouble_markers[i])))
				start = line;
		line = eol + 1;
	}
	if (!start)
		return NULL;
	/* The marker line and what follows: the trace that explains it. */
	for (line = start; line < end && lines < 25; lines++) {
		const char *eol = memchr(line, '\n', end - line);

		line = eol ? eol + 1 : end;
	}
	out_len = line - start;
	out = malloc(out_len + 1);
	if (out) {
		memcpy(out, start, out_len);
		out[out_len] = '\0';
	}
	return out;
}

char *console_tail(const char *log, size_t len)
{
	const char *p = log + len;
	int lines = 0;

	while (p > log && lines <= 15)
		if (*--p == '\n')
			lines++;
	return strdup(p == log ? p : p + 1);
}
