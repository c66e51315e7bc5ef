// SPDX-License-Identifier: GPL-2.0
/* verdict.c — a program's verdict as the host states it (verdict.h): the
 * one place that decides "needs a JIT", the UML fidelity notes and the
 * reason a program could not be loaded.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfuml.h"
#include "diag.h"
#include "verdict.h"

int program_failed(json_object *prog)
{
	const char *verdict = json_str(prog, "verdict");

	return !verdict || strcmp(verdict, "accepted");
}

struct diag_log *program_log(struct session *s, json_object *prog, char **text)
{
	const char *log_file = json_str(prog, "log_file");
	size_t len;

	*text = NULL;
	if (!log_file || session_read_file(s, log_file, text, &len))
		return NULL;
	return diag_parse(*text, len);
}

/*
 * Verdicts or messages that come from what UML lacks, not from the program:
 * an x86_64 kernel would differ.  Said plainly, so that nobody mistakes them
 * for the program's fault.  The first four come only from kernels without
 * kernel-patches 0002, 0003, 0015 and 0017.
 */
static const struct {
	const char *legacy;	/* substring of the legacy error line */
	const char *note;
} uml_only_verdicts[] = {
	{ "JIT is required for calling kernel function",
	  "this kernel has no BPF JIT and refuses kfunc calls before verifying; x86_64 would verify the program" },
	{ "callbacks are not allowed in non-JITed programs",
	  "this kernel's interpreter cannot run callbacks (bpf_loop, timers, for_each); x86_64 accepts them" },
	{ "mixing of tail_calls and bpf-to-bpf calls",
	  "only JITs support tail calls from programs with subprograms; x86_64 accepts this" },
	{ "Can attach to only JITed progs",
	  "freplace and fentry on BPF programs need JITed targets; UML's programs are interpreted" },
	{ "JIT is required to use arena", "arena maps need a JIT; x86_64 would verify the program" },
	{ "kfunc 'bpf_wakeup_sources_",
	  "the wakeup source kfuncs need PM_SLEEP; UML can suspend only without SMP, and bpfuml's "
	  "UML is SMP (per-CPU variables in BTF as on x86_64); x86_64 has them" },
	{ "in struct task_struct with off",
	  "the offsets are those of UML's task_struct, whose layout differs from x86_64's "
	  "(arch and config members); x86_64 gives the same verdict with its own offsets" },
};

/*
 * Programs libbpf could not load on UML because what they name exists only
 * on x86_64 (matched in libbpf's messages).
 */
static const struct {
	const char *message;	/* substring of libbpf's messages */
	const char *note;
} uml_only_not_loaded[] = {
	{ "failed to find kernel BTF type ID of '__ia32_",
	  "the attach target is an x86 ia32 syscall wrapper (__ia32_*), which UML does not have; "
	  "x86_64 would load this program" },
	{ "failed to find kernel BTF type ID of 'page_fault_",
	  "page_fault_user/page_fault_kernel are x86's exception tracepoints (arch/x86/mm/fault.c), "
	  "which UML's own fault path does not have; x86_64 would load this program" },
	{ "failed to find kernel BTF type ID of '__rcu_read_",
	  "__rcu_read_lock/__rcu_read_unlock are preemptible RCU's (PREEMPT_RCU); bpfuml's UML "
	  "kernel is not preemptible (its BPF trampolines patch kernel text relying on that), so "
	  "rcu_read_lock() is inline there; x86_64's distribution kernels have these functions" },
	{ "struct bpf_struct_ops_smc_hs_ctrl is not found in kernel BTF",
	  "SMC (and its BPF handshake struct_ops) needs INFINIBAND, which UML cannot build "
	  "(no DMA, no I/O memory); x86_64 would load this object" },
};

/*
 * What the kernel says when it refuses, after the verifier accepted it, a
 * program that only a JIT can run (bpf_fixup_call_args()).
 */
static const char *const refused_after_verification[] = {
	"program requires BPF JIT compiler but it is not available",
	"tail_calls are not allowed in non-JITed programs with bpf-to-bpf calls",
	"stack args are not supported in non-JITed programs",
};

bool verified_but_needs_jit(json_object *prog, const char *legacy_error)
{
	size_t i;

	/* Refused by bpf_prog_select_runtime() once verified: ENOTSUPP. */
	if (!legacy_error)
		return json_int(prog, "errno", 0) == 524 &&
		       !strcmp(json_str(prog, "verdict") ?: "", "rejected");
	for (i = 0; i < sizeof(refused_after_verification) / sizeof(refused_after_verification[0]); i++)
		if (strstr(legacy_error, refused_after_verification[i]))
			return true;
	return false;
}

const char *uml_fidelity_note(json_object *prog, const char *legacy_error, bool kernel_has_jit)
{
	const char *messages;
	json_object *v;
	size_t i;

	if (json_object_object_get_ex(prog, "type_unsupported", &v) && json_object_get_boolean(v))
		return "UML lacks this program type (its config or arch has no such hook); "
		       "x86_64 would load and verify it";
	if (verified_but_needs_jit(prog, legacy_error))
		return kernel_has_jit
		       ? "the verifier accepted this program, as x86_64's would, but it needs the JIT "
			 "to run (arena, bpf_throw, tail calls from subprograms, ...), and this guest "
			 "interpreted BPF, so the kernel refused to load it; --jit runs it"
		       : "the verifier accepted this program, as x86_64's would, but it needs the JIT "
			 "to run (arena, bpf_throw, tail calls from subprograms, ...), and this "
			 "kernel's UML has none (its patch series interprets), so the kernel refused "
			 "to load it; the default kernel with --jit runs it";
	for (i = 0; legacy_error && i < sizeof(uml_only_verdicts) / sizeof(uml_only_verdicts[0]); i++)
		if (strstr(legacy_error, uml_only_verdicts[i].legacy))
			return uml_only_verdicts[i].note;
	messages = json_str(prog, "libbpf_messages");
	for (i = 0; messages && !legacy_error &&
		    i < sizeof(uml_only_not_loaded) / sizeof(uml_only_not_loaded[0]); i++)
		if (strstr(messages, uml_only_not_loaded[i].message))
			return uml_only_not_loaded[i].note;
	return NULL;
}

/* On a kernel whose UML series stops before the JIT (kernel-patches
 * 0040-0071: its trampolines, kprobes, uprobes). */
static const char *attach_impossible_without_jit_series(const char *type, const char *section)
{
	if (!strcmp(type, "kprobe")) {
		if (!strncmp(section, "uprobe", 6) || !strncmp(section, "uretprobe", 9) ||
		    !strncmp(section, "usdt", 4))
			return "this kernel's UML has no uprobes: x86's uprobes on UML "
			       "(kernel-patches 0063-0065) are the default kernel's only";
		return "this kernel's UML has no kprobes: x86's kprobes on UML (kernel-patches "
		       "0055-0057) are the default kernel's only";
	}
	if (!strcmp(type, "tracing") && (!strncmp(section, "tp_btf", 6) || !strncmp(section, "iter", 4)))
		return NULL;
	if (!strcmp(type, "tracing") || !strcmp(type, "lsm") || !strcmp(type, "struct_ops") ||
	    !strcmp(type, "ext"))
		return "this kernel's UML has no BPF trampolines: they need the x86_64 JIT in UML "
		       "(kernel-patches 0040-0046), which only the default kernel's series has";
	return NULL;
}

const char *uml_attach_impossible(json_object *prog, const char *bpf_mode, bool kernel_has_jit)
{
	bool jit = bpf_mode && !strcmp(bpf_mode, "jit");

	const char *type = json_str(prog, "type") ?: "", *section = json_str(prog, "section") ?: "";

	if (!kernel_has_jit)
		return attach_impossible_without_jit_series(type, section);
	if (!strcmp(type, "kprobe")) {
		/* x86's uprobes (kernel-patches 0063-0065), uprobe_multi included */
		if (!strncmp(section, "uprobe", 6) || !strncmp(section, "uretprobe", 9) ||
		    !strncmp(section, "usdt", 4))
			return NULL;
		if (strstr(section, ".multi") || strstr(section, ".session"))
			return "multi-kprobes need fprobe, i.e. ftrace's function graph tracer, which UML lacks";
		return NULL;	/* x86's kprobes (kernel-patches 0055-0057) */
	}
	if (!strcmp(type, "tracing") && (!strncmp(section, "tp_btf", 6) || !strncmp(section, "iter", 4)))
		return NULL;	/* raw tracepoints and iterators need no trampoline */
	/* struct_ops: x86_64's trampolines, which call interpreted programs
	 * too (kernel-patches 0045), are called through function pointers;
	 * fentry.multi and the like attach through ftrace's direct calls
	 * (kernel-patches 0069). */
	if (!strcmp(type, "ext") && !jit)
		return "freplace patches the JITed code of its target, and without --jit the "
		       "target is interpreted";
	return NULL;
}

/* Fidelity notes compare UML with x86_64: on the x86_64 backend, none. */
static bool session_is_uml(const struct session *s)
{
	return !s->backend || !strcmp(s->backend, "uml");
}

/* The most telling reason PROG (verdict not_loaded) never reached the
 * verifier. */
const char *not_loaded_reason(json_object *prog, char *buf, size_t size)
{
	const char *messages = json_str(prog, "libbpf_messages"), *line, *eol;
	json_object *v;

	if (json_object_object_get_ex(prog, "type_unsupported", &v) && json_object_get_boolean(v))
		return "this kernel does not support the program type";
	if (json_object_object_get_ex(prog, "type_unknown", &v) && json_object_get_boolean(v)) {
		snprintf(buf, size, "libbpf cannot tell the program type from the section name '%s'; "
			 "the object's own loader sets it (bpf_program__set_type())",
			 json_str(prog, "section") ?: "?");
		return buf;
	}
	/* A map libbpf could not create, or an extern (a kfunc of a module
	 * that is not loaded) it could not find, is named in its messages. */
	for (line = messages; line && *line; line = *eol ? eol + 1 : eol) {
		eol = strchrnul(line, '\n');
		if (memmem(line, eol - line, "failed to create", 16) ||
		    memmem(line, eol - line, "not found in kernel or module BTFs", 34)) {
			if (!strncmp(line, "libbpf: ", 8))
				line += 8;
			snprintf(buf, size, "%.*s", (int)(eol - line), line);
			return buf;
		}
	}
	return json_str(prog, "error") ?: "unknown";
}

void program_verdict_init(struct program_verdict *v, struct session *s, json_object *prog)
{
	const char *legacy;

	memset(v, 0, sizeof(*v));
	v->prog = prog;
	v->name = json_str(prog, "name") ?: "?";
	v->verdict = json_str(prog, "verdict") ?: "?";
	v->accepted = !strcmp(v->verdict, "accepted");
	v->log = program_log(s, prog, &v->log_text);
	legacy = v->log ? v->log->legacy_error : NULL;
	v->needs_jit = verified_but_needs_jit(prog, legacy);
	v->verified = v->accepted || v->needs_jit;
	v->uml_note = session_is_uml(s) ? uml_fidelity_note(prog, legacy, !s->kernel_lacks_jit) : NULL;
	if (!strcmp(v->verdict, "not_loaded"))
		v->not_loaded = not_loaded_reason(prog, v->reason, sizeof(v->reason));
}

void program_verdict_free(struct program_verdict *v)
{
	diag_free(v->log);
	free(v->log_text);
	v->log = NULL;
	v->log_text = NULL;
}

void program_verdict_reason(const struct program_verdict *v, char *buf, size_t size)
{
	const struct diag_report *r = v->log ? v->log->report : NULL;
	int n;

	if (v->not_loaded)
		n = snprintf(buf, size, "not loaded: %s", v->not_loaded);
	else if (v->needs_jit)
		n = snprintf(buf, size, "verified; the kernel then refused it without a JIT");
	else if (r && r->has_at && r->at.file)
		n = snprintf(buf, size, "%s: %s (%s:%d)", r->category, r->problem, r->at.file, r->at.line);
	else if (r)
		n = snprintf(buf, size, "%s: %s", r->category, r->problem);
	else if (v->log && v->log->legacy_error)
		n = snprintf(buf, size, "%s", v->log->legacy_error);
	else
		n = snprintf(buf, size, "rejected without a verifier log");
	if (v->uml_note && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - n, " (UML: %s)", v->uml_note);
}
