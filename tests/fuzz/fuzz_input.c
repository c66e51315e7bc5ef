// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: harness/input.c's check of a file handed to verify/run
 * (input_check_object), on a file holding arbitrary bytes, and
 * input_is_source on the same bytes as a path.  The file is a memfd reached
 * through /proc/self/fd, so that a run writes nothing to disk.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "input.h"

static int fd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[4096], *name;

	if (fd < 0) {
		fd = memfd_create("fuzz_input", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	memset(msg, 0xff, sizeof(msg));
	/* A refusal's message is one terminated string. */
	if (input_check_object(path, msg, sizeof(msg)) != INPUT_OK && !memchr(msg, '\0', sizeof(msg)))
		abort();

	name = strndup((const char *)data, size);
	if (name) {
		input_is_source(name);
		free(name);
	}
	return 0;
}
