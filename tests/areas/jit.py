# jit.py — the x86_64 JIT in UML (kernel-patches 0040-0045).  --jit runs
# what only machine code can run; the interpreter stays the default, with
# the same verdicts (both modes verify for x86_64's JIT).
import json
import os
import tempfile

from testlib import (EXIT_OK, EXIT_REJECTED, PROGS, TOP, bpfuml, bpfuml_json, check, check_no_leftovers, prog,
                     run_globals, test)


@test
def jit_mode_runs_what_only_a_jit_can():
    for name, programs in (('arena', ('arena_write',)), ('jit_only', ('throws', 'tail_calls_from_subprog'))):
        code, doc, err = bpfuml_json('verify', '--jit', os.path.join(PROGS, f'{name}.bpf.o'))
        check(code == EXIT_OK and doc.get('bpf_mode') == 'jit', f'{name}: exit {code}: {err}')
        for p in programs:
            check(prog(doc, p)['verdict'] == 'accepted', f'{name}/{p}: {prog(doc, p).get("verdict")}')
    # And they run: the arena page is written; bpf_throw() unwinds to its
    # default callback, which returns the cookie.
    code, doc, err = bpfuml_json('run', '--jit', os.path.join(PROGS, 'arena.bpf.o'), '--prog', 'arena_write')
    check(code == EXIT_OK and doc['run'].get('retval') == 0, f'arena: exit {code}: {doc.get("run")} {err}')
    with tempfile.TemporaryDirectory() as tmp:
        for size, want in ((64, 0), (1200, 1)):
            packet = os.path.join(tmp, f'packet{size}')
            with open(packet, 'wb') as f:
                f.write(bytes(14) + bytes(size - 14))
            code, doc, err = bpfuml_json('run', '--jit', os.path.join(PROGS, 'jit_only.bpf.o'), '--prog', 'throws',
                                         '--data-in', packet)
            check(code == EXIT_OK and doc['run'].get('retval') == want,
                  f'throws with {size} bytes: exit {code}: {doc.get("run")} {err}')
    check_no_leftovers()


@test
def trampolines_attach_to_kernel_functions():
    # 0046, 0069: fentry/fexit/lsm put a call over the entry of a kernel
    # function, its ftrace site, as on x86_64.  The test run calls
    # bpf_fentry_test1(1), which returns 2.
    obj = os.path.join(PROGS, 'tracing_types.bpf.o')
    for mode in ('--jit', '--interpreter'):
        for name, seen, want in (('fentry_test1', 'fentry_arg', 1), ('fexit_test1', 'fexit_ret', 2)):
            code, doc, err = bpfuml_json('run', mode, obj, '--prog', name, '--attach')
            check(code == EXIT_OK and doc.get('attach', {}).get('attached') is True,
                  f'{mode} {name}: exit {code}: attach {doc.get("attach")} {err}')
            g = run_globals(doc)
            check(g[seen] == want, f'{mode} {name}: {seen} = {g[seen]}, want {want}')
        code, doc, err = bpfuml_json('run', mode, obj, '--prog', 'lsm_file_open', '--attach')
        check(doc.get('attach', {}).get('attached') is True, f'{mode} lsm: exit {code}: {doc.get("attach")} {err}')
    # 0069: one program on several kernel functions (fentry.multi,
    # fexit.multi) gets a trampoline per function through ftrace's direct
    # calls.  The test run calls bpf_fentry_test1..10: ten entries whose
    # first arguments below 100 sum to 41, ten exits whose returns sum to
    # 232 (net/bpf/test_run.c).
    obj = os.path.join(PROGS, 'tracing_multi.bpf.o')
    for mode in ('--jit', '--interpreter'):
        for name, want in (('fentry_multi', {'multi_entries': 10, 'multi_first_args': 41}),
                           ('fexit_multi', {'multi_exits': 10, 'multi_returns': 232})):
            code, doc, err = bpfuml_json('run', mode, obj, '--prog', name, '--attach')
            check(code == EXIT_OK and doc.get('attach', {}).get('attached') is True,
                  f'{mode} {name}: exit {code}: attach {doc.get("attach")} {err}')
            g = run_globals(doc)
            check(all(g[k] == v for k, v in want.items()), f'{mode} {name}: {g}, want {want}')
    # A notrace function has no entry to patch, on x86_64 (no ftrace NOP)
    # as on UML: the attach fails with EBUSY.
    code, doc, err = bpfuml_json('run', '--jit', os.path.join(PROGS, 'notrace_target.bpf.o'),
                                 '--prog', 'on_spin_lock', '--attach')
    attach = doc.get('attach', {})
    check(code == EXIT_REJECTED and attach.get('attached') is False and attach.get('errno') == 16,
          f'fentry on notrace bpf_spin_lock: exit {code}: {attach} {err}')
    check_no_leftovers()


@test
def bpf_mode_is_set_in_the_guest_and_said():
    for args, want in (((), '0'), (('--interpreter',), '0'), (('--jit',), '1')):
        code, out, err = bpfuml('exec', *args, '--', '/bin/cat', '/proc/sys/net/core/bpf_jit_enable')
        check(code == 0 and out.strip() == want, f'exec {args}: exit {code}: {out!r} {err}')
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'accepted.bpf.o'))
    check(doc.get('bpf_mode') == 'interpreter', f'default bpf_mode {doc.get("bpf_mode")!r}')
    # JITed programs are in /proc/kallsyms, as on x86_64 with the JIT on.
    code, out, err = bpfuml('exec', '--jit', '--', '/bin/sh', '-c', 'cat /proc/sys/net/core/bpf_jit_kallsyms')
    check(code == 0 and out.strip() == '1', f'bpf_jit_kallsyms {out!r}')


@test
def verdicts_are_the_same_with_and_without_the_jit():
    # What the interpreter can run, the JIT judges alike (both verify for
    # x86_64's JIT); only what needs machine code differs, and is said.
    for name in ('accepted', 'rejected', 'many_rejected', 'callbacks', 'kfunc_calls', 'stack_rounding',
                 'tail_call', 'loader_fixups', 'legacy_probe_read'):
        obj = os.path.join(PROGS, f'{name}.bpf.o')
        if not os.path.exists(obj):
            continue
        code_i, doc_i, _ = bpfuml_json('verify', obj)
        code_j, doc_j, _ = bpfuml_json('verify', '--jit', obj)
        verdicts = lambda d: [(p['name'], p['verdict'], (p.get('diagnostics') or {}).get('stats')) for p in d['programs']]
        check(code_i == code_j and verdicts(doc_i) == verdicts(doc_j),
              f'{name}: interpreter {code_i} {verdicts(doc_i)}\njit {code_j} {verdicts(doc_j)}')


@test
def serve_keeps_its_mode_and_a_client_of_the_other_boots_its_own():
    from areas.serve import Server
    obj = os.path.join(PROGS, 'arena.bpf.o')
    with Server('--jit') as server:
        code, out, err = bpfuml('verify', '--jit', '--json', '--server', server.socket, obj)
        doc = json.loads(out)
        check(code == EXIT_OK and doc['bpf_mode'] == 'jit' and 'note' not in err, f'exit {code}: {err}')
        code, out, err = bpfuml('verify', '--json', '--server', server.socket, obj)
        check('runs BPF with the jit, not the interpreter' in err and json.loads(out)['bpf_mode'] == 'interpreter',
              f'exit {code}: {err}')


def denylist_entries():
    """DENYLIST.uml's entries: (test or test/subtest, reason)."""
    with open(os.path.join(TOP, 'tests', 'kselftest', 'DENYLIST.uml')) as f:
        return [tuple(part.strip() for part in line.split('#', 1))
                for line in f if not line.startswith('#') and '#' in line]


def check_selftests_pass(wanted, run=None):
    """`bpfuml kselftest -t RUN` (default: WANTED), interpreted and with
    --jit: each test or test/subtest of WANTED is not in DENYLIST.uml and
    passes, and nothing that ran fails."""
    listed = {name for name, reason in denylist_entries()}
    check(not listed & set(wanted), f'DENYLIST.uml denies {sorted(listed & set(wanted))} again')
    for mode in ('--interpreter', '--jit'):
        code, doc, err = bpfuml_json('kselftest', mode, '-t', ','.join(run or wanted), timeout=900)
        results = {r['name']: r['status'] for r in doc.get('results', [])}
        missing = [n for n in wanted if results.get(n) != 'passed']
        failed = {n: s for n, s in results.items() if s not in ('passed', 'skipped', 'denied')}
        check(code == EXIT_OK and not missing and not failed,
              f'{mode}: exit {code}: not passed {missing}; failed {failed} {err[-800:]}')
    check_no_leftovers()


def interpreter_only_entries():
    """DENYLIST.uml's whole-test entries that --jit lifts ([interpreter])."""
    return sorted(name for name, reason in denylist_entries()
                  if reason.startswith('[interpreter]') and '/' not in name)


@test
def kselftest_jit_runs_the_tests_denied_to_the_interpreter():
    # Arena, exceptions, struct_ops and freplace selftests: denied while UML
    # interprets BPF, run and passed with --jit.
    names = ('verifier_arena', 'arena_htab', 'exceptions', 'struct_ops_multi_pages', 'trace_ext',
             'compute_live_registers', 'stream_success', 'arena_kfunc_jit', 'arena_spin_lock', 'libarena')
    wanted = [n for n in interpreter_only_entries() if n in names]
    check(len(wanted) == len(names), f'DENYLIST.uml lost the [interpreter] tag of some of these: '
          f'{sorted(set(names) - set(wanted))}')
    filter_ = ','.join(wanted)
    code, doc, err = bpfuml_json('kselftest', '-t', filter_, timeout=900)
    tests = {r['name']: r['status'] for r in doc.get('results', []) if not r['subtest']}
    check(all(tests.get(n) == 'denied' for n in wanted), f'interpreter: {tests}')
    code, doc, err = bpfuml_json('kselftest', '--jit', '-t', filter_, timeout=900)
    tests = {r['name']: r['status'] for r in doc.get('results', []) if not r['subtest']}
    check(code == EXIT_OK and doc.get('bpf_mode') == 'jit' and all(tests.get(n) == 'passed' for n in wanted),
          f'--jit: exit {code} {tests} {err[-800:]}')
    check_no_leftovers()


@test
def jited_code_is_x86_64s():
    # 0062 and test_progs built with LLVM's disassembler: the selftests that
    # compare the code the JIT emits with x86_64's (__jited: ENDBR64 at the
    # entries, the private stack, sign-extending arena loads) run and pass
    # instead of skipping.
    wanted = {'verifier_private_stack': 'verifier_private_stack/Private stack, callback',
              'verifier_ldsx': 'verifier_ldsx/Arena LDSX Disasm'}
    code, doc, err = bpfuml_json('kselftest', '--jit', '-t', ','.join(wanted), timeout=900)
    statuses = {r['name']: r['status'] for r in doc.get('results', [])}
    check(code == EXIT_OK and all(statuses.get(n) == 'passed' for n in list(wanted) + list(wanted.values())),
          f'exit {code}: {statuses} {err[-800:]}')


@test
def timed_may_goto_with_the_jit_counting_form_interpreted():
    # 0054: with the JIT on, the verifier rewrites may_goto into x86_64's
    # timed form (the selftests check the instructions it emits); the
    # interpreter keeps the counting form, and its x86_64 subtests are
    # denied to it ([interpreter]).
    timed = 'verifier_may_goto_1/may_goto batch with offsets 2/0'
    check(dict(denylist_entries()).get(timed, '').startswith('[interpreter]'),
          f'DENYLIST.uml: {timed!r} is not an [interpreter] entry')
    statuses = {}
    for mode in ('--jit', '--interpreter'):
        code, doc, err = bpfuml_json('kselftest', mode, '-t', 'verifier_may_goto_1,verifier_may_goto_2',
                                     timeout=900)
        subtests = [r for r in doc.get('results', []) if r['subtest']]
        statuses[mode] = {r['name']: r['status'] for r in subtests}
        check(code == EXIT_OK and subtests and
              all(r['status'] in ('passed', 'skipped', 'denied') for r in subtests),
              f'{mode}: exit {code}: {statuses[mode]} {err[-600:]}')
    check(statuses['--jit'].get(timed) == 'passed' and statuses['--interpreter'].get(timed) == 'denied',
          f'{timed}: --jit {statuses["--jit"].get(timed)}, interpreted {statuses["--interpreter"].get(timed)}')


@test
def kselftest_runs_trampoline_and_syscall_wrapper_tests():
    # kernel-patches 0046-0047: selftests denied before for "BPF
    # trampolines" on kernel functions and "x86_64 syscall wrappers" run and
    # pass, interpreted and JITed: fentry/fexit/fmod_ret/lsm on kernel and
    # bpf_testmod functions, sleepable fentry on __x64_sys_* targets.
    wanted = ('fentry_test', 'fexit_test', 'modify_return', 'test_lsm', 'fentry_fexit', 'd_path',
              'cgrp_local_storage', 'task_local_storage')
    listed = {name.split('/')[0] for name, reason in denylist_entries()}
    check(not listed & set(wanted), f'DENYLIST.uml denies {sorted(listed & set(wanted))} again')
    for mode in ('--interpreter', '--jit'):
        code, doc, err = bpfuml_json('kselftest', mode, '-t', ','.join(wanted), timeout=900)
        tests = {r['name']: r['status'] for r in doc.get('results', []) if not r['subtest']}
        failed = {r['name']: r['status'] for r in doc.get('results', []) if r['status'] not in ('passed', 'skipped')}
        check(code == EXIT_OK and all(tests.get(n) == 'passed' for n in wanted) and not failed,
              f'{mode}: exit {code}: {tests} not passed: {failed} {err[-800:]}')
    check_no_leftovers()
