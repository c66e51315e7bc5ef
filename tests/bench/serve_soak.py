#!/usr/bin/env python3
"""serve_soak.py — many verify jobs through one `bpfuml serve`: does the
server stay flat, and does every warm verdict equal the cold one?

Verifies each OBJECT once cold (its own guest), then sends N jobs (the
objects in turn) to one server with `bpfuml verify --json --server`, and
prints: the server's RSS and open descriptors and the guest's MemAvailable
at the start and at the end, the guest's BPF programs, maps, links and BTF
objects when ready and after the last job (once a job's lingering maps had
time to go), guests replaced, jobs whose verdicts differ from the cold ones
(none expected), and the warm latency.  A benchmark, not a test: it prints
figures and asserts nothing, but exits 1 when a verdict differed.

usage: tests/bench/serve_soak.py [-n JOBS] [--json] [OBJECT...]
  default objects: build/tests/progs/{accepted,rejected,many_rejected,loader_fixups,
  optional_progs,kfunc_calls}.bpf.o
"""
import argparse
import json
import os
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OBJECTS = ['accepted', 'rejected', 'many_rejected', 'loader_fixups', 'optional_progs', 'kfunc_calls']


def verdicts(doc):
    """What must not differ: each program's verdict, and the exit code."""
    return (doc.get('exit_code'), [(p['name'], p['verdict']) for p in doc.get('programs', [])])


def verify(bpfuml, obj, *extra):
    proc = subprocess.run([bpfuml, 'verify', '--json', *extra, obj], capture_output=True, text=True)
    try:
        return json.loads(proc.stdout), proc.stderr
    except ValueError:
        sys.exit(f'serve_soak: {obj}: not one JSON document (exit {proc.returncode}):\n{proc.stderr[-2000:]}')


def status(sock):
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.settimeout(30)
        s.connect(sock)
        s.send(b'{"op": "status"}')
        return json.loads(s.recv(1 << 20))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-n', '--jobs', type=int, default=10000)
    ap.add_argument('--json', action='store_true')
    ap.add_argument('--bpfuml', default=os.path.join(TOP, 'build', 'bin', 'bpfuml'))
    ap.add_argument('objects', nargs='*')
    args = ap.parse_args()
    objects = args.objects or [os.path.join(TOP, 'build', 'tests', 'progs', f'{o}.bpf.o') for o in DEFAULT_OBJECTS]
    cold = {obj: verdicts(verify(args.bpfuml, obj)[0]) for obj in objects}

    scratch = tempfile.mkdtemp(prefix='serve_soak.')
    os.chmod(scratch, 0o700)
    sock = os.path.join(scratch, 'serve.sock')
    server = subprocess.Popen([args.bpfuml, 'serve', '--socket', sock], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        sel = selectors.DefaultSelector()
        sel.register(server.stdout, selectors.EVENT_READ)
        if not sel.select(120) or 'ready' not in server.stdout.readline():
            sys.exit('serve_soak: bpfuml serve did not get ready')
        # The first job warms the server's own allocations; the figures start after it.
        verify(args.bpfuml, objects[0], '--server', sock)
        start = status(sock)
        differ, fell_back, latency = [], 0, []
        began = time.monotonic()
        for i in range(args.jobs):
            obj = objects[i % len(objects)]
            t = time.perf_counter()
            doc, err = verify(args.bpfuml, obj, '--server', sock)
            latency.append((time.perf_counter() - t) * 1000)
            fell_back += 'booting a guest' in err
            if verdicts(doc) != cold[obj]:
                differ.append((i, obj, verdicts(doc), cold[obj]))
        elapsed = time.monotonic() - began
        time.sleep(3)      # the last job's maps and BTF go after a grace period
        end = status(sock)
    finally:
        server.send_signal(signal.SIGTERM)
        _, server_err = server.communicate(timeout=60)
        shutil.rmtree(scratch, ignore_errors=True)

    g0, g1 = start['guests'][0], end['guests'][0]
    figures = {
        'jobs': args.jobs, 'objects': [os.path.basename(o) for o in objects], 'seconds': round(elapsed, 1),
        'server_rss_kb': [start['rss_kb'], end['rss_kb']], 'server_fds': [start['fds'], end['fds']],
        'guest_mem_available_kb': [g0['after_last_job']['mem_available_kb'], g1['after_last_job']['mem_available_kb']],
        'guest_bpf_objects_when_ready': g1['when_ready'], 'guest_bpf_objects_at_end': g1['after_last_job'],
        'guests_replaced': end['guests'][0]['replaced'], 'jobs_done': end['jobs_done'],
        'fell_back_to_cold': fell_back, 'verdicts_differing': len(differ),
        'latency_ms': {'median': round(statistics.median(latency), 2),
                       'p90': round(sorted(latency)[int(len(latency) * 0.9)], 2), 'max': round(max(latency), 2)},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f'{args.jobs} warm verify jobs ({", ".join(figures["objects"])}) in {elapsed:.1f} s through one bpfuml serve')
        print(f'server RSS        {start["rss_kb"]} -> {end["rss_kb"]} KiB')
        print(f'server fds        {start["fds"]} -> {end["fds"]}')
        print(f'guest MemAvailable {figures["guest_mem_available_kb"][0]} -> {figures["guest_mem_available_kb"][1]} KiB')
        kinds = ('programs', 'maps', 'links', 'btf')
        print('guest BPF objects ' + ', '.join(f'{k} {g1["when_ready"][k]} -> {g1["after_last_job"][k]}' for k in kinds)
              + ' (when ready -> after the last job)')
        print(f'guests replaced   {figures["guests_replaced"]}; jobs fallen back to a cold guest {fell_back}')
        print(f'verdicts differing from the cold ones: {len(differ)}')
        print(f'latency (ms)      median {figures["latency_ms"]["median"]}, p90 {figures["latency_ms"]["p90"]}, '
              f'max {figures["latency_ms"]["max"]}')
    for d in differ[:10]:
        print(f'  job {d[0]} {d[1]}: warm {d[2]} cold {d[3]}', file=sys.stderr)
    if server_err.strip():
        print('server said:\n' + server_err[-3000:], file=sys.stderr)
    sys.exit(1 if differ else 0)


if __name__ == '__main__':
    main()
