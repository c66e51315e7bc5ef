/* SPDX-License-Identifier: GPL-2.0 */
/* verdict.h — a program's verdict as the host states it.
 *
 * The guest decides accepted / rejected / not loaded (agent_bpf.c's
 * verdict_of()); the host adds what only it knows, once per program: the
 * parsed verifier log, whether a rejection was the kernel refusing a
 * verified program for lack of a JIT, and where UML and x86_64 would give
 * different answers.  Every output format (text, gcc, GitHub, JSON, SARIF)
 * renders this one record.
 */
#ifndef BPFUML_VERDICT_H
#define BPFUML_VERDICT_H

#include <json-c/json.h>
#include <stdbool.h>

struct session;
struct diag_log;

struct program_verdict {
	json_object *prog;		/* the guest's record (borrowed) */
	const char *name;
	const char *verdict;		/* "accepted", "rejected" or "not_loaded" */
	bool accepted;
	bool needs_jit;			/* verified, then refused: only a JIT runs it */
	bool verified;			/* accepted, or needs_jit */
	const char *uml_note;		/* on UML, why x86_64 would differ; or NULL */
	const char *not_loaded;		/* why it could not be loaded, or NULL */
	struct diag_log *log;		/* its verifier log parsed, or NULL */
	char *log_text;			/* that log as written */
	char reason[512];		/* storage for not_loaded */
};

/* Why V was not accepted, in one line for CI reports: why it was not
 * loaded, its report's category and problem (and line), its error line, or
 * that a verified program needs a JIT; UML's fidelity note after it. */
void program_verdict_reason(const struct program_verdict *v, char *buf, size_t size);

/* Judge PROG (an entry of the guest's "programs") of session S. */
void program_verdict_init(struct program_verdict *v, struct session *s, json_object *prog);
void program_verdict_free(struct program_verdict *v);

/* 0 accepted, 1 otherwise (from the guest's record alone). */
int program_failed(json_object *prog);
/* A program's parsed verifier log (NULL if it has none); *text is the raw
 * log, both to be freed by the caller (diag_free, free). */
struct diag_log *program_log(struct session *s, json_object *prog, char **text);
/* The verifier accepted the program, and the kernel then refused it for
 * lack of a JIT (LEGACY_ERROR: the log's last error line, or NULL). */
bool verified_but_needs_jit(json_object *prog, const char *legacy_error);
/* Why this verdict would differ on x86_64 (a UML limitation), or NULL.
 * KERNEL_HAS_JIT: bpfuml_paths.kernel_has_jit of the kernel that ran it. */
const char *uml_fidelity_note(json_object *prog, const char *legacy_error, bool kernel_has_jit);
/* Why UML cannot attach PROG at all (multi-kprobes: no function graph
 * tracer; freplace without --jit; on a kernel whose series has no JIT,
 * anything that needs a trampoline, a kprobe or a uprobe), or NULL when
 * the failure is not one of those.
 * BPF_MODE: "jit" or "interpreter". */
const char *uml_attach_impossible(json_object *prog, const char *bpf_mode, bool kernel_has_jit);
/* Why PROG could not be loaded: libbpf's line that names the map or
 * extern it failed on, else the agent's error; in BUF when copied. */
const char *not_loaded_reason(json_object *prog, char *buf, size_t size);

#endif
