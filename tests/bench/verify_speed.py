#!/usr/bin/env python3
"""verify_speed.py — how long a `bpfuml verify` takes, end to end: cold in
UML, warm through `bpfuml serve`, and cold through the x86_64 reference
backend (QEMU), side by side.

Runs `build/bin/bpfuml verify --json --backend B OBJECT` N times per backend
(each a fresh boot), and for "warm" `verify --json --server SOCKET OBJECT`
N times against one `bpfuml serve` started here, timing each from command
start to exit, and prints the median and p90 of the whole and of its phases
as the harness measured them: boot (spawn -> agent start), job (load and
verify), shutdown (job end -> guest gone), the guest's whole share (warm:
the job sent -> its answer), plus the host's own overhead (the rest).  A
benchmark, not a test: it asserts nothing.

usage: tests/bench/verify_speed.py [-n RUNS] [--qemu-runs N] [--backends uml,uml-jit,warm,qemu]
                                   [--kernel VERSION] [--json] [OBJECT]
  The qemu backend is measured when its kernel is built (make qemu-kernel).
  --kernel: every guest boots that kernel of kernel-patches/versions.conf
  (built first: make kernel KERNEL=VERSION).
"""
import argparse
import json
import os
import select
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def percentile(values, p):
    values = sorted(values)
    k = (len(values) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


PHASES = ('total', 'boot', 'job', 'shutdown', 'guest', 'host')
KERNEL = []     # ['--kernel', VERSION] for every bpfuml command (--kernel)


def measure(bpfuml, backend, obj, runs, server=None):
    phases = {name: [] for name in PHASES}
    accel = None
    # uml-jit: UML with x86_64's JIT (--jit), beside uml's interpreter.
    where = ['--server', server] if server else \
        ['--backend', 'uml', '--jit'] if backend == 'uml-jit' else ['--backend', backend]
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run([bpfuml, 'verify', '--json', *KERNEL, *where, obj],
                              capture_output=True, text=True)
        total = (time.perf_counter() - start) * 1000
        if proc.returncode not in (0, 1):
            sys.exit(f'verify_speed: bpfuml --backend {backend} failed (exit {proc.returncode}):\n'
                     f'{proc.stdout}{proc.stderr}')
        doc = json.loads(proc.stdout)
        timing, accel = doc['timing'], doc.get('accel')
        if server and not timing.get('warm'):
            sys.exit(f'verify_speed: the job was not done by the server:\n{proc.stderr}')
        phases['total'].append(total)
        for name in ('boot', 'job', 'shutdown'):
            if f'{name}_ms' in timing:      # a warm guest has no boot or shutdown
                phases[name].append(timing[f'{name}_ms'])
        phases['guest'].append(timing['guest_ms'])
        phases['host'].append(total - timing['guest_ms'])
    return {'runs': runs, 'accel': accel,
            'phases': {name: {'median_ms': statistics.median(v), 'p90_ms': percentile(v, 0.9),
                              'min_ms': min(v), 'max_ms': max(v)} for name, v in phases.items() if v}}


def measure_warm(bpfuml, obj, runs):
    """RUNS warm verifies through a `bpfuml serve` of our own."""
    scratch = tempfile.mkdtemp(prefix='verify_speed.')
    os.chmod(scratch, 0o700)
    sock = os.path.join(scratch, 'serve.sock')
    server = subprocess.Popen([bpfuml, 'serve', *KERNEL, '--socket', sock], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        sel = selectors.DefaultSelector()
        sel.register(server.stdout, selectors.EVENT_READ)
        if not sel.select(120) or 'ready' not in server.stdout.readline():
            sys.exit(f'verify_speed: bpfuml serve did not get ready: {server.stderr.read() if server.poll() is not None else ""}')
        return measure(bpfuml, 'uml', obj, runs, server=sock)
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
        shutil.rmtree(scratch, ignore_errors=True)


def measure_watch(bpfuml, source, runs):
    """Save-to-verdict of `verify --watch` on a copy of SOURCE: from the
    write of a changed file to the pass's "since last" line (its settle
    time, clang and the warm guest included)."""
    scratch = tempfile.mkdtemp(prefix='verify_speed.')
    copy = os.path.join(scratch, os.path.basename(source))
    shutil.copy(source, copy)
    watcher = subprocess.Popen([bpfuml, 'verify', *KERNEL, '--watch', copy], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    pending = [b'']     # what was read past the last whole line

    def wait_for(text):
        """Lines read from the pipe itself: a buffered reader would hold
        the next line where select() cannot see it."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            while b'\n' in pending[0]:
                line, pending[0] = pending[0].split(b'\n', 1)
                if text.encode() in line:
                    return
            ready, _, _ = select.select([watcher.stderr], [], [], deadline - time.monotonic())
            chunk = os.read(watcher.stderr.fileno(), 4096) if ready else b''
            if not chunk:
                break
            pending[0] += chunk
        sys.exit(f'verify_speed: verify --watch did not say {text!r}')
    times = []
    try:
        wait_for('watching')
        for i in range(runs):
            with open(copy, 'a') as f:
                start = time.perf_counter()
                f.write(f'/* {i} */\n')
            wait_for('since last')
            times.append((time.perf_counter() - start) * 1000)
            wait_for('watching')
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.communicate(timeout=60)
        shutil.rmtree(scratch, ignore_errors=True)
    return {'runs': runs, 'accel': None,
            'phases': {'total': {'median_ms': statistics.median(times), 'p90_ms': percentile(times, 0.9),
                                 'min_ms': min(times), 'max_ms': max(times)}}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-n', '--runs', type=int, default=30, help='runs on UML')
    ap.add_argument('--qemu-runs', type=int, default=10, help='runs on QEMU (seconds each under TCG)')
    ap.add_argument('--backends', default='uml,warm,watch,qemu',
                    help='uml (cold, interpreter), uml-jit (cold, --jit), warm (bpfuml serve), watch '
                         '(verify --watch: save to verdict of --source), qemu (cold, x86_64)')
    ap.add_argument('--source', default=os.path.join(TOP, 'tests', 'progs', 'accepted.bpf.c'),
                    help='the .bpf.c that watch edits (a copy of it)')
    ap.add_argument('--kernel', help='boot this kernel of kernel-patches/versions.conf (default: the default)')
    ap.add_argument('--json', action='store_true', help='print the figures as JSON')
    ap.add_argument('--bpfuml', default=os.path.join(TOP, 'build', 'bin', 'bpfuml'))
    ap.add_argument('object', nargs='?',
                    default=os.path.join(TOP, 'build', 'tests', 'progs', 'accepted.bpf.o'))
    args = ap.parse_args()
    if args.kernel:
        KERNEL.extend(['--kernel', args.kernel])
    qemu_kernel = os.path.join(TOP, 'build', *(('kernels', f'{args.kernel}-qemu') if args.kernel else ('qemu',)),
                               'bzImage')

    results, notes = {}, []
    for backend in args.backends.split(','):
        if backend == 'qemu' and not os.path.exists(qemu_kernel):
            notes.append('qemu: not measured, its kernel is not built (make qemu-kernel'
                         + (f' KERNEL={args.kernel})' if args.kernel else ')'))
            continue
        if backend == 'watch':
            results[backend] = measure_watch(args.bpfuml, args.source, args.runs)
            continue
        if backend == 'warm':
            results[backend] = measure_warm(args.bpfuml, args.object, args.runs)
            continue
        results[backend] = measure(args.bpfuml, backend, args.object,
                                   args.qemu_runs if backend == 'qemu' else args.runs)
    if args.json:
        print(json.dumps({'object': args.object, 'kernel': args.kernel, 'backends': results, 'notes': notes},
                         indent=2))
        return
    print(f'verify of {os.path.relpath(args.object)} (ms)' + (f' on kernel {args.kernel}' if args.kernel else '')
          + ': cold per backend, warm through bpfuml serve')
    print(f'{"phase":<10}' + ''.join(f'{b + " median":>14}{b + " p90":>11}' for b in results))

    def cell(r, name):
        p = r['phases'].get(name)
        return f'{p["median_ms"]:>14.1f}{p["p90_ms"]:>11.1f}' if p else f'{"-":>14}{"-":>11}'
    for name in PHASES:
        print(f'{name:<10}' + ''.join(cell(r, name) for r in results.values()))
    print('runs: ' + ', '.join(f'{b} {r["runs"]}' + (f' ({r["accel"]})' if r['accel'] else '')
                               for b, r in results.items()))
    if 'watch' in results:
        print(f'watch = verify --watch of a copy of {os.path.relpath(args.source)}: total is save -> verdict '
              '(settle, clang, warm guest)')
    print('boot = spawn -> agent start; job = load+verify in the guest; '
          'shutdown = job end -> guest exit; guest = all the guest\'s share (warm: job sent -> answer); '
          'host = the rest (input checks, staging, JSON)')
    for note in notes:
        print(note)


if __name__ == '__main__':
    main()
