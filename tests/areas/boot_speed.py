# boot_speed.py — what a verify guest skips at boot for speed (issue 16) and
# what it must still have.  Speed itself is measured by
# tests/bench/verify_speed.py, never asserted here.

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile

from testlib import BPFUML, BUILD, EXIT_OK, PROGS, RUNDIR_BASE, Skip, bpfuml_json, check, test


def kept_run(*args):
    """verify --keep: the exit code, the JSON document and the console log."""
    before = set(os.listdir(RUNDIR_BASE))
    code, doc, err = bpfuml_json('verify', '--keep', *args)
    new = [os.path.join(RUNDIR_BASE, d) for d in set(os.listdir(RUNDIR_BASE)) - before
           if d.startswith('bpfuml.')]
    check(len(new) == 1, f'--keep left {new}')
    with open(os.path.join(new[0], 'console.log'), errors='replace') as f:
        console = f.read()
    shutil.rmtree(new[0])
    return code, doc, console


@test
def guest_memory_on_huge_pages_where_user_namespaces_allow():
    # The memory file goes to a tmpfs of huge pages mounted in a user
    # namespace of the guest's own; UML says where it made it.
    probe = subprocess.run(['unshare', '--user', '--map-root-user', '--mount', '--propagation', 'private',
                            'true'], capture_output=True, text=True, timeout=60)
    if probe.returncode:
        # A chroot's / is no mount point, a container may refuse user
        # namespaces: the memory file then stays in the run directory.
        raise Skip(f'no private mount namespace here: {probe.stderr.strip()}')
    code, doc, console = kept_run(os.path.join(PROGS, 'accepted.bpf.o'))
    check(code == EXIT_OK, f'exit {code}')
    check(re.search(r'Checking if \S+/memory is on tmpfs\.\.\.OK', console),
          f'memory file not on the huge-page tmpfs:\n{console[:1500]}')
    # Where user namespaces are refused (a user namespace whose limit is 0
    # refuses nested ones), the file stays in the run directory: same verdict.
    # Root in it (--map-root-user): only a capable user may lower the limit.
    script = ('echo 0 > /proc/sys/user/max_user_namespaces && '
              f'exec {shlex.quote(BPFUML)} verify --json {shlex.quote(os.path.join(PROGS, "accepted.bpf.o"))}')
    proc = subprocess.run(['unshare', '--user', '--map-root-user', 'sh', '-c', script],
                          capture_output=True, text=True, timeout=120)
    check(proc.returncode == EXIT_OK and json.loads(proc.stdout)['programs'][0]['verdict'] == 'accepted',
          f'without user namespaces: exit {proc.returncode}\n{proc.stdout[-800:]}{proc.stderr[-1500:]}')


@test
def boot_console_has_no_unused_lines_or_errors():
    # con=none / ssl=none register no unused tty (kernel-patches/0033) and
    # say nothing about them.
    code, doc, console = kept_run(os.path.join(PROGS, 'accepted.bpf.o'))
    check(code == EXIT_OK, f'exit {code}')
    check('setup_one_line failed' not in console, f'console complains:\n{console[:3000]}')


@test
def pinned_map_verified_as_built_gets_bpffs():
    # A verify job mounts bpffs only when a pin needs it (kernel-patches/0031:
    # its first mount loads bpf_preload's iterators).  With the fixups the
    # pin is dropped; as built, libbpf pins the map there.
    obj = os.path.join(PROGS, 'pinned_map.bpf.o')
    code, doc, err = bpfuml_json('verify', obj)
    check(code == EXIT_OK and "map 'shared_counter': not pinned" in doc['fixups'],
          f'exit {code}: {doc.get("fixups")} {doc.get("programs")}')
    code, doc, err = bpfuml_json('verify', obj, '--no-fixups')
    check(code == EXIT_OK and doc['programs'][0]['verdict'] == 'accepted',
          f'--no-fixups: exit {code}: {[(p["verdict"], p.get("libbpf_messages")) for p in doc.get("programs", [])]}')


# An init for the UML kernel booted on the host's / (hostfs, read-only):
# the print formats of the events named, then power off.
FORMATS_INIT = '''#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tracefs tracefs /sys/kernel/tracing
for e in %s; do echo "== $e"; grep '^print fmt' "/sys/kernel/tracing/events/$e/format"; done
echo o > /proc/sysrq-trigger
'''


@test
def trace_event_formats_have_their_enums_replaced():
    # kernel-patches/0034 scans the eval maps once per system: every
    # TRACE_DEFINE_ENUM must still be replaced by its value, in the first
    # system the maps name and in later ones alike.
    want = {'xdp/xdp_redirect_err': '{ 0, "ABORTED" }',
            'sock/inet_sock_set_state': '{ 6, "IPPROTO_TCP" }',
            'skb/kfree_skb': '{ 2, "NOT_SPECIFIED" }',
            'writeback/writeback_queue': '{ 0, "background" }'}
    scratch = tempfile.mkdtemp(prefix='formats.', dir=os.path.join(BUILD, 'tests'))
    try:
        init = os.path.join(scratch, 'init')
        with open(init, 'w') as f:
            f.write(FORMATS_INIT % ' '.join(want))
        os.chmod(init, 0o755)
        proc = subprocess.run([os.path.join(BUILD, 'kernel', 'linux'), 'mem=256M', 'rootfstype=hostfs',
                               'rootflags=/', 'ro', 'init=' + init, 'con0=fd:0,fd:1', 'con=none',
                               'ssl=none', 'quiet'], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=300, env={**os.environ, 'TMPDIR': scratch})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out = proc.stdout.decode(errors='replace').replace('\r', '')
    formats = dict(re.findall(r'^== (\S+)\n(print fmt: .*)$', out, re.M))
    for event, value in want.items():
        check(value in formats.get(event, ''), f'{event}: no {value!r} in its format:\n'
              f'{formats.get(event) or out[-2000:]}')
