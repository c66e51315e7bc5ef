// SPDX-License-Identifier: GPL-2.0
/* fatal_watch.c — lines that mean a program is done for, found in its
 * output as it grows (fatal_watch.h says why). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fatal_watch.h"

void fatal_watch_init(struct fatal_watch *w, json_object *markers, const char *path)
{
	json_object *item;
	size_t i, n;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	snprintf(w->path, sizeof(w->path), "%s", path);
	if (!markers || !json_object_is_type(markers, json_type_array))
		return;
	n = json_object_array_length(markers);
	for (i = 0; i < n && w->n_markers < sizeof(w->markers) / sizeof(w->markers[0]); i++) {
		item = json_object_array_get_idx(markers, i);
		if (!json_object_is_type(item, json_type_string) || !json_object_get_string_len(item))
			continue;
		w->markers[w->n_markers] = json_object_get_string(item);
		if (strlen(w->markers[w->n_markers]) > w->max_len)
			w->max_len = strlen(w->markers[w->n_markers]);
		w->n_markers++;
	}
}

/* The earliest marker in BUF[0..LEN), or NULL. */
static char *fatal_find(const struct fatal_watch *w, char *buf, size_t len)
{
	char *best = NULL, *p;
	size_t i;

	for (i = 0; i < w->n_markers; i++) {
		p = memmem(buf, best ? (size_t)(best - buf) : len, w->markers[i], strlen(w->markers[i]));
		if (p)
			best = p;
	}
	return best;
}

bool fatal_watch_scan(struct fatal_watch *w, long long now_ns)
{
	static char buf[65536];
	ssize_t n;

	if (!w->n_markers)
		return false;
	if (w->fd < 0)
		w->fd = open(w->path, O_RDONLY | O_CLOEXEC);
	if (w->fd < 0)
		return false;
	while ((n = pread(w->fd, buf, sizeof(buf), w->off)) > 0) {
		char *hit = fatal_find(w, buf, n), *eol, *start;

		if (hit) {
			/* The whole line, when it is short enough. */
			start = memrchr(buf, '\n', hit - buf);
			start = start ? start + 1 : buf;
			eol = memchr(hit, '\n', buf + n - hit);
			if (!eol && start > buf) {
				w->off += start - buf;	/* the whole line next time */
				break;
			}
			if (!eol && n < (ssize_t)sizeof(buf))
				break;
			if (!eol)
				eol = buf + n;
			if (eol - start > FATAL_LINE_MAX)
				start = hit;
			if (!w->lines) {
				w->lines = json_object_new_array();
				w->first_ns = now_ns;
			}
			if (json_object_array_length(w->lines) < FATAL_MAX_LINES)
				json_object_array_add(w->lines, json_object_new_string_len(
					start, eol - start < FATAL_LINE_MAX ? eol - start : FATAL_LINE_MAX));
			w->off += eol - buf + (eol < buf + n);
			continue;
		}
		if ((size_t)n < w->max_len)
			break;
		w->off += n - (w->max_len - 1);	/* a marker may straddle reads */
		if (n < (ssize_t)sizeof(buf))
			break;
	}
	return w->lines != NULL;
}

void fatal_watch_free(struct fatal_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	json_object_put(w->lines);
	w->lines = NULL;
}
