# infra_failures.py — when the guest fails (a panic, a hang, an interrupt),
# bpfuml says so with exit 3 or 130 and leaves no guest or run directory;
# two runs at once do not collide.  Panic and interrupt run on both backends.
import json
import os
import signal
import subprocess
import time

from testlib import (BPFUML, EXIT_INFRA, EXIT_INTERRUPTED, PROGS, backend_options, backend_timeout,
                     bpfuml_json, check, check_no_leftovers, guest_leftovers, test)


@test(backends=('uml', 'qemu'))
def guest_panic_is_infrastructure_failure(backend):
    before = guest_leftovers()[1]
    code, doc, err = bpfuml_json('verify', *backend_options(backend), os.path.join(PROGS, 'accepted.bpf.o'),
                                 '--test-fault', 'panic', timeout=backend_timeout(backend))
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


@test(backends=('uml', 'qemu'))
def interrupt_kills_guest_and_cleans_up(backend):
    before = guest_leftovers()[1]
    proc = subprocess.Popen([BPFUML, 'verify', *backend_options(backend),
                             os.path.join(PROGS, 'accepted.bpf.o'), '--test-fault', 'hang', '--timeout', '60'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2 if backend == 'qemu' else 1.5)
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
