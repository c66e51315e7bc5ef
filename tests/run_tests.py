#!/usr/bin/env python3
"""run_tests.py — bpfuml's test driver (`make test`).

Runs each test function below (integration tests boot the real UML kernel
through build/bin/bpfuml), prints `ok NAME` or `FAIL NAME` with the reason
indented, and ends with the line `N passed, N failed`.

usage: tests/run_tests.py [BUILD_DIR] [-k SUBSTRING]
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('-')
                        else os.path.join(TOP, 'build'))
BPFUML = os.path.join(BUILD, 'bin', 'bpfuml')
PROGS = os.path.join(BUILD, 'tests', 'progs')
SRC_PROGS = os.path.join(TOP, 'tests', 'progs')

EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_INFRA, EXIT_COMPILE, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130

tests = []


def test(func):
    tests.append(func)
    return func


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def bpfuml(*args, timeout=120):
    """Run bpfuml; returns (exit code, stdout, stderr)."""
    proc = subprocess.run([BPFUML, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, 'NO_COLOR': '1'})
    return proc.returncode, proc.stdout, proc.stderr


def bpfuml_json(*args, **kw):
    code, out, err = bpfuml(*args, '--json', **kw)
    try:
        doc = json.loads(out)
    except ValueError as e:
        raise Failure(f'stdout is not one JSON document ({e}):\n{out[:2000]}\nstderr:\n{err[:2000]}')
    return code, doc, err


def guest_leftovers():
    """UML processes and run directories that outlived their bpfuml."""
    procs = []
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmdline = f.read().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
            continue
        if 'umid=bpfuml-' in cmdline:
            procs.append(f'{pid}: {cmdline[:120]}')
    dirs = glob.glob('/dev/shm/bpfuml.*') + glob.glob(os.path.join(tempfile.gettempdir(), 'bpfuml.*'))
    return procs, dirs


BASELINE_DIRS = set()   # run dirs someone kept (--keep) before we started


def check_no_leftovers(before_dirs=()):
    procs, dirs = guest_leftovers()
    dirs = [d for d in dirs if d not in before_dirs and d not in BASELINE_DIRS]
    check(not procs, 'UML processes left behind:\n' + '\n'.join(procs))
    check(not dirs, 'run directories left behind: ' + ' '.join(dirs))


def prog(doc, name):
    for p in doc['programs']:
        if p['name'] == name:
            return p
    raise Failure(f'no program {name} in {[p["name"] for p in doc["programs"]]}')


# ---- foundation ----------------------------------------------------------

@test
def smoke_rhash_syscall_prog():
    proc = subprocess.run([os.path.join(TOP, 'tests', 'smoke', 'run.sh'), BUILD],
                          capture_output=True, text=True, timeout=120)
    check(proc.returncode == 0, proc.stdout + proc.stderr)


# ---- verify ----------------------------------------------------------------

@test
def verify_accepted_program():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'accepted.bpf.o'))
    check(code == EXIT_OK, f'exit {code}, want 0; stderr: {err}')
    p = prog(doc, 'pass_all')
    check(p['verdict'] == 'accepted', f'verdict {p["verdict"]}')
    check(p['type'] == 'xdp', f'type {p["type"]}')
    stats = p['diagnostics']['stats']
    check(stats and stats['insns_processed'] > 0, f'no statistics line: {p["diagnostics"]}')
    check_no_leftovers()


@test
def verify_rejected_program_has_legacy_line_and_report():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'rejected.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1; stderr: {err}')
    p = prog(doc, 'unchecked_lookup')
    check(p['verdict'] == 'rejected', f'verdict {p["verdict"]}')
    d = p['diagnostics']
    check(d['legacy_error'] and 'map_value_or_null' in d['legacy_error'],
          f'legacy line: {d["legacy_error"]!r}')
    check(d['has_report'], 'no structured report parsed; log tail:\n' + p['log'][-1500:])
    check(d['reports'][0]['category'] == 'Register Type Safety', f'category: {d["reports"][0]["category"]}')


@test
def verify_rejected_program_human_output():
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'rejected.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}')
    check('unchecked_lookup' in out and 'rejected' in out, out)
    check('Verification failed:' in out, 'the report is not shown:\n' + out)
    check("error: R0 invalid mem access 'map_value_or_null'" in out or
          "invalid mem access 'map_value_or_null'" in out, 'legacy line missing:\n' + out)


@test
def verify_two_programs_judged_independently():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'two_progs.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1')
    check(prog(doc, 'good_prog')['verdict'] == 'accepted', 'good_prog not accepted')
    check(prog(doc, 'bad_prog')['verdict'] == 'rejected', 'bad_prog not rejected')
    # --prog selects one: the good one alone passes.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'two_progs.bpf.o'), '--prog', 'good_prog')
    check(code == EXIT_OK and [p['name'] for p in doc['programs']] == ['good_prog'],
          f'--prog good_prog: exit {code}, programs {[p["name"] for p in doc["programs"]]}')


@test
def verify_log_buffer_grows_instead_of_truncating():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'long_log.bpf.o'), '--log-level', '2')
    check(code == EXIT_OK, f'exit {code}')
    p = prog(doc, 'long_loop')
    check(p['log_bytes'] > (1 << 20), f'log is {p["log_bytes"]} bytes; the test needs > 1 MiB')
    check(p['diagnostics']['stats'] and not p['diagnostics']['truncated'],
          'the log lost its statistics line: ' + p['log'][-300:])
    check(len(p['log']) == p['log_bytes'], 'the log in the JSON is not the whole log')


@test
def verify_unknown_program_name_is_usage_error():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'two_progs.bpf.o'), '--prog', 'nope')
    check(code == EXIT_USAGE, f'exit {code}, want 2')
    check('good_prog' in doc['error']['message'], doc['error'])


@test
def verify_source_file_is_compiled():
    code, doc, err = bpfuml_json('verify', os.path.join(SRC_PROGS, 'accepted.bpf.c'))
    check(code == EXIT_OK, f'exit {code}; {doc}')
    check(prog(doc, 'pass_all')['verdict'] == 'accepted', 'not accepted')


@test
def verify_compile_error():
    before = guest_leftovers()[1]
    code, out, err = bpfuml('verify', os.path.join(SRC_PROGS, 'compile_error.bpf.c'))
    check(code == EXIT_COMPILE, f'exit {code}, want 4')
    check('undeclared_variable' in err and 'error:' in err, "clang's message not shown:\n" + err)
    check(out == '', 'stdout should be empty: ' + out)
    check_no_leftovers(before)


@test
def verify_missing_file():
    code, out, err = bpfuml('verify', '/nonexistent/prog.bpf.o')
    check(code == EXIT_USAGE, f'exit {code}, want 2')
    check('/nonexistent/prog.bpf.o' in err and 'no such file' in err, err)


@test
def verify_file_that_is_not_elf():
    code, doc, err = bpfuml_json('verify', os.path.join(TOP, 'README.md'))
    check(code == EXIT_USAGE, f'exit {code}, want 2')
    check('not an ELF object' in doc['error']['message'], doc['error'])


@test
def verify_host_elf_that_is_not_bpf():
    code, out, err = bpfuml('verify', BPFUML)
    check(code == EXIT_USAGE, f'exit {code}, want 2')
    check('not BPF' in err, err)


# ---- run -------------------------------------------------------------------

@test
def run_with_data_in_out_and_globals():
    packet = bytes(range(1, 7)) + bytes(range(11, 17)) + b'\x08\x00' + b'\x40' + bytes(49)
    with tempfile.TemporaryDirectory() as tmp:
        data_in = os.path.join(tmp, 'in.bin')
        data_out = os.path.join(tmp, 'out.bin')
        with open(data_in, 'wb') as f:
            f.write(packet)
        code, doc, err = bpfuml_json('run', os.path.join(PROGS, 'packet_rewrite.bpf.o'),
                                     '--prog', 'rewrite', '--data-in', data_in,
                                     '--data-out', data_out, '--repeat', '1')
        check(code == EXIT_OK, f'exit {code}: {doc.get("error")} {err}')
        run = doc['run']
        check(run['retval'] == 3, f'retval {run["retval"]}, want XDP_TX (3)')
        want = packet[6:12] + packet[0:6] + packet[12:14] + bytes([0x43]) + packet[15:]
        got = bytes.fromhex(run['data_out_hex'])
        check(got == want, f'data_out {got.hex()} != {want.hex()}')
        with open(data_out, 'rb') as f:
            check(f.read() == want, '--data-out file differs from data_out')
    globals_ = {g['name']: g for g in run['globals']}
    check(globals_.get('runs', {}).get('value') == 1, f'runs: {globals_.get("runs")}')
    check(globals_.get('last_len', {}).get('value') == len(packet), f'last_len: {globals_.get("last_len")}')
    check(globals_.get('last_first_byte', {}).get('value') == 0x40, f'last_first_byte: {globals_.get("last_first_byte")}')
    check(globals_.get('bump', {}).get('value') == 3 and globals_['bump']['section'] == '.rodata',
          f'bump: {globals_.get("bump")}')
    check(globals_['runs']['section'] == '.bss' and globals_['last_len']['section'] == '.data',
          f'sections: {globals_}')


@test
def run_rejected_program_exits_1():
    code, doc, err = bpfuml_json('run', os.path.join(PROGS, 'rejected.bpf.o'), '--prog', 'unchecked_lookup')
    check(code == EXIT_REJECTED, f'exit {code}, want 1')
    check(doc['program']['verdict'] == 'rejected' and 'run' not in doc, doc.keys())


# ---- kernel patches (kernel-patches/) --------------------------------------

def run_prog(obj, name, *extra):
    """bpfuml run --json on a tc program with a 64-byte packet; returns (run, globals by name)."""
    with tempfile.TemporaryDirectory() as tmp:
        data_in = os.path.join(tmp, 'in.bin')
        with open(data_in, 'wb') as f:
            f.write(bytes(range(0x40, 0x80)))
        code, doc, err = bpfuml_json('run', os.path.join(PROGS, obj), '--prog', name,
                                     '--data-in', data_in, *extra)
    p = doc.get('program', {})
    check(code == EXIT_OK and p.get('verdict') == 'accepted' and 'run' in doc,
          f'{name}: exit {code}, verdict {p.get("verdict")}: {(p.get("log") or "")[-1500:]} '
          f'{doc.get("error")} {err}')
    return doc['run'], {g['name']: g.get('value') for g in doc['run']['globals']}


@test
def irq_work_refills_bpf_mem_alloc_between_inserts():
    # 0001-um-Deliver-irq_work-through-a-soft-interrupt.patch: without it the
    # 5th insert of a run fails with -ENOMEM (first_err -12 at 4).
    for prefix in ('rhash', 'hash'):
        run, g = run_prog('many_inserts.bpf.o', f'insert_{prefix}')
        check(g[f'{prefix}_first_err'] == 0,
              f'{prefix}: insert #{g[f"{prefix}_first_err_at"]} failed with {g[f"{prefix}_first_err"]}'
              f' after {g[f"{prefix}_inserted"]} inserts')
        check(g[f'{prefix}_inserted'] == 500 and g[f'{prefix}_found'] == 500, f'{prefix}: {g}')
        check(run['retval'] == 0, f'{prefix}: retval {run["retval"]}')


@test
def kfunc_calls_verified_and_run_on_the_interpreter():
    # 0002-bpf-Let-the-interpreter-call-kfuncs-...: without it the verifier
    # stops at "JIT is required for calling kernel function".
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'kfunc_calls.bpf.o'))
    p = prog(doc, 'kfunc_calls')
    check(code == EXIT_OK and p['verdict'] == 'accepted',
          f'exit {code}, verdict {p["verdict"]}: {p["log"][-1500:]}')
    check(p['diagnostics']['stats']['insns_processed'] > 20, f'stats: {p["diagnostics"]["stats"]}')
    run, g = run_prog('kfunc_calls.bpf.o', 'kfunc_calls')
    check(g['iter_sum'] == 4950, f'bpf_for() sum {g["iter_sum"]}, want 4950')
    check(g['obj_sum'] == 49, f'bpf_obj_new() object read back as {g["obj_sum"]}, want 49')
    check(g['slice_byte'] == 0x40, f'bpf_dynptr_slice() byte {g["slice_byte"]}, want 0x40')
    check(run['retval'] == 0, f'retval {run["retval"]}')


@test
def callbacks_run_on_the_interpreter():
    # 0003-bpf-Run-callbacks-of-interpreted-programs-...: without it the
    # verifier's last step says "callbacks are not allowed in non-JITed programs".
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'callbacks.bpf.o'))
    verdicts = {p['name']: p['verdict'] for p in doc['programs']}
    check(code == EXIT_OK and set(verdicts.values()) == {'accepted'},
          f'exit {code}, verdicts {verdicts}: ' +
          ' | '.join(p['log'][-600:] for p in doc['programs'] if p['verdict'] != 'accepted'))
    run, g = run_prog('callbacks.bpf.o', 'loop')
    check(g['loop_iters'] == 10 and g['loop_sum'] == 285,
          f'bpf_loop(): {g["loop_iters"]} iterations, sum {g["loop_sum"]}; want 10, 285')
    check(run['retval'] == 0, f'loop: retval {run["retval"]}')
    run, g = run_prog('callbacks.bpf.o', 'loop_inlined')
    check(g['loop_iters'] == 10 and g['loop_sum'] == 285 and run['retval'] == 0,
          f'inlined bpf_loop(): {g["loop_iters"]} iterations, sum {g["loop_sum"]}, retval {run["retval"]}')
    run, g = run_prog('callbacks.bpf.o', 'for_each')
    check(g['for_each_elems'] == 8 and g['for_each_sum'] == 280,
          f'bpf_for_each_map_elem(): {g["for_each_elems"]} elements, sum {g["for_each_sum"]}; want 8, 280')
    check(run['retval'] == 0, f'for_each: retval {run["retval"]}')
    # bpf_timer_init() allocates with kmalloc_nolock(): -ENOMEM on UML without
    # 0004-um-Let-SLUB-use-cmpxchg16b-...; the callback's firing is checked
    # by callback_trampolines_are_given_back.
    run, g = run_prog('callbacks.bpf.o', 'timer')
    check(g['timer_err'] == 0 and run['retval'] == 0,
          f'timer: retval {run["retval"]}, error {g["timer_err"]} (2: bpf_timer_init, 3: set_callback, 4: start)')
    run, g = run_prog('callbacks.bpf.o', 'rbtree')
    check(g['rbtree_first_key'] == 1 and g['rbtree_less_calls'] >= 2,
          f'bpf_rbtree_add(): first key {g["rbtree_first_key"]}, less() ran {g["rbtree_less_calls"]} times')
    check(run['retval'] == 0, f'rbtree: retval {run["retval"]}')


@test
def callback_trampolines_are_given_back():
    # 0003: a loaded program holds one of 512 trampolines per callback subprog;
    # the guest fills them all, sees ENOSPC, frees them and loads 1000 more.
    proc = subprocess.run([os.path.join(TOP, 'tests', 'smoke', 'run.sh'), BUILD,
                           'callback_slots', 'progs/callbacks.bpf.o'],
                          capture_output=True, text=True, timeout=120)
    check(proc.returncode == 0 and 'PASS' in proc.stdout, proc.stdout + proc.stderr)


# ---- infrastructure failures -----------------------------------------------

@test
def guest_panic_is_infrastructure_failure():
    before = guest_leftovers()[1]
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'accepted.bpf.o'), '--test-fault', 'panic')
    check(code == EXIT_INFRA, f'exit {code}, want 3')
    check(doc['error']['kind'] == 'kernel' and 'Kernel panic' in doc['error']['message'],
          f'panic not reported with its lines: {doc["error"]}')
    check_no_leftovers(before)


@test
def guest_hang_times_out():
    before = guest_leftovers()[1]
    start = time.monotonic()
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'accepted.bpf.o'),
                                 '--test-fault', 'hang', '--timeout', '2')
    elapsed = time.monotonic() - start
    check(code == EXIT_INFRA, f'exit {code}, want 3')
    check(doc['error']['kind'] == 'timeout', doc['error'])
    check(elapsed < 30, f'took {elapsed:.1f} s for a 2 s time-out')
    check_no_leftovers(before)


@test
def interrupt_kills_guest_and_cleans_up():
    before = guest_leftovers()[1]
    proc = subprocess.Popen([BPFUML, 'verify', os.path.join(PROGS, 'accepted.bpf.o'),
                             '--test-fault', 'hang', '--timeout', '60'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    check(proc.returncode == EXIT_INTERRUPTED, f'exit {proc.returncode}, want 130; {err}')
    check_no_leftovers(before)


@test
def two_runs_at_once_do_not_collide():
    procs = [subprocess.Popen([BPFUML, 'verify', '--json', os.path.join(PROGS, name)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ('accepted.bpf.o', 'rejected.bpf.o', 'accepted.bpf.o')]
    results = [(p.wait(timeout=120), json.loads(p.stdout.read())) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    check([r[0] for r in results] == [0, 1, 0], f'exit codes {[r[0] for r in results]}')
    check_no_leftovers()


def main():
    only = sys.argv[sys.argv.index('-k') + 1] if '-k' in sys.argv else None
    BASELINE_DIRS.update(guest_leftovers()[1])
    passed = failed = 0
    for func in tests:
        name = func.__name__
        if only and only not in name:
            continue
        start = time.monotonic()
        try:
            func()
        except Failure as e:
            failed += 1
            print(f'FAIL {name}')
            print('\n'.join('    ' + line for line in str(e).splitlines()))
            continue
        except Exception:
            failed += 1
            print(f'FAIL {name} (crashed)')
            print('\n'.join('    ' + line for line in traceback.format_exc().splitlines()))
            continue
        passed += 1
        print(f'ok   {name} ({time.monotonic() - start:.2f} s)')
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
