#!/usr/bin/env python3
"""verify_speed.py — how long a cold `bpfuml verify` takes, end to end.

Runs `build/bin/bpfuml verify --json OBJECT` N times (each a fresh UML boot),
timing each from command start to exit, and prints the median and p90 of the
whole and of its phases as the harness measured them: boot (spawn -> agent
start), job (load and verify), shutdown (job end -> UML gone), plus the host's
own overhead (the rest).  A benchmark, not a test: it asserts nothing.

usage: tests/bench/verify_speed.py [-n RUNS] [--json] [OBJECT]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-n', '--runs', type=int, default=30)
    ap.add_argument('--json', action='store_true', help='print the figures as JSON')
    ap.add_argument('--bpfuml', default=os.path.join(TOP, 'build', 'bin', 'bpfuml'))
    ap.add_argument('object', nargs='?',
                    default=os.path.join(TOP, 'build', 'tests', 'progs', 'accepted.bpf.o'))
    args = ap.parse_args()

    phases = {'total': [], 'boot': [], 'job': [], 'shutdown': [], 'host': []}
    for _ in range(args.runs):
        start = time.perf_counter()
        proc = subprocess.run([args.bpfuml, 'verify', '--json', args.object],
                              capture_output=True, text=True)
        total = (time.perf_counter() - start) * 1000
        if proc.returncode not in (0, 1):
            sys.exit(f'verify_speed: bpfuml failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}')
        timing = json.loads(proc.stdout)['timing']
        phases['total'].append(total)
        phases['boot'].append(timing['boot_ms'])
        phases['job'].append(timing['job_ms'])
        phases['shutdown'].append(timing['shutdown_ms'])
        phases['host'].append(total - timing['guest_ms'])

    figures = {name: {'median_ms': statistics.median(v), 'p90_ms': percentile(v, 0.9),
                      'min_ms': min(v), 'max_ms': max(v)} for name, v in phases.items()}
    if args.json:
        print(json.dumps({'object': args.object, 'runs': args.runs, 'phases': figures}, indent=2))
        return
    print(f'cold verify of {os.path.relpath(args.object)}, {args.runs} runs (ms)')
    print(f'{"phase":<10}{"median":>9}{"p90":>9}{"min":>9}{"max":>9}')
    for name, f in figures.items():
        print(f'{name:<10}{f["median_ms"]:>9.1f}{f["p90_ms"]:>9.1f}{f["min_ms"]:>9.1f}{f["max_ms"]:>9.1f}')
    print('boot = spawn -> agent start; job = load+verify in the guest; '
          'shutdown = job end -> UML exit; host = the rest (compile-free: input checks, '
          'staging, JSON)')


if __name__ == '__main__':
    main()
