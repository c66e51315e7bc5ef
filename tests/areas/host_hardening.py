# host_hardening.py — the host distrusts what the guest wrote,
# exits cleanly on every signal and error path, bounds the console, and
# sweeps the run directories of a harness that was killed (issue 21, 15).
import json
import os
import re
import signal
import subprocess
import time

from testlib import (BPFUML, EXIT_INFRA, EXIT_INTERRUPTED, EXIT_OK, EXIT_REJECTED, KERNEL_COMPLAINTS, PROGS,
                     Failure, bpfuml, bpfuml_json, check, check_no_leftovers, fake_selftests_build_dir,
                     guest_leftovers, test)


def hostile_result(fault, *extra, timeout=120):
    """verify with a --test-fault that makes the agent's result hostile:
    exit 3, said as a malformed result, nothing of the host file shown, no
    leftovers; returns the error message."""
    before = guest_leftovers()[1]
    try:
        code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'accepted.bpf.o'),
                                     '--test-fault', fault, *extra, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure(f'--test-fault {fault}: bpfuml hung ({timeout} s)')
    check(code == EXIT_INFRA, f'exit {code}, want 3; {doc}\n{err[-1500:]}')
    error = doc.get('error') or {}
    check(error.get('kind') == 'malformed' and
          error.get('message', '').startswith("the guest's result is malformed: "),
          f'not reported as a malformed result: {doc}')
    check('root:' not in json.dumps(doc), f'a host file reached the output: {doc}')
    check_no_leftovers(before)
    return error['message']


@test
def guest_result_log_that_is_a_symlink_is_not_followed():
    message = hostile_result('result-symlink')
    check('prog-0.log, which is a symbolic link' in message, message)


@test
def guest_result_log_that_is_a_fifo_does_not_hang_the_host():
    message = hostile_result('result-fifo-log')
    check('prog-0.log, which is not a regular file' in message, message)


@test
def guest_result_path_out_of_the_run_directory_is_refused():
    message = hostile_result('result-traversal')
    check('"../../../../../etc/passwd" is not a file this job writes' in message, message)


@test
def guest_result_log_larger_than_the_cap_is_refused():
    message = hostile_result('result-huge-log')
    check('which has 4294967296 bytes, more than the 256 MiB the host reads' in message, message)


@test
def guest_result_of_the_wrong_types_is_refused():
    message = hostile_result('result-bad-types')
    check('programs is not an array' in message, message)


@test
def guest_result_without_a_verdict_is_refused():
    # --format gcc compared the missing verdict with strcmp.
    before = guest_leftovers()[1]
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'accepted.bpf.o'), '--format', 'gcc',
                            '--test-fault', 'result-no-verdict')
    check(code == EXIT_INFRA, f'exit {code}, want 3; {err[-1500:]}')
    check("the guest's result is malformed: objects[0].programs[0].verdict is missing" in err, err)
    check_no_leftovers(before)


# ---- clean exits ---------------------------------------------------------------

@test
def closed_stdout_leaves_no_run_directory():
    """`bpfuml verify x --json | head -c 1`: the write to a closed pipe must
    not kill bpfuml before it removed its run directory."""
    before = guest_leftovers()[1]
    proc = subprocess.Popen([BPFUML, 'verify', '--json', '--log-level', '2',
                             os.path.join(PROGS, 'rejected.bpf.o')],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()     # the reader is gone before anything is written
    err = proc.stderr.read().decode(errors='replace')
    proc.wait(timeout=120)
    proc.stderr.close()
    check(proc.returncode != -signal.SIGPIPE, f'killed by SIGPIPE; {err[-1500:]}')
    check(proc.returncode == EXIT_REJECTED, f'exit {proc.returncode}, want 1; {err[-1500:]}')
    check_no_leftovers(before)


@test
def sigquit_kills_guest_and_cleans_up():
    before = guest_leftovers()[1]
    proc = subprocess.Popen([BPFUML, 'verify', os.path.join(PROGS, 'accepted.bpf.o'),
                             '--test-fault', 'hang', '--timeout', '60'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_guest(proc, before)
    proc.send_signal(signal.SIGQUIT)
    out, err = proc.communicate(timeout=60)
    check(proc.returncode == EXIT_INTERRUPTED, f'exit {proc.returncode}, want 130; {err}')
    check_no_leftovers(before)


@test
def run_directory_the_guest_locked_is_removed():
    # The agent leaves locked/ with mode 000 and a file in it.
    before = guest_leftovers()[1]
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'accepted.bpf.o'),
                                 '--test-fault', 'chmod-dir')
    check(code == EXIT_OK, f'exit {code}, want 0; {err[-1500:]}')
    check_no_leftovers(before)


@test
def timeout_works_without_pidfd():
    # As where pidfd_open() is refused (old kernels, seccomp profiles).
    before = guest_leftovers()[1]
    try:
        proc = subprocess.run([BPFUML, 'verify', '--json', os.path.join(PROGS, 'accepted.bpf.o'),
                               '--test-fault', 'hang', '--timeout', '2'], capture_output=True,
                              text=True, timeout=120, env={**os.environ, 'BPFUML_TEST_NO_PIDFD': '1'})
    except subprocess.TimeoutExpired:
        raise Failure('--timeout 2 did not end the guest without a pidfd (120 s)')
    doc = json.loads(proc.stdout)
    check(proc.returncode == EXIT_INFRA and doc['error']['kind'] == 'timeout',
          f'exit {proc.returncode}: {doc}')
    check_no_leftovers(before)


def wait_for_guest(proc, before, what=None, limit=120):
    """Until a guest of ours runs (and, with WHAT, has WHAT in its run
    directory): a condition, not a time."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        procs, dirs = guest_leftovers()
        new = [d for d in dirs if d not in before]
        if procs and new and (not what or any(os.path.exists(os.path.join(d, what)) for d in new)):
            return new
        check(proc.poll() is None, f'bpfuml ended (exit {proc.returncode}) before its guest ran')
        time.sleep(0.1)
    raise Failure(f'no guest started within {limit} s')


def wait_for_no_guest(limit=30):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not guest_leftovers()[0]:
            return
        time.sleep(0.1)
    raise Failure(f'guests outlived their killed harness ({limit} s):\n' + '\n'.join(guest_leftovers()[0]))


@test
def killed_kselftest_harness_leaves_no_guest():
    """SIGKILL of `bpfuml kselftest` while a guest runs a test that sleeps
    for an hour: the guests die with it (their parent-death signal); the
    next run sweeps the run directories it left."""
    before = guest_leftovers()[1]
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    proc = subprocess.Popen([BPFUML, 'kselftest', '-t', 'sleepy', '--timeout', '3000', '--json'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_for_guest(proc, before, what='allow.txt')
    finally:
        proc.kill()
        proc.wait()
    wait_for_no_guest()
    left = [d for d in guest_leftovers()[1] if d not in before]
    check(left, 'the killed harness left no run directory: nothing to sweep (test broken?)')
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'accepted.bpf.o'))
    check(code == EXIT_OK, f'exit {code}; {err}')
    check_no_leftovers(before)


@test
def interrupted_kselftest_kills_its_guests_and_cleans_up():
    """SIGINT while one guest sleeps and another has been collected: every
    guest killed, every run directory removed, exit 130 with one document."""
    before = guest_leftovers()[1]
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    proc = subprocess.Popen([BPFUML, 'kselftest', '-t', 'sleepy,alpha', '--batch', '1', '-j', '2',
                             '--timeout', '3000', '--json'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_for_guest(proc, before, what='allow.txt')
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    check(proc.returncode == EXIT_INTERRUPTED, f'exit {proc.returncode}, want 130; {err[-800:]}')
    doc = json.loads(out)
    check(doc.get('error', {}).get('kind') == 'interrupted', f'document: {out[:400]}')
    wait_for_no_guest()
    check_no_leftovers(before)


@test
def kselftest_guest_killed_at_its_time_out_costs_only_its_test():
    """A test that sleeps past --timeout: its guest's test_progs is killed
    and the test is an error saying so; the test beside it still passes."""
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    proc = subprocess.run([BPFUML, 'kselftest', '-t', 'sleepy,alpha', '--batch', '1', '-j', '2',
                           '--timeout', '3', '--json'],
                          capture_output=True, text=True, timeout=300, env=env)
    doc = json.loads(proc.stdout)
    got = {r['name']: r for r in doc['results']}
    check(got.get('alpha', {}).get('status') == 'passed', f'alpha: {got.get("alpha")}')
    sleepy = got.get('sleepy', {})
    check(sleepy.get('status') == 'error' and 'killed after 3 s' in (sleepy.get('reason') or ''),
          f'sleepy: {sleepy}')
    check(proc.returncode == EXIT_INFRA, f'exit {proc.returncode}: an error is exit 3')
    check_no_leftovers()


@test
def run_directory_of_a_killed_harness_is_swept_and_kept_ones_stay():
    before = guest_leftovers()[1]
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'accepted.bpf.o'), '--keep')
    kept = re.search(r'run directory kept: (\S+)', err)
    check(code == EXIT_OK and kept, f'exit {code}; {err}')
    kept = kept.group(1)
    try:
        proc = subprocess.Popen([BPFUML, 'verify', os.path.join(PROGS, 'accepted.bpf.o'),
                                 '--test-fault', 'hang', '--timeout', '60'],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            left = [d for d in wait_for_guest(proc, before + [kept]) if d != kept]
        finally:
            proc.kill()
            proc.wait()
        wait_for_no_guest()
        check(all(os.path.isdir(d) for d in left), f'{left} gone before the next run')
        code, out, err = bpfuml('verify', os.path.join(PROGS, 'accepted.bpf.o'))
        check(code == EXIT_OK, f'exit {code}; {err}')
        check(os.path.isdir(kept), f'the --keep directory {kept} was swept')
        check_no_leftovers(before + [kept])
    finally:
        subprocess.run(['rm', '-rf', kept])


# ---- the console is bounded -----------------------------------------------------

@test
def console_flood_is_bounded():
    """64 MiB on the guest's console: the run finishes, and the console
    kept is its head and tail (4 + 4 MiB) with the amount dropped said."""
    before = guest_leftovers()[1]
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'accepted.bpf.o'),
                                 '--test-fault', 'console-flood', '--keep', '--timeout', '600',
                                 timeout=700)
    kept = re.search(r'run directory kept: (\S+)', err)
    try:
        check(code == EXIT_OK, f'exit {code}, want 0; {doc.get("error")}\n{err[-1500:]}')
        check(kept, f'no kept run directory said: {err[-500:]}')
        console = os.path.join(kept.group(1), 'console.log')
        size = os.path.getsize(console)
        check(size <= (8 << 20) + 200, f'console.log has {size} bytes, over the 8 MiB cap')
        with open(console, 'rb') as f:
            f.seek((4 << 20) - 100)
            middle = f.read(300).decode(errors='replace')
        check(re.search(r'\[\.\.\. \d+ bytes of console output dropped \.\.\.\]', middle),
              f'no "dropped" marker after the head: {middle!r}')
    finally:
        if kept:
            subprocess.run(['rm', '-rf', kept.group(1)])
    check_no_leftovers(before)


@test
def kernel_trouble_on_the_console_fails_the_job():
    # Every console line harness/kernel_trouble.def names (hung tasks and
    # RCU stalls among them: verify once let those through) turns an
    # accepted verify into exit 3, the line quoted; an ordinary kernel line
    # does not.
    samples = {'Kernel panic': 'Kernel panic - not syncing: test',
               'blocked for more than': 'INFO: task kworker/0:1:12 blocked for more than 120 seconds.',
               'self-detected stall': 'rcu: INFO: rcu_sched self-detected stall on CPU'}
    check(set(samples) <= set(KERNEL_COMPLAINTS), f'kernel_trouble.def lacks {set(samples) - set(KERNEL_COMPLAINTS)}')
    for marker in KERNEL_COMPLAINTS:
        line = samples.get(marker, f'bpfuml test: {marker} here')
        code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'accepted.bpf.o'),
                                     '--test-fault', 'kmsg=' + line)
        error = doc.get('error') or {}
        check(code == EXIT_INFRA and error.get('kind') == 'kernel' and line in error.get('message', ''),
              f'{line!r}: exit {code}, {doc}')
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'accepted.bpf.o'),
                                 '--test-fault', 'kmsg=bpfuml test: an ordinary line')
    check(code == EXIT_OK, f'an ordinary kernel line failed the job: exit {code}, {doc}')
    check_no_leftovers()
