# exec.py — `bpfuml exec`: a host program run in a guest.
# Its files and exit status are checked under --backend qemu too.
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from testlib import (BPFUML, BUILD, EXIT_INFRA, EXIT_USAGE, KERNEL_COMPLAINTS, TOP, Failure, backend_options,
                     backend_timeout, bpfuml, check, check_no_leftovers, test)

EXEC_DATA = os.path.join(TOP, 'tests', 'progs', 'accepted.bpf.c')   # a readable, non-executable file


def exec_json(*args, timeout=300):
    """bpfuml exec --json ARGS (ARGS end with -- PROGRAM ...): (code, doc, err)."""
    code, out, err = bpfuml('exec', '--json', *args, timeout=timeout)
    try:
        return code, json.loads(out), err
    except ValueError:
        raise Failure(f'exit {code}: stdout is not one JSON document:\n{out[-1500:]}\n{err[-1500:]}')


@test(backends={'uml': 'exec_runs_a_program_with_its_files_and_gives_its_exit_status',
                'qemu': 'qemu_exec_runs_the_program_under_the_x86_64_kernel'})
def exec_runs_a_program(backend):
    # The --file copy is in its working directory; its arguments are its
    # own (an option after PROGRAM is not bpfuml's); its status is ours.
    code, out, err = bpfuml('exec', *backend_options(backend), '--file', EXEC_DATA, '--',
                            '/bin/sh', '-c', 'wc -c < accepted.bpf.c; id -u; echo "$0 $1"; exit 7',
                            'sh', '--json', timeout=backend_timeout(backend))
    size = os.path.getsize(EXEC_DATA)
    check(code == 7, f'exit {code}, want the program\'s 7; {err}')
    check(out.split() == [str(size), '0', 'sh', '--json'], f'output {out!r}')
    check('exit status 7' in err, f'stderr does not say how it ended: {err!r}')
    if backend == 'qemu':
        # Under the x86_64 kernel: QEMU's machine, said in the document.
        code, doc, err = exec_json('--backend', 'qemu', '--', '/bin/sh', '-c',
                                   'cat /sys/class/dmi/id/sys_vendor; exit 5')
        check(code == 5 and doc.get('backend') == 'qemu' and doc.get('output', '').strip() == 'QEMU',
              f'exit {code}: {doc}')
    check_no_leftovers()


@test
def exec_json_tells_the_programs_status_from_the_guests():
    code, doc, err = exec_json('--', '/bin/sh', '-c', 'echo out; echo err >&2; kill -USR1 $$')
    check(code == 128 + signal.SIGUSR1 and doc.get('signal') == signal.SIGUSR1 and 'error' not in doc,
          f'exit {code}: {doc}')
    check(doc.get('output') == 'out\nerr\n' and doc.get('schema') == 'bpfuml-exec/1', f'{doc}')
    # Kernel trouble while it ran: exit 3, the console lines, its output kept.
    marker = KERNEL_COMPLAINTS[0]
    code, doc, err = exec_json('--', '/bin/sh', '-c',
                               f'echo "bpfuml test: {marker} here" > /dev/kmsg; echo wrote; exit 0')
    error = doc.get('error') or {}
    check(code == EXIT_INFRA and error.get('kind') == 'kernel' and marker in error.get('message', ''),
          f'exit {code}: {doc}')
    check(doc.get('output') == 'wrote\n' and doc.get('exit_status') == 0, f'{doc}')
    check_no_leftovers()


@test
def exec_program_past_its_time_out_is_killed():
    start = time.monotonic()
    code, doc, err = exec_json('--timeout', '2', '--', '/bin/sleep', '600', timeout=120)
    check(code == EXIT_INFRA and doc.get('timed_out') is True and 'killed after 2 s' in doc.get('how', ''),
          f'exit {code}: {doc}')
    check(time.monotonic() - start < 100, f'took {time.monotonic() - start:.0f} s for a 2 s time-out')
    check_no_leftovers()


@test
def exec_bad_program_or_file_is_a_usage_error():
    cases = [(('--', '/nonexistent/prog'), '/nonexistent/prog'),
             (('--', EXEC_DATA), 'Permission denied'),     # not executable
             (('--file', '/nonexistent/data', '--', '/bin/true'), '/nonexistent/data'),
             ((), 'no PROGRAM')]
    scratch = tempfile.mkdtemp(prefix='exec.', dir=os.path.join(BUILD, 'tests'))
    try:
        own = os.path.join(scratch, 'job.json')
        twins = [os.path.join(scratch, d, 'data') for d in ('a', 'b')]
        for path in [own, *twins]:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, 'w').close()
        cases.append((('--file', own, '--', '/bin/true'), "run directory's own job.json"))
        cases.append((('--file', twins[0], '--file', twins[1], '--', '/bin/true'), 'two files named data'))
        for args, said in cases:
            code, out, err = bpfuml('exec', *args)
            check(code == EXIT_USAGE and said in err, f'{args}: exit {code}, stderr {err!r}')
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    check_no_leftovers()


@test
def kernel_args_from_the_environment_reach_the_guest_kernel():
    # BPFUML_KERNEL_ARGS (profiling a boot) goes on the command line; one
    # that would end the kernel's parameters early is ignored.
    def cmdline(args):
        proc = subprocess.run([BPFUML, 'exec', '--', '/bin/cat', '/proc/cmdline'], capture_output=True,
                              text=True, timeout=120, env={**os.environ, 'BPFUML_KERNEL_ARGS': args})
        check(proc.returncode == 0, f'{args!r}: exit {proc.returncode}: {proc.stderr[-800:]}')
        return proc.stdout
    got = cmdline('bpfuml_probe_a=1 bpfuml_probe_b')
    check('bpfuml_probe_a=1 bpfuml_probe_b' in got, f'/proc/cmdline: {got!r}')
    got = cmdline('bpfuml_probe_c -- x')
    check('bpfuml_probe_c' not in got, f'an argument with "--" was passed: {got!r}')
    check_no_leftovers()
