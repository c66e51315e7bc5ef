# run_sh.py — ./run.sh builds only when an input changed (issue 16).
import os
import subprocess
import tempfile

from testlib import BUILD, TOP, Gap, check, test


def run_sh_with_fake_make(*args, extra_env=None):
    """./run.sh with a `make` that only records that it was called."""
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, 'make-called')
        fake = os.path.join(tmp, 'make')
        with open(fake, 'w') as f:
            f.write(f'#!/bin/sh\necho "$@" >> {marker}\nexit 1\n')
        os.chmod(fake, 0o755)
        env = {**os.environ, 'PATH': tmp + ':' + os.environ['PATH'], **(extra_env or {})}
        proc = subprocess.run([os.path.join(TOP, 'run.sh'), *args], capture_output=True, text=True,
                              timeout=120, env=env)
        return proc, os.path.exists(marker)


@test
def run_sh_skips_make_when_nothing_changed():
    if BUILD != os.path.join(TOP, 'build'):
        raise Gap('run.sh builds into build/ only')
    # A real run first: builds if needed and writes the stamp.
    proc = subprocess.run([os.path.join(TOP, 'run.sh'), 'help'], capture_output=True, text=True,
                          timeout=3600)
    check(proc.returncode == 0, f'./run.sh help: exit {proc.returncode}\n{proc.stderr[-2000:]}')
    proc, called = run_sh_with_fake_make('help')
    check(proc.returncode == 0 and not called,
          f'make was run although nothing changed (exit {proc.returncode}): {proc.stderr[-500:]}')
    # A changed input (here a variable the Makefile reads) runs make again.
    proc, called = run_sh_with_fake_make('help', extra_env={'V': '0'})
    check(called and proc.returncode == 3, f'make not run after an input changed (exit {proc.returncode})')
