// SPDX-License-Identifier: GPL-2.0
/* session.c — run directory, guest boot, result collection, clean-up. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "bpfuml.h"
#include "guest_result.h"
#include "run_dir.h"
#include "session.h"
#include "console_scan.h"
#include "serve_proto.h"

volatile int session_interrupted;
/* Every session between session_create() and session_destroy(): the
 * signal handler kills their guests.  Changed with the signals blocked. */
static struct session *live_sessions;

static void on_sigpipe(int sig)
{
	/* Nothing: the write that raised it fails with EPIPE instead. */
}

static void on_signal(int sig)
{
	session_interrupted = sig;
	/* Kill at once: the main flow then removes the run directories. */
	for (struct session *s = live_sessions; s; s = s->next_live)
		vm_kill_from_signal(s->vm);
}

static void live_list_change(struct session *s, bool add)
{
	sigset_t block, old;
	struct session **p;

	sigfillset(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (add) {
		s->next_live = live_sessions;
		live_sessions = s;
	} else {
		for (p = &live_sessions; *p; p = &(*p)->next_live)
			if (*p == s) {
				*p = s->next_live;
				break;
			}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static const int stopping_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

int session_ppoll(struct pollfd *pfd, nfds_t n, int timeout_ms)
{
	struct timespec ts = { .tv_sec = timeout_ms / 1000, .tv_nsec = (timeout_ms % 1000) * 1000000L };
	sigset_t stopping, old;
	int ret;

	sigemptyset(&stopping);
	for (size_t i = 0; i < sizeof(stopping_signals) / sizeof(stopping_signals[0]); i++)
		sigaddset(&stopping, stopping_signals[i]);
	/* Looked at with the signals blocked, and unblocked by ppoll() itself:
	 * one that comes in between wakes it instead of being missed. */
	sigprocmask(SIG_BLOCK, &stopping, &old);
	if (session_interrupted) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		errno = EINTR;
		return -1;
	}
	ret = ppoll(pfd, n, timeout_ms < 0 ? NULL : &ts, &old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

void session_install_signal_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */

	for (size_t i = 0; i < sizeof(stopping_signals) / sizeof(stopping_signals[0]); i++)
		sigaction(stopping_signals[i], &sa, NULL);
	sa.sa_handler = on_sigpipe;
	sigaction(SIGPIPE, &sa, NULL);
}

/* ---- removal -------------------------------------------------------------- */

/* Deeper than this, a directory is left (each level holds a descriptor). */
#define REMOVE_MAX_DEPTH 200

/* Remove NAME in DIR_FD and everything below it, going on past what cannot
 * be removed: the guest may have left a directory without permissions (it
 * is ours on the host, so we give them back) or a deep tree. */
static void remove_at(int dir_fd, const char *name, int depth)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd;

	if (!unlinkat(dir_fd, name, 0) || errno == ENOENT)
		return;
	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
	    depth > REMOVE_MAX_DEPTH)
		return;
	fchmodat(dir_fd, name, 0700, 0);
	fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			remove_at(dirfd(d), e->d_name, depth + 1);
	closedir(d);
	unlinkat(dir_fd, name, AT_REMOVEDIR);
}

void session_remove_tree(const char *path)
{
	remove_at(AT_FDCWD, path, 0);
}

/* ---- owner: a run directory whose harness is gone is swept ----------------- */

/* The identity of process PID: its start time in clock ticks since boot
 * (pids are reused, start times with them are not), and its PID namespace
 * (another namespace's pids mean nothing here).  0 when it is gone. */
static int process_identity(pid_t pid, unsigned long long *start, unsigned long *pidns)
{
	char path[64], buf[1024], *p;
	struct stat st;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* After the command name (which may hold spaces and parentheses),
	 * field 22 is the start time. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 0;
	*start = strtoull(p + 1, NULL, 10);
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	*pidns = stat(path, &st) ? 0 : (unsigned long)st.st_ino;
	return 1;
}

#define OWNER_FILE "owner"

static void write_owner(struct session *s)
{
	unsigned long long start;
	unsigned long pidns;
	char text[128];

	if (!process_identity(getpid(), &start, &pidns))
		return;
	snprintf(text, sizeof(text), "%d %llu %lu\n", (int)getpid(), start, pidns);
	session_write_file(s, OWNER_FILE, text);
}

/* Whether the run directory NAME in BASE_FD belongs to a harness that is
 * gone: killed with SIGKILL, it could not remove it.  Directories without
 * an owner file (kept with --keep, or just being made) stay. */
static int owner_gone(int base_fd, const char *name)
{
	unsigned long long start, owner_start;
	unsigned long pidns, owner_pidns;
	char *text = NULL;
	int fd, gone = 0, pid;

	fd = openat(base_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!guest_file_read(fd, OWNER_FILE, 256, &text, NULL) &&
	    sscanf(text, "%d %llu %lu", &pid, &owner_start, &owner_pidns) == 3 && pid > 0 &&
	    process_identity(getpid(), &start, &pidns) && pidns == owner_pidns)
		gone = !process_identity(pid, &start, &pidns) || start != owner_start;
	free(text);
	close(fd);
	return gone;
}

static void sweep(const char *base)
{
	static int swept;
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (swept++)
		return;		/* once per process: bench makes many sessions */
	d = opendir(base);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "bpfuml.", 7) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || !owner_gone(dirfd(d), e->d_name))
			continue;
		remove_at(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

int session_base_dir(char *buf, size_t size)
{
	const char *base = getenv("BPFUML_RUNDIR") ?: "/dev/shm";
	char cwd[PATH_MAX] = "";
	struct stat st;
	int err;

	/* UML's memory file goes into the run directory: keep it on tmpfs. */
	if (stat(base, &st) || !S_ISDIR(st.st_mode) || access(base, W_OK))
		base = getenv("TMPDIR") ?: "/tmp";
	/* Absolute: the guest mounts it from the host's /. */
	if (base[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return -errno;
	err = snprintf(buf, size, "%s%s%s", cwd, cwd[0] ? "/" : "", base);
	if (err < 0 || err >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

int session_create(struct session *s)
{
	char base[PATH_MAX];
	int err;

	memset(s, 0, sizeof(*s));
	s->dir_fd = -1;
	snprintf(s->guest_dir, sizeof(s->guest_dir), "%s", RUN_DIR_IN_GUEST);
	err = session_base_dir(base, sizeof(base));
	if (err)
		return err;
	sweep(base);
	live_list_change(s, true);
	if (snprintf(s->run_dir, sizeof(s->run_dir), "%s/bpfuml.XXXXXX", base) >= (int)sizeof(s->run_dir))
		err = -ENAMETOOLONG;
	else if (!mkdtemp(s->run_dir))
		err = -errno;
	if (err) {
		s->run_dir[0] = '\0';
		live_list_change(s, false);
		return err;
	}
	s->dir_fd = open(s->run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dir_fd < 0) {
		err = -errno;
		rmdir(s->run_dir);
		s->run_dir[0] = '\0';
		live_list_change(s, false);
		return err;
	}
	write_owner(s);
	return 0;
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

/* A new file NAME in the run directory: never through a link or a FIFO
 * that a guest left there. */
static int create_file(struct session *s, const char *name)
{
	int fd;

	if (!guest_name_ok(name))
		return -EINVAL;
	unlinkat(s->dir_fd, name, 0);
	fd = openat(s->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

int session_add_file(struct session *s, const char *name, const char *src)
{
	char buf[65536];
	int in, out, err = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = create_file(s, name);
	if (out < 0) {
		err = out;
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
	int fd = create_file(s, name), err;

	if (fd < 0)
		return fd;
	err = write_all(fd, text, strlen(text));
	close(fd);
	return err;
}

int session_read_file(struct session *s, const char *name, char **buf, size_t *len)
{
	return guest_file_read(s->dir_fd, name, guest_file_cap(name), buf, len);
}

int session_read_result(struct session *s, const char *command)
{
	char why[512], *text;
	size_t len;
	int err;

	json_object_put(s->result);
	s->result = NULL;
	err = session_read_file(s, RESULT_FILE, &text, &len);
	if (err == -ENOENT)
		return err;
	if (err) {
		snprintf(why, sizeof(why), "result.json is %s", guest_file_strerror(err));
	} else {
		s->result = guest_result_parse(text, len, command, s->dir_fd, why, sizeof(why));
		free(text);
		if (s->result)
			return 0;
	}
	free(s->trouble);
	s->trouble = strdup(why);
	return -EPROTO;
}

static void session_ended(struct session *s, enum session_status status);

/* ---- a job for a warm guest of `bpfuml serve` (serve_proto.h) ------------- */

static const char *const status_names[] = {
	[SESSION_OK] = "ok",
	[SESSION_TIMEOUT] = "timeout",
	[SESSION_NO_ANSWER] = "no-answer",
	[SESSION_KERNEL_TROUBLE] = "kernel",
	[SESSION_START_FAILED] = "start-failed",
	[SESSION_INTERRUPTED] = "interrupted",
	[SESSION_MALFORMED] = "malformed",
};

const char *session_status_name(enum session_status status)
{
	return (size_t)status < sizeof(status_names) / sizeof(status_names[0]) ? status_names[status] : "?";
}

int session_status_parse(const char *name)
{
	for (size_t i = 0; name && i < sizeof(status_names) / sizeof(status_names[0]); i++)
		if (status_names[i] && !strcmp(status_names[i], name))
			return (int)i;
	return -1;
}

/* Our own user's socket, or none: a server is believed about verdicts. */
static int connect_own_socket(const char *path, char *why, size_t why_size)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval answer_within = { .tv_sec = 10 };
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(why, why_size, "the socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	if (lstat(path, &st)) {
		snprintf(why, why_size, "no server at %s (%s)", path, strerror(errno));
		return -errno;
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != getuid()) {
		snprintf(why, why_size, "%s is not a socket of yours", path);
		return -EPERM;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		int err = -errno;

		snprintf(why, why_size, "no server answers at %s (%s)", path, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	/* The answer to "job" comes at once; a server that hangs is none. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &answer_within, sizeof(answer_within));
	return fd;
}

int session_connect(struct session *s, const char *socket, const char *backend,
		    const char *bpf_mode, const char *kernel_version, char *why, size_t why_size)
{
	json_object *msg = json_object_new_object(), *reply = NULL;
	const char *dir, *guest_dir, *server_backend;
	struct timeval forever = { 0 };
	int fd, err;

	memset(s, 0, sizeof(*s));
	s->dir_fd = -1;
	fd = connect_own_socket(socket, why, why_size);
	if (fd < 0) {
		json_object_put(msg);
		return fd;
	}
	json_object_object_add(msg, "op", json_object_new_string("job"));
	err = serve_send(fd, msg);
	json_object_put(msg);
	err = err ?: serve_recv(fd, &reply, 0);
	if (err) {
		snprintf(why, why_size, "the server at %s did not answer (%s)", socket,
			 err == -ECONNRESET ? "it closed the connection" : strerror(-err));
		goto fail;
	}
	dir = json_string_member(reply, "dir");
	guest_dir = json_string_member(reply, "guest_dir");
	server_backend = json_string_member(reply, "backend");
	if (!dir || !guest_dir || !server_backend) {
		snprintf(why, why_size, "the server at %s refused the job: %s", socket,
			 json_string_member(reply, "error") ?: "malformed answer");
		err = -EPROTO;
		goto fail;
	}
	if (strcmp(server_backend, backend)) {
		snprintf(why, why_size, "the server at %s runs --backend %s, not %s", socket,
			 server_backend, backend);
		err = -EPROTONOSUPPORT;
		goto fail;
	}
	if (strcmp(json_string_member(reply, "bpf_mode") ?: "", bpf_mode)) {
		snprintf(why, why_size, "the server at %s runs BPF with the %s, not the %s", socket,
			 json_string_member(reply, "bpf_mode") ?: "?", bpf_mode);
		err = -EPROTONOSUPPORT;
		goto fail;
	}
	if (kernel_version[0] && strcmp(json_string_member(reply, "kernel_version") ?: "", kernel_version)) {
		snprintf(why, why_size, "the server at %s boots kernel %s, not %s", socket,
			 json_string_member(reply, "kernel_version") ?: "?", kernel_version);
		err = -EPROTONOSUPPORT;
		goto fail;
	}
	if (snprintf(s->run_dir, sizeof(s->run_dir), "%s", dir) >= (int)sizeof(s->run_dir) ||
	    snprintf(s->guest_dir, sizeof(s->guest_dir), "%s", guest_dir) >= (int)sizeof(s->guest_dir)) {
		snprintf(why, why_size, "the server at %s gave a path too long", socket);
		err = -ENAMETOOLONG;
		goto fail;
	}
	s->dir_fd = open(s->run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0) {
		err = -errno;
		snprintf(why, why_size, "cannot open the server's job directory %s (%s)", s->run_dir,
			 strerror(errno));
		goto fail;
	}
	snprintf(s->confinement, sizeof(s->confinement), "%s", json_string_member(reply, "confinement") ?: "");
	s->mem_mb = json_int(reply, "mem_mb", 0);
	s->cpus = json_int(reply, "cpus", 0);
	s->backend = backend;
	s->bpf_mode = bpf_mode;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever));
	json_object_put(reply);
	s->server_fd = fd;
	s->warm = true;
	return 0;
fail:
	json_object_put(reply);
	close(fd);
	s->run_dir[0] = '\0';
	return err ?: -EPROTO;
}

static int warm_start(struct session *s, int timeout_s)
{
	json_object *msg = json_object_new_object();
	int err;

	json_object_object_add(msg, "op", json_object_new_string("run"));
	json_object_object_add(msg, "timeout_s", json_object_new_int(timeout_s));
	err = serve_send(s->server_fd, msg);
	json_object_put(msg);
	if (err)
		return err;
	s->start_ns = wall_ns();
	s->running = true;
	/* The server keeps the job's time-out; this one only outlives a
	 * server that stopped answering. */
	s->deadline_ms = mono_ms() + (timeout_s + 30) * 1000LL;
	return 0;
}

/* The server's answer to "run", when it has come. */
static bool warm_poll(struct session *s)
{
	json_object *reply = NULL;
	const char *trouble;
	int err, status;

	if (session_interrupted) {
		/* Closing the connection cancels the job at the server. */
		session_ended(s, SESSION_INTERRUPTED);
		return true;
	}
	err = serve_recv(s->server_fd, &reply, MSG_DONTWAIT);
	if (err == -EAGAIN) {
		if (mono_ms() < s->deadline_ms)
			return false;
		s->trouble = strdup("the server did not answer within the time-out and 30 s more");
		session_ended(s, SESSION_TIMEOUT);
		return true;
	}
	status = err ? -1 : session_status_parse(json_string_member(reply, "status"));
	trouble = reply ? json_string_member(reply, "trouble") : NULL;
	if (status < 0 || status == SESSION_INTERRUPTED) {
		status = SESSION_NO_ANSWER;
		trouble = err == -ECONNRESET ? "the server closed the connection before the job ended"
					     : "the server's answer is malformed";
	}
	if (trouble)
		s->trouble = strdup(trouble);
	session_ended(s, status);
	/* The guest's own clock on its job, as a cold guest's. */
	s->start_ns = json_int(reply, "start_ns", s->start_ns);
	s->exit_ns = json_int(reply, "exit_ns", s->exit_ns);
	json_object_put(reply);
	return true;
}

/* The console as the VM kept it (head and tail when it said too much):
 * scanned for kernel trouble, and kept as console.log with the run
 * directory. */
static void check_console(struct session *s)
{
	const char *log;
	char *found;
	size_t len;

	log = vm_console_text(s->vm, &len);
	if (!log)
		return;
	if (s->keep)
		session_write_file(s, "console.log", log);
	found = console_find_trouble(log, len);
	if (found) {
		free(s->trouble);
		s->trouble = found;
		s->status = SESSION_KERNEL_TROUBLE;
	} else if (s->status != SESSION_OK && !s->trouble) {
		s->trouble = console_tail(log, len);
	}
}

static int start(struct session *s, const struct bpfuml_paths *paths, json_object *job,
		 int timeout_s)
{
	const char *backend = s->backend ?: "uml";
	VM_OPTS(opts, .kernel = strcmp(backend, "qemu") ? paths->kernel : paths->qemu_kernel,
		.init = paths->agent, .run_dir = s->run_dir,
		.mem_mb = s->mem_mb ?: SESSION_MEM_MB, .cpus = s->cpus);
	json_object *command = NULL;
	int err;

	opts.channel_fd = s->channel_fd;
	/* Only what differs from the kernel's own default goes on its
	 * command line: UML interprets, x86_64 JITs. */
	opts.bpf_jit = -1;
	if (s->bpf_mode && strcmp(s->bpf_mode, bpf_mode_default(backend)))
		opts.bpf_jit = !strcmp(s->bpf_mode, "jit");
	/* Until the guest answers, this run has failed to start. */
	s->status = SESSION_START_FAILED;
	json_object_object_get_ex(job, "command", &command);
	snprintf(s->command, sizeof(s->command), "%s", json_object_get_string(command) ?: "");
	err = session_write_file(s, JOB_FILE, json_object_to_json_string_ext(job, JSON_C_TO_STRING_PLAIN));
	if (err)
		return err;
	if (s->server_fd > 0)
		return warm_start(s, timeout_s);
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
	s->running = true;
	s->deadline_ms = mono_ms() + timeout_s * 1000LL;
	return 0;
}

int session_start(struct session *s, const struct bpfuml_paths *paths, json_object *job,
		  int timeout_s)
{
	s->start_err = start(s, paths, job, timeout_s);
	return s->start_err;
}

static void session_ended(struct session *s, enum session_status status)
{
	s->running = false;
	s->exit_ns = wall_ns();
	s->status = status;
	if (status == SESSION_INTERRUPTED)
		return;
	if (status == SESSION_OK) {
		int err = session_read_result(s, s->command);

		s->status = !err ? SESSION_OK : err == -EPROTO ? SESSION_MALFORMED : SESSION_NO_ANSWER;
		if (err == -ENOENT && s->server_fd > 0 && !s->trouble)
			s->trouble = strdup("the job's process in the warm guest ended without a result");
	}
	if (s->server_fd <= 0)
		check_console(s);
}

bool session_poll(struct session *s)
{
	struct vm_exit exit = { 0 };
	int err;

	if (!s->running)
		return true;
	if (s->server_fd > 0)
		return warm_poll(s);
	if (session_interrupted) {
		vm_kill(s->vm);
		session_ended(s, SESSION_INTERRUPTED);
		return true;
	}
	err = vm_wait(s->vm, 0, &exit);
	if (err == -ETIMEDOUT || err == -EINTR) {
		/* Still running: the deadline decides. */
		if (mono_ms() < s->deadline_ms)
			return false;
		vm_kill(s->vm);
		session_ended(s, SESSION_TIMEOUT);
		return true;
	}
	/* Ended by itself (or lost: err says so, and no result will be). */
	session_ended(s, SESSION_OK);
	return true;
}

void session_wait_any(struct session *const *ss, size_t n)
{
	struct pollfd pfd[n * VM_POLL_FDS + 1];
	long long now = mono_ms(), wait_ms = INT_MAX;
	size_t i;
	int nfd = 0;

	for (i = 0; i < n; i++) {
		if (!ss[i]->running)
			return;		/* news already */
		if (ss[i]->deadline_ms - now < wait_ms)
			wait_ms = ss[i]->deadline_ms - now;
		if (ss[i]->server_fd > 0)
			pfd[nfd++] = (struct pollfd){ .fd = ss[i]->server_fd, .events = POLLIN };
		else
			nfd += vm_poll_fds(ss[i]->vm, pfd + nfd, &wait_ms);
	}
	if (wait_ms < 0)
		wait_ms = 0;
	session_ppoll(pfd, nfd, (int)wait_ms);	/* EINTR: session_poll() sees the signal */
}

int session_run(struct session *s, const struct bpfuml_paths *paths, json_object *job,
		int timeout_s)
{
	int err = session_start(s, paths, job, timeout_s);

	if (err)
		return err;
	while (!session_poll(s))
		session_wait_any(&s, 1);
	return s->status == SESSION_INTERRUPTED ? -EINTR : 0;
}

/* The kernel's own words when memory ran out with nothing it could free. */
static bool out_of_memory(const char *console)
{
	return strstr(console, "System is deadlocked on memory") ||
	       strstr(console, "Out of memory and no killable processes");
}

char *session_failure_text(const struct session *s, int timeout_s, const char **category)
{
	const char *trouble = s->trouble ?: "";
	char *text = NULL;
	int n = -1;

	switch (s->status) {
	case SESSION_OK:
		*category = "ok";
		n = asprintf(&text, "the guest answered");
		break;
	case SESSION_INTERRUPTED:
		*category = "interrupted";
		n = asprintf(&text, "interrupted; the guest was killed and its files removed");
		break;
	case SESSION_TIMEOUT:
		*category = "timeout";
		n = asprintf(&text, "the guest did not finish within %d s (--timeout); it was killed.\n"
			     "Last console lines:\n%s", timeout_s, trouble);
		break;
	case SESSION_KERNEL_TROUBLE:
		*category = "kernel";
		if (out_of_memory(trouble))
			n = asprintf(&text, "the guest kernel reported trouble (console):\n%s\nThe guest "
				     "ran out of its %u MiB of memory: maps are allocated when an object "
				     "loads, and large ones need more; give it more with --mem MB (verify, "
				     "kselftest, serve).", trouble, s->mem_mb ?: SESSION_MEM_MB);
		else
			n = asprintf(&text, "the guest kernel reported trouble (console):\n%s", trouble);
		break;
	case SESSION_MALFORMED:
		*category = "malformed";
		n = asprintf(&text, "the guest's result is malformed: %s; a guest that breaks the rules "
			     "is not believed (a kernel or agent fault: report it with --keep's run "
			     "directory)", *trouble ? trouble : "?");
		break;
	case SESSION_NO_ANSWER:
		*category = "no-answer";
		n = asprintf(&text, "the guest ended without a result.\nLast console lines:\n%s", trouble);
		break;
	case SESSION_START_FAILED:
	default:
		*category = "infrastructure";
		n = asprintf(&text, "cannot start the guest: %s",
			     strerror(s->start_err < 0 ? -s->start_err : EIO));
	}
	return n < 0 ? NULL : text;
}

void session_destroy(struct session *s)
{
	/* The handler never sees a VM being freed (vm_free kills it anyway). */
	live_list_change(s, false);
	vm_free(s->vm);
	s->vm = NULL;
	/* A kept directory has no owner: nobody sweeps it. */
	if (s->dir_fd >= 0 && s->keep)
		unlinkat(s->dir_fd, OWNER_FILE, 0);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	s->dir_fd = -1;
	if (s->server_fd > 0) {
		/* The job directory is the server's: it removes it. */
		close(s->server_fd);
		s->server_fd = 0;
	} else if (s->run_dir[0] && !s->keep) {
		session_remove_tree(s->run_dir);
	}
	json_object_put(s->result);
	free(s->trouble);
	s->result = NULL;
	s->trouble = NULL;
}
