// SPDX-License-Identifier: GPL-2.0
/* agent_probe.c — the guest side of `bpfuml probe`: what this kernel can do
 * with each program type, map type and verifier feature.
 *
 * For every type_* and feature_* program of the probe objects
 * (progs/probe/): load it on its own (verify), run it with
 * BPF_PROG_TEST_RUN (run), and attach it the way its type attaches
 * (attach).  Each step gives an outcome: "yes", "no" with the errno, or
 * "n/a" when the step does not exist for the type on any kernel.  Map types
 * are probed by creating one of each.  The host prints the table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
/* libc's netinet/in.h first: it tells the UAPI headers what it defines. */
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/netfilter.h>
#include <linux/perf_event.h>
#include <linux/tcp.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent.h"

#define PROBE_LOG_SIZE (1u << 20)	/* probe programs are tiny */

/* 7.3's errno for "no such operation for this type" (not in libc's list). */
#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

static int probe_log_index;

static json_object *step_yes(void)
{
	json_object *s = json_object_new_object();

	json_object_object_add(s, "status", json_object_new_string("yes"));
	return s;
}

static json_object *step_errno(int err, const char *what)
{
	json_object *s = json_object_new_object();

	if (err < 0)
		err = -err;
	json_object_object_add(s, "status", json_object_new_string("no"));
	json_object_object_add(s, "errno", json_object_new_int(err));
	json_object_object_add(s, "error", json_object_new_string(
		what ?: (err == ENOTSUPP ? "operation not supported for this type (ENOTSUPP)" : strerror(err))));
	return s;
}

static json_object *step_na(const char *why)
{
	json_object *s = json_object_new_object();

	json_object_object_add(s, "status", json_object_new_string("n/a"));
	json_object_object_add(s, "note", json_object_new_string(why));
	return s;
}

/* ---- run ---------------------------------------------------------------- */

/* A TCP/IPv4 packet for the packet-based types. */
static void make_packet(unsigned char *pkt, size_t len)
{
	struct ethhdr *eth = (void *)pkt;
	struct iphdr *ip = (void *)(eth + 1);
	struct tcphdr *tcp = (void *)(ip + 1);

	memset(pkt, 0, len);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_TCP;
	ip->tot_len = htons(len - sizeof(*eth));
	ip->saddr = htonl(0x7f000001);
	ip->daddr = htonl(0x7f000001);
	tcp->source = htons(1234);
	tcp->dest = htons(80);
	tcp->doff = 5;
}

static bool takes_no_data(enum bpf_prog_type type)
{
	return type == BPF_PROG_TYPE_SYSCALL || type == BPF_PROG_TYPE_RAW_TRACEPOINT ||
	       type == BPF_PROG_TYPE_TRACING || type == BPF_PROG_TYPE_STRUCT_OPS;
}

/* Feature programs return 1 when the feature did its job. */
static json_object *run_step(struct bpf_program *prog, bool feature)
{
	enum bpf_prog_type type = bpf_program__type(prog);
	unsigned char pkt[64], out[256];
	struct bpf_sk_lookup lookup = {
		.family = AF_INET, .protocol = IPPROTO_TCP,
		.remote_ip4 = htonl(0x7f000001), .local_ip4 = htonl(0x7f000001),
		.remote_port = htons(1234), .local_port = 80,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	json_object *s;

	/* The kernel test-runs fentry/fexit/fmod_ret only; for the other
	 * tracing attach types (tp_btf, iter) it answers EFAULT. */
	if (type == BPF_PROG_TYPE_TRACING) {
		enum bpf_attach_type at = bpf_program__expected_attach_type(prog);

		if (at != BPF_TRACE_FENTRY && at != BPF_TRACE_FEXIT && at != BPF_MODIFY_RETURN)
			return step_na("the kernel test-runs only fentry, fexit and fmod_ret programs");
	}
	if (type == BPF_PROG_TYPE_SK_LOOKUP) {
		opts.ctx_in = &lookup;
		opts.ctx_size_in = sizeof(lookup);
	} else if (!takes_no_data(type)) {
		make_packet(pkt, sizeof(pkt));
		opts.data_in = pkt;
		opts.data_size_in = sizeof(pkt);
		opts.data_out = out;
		opts.data_size_out = sizeof(out);
		opts.repeat = 1;
	}
	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts)) {
		int err = errno;

		if (err == ENOTSUPP)
			return step_na("the kernel has no test run for this program type");
		return step_errno(err, NULL);
	}
	if (feature && opts.retval != 1) {
		s = step_errno(0, "ran, but computed the wrong result");
		json_object_object_add(s, "retval", json_object_new_int64((int)opts.retval));
		return s;
	}
	s = step_yes();
	json_object_object_add(s, "retval", json_object_new_int64((int)opts.retval));
	return s;
}

/* ---- attach --------------------------------------------------------------- */

static json_object *link_step(struct bpf_link *link)
{
	if (!link)
		return step_errno(errno, NULL);
	bpf_link__destroy(link);
	return step_yes();
}

static int open_cgroup(void)
{
	return open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static json_object *attach_to_socket(struct bpf_program *prog, int level, int option, int reuseport)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), prog_fd = bpf_program__fd(prog);
	json_object *s;

	if (fd < 0)
		return step_errno(errno, NULL);
	if (reuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &reuseport, sizeof(reuseport));
	s = setsockopt(fd, level, option, &prog_fd, sizeof(prog_fd)) ? step_errno(errno, NULL) : step_yes();
	close(fd);
	return s;
}

static json_object *attach_perf_event(struct bpf_program *prog)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000000,
	};
	int fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return step_errno(errno, errno == ENOSYS ?
				  "no perf_event_open: the kernel has no perf events" : NULL);
	return link_step(bpf_program__attach_perf_event(prog, fd));
}

static json_object *attach_to_sockmap(struct bpf_program *prog, enum bpf_attach_type type)
{
	int map = bpf_map_create(BPF_MAP_TYPE_SOCKMAP, NULL, 4, 4, 1, NULL);
	json_object *s;

	if (map < 0)
		return step_errno(errno, NULL);
	s = bpf_prog_attach(bpf_program__fd(prog), map, type, 0) ? step_errno(errno, NULL) : step_yes();
	close(map);
	return s;
}

static json_object *attach_step(struct bpf_program *prog)
{
	enum bpf_prog_type type = bpf_program__type(prog);
	int fd, lo = if_nametoindex("lo");
	json_object *s;

	switch (type) {
	case BPF_PROG_TYPE_KPROBE:
	case BPF_PROG_TYPE_TRACEPOINT:
	case BPF_PROG_TYPE_RAW_TRACEPOINT:
	case BPF_PROG_TYPE_TRACING:
	case BPF_PROG_TYPE_LSM:
		return link_step(bpf_program__attach(prog));
	case BPF_PROG_TYPE_XDP:
		return link_step(bpf_program__attach_xdp(prog, lo));
	case BPF_PROG_TYPE_SCHED_CLS:
		return link_step(bpf_program__attach_tcx(prog, lo, NULL));
	case BPF_PROG_TYPE_CGROUP_SKB:
	case BPF_PROG_TYPE_CGROUP_SOCK:
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
	case BPF_PROG_TYPE_SOCK_OPS:
	case BPF_PROG_TYPE_CGROUP_DEVICE:
	case BPF_PROG_TYPE_CGROUP_SYSCTL:
	case BPF_PROG_TYPE_CGROUP_SOCKOPT:
		fd = open_cgroup();
		if (fd < 0)
			return step_errno(errno, "cannot open the cgroup2 root");
		s = link_step(bpf_program__attach_cgroup(prog, fd));
		close(fd);
		return s;
	case BPF_PROG_TYPE_SK_LOOKUP:
	case BPF_PROG_TYPE_FLOW_DISSECTOR:
		fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return step_errno(errno, NULL);
		s = link_step(bpf_program__attach_netns(prog, fd));
		close(fd);
		return s;
	case BPF_PROG_TYPE_SOCKET_FILTER:
		return attach_to_socket(prog, SOL_SOCKET, SO_ATTACH_BPF, 0);
	case BPF_PROG_TYPE_SK_REUSEPORT:
		return attach_to_socket(prog, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, 1);
	case BPF_PROG_TYPE_PERF_EVENT:
		return attach_perf_event(prog);
	case BPF_PROG_TYPE_SK_SKB:
		return attach_to_sockmap(prog, BPF_SK_SKB_STREAM_VERDICT);
	case BPF_PROG_TYPE_SK_MSG:
		return attach_to_sockmap(prog, BPF_SK_MSG_VERDICT);
	case BPF_PROG_TYPE_NETFILTER: {
		LIBBPF_OPTS(bpf_netfilter_opts, nf, .pf = NFPROTO_IPV4,
			    .hooknum = NF_INET_LOCAL_IN, .priority = 1);

		return link_step(bpf_program__attach_netfilter(prog, &nf));
	}
	case BPF_PROG_TYPE_SYSCALL:
		return step_na("syscall programs are only run, never attached");
	default:
		return step_na("not probed: attaching this type needs set-up beyond the probe "
			       "(a route, a qdisc action, a device)");
	}
}

/* ---- load ----------------------------------------------------------------- */

static const char *kind_of(const char *name)
{
	if (!strncmp(name, "type_", 5))
		return "prog_type";
	if (!strncmp(name, "feature_", 8))
		return "feature";
	return NULL;	/* helper_*: loaded along, not a row */
}

static json_object *verify_step(struct bpf_program *prog, int err, const char *log)
{
	json_object *s = err ? step_errno(err, NULL) : step_yes();
	char name[32];

	if (err && log && *log) {
		snprintf(name, sizeof(name), "probe-%d.log", probe_log_index++);
		if (!agent_write_file(name, log, strlen(log)))
			json_object_object_add(s, "log_file", json_object_new_string(name));
	} else if (err && libbpf_probe_bpf_prog_type(bpf_program__type(prog), NULL) == 0) {
		json_object_object_add(s, "type_unsupported", json_object_new_boolean(true));
	}
	return s;
}

static struct bpf_object *open_probe_object(const char *file)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", agent_run_dir, file);
	return bpf_object__open_file(path, NULL);
}

/* Maps of a type the kernel cannot create are left out, so that they fail
 * only the programs that use them (libbpf then names the map in the log). */
static void skip_uncreatable_maps(struct bpf_object *obj, char *skipped, size_t size)
{
	struct bpf_map *map;
	size_t len = 0;

	skipped[0] = '\0';
	bpf_object__for_each_map(map, obj)
		if (!bpf_map__is_internal(map) && libbpf_probe_bpf_map_type(bpf_map__type(map), NULL) != 1) {
			bpf_map__set_autocreate(map, false);
			len += snprintf(skipped + len, len < size ? size - len : 0, "%s%s", len ? " " : "",
					libbpf_bpf_map_type_str(bpf_map__type(map)));
		}
}

/* Load FILE with only WANTED and the helper_* programs (tail-call targets);
 * an ext program first gets the object's helper as its target. */
static struct bpf_object *load_row(const char *file, const char *wanted, char *log, int *err,
				   struct bpf_object **target_obj, int *target_fd,
				   char *skipped, size_t skipped_size)
{
	struct bpf_object *obj = open_probe_object(file), *host;
	struct bpf_program *prog, *p;

	*target_obj = NULL;
	*target_fd = -1;
	if (!obj) {
		*err = -errno;
		return NULL;
	}
	skip_uncreatable_maps(obj, skipped, skipped_size);
	prog = bpf_object__find_program_by_name(obj, wanted);
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog || !strncmp(bpf_program__name(p), "helper_", 7));
	if (bpf_program__type(prog) == BPF_PROG_TYPE_EXT) {
		host = open_probe_object(file);
		bpf_object__for_each_program(p, host)
			bpf_program__set_autoload(p, !strncmp(bpf_program__name(p), "helper_", 7));
		if (!host || bpf_object__load(host)) {
			*err = -errno;
			bpf_object__close(host);
			bpf_object__close(obj);
			return NULL;
		}
		bpf_object__for_each_program(p, host)
			if (bpf_program__fd(p) >= 0)
				*target_fd = bpf_program__fd(p);
		bpf_program__set_attach_target(prog, *target_fd,
					       bpf_program__section_name(prog) + strlen("freplace/"));
		bpf_object__for_each_program(p, obj)
			if (p != prog)
				bpf_program__set_autoload(p, false);
		*target_obj = host;
	}
	bpf_program__set_log_buf(prog, log, PROBE_LOG_SIZE);
	bpf_program__set_log_level(prog, 1);
	*err = bpf_object__load(obj);
	return obj;
}

static json_object *probe_program(const char *file, const char *name, const char *section,
				  const char *kind, char *log)
{
	struct bpf_object *obj, *target_obj;
	int target_fd;
	struct bpf_program *prog;
	json_object *row = json_object_new_object(), *verify;
	bool feature = !strcmp(kind, "feature");
	char skipped[256];
	int err;

	log[0] = '\0';
	obj = load_row(file, name, log, &err, &target_obj, &target_fd, skipped, sizeof(skipped));
	prog = obj ? bpf_object__find_program_by_name(obj, name) : NULL;
	json_object_object_add(row, "kind", json_object_new_string(kind));
	json_object_object_add(row, "name", json_object_new_string(name + (feature ? 8 : 5)));
	json_object_object_add(row, "section", json_object_new_string(section));
	if (prog)
		json_object_object_add(row, "prog_type",
				       json_object_new_string(libbpf_bpf_prog_type_str(bpf_program__type(prog)) ?: "?"));
	/* ENOTSUPP after a finished verification (its statistics line is in
	 * the log): the verifier accepted the program, but this kernel cannot
	 * run it (JIT-only instructions on an interpreter). */
	if (prog && err == -ENOTSUPP && strstr(log, "processed ")) {
		json_object_object_add(row, "verify", step_yes());
		json_object_object_add(row, "run", step_errno(ENOTSUPP, "verified, but the kernel "
				       "refused to load it afterwards: it needs a JIT to run"));
		goto out;
	}
	verify = prog ? verify_step(prog, err, log) : step_errno(err, NULL);
	/* Which map types of the object the kernel could not create. */
	if (err && skipped[0])
		json_object_object_add(verify, "maps_not_created", json_object_new_string(skipped));
	json_object_object_add(row, "verify", verify);
	if (prog && !err) {
		json_object_object_add(row, "run", run_step(prog, feature));
		if (bpf_program__type(prog) == BPF_PROG_TYPE_EXT) {
			json_object_object_add(row, "attach", link_step(bpf_program__attach_freplace(
				prog, target_fd, bpf_program__section_name(prog) + strlen("freplace/"))));
		} else {
			json_object_object_add(row, "attach", feature ? step_na("a feature, not a type") :
					       attach_step(prog));
		}
	}
out:
	bpf_object__close(obj);
	bpf_object__close(target_obj);
	return row;
}

/* struct_ops programs are verified as members of their map's struct: the
 * object loads whole, and attaching registers the map. */
static json_object *probe_struct_ops(const char *file, char *log)
{
	struct bpf_object *obj = open_probe_object(file);
	json_object *row = json_object_new_object();
	struct bpf_program *prog;
	struct bpf_map *map;
	int err;

	json_object_object_add(row, "kind", json_object_new_string("prog_type"));
	json_object_object_add(row, "name", json_object_new_string("struct_ops"));
	json_object_object_add(row, "section", json_object_new_string("struct_ops"));
	json_object_object_add(row, "prog_type", json_object_new_string("struct_ops"));
	if (!obj) {
		json_object_object_add(row, "verify", step_errno(errno, NULL));
		return row;
	}
	log[0] = '\0';
	bpf_object__for_each_program(prog, obj) {
		bpf_program__set_log_buf(prog, log, PROBE_LOG_SIZE);
		bpf_program__set_log_level(prog, 1);
	}
	err = bpf_object__load(obj);
	prog = bpf_object__next_program(obj, NULL);
	json_object_object_add(row, "verify", verify_step(prog, err, log));
	if (!err) {
		json_object_object_add(row, "run", step_na("the kernel has no test run for this struct"));
		map = bpf_object__next_map(obj, NULL);
		while (map && bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS)
			map = bpf_object__next_map(obj, map);
		json_object_object_add(row, "attach", map ? link_step(bpf_map__attach_struct_ops(map)) :
				       step_errno(ENOENT, "no struct_ops map in the object"));
	}
	bpf_object__close(obj);
	return row;
}

static void probe_map_types(json_object *rows)
{
	enum bpf_map_type type;
	const char *name;

	for (type = BPF_MAP_TYPE_UNSPEC + 1; (name = libbpf_bpf_map_type_str(type)); type++) {
		json_object *row = json_object_new_object();
		int ok = libbpf_probe_bpf_map_type(type, NULL);

		json_object_object_add(row, "kind", json_object_new_string("map_type"));
		json_object_object_add(row, "name", json_object_new_string(name));
		json_object_object_add(row, "create", ok == 1 ? step_yes() :
				       step_errno(ok < 0 ? -ok : EINVAL, ok == 0 ?
						  "the kernel does not create this map type" : NULL));
		json_object_array_add(rows, row);
	}
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static long long start_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Each row says how long it took (probe time is mostly a few slow rows). */
static json_object *timed(json_object *row, long long start)
{
	json_object_object_add(row, "elapsed_ms", json_object_new_double((start_ns() - start) / 1e6));
	return row;
}

int agent_probe(json_object *job, json_object *result)
{
	json_object *rows = json_object_new_array(), *files;
	char *log = malloc(PROBE_LOG_SIZE);
	size_t i;

	json_object_object_add(result, "rows", rows);
	if (!log)
		return -ENOMEM;
	/* libbpf's warnings would only repeat the errno each row records. */
	libbpf_set_print(silent_print);
	if (json_object_object_get_ex(job, "objects", &files))
		for (i = 0; i < json_object_array_length(files); i++) {
			const char *file = json_object_get_string(json_object_array_get_idx(files, i));
			struct bpf_object *obj = open_probe_object(file);
			struct bpf_program *prog;
			bool struct_ops = false;

			if (!obj) {
				json_object_object_add(result, "error",
						       json_object_new_string("cannot open a probe object"));
				continue;
			}
			bpf_object__for_each_program(prog, obj) {
				const char *name = bpf_program__name(prog), *kind = kind_of(name);

				if (bpf_program__type(prog) == BPF_PROG_TYPE_STRUCT_OPS)
					struct_ops = true;
				else if (kind) {
					long long start = start_ns();

					json_object_array_add(rows, timed(probe_program(file, name,
						bpf_program__section_name(prog), kind, log), start));
				}
			}
			bpf_object__close(obj);
			if (struct_ops) {
				long long start = start_ns();

				json_object_array_add(rows, timed(probe_struct_ops(file, log), start));
			}
		}
	probe_map_types(rows);
	free(log);
	return 0;
}
