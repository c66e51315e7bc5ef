# serve.py — `bpfuml serve`: warm guests, and the clients that use them
# (--server, BPFUML_SERVER).  A warm guest must answer as a cold one does,
# keep no job's objects, and be replaced when it breaks.
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from testlib import (BPFUML, EXIT_INFRA, EXIT_OK, EXIT_USAGE, KERNEL_COMPLAINTS, PROGS, SRC_PROGS, Failure,
                     bpfuml, check, check_no_leftovers, test)

READY_WITHIN_S = 120     # a loaded machine boots slowly


class Server:
    """A `bpfuml serve` in a private directory of its own, stopped (SIGTERM)
    and checked for a clean exit at the end of a `with`."""

    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix='serve.')
        os.chmod(self.dir, 0o700)
        self.socket = os.path.join(self.dir, 'serve.sock')
        self.proc = subprocess.Popen([BPFUML, 'serve', '--socket', self.socket, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self._ready_line()
        check(line.startswith('bpfuml serve: ') and self.socket in line, f'first line {line!r}')

    def _ready_line(self):
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        if not sel.select(READY_WITHIN_S):
            self.stop()
            raise Failure(f'the server was not ready within {READY_WITHIN_S} s')
        return self.proc.stdout.readline()

    def request(self, msg, raw=None):
        """One message (a dict, or RAW bytes) on a new connection; its answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.settimeout(60)
            s.connect(self.socket)
            s.send(raw if raw is not None else json.dumps(msg).encode())
            return json.loads(s.recv(1 << 20))

    def status(self):
        return self.request({'op': 'status'})

    def stop(self):
        """SIGTERM: (exit code, stderr)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            where = subprocess.run(['gdb', '-p', str(self.proc.pid), '-batch', '-ex', 'bt'],
                                   capture_output=True, text=True).stdout if shutil.which('gdb') else ''
            where += subprocess.run(['ps', '-eo', 'pid,ppid,pgid,stat,wchan:32,args'], capture_output=True,
                                    text=True).stdout
            self.proc.kill()
            _, err = self.proc.communicate()
            raise Failure(f'the server did not stop within 60 s of SIGTERM:\n{err[-2000:]}\n{where[-3000:]}')
        return self.proc.returncode, err

    def __enter__(self):
        return self

    def __exit__(self, kind, *_):
        code, err = self.stop()
        leftovers = os.listdir(self.dir)
        shutil.rmtree(self.dir, ignore_errors=True)
        if kind is None:
            check(code == EXIT_OK, f'the server exited {code} on SIGTERM: {err[-2000:]}')
            check(not leftovers, f'the server left {leftovers} in its socket directory')
            check_no_leftovers()


KERNEL_ADDRESS = re.compile(r'0x[0-9a-f]{6,16}\b')
OBJECT_ID = re.compile(r'\b(id[:=])\d+')


def without_timing(doc):
    """A verify document without what differs from run to run: its timing,
    and the kernel addresses and object ids that logs quote (a map's
    address in a verifier log, say), which depend on what the kernel did
    before."""
    doc = json.loads(json.dumps(doc))
    for d in [doc, *doc.get('files', [])]:
        d.pop('timing', None)
    text = json.dumps(doc, sort_keys=True)
    return json.loads(OBJECT_ID.sub(r'\1N', KERNEL_ADDRESS.sub('0xADDR', text)))


# The objects whose verdicts make test's verify cases turn on: accepted,
# rejected, not loaded, loader fixups, kfuncs, callbacks, optional programs,
# tail calls, a long log, x86_64-only fields.
VERDICT_OBJECTS = ['accepted', 'rejected', 'many_rejected', 'map_create_fails', 'missing_kfunc',
                   'optional_progs', 'loader_fixups', 'kfunc_calls', 'callbacks', 'tail_call',
                   'tail_call_rejected_target', 'long_log', 'thread_info_status', 'jit_only',
                   'arena', 'struct_ops', 'legacy_probe_read', 'stack_rounding', 'pinned_map']


def verify_json(*args, env=None):
    proc = subprocess.run([BPFUML, 'verify', '--json', *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, 'NO_COLOR': '1', **(env or {})})
    try:
        return proc.returncode, json.loads(proc.stdout), proc.stderr
    except ValueError:
        raise Failure(f'exit {proc.returncode}: not one JSON document:\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}')


@test
def serve_answers_every_verify_case_exactly_as_a_cold_guest():
    objects = [os.path.join(PROGS, f'{name}.bpf.o') for name in VERDICT_OBJECTS
               if os.path.exists(os.path.join(PROGS, f'{name}.bpf.o'))]
    check(len(objects) >= 15, f'only {len(objects)} objects built')
    with Server() as server:
        for obj in objects:
            cold = verify_json(obj)
            warm = verify_json('--server', server.socket, obj)
            check(warm[0] == cold[0], f'{obj}: exit {warm[0]} warm, {cold[0]} cold')
            check(without_timing(warm[1]) == without_timing(cold[1]),
                  f'{obj}: the documents differ:\ncold {json.dumps(without_timing(cold[1]))[:3000]}\n'
                  f'warm {json.dumps(without_timing(warm[1]))[:3000]}')
            check('note' not in warm[2], f'{obj}: the client fell back: {warm[2]}')
        # Several files in one job; the gcc format; a source compiled here.
        both = [os.path.join(PROGS, 'accepted.bpf.o'), os.path.join(PROGS, 'rejected.bpf.o')]
        cold, warm = verify_json(*both), verify_json('--server', server.socket, *both)
        check(warm[0] == cold[0] == 1 and without_timing(warm[1]) == without_timing(cold[1]),
              f'two files: exit {warm[0]}/{cold[0]}')
        source = os.path.join(SRC_PROGS, 'rejected.bpf.c')
        cold = bpfuml('verify', '--format', 'gcc', source)
        warm = bpfuml('verify', '--format', 'gcc', '--server', server.socket, source)
        check(warm[0] == cold[0] == 1 and warm[1] == cold[1], f'gcc format of a .bpf.c: {warm} vs {cold}')
        # No job's programs or links outlived it; its maps and BTF, let go
        # after a grace period, are watched going (a guest whose stay past
        # 2 s says "leak" and is replaced): none was.
        time.sleep(3)
        status = server.status()
        guest = status['guests'][0]
        check(status['jobs_done'] >= len(objects) + 2 and guest['replaced'] == 0,
              f'status after the jobs: {status}')
        for kind in ('programs', 'links'):
            check(guest['after_last_job'][kind] <= guest['when_ready'][kind], f'{kind} left: {guest}')


@test
def serve_runs_run_probe_and_exec_jobs():
    obj = os.path.join(PROGS, 'accepted.bpf.o')
    packet = os.path.join(tempfile.mkdtemp(prefix='serve.'), 'packet')
    with open(packet, 'wb') as f:
        f.write(bytes(64))
    with Server() as server:
        cold = bpfuml('run', obj, '--prog', 'pass_all', '--data-in', packet, '--json')
        warm = bpfuml('run', obj, '--prog', 'pass_all', '--data-in', packet, '--json', '--server', server.socket)
        check(warm[0] == cold[0] == EXIT_OK, f'run: exit {warm[0]}/{cold[0]}: {warm[2]}')
        cold_doc, warm_doc = json.loads(cold[1]), json.loads(warm[1])
        for d in (cold_doc, warm_doc):
            d.pop('timing', None)
            d.pop('duration_ns', None)
        check(warm_doc.keys() == cold_doc.keys() and warm_doc.get('retval') == cold_doc.get('retval'),
              f'run documents differ: {warm_doc} vs {cold_doc}')
        # exec: the program runs in the job's own directory, with its files.
        code, out, err = bpfuml('exec', '--server', server.socket, '--file', obj, '--', '/bin/sh', '-c',
                                'ls; exit 6')
        check(code == 6 and 'accepted.bpf.o' in out.split(), f'exec: exit {code}: {out!r} {err}')
        # An exec job's stray process is killed with its job.
        code, out, err = bpfuml('exec', '--server', server.socket, '--', '/bin/sh', '-c',
                                'sleep 1000 & echo started')
        check(code == 0 and 'started' in out, f'exec with a background process: exit {code}: {err}')
        code, out, err = bpfuml('exec', '--server', server.socket, '--', '/bin/sh', '-c',
                                'ps -e -o comm= 2>/dev/null | grep -c "^sleep$" || true')
        check(code == 0 and out.strip() == '0', f'a job\'s process outlived it: {out!r} {err}')
        code, out, err = bpfuml('probe', '--json', '--server', server.socket, timeout=600)
        check(code == EXIT_OK and json.loads(out).get('rows'), f'probe: exit {code}: {err[-1500:]}')
        check(server.status()['guests'][0]['replaced'] == 0, f'{server.status()}')
    shutil.rmtree(os.path.dirname(packet))


@test
def serve_replaces_a_guest_that_panics_hangs_or_loses_its_client():
    obj = os.path.join(PROGS, 'accepted.bpf.o')
    with Server() as server:
        code, doc, err = verify_json('--server', server.socket, obj, '--test-fault', 'panic')
        check(code == EXIT_INFRA and doc.get('error', {}).get('kind') == 'kernel', f'panic: exit {code}: {doc}')
        code, doc, err = verify_json('--server', server.socket, obj)
        check(code == EXIT_OK, f'after the panic: exit {code}: {err}')
        code, doc, err = verify_json('--server', server.socket, obj, '--test-fault', 'hang', '--timeout', '2')
        check(code == EXIT_INFRA and doc.get('error', {}).get('kind') == 'timeout', f'hang: exit {code}: {doc}')
        marker = KERNEL_COMPLAINTS[0]
        code, doc, err = verify_json('--server', server.socket, obj, '--test-fault', f'kmsg={marker}: from a test')
        check(code == EXIT_INFRA and marker in doc.get('error', {}).get('message', ''),
              f'a kernel complaint mid-job: exit {code}: {doc}')
        # A client killed mid-job: its job is cancelled with its guest.
        client = subprocess.Popen([BPFUML, 'verify', '--server', server.socket, obj, '--test-fault', 'hang'],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.status()['guests'][0]['state'] != 'busy':
            time.sleep(0.05)
        client.kill()
        client.wait()
        code, doc, err = verify_json('--server', server.socket, obj)
        check(code == EXIT_OK, f'after a client went away: exit {code}: {err}')
        guest = server.status()['guests'][0]
        check(guest['replaced'] == 4 and 'client went away' in guest.get('last_replaced_because', ''),
              f'status: {guest}')
    check_no_leftovers()


@test
def serve_answers_bad_requests_and_stays_up():
    with Server() as server:
        check('error' in server.request(None, raw=b'{not json'), 'malformed JSON')
        check('error' in server.request(None, raw=b'[1, 2]'), 'not an object')
        check('error' in server.request({'op': 'format-disk'}), 'unknown op')
        check('error' in server.request({'op': 'run', 'timeout_s': 5}), '"run" before "job"')
        check('error' in server.request(None, raw=b'\xff\xfe' * 1000), 'not text')
        code, doc, err = verify_json('--server', server.socket, os.path.join(PROGS, 'accepted.bpf.o'))
        check(code == EXIT_OK, f'after the bad requests: exit {code}: {err}')
        # Bad input of a client is the client's usage error, as when cold.
        code, doc, err = verify_json('--server', server.socket, '/nonexistent.bpf.o')
        check(code == EXIT_USAGE and '/nonexistent.bpf.o' in json.dumps(doc), f'exit {code}: {doc}')


@test
def client_without_a_server_boots_its_own_guest_and_says_so():
    obj = os.path.join(PROGS, 'accepted.bpf.o')
    code, doc, err = verify_json(obj, env={'BPFUML_SERVER': '/nonexistent/serve.sock'})
    check(code == EXIT_OK and 'no server at /nonexistent/serve.sock' in err and 'booting a guest' in err,
          f'exit {code}: {err}')
    # A socket file nobody listens at (a server that died) is the same.
    scratch = tempfile.mkdtemp(prefix='serve.')
    try:
        dead = os.path.join(scratch, 'dead.sock')
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.bind(dead)
        s.close()
        code, doc, err = verify_json('--server', dead, obj)
        check(code == EXIT_OK and 'no server answers' in err, f'exit {code}: {err}')
    finally:
        shutil.rmtree(scratch)
    check_no_leftovers()


@test
def serve_refuses_a_socket_others_can_reach():
    # /tmp is everyone's: a socket there could be reached, or replaced, by others.
    code, out, err = bpfuml('serve', '--socket', '/tmp/bpfuml-test-public.sock', timeout=60)
    check(code == EXIT_USAGE and 'only you can enter' in err, f'exit {code}: {err}')
    check(not os.path.exists('/tmp/bpfuml-test-public.sock'), 'a socket was made')
    code, out, err = bpfuml('serve', '--guests', '0', timeout=60)
    check(code == EXIT_USAGE and '--guests' in err, f'exit {code}: {err}')
    with Server() as server:
        code, out, err = bpfuml('serve', '--socket', server.socket, timeout=60)
        check(code == EXIT_USAGE and 'already answers' in err, f'a second server: exit {code}: {err}')
    check_no_leftovers()


@test
def serve_with_two_guests_shares_jobs_between_them():
    obj = os.path.join(PROGS, 'accepted.bpf.o')
    with Server('--guests', '2') as server:
        clients = [subprocess.Popen([BPFUML, 'verify', '--server', server.socket, obj],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                   for _ in range(6)]
        for c in clients:
            _, err = c.communicate(timeout=300)
            check(c.returncode == EXIT_OK and 'note' not in err, f'exit {c.returncode}: {err}')
        guests = server.status()['guests']
        check(len(guests) == 2 and all(g['jobs_done'] >= 1 for g in guests) and
              sum(g['jobs_done'] for g in guests) == 6, f'{guests}')


@test
def serve_keeps_nothing_a_job_pinned_or_attached():
    bpftool = os.path.join(os.path.dirname(BPFUML), 'bpftool')
    obj = os.path.join(PROGS, 'accepted.bpf.o')
    with Server() as server:
        # A pin is the job's own: its bpffs goes with it.
        code, out, err = bpfuml('exec', '--server', server.socket, '--file', obj, '--', '/bin/sh', '-c',
                                f'{bpftool} prog load accepted.bpf.o /sys/fs/bpf/kept && ls /sys/fs/bpf')
        check(code == 0 and 'kept' in out, f'pinning: exit {code}: {out} {err}')
        code, out, err = bpfuml('exec', '--server', server.socket, '--', '/bin/sh', '-c', 'ls /sys/fs/bpf')
        check(code == 0 and 'kept' not in out, f'the next job sees the pin: {out!r}')
        check(server.status()['guests'][0]['replaced'] == 0, f'{server.status()}')
        # A program attached to a device outlives its job's process: the
        # guest is replaced before the next job.
        code, out, err = bpfuml('exec', '--server', server.socket, '--file', obj, '--', '/bin/sh', '-c',
                                f'{bpftool} prog load accepted.bpf.o /sys/fs/bpf/p && '
                                f'{bpftool} net attach xdp pinned /sys/fs/bpf/p dev lo && echo attached')
        check(code == 0 and 'attached' in out, f'attaching: exit {code}: {out} {err}')
        code, out, err = bpfuml('exec', '--server', server.socket, '--', bpftool, 'net', 'show', 'dev', 'lo')
        check(code == 0 and 'pass_all' not in out, f'the next job sees the attached program: {out!r}')
        guest = server.status()['guests'][0]
        check(guest['replaced'] == 1 and 'programs or links' in guest.get('last_replaced_because', ''),
              f'{guest}')
