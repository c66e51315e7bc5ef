#!/usr/bin/env python3
"""run_tests.py — bpfuml's test driver (`make test`).

Imports tests/areas/*.py in name order (each registers its tests through
testlib's `@test`), runs the tests of each area in the order it registered
them (integration tests boot the real UML kernel through build/bin/bpfuml),
prints `ok NAME`, `skip NAME: why` or `FAIL NAME` with the reason indented,
and ends with the line `N passed, N failed, N skipped`.  Before them: the
C unit tests (build/tests/test_*) and the RHASH suite
(tests/rhash), whose lines and counts join ours.

usage: tests/run_tests.py [BUILD_DIR] [-k SUBSTRING]
  -k SUBSTRING   only the tests whose name has SUBSTRING; `-k unit` the unit
                 tests alone, `-k rhash/AREA` that part of the RHASH suite.
"""
import glob
import importlib
import os
import subprocess
import sys
import time
import traceback

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import testlib  # tests/ is sys.path[0]
from testlib import (Failure, Gap, Skip, TOP, guest_leftovers, guest_program,
                     qemu_tests_wanted)

AREAS = os.path.join(TOP, 'tests', 'areas')


# ---- unit tests (no kernel) ---------------------------------------------

def unit_tests():
    """The C unit tests (build/tests/test_NAME from tests/unit/test_NAME.c):
    their counts join ours."""
    passed = failed = 0
    for source in sorted(glob.glob(os.path.join(TOP, 'tests', 'unit', 'test_*.c'))):
        name = os.path.basename(source)[:-2]
        p, f = unit_binary(os.path.join(testlib.BUILD, 'tests', name))
        passed, failed = passed + p, failed + f
    return passed, failed


def unit_binary(path):
    if not os.access(path, os.X_OK):
        print(f'FAIL unit/{os.path.basename(path)}\n    {path} is not built: run make')
        return 0, 1
    proc = subprocess.run([path, os.path.join(TOP, 'tests', 'unit', 'fixtures')],
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


# ---- the registered tests ------------------------------------------------

def import_areas():
    """tests/areas/*.py in name order, as the package `areas`."""
    for name in sorted(os.listdir(AREAS)):
        if name.endswith('.py') and not name.startswith('_'):
            importlib.import_module('areas.' + name[:-len('.py')])


def run_one(t):
    """Runs test T; returns ('ok' | 'skip' | 'FAIL', the text to print)."""
    dirs_before = set(guest_leftovers()[1])
    outcome, text = 'ok', ''
    try:
        t.run()
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
    left = set(guest_leftovers()[1]) - dirs_before - testlib.BASELINE_DIRS
    if left:
        testlib.BASELINE_DIRS.update(left)
        text = (text + '\n' if outcome == 'FAIL' else '') + \
            'run directories left behind: ' + ' '.join(sorted(left))
        outcome = 'FAIL'
    return outcome, text


def main(argv):
    build = argv[1] if len(argv) > 1 and not argv[1].startswith('-') else os.path.join(TOP, 'build')
    only = argv[argv.index('-k') + 1] if '-k' in argv else None
    area = argv[argv.index('--area') + 1] if '--area' in argv else None
    testlib.setup(build)
    import_areas()
    testlib.BASELINE_DIRS.update(guest_leftovers()[1])
    passed = failed = skipped = 0
    if not area and (not only or only in 'unit'):
        passed, failed = unit_tests()
    if not area and (not only or only in 'rhash/' or only.startswith('rhash/')):
        p, f, s = rhash_suite(only[len('rhash/'):] if only and only.startswith('rhash/') else None)
        passed, failed, skipped = passed + p, failed + f, skipped + s
    run_qemu = qemu_tests_wanted()
    if not run_qemu and any(t.qemu for t in testlib.TESTS):
        why = ('BPFUML_QEMU_TESTS=0' if os.environ.get('BPFUML_QEMU_TESTS') == '0' else
               f'{testlib.QEMU_KERNEL} is not built (make qemu-kernel, or BPFUML_QEMU_TESTS=1 make test)')
        print(f'note: --backend qemu tests left out: {why}')
    for t in testlib.TESTS:
        if only and only not in t.name:
            continue
        if area and getattr(t.run, 'func', t.run).__module__ != f'areas.{area}':
            continue
        if t.qemu and not run_qemu:
            continue
        start = time.monotonic()
        outcome, text = run_one(t)
        if outcome == 'ok':
            passed += 1
            print(f'ok   {t.name} ({time.monotonic() - start:.2f} s)')
        elif outcome == 'skip':
            skipped += 1
            print(f'skip {t.name}: {text}')
        else:
            failed += 1
            print(f'FAIL {t.name}')
            print('\n'.join('    ' + line for line in text.splitlines()))
    print(f'{passed} passed, {failed} failed, {skipped} skipped')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
