// SPDX-License-Identifier: GPL-2.0
/* agent_escape.c — test fault "escape=HOSTPATH": try, as guest root, to
 * create the host file HOSTPATH outside the run directory, every way a
 * guest could: a hostfs mount of its host directory (UML), the read-only
 * root remounted read-write (UML's hostfs, QEMU's 9p), and the root's 9p
 * share mounted a second time, read-write (QEMU).  The host's confinement
 * (harness/confine.c) must make each fail; what happened goes into
 * result.json as "escape": {"target", "attempts": [{"how", "mounted",
 * "wrote", "error"}], "wrote"}.  The job then runs as usual.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

/* Create PATH and write to it, through to the host. */
static int write_file(const char *path)
{
	static const char text[] = "written by a bpfuml guest\n";
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, sizeof(text) - 1) < 0 || fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

static void record(json_object *attempts, const char *how, bool mounted, int err,
		   bool *wrote)
{
	json_object *a = json_object_new_object();

	json_object_object_add(a, "how", json_object_new_string(how));
	json_object_object_add(a, "mounted", json_object_new_boolean(mounted));
	json_object_object_add(a, "wrote", json_object_new_boolean(!err));
	json_object_object_add(a, "error", err ? json_object_new_string(strerror(-err)) : NULL);
	json_object_array_add(attempts, a);
	*wrote |= !err;
}

/* Mount TYPE from SOURCE with DATA at a fresh directory, then write the
 * host file as REL below it. */
static void try_mount(json_object *attempts, const char *how, const char *source,
		      const char *type, const char *data, const char *rel, bool *wrote)
{
	char dir[64], path[4200];
	int err;

	snprintf(dir, sizeof(dir), "/tmp/escape-%s", how);
	mkdir(dir, 0755);
	if (mount(source, dir, type, 0, data)) {
		record(attempts, how, false, -errno, wrote);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	err = write_file(path);
	record(attempts, how, true, err, wrote);
	umount2(dir, MNT_DETACH);
}

void agent_try_escape(const char *target, json_object *result)
{
	json_object *escape = json_object_new_object(), *attempts = json_object_new_array();
	char dir[4096];
	const char *base;
	bool wrote = false;
	int err;

	json_object_object_add(escape, "target", json_object_new_string(target));
	base = strrchr(target, '/');
	if (target[0] != '/' || !base || !base[1]) {
		json_object_object_add(escape, "error", json_object_new_string("not an absolute file path"));
		goto out;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)(base - target) ?: 1, target);

	/* UML: hostfs reaches any host path, whatever the root is. */
	try_mount(attempts, "hostfs", "none", "hostfs", dir, base + 1, &wrote);
	/* QEMU: the root's 9p share (tag /dev/root) once more, read-write. */
	try_mount(attempts, "9p-root-tag", "/dev/root", "9p", "trans=virtio,version=9p2000.L",
		  target + 1, &wrote);
	/* Both: the read-only root made writable.  A host /tmp path is under
	 * the guest's tmpfs: bind the host's directory over it first. */
	if (mount(NULL, "/", NULL, MS_REMOUNT, NULL)) {
		record(attempts, "remount-root-rw", false, -errno, &wrote);
	} else {
		agent_expose_host_tmp(target);
		err = write_file(target);
		record(attempts, "remount-root-rw", true, err, &wrote);
		mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY, NULL);
	}
out:
	json_object_object_add(escape, "attempts", attempts);
	json_object_object_add(escape, "wrote", json_object_new_boolean(wrote));
	json_object_object_add(result, "escape", escape);
}
