#!/usr/bin/env python3
"""run_tests.py — bpfuml's test driver (`make test`).

Runs each test function below (integration tests boot the real UML kernel
through build/bin/bpfuml), prints `ok NAME` or `FAIL NAME` with the reason
indented, and ends with the line `N passed, N failed`.

usage: tests/run_tests.py [BUILD_DIR] [-k SUBSTRING]
"""
import atexit
import glob
import json
import re
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
# BPFUML_BIN: another build of bpfuml against the same BUILD (make asan-test).
BPFUML = os.environ.get('BPFUML_BIN') or os.path.join(BUILD, 'bin', 'bpfuml')
PROGS = os.path.join(BUILD, 'tests', 'progs')
SRC_PROGS = os.path.join(TOP, 'tests', 'progs')

# Our runs put their run directories here, so that leftovers are ours alone
# even when other bpfuml runs share the machine.
RUNDIR_BASE = tempfile.mkdtemp(prefix='bpfuml-tests.', dir='/dev/shm' if os.path.isdir('/dev/shm') else None)
os.environ['BPFUML_RUNDIR'] = RUNDIR_BASE

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
    """UML or QEMU guests and run directories that outlived their bpfuml."""
    procs = []
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmdline = f.read().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
            continue
        if ('umid=bpfuml-' in cmdline or 'mount_tag=bpfuml_run' in cmdline) and RUNDIR_BASE in cmdline:
            procs.append(f'{pid}: {cmdline[:120]}')
    dirs = glob.glob(os.path.join(RUNDIR_BASE, 'bpfuml.*'))
    return procs, dirs


BASELINE_DIRS = set()   # run dirs kept (--keep) before a test started


def check_no_leftovers(before_dirs=()):
    procs, dirs = guest_leftovers()
    dirs = [d for d in dirs if d not in before_dirs and d not in BASELINE_DIRS]
    check(not procs, 'guest processes left behind:\n' + '\n'.join(procs))
    check(not dirs, 'run directories left behind: ' + ' '.join(dirs))


def prog(doc, name):
    for p in doc['programs']:
        if p['name'] == name:
            return p
    raise Failure(f'no program {name} in {[p["name"] for p in doc["programs"]]}')


# ---- unit tests (no kernel) ---------------------------------------------

def unit_diag_parser():
    """The parser's own test binary; its counts join ours."""
    proc = subprocess.run([os.path.join(BUILD, 'tests', 'test_diag'),
                           os.path.join(TOP, 'tests', 'unit', 'fixtures')],
                          capture_output=True, text=True, timeout=120)
    for line in proc.stdout.splitlines():
        if line.startswith('ok '):
            print(f'ok   unit/{line[3:]}')
        elif not line.endswith(' failed') or ' passed, ' not in line:
            print(line)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ''
    try:
        passed, failed = (int(part.split()[0]) for part in summary.split(', ')[:2])
    except ValueError:
        return 0, 1   # no summary: the binary crashed
    return passed, failed + (1 if proc.returncode not in (0, 1) else 0)


# ---- the RHASH suite (tests/rhash/): one guest, one line per check --------

# What the console scan counts as the kernel complaining.
# harness/bpf_cflags.def: the flags every BPF program here is compiled with.
with open(os.path.join(TOP, 'harness', 'bpf_cflags.def')) as _f:
    BPF_CFLAGS = re.findall(r'^BPF_CFLAG\("(.*)"\)$', _f.read(), re.M)

# The harness's own list (one home for it), so that tests and verify agree.
with open(os.path.join(TOP, 'harness', 'kernel_trouble.def')) as _f:
    KERNEL_COMPLAINTS = tuple(re.findall(r'^TROUBLE\("(.*)"\)', _f.read(), re.M))


def kernel_complaints(console_text):
    """The console lines that say the kernel warned, oopsed or panicked."""
    return [line for line in console_text.splitlines()
            if any(word in line for word in KERNEL_COMPLAINTS)]


def guest_program(name, obj, *args, timeout=60):
    """Runs BUILD/tests/NAME in a guest with `bpfuml exec`, with OBJ
    (relative to BUILD/tests) copied into its run directory and named first
    on its command line.  Returns (exit code, the bpfuml-exec/1 document,
    stderr)."""
    obj_path = os.path.join(BUILD, 'tests', obj)
    proc = subprocess.run([BPFUML, 'exec', '--json', '--timeout', str(timeout), '--file', obj_path,
                           '--', os.path.join(BUILD, 'tests', name), os.path.basename(obj_path), *args],
                          capture_output=True, text=True, timeout=timeout + 300)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise Failure(f'bpfuml exec {name}: exit {proc.returncode}, no JSON document:\n'
                      f'{proc.stdout[-800:]}\n{proc.stderr[-800:]}')
    return proc.returncode, doc, proc.stderr


def guest_program_passed(name, obj, *args, timeout=60):
    code, doc, err = guest_program(name, obj, *args, timeout=timeout)
    out = doc.get('output', '')
    check(code == EXIT_OK and 'PASS' in out and '\nFAIL' not in '\n' + out,
          f'exit {code}: {doc.get("error") or doc.get("how")}\n{out[-2000:]}\n{err[-800:]}')
    return out


def rhash_suite(only=None):
    """Runs tests/rhash's guest program once and reports each of its checks
    as a test of its own (rhash/AREA/NAME), plus rhash/console_clean: no
    kernel trouble (WARN/BUG/Oops) on the guest's console, as bpfuml's
    console scan says.  A planned check without a result line crashed.
    XFAIL lines (a property the kernel does not promise) count as skipped,
    with the kernel's own words for why.  Returns (passed, failed,
    skipped)."""
    passed = failed = skipped = 0
    start = time.monotonic()
    # 18 s idle, 152 s beside a kernel build (load ~3): the program gets 600 s.
    try:
        code, doc, err = guest_program('rhash_suite', 'progs/rhash_suite.bpf.o',
                                       *([f'only={only}'] if only else []), timeout=600)
    except Failure as e:
        print(f'FAIL rhash/suite\n    {e}')
        return 0, 1, 0
    out = doc.get('output', '')
    lines = out.splitlines()
    plan = [line.split()[1] for line in lines if line.startswith('PLAN ')]
    results = {}
    for line in lines:
        word, _, rest = line.partition(' ')
        if word in ('PASS', 'FAIL', 'SKIP', 'XFAIL'):
            name, _, detail = rest.partition(': ')
            results[name] = (word, detail)
    if not plan:
        print('FAIL rhash/suite (no plan: the guest program did not start)')
        print(f'    exit {code}: {doc.get("error") or doc.get("how")}')
        print('\n'.join('    ' + line for line in (out + err).splitlines()[-30:]))
        return 0, 1, 0
    for name in plan:
        word, detail = results.get(name, (None, None))
        if word == 'PASS':
            passed += 1
            # The detail carries the figures (counts, timings): keep them.
            print(f'ok   rhash/{name}: {detail}')
        elif word in ('SKIP', 'XFAIL'):
            skipped += 1
            why = 'not promised by the kernel' if word == 'XFAIL' else 'cannot run here'
            print(f'skip rhash/{name}: {why}: {detail}')
        else:
            failed += 1
            print(f'FAIL rhash/{name}' + ('' if word else ' (crashed: no result line)'))
            print('    ' + (detail or 'the guest stopped before reporting; its last words:'))
            if not word:
                print('\n'.join('    ' + line for line in err.splitlines()[-20:]))
    # The console: a kernel warning fails the suite even when every check passed.
    error = doc.get('error') or {}
    if error.get('kind') == 'kernel':
        failed += 1
        print('FAIL rhash/console_clean')
        print('\n'.join('    ' + line for line in error.get('message', '').splitlines()[:25]))
    elif error:
        failed += 1
        print(f'FAIL rhash/console_clean\n    the guest failed: {error.get("message", "")[-1500:]}')
    else:
        passed += 1
        print(f'ok   rhash/console_clean (no kernel trouble on the console; '
              f'suite {time.monotonic() - start:.1f} s)')
    return passed, failed, skipped


# ---- examples: each declares its verdict in a bpfuml-expect line ---------

def example_expectations():
    for path in sorted(glob.glob(os.path.join(TOP, 'progs', 'examples', '*.bpf.c'))):
        with open(path) as f:
            text = f.read()
        expect = gap = None
        for line in text.splitlines():
            if 'bpfuml-expect:' in line:
                expect = line.split('bpfuml-expect:', 1)[1].strip()
            if 'bpfuml-uml-gap:' in line:
                gap = line.split('bpfuml-uml-gap:', 1)[1].strip()
        yield path, expect, gap


class Gap(Exception):
    """A known difference from x86_64 that kernel-patches have yet to close."""


class Skip(Exception):
    """This machine cannot run the test (the reason says why)."""


def make_example_test(path, expect, gap):
    def example():
        check(expect, f'{path} has no bpfuml-expect line')
        verdict, _, category = expect.partition(' ')
        code, doc, err = bpfuml_json('verify', path, timeout=600)
        check(code in (EXIT_OK, EXIT_REJECTED), f'exit {code}: {doc.get("error")}')
        p = doc['programs'][0]
        d = p['diagnostics'] or {}
        got_category = d['reports'][0]['category'] if d.get('has_report') else 'no-report'
        ok = p['verdict'] == verdict and (verdict == 'accepted' or got_category == category)
        if gap:
            if ok:
                raise Failure(f'the UML gap is closed ({verdict} {category}): remove its '
                              f'bpfuml-uml-gap line')
            # A verdict UML gives for its own limits must say so.
            check(p.get('uml_fidelity_note'), f'UML-only verdict without a fidelity note: '
                  f'{d.get("legacy_error")!r}')
            raise Gap(f'{gap} (today: {p["verdict"]}, {got_category}, '
                      f'{d.get("legacy_error")!r})')
        check(p['verdict'] == verdict, f'verdict {p["verdict"]}, want {verdict}; '
              f'legacy: {d.get("legacy_error")!r}')
        check(verdict == 'accepted' or got_category == category,
              f'category {got_category!r}, want {category!r}')
    example.__name__ = 'example_' + os.path.basename(path)[:-len('.bpf.c')]
    return example


for _path, _expect, _gap in example_expectations():
    tests.append(make_example_test(_path, _expect, _gap))


# ---- foundation ----------------------------------------------------------

@test
def console_scan_finds_kernel_warnings():
    """The scan behind rhash/console_clean, on a WARN and an oops as 7.3
    prints them (kernel/panic.c __warn(), arch/um's oops) and on a clean log."""
    warn = ('------------[ cut here ]------------\n'
            'WARNING: kernel/bpf/hashtab.c:3089 at rhtab_map_update_elem+0x5c/0x2a0, CPU#0: rhash_suite/1\n'
            'Modules linked in:\n')
    oops = 'Oops: 0000 [#1] NOPTI\nKernel panic - not syncing: Attempted to kill init!\n'
    clean = 'Could not setup DMA mask for udmabuf device\nreboot: Power down\n'
    check(len(kernel_complaints(warn)) == 2, f'WARN not found: {kernel_complaints(warn)}')   # cut here + WARNING
    check(len(kernel_complaints(oops)) == 2, f'oops/panic not found: {kernel_complaints(oops)}')
    check(kernel_complaints(clean) == [], f'clean log flagged: {kernel_complaints(clean)}')


@test
def smoke_rhash_syscall_prog():
    guest_program_passed('rhash_smoke', 'rhash_smoke.bpf.o')


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
def verify_several_files_in_one_boot():
    files = [os.path.join(PROGS, n) for n in ('accepted.bpf.o', 'rejected.bpf.o', 'two_progs.bpf.o')]
    code, doc, err = bpfuml_json('verify', *files)
    check(code == EXIT_REJECTED, f'exit {code}, want 1: {doc.get("error")}')
    check([f['file'] for f in doc['files']] == files, [f['file'] for f in doc['files']])
    check([f['exit_code'] for f in doc['files']] == [0, 1, 1], [f['exit_code'] for f in doc['files']])
    # Each object judged as if alone: the same verdicts as one file per boot.
    for f in files:
        code1, alone, _ = bpfuml_json('verify', f)
        got = next(x for x in doc['files'] if x['file'] == f)
        check([(p['name'], p['verdict'], p.get('legacy_error')) for p in got['programs']] ==
              [(p['name'], p['verdict'], p.get('legacy_error')) for p in alone['programs']],
              f'{f}: {got["programs"]} vs {alone["programs"]}')
    code, doc, err = bpfuml_json('verify', files[0], os.path.join(SRC_PROGS, 'no-such.bpf.o'))
    check(code == EXIT_USAGE and 'no such file' in doc['error']['message'], f'exit {code}: {doc}')
    check_no_leftovers()


@test
def verify_log_buffer_grows_instead_of_truncating():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'long_log.bpf.o'), '--log-level', '2')
    check(code == EXIT_OK, f'exit {code}')
    p = prog(doc, 'long_loop')
    check(p['log_bytes'] > (16 << 20), f'log is {p["log_bytes"]} bytes; the test needs > 16 MiB')
    check(p['log_buffer'] > (16 << 20), f'the log buffer did not grow: {p["log_buffer"]}')
    check(p['diagnostics']['stats'] and not p['diagnostics']['truncated'],
          'the log lost its statistics line: ' + p['log'][-300:])
    check(len(p['log']) == p['log_bytes'], 'the log in the JSON is not the whole log')


@test
def verify_many_rejected_programs_within_guest_memory():
    # Twice in one boot: the second object's 40 log buffers are allocated
    # after the first one's were freed (the case that filled the guest).
    obj = os.path.join(PROGS, 'many_rejected.bpf.o')
    code, doc, err = bpfuml_json('verify', obj, obj)
    check(code == EXIT_REJECTED, f'exit {code}, want 1: {doc.get("error")}')
    for f in doc['files']:
        check(len(f['programs']) == 40, f'{len(f["programs"])} programs')
        check(all(p['verdict'] == 'rejected' for p in f['programs']),
              [p['verdict'] for p in f['programs'] if p['verdict'] != 'rejected'])


@test
def verify_map_that_cannot_be_created():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'map_create_fails.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1')
    p = prog(doc, 'uses_bad_map')
    check(p['verdict'] == 'not_loaded', f'verdict {p["verdict"]}')
    check("map 'needs_no_prealloc': failed to create" in p.get('libbpf_messages', ''),
          f'the reason is not given: {p.get("libbpf_messages")!r}')
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'map_create_fails.bpf.o'))
    check("could not be loaded: map 'needs_no_prealloc': failed to create" in out, out)


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


# ---- parse (no kernel) -------------------------------------------------------

FIXTURES = os.path.join(TOP, 'tests', 'unit', 'fixtures')


@test
def parse_saved_log_formats_and_exit_codes():
    log = os.path.join(FIXTURES, 'recorded-register_type_null_deref.log')
    code, doc, err = bpfuml_json('parse', log)
    check(code == EXIT_REJECTED, f'exit {code}, want 1 for a rejection log')
    check(doc['schema'] == 'bpfuml-diag/1' and doc['reports'][0]['category'] == 'Register Type Safety',
          f'json: {str(doc)[:300]}')
    code, out, err = bpfuml('parse', log, '--format=gcc', '--prog', 'null_deref',
                            '--source', os.path.join(TOP, 'progs', 'examples', 'x.bpf.c'))
    first = out.splitlines()[0]
    # The log names the source by basename; it is found beside --source.
    check(first.startswith(os.path.join(TOP, 'progs', 'examples', 'register_type_null_deref.bpf.c:')),
          f'gcc line does not point at the source beside --source: {first!r}')
    check(': error: Register Type Safety: Invalid dereference [prog null_deref]' in first, first)
    check(any(': note: ' in line for line in out.splitlines()[1:]), 'no note lines:\n' + out)
    code, doc, err = bpfuml_json('parse', os.path.join(FIXTURES, 'recorded-accepted.log'))
    check(code == EXIT_OK and not doc['has_report'] and doc['legacy_error'] is None,
          f'accepted log: exit {code} {doc}')
    code, out, err = bpfuml('parse', '/nonexistent.log')
    check(code == EXIT_USAGE and '/nonexistent.log' in err, f'missing log: exit {code} {err}')


@test
def verify_sarif_output():
    code, out, err = bpfuml('verify', '--format=sarif',
                            os.path.join(TOP, 'progs', 'examples', 'memory_packet_bounds.bpf.c'))
    check(code == EXIT_REJECTED, f'exit {code}')
    sarif = json.loads(out)
    check(sarif['version'] == '2.1.0', sarif.get('version'))
    result = sarif['runs'][0]['results'][0]
    check(result['ruleId'] and 'Memory Safety' in json.dumps(result), json.dumps(result)[:500])
    region = result['locations'][0]['physicalLocation']['region']
    check(region['startLine'] > 0, region)


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
def run_syscall_program_once_and_refuse_repeat():
    obj = os.path.join(PROGS, 'syscall_prog.bpf.o')
    code, doc, err = bpfuml_json('run', obj, '--prog', 'count_runs')
    check(code == EXIT_OK, f'exit {code}: {doc.get("error")} {doc.get("run")}')
    check(doc['run']['retval'] == 7, doc['run'])
    runs = [g for g in doc['run']['globals'] if g['name'] == 'runs']
    check(runs and runs[0]['value'] == 1, f'globals {doc["run"]["globals"]}')
    code, doc, err = bpfuml_json('run', obj, '--prog', 'count_runs', '--repeat', '5')
    check(code == EXIT_USAGE, f'exit {code}, want {EXIT_USAGE}')
    check('--repeat is not supported for syscall' in doc['run']['error'], doc['run'])


@test
def run_rejected_program_exits_1():
    code, doc, err = bpfuml_json('run', os.path.join(PROGS, 'rejected.bpf.o'), '--prog', 'unchecked_lookup')
    check(code == EXIT_REJECTED, f'exit {code}, want 1')
    check(doc['program']['verdict'] == 'rejected' and 'run' not in doc, doc.keys())


# ---- bench (functional only: figures are printed by the benchmark itself) ---

@test
def bench_quick_profile_reports_every_row():
    code, doc, err = bpfuml_json('bench', '--quick', '--samples', '1', timeout=600)
    check(code == EXIT_OK, f'exit {code}: {doc.get("error")}')
    check(doc['backend'] == 'uml' and doc['kernel'].startswith('UML 7.3'), doc.get('kernel'))
    check(len(doc['rows']) == 6, f'{len(doc["rows"])} rows')
    for row in doc['rows']:
        for name in ('htab', 'rhtab'):
            fig = row[name]
            # Either a figure, or the reason there is none: never silence.
            check(fig['median_ops_per_sec'] or fig['raw'].get('error'),
                  f'{row["bench"]} {name}: neither a figure nor an error: {fig["raw"]}')
        if row['bench'] == 'lookup':
            check(row['htab']['median_ops_per_sec'] > 0, f'htab lookup has no figure: {row}')


# ---- probe -------------------------------------------------------------------

# What UML must be able to do (x86_64 can too); a regression here is a lost
# capability.  Rows UML cannot do yet are not listed: for those the test
# asserts that the table says why (the reason, and on UML a note when the
# cause is UML itself), never a bare "no".
UML_VERIFY_YES = {
    'prog_type': {'socket_filter', 'sched_cls', 'sched_act', 'xdp', 'cgroup_skb', 'cgroup_sock',
                  'lwt_in', 'sock_ops', 'sk_skb', 'cgroup_device', 'sk_msg', 'cgroup_sock_addr',
                  'sk_reuseport', 'flow_dissector', 'cgroup_sysctl', 'cgroup_sockopt', 'sk_lookup',
                  'syscall', 'netfilter', 'ext'},
    'feature': {'tail_call', 'bpf_to_bpf_call', 'global_function', 'kfunc_call',
                'callback_bpf_loop', 'open_coded_iterator', 'spin_lock', 'timer', 'ringbuf',
                'dynptr', 'allocated_object', 'atomics', 'rhash_map',
                'tail_call_in_subprog', 'exceptions', 'arena'},
}
# Verified as on x86_64 (kernel-patches 0008, 0013-0015), then refused: only a JIT runs them.
UML_VERIFY_ONLY = {'tail_call_in_subprog', 'exceptions', 'arena'}
UML_RUN_YES = {'socket_filter', 'sched_cls', 'sched_act', 'xdp', 'cgroup_skb', 'lwt_in',
               'flow_dissector', 'sk_lookup', 'syscall', 'netfilter'} | \
              (UML_VERIFY_YES['feature'] - UML_VERIFY_ONLY)


def probe_rows(*extra):
    code, doc, err = bpfuml_json('probe', *extra, timeout=900)
    check(code == EXIT_OK, f'exit {code}: {doc.get("error")} {err}')
    check(doc['schema'] == 'bpfuml-probe/1', doc.get('schema'))
    return doc, {(r['kind'], r['name']): r for r in doc['rows']}


@test
def probe_table_for_uml():
    doc, rows = probe_rows()
    check(doc['backend'] == 'uml', doc['backend'])
    for kind, names in UML_VERIFY_YES.items():
        for name in names:
            row = rows.get((kind, name))
            check(row, f'{kind} {name}: no row')
            check(row['verify']['status'] == 'yes', f'{kind} {name}: verify {row["verify"]}')
            if name in UML_RUN_YES:
                check(row['run']['status'] == 'yes', f'{kind} {name}: run {row["run"]}')
            if name in UML_VERIFY_ONLY:
                check(row['run']['status'] == 'no' and row.get('uml_note'),
                      f'{kind} {name}: run {row["run"]}, note {row.get("uml_note")}')
    for (kind, name), row in rows.items():
        if kind == 'map_type':
            continue
        verify = row['verify']
        if verify['status'] == 'no':
            check(verify.get('verifier_error') or verify.get('error'), f'{name}: a "no" without a reason')
            check(row.get('uml_note'),
                  f'{name}: UML cannot verify it and the table does not say that UML is the cause: {verify}')
        attach = row.get('attach') or {}
        if attach.get('status') == 'no':
            check(row.get('uml_note'), f'{name}: cannot attach on UML and the table does not say why: {attach}')
    for name in ('hash', 'array', 'rhash', 'ringbuf', 'prog_array'):
        check(rows[('map_type', name)]['create']['status'] == 'yes', f'map {name}: {rows[("map_type", name)]}')


# ---- kernel patches (kernel-patches/) --------------------------------------

@test
def upstream_reference_cases_give_x86_64_categories_on_uml():
    # ../shared/REFERENCE.md's upstream cases: the category (or, for
    # global_func1, the error line) an x86_64 7.3 kernel prints.
    proc = subprocess.run([sys.executable, os.path.join(TOP, 'tests', 'upstream', 'reference_cases.py')],
                          capture_output=True, text=True, timeout=600)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
    check(last.startswith('12 of 12 '), f'{last}\n' + '\n'.join(
        l for l in proc.stdout.splitlines() if l.startswith('different')))

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
    guest_program_passed('callback_slots', 'progs/callbacks.bpf.o')



# 0005-0009: program types, tracing helpers, the JIT's verifier decisions.

X86_VMLINUX_DIR = os.path.join(BUILD, 'qemu')   # the x86_64 kernel's vmlinux.h


def compile_for_x86_64(source, out_dir):
    """SOURCE (tests/progs) compiled against the x86_64 kernel's vmlinux.h;
    raises Gap when that kernel's artifacts are not there."""
    if not os.path.exists(os.path.join(X86_VMLINUX_DIR, 'vmlinux.h')):
        raise Gap(f'no x86_64 vmlinux.h in {X86_VMLINUX_DIR} (make qemu-kernel)')
    obj = os.path.join(out_dir, os.path.basename(source).replace('.bpf.c', '.x86_64.bpf.o'))
    proc = subprocess.run(['clang-19', *BPF_CFLAGS, '-I', X86_VMLINUX_DIR,
                           '-I', os.path.join(BUILD, 'include'), '-c', source, '-o', obj],
                          capture_output=True, text=True)
    check(proc.returncode == 0, f'{source} does not compile against the x86_64 vmlinux.h:\n{proc.stderr[-2000:]}')
    return obj


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
    g = {x['name']: x.get('value') for x in doc['run']['globals']}
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
    g = {x['name']: x.get('value') for x in doc['run']['globals']}
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
def tail_call_prog_array_filled_at_load():
    # With the JIT requested the verifier adds a tail-call poke descriptor and
    # the prog array tracks the program (0008); libbpf's update of the array
    # at load then walks the descriptors, which no interpreted program marks
    # stable.  Both programs load together, with no kernel warning (exit 3).
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'tail_call.bpf.o'))
    got = {p['name']: (p['verdict'], p['load']) for p in doc.get('programs', [])}
    check(code == EXIT_OK and got == {'tail_target': ('accepted', 'together'),
                                      'tail_caller': ('accepted', 'together')},
          f'exit {code}: {got} {doc.get("error")}')


@test
def tail_call_target_not_loaded_alone_keeps_verdict():
    # Loaded alone, a program whose object fills a prog array with another
    # program: libbpf fails the array's filling (the target has no fd) after
    # the verifier accepted the program.  That is not the program's verdict.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'tail_call_rejected_target.bpf.o'))
    got = {p['name']: (p['verdict'], p['load']) for p in doc.get('programs', [])}
    check(code == EXIT_REJECTED and got == {'good_caller': ('accepted', 'alone'),
                                            'bad_target': ('rejected', 'alone')},
          f'exit {code}: {got} {doc.get("error")}')


@test
def x86_only_attach_target_is_said_plainly():
    # fentry/__x64_sys_*: an x86_64 syscall wrapper that UML does not have.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'x86_syscall_target.bpf.o'))
    p = (doc.get('programs') or [{}])[0]
    note = p.get('uml_fidelity_note') or ''
    check(code == EXIT_REJECTED and p.get('verdict') == 'not_loaded' and p.get('errno') == 3
          and '__x64_sys_' in note and 'x86_64 would load' in note,
          f'exit {code}: {p.get("verdict")} {p.get("error")} note {note!r}')
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'x86_syscall_target.bpf.o'))
    check('note: UML differs from x86_64 here: the attach target is an x86_64 syscall wrapper'
          in out, f'no plain note:\n{out}')


@test
def tail_call_into_a_deeper_stack_runs():
    # 0014: the interpreter runs a tail-called program in the caller's frame,
    # which must be MAX_BPF_STACK deep; without it the kernel oopses (exit 3).
    run, g = run_prog('tail_call_deep_stack.bpf.o', 'shallow_caller')
    check(run.get('retval') == 3 and g.get('deep_sum') == sum(i & 0xff for i in range(480)),
          f'retval {run.get("retval")}, deep_sum {g.get("deep_sum")}')


@test
def arena_verified_then_refused_plainly():
    # Verified as on x86_64 (stock UML: "JIT is required to use arena"), then
    # not loaded: only a JIT runs arena programs.
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'arena.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1:\n{out}{err}')
    check('JIT is required' not in out and 'the verifier accepted this program' in out
          and 'UML' in out, f'no plain note:\n{out}')
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'arena.bpf.o'))
    p = prog(doc, 'arena_write')
    check(p.get('errno') == 524 and 'processed' in (p.get('log') or ''),
          f'errno {p.get("errno")}, log: {(p.get("log") or "")[-600:]}')


@test
def jit_only_programs_verify_as_on_x86_64_then_refused():
    # 0013-0015: stock UML rejects these in the verifier ("JIT does not
    # support calling kfunc bpf_throw", "mixing of tail_calls and bpf-to-bpf
    # calls"); x86_64 accepts both.  UML now verifies them as x86_64 does and
    # refuses them afterwards, saying so.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'jit_only.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1: {doc.get("error")} {err}')
    for name, refusal in (('throws', 'program requires BPF JIT compiler'),
                          ('tail_calls_from_subprog', 'tail_calls are not allowed in non-JITed')):
        p = prog(doc, name)
        log = p.get('log') or ''
        check(p.get('verified') is True and refusal in log and 'processed' in log,
              f'{name}: verified {p.get("verified")}, log: {log[-600:]}')
        check('the verifier accepted this program' in (p.get('uml_fidelity_note') or ''),
              f'{name}: note {p.get("uml_fidelity_note")!r}')
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'jit_only.bpf.o'))
    check(out.count('verified, but refused afterwards (needs a JIT)') == 2, out)


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
    attach_on_uml('tracing_types.bpf.o', 'fentry_test1', 'BPF trampolines are machine code')
    attach_on_uml('tracing_types.bpf.o', 'lsm_file_open', 'BPF trampolines are machine code')
    attach_on_uml('tracing_types.bpf.o', 'kprobe_args', 'UML has no kprobes')
    attach_on_uml('struct_ops.bpf.o', 'bpfuml_ssthresh', 'BPF trampolines are machine code')


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


@test
def kprobe_context_bounded_as_on_x86_64():
    # 0010: past x86_64's 21 registers (offset 168) is outside the context.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'kprobe_ctx_bound.bpf.o'))
    check_rejected_with(code, doc, 'past_regs', 'invalid bpf_context access off=168 size=8')


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


@test
def perf_event_context_laid_out_as_on_x86_64():
    # 0026: sample_period at 168, narrow loads allowed, the context ends at 184,
    # whether the program was built against UML's vmlinux.h or x86_64's.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'perf_event_ctx.bpf.o'))
    check_perf_event_context(code, doc)
    if os.path.exists(os.path.join(X86_VMLINUX_DIR, 'vmlinux.h')):
        with tempfile.TemporaryDirectory() as tmp:
            obj = compile_for_x86_64(os.path.join(SRC_PROGS, 'perf_event_ctx.bpf.c'), tmp)
            code, doc, err = bpfuml_json('verify', obj)
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


# ---- the kernel's own BPF selftests in UML (bpfuml kselftest) ----------------
# A curated subset that runs in well under 3 minutes on 2 cores (make
# kselftest runs everything).  Each asserts that its named subset has no
# failure and no error, and that nothing of it was left out silently.

def kselftest(filter_, expect_tests=None, timeout=600):
    """Run `bpfuml kselftest -t FILTER --json`; returns the results by name."""
    code, doc, err = bpfuml_json('kselftest', '-t', filter_, timeout=timeout)
    check('results' in doc, f'no results (exit {code}): {doc.get("error")}\n{err[-2000:]}')
    results = {r['name']: r for r in doc['results']}
    bad = [f'{r["status"]} {r["name"]}: {(r.get("reason") or "").strip()[:600]}'
           for r in doc['results'] if r['status'] in ('failed', 'error')]
    check(not bad, f'{len(bad)} of -t {filter_} not passed:\n' + '\n'.join(bad))
    check(code == EXIT_OK, f'exit {code} with no failure listed; stderr:\n{err[-2000:]}')
    tests = [r for r in doc['results'] if not r['subtest']]
    check(tests, f'-t {filter_} selected no test')
    for name in expect_tests or ():
        check(name in results, f'{name} is not among the results of -t {filter_}')
    return results


def fake_selftests_build_dir():
    """A build directory whose selftests are tests/kselftest/fake's stand-ins
    and whose kernel and agent are the real ones (the guest must see it, so
    it lives under build/, not /tmp)."""
    fake = os.path.join(BUILD, 'tests', 'kselftest-fake')
    os.makedirs(os.path.join(fake, 'bin'), exist_ok=True)
    os.makedirs(os.path.join(fake, 'selftests'), exist_ok=True)
    os.makedirs(os.path.join(fake, 'kselftest'), exist_ok=True)
    for link, target in (('kernel', os.path.join(BUILD, 'kernel')),
                         ('bin/bpfuml-agent', os.path.join(BUILD, 'bin', 'bpfuml-agent')),
                         ('selftests/bpf', os.path.join(TOP, 'tests', 'kselftest', 'fake')),
                         ('kselftest/DENYLIST.uml',
                          os.path.join(TOP, 'tests', 'kselftest', 'fake', 'DENYLIST.uml'))):
        path = os.path.join(fake, link)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)
    return fake


@test
def kselftest_harness_shards_denies_retries_and_reports():
    before = guest_leftovers()[1]
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    proc = subprocess.run([BPFUML, 'kselftest', '-j', '2', '--batch', '3', '--json'],
                          capture_output=True, text=True, timeout=120, env=env)
    doc = json.loads(proc.stdout)
    got = {r['name']: r['status'] for r in doc['results']}
    want = {'alpha': 'passed', 'alpha/one': 'passed', 'alpha/two': 'denied', 'beta': 'error',
            'gamma': 'passed', 'delta': 'skipped', 'epsilon': 'failed', 'epsilon/bad': 'failed',
            'epsilon/twin': 'failed', 'kprobe_like': 'denied', 'test_verifier': 'failed', 'test_verifier/0/u some test': 'passed',
            'test_verifier/0/p some test': 'failed', 'test_verifier/1/p other': 'skipped',
            'test_verifier/2/p loaded only': 'passed',
            'test_maps': 'passed', 'zeta': 'passed', 'zeta/meant': 'passed'}
    check(got == want, f'results {got}\nwant {want}\nstderr: {proc.stderr[-1500:]}')
    reasons = {r['name']: r.get('reason', '') for r in doc['results']}
    check('exit status 139' in reasons['beta'], f'beta: {reasons["beta"]!r}')
    check('assertion failed' in reasons['epsilon/bad'], f'epsilon/bad: {reasons["epsilon/bad"]!r}')
    check(reasons['kprobe_like'].startswith('no kprobes'), f'kprobe_like: {reasons["kprobe_like"]!r}')
    check('expects this subtest to fail' in reasons['zeta/meant'], f'zeta/meant: {reasons["zeta/meant"]!r}')
    check(doc['tests'] == {'passed': 4, 'failed': 2, 'skipped': 1, 'denied': 1, 'error': 1},
          f'test counts {doc["tests"]}')
    check(proc.returncode == EXIT_INFRA, f'exit {proc.returncode}, want 3 (a guest died)')
    # One writer for every document: "/" as is, as in verify's (json-c
    # escapes it by default).
    check('\\/' not in proc.stdout, f'escaped slashes: {proc.stdout[:400]}')
    check_no_leftovers(before)


@test
def kselftest_ktap_output():
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    proc = subprocess.run([BPFUML, 'kselftest', '-t', 'alpha,delta'], capture_output=True, text=True,
                          timeout=120, env=env)
    want = ('KTAP version 1\n1..2\n'
            '    # Subtest: alpha\n    KTAP version 1\n    1..2\n'
            '    ok 1 two # SKIP denied: a denied subtest\n    ok 2 one\n'
            'ok 1 alpha\nok 2 delta # SKIP\n')
    check(proc.stdout.startswith(want), f'stdout:\n{proc.stdout}\nwant it to start with:\n{want}')
    check('# tests:    passed 1, failed 0, skipped 1, denied 0, error 0' in proc.stdout, proc.stdout)
    check('# subtests: passed 1, failed 0, skipped 0, denied 1, error 0' in proc.stdout, proc.stdout)
    check(proc.returncode == EXIT_OK, f'exit {proc.returncode}; {proc.stderr}')


@test
def kselftest_harness_kills_test_progs_that_survives_its_crash():
    """test_progs' watchdog SIGSEGV leaves a test blocked in wait(): the agent
    kills it 10 s after "Caught signal", not at --timeout, and the rest of
    the batch runs in a new guest (uprobe_multi_test on UML); the failures
    before it keep their logs."""
    before = guest_leftovers()[1]
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    start = time.monotonic()
    proc = subprocess.run([BPFUML, 'kselftest', '-t', 'stuck,gamma', '--batch', '3', '--timeout', '90',
                           '--json'], capture_output=True, text=True, timeout=200, env=env)
    wall = time.monotonic() - start
    doc = json.loads(proc.stdout)
    got = {r['name']: r['status'] for r in doc['results']}
    want = {'stuck': 'error', 'stuck/first': 'failed', 'gamma': 'passed'}
    check(got == want, f'results {got}\nwant {want}\nstderr: {proc.stderr[-1500:]}')
    reasons = {r['name']: r.get('reason', '') for r in doc['results']}
    # No summary.json from a killed test_progs: the failure's log is taken
    # from the output, the lines before its result line.
    check(reasons['stuck/first'] == 'test_first:PASS:setup 0 nsec\n'
          'test_first:FAIL:count unexpected count: actual 1 != expected 2',
          f'reason of stuck/first: {reasons["stuck/first"]!r}')
    reason = reasons['stuck']
    for words in ('caught signal 11 (SIGSEGV)', 'did not exit', 'terminating with SIGSEGV',
                  'processes left', ' sleep '):
        check(words in reason, f'{words!r} not in the reason of stuck: {reason!r}')
    check(wall < 60, f'took {wall:.0f} s: the guest waited for --timeout (90 s)')
    check(proc.returncode == EXIT_INFRA, f'exit {proc.returncode}, want 3 (a test errored)')
    check_no_leftovers(before)


# Every upstream rhash subtest, the kptr ones included, must pass, and so must
# rhash_timer (a freed element recycled with its timer armed): RHASH is one
# of the two 7.3 developments bpfuml is built around (REFERENCE.md).
# rhash_timer needs a second CPU: its kern_sync_rcu() is a membarrier that
# waits for an RCU grace period only when more than one CPU is online, and
# the recycled element comes only after one (kselftest guests have 2 CPUs).
@test
def kselftest_rhash_all_subtests_pass():
    code, doc, err = bpfuml_json('kselftest', '-t', 'rhash', timeout=600)
    check('results' in doc, f'no results (exit {code}): {doc.get("error")}\n{err[-2000:]}')
    subs = [r for r in doc['results'] if r['subtest'] and r['name'].startswith('rhash/')]
    check(len(subs) == 12, f'rhash has 12 subtests upstream, got {[r["name"] for r in subs]}')
    got = {r['name'] for r in doc['results']}
    check('rhash_timer' in got, f'rhash_timer did not run: {sorted(got)}')
    not_passed = [r for r in doc['results'] if r['status'] != 'passed' and
                  (r['name'] in ('rhash', 'rhash_timer') or r['name'].startswith('rhash/'))]
    check(not not_passed, 'not passed:\n' + '\n'.join(
        f'{r["status"]} {r["name"]}: {(r.get("reason") or "").strip()[-600:]}' for r in not_passed))


# verifier_* are the verifier's own __success/__failure cases (test_loader):
# the programs of progs/verifier_*.c loaded one by one, their verdicts and
# messages checked.  make test runs all of them (-t verifier_); which ones
# UML cannot run is DENYLIST.uml's to say, nowhere else.  verifier_unpriv's
# first subtest loads unprivileged; it needs 0027 (libbpf caches the failed
# feature probes of a first, unprivileged load for the process).
def denylisted(prefix):
    """Whole tests (no subtest) of tests/kselftest/DENYLIST.uml named PREFIX*."""
    with open(os.path.join(TOP, 'tests', 'kselftest', 'DENYLIST.uml')) as f:
        names = (line.split('#')[0].strip() for line in f)
        return sorted(n for n in names if n.startswith(prefix) and '/' not in n)


@test
def kselftest_verifier_tests_pass():
    # Every verifier_* test of test_progs: the verifier's own __success /
    # __failure cases, the closest thing to a fidelity check of the verifier.
    # What UML cannot run is in DENYLIST.uml (reported denied, with its
    # reason); everything else must pass or skip.
    results = kselftest('verifier_', timeout=900)
    tests = {n: r for n, r in results.items() if not r['subtest']}
    for name in denylisted('verifier_'):
        check(tests.get(name, {}).get('status') == 'denied', f'{name}: {tests.get(name)}, want denied')
    ran = [n for n, r in tests.items() if r['status'] == 'passed']
    check(len(ran) >= 121, f'{len(ran)} verifier tests passed, want 121 or more: {sorted(tests)}')


# Selftests that failed on UML for a gap of ours and pass since a kernel patch
# or config fragment closed it, each asserted by name.
FORMER_UML_FAILURES = {
    'btf_sysfs': 'mmap of /sys/kernel/btf/vmlinux (kernel-patches 0023)',
    'enable_stats': 'run_time_ns of a short program (0024: sched_clock at ns resolution)',
    'iters/task_vma': 'task_vma iterator (0025: per-VMA locks)',
    'dmabuf_iter': '/dev/udmabuf (uml-config: DMA emulation)',
    'cpumask/test_and_or_xor': 'CPU 1 exists (guests with 2 CPUs)',
    'cpumask/test_intersects_subset': 'CPU 1 exists (guests with 2 CPUs)',
}


@test
def kselftest_former_uml_failures_pass():
    tests = dict.fromkeys(name.split('/')[0] for name in FORMER_UML_FAILURES)
    code, doc, err = bpfuml_json('kselftest', '-t', ','.join(tests), timeout=600)
    check('results' in doc, f'no results (exit {code}): {doc.get("error")}\n{err[-2000:]}')
    got = {r['name']: r for r in doc['results']}
    bad = [f'{name} ({what}): {got[name]["status"] if name in got else "not run"} '
           f'{((got.get(name) or {}).get("reason") or "").strip()[-400:]}'
           for name, what in FORMER_UML_FAILURES.items()
           if name not in got or got[name]['status'] != 'passed']
    check(not bad, '\n'.join(bad))


# verifier_unpriv's first subtest loads, with capabilities dropped, an object
# naming the per-CPU ksym bpf_prog_active.  Without SMP, UML's BTF had no
# per-CPU variables: libbpf then probed module BTF support unprivileged, failed,
# and cached "no module BTFs" for the process, so the bpf_testmod kfuncs of
# every later test in the same test_progs were "not found in kernel or module
# BTFs" (verifier_zext, wq, wq_custom in a full run).  uml-config's SMP puts
# bpf_prog_active in vmlinux BTF, as on x86_64.  --batch 100 puts both tests
# in one guest.
TESTMOD_KFUNC_LOST = 'not found in kernel or module BTFs'


@test
def kselftest_verifier_unpriv_leaves_testmod_kfuncs_to_later_tests():
    code, doc, err = bpfuml_json('kselftest', '-t', 'verifier_unpriv,verifier_zext', '--batch', '100',
                                 timeout=600)
    check('results' in doc, f'no results (exit {code}): {doc.get("error")}\n{err[-2000:]}')
    lost = [r['name'] for r in doc['results'] if TESTMOD_KFUNC_LOST in (r.get('reason') or '')]
    check(not lost, f'{len(lost)} results lost the bpf_testmod kfuncs: {lost[:5]}')
    got = {r['name']: r['status'] for r in doc['results']}
    # calls bpf_kfunc_call_test4 of bpf_testmod
    name = 'verifier_zext/zext_lost_across_checkpoint'
    check(got.get(name) == 'passed', f'{name}: {got.get(name)}')


# ---- the x86_64 reference backend (--backend qemu) ---------------------------
# Only when its kernel is built (make qemu-kernel) or BPFUML_QEMU_TESTS=1 asks
# for it (tests/run.sh then builds it); BPFUML_QEMU_TESTS=0 leaves them out.

QEMU_KERNEL = os.path.join(BUILD, 'qemu', 'bzImage')


def qemu_tests_wanted():
    env = os.environ.get('BPFUML_QEMU_TESTS')
    if env is not None and env != '':
        return env != '0'
    return os.path.exists(QEMU_KERNEL)


def qemu_test(func):
    func.qemu = True
    return test(func)


@qemu_test
def qemu_verify_accepted_program():
    code, doc, err = bpfuml_json('verify', '--backend', 'qemu', os.path.join(PROGS, 'accepted.bpf.o'),
                                 timeout=600)
    check(code == EXIT_OK, f'exit {code}, want 0; {doc.get("error")} stderr: {err}')
    check(doc['backend'] == 'qemu', f'backend {doc["backend"]!r}')
    check(doc['accel'] in ('kvm', 'tcg'), f'accel {doc["accel"]!r}')
    p = prog(doc, 'pass_all')
    check(p['verdict'] == 'accepted', f'verdict {p["verdict"]}')
    check(p['diagnostics']['stats'] and p['diagnostics']['stats']['insns_processed'] > 0,
          f'no statistics line: {p["diagnostics"]}')
    check(doc['timing']['boot_ms'] > 0, f'timing: {doc["timing"]}')
    check_no_leftovers()


@qemu_test
def qemu_verify_rejected_program():
    code, doc, err = bpfuml_json('verify', '--backend', 'qemu', os.path.join(PROGS, 'rejected.bpf.o'),
                                 timeout=600)
    check(code == EXIT_REJECTED, f'exit {code}, want 1; {doc.get("error")} stderr: {err}')
    check(doc['backend'] == 'qemu', f'backend {doc["backend"]!r}')
    p = prog(doc, 'unchecked_lookup')
    check(p['verdict'] == 'rejected', f'verdict {p["verdict"]}')
    d = p['diagnostics']
    check(d['legacy_error'] and 'map_value_or_null' in d['legacy_error'], f'legacy line: {d["legacy_error"]!r}')
    check(d['has_report'] and d['reports'][0]['category'] == 'Register Type Safety',
          'no Register Type Safety report; log tail:\n' + p['log'][-1500:])
    check_no_leftovers()


@qemu_test
def qemu_jit_kfunc_example_gets_its_report():
    """What the JIT changes: UML refuses every kfunc call ("JIT is required for
    calling kernel function"); x86_64 finds the leaked iterator."""
    path = os.path.join(TOP, 'progs', 'examples', 'resource_iter_not_destroyed.bpf.c')
    code, doc, err = bpfuml_json('verify', '--backend', 'qemu', path, timeout=600)
    check(code == EXIT_REJECTED, f'exit {code}, want 1; {doc.get("error")} stderr: {err}')
    p = doc['programs'][0]
    d = p['diagnostics'] or {}
    check(p['verdict'] == 'rejected', f'verdict {p["verdict"]}')
    check('JIT is required' not in (d.get('legacy_error') or ''), f'legacy: {d.get("legacy_error")!r}')
    check(d.get('has_report') and d['reports'][0]['category'] == 'Resource Lifetime Safety',
          f'category {d.get("reports")}; legacy {d.get("legacy_error")!r}')


@qemu_test
def qemu_run_program():
    packet = bytes(range(1, 7)) + bytes(range(11, 17)) + b'\x08\x00' + b'\x40' + bytes(49)
    with tempfile.TemporaryDirectory() as tmp:
        data_in = os.path.join(tmp, 'in.bin')
        with open(data_in, 'wb') as f:
            f.write(packet)
        code, doc, err = bpfuml_json('run', '--backend', 'qemu', os.path.join(PROGS, 'packet_rewrite.bpf.o'),
                                     '--prog', 'rewrite', '--data-in', data_in, '--repeat', '1', timeout=600)
    check(code == EXIT_OK, f'exit {code}: {doc.get("error")} {err}')
    check(doc['backend'] == 'qemu', f'backend {doc["backend"]!r}')
    check(doc['run']['retval'] == 3, f'retval {doc["run"]["retval"]}, want XDP_TX (3)')
    want = packet[6:12] + packet[0:6] + packet[12:14] + bytes([0x43]) + packet[15:]
    check(bytes.fromhex(doc['run']['data_out_hex']) == want, f'data_out {doc["run"]["data_out_hex"]}')


@qemu_test
def qemu_guest_panic_is_infrastructure_failure():
    before = guest_leftovers()[1]
    code, doc, err = bpfuml_json('verify', '--backend', 'qemu', os.path.join(PROGS, 'accepted.bpf.o'),
                                 '--test-fault', 'panic', timeout=600)
    check(code == EXIT_INFRA, f'exit {code}, want 3')
    check(doc['error']['kind'] == 'kernel' and 'Kernel panic' in doc['error']['message'],
          f'panic not reported with its lines: {doc["error"]}')
    check_no_leftovers(before)


@qemu_test
def qemu_probe_table_is_the_x86_64_answer():
    # The reference kernel can do everything the probe asks; a "no" here is
    # a broken probe program or a broken reference, either of them ours.
    doc, rows = probe_rows('--backend', 'qemu')
    check(doc['backend'] == 'qemu' and doc['accel'] in ('kvm', 'tcg'), f'{doc["backend"]} {doc["accel"]}')
    for (kind, name), row in rows.items():
        steps = ('create',) if kind == 'map_type' else ('verify', 'run', 'attach')
        for step in steps:
            check(row[step]['status'] in ('yes', 'n/a'), f'{kind} {name}: {step} {row[step]}')
        check(not row.get('uml_note'), f'{name}: a UML note on the qemu backend')


@qemu_test
def qemu_interrupt_kills_guest_and_cleans_up():
    before = guest_leftovers()[1]
    proc = subprocess.Popen([BPFUML, 'verify', '--backend', 'qemu', os.path.join(PROGS, 'accepted.bpf.o'),
                             '--test-fault', 'hang'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    check(proc.returncode == EXIT_INTERRUPTED, f'exit {proc.returncode}, want 130; {err}')
    check_no_leftovers(before)



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



@qemu_test
def qemu_kprobe_context_bound_same_as_uml():
    # x86_64's own verdict for kprobe_context_bounded_as_on_x86_64.
    with tempfile.TemporaryDirectory() as tmp:
        obj = compile_for_x86_64(os.path.join(SRC_PROGS, 'kprobe_ctx_bound.bpf.c'), tmp)
        code, doc, err = bpfuml_json('verify', '--backend', 'qemu', obj, timeout=600)
    check_rejected_with(code, doc, 'past_regs', 'invalid bpf_context access off=168 size=8')


@qemu_test
def qemu_perf_event_context_same_as_uml():
    # x86_64's own verdicts for perf_event_context_laid_out_as_on_x86_64.
    with tempfile.TemporaryDirectory() as tmp:
        obj = compile_for_x86_64(os.path.join(SRC_PROGS, 'perf_event_ctx.bpf.c'), tmp)
        code, doc, err = bpfuml_json('verify', '--backend', 'qemu', obj, timeout=600)
    check_perf_event_context(code, doc)


# Tests of one area live in tests/areas/*.py, run in this module's namespace
# (they use test, check, bpfuml, ... as if written here), in name order.
for _area in sorted(glob.glob(os.path.join(TOP, 'tests', 'areas', '*.py'))):
    with open(_area) as _f:
        exec(compile(_f.read(), _area, 'exec'), globals())


def main():
    only = sys.argv[sys.argv.index('-k') + 1] if '-k' in sys.argv else None
    BASELINE_DIRS.update(guest_leftovers()[1])
    passed = failed = skipped = 0
    if not only or only in 'unit':
        passed, failed = unit_diag_parser()
    if not only or only in 'rhash/' or only.startswith('rhash/'):
        p, f, s = rhash_suite(only[len('rhash/'):] if only and only.startswith('rhash/') else None)
        passed, failed, skipped = passed + p, failed + f, skipped + s
    run_qemu = qemu_tests_wanted()
    if not run_qemu and any(getattr(f, 'qemu', False) for f in tests):
        why = ('BPFUML_QEMU_TESTS=0' if os.environ.get('BPFUML_QEMU_TESTS') == '0' else
               f'{QEMU_KERNEL} is not built (make qemu-kernel, or BPFUML_QEMU_TESTS=1 make test)')
        print(f'note: --backend qemu tests left out: {why}')
    for func in tests:
        name = func.__name__
        if only and only not in name:
            continue
        if getattr(func, 'qemu', False) and not run_qemu:
            continue
        start = time.monotonic()
        dirs_before = set(guest_leftovers()[1])
        outcome, text = 'ok', ''
        try:
            func()
        except Gap as e:
            outcome, text = 'skip', f'{getattr(e, "prefix", "known UML gap: ")}{e}'
        except Skip as e:
            outcome, text = 'skip', str(e)
        except Failure as e:
            outcome, text = 'FAIL', str(e)
        except Exception:
            outcome, text = 'FAIL', '(crashed)\n' + traceback.format_exc()
        # Whatever its outcome, a test that leaves a run directory behind is
        # the one blamed: later tests no longer see it.
        left = set(guest_leftovers()[1]) - dirs_before - BASELINE_DIRS
        if left:
            BASELINE_DIRS.update(left)
            text = (text + '\n' if outcome == 'FAIL' else '') + \
                'run directories left behind: ' + ' '.join(sorted(left))
            outcome = 'FAIL'
        if outcome == 'ok':
            passed += 1
            print(f'ok   {name} ({time.monotonic() - start:.2f} s)')
        elif outcome == 'skip':
            skipped += 1
            print(f'skip {name}: {text}')
        else:
            failed += 1
            print(f'FAIL {name}')
            print('\n'.join('    ' + line for line in text.splitlines()))
    print(f'{passed} passed, {failed} failed, {skipped} skipped')
    return 1 if failed else 0


@atexit.register
def remove_rundir_base():
    # Also after an interrupted run; a directory a guest left is kept for
    # guest_leftovers() to have reported.
    try:
        os.rmdir(RUNDIR_BASE)
    except OSError:
        pass


if __name__ == '__main__':
    sys.exit(main())
