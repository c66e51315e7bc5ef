// SPDX-License-Identifier: GPL-2.0
/* session.c — run directory, guest boot, result collection, clean-up. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

volatile int session_interrupted;
static struct session *signal_session;

static long long wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void on_signal(int sig)
{
	session_interrupted = sig;
	/* Kill at once: the main flow then removes the run directory. */
	if (signal_session)
		vm_kill_from_signal(signal_session->vm);
}

void session_install_signal_handlers(struct session *s)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */

	signal_session = s;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int session_base_dir(char *buf, size_t size)
{
	const char *base = getenv("BPFUML_RUNDIR") ?: "/dev/shm";
	char cwd[PATH_MAX] = "";
	struct stat st;

	/* UML's memory file goes into the run directory: keep it on tmpfs. */
	if (stat(base, &st) || !S_ISDIR(st.st_mode) || access(base, W_OK))
		base = getenv("TMPDIR") ?: "/tmp";
	/* Absolute: the guest mounts it from the host's /. */
	if (base[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return -errno;
	if (snprintf(buf, size, "%s%s%s", cwd, cwd[0] ? "/" : "", base) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

int session_create(struct session *s)
{
	char base[PATH_MAX];
	int err;

	memset(s, 0, sizeof(*s));
	err = session_base_dir(base, sizeof(base));
	if (err)
		return err;
	if (snprintf(s->run_dir, sizeof(s->run_dir), "%s/bpfuml.XXXXXX", base) >= (int)sizeof(s->run_dir))
		err = -ENAMETOOLONG;
	else if (!mkdtemp(s->run_dir))
		err = -errno;
	if (err)
		s->run_dir[0] = '\0';
	return err;
}

int session_check_space(const char *dir, unsigned int guests, unsigned int mem_mb, bool mem_file,
			unsigned long long *need_mb, unsigned long long *free_mb)
{
	struct statvfs st;

	if (statvfs(dir, &st))
		return -errno;
	*free_mb = (unsigned long long)st.f_bavail * st.f_frsize >> 20;
	*need_mb = (unsigned long long)guests * ((mem_file ? mem_mb : 0) + SESSION_SPACE_MARGIN_MB);
	return *need_mb > *free_mb ? -ENOSPC : 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int session_add_file(struct session *s, const char *name, const char *src)
{
	char path[PATH_MAX + 64], buf[65536];
	int in, out, err = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", s->run_dir, name);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if ((err = write_all(out, buf, n)))
			break;
	if (n < 0)
		err = -errno;
	close(in);
	close(out);
	return err;
}

int session_write_file(struct session *s, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", s->run_dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = write_all(fd, text, strlen(text));
	close(fd);
	return err;
}

int session_read_file(struct session *s, const char *name, char **buf, size_t *len)
{
	char path[PATH_MAX + 64];
	struct stat st;
	char *data;
	size_t done = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", s->run_dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !(data = malloc(st.st_size + 1))) {
		err = -ENOMEM;
		goto out;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, data + done, st.st_size - done);

		if (n <= 0)
			break;
		done += n;
	}
	data[done] = '\0';
	*buf = data;
	if (len)
		*len = done;
out:
	close(fd);
	return err;
}

/* Lines that mean the kernel itself is in trouble. */
static const char *const trouble_markers[] = {
	"Kernel panic", "BUG:", "Oops", "WARNING:", "general protection fault",
	"------------[ cut here ]------------", "Segfault with no mm",
	"Attempted to kill init",
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

/* The last lines of the console, when nothing better explains a failure. */
static char *console_tail(const char *log, size_t len)
{
	const char *p = log + len;
	int lines = 0;

	while (p > log && lines <= 15)
		if (*--p == '\n')
			lines++;
	return strdup(p == log ? p : p + 1);
}

static void check_console(struct session *s)
{
	char *log;
	size_t len;

	if (session_read_file(s, "console.log", &log, &len))
		return;
	s->trouble = console_find_trouble(log, len);
	if (s->trouble)
		s->status = SESSION_KERNEL_TROUBLE;
	else if (s->status != SESSION_OK)
		s->trouble = console_tail(log, len);
	free(log);
}

int session_run(struct session *s, const struct bpfuml_paths *paths, json_object *job,
		int timeout_s)
{
	const char *backend = s->backend ?: "uml";
	VM_OPTS(opts, .kernel = strcmp(backend, "qemu") ? paths->kernel : paths->qemu_kernel,
		.init = paths->agent, .run_dir = s->run_dir,
		.mem_mb = s->mem_mb ?: SESSION_MEM_MB, .cpus = s->cpus);
	struct vm_exit exit = { 0 };
	char *text;
	int err;

	/* Until the guest answers, this run has failed to start. */
	s->status = SESSION_START_FAILED;
	err = session_write_file(s, "job.json", json_object_to_json_string_ext(job, JSON_C_TO_STRING_PLAIN));
	if (err)
		return err;
	s->vm = vm_new(backend);
	if (!s->vm)
		return -errno;
	s->start_ns = wall_ns();
	err = vm_start(s->vm, &opts);
	s->accel = s->vm->accel;
	if (err) {
		if (session_interrupted)	/* e.g. during QEMU's KVM probe */
			s->status = SESSION_INTERRUPTED;
		return err;
	}
	if (session_interrupted) {
		vm_kill(s->vm);
		s->status = SESSION_INTERRUPTED;
		return -EINTR;
	}
	err = vm_wait(s->vm, timeout_s * 1000, &exit);
	s->exit_ns = wall_ns();
	if (err == -EINTR || session_interrupted) {
		vm_kill(s->vm);
		s->status = SESSION_INTERRUPTED;
		return -EINTR;
	}
	if (err == -ETIMEDOUT) {
		vm_kill(s->vm);
		s->status = SESSION_TIMEOUT;
	} else if (session_read_file(s, "result.json", &text, NULL) == 0) {
		s->result = json_tokener_parse(text);
		free(text);
		s->status = s->result ? SESSION_OK : SESSION_NO_ANSWER;
	} else {
		s->status = SESSION_NO_ANSWER;
	}
	check_console(s);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

void session_destroy(struct session *s)
{
	vm_free(s->vm);
	s->vm = NULL;
	if (signal_session == s)
		signal_session = NULL;
	if (s->run_dir[0] && !s->keep)
		nftw(s->run_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	json_object_put(s->result);
	free(s->trouble);
	s->result = NULL;
	s->trouble = NULL;
}
