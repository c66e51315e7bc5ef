# kprobes.py — kprobes on UML (kernel-patches 0055-0057: x86's kprobes on a
# kernel-mode int3, which reaches UML as a host SIGTRAP): BPF kprobe and
# kretprobe programs attach and fire, read x86_64's registers, and
# bpf_override_return() fails a system call, interpreted and JITed.
import json
import os

from areas.jit import check_selftests_pass
from testlib import (BPFUML, PROGS, Failure, bpfuml, check,
                     check_no_leftovers, test, verify_all_accepted)

# A process of its own (comm "python3"): a relative nanosleep() (libc's,
# so do_nanosleep()'s mode is HRTIMER_MODE_REL, 1), getppid(), getpgid().
# getpgid() fails with errno 1234 when the override fired.
WORKLOAD = ("import ctypes, os\n"
            "class timespec(ctypes.Structure):\n"
            "    _fields_ = [('sec', ctypes.c_long), ('nsec', ctypes.c_long)]\n"
            "ctypes.CDLL(None).nanosleep(ctypes.byref(timespec(0, 1000000)), None)\n"
            "print('ppid', os.getppid())\n"
            "try:\n"
            "    os.getpgid(0)\n"
            "    print('getpgid ok')\n"
            "except OSError as e:\n"
            "    print('getpgid errno', e.errno)\n")


def kprobe_globals(mode):
    """Load and attach kprobe_kinds.bpf.o with bpftool in a guest (MODE),
    run WORKLOAD there; its output, the program's globals and the address
    /proc/kallsyms gives do_nanosleep."""
    obj = os.path.join(PROGS, 'kprobe_kinds.bpf.o')
    bpftool = os.path.join(os.path.dirname(BPFUML), 'bpftool')
    script = (f'{bpftool} prog loadall kprobe_kinds.bpf.o /sys/fs/bpf/k autoattach && '
              f'/usr/bin/python3 -c "$WORKLOAD" && '
              "grep ' do_nanosleep$' /proc/kallsyms && "
              f'{bpftool} -j map dump name kprobe_k.bss')
    code, out, err = bpfuml('exec', mode, '--file', obj, '--', '/usr/bin/env', f'WORKLOAD={WORKLOAD}',
                            '/bin/sh', '-c', script, timeout=300)
    check(code == 0, f'{mode}: exit {code}: {out[-1200:]} {err[-800:]}')
    lines = out.strip().splitlines()
    try:
        g = {k: v for d in json.loads(lines[-1])[0]['formatted']['value']['.bss'] for k, v in d.items()}
        kallsyms = next(l for l in lines if l.endswith(' do_nanosleep'))
    except (ValueError, LookupError, TypeError, StopIteration) as e:
        raise Failure(f'{mode}: no .bss dump or kallsyms line ({e}):\n{out[-1200:]}')
    return out, g, int(kallsyms.split()[0], 16)


@test
def kprobes_fire_and_override_as_on_x86_64():
    verify_all_accepted(os.path.join(PROGS, 'kprobe_kinds.bpf.o'), 3)
    for mode in ('--interpreter', '--jit'):
        out, g, nanosleep_addr = kprobe_globals(mode)
        # do_nanosleep(t, HRTIMER_MODE_REL = 1): the second argument in %rsi.
        check(g['nanosleeps'] >= 1 and g['nanosleep_mode'] == 1, f'{mode}: kprobe: {g}')
        # The function's address, not the probe's (after UML's patchable entry).
        check(g['nanosleep_func_ip'] == nanosleep_addr,
              f'{mode}: bpf_get_func_ip() {g["nanosleep_func_ip"]:#x}, do_nanosleep at {nanosleep_addr:#x}')
        ppid = next(int(l.split()[1]) for l in out.splitlines() if l.startswith('ppid '))
        check(g['getppid_returns'] >= 1 and g['getppid_ret'] == ppid,
              f'{mode}: kretprobe saw {g["getppid_ret"]}, getppid() returned {ppid}')
        check(g['overridden'] >= 1 and 'getpgid errno 1234' in out,
              f'{mode}: bpf_override_return(): {g["overridden"]} hits; {out[-600:]}')
    check_no_leftovers()


@test
def kselftest_runs_kprobe_tests():
    # Selftests denied before for "UML has no kprobes": they attach kprobes
    # and kretprobes (perf kprobe PMU, tracefs, links, by address and by a
    # duplicated symbol), read cookies and link info, count missed runs,
    # write user memory from a syscall kprobe, read user stacks with build
    # IDs twice (entry probes run as x86_64's kprobes on ftrace do: not in
    # NMI context, interrupts as in the probed code), interpreted and JITed.
    wanted = ('attach_probe/kprobe-link-by-addr', 'attach_probe/dup-sym-link', 'bpf_cookie/kprobe',
              'fill_link_info/kprobe_link_info', 'fill_link_info/kretprobe_link_info', 'missed/perf_kprobe',
              'probe_user', 'bpf_syscall_macro', 'stacktrace_build_id')
    check_selftests_pass(wanted)
