// SPDX-License-Identifier: GPL-2.0
/* guest.c — the boot and report helper shared by the guest programs of
 * tests/ (rhash_smoke, callback_slots, rhash_suite): each runs as PID 1 in
 * UML with the host's / read-only and one writable host directory.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "guest.h"

static FILE *result;
static const char *guest_name = "guest";

static int mount_one(const char *source, const char *target, const char *type,
		     unsigned long flags, const char *data)
{
	if (mount(source, target, type, flags, data) && errno != EBUSY) {
		fprintf(stderr, "%s: mount %s on %s: %s\n", guest_name, type, target,
			strerror(errno));
		return -errno;
	}
	return 0;
}

static int print_warnings(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int print_nothing(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

void guest_quiet_libbpf(void)
{
	libbpf_set_print(print_nothing);
}

const char *guest_boot(int argc, char **argv, const char *name)
{
	/* Programs and maps are file descriptors; some tests hold hundreds. */
	struct rlimit nofile = { 65536, 65536 };
	static char object[4096];

	guest_name = name;
	if (argc < 3) {
		fprintf(stderr, "usage: init=%s -- OBJECT RESULT_DIR\n", name);
		return NULL;
	}
	setrlimit(RLIMIT_NOFILE, &nofile);
	mount_one("proc", "/proc", "proc", 0, NULL);
	mount_one("sysfs", "/sys", "sysfs", 0, NULL);
	mount_one("bpf", "/sys/fs/bpf", "bpf", 0, NULL);
	mount_one("tmpfs", "/tmp", "tmpfs", 0, NULL);
	/* The root is the host's / read-only; only the host's result dir,
	 * mounted on the guest's tmpfs, is writable. */
	if (mkdir("/tmp/out", 0755) || mount_one("none", "/tmp/out", "hostfs", 0, argv[2]))
		return NULL;
	result = fopen("/tmp/out/result", "w");
	if (!result) {
		fprintf(stderr, "%s: cannot write /tmp/out/result: %s\n", name, strerror(errno));
		return NULL;
	}
	/* Line-buffered: what was reported survives a crash later on. */
	setvbuf(result, NULL, _IOLBF, 0);
	libbpf_set_print(print_warnings);
	snprintf(object, sizeof(object), "/tmp/out/%s", argv[1]);
	return object;
}

void guest_report(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(result ? result : stderr, fmt, ap);
	va_end(ap);
}

void guest_power_off(void)
{
	if (result)
		fclose(result);
	sync();
	reboot(RB_POWER_OFF);
	_exit(0);	/* not reached: PID 1 must not return */
}
