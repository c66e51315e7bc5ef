// SPDX-License-Identifier: GPL-2.0
/* line_clock.c — when each timed line of a program's output appeared. */
#include "line_clock.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void line_clock_init(struct line_clock *c, const char *prefix, const char *path, long long start_ns)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->start_ns = start_ns;
	if (!prefix || !*prefix)
		return;
	snprintf(c->prefix, sizeof(c->prefix), "%s", prefix);
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->times = json_object_new_array();
}

static void line_done(struct line_clock *c, long long now_ns)
{
	size_t plen = strlen(c->prefix);

	c->line[c->line_len] = '\0';
	if (c->line_len >= plen && !memcmp(c->line, c->prefix, plen) &&
	    json_object_array_length(c->times) < LINE_CLOCK_MAX_LINES) {
		json_object *pair = json_object_new_array();

		json_object_array_add(pair, json_object_new_string(c->line));
		json_object_array_add(pair, json_object_new_int64((now_ns - c->start_ns) / 1000000));
		json_object_array_add(c->times, pair);
	}
	c->line_len = 0;
}

void line_clock_scan(struct line_clock *c, long long now_ns)
{
	char buf[4096];
	ssize_t got;

	if (!line_clock_on(c))
		return;
	if (c->fd < 0 && (c->fd = open(c->path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	while ((got = pread(c->fd, buf, sizeof(buf), c->off)) > 0) {
		c->off += got;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] == '\n')
				line_done(c, now_ns);
			else if (c->line_len < LINE_CLOCK_LINE_MAX)
				c->line[c->line_len++] = buf[i];
		}
	}
}

json_object *line_clock_times(struct line_clock *c)
{
	return c->times ? json_object_get(c->times) : NULL;
}

void line_clock_free(struct line_clock *c)
{
	if (c->fd >= 0)
		close(c->fd);
	json_object_put(c->times);
	c->times = NULL;
	c->fd = -1;
}
