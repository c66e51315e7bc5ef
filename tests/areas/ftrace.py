# ftrace.py — the function tracer on UML (kernel-patches 0069: dynamic
# ftrace on the five NOPs at each function's entry, x86's trampolines with
# UML's register frame, direct calls for BPF trampolines).  What x86_64's
# ftrace traces is traced, what it leaves alone (host code, ftrace's own
# code) is left alone, and the selftests of multi-function trampolines run.
import json
import os

from areas.jit import check_selftests_pass
from testlib import BPFUML, PROGS, Failure, bpfuml, check, check_no_leftovers, test

TRACING = '/sys/kernel/tracing'


def guest_sh(script, mode='--interpreter'):
    code, out, err = bpfuml('exec', mode, '--', '/bin/sh', '-c', script, timeout=300)
    check(code == 0, f'exit {code}: {out[-1500:]} {err[-800:]}')
    return out


@test
def function_tracer_traces_only_what_x86_64_traces():
    # Kernel functions are sites; UML's host-side code (the host's signal
    # handlers, os_*), the stubs that run in user processes, lib/ and ftrace's
    # own code are not, as x86_64 leaves out its entry code, lib/ and ftrace.
    out = guest_sh(f'cat {TRACING}/available_filter_functions; '
                   f'echo total $(cat {TRACING}/dyn_ftrace_total_info)')
    funcs = {line.split()[0] for line in out.splitlines() if line and not line.startswith('total')}
    for f in ('do_nanosleep', 'bpf_fentry_test1', 'bpf_prog_test_run_tracing'):
        check(f in funcs, f'{f} is not in available_filter_functions')
    for f in ('os_protect_memory', 'sort_r', 'stub_syscall_handler', 'ftrace_make_call',
              'um_write_text', 'ftrace_modify_all_code'):
        check(f not in funcs, f'{f} is traceable')
    check(len(funcs) > 20000, f'only {len(funcs)} traceable functions')


@test
def function_tracer_kprobe_and_fentry_share_a_function():
    # do_nanosleep's site carries the function tracer and a BPF trampoline
    # (ftrace calls its regs trampoline, which enters the BPF one through
    # ORIG_AX), and a kprobe sits after the site: all three fire on one
    # nanosleep, and the fentry program reads the function's arguments and
    # address as on x86_64, interpreted and JITed.
    obj = os.path.join(PROGS, 'tracing_multi.bpf.o')
    bpftool = os.path.join(os.path.dirname(BPFUML), 'bpftool')
    script = (f'{bpftool} prog loadall tracing_multi.bpf.o /sys/fs/bpf/t autoattach && '
              f'cd {TRACING} && echo do_nanosleep > set_ftrace_filter && '
              'echo function > current_tracer && '
              "echo 'p:bpfuml_ns do_nanosleep' > kprobe_events && echo 1 > events/kprobes/enable && "
              'echo > trace && /bin/sleep 0.01 && cat trace && '
              'echo 0 > events/kprobes/enable && echo > kprobe_events && echo nop > current_tracer && '
              "grep ' do_nanosleep$' /proc/kallsyms && "
              f'{bpftool} -j map dump name tracing_.bss')
    for mode in ('--interpreter', '--jit'):
        code, out, err = bpfuml('exec', mode, '--file', obj, '--', '/bin/sh', '-c', script, timeout=300)
        check(code == 0, f'{mode}: exit {code}: {out[-1500:]} {err[-800:]}')
        lines = [line for line in out.splitlines() if 'sleep-' in line]
        check(any('do_nanosleep <-' in line for line in lines), f'{mode}: no function trace:\n{out[-1500:]}')
        check(any('bpfuml_ns:' in line for line in lines), f'{mode}: no kprobe hit:\n{out[-1500:]}')
        try:
            last = out.strip().splitlines()
            g = {k: v for d in json.loads(last[-1])[0]['formatted']['value']['.bss'] for k, v in d.items()}
            addr = int(next(line for line in last if line.endswith(' do_nanosleep')).split()[0], 16)
        except (ValueError, LookupError, TypeError, StopIteration) as e:
            raise Failure(f'{mode}: no .bss dump or kallsyms line ({e}):\n{out[-1200:]}')
        # do_nanosleep(t, HRTIMER_MODE_REL = 1); the function's address.
        check(g['nanosleeps'] >= 1 and g['nanosleep_mode'] == 1 and g['nanosleep_func_ip'] == addr,
              f'{mode}: fentry saw {g}, do_nanosleep at {addr:#x}')
    check_no_leftovers()


@test
def kselftest_runs_multi_function_trampolines():
    # Selftests denied before for "UML has no function tracer": one program
    # on many kernel and module functions (fentry.multi, fexit.multi,
    # fsession), with cookies, link info and intersecting attachments.
    # tracing_multi_bench_attach attaches one program to every traceable
    # kernel function with a BTF prototype and detaches it.
    tests = ('tracing_multi_test', 'fill_link_info', 'tracing_multi_bench_attach')
    wanted = ('tracing_multi_test/skel_api', 'tracing_multi_test/link_api_pattern',
              'tracing_multi_test/module_skel_api', 'tracing_multi_test/intersect',
              'tracing_multi_test/cookies', 'tracing_multi_test/session',
              'tracing_multi_test/fentry_after_multi', 'fill_link_info/tracing_multi_link_info',
              'tracing_multi_bench_attach')
    check_selftests_pass(wanted, run=tests)
