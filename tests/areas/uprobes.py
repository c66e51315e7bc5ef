# uprobes.py — uprobes on UML (kernel-patches 0063-0067: x86's uprobes on the
# user int3 and trap-flag steps the host relays to UML): BPF uprobe and
# uretprobe programs attach to the host's libc, fire, and read x86_64's
# registers, interpreted and JITed, in both of UML's userspace modes.
import contextlib
import json
import os

from areas.jit import denylist_entries
from testlib import (BPFUML, EXIT_OK, PROGS, Failure, bpfuml, bpfuml_json, check, check_no_leftovers,
                     guest_program_passed, test, verify_all_accepted)

# A process of its own (comm "python3") calls libc's getpgid(its pid) and
# getppid(), and says where getpgid() is mapped.
WORKLOAD = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None)\n"
            "print('getpgid_at', ctypes.cast(libc.getpgid, ctypes.c_void_p).value)\n"
            "print('pid', os.getpid())\n"
            "os.getpgid(os.getpid())\n"
            "print('ppid', os.getppid())\n")


@contextlib.contextmanager
def guest_kernel_args(args):
    """Guests booted inside get ARGS on their kernel command line
    (BPFUML_KERNEL_ARGS; seccomp=off: UML's ptrace userspace mode)."""
    saved = os.environ.get('BPFUML_KERNEL_ARGS')
    os.environ['BPFUML_KERNEL_ARGS'] = args
    try:
        yield
    finally:
        if saved is None:
            del os.environ['BPFUML_KERNEL_ARGS']
        else:
            os.environ['BPFUML_KERNEL_ARGS'] = saved


def uprobe_globals(mode, kernel_args=''):
    """Load and attach uprobe_kinds.bpf.o with bpftool in a guest (MODE),
    run WORKLOAD there: its output lines as a dict, and the program's
    globals."""
    obj = os.path.join(PROGS, 'uprobe_kinds.bpf.o')
    bpftool = os.path.join(os.path.dirname(BPFUML), 'bpftool')
    script = (f'{bpftool} prog loadall uprobe_kinds.bpf.o /sys/fs/bpf/u autoattach && '
              f'/usr/bin/python3 -c "$WORKLOAD" && '
              f'{bpftool} -j map dump name uprobe_k.bss')
    with guest_kernel_args(kernel_args):
        code, out, err = bpfuml('exec', mode, '--file', obj, '--', '/usr/bin/env', f'WORKLOAD={WORKLOAD}',
                                '/bin/sh', '-c', script, timeout=300)
    what = f'{mode} {kernel_args}'.strip()
    check(code == 0, f'{what}: exit {code}: {out[-1200:]} {err[-800:]}')
    lines = out.strip().splitlines()
    try:
        g = {k: v for d in json.loads(lines[-1])[0]['formatted']['value']['.bss'] for k, v in d.items()}
        said = {l.split()[0]: int(l.split()[1]) for l in lines if l.split()[0] in ('getpgid_at', 'pid', 'ppid')}
    except (ValueError, LookupError, TypeError) as e:
        raise Failure(f'{what}: no .bss dump or workload lines ({e}):\n{out[-1200:]}')
    return said, g


@test
def uprobes_fire_as_on_x86_64():
    verify_all_accepted(os.path.join(PROGS, 'uprobe_kinds.bpf.o'), 2)
    # seccomp (UML's default for guests) and ptrace mode relay the traps
    # from different places; the interpreter and the JIT run the programs.
    for mode, kernel_args in (('--interpreter', ''), ('--jit', ''), ('--interpreter', 'seccomp=off')):
        said, g = uprobe_globals(mode, kernel_args)
        what = f'{mode} {kernel_args}'.strip()
        # getpgid(pid): the argument in %rdi; the probe's function address.
        check(g['getpgids'] == 1 and g['getpgid_arg'] == said['pid'], f'{what}: uprobe: {g}, workload {said}')
        check(g['getpgid_func_ip'] == said['getpgid_at'],
              f'{what}: bpf_get_func_ip() {g["getpgid_func_ip"]:#x}, getpgid at {said["getpgid_at"]:#x}')
        check(g['getppid_returns'] == 1 and g['getppid_ret'] == said['ppid'],
              f'{what}: uretprobe saw {g["getppid_ret"]}, getppid() returned {said["ppid"]}')
    check_no_leftovers()


@test
def uprobe_on_nop10_attaches_as_on_x86_64():
    # 0067: x86_64 takes a probe on the nop10 it optimizes (selftests'
    # USDT nop); UML, which never optimizes, refused it for its CS prefix.
    # tests/smoke/uprobe_nop10.c attaches, calls the site and counts hits.
    guest_program_passed('uprobe_nop10', 'progs/uprobe_nop10.bpf.o')
    check_no_leftovers()


@test
def trap_flag_kept_as_on_x86_64():
    # 0063: a TF the program sets itself survives the kernel (each step a
    # SIGTRAP, handlers start without TF), and a debugger's single steps
    # stop with SIGTRAP without showing it the TF it forced, in both of
    # UML's userspace modes (tests/smoke/trap_flag.c).
    for kernel_args in ('', 'seccomp=off'):
        with guest_kernel_args(kernel_args):
            out = guest_program_passed('trap_flag', 'progs/accepted.bpf.o')
        check(out.count('PASS') == 2, f'{kernel_args or "seccomp"}: {out[-800:]}')
    check_no_leftovers()


@test
def kselftest_runs_uprobe_tests():
    # Selftests denied before for "UML has no uprobes": uprobes and
    # uretprobes through the perf uprobe PMU, tracefs, links and libbpf's
    # auto-attach, sleepable ones, ref_ctr semaphores, USDT, uprobe_multi
    # and uprobe.session, bpf_get_func_ip() on a uprobe, build IDs of user
    # stacks, interpreted and JITed; and `uprobe` (registers a uprobe program
    # writes, built since 0066 gave its struct pt_regs global x86_64's size).
    # usdt/optimized_attach and uprobe_syscall stay denied: UML never
    # optimizes a probe into a call (DENYLIST.uml says why).
    wanted = ('attach_probe', 'uprobe_autoattach', 'get_func_ip_test', 'task_pt_regs', 'usdt',
              'uprobe_multi_test', 'build_id', 'uprobe')
    listed = {name.split('/')[0] for name, reason in denylist_entries() if 'usdt/' not in name}
    check(not listed & set(wanted), f'DENYLIST.uml denies {sorted(listed & set(wanted))} again')
    for mode in ('--interpreter', '--jit'):
        code, doc, err = bpfuml_json('kselftest', mode, '-t', ','.join(wanted), timeout=900)
        tests = {r['name']: r['status'] for r in doc.get('results', []) if not r['subtest']}
        failed = {r['name']: r['status'] for r in doc.get('results', []) if r['status'] in ('failed', 'error')}
        check(code == EXIT_OK and all(tests.get(n) == 'passed' for n in wanted) and not failed,
              f'{mode}: exit {code}: {tests} not passed: {failed} {err[-800:]}')
    check_no_leftovers()
