#!/usr/bin/env python3
"""verify_speed.py — how long a cold `bpfuml verify` takes, end to end,
in UML and through the x86_64 reference backend (QEMU), side by side.

Runs `build/bin/bpfuml verify --json --backend B OBJECT` N times per backend
(each a fresh boot), timing each from command start to exit, and prints the
median and p90 of the whole and of its phases as the harness measured them:
boot (spawn -> agent start), job (load and verify), shutdown (job end ->
guest gone), plus the host's own overhead (the rest).  A benchmark, not a
test: it asserts nothing.

usage: tests/bench/verify_speed.py [-n RUNS] [--qemu-runs N] [--backends uml,qemu]
                                   [--json] [OBJECT]
  The qemu backend is measured when its kernel is built (make qemu-kernel).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def percentile(values, p):
    values = sorted(values)
    k = (len(values) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def measure(bpfuml, backend, obj, runs):
    phases = {'total': [], 'boot': [], 'job': [], 'shutdown': [], 'host': []}
    accel = None
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run([bpfuml, 'verify', '--json', '--backend', backend, obj],
                              capture_output=True, text=True)
        total = (time.perf_counter() - start) * 1000
        if proc.returncode not in (0, 1):
            sys.exit(f'verify_speed: bpfuml --backend {backend} failed (exit {proc.returncode}):\n'
                     f'{proc.stdout}{proc.stderr}')
        doc = json.loads(proc.stdout)
        timing, accel = doc['timing'], doc.get('accel')
        phases['total'].append(total)
        phases['boot'].append(timing['boot_ms'])
        phases['job'].append(timing['job_ms'])
        phases['shutdown'].append(timing['shutdown_ms'])
        phases['host'].append(total - timing['guest_ms'])
    return {'runs': runs, 'accel': accel,
            'phases': {name: {'median_ms': statistics.median(v), 'p90_ms': percentile(v, 0.9),
                              'min_ms': min(v), 'max_ms': max(v)} for name, v in phases.items()}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-n', '--runs', type=int, default=30, help='runs on UML')
    ap.add_argument('--qemu-runs', type=int, default=10, help='runs on QEMU (seconds each under TCG)')
    ap.add_argument('--backends', default='uml,qemu')
    ap.add_argument('--json', action='store_true', help='print the figures as JSON')
    ap.add_argument('--bpfuml', default=os.path.join(TOP, 'build', 'bin', 'bpfuml'))
    ap.add_argument('object', nargs='?',
                    default=os.path.join(TOP, 'build', 'tests', 'progs', 'accepted.bpf.o'))
    args = ap.parse_args()

    results, notes = {}, []
    for backend in args.backends.split(','):
        if backend == 'qemu' and not os.path.exists(os.path.join(TOP, 'build', 'qemu', 'bzImage')):
            notes.append('qemu: not measured, its kernel is not built (make qemu-kernel)')
            continue
        results[backend] = measure(args.bpfuml, backend, args.object,
                                   args.qemu_runs if backend == 'qemu' else args.runs)
    if args.json:
        print(json.dumps({'object': args.object, 'backends': results, 'notes': notes}, indent=2))
        return
    print(f'cold verify of {os.path.relpath(args.object)} (ms)')
    print(f'{"phase":<10}' + ''.join(f'{b + " median":>14}{b + " p90":>11}' for b in results))
    for name in ('total', 'boot', 'job', 'shutdown', 'host'):
        print(f'{name:<10}' + ''.join(f'{r["phases"][name]["median_ms"]:>14.1f}{r["phases"][name]["p90_ms"]:>11.1f}'
                                      for r in results.values()))
    print('runs: ' + ', '.join(f'{b} {r["runs"]}' + (f' ({r["accel"]})' if r['accel'] else '')
                               for b, r in results.items()))
    print('boot = spawn -> agent start; job = load+verify in the guest; '
          'shutdown = job end -> guest exit; host = the rest (input checks, staging, JSON)')
    for note in notes:
        print(note)


if __name__ == '__main__':
    main()
