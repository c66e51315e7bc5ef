// SPDX-License-Identifier: GPL-2.0
/* trap_flag.c — the x86 trap flag as x86_64 keeps it (kernel-patches 0063),
 * run in a guest.
 *
 *  1. A program that sets TF itself (pushf; or $0x100; popf) gets a
 *     SIGTRAP (si_code TRAP_TRACE) after the next instruction.  Its handler
 *     starts with TF clear, as x86_64 enters handlers, so it does not trap
 *     on its own code; it leaves TF set in the context it returns to the
 *     first time, so the instruction after gives a second trap, and clears
 *     it then: exactly two.  UML's seccomp mode used to drop the user's TF
 *     whenever the context went through the kernel (here: the sigreturn):
 *     one.
 *  2. A debugger single-steps a child (PTRACE_SINGLESTEP): each step stops
 *     with SIGTRAP, and the child's flags, read with PTRACE_GETREGS, do not
 *     show the TF the debugger forced, as x86_64 hides it (TIF_FORCED_TF).
 *
 * usage: bpfuml exec --file ANY_FILE -- trap_flag ANY_FILE
 *        (the file is not read: guest programs are given one)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include "guest.h"

#define X86_EFLAGS_TF 0x100UL
#define STEPS 5

static volatile sig_atomic_t traps, trace_code, tf_in_handler;

static void on_sigtrap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	unsigned long flags;

	asm volatile("pushf; pop %0" : "=r"(flags));
	tf_in_handler |= !!(flags & X86_EFLAGS_TF);
	trace_code = si->si_code == TRAP_TRACE;
	traps++;
	if (traps == 2)
		uc->uc_mcontext.gregs[REG_EFL] &= ~X86_EFLAGS_TF;
}

static void user_trap_flag(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigtrap, .sa_flags = SA_SIGINFO };

	sigaction(SIGTRAP, &sa, NULL);
	asm volatile("pushf\n\t"
		     "orq $0x100, (%%rsp)\n\t"
		     "popf\n\t"
		     "nop\n\t"
		     "nop\n\t"
		     "nop\n\t" ::: "memory", "cc");
	signal(SIGTRAP, SIG_DFL);
	if (traps == 2 && trace_code && !tf_in_handler)
		guest_report("PASS a user-set TF gave a SIGTRAP (TRAP_TRACE) per step until cleared, "
			     "the handler ran without TF");
	else
		guest_report("FAIL a user-set TF gave %d SIGTRAP(s), TRAP_TRACE %d, TF in the handler %d "
			     "(x86_64: 2, 1, 0)", (int)traps, (int)trace_code, (int)tf_in_handler);
}

static void debugger_single_step(void)
{
	struct user_regs_struct regs;
	int status, steps = 0, tf_seen = 0;
	pid_t child = fork();

	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (volatile int i = 0; i < 1000; i++)
			;
		_exit(0);
	}
	waitpid(child, &status, 0);
	for (int i = 0; i < STEPS && WIFSTOPPED(status); i++) {
		if (ptrace(PTRACE_SINGLESTEP, child, NULL, NULL) || waitpid(child, &status, 0) != child)
			break;
		if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP)
			break;
		steps++;
		if (!ptrace(PTRACE_GETREGS, child, NULL, &regs))
			tf_seen += !!(regs.eflags & X86_EFLAGS_TF);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	if (steps == STEPS && !tf_seen)
		guest_report("PASS %d single steps, each a SIGTRAP stop; the forced TF is hidden from GETREGS", steps);
	else
		guest_report("FAIL %d of %d single steps stopped with SIGTRAP; TF shown in %d GETREGS (x86_64: 0)",
			     steps, STEPS, tf_seen);
}

int main(int argc, char **argv)
{
	if (!guest_boot(argc, argv, "trap_flag"))
		guest_power_off();
	user_trap_flag();
	debugger_single_step();
	guest_power_off();
}
