# fidelity.py — UML answers as x86_64 does (kernel-patches 0005-0010, 0026):
# the upstream reference cases, tracing program types and their helpers,
# contexts laid out as on x86_64, and what cannot attach on UML said plainly.
# The qemu tests here are x86_64's own verdicts on the same programs.
import json
import os
import subprocess
import sys
import tempfile

from areas.jit import denylist_entries
from testlib import (BPFUML, EXIT_OK, EXIT_REJECTED, Failure, PROGS, SRC_PROGS, Skip, TOP, X86_VMLINUX_DIR, backend_options,
                     backend_timeout, bpfuml, bpfuml_json, check, check_no_leftovers, compile_for_x86_64, prog,
                     qemu_test, run_globals, test, verify_all_accepted)


@test
def upstream_reference_cases_give_x86_64_categories_on_uml():
    # ../shared/REFERENCE.md's upstream cases: the category (or, for
    # global_func1, the error line) an x86_64 7.3 kernel prints.
    proc = subprocess.run([sys.executable, os.path.join(TOP, 'tests', 'upstream', 'reference_cases.py')],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode == 4:    # reference_cases.NO_SOURCE
        raise Skip(proc.stderr.strip())
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
    check(last.startswith('12 of 12 '), f'{last}\n' + '\n'.join(
        l for l in proc.stdout.splitlines() if l.startswith('different')))


TRACING_TYPES = {   # program: type, as an x86_64 kernel loads them all
    'kprobe_args': 'kprobe', 'tracepoint_nanosleep': 'tracepoint', 'raw_tp_args': 'raw_tracepoint',
    'raw_tp_writable': 'raw_tracepoint_writable',
    'perf_sample': 'perf_event', 'fentry_test1': 'tracing', 'fexit_test1': 'tracing',
    'fmod_ret_test': 'tracing', 'tp_btf_sys_enter': 'tracing', 'iter_tasks': 'tracing',
    'lsm_file_open': 'lsm', 'xdp_printk': 'xdp',
}


@test
def tracing_program_types_load_and_verify():
    # Stock UML: kprobe/tracepoint/raw_tp/perf_event need BPF_EVENTS (0005,
    # 0006), tracing and lsm need BPF_JIT (0008); xdp_printk's bpf_printk()
    # was "unknown helper" there without bpf_trace.o.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'tracing_types.bpf.o'))
    got = {p['name']: (p['type'], p['verdict']) for p in doc.get('programs', [])}
    want = {name: (kind, 'accepted') for name, kind in TRACING_TYPES.items()}
    check(code == EXIT_OK and got == want, f'exit {code}, want 0; got {got}\nwant {want}\n' +
          ' | '.join((p.get('log') or '')[-400:] for p in doc.get('programs', []) if p['verdict'] != 'accepted'))


@qemu_test
def qemu_tracing_program_types_same_verdicts_as_uml():
    # The x86_64 kernel's verdicts for tracing_types.bpf.c built against its
    # own vmlinux.h are UML's (tracing_program_types_load_and_verify).
    with tempfile.TemporaryDirectory() as tmp:
        obj = compile_for_x86_64(os.path.join(SRC_PROGS, 'tracing_types.bpf.c'), tmp)
        got = {}
        for backend in ('qemu', 'uml'):
            code, doc, err = bpfuml_json('verify', '--backend', backend, obj, timeout=600)
            got[backend] = {p['name']: (p['type'], p['verdict']) for p in doc.get('programs', [])}
    want = {name: (kind, 'accepted') for name, kind in TRACING_TYPES.items()}
    check(got['qemu'] == want and got['uml'] == want, f'qemu {got["qemu"]}\numl  {got["uml"]}')



@test
def struct_ops_verifies():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'struct_ops.bpf.o'))
    got = {p['name']: (p['type'], p['verdict']) for p in doc.get('programs', [])}
    check(code == EXIT_OK and set(got.values()) == {('struct_ops', 'accepted')} and len(got) == 3,
          f'exit {code}: {got} {doc.get("error")}')


@test
def raw_tracepoint_test_run():
    # BPF_PROG_TEST_RUN of a raw_tp program: the context is the tracepoint's
    # u64 arguments; the kernel wants no repeat count and no ctx_out.
    with tempfile.TemporaryDirectory() as tmp:
        ctx_in = os.path.join(tmp, 'ctx.bin')
        with open(ctx_in, 'wb') as f:
            f.write((7).to_bytes(8, 'little') + (9).to_bytes(8, 'little'))
        code, doc, err = bpfuml_json('run', os.path.join(PROGS, 'tracing_types.bpf.o'),
                                     '--prog', 'raw_tp_args', '--ctx-in', ctx_in)
    check(code == EXIT_OK and 'run' in doc and 'error' not in doc['run'],
          f'exit {code}: {doc.get("run")} {doc.get("error")} {err}')
    g = run_globals(doc)
    check(g['raw_tp_arg0'] == 7 and g['raw_tp_arg1'] == 9, f'args seen: {g}')


@test
def xdp_program_can_use_tracing_helpers():
    with tempfile.TemporaryDirectory() as tmp:
        data_in = os.path.join(tmp, 'in.bin')
        with open(data_in, 'wb') as f:
            f.write(bytes(64))
        code, doc, err = bpfuml_json('run', os.path.join(PROGS, 'tracing_types.bpf.o'),
                                     '--prog', 'xdp_printk', '--data-in', data_in)
    check(code == EXIT_OK and doc['run']['retval'] == 2, f'exit {code}: {doc.get("run")} {doc.get("error")}')
    g = run_globals(doc)
    # bpf_trace_printk() returns the bytes written, a negative errno on error.
    check(g['xdp_printk_ret'] > 0, f'bpf_printk() returned {g["xdp_printk_ret"]}')
    # The guest agent is PID 1 and does the test run itself.
    check(g['xdp_probe_read_ret'] == 0 and g['xdp_pid'] == 1,
          f'bpf_probe_read_kernel(current->pid): {g["xdp_probe_read_ret"]}, pid {g["xdp_pid"]}')


@test
def stack_rounded_to_16_bytes_as_x86_64():
    # Stock UML rounds frames to 32 bytes: "combined stack size of 3 calls is
    # 544. Too large"; x86_64 (and UML with 0008) counts 480 and accepts.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'stack_rounding.bpf.o'))
    p = prog(doc, 'stack_rounding')
    check(code == EXIT_OK and p['verdict'] == 'accepted',
          f'exit {code}, verdict {p["verdict"]}: {(p.get("log") or "")[-600:]}')


@test
def x86_64_syscall_wrappers_as_on_x86_64():
    # 0047: system calls go through __x64_sys_*(regs), as on x86_64; an
    # fentry program there reads the arguments from the user's registers.
    # The test run after the attach is a bpf(BPF_PROG_TEST_RUN) call.
    obj = os.path.join(PROGS, 'x86_syscall_target.bpf.o')
    code, doc, err = bpfuml_json('verify', obj)
    check(code == EXIT_OK and prog(doc, 'on_bpf')['verdict'] == 'accepted',
          f'exit {code}: {prog(doc, "on_bpf").get("verdict")} {prog(doc, "on_bpf").get("error")}')
    code, doc, err = bpfuml_json('run', '--jit', obj, '--prog', 'on_bpf', '--attach')
    check(doc.get('attach', {}).get('attached') is True, f'exit {code}: attach {doc.get("attach")} {err}')
    g = run_globals(doc)
    check(g['test_run_calls'] >= 1, f'fentry on __x64_sys_bpf saw no BPF_PROG_TEST_RUN: {g}')


@test
def x86_64_names_and_fork_frame_as_on_x86_64():
    # What programs built for x86_64 name and UML had otherwise: a
    # tracepoint record's errno (0051), __do_sys_getpid() (0052), a new
    # thread's thread.sp and its fork frame (0053).  Loaded and attached by
    # bpftool in the guest; a shell there then sends itself a signal (a
    # getpid() first) and vforks /bin/true.
    obj = os.path.join(PROGS, 'x86_task_layout.bpf.o')
    verify_all_accepted(obj, 3)
    bpftool = os.path.join(os.path.dirname(BPFUML), 'bpftool')
    script = (f'{bpftool} prog loadall x86_task_layout.bpf.o /sys/fs/bpf/t autoattach && '
              "/bin/sh -c 'trap : USR1; kill -USR1 $$; /bin/true' && "
              f'{bpftool} -j map dump name x86_task.bss')
    code, out, err = bpfuml('exec', '--file', obj, '--', '/bin/sh', '-c', script)
    check(code == 0, f'exit {code}: {out[-800:]} {err[-800:]}')
    try:
        g = {k: v for d in json.loads(out.strip().splitlines()[-1])[0]['formatted']['value']['.bss'] for k, v in d.items()}
    except (ValueError, LookupError, TypeError) as e:
        raise Failure(f'no .bss dump ({e}):\n{out[-800:]}')
    check(g['signals'] >= 1 and g['signals_errno_0'] == g['signals'], f'signal_generate: {g}')
    check(g['getpid_calls'] >= 1, f'__do_sys_getpid: {g}')
    check(g['forks'] >= 1 and g['forks_sp_on_stack'] == g['forks'],
          f'fork frame: {g["forks_sp_on_stack"]} of {g["forks"]} forks had a user stack pointer on the stack')


@test
def inlined_helpers_read_the_current_cpu_and_task():
    # 0050: as on x86_64, bpf_get_smp_processor_id() and
    # bpf_get_current_task[_btf]() become reads of per-CPU cpu_number and
    # current_task, interpreted and JITed.  The guest agent (PID 1) does the
    # test run; a current_task left behind by a switch would be another task.
    obj = os.path.join(PROGS, 'inlined_helpers.bpf.o')
    for mode in ('--interpreter', '--jit'):
        code, doc, err = bpfuml_json('run', mode, obj, '--prog', 'current_and_cpu')
        check(code == EXIT_OK, f'{mode}: exit {code}: {err}')
        g = run_globals(doc)
        check(g['task_pid'] == g['helper_pid'] == 1 and g['same_task'] == 1 and g['cpu'] == 0,
              f'{mode}: inlined reads {g}')
    # The selftests that check the translated code and bpf_fastcall's
    # spill/fill removal around these calls (one subtest also expects
    # x86_64's timed may_goto: denied; arm64's and riscv64's skip).
    for mode in ('--interpreter', '--jit'):
        code, doc, err = bpfuml_json('kselftest', mode, '-t', 'verifier_bpf_fastcall', timeout=900)
        subtests = [r for r in doc.get('results', []) if r['subtest']]
        passed = [r for r in subtests if r['status'] == 'passed']
        check(code == EXIT_OK and len(passed) >= 28 and
              all(r['status'] in ('passed', 'skipped', 'denied') for r in subtests),
              f'{mode}: exit {code}: {len(passed)} passed; '
              f'{[(r["name"], r["status"]) for r in subtests if r["status"] != "passed"]} {err[-600:]}')


@test
def interrupt_context_is_read_as_on_x86_64():
    # 0060: bpf_experimental.h's bpf_in_task(), bpf_in_hardirq() and
    # bpf_in_serving_softirq() read x86_64's per-CPU __preempt_count (a
    # ksym); UML kept the count in thread_info, so no context was seen as
    # an interrupt.  exe_ctx counts its programs in task context, in a hard
    # interrupt (bpf_testmod's irq_work) and in a softirq (its tasklet).
    listed = {name.split('/')[0] for name, reason in denylist_entries()}
    check('exe_ctx' not in listed, 'DENYLIST.uml denies exe_ctx again')
    for mode in ('--interpreter', '--jit'):
        code, doc, err = bpfuml_json('kselftest', mode, '-t', 'exe_ctx', timeout=900)
        tests = {r['name']: r['status'] for r in doc.get('results', []) if not r['subtest']}
        check(code == EXIT_OK and tests.get('exe_ctx') == 'passed', f'{mode}: exit {code}: {tests} {err[-800:]}')
    check_no_leftovers()


def cpuinfo_flags(text):
    return next(line.split(':', 1)[1].split() for line in text.splitlines() if line.startswith('flags'))


@test
def cpu_flags_are_the_hosts():
    # 0061: UML takes x86_64's CPU capabilities (what cpu_feature_enabled()
    # and the JIT ask) from the host's /proc/cpuinfo.  Matched as whole
    # words, the guest has the host's flags and no others: substrings had set
    # ss, cid, pn and 3dnow from sse, pcid, pni and 3dnowprefetch.
    code, out, err = bpfuml('exec', '--', '/bin/cat', '/proc/cpuinfo')
    check(code == EXIT_OK, f'exit {code}: {err}')
    with open('/proc/cpuinfo') as f:
        host = cpuinfo_flags(f.read())
    guest = set(cpuinfo_flags(out))
    check(guest and guest <= set(host), f'flags the host lacks: {sorted(guest - set(host))}')
    # Names that contain others must still be found themselves (a host
    # kernel newer than 7.3 may print flags 7.3 does not know: not these).
    lost = [f for f in ('sse', 'sse2', 'pcid', 'pni', 'cx16', '3dnowprefetch', 'popcnt') if f in host and f not in guest]
    check(not lost, f'host flags the guest lost: {lost}')


def attach_on_uml(obj, name, reason):
    code, out, err = bpfuml('run', os.path.join(PROGS, obj), '--prog', name, '--attach')
    check(code == EXIT_REJECTED, f'exit {code}, want 1:\n{out}{err}')
    check(f'{name}: attach not possible on UML: {reason}' in out, f'no plain reason:\n{out}{err}')
    code, doc, err = bpfuml_json('run', os.path.join(PROGS, obj), '--prog', name, '--attach')
    check(doc['program']['verdict'] == 'accepted' and doc['attach']['attached'] is False
          and doc['attach']['message'].startswith('attach not possible on UML: ' + reason)
          and 'run' not in doc, f'JSON: {doc}')


@test
def attach_impossible_on_uml_is_said_plainly():
    # kprobe.multi needs fprobe, which needs ftrace's function graph
    # tracer: UML has the function tracer (kernel-patches 0069), not that
    # (single kprobes attach since 0055-0057).  The program verifies; the
    # attach is refused with that reason (exit 1), not tried.
    attach_on_uml('fprobe_target.bpf.o', 'on_nanosleep_multi', 'multi-kprobes need fprobe')


@test
def struct_ops_attach_on_uml():
    # x86_64's trampolines (kernel-patches 0045) call the struct_ops
    # programs, interpreted or JITed: the TCP congestion control registers.
    for mode in ('--interpreter', '--jit'):
        code, doc, err = bpfuml_json('run', mode, os.path.join(PROGS, 'struct_ops.bpf.o'), '--prog',
                                     'bpfuml_ssthresh', '--attach')
        check(doc.get('attach', {}).get('attached') is True,
              f'{mode}: exit {code}, attach {doc.get("attach")} {doc.get("error")}')


@test
def tracepoints_and_iterators_attach_on_uml():
    # No trampoline needed: perf tracepoint events (0005, 0006), raw
    # tracepoint links (tp_btf too) and iterator links attach on UML.  The
    # test run that follows is not one these types support.
    for name in ('tracepoint_nanosleep', 'raw_tp_args', 'tp_btf_sys_enter', 'iter_tasks'):
        code, doc, err = bpfuml_json('run', os.path.join(PROGS, 'tracing_types.bpf.o'),
                                     '--prog', name, '--attach')
        check(doc.get('attach', {}).get('attached') is True,
              f'{name}: exit {code}, attach {doc.get("attach")} {doc.get("error")}')


def verify_own_build(name, backend):
    """tests/progs/NAME verified on BACKEND, built against that kernel's own
    vmlinux.h (UML's is the built object): (exit code, JSON document)."""
    with tempfile.TemporaryDirectory() as tmp:
        obj = (os.path.join(PROGS, f'{name}.bpf.o') if backend == 'uml' else
               compile_for_x86_64(os.path.join(SRC_PROGS, f'{name}.bpf.c'), tmp))
        code, doc, err = bpfuml_json('verify', *backend_options(backend), obj,
                                     timeout=backend_timeout(backend))
    return code, doc


@test(backends={'uml': 'kprobe_context_bounded_as_on_x86_64', 'qemu': 'qemu_kprobe_context_bound_same_as_uml'})
def kprobe_context_bounded(backend):
    # 0010: past x86_64's 21 registers (offset 168) is outside the context.
    # The qemu twin is x86_64's own verdict, on the program built against
    # its own vmlinux.h.
    code, doc = verify_own_build('kprobe_ctx_bound', backend)
    check_rejected_with(code, doc, 'past_regs', 'invalid bpf_context access off=168 size=8')


@test(backends={'uml': 'pt_regs_is_x86_64s_to_bpf', 'qemu': 'qemu_pt_regs_same_as_uml'})
def pt_regs_as_bpf_sees_it(backend):
    # 0066: BTF describes struct pt_regs by its 21 x86_64 registers, 168
    # bytes: a copy of sizeof(struct pt_regs) from a kprobe's context loads,
    # a read past the registers through bpf_task_pt_regs() does not.  The
    # qemu twin is x86_64's own verdicts, built against its own vmlinux.h.
    code, doc = verify_own_build('pt_regs_btf', backend)
    copy = prog(doc, 'copy_regs')
    check(copy['verdict'] == 'accepted',
          f'copy_regs: {copy["verdict"]}: {(copy.get("log") or "")[-600:]}')
    check_rejected_with(code, doc, 'task_regs_past_end',
                        'access beyond struct pt_regs at off 168 size 8')


def check_rejected_with(code, doc, name, error):
    """Program NAME was rejected with the verifier's ERROR line, and the
    command said so (exit 1)."""
    p = prog(doc, name)
    legacy = (p.get('diagnostics') or {}).get('legacy_error') or ''
    check(code == EXIT_REJECTED and error in legacy,
          f'{name}: exit {code}, verdict {p["verdict"]}, legacy {legacy!r}')


def check_perf_event_context(code, doc):
    narrow = prog(doc, 'sample_period_narrow')
    check(narrow['verdict'] == 'accepted',
          f'sample_period_narrow: {narrow["verdict"]}: {(narrow.get("log") or "")[-600:]}')
    check_rejected_with(code, doc, 'past_context', 'invalid bpf_context access off=184 size=8')


@test(backends={'uml': 'perf_event_context_laid_out_as_on_x86_64', 'qemu': 'qemu_perf_event_context_same_as_uml'})
def perf_event_context_laid_out(backend):
    # 0026: sample_period at 168, narrow loads allowed, the context ends at 184,
    # whether the program was built against UML's vmlinux.h or x86_64's.  The
    # qemu twin is x86_64's own verdicts, on the program built against its
    # own vmlinux.h.
    if backend == 'uml':
        code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'perf_event_ctx.bpf.o'))
        check_perf_event_context(code, doc)
    if backend != 'uml' or os.path.exists(os.path.join(X86_VMLINUX_DIR, 'vmlinux.h')):
        with tempfile.TemporaryDirectory() as tmp:
            obj = compile_for_x86_64(os.path.join(SRC_PROGS, 'perf_event_ctx.bpf.c'), tmp)
            code, doc, err = bpfuml_json('verify', *backend_options(backend), obj,
                                         timeout=backend_timeout(backend))
        check_perf_event_context(code, doc)


@test
def kprobe_built_for_x86_64_reads_x86_64_registers():
    # 0009: PT_REGS_PARM2() is ctx->si for __TARGET_ARCH_x86; against UML's
    # stock struct pt_regs (no field si) libbpf poisons the access.  Built
    # against the x86_64 vmlinux.h, the program must verify and read offset
    # 104 (si), as on x86_64.
    with tempfile.TemporaryDirectory() as tmp:
        obj = compile_for_x86_64(os.path.join(SRC_PROGS, 'tracing_types.bpf.c'), tmp)
        for path in (obj, os.path.join(PROGS, 'tracing_types.bpf.o')):
            code, doc, err = bpfuml_json('verify', path, '--prog', 'kprobe_args', '--log-level', '2')
            p = prog(doc, 'kprobe_args')
            check(code == EXIT_OK and p['verdict'] == 'accepted',
                  f'{os.path.basename(path)}: exit {code}, verdict {p["verdict"]}: '
                  f'{(p.get("log") or "")[-600:]} {p.get("libbpf_messages")}')
            check('(r1 +104)' in (p.get('log') or ''), f'{os.path.basename(path)}: no read of '
                  f'ctx+104 (si):\n{(p.get("log") or "")[:1500]}')


def not_loaded_with_uml_note(obj, name, note_start):
    """OBJ's program NAME, not loaded on UML, carries a UML note that
    starts with NOTE_START, so that no one takes it for the program's fault."""
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, obj))
    p = prog(doc, name)
    check(code == EXIT_REJECTED and p['verdict'] == 'not_loaded' and
          (p.get('uml_fidelity_note') or '').startswith(note_start),
          f'exit {code}: {p.get("verdict")} {p.get("uml_fidelity_note")} {p.get("libbpf_messages")}')


@test
def preemptible_rcu_target_is_said_to_be_missing_on_uml():
    # fentry on __rcu_read_lock (the selftest tracing_failure's
    # tracing_deny): preemptible RCU's, which UML, not preemptible, lacks.
    not_loaded_with_uml_note('preemptible_rcu_target.bpf.o', 'on_rcu_read_lock',
                             '__rcu_read_lock/__rcu_read_unlock are preemptible RCU')


@test
def x86_exception_tracepoint_is_said_to_be_x86s():
    # tp_btf/page_fault_user (falco's modern probe): x86's exception
    # tracepoint, which UML cannot have.
    not_loaded_with_uml_note('x86_exception_tracepoint.bpf.o', 'on_user_fault',
                             "page_fault_user/page_fault_kernel are x86's exception")
