// SPDX-License-Identifier: GPL-2.0
/* cmd_serve.c — `bpfuml serve`: guests booted once and kept warm, doing the
 * jobs of verify/run/probe/exec clients (--server, BPFUML_SERVER) in
 * milliseconds instead of a boot each.
 *
 * One poll loop, as kselftest's: the listening socket, each client's
 * connection, each guest's job line (run_dir.h) and console.  A guest is a
 * session whose run directory outlives it: one that panics, hangs past a
 * job's time-out, is left holding a job's BPF objects, or loses a client in
 * the middle of a job is killed and a new one boots in the same directory,
 * so the jobs queued for it wait instead of failing.  The protocol with
 * clients is serve_proto.h's; what clients get is what a cold guest gives.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "bpfuml.h"
#include "kernels.h"
#include "confine.h"
#include "console_scan.h"
#include "options.h"
#include "run_dir.h"
#include "serve_proto.h"
#include "session.h"

#define SERVE_GUESTS_MAX 16
#define SERVE_CLIENTS_MAX 256
/* A guest that has not said "ready" this long after its start is dead. */
#define SERVE_BOOT_TIMEOUT_S 60
/* This many boots in a row that never got ready end the server. */
#define SERVE_BOOT_TRIES 3

/* BUSY: doing a job; CLEANING: answered, waiting for what the job held to
 * be let go (run_dir.h's "clean"). */
enum guest_state { GUEST_BOOTING, GUEST_READY, GUEST_BUSY, GUEST_CLEANING, GUEST_DOWN };
static const char *const guest_state_names[] = { "booting", "ready", "busy", "cleaning", "down" };

struct client;

struct warm_guest {
	int index;
	struct session s;		/* its run directory, and its VM */
	int line;			/* the host end of the job line */
	char in[SERVE_LINE_MAX * 4];	/* what the guest said, up to a newline */
	size_t in_len;
	enum guest_state state;
	struct client *job;		/* the one it is doing */
	long long deadline_ms;		/* of its boot, or of its job */
	long census_ready[5];		/* programs, maps, links, BTF, MemAvailable KiB */
	long census_last[5];
	long clean_wait_us;		/* how long its last job's programs took to go */
	bool leaked;			/* replace it once it is ready */
	char leak_why[120];
	unsigned long jobs_done, boots, replaced, failed_boots;
	char last_replaced_why[160];
};

enum client_state { CLIENT_NEW, CLIENT_OPEN, CLIENT_QUEUED, CLIENT_RUNNING, CLIENT_ANSWERED };

struct client {
	int fd;
	unsigned long long id;
	enum client_state state;
	struct warm_guest *guest;
	char dir[PATH_MAX];		/* its job directory, on the host */
	int timeout_s;
	long long start_ns;
};

struct server {
	struct common_opts opts;
	struct bpfuml_paths paths;
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int listen_fd;
	unsigned int nr_guests, mem_mb, cpus;
	struct warm_guest guests[SERVE_GUESTS_MAX];
	struct client *clients[SERVE_CLIENTS_MAX];
	unsigned long long next_id;
	unsigned long jobs_done;
	bool announced;
	int exit_code;
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("bpfuml serve: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- clients ------------------------------------------------------------ */

static void answer(struct client *c, json_object *msg)
{
	/* A client that went away is found by its next poll. */
	serve_send(c->fd, msg);
	json_object_put(msg);
}

static void answer_error(struct client *c, const char *text)
{
	json_object *msg = json_object_new_object();

	json_object_object_add(msg, "error", json_object_new_string(text));
	answer(c, msg);
}

/* The job's end, as a cold session would have seen it. */
static void answer_job(struct client *c, enum session_status status, const char *trouble)
{
	json_object *msg = json_object_new_object();
	char *cut = NULL;

	json_object_object_add(msg, "status", json_object_new_string(session_status_name(status)));
	if (trouble) {
		/* The message has a size limit; the end of the console is what
		 * says most. */
		size_t len = strlen(trouble);

		if (len > SERVE_TROUBLE_MAX && asprintf(&cut, "[... %zu bytes cut ...]\n%s",
							len - SERVE_TROUBLE_MAX,
							trouble + len - SERVE_TROUBLE_MAX) > 0)
			trouble = cut;
		json_object_object_add(msg, "trouble", json_object_new_string(trouble));
	}
	json_object_object_add(msg, "start_ns", json_object_new_int64(c->start_ns));
	json_object_object_add(msg, "exit_ns", json_object_new_int64(wall_ns()));
	answer(c, msg);
	free(cut);
	c->state = CLIENT_ANSWERED;
}

static struct warm_guest *least_loaded(struct server *sv)
{
	unsigned int load[SERVE_GUESTS_MAX] = { 0 }, best = 0;

	for (size_t i = 0; i < SERVE_CLIENTS_MAX; i++) {
		struct client *c = sv->clients[i];

		if (c && c->guest && (c->state == CLIENT_QUEUED || c->state == CLIENT_RUNNING ||
				      c->state == CLIENT_OPEN))
			load[c->guest->index]++;
	}
	for (unsigned int g = 1; g < sv->nr_guests; g++)
		if (load[g] < load[best])
			best = g;
	return &sv->guests[best];
}

static void op_job(struct server *sv, struct client *c)
{
	char jobs[PATH_MAX], guest_dir[128];
	json_object *msg;

	if (c->state != CLIENT_NEW) {
		answer_error(c, "one job per connection");
		return;
	}
	c->guest = least_loaded(sv);
	c->id = ++sv->next_id;
	snprintf(jobs, sizeof(jobs), "%s/%s", c->guest->s.run_dir, SERVE_JOBS_DIR);
	mkdir(jobs, 0755);
	if (snprintf(c->dir, sizeof(c->dir), "%s/%llu", jobs, c->id) >= (int)sizeof(c->dir) ||
	    mkdir(c->dir, 0755)) {
		c->dir[0] = '\0';
		answer_error(c, "cannot make the job's directory");
		return;
	}
	/* agent_serve.c binds the job's directory over the run directory. */
	snprintf(guest_dir, sizeof(guest_dir), "%s", RUN_DIR_IN_GUEST);
	c->state = CLIENT_OPEN;
	msg = json_object_new_object();
	json_object_object_add(msg, "dir", json_object_new_string(c->dir));
	json_object_object_add(msg, "guest_dir", json_object_new_string(guest_dir));
	json_object_object_add(msg, "backend", json_object_new_string(sv->opts.backend));
	json_object_object_add(msg, "bpf_mode", json_object_new_string(bpf_mode_of(&sv->opts)));
	json_object_object_add(msg, "kernel_version", json_object_new_string(sv->paths.kernel_version));
	json_object_object_add(msg, "mem_mb", json_object_new_int(sv->mem_mb));
	json_object_object_add(msg, "cpus", json_object_new_int(sv->cpus));
	json_object_object_add(msg, "confinement", json_object_new_string(confine_name() ?: ""));
	answer(c, msg);
}

static void op_run(struct client *c, json_object *req)
{
	long long timeout = json_int(req, "timeout_s", TIMEOUT_UML_S);

	if (c->state != CLIENT_OPEN) {
		answer_error(c, "\"run\" comes after \"job\", once");
		return;
	}
	c->timeout_s = timeout >= 1 && timeout <= TIMEOUT_MAX_S ? (int)timeout : TIMEOUT_UML_S;
	c->state = CLIENT_QUEUED;
}

static long self_status(const char *key)
{
	char line[256];
	long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return d ? n - 1 : -1;	/* not the directory's own descriptor */
}

static json_object *census_json(const long *v)
{
	static const char *const names[] = { "programs", "maps", "links", "btf", "mem_available_kb" };
	json_object *o = json_object_new_object();

	for (int i = 0; i < 5; i++)
		json_object_object_add(o, names[i], json_object_new_int64(v[i]));
	return o;
}

static void op_status(struct server *sv, struct client *c)
{
	json_object *msg = json_object_new_object(), *guests = json_object_new_array();

	for (unsigned int i = 0; i < sv->nr_guests; i++) {
		struct warm_guest *g = &sv->guests[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "state", json_object_new_string(guest_state_names[g->state]));
		json_object_object_add(o, "jobs_done", json_object_new_int64(g->jobs_done));
		json_object_object_add(o, "boots", json_object_new_int64(g->boots));
		json_object_object_add(o, "replaced", json_object_new_int64(g->replaced));
		if (g->last_replaced_why[0])
			json_object_object_add(o, "last_replaced_because",
					       json_object_new_string(g->last_replaced_why));
		json_object_object_add(o, "when_ready", census_json(g->census_ready));
		json_object_object_add(o, "after_last_job", census_json(g->census_last));
		json_object_object_add(o, "last_clean_wait_us", json_object_new_int64(g->clean_wait_us));
		json_object_array_add(guests, o);
	}
	json_object_object_add(msg, "backend", json_object_new_string(sv->opts.backend));
	json_object_object_add(msg, "guests", guests);
	json_object_object_add(msg, "jobs_done", json_object_new_int64(sv->jobs_done));
	json_object_object_add(msg, "rss_kb", json_object_new_int64(self_status("VmRSS")));
	json_object_object_add(msg, "fds", json_object_new_int64(open_fds()));
	answer(c, msg);
}

static void client_request(struct server *sv, struct client *c, json_object *req)
{
	const char *op = json_string_member(req, "op");

	if (op && !strcmp(op, "job"))
		op_job(sv, c);
	else if (op && !strcmp(op, "run"))
		op_run(c, req);
	else if (op && !strcmp(op, "status"))
		op_status(sv, c);
	else
		answer_error(c, "unknown \"op\": job, run and status are known");
}

/* ---- guests ------------------------------------------------------------- */

static json_object *serve_job(void)
{
	json_object *job = json_object_new_object();

	json_object_object_add(job, "command", json_object_new_string("serve"));
	return job;
}

static void guest_boot(struct server *sv, struct warm_guest *g)
{
	json_object *job = serve_job();
	int pair[2];

	vm_free(g->s.vm);
	g->s.vm = NULL;
	free(g->s.trouble);
	g->s.trouble = NULL;
	json_object_put(g->s.result);
	g->s.result = NULL;
	if (g->line >= 0)
		close(g->line);
	g->line = -1;
	g->in_len = 0;
	g->leaked = false;
	g->state = GUEST_DOWN;
	g->deadline_ms = mono_ms() + 1000LL * (1 << (g->failed_boots < 4 ? g->failed_boots : 4));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair)) {
		g->failed_boots++;
		json_object_put(job);
		return;
	}
	g->s.channel_fd = pair[1];
	g->s.backend = sv->opts.backend;
	g->s.bpf_mode = sv->opts.bpf_mode;
	g->s.mem_mb = sv->mem_mb;
	g->s.cpus = sv->cpus;
	/* The guest lives until it is killed; its jobs have their own
	 * deadlines, kept here. */
	session_start(&g->s, &sv->paths, job, TIMEOUT_MAX_S);
	close(pair[1]);
	g->s.channel_fd = 0;
	json_object_put(job);
	if (!g->s.running) {
		close(pair[0]);
		g->failed_boots++;
		return;
	}
	fcntl(pair[0], F_SETFL, O_NONBLOCK);
	g->line = pair[0];
	g->state = GUEST_BOOTING;
	g->boots++;
	g->deadline_ms = mono_ms() + SERVE_BOOT_TIMEOUT_S * 1000LL;
}

/* Kill G and boot another in its place; the job it was doing (if any) ends
 * with STATUS and TROUBLE. */
static void guest_replace(struct server *sv, struct warm_guest *g, const char *why,
			  enum session_status status, const char *trouble)
{
	if (g->job && g->job->state == CLIENT_RUNNING)
		answer_job(g->job, status, trouble);
	g->job = NULL;
	if (g->state == GUEST_BOOTING || g->state == GUEST_DOWN)
		g->failed_boots++;
	else
		g->failed_boots = 0;
	g->replaced++;
	snprintf(g->last_replaced_why, sizeof(g->last_replaced_why), "%s", why);
	say("guest %d replaced: %s", g->index, why);
	if (g->s.vm)
		vm_kill(g->s.vm);
	if (g->failed_boots >= SERVE_BOOT_TRIES) {
		say("guest %d did not get ready in %d boots in a row; stopping (last console "
		    "lines:\n%s)", g->index, SERVE_BOOT_TRIES, trouble ?: g->s.trouble ?: "");
		sv->exit_code = EXIT_INFRA;
		return;
	}
	guest_boot(sv, g);
}

/* The console's trouble lines, or NULL.  A guest that reported trouble is
 * replaced, so any found belongs to the job in hand. */
static char *guest_console_trouble(struct warm_guest *g)
{
	size_t len;
	const char *log = g->s.vm ? vm_console_text(g->s.vm, &len) : NULL;

	return log ? console_find_trouble(log, len) : NULL;
}

static char *guest_console_tail(struct warm_guest *g)
{
	size_t len;
	const char *log = g->s.vm ? vm_console_text(g->s.vm, &len) : NULL;

	return log ? console_tail(log, len) : NULL;
}

static void guest_said(struct server *sv, struct warm_guest *g, char *line)
{
	unsigned long long id;
	long v[5];
	int status, n;

	if (g->state == GUEST_BOOTING &&
	    sscanf(line, "ready %ld %ld %ld %ld %ld%n", &v[0], &v[1], &v[2], &v[3], &v[4], &n) == 5) {
		memcpy(g->census_ready, v, sizeof(v));
		memcpy(g->census_last, v, sizeof(v));
		g->state = GUEST_READY;
		g->failed_boots = 0;
		return;
	}
	if (g->state == GUEST_BUSY && g->job &&
	    sscanf(line, "done %llu %d", &id, &status) == 2 && id == g->job->id) {
		char *trouble = guest_console_trouble(g);

		g->jobs_done++;
		sv->jobs_done++;
		if (trouble) {
			guest_replace(sv, g, "kernel trouble on the console", SESSION_KERNEL_TROUBLE, trouble);
			free(trouble);
			return;
		}
		answer_job(g->job, SESSION_OK, status ? "the job's process in the warm guest did not "
			   "end normally" : NULL);
		g->job = NULL;
		g->state = GUEST_CLEANING;
		g->deadline_ms = mono_ms() + SERVE_CLEAN_WAIT_MS + 10000;
		return;
	}
	if (g->state == GUEST_CLEANING &&
	    sscanf(line, "clean %ld %ld %ld %ld %ld %ld", &v[0], &v[1], &v[2], &v[3], &v[4],
		   &g->clean_wait_us) == 6) {
		bool leftover = false;
		char why[200];

		memcpy(g->census_last, v, sizeof(v));
		/* Its maps and BTF may still be on their way out (run_dir.h). */
		leftover = v[0] > g->census_ready[0] || v[2] > g->census_ready[2];
		g->state = GUEST_READY;
		if (leftover) {
			/* Nothing of one job may meet the next. */
			snprintf(why, sizeof(why), "a job left BPF programs or links behind (programs "
				 "%ld, links %ld; %ld, %ld when ready)", v[0], v[2], g->census_ready[0],
				 g->census_ready[2]);
			guest_replace(sv, g, why, SESSION_OK, NULL);
		} else if (g->leaked) {
			guest_replace(sv, g, g->leak_why, SESSION_OK, NULL);
		}
		return;
	}
	if (sscanf(line, "leak %ld %ld", &v[0], &v[1]) == 2) {
		/* A job's maps or BTF objects that stayed: the guest goes once
		 * the job in hand (if any) is answered. */
		snprintf(g->leak_why, sizeof(g->leak_why), "a job's maps (%ld) or BTF objects (%ld) "
			 "were not let go", v[0], v[1]);
		g->leaked = true;
		if (g->state == GUEST_READY)
			guest_replace(sv, g, g->leak_why, SESSION_OK, NULL);
		return;
	}
	/* The agent's own "done" for a job whose process said it already
	 * and then failed on its way out: nothing more to answer. */
	if (g->state == GUEST_CLEANING && !strncmp(line, "done ", 5))
		return;
	/* Anything else breaks the protocol: not believed. */
	guest_replace(sv, g, "the guest broke the job line's protocol", SESSION_MALFORMED,
		      "the warm guest's agent said something out of turn");
}

static void guest_read_line(struct server *sv, struct warm_guest *g)
{
	for (;;) {
		ssize_t n = read(g->line, g->in + g->in_len, sizeof(g->in) - 1 - g->in_len);
		char *nl;

		if (n <= 0)
			return;		/* EAGAIN; or the guest is gone, which its VM says */
		g->in_len += n;
		g->in[g->in_len] = '\0';
		while ((nl = strchr(g->in, '\n'))) {
			*nl = '\0';
			guest_said(sv, g, g->in);
			if (g->line < 0 || !g->in_len)
				return;		/* replaced meanwhile */
			g->in_len -= nl + 1 - g->in;
			memmove(g->in, nl + 1, g->in_len + 1);
		}
		if (g->in_len == sizeof(g->in) - 1) {
			guest_replace(sv, g, "the guest's line is too long", SESSION_MALFORMED,
				      "the warm guest's agent said too much at once");
			return;
		}
	}
}

static void guest_check(struct server *sv, struct warm_guest *g)
{
	char *text;

	if (g->state == GUEST_DOWN) {
		if (mono_ms() >= g->deadline_ms)
			guest_boot(sv, g);
		return;
	}
	if (g->line >= 0)
		guest_read_line(sv, g);
	if (g->state == GUEST_DOWN || sv->exit_code)
		return;
	if (session_poll(&g->s)) {
		if (session_interrupted)
			return;		/* we are stopping: killed by the signal */
		/* It ended: it is never meant to. */
		const char *category;

		text = session_failure_text(&g->s, 0, &category);
		if (g->s.status != SESSION_KERNEL_TROUBLE)
			say("guest %d ended by itself; %s", g->index, text ?: category);
		guest_replace(sv, g, g->s.status == SESSION_KERNEL_TROUBLE ? "kernel trouble on the console"
			      : "the guest ended", g->s.status == SESSION_KERNEL_TROUBLE ? SESSION_KERNEL_TROUBLE
			      : SESSION_NO_ANSWER, g->s.trouble ?: text);
		free(text);
		return;
	}
	if (mono_ms() < g->deadline_ms)
		return;
	if (g->state == GUEST_BOOTING) {
		text = guest_console_tail(g);
		guest_replace(sv, g, "it did not get ready in time", SESSION_START_FAILED, text);
		free(text);
	} else if (g->state == GUEST_BUSY) {
		char *tail = guest_console_tail(g), *msg = NULL;

		/* The client says what a time-out is, as for its own guest. */
		if (asprintf(&msg, "(a warm guest, killed and replaced)\n%s", tail ?: "") < 0)
			msg = NULL;
		guest_replace(sv, g, "a job's time-out", SESSION_TIMEOUT, msg);
		free(msg);
		free(tail);
	} else if (g->state == GUEST_CLEANING) {
		guest_replace(sv, g, "it did not say what a job left behind", SESSION_OK, NULL);
	}
}

static void dispatch(struct server *sv)
{
	for (size_t i = 0; i < SERVE_CLIENTS_MAX; i++) {
		struct client *c = sv->clients[i], *first = c;
		struct warm_guest *g;
		char line[64];
		int n;

		if (!c || c->state != CLIENT_QUEUED || c->guest->state != GUEST_READY)
			continue;
		/* First come, first served: the lowest id queued for its guest. */
		for (size_t j = 0; j < SERVE_CLIENTS_MAX; j++) {
			struct client *o = sv->clients[j];

			if (o && o->state == CLIENT_QUEUED && o->guest == c->guest && o->id < first->id)
				first = o;
		}
		c = first;
		g = c->guest;
		n = snprintf(line, sizeof(line), "job %llu\n", c->id);
		c->start_ns = wall_ns();
		if (write(g->line, line, n) != n) {
			guest_replace(sv, g, "its job line failed", SESSION_NO_ANSWER, NULL);
			continue;
		}
		c->state = CLIENT_RUNNING;
		g->job = c;
		g->state = GUEST_BUSY;
		g->deadline_ms = mono_ms() + c->timeout_s * 1000LL;
	}
}

/* ---- the loop ----------------------------------------------------------- */

static void client_drop(struct server *sv, size_t i)
{
	struct client *c = sv->clients[i];

	if (c->state == CLIENT_RUNNING && c->guest->job == c)
		/* Its job must not go on unwatched, nor be answered to
		 * the next client: the guest goes. */
		guest_replace(sv, c->guest, "its client went away mid-job", SESSION_INTERRUPTED, NULL);
	if (c->dir[0])
		session_remove_tree(c->dir);
	close(c->fd);
	free(c);
	sv->clients[i] = NULL;
}

static void accept_clients(struct server *sv)
{
	for (;;) {
		int fd = accept4(sv->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		size_t i;

		if (fd < 0)
			return;
		for (i = 0; i < SERVE_CLIENTS_MAX && sv->clients[i]; i++)
			;
		if (i == SERVE_CLIENTS_MAX || !(sv->clients[i] = calloc(1, sizeof(struct client)))) {
			close(fd);	/* the client boots a guest of its own */
			continue;
		}
		sv->clients[i]->fd = fd;
	}
}

static void serve_clients(struct server *sv, const struct pollfd *pfd, size_t first)
{
	for (size_t i = 0, k = first; i < SERVE_CLIENTS_MAX; i++) {
		struct client *c = sv->clients[i];
		json_object *req;
		int err;

		if (!c)
			continue;
		if (!(pfd[k++].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		while (sv->clients[i] && !(err = serve_recv(c->fd, &req, MSG_DONTWAIT))) {
			client_request(sv, c, req);
			json_object_put(req);
		}
		if (!sv->clients[i])
			continue;
		if (err == -ECONNRESET)
			client_drop(sv, i);
		else if (err == -EPROTO)
			answer_error(c, "a request is one JSON object (serve_proto.h)");
	}
}

static void all_ready_note(struct server *sv)
{
	unsigned int ready = 0;

	for (unsigned int i = 0; i < sv->nr_guests; i++)
		ready += sv->guests[i].state == GUEST_READY || sv->guests[i].state == GUEST_BUSY ||
			 sv->guests[i].state == GUEST_CLEANING;
	if (sv->announced || ready < sv->nr_guests)
		return;
	sv->announced = true;
	/* stdout: the one line a script waits for. */
	printf("bpfuml serve: %u %s guest%s ready at %s\n", sv->nr_guests, sv->opts.backend,
	       sv->nr_guests > 1 ? "s" : "", sv->socket_path);
	fflush(stdout);
}

static void loop(struct server *sv)
{
	struct pollfd pfd[1 + SERVE_GUESTS_MAX * (1 + VM_POLL_FDS) + SERVE_CLIENTS_MAX];

	while (!session_interrupted && !sv->exit_code) {
		long long now = mono_ms(), wait_ms = INT_MAX;
		size_t n = 0, clients_at;

		pfd[n++] = (struct pollfd){ .fd = sv->listen_fd, .events = POLLIN };
		for (unsigned int i = 0; i < sv->nr_guests; i++) {
			struct warm_guest *g = &sv->guests[i];

			if (g->state != GUEST_READY && g->deadline_ms - now < wait_ms)
				wait_ms = g->deadline_ms - now;
			if (g->line >= 0)
				pfd[n++] = (struct pollfd){ .fd = g->line, .events = POLLIN };
			if (g->s.running)
				n += vm_poll_fds(g->s.vm, pfd + n, &wait_ms);
		}
		clients_at = n;
		for (size_t i = 0; i < SERVE_CLIENTS_MAX; i++)
			if (sv->clients[i])
				pfd[n++] = (struct pollfd){ .fd = sv->clients[i]->fd, .events = POLLIN };
		session_ppoll(pfd, n, wait_ms < 0 ? 0 : (int)wait_ms);
		if (session_interrupted)
			break;
		if (pfd[0].revents & POLLIN)
			accept_clients(sv);
		serve_clients(sv, pfd, clients_at);
		for (unsigned int i = 0; i < sv->nr_guests && !sv->exit_code; i++)
			guest_check(sv, &sv->guests[i]);
		dispatch(sv);
		all_ready_note(sv);
	}
}

/* ---- set-up and clean-up ------------------------------------------------ */

static int listen_at(struct server *sv, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[PATH_MAX], why[PATH_MAX + 128];
	mode_t old_mask;
	int fd, err;

	if (strlen(path) >= sizeof(addr.sun_path))
		return fail(&sv->opts, EXIT_USAGE, "usage", "--socket %s: longer than a Unix socket "
			    "path can be (%zu bytes)", path, sizeof(addr.sun_path) - 1);
	snprintf(dir, sizeof(dir), "%s", path);
	dirname(dir);
	/* The default directory is made here, private; one given is checked. */
	mkdir(dir, 0700);
	if (serve_private_dir(dir, why, sizeof(why)))
		return fail(&sv->opts, EXIT_USAGE, "usage", "the socket's directory must be one only "
			    "you can enter, so that only you reach the server: %s", why);
	strcpy(addr.sun_path, path);
	strcpy(sv->socket_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return fail(&sv->opts, EXIT_INFRA, "infrastructure", "socket: %s", strerror(errno));
	/* A socket file nobody answers at is a server that died: replaced. */
	if (!connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		close(fd);
		return fail(&sv->opts, EXIT_USAGE, "usage", "a server already answers at %s; stop it "
			    "or give another --socket", path);
	}
	unlink(path);
	old_mask = umask(077);
	err = bind(fd, (struct sockaddr *)&addr, sizeof(addr)) ? -errno : 0;
	umask(old_mask);
	if (!err && listen(fd, 64))
		err = -errno;
	if (err) {
		close(fd);
		sv->socket_path[0] = '\0';
		return fail(&sv->opts, EXIT_INFRA, "infrastructure", "cannot listen at %s: %s", path,
			    strerror(-err));
	}
	sv->listen_fd = fd;
	return EXIT_OK;
}

static void shut_down(struct server *sv)
{
	for (size_t i = 0; i < SERVE_CLIENTS_MAX; i++)
		if (sv->clients[i]) {
			if (sv->clients[i]->dir[0])
				session_remove_tree(sv->clients[i]->dir);
			close(sv->clients[i]->fd);
			free(sv->clients[i]);
		}
	for (unsigned int i = 0; i < sv->nr_guests; i++) {
		if (sv->guests[i].line >= 0)
			close(sv->guests[i].line);
		session_destroy(&sv->guests[i].s);
	}
	if (sv->listen_fd >= 0)
		close(sv->listen_fd);
	if (sv->socket_path[0])
		unlink(sv->socket_path);
}

enum { OPT_SOCKET = 0x200, OPT_GUESTS, OPT_MEM };

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "guests", required_argument, NULL, OPT_GUESTS },
		{ "mem", required_argument, NULL, OPT_MEM },
		COMMON_LONGOPTS,
		{ 0 },
	};
	static struct server sv = { .opts = COMMON_OPTS_DEFAULT, .listen_fd = -1, .nr_guests = 1,
				    .mem_mb = SESSION_MEM_MB };
	char socket_path[PATH_MAX] = "";
	unsigned int v;
	int c, code;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			snprintf(socket_path, sizeof(socket_path), "%s", optarg);
			break;
		case OPT_GUESTS:
			if ((code = option_uint(&sv.opts, "--guests", optarg, 1, SERVE_GUESTS_MAX, NULL, &v)))
				return code;
			sv.nr_guests = v;
			break;
		case OPT_MEM:
			if ((code = option_uint(&sv.opts, "--mem", optarg, 128, 16384, "MiB", &v)))
				return code;
			sv.mem_mb = v;
			break;
		default:
			if ((code = common_option(&sv.opts, c, optarg)) >= 0)
				return code;
		}
	}
	common_finish(&sv.opts);
	if (optind < argc)
		return fail(&sv.opts, EXIT_USAGE, "usage", "serve takes no FILE (%s); clients send the "
			    "jobs", argv[optind]);
	if (strcmp(sv.opts.backend, "uml"))
		return fail(&sv.opts, EXIT_USAGE, "usage", "serve keeps UML guests only for now: a QEMU "
			    "guest has no job line yet (--backend qemu jobs boot cold)");
	if (!socket_path[0] && serve_default_socket(socket_path, sizeof(socket_path)))
		return fail(&sv.opts, EXIT_USAGE, "usage", "the default socket path is too long; give --socket");
	if (paths_init(&sv.paths))
		return fail(&sv.opts, EXIT_INFRA, "infrastructure", "cannot locate bpfuml's build directory");
	if ((code = kernel_select(&sv.paths, &sv.opts)) != EXIT_OK)
		return code;

	session_install_signal_handlers();
	for (unsigned int i = 0; i < sv.nr_guests; i++) {
		struct warm_guest *g = &sv.guests[i];

		g->index = i;
		g->line = -1;
		if (session_create(&g->s))
			code = fail(&sv.opts, EXIT_INFRA, "infrastructure", "cannot create a run directory");
		else
			code = guest_can_boot(&g->s, &sv.paths, &sv.opts);
		if (code != EXIT_OK) {
			sv.nr_guests = i + !!g->s.run_dir[0];
			shut_down(&sv);
			return code;
		}
	}
	code = listen_at(&sv, socket_path);
	if (code != EXIT_OK) {
		shut_down(&sv);
		return code;
	}
	for (unsigned int i = 0; i < sv.nr_guests; i++)
		guest_boot(&sv, &sv.guests[i]);
	loop(&sv);
	shut_down(&sv);
	if (sv.exit_code)
		return fail(&sv.opts, sv.exit_code, "infrastructure", "the server stopped: a guest could "
			    "not be booted (see above)");
	/* SIGINT/SIGTERM are how a server is stopped: a clean stop. */
	return EXIT_OK;
}
