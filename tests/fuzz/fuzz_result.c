// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the host's reading of a guest's result.json
 * (harness/guest_result.c) on arbitrary bytes.  The input is written as
 * result.json into a run directory that also holds what a hostile guest
 * leaves: a verifier log that is a symbolic link to a host file, one that is
 * a FIFO (a blocking open would hang the target: libFuzzer's timeout finds
 * it), a regular one, data_out.bin; then it is read with guest_file_read()
 * and checked as the result of every kind of job.  A document that passes
 * is walked the way the commands walk it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "guest_result.h"

static int dir_fd = -1;

static void setup(void)
{
	char dir[] = "/tmp/fuzz_result.XXXXXX";
	int fd;

	if (!mkdtemp(dir))
		abort();
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		abort();
	for (int i = 0; i < 2; i++) {
		fd = openat(dir_fd, i ? "obj-0-prog-0.log" : "prog-0.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "func#0 @0\n0: R1=ctx() R10=fp0\n", 31) != 31)
			abort();
		close(fd);
	}
	fd = openat(dir_fd, "data_out.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	symlinkat("/etc/passwd", dir_fd, "prog-1.log");
	mkfifoat(dir_fd, "prog-2.log", 0644);
	mkfifoat(dir_fd, "obj-0-prog-1.log", 0644);
	symlinkat("/etc/passwd", dir_fd, "probe-0.log");
}

/* What the commands do with a checked document: every string, number and
 * array they read. */
static void walk(json_object *v, int depth)
{
	if (depth > 64)
		return;
	switch (json_object_get_type(v)) {
	case json_type_object: {
		json_object_object_foreach(v, key, value) {
			(void)key;
			walk(value, depth + 1);
		}
		break;
	}
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(v); i++)
			walk(json_object_array_get_idx(v, i), depth + 1);
		break;
	default:
		(void)json_object_get_string(v);
		(void)json_object_get_int64(v);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const commands[] = { "verify", "run", "probe", "bench", "exec", NULL };
	char why[512], *text = NULL;
	size_t len = 0, i;
	int fd;

	if (dir_fd < 0)
		setup();
	unlinkat(dir_fd, "result.json", 0);
	fd = openat(dir_fd, "result.json", O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	if (guest_file_read(dir_fd, "result.json", guest_file_cap("result.json"), &text, &len))
		abort();
	if (len != size || memcmp(text, data, size))
		abort();
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		json_object *r = guest_result_parse(text, len, commands[i], dir_fd, why, sizeof(why));

		if (r) {
			walk(r, 0);
			json_object_put(r);
		} else if (!why[0]) {
			abort();	/* a refusal always says why */
		}
		why[0] = '\0';
	}
	/* The names a hostile result may give. */
	for (i = 0; i < 3; i++) {
		char *file = NULL;
		static const char *const names[] = { "prog-1.log", "prog-2.log", "../result.json" };

		if (!guest_file_read(dir_fd, names[i], GUEST_FILE_MAX, &file, NULL))
			abort();	/* a link, a FIFO, a path: never read */
		free(file);
	}
	free(text);
	return 0;
}
