// SPDX-License-Identifier: GPL-2.0
/* values.c — what an RHASH value holds and how it is copied.
 * rhtab_map_update_existing() copies a new value over the old one in place:
 * a reader without BPF_F_LOCK may see it half-written; with BPF_F_LOCK on
 * both sides (copy_map_value_locked()) a reader never does.  Special fields
 * are allowed in values (syscall.c: BPF_SPIN_LOCK, BPF_TIMER for RHASH);
 * deleting or overwriting an element cancels its timer
 * (bpf_obj_cancel_fields() in rhtab_delete_elem()/rhtab_map_update_existing()).
 *
 * The guest has one CPU and voluntary preemption: the threads below take turns on
 * one CPU and a task is not preempted inside the kernel, so a copy in
 * progress cannot be watched by another thread.  What can cut a copy in two
 * there is an interrupt: the tear checks use a BPF timer that rewrites its
 * element from softirq context every few microseconds.  BPF_F_LOCK's copy
 * holds the element's lock with interrupts off, so the locked reader must
 * never see a tear; the unlocked one may.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "suite.h"

#define WORDS 30	/* LOCKED_WORDS of rhash_suite.bpf.c */
#define RACE_MS 600

struct locked_value {
	__u32 lock;	/* struct bpf_spin_lock */
	__u32 pad;
	__u64 words[WORDS];
};

struct locked_write_args {
	__u32 key;
	__u32 rounds;
	__u64 stamp;
	__s64 ret;
};

struct race {
	int map_fd, prog_fd;
	atomic_bool stop;
	atomic_long writes, reads, torn, errors;
	atomic_int first_errno;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void race_error(struct race *r, int err)
{
	int zero = 0;

	atomic_fetch_add(&r->errors, 1);
	atomic_compare_exchange_strong(&r->first_errno, &zero, err);
}

struct writer { struct race *r; __u64 stamp; };

static void *user_writer(void *arg)
{
	struct writer *w = arg;
	struct race *r = w->r;
	struct locked_value v = {};
	__u32 key = 1, i;

	while (!atomic_load(&r->stop)) {
		w->stamp += 2;
		for (i = 0; i < WORDS; i++)
			v.words[i] = w->stamp;
		if (bpf_map_update_elem(r->map_fd, &key, &v, BPF_F_LOCK | BPF_EXIST))
			race_error(r, errno);
		atomic_fetch_add(&r->writes, 1);
	}
	return NULL;
}

static void *bpf_writer(void *arg)
{
	struct writer *w = arg;
	struct race *r = w->r;
	struct locked_write_args args = { .key = 1, .rounds = 16 };
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &args, .ctx_size_in = sizeof(args));

	while (!atomic_load(&r->stop)) {
		args.stamp = w->stamp += 1000;
		if (bpf_prog_test_run_opts(r->prog_fd, &run) || args.ret)
			race_error(r, args.ret ? (int)-args.ret : errno);
		atomic_fetch_add(&r->writes, 16);
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct race *r = arg;
	struct locked_value v;
	__u64 *words = v.words;
	__u32 key = 1, i;

	while (!atomic_load(&r->stop)) {
		if (bpf_map_lookup_elem_flags(r->map_fd, &key, &v, BPF_F_LOCK)) {
			race_error(r, errno);
			continue;
		}
		atomic_fetch_add(&r->reads, 1);
		for (i = 1; i < WORDS; i++)
			if (words[i] != words[0]) {
				atomic_fetch_add(&r->torn, 1);
				break;
			}
	}
	return NULL;
}

/* Two user-space writers and a BPF writer, all under the element's lock,
 * against two BPF_F_LOCK readers. */
static int race(struct race *r, const char *map_name, char *why, size_t why_len)
{
	static const char *const progs[] = { "locked_write", NULL };
	struct writer writers[3] = { { r, 1 << 20 }, { r, 1ULL << 40 }, { r, 1ULL << 50 } };
	struct locked_value zero = {};
	pthread_t threads[5];
	struct bpf_object *obj;
	int n = 0, i;
	__u32 key = 1;

	obj = suite_open(progs, why, why_len);
	if (!obj)
		return -1;
	r->map_fd = suite_map_fd(obj, map_name);
	r->prog_fd = suite_prog_fd(obj, "locked_write");
	if (bpf_map_update_elem(r->map_fd, &key, &zero, BPF_NOEXIST)) {
		snprintf(why, why_len, "insert of the raced key: %s", strerror(errno));
		bpf_object__close(obj);
		return -1;
	}
	for (i = 0; i < 2; i++)
		pthread_create(&threads[n++], NULL, user_writer, &writers[i]);
	pthread_create(&threads[n++], NULL, bpf_writer, &writers[2]);
	for (i = 0; i < 2; i++)
		pthread_create(&threads[n++], NULL, reader, r);
	usleep(RACE_MS * 1000);
	atomic_store(&r->stop, true);
	for (i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	bpf_object__close(obj);
	return 0;
}

static enum check_status run_locked_reads(struct check *c)
{
	struct race r = {};
	char why[256];

	if (race(&r, "locked_map", why, sizeof(why)))
		return check_fail(c, "%s", why);
	if (r.errors)
		return check_fail(c, "%ld syscalls failed, the first with %s", (long)r.errors,
				  strerror(r.first_errno));
	if (r.torn)
		return check_fail(c, "%ld of %ld locked reads saw words of different writes",
				  (long)r.torn, (long)r.reads);
	if (r.reads < 100 || r.writes < 100)
		return check_fail(c, "too little raced to tell: %ld reads, %ld writes",
				  (long)r.reads, (long)r.writes);
	return check_pass(c, "%ld BPF_F_LOCK reads, none torn, against %ld writes (user space "
			  "BPF_F_LOCK updates and a BPF program under bpf_spin_lock) in %d ms",
			  (long)r.reads, (long)r.writes, RACE_MS);
}

/* ---- torn reads against a writer in interrupt context ---------------------- */

#define TEAR_WORDS 256	/* as in rhash_suite.bpf.c */
/* The callback is interpreted and rewrites 2 KiB: a shorter period leaves
 * the reader little CPU on a busy host. */
#define TEAR_PERIOD_NS 40000
/* The locked check needs reads as much as writes: at 40 us the interpreted
 * 2 KiB copy under the lock left user space ~90 reads in 4 s on a busy
 * host; every 200 us leaves it the CPU time to read. */
#define TEAR_LOCKED_PERIOD_NS 200000
#define TEAR_MIN_READS 1000	/* read on past RACE_MS until this many, up to 4 s */

struct tear_value {
	__u32 lock;	/* struct bpf_spin_lock */
	__u32 pad;
	__u64 timer[2];	/* struct bpf_timer */
	__u64 words[TEAR_WORDS];
};

struct tear_ctl {	/* .data.tear of rhash_suite.bpf.c */
	__u64 callbacks;
	__u64 period_ns;
	__s64 err;
	__u32 use_lock;
	__u32 stop;
};

struct tear_run {
	long reads, torn, errors, callbacks;
	double ms;
	int first_errno;
};

/* User space reads the element while the timer rewrites it. */
static int tear_race(bool locked, struct tear_run *t, char *why, size_t len)
{
	static const char *const progs[] = { "arm_tear_timer", NULL };
	unsigned char packet[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = packet, .data_size_in = sizeof(packet));
	static struct tear_value zero, v;
	volatile struct tear_ctl *ctl;
	struct bpf_object *obj;
	__u32 key = 0, i;
	double start;
	size_t size;
	int fd;

	memset(t, 0, sizeof(*t));
	obj = suite_open(progs, why, len);
	if (!obj)
		return -1;
	ctl = bpf_map__initial_value(bpf_object__find_map_by_name(obj, ".data.tear"), &size);
	fd = suite_map_fd(obj, "tear_map");
	if (!ctl || bpf_map_update_elem(fd, &key, &zero, BPF_NOEXIST)) {
		snprintf(why, len, "setup: %s", ctl ? strerror(errno) : ".data.tear is not mapped");
		bpf_object__close(obj);
		return -1;
	}
	ctl->use_lock = locked;
	ctl->period_ns = locked ? TEAR_LOCKED_PERIOD_NS : TEAR_PERIOD_NS;
	if (bpf_prog_test_run_opts(suite_prog_fd(obj, "arm_tear_timer"), &run) || run.retval) {
		snprintf(why, len, "arm_tear_timer: run %s, retval %u, helper error %lld",
			 strerror(errno), run.retval, (long long)ctl->err);
		bpf_object__close(obj);
		return -1;
	}
	for (start = now_ms(); now_ms() - start < RACE_MS ||
			       (t->reads < TEAR_MIN_READS && now_ms() - start < 4000);) {
		if (bpf_map_lookup_elem_flags(fd, &key, &v, locked ? BPF_F_LOCK : 0)) {
			if (!t->errors++)
				t->first_errno = errno;
			continue;
		}
		t->reads++;
		for (i = 1; i < TEAR_WORDS; i++)
			if (v.words[i] != v.words[0]) {
				t->torn++;
				break;
			}
	}
	t->ms = now_ms() - start;
	ctl->stop = 1;
	usleep(20000);
	t->callbacks = ctl->callbacks;
	bpf_object__close(obj);	/* frees the element: cancels the timer */
	return 0;
}

static enum check_status run_locked_reads_vs_timer(struct check *c)
{
	struct tear_run t;
	char why[256];

	if (tear_race(true, &t, why, sizeof(why)))
		return check_fail(c, "%s", why);
	if (t.errors)
		return check_fail(c, "%ld lookups failed, the first with %s", t.errors, strerror(t.first_errno));
	if (t.torn)
		return check_fail(c, "%ld of %ld BPF_F_LOCK reads torn by the timer's locked writes",
				  t.torn, t.reads);
	if (t.callbacks < 50 || t.reads < 100)
		return check_fail(c, "too little raced to tell: %ld timer writes, %ld reads",
				  t.callbacks, t.reads);
	return check_pass(c, "%ld BPF_F_LOCK reads of 2 KiB, none torn, against %ld locked rewrites "
			  "from the timer's softirq in %.0f ms", t.reads, t.callbacks, t.ms);
}

static enum check_status run_unlocked_reads(struct check *c)
{
	struct tear_run t;
	char why[256];

	if (tear_race(false, &t, why, sizeof(why)))
		return check_fail(c, "%s", why);
	if (t.errors)
		return check_fail(c, "%ld lookups failed, the first with %s", t.errors, strerror(t.first_errno));
	/* Torn reads are allowed, not promised: any count passes. */
	return check_pass(c, "%ld of %ld unlocked reads of 2 KiB torn by %ld unlocked rewrites from the "
			  "timer's softirq in %.0f ms", t.torn, t.reads, t.callbacks, t.ms);
}

/* ---- timers -------------------------------------------------------------- */

struct timer_ctl {	/* .data.timer of rhash_suite.bpf.c */
	__u64 callbacks;
	__u64 delay_ns;
	__s64 err;
	__u32 key;
	__u32 err_step;
};

struct timer_value {
	__u64 timer[2];	/* struct bpf_timer */
	__u64 fired;
};

static struct bpf_object *timer_obj;
static struct timer_ctl *timer_ctl;
static int timer_map_fd, timer_prog_fd;

static int timer_setup(char *why, size_t len)
{
	static const char *const progs[] = { "arm_timer", NULL };
	size_t size;

	if (timer_obj)
		return 0;
	timer_obj = suite_open(progs, why, len);
	if (!timer_obj)
		return -1;
	timer_ctl = bpf_map__initial_value(bpf_object__find_map_by_name(timer_obj, ".data.timer"), &size);
	if (!timer_ctl || size < sizeof(*timer_ctl)) {
		snprintf(why, len, ".data.timer of the object is not mapped (%zu bytes)", size);
		return -1;
	}
	timer_map_fd = suite_map_fd(timer_obj, "timer_map");
	timer_prog_fd = suite_prog_fd(timer_obj, "arm_timer");
	return 0;
}

/* Inserts key, arms its timer with the delay: 0 or an error text. */
static const char *arm(__u32 key, __u64 delay_ns, char *why, size_t len)
{
	unsigned char packet[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = packet, .data_size_in = sizeof(packet));
	struct timer_value zero = {};

	if (bpf_map_update_elem(timer_map_fd, &key, &zero, BPF_NOEXIST)) {
		snprintf(why, len, "insert of key %u: %s", key, strerror(errno));
		return why;
	}
	timer_ctl->key = key;
	timer_ctl->delay_ns = delay_ns;
	if (bpf_prog_test_run_opts(timer_prog_fd, &run) || run.retval) {
		snprintf(why, len, "arm_timer: run %s, retval %u, helper error %lld at step %u "
			 "(1 lookup, 2 bpf_timer_init, 3 set_callback, 4 start)", strerror(errno),
			 run.retval, (long long)timer_ctl->err, timer_ctl->err_step);
		return why;
	}
	return NULL;
}

static enum check_status run_timer_fires(struct check *c)
{
	struct timer_value v = {};
	char why[256];
	__u32 key = 1;
	double start;

	if (timer_setup(why, sizeof(why)) || arm(key, 1000000 /* 1 ms */, why, sizeof(why)))
		return check_fail(c, "%s", why);
	start = now_ms();
	while (now_ms() - start < 2000 && !atomic_load((_Atomic __u64 *)&timer_ctl->callbacks))
		usleep(1000);
	usleep(20000);	/* a second firing would show now */
	if (bpf_map_lookup_elem(timer_map_fd, &key, &v))
		return check_fail(c, "lookup of the timer's element: %s", strerror(errno));
	if (timer_ctl->callbacks != 1 || v.fired != 1)
		return check_fail(c, "after %.0f ms the callback ran %llu times, the element counts %llu; want 1",
				  now_ms() - start, timer_ctl->callbacks, v.fired);
	return check_pass(c, "bpf_timer_init/set_callback/start in an RHASH value; the callback ran once "
			  "within %.0f ms and wrote its element", now_ms() - start);
}

static enum check_status cancelled_by(struct check *c, bool by_delete)
{
	struct timer_value v = {};
	__u64 before;
	char why[256];
	__u32 key = by_delete ? 2 : 3;

	if (timer_setup(why, sizeof(why)))
		return check_fail(c, "%s", why);
	before = timer_ctl->callbacks;
	/* Far enough out that a host busy with other work cannot make the
	 * timer expire between the arming and the delete/update. */
	if (arm(key, 500000000 /* 500 ms */, why, sizeof(why)))
		return check_fail(c, "%s", why);
	if (by_delete ? bpf_map_delete_elem(timer_map_fd, &key)
		      : bpf_map_update_elem(timer_map_fd, &key, &v, BPF_EXIST))
		return check_fail(c, "%s of the element: %s", by_delete ? "delete" : "update",
				  strerror(errno));
	usleep(800000);
	if (timer_ctl->callbacks != before)
		return check_fail(c, "the callback of a timer armed for 500 ms ran after its element was %s",
				  by_delete ? "deleted" : "overwritten");
	return check_pass(c, "no callback 800 ms after a 500 ms timer's element was %s",
			  by_delete ? "deleted" : "overwritten from user space");
}

static enum check_status run_timer_delete(struct check *c)
{
	return cancelled_by(c, true);
}

static enum check_status run_timer_update(struct check *c)
{
	enum check_status st = cancelled_by(c, false);

	bpf_object__close(timer_obj);	/* the last timer check */
	timer_obj = NULL;
	return st;
}

struct check values_checks[] = {
	{ .name = "values/lock_consistent_reads", .semantics = "BPF_F_LOCK readers never see a value torn by BPF_F_LOCK or "
	  "bpf_spin_lock writers", .run = run_locked_reads },
	{ .name = "values/lock_consistent_reads_vs_timer", .semantics = "BPF_F_LOCK readers never see a value "
	  "torn by a timer callback writing under bpf_spin_lock", .run = run_locked_reads_vs_timer },
	{ .name = "values/unlocked_torn_reads", .semantics = "without BPF_F_LOCK a read may be torn by an "
	  "in-place write (count reported, not asserted)", .run = run_unlocked_reads },
	{ .name = "values/timer_fires", .semantics = "a bpf_timer in an RHASH value: init, start, the callback fires once",
	  .run = run_timer_fires },
	{ .name = "values/timer_cancelled_by_delete", .semantics = "deleting an element cancels its armed timer",
	  .run = run_timer_delete },
	{ .name = "values/timer_cancelled_by_update", .semantics = "overwriting an element cancels its armed timer",
	  .run = run_timer_update },
	{ .name = NULL }
};
