# boot_speed.py — what a verify guest skips at boot for speed (issue 16) and
# what it must still have.  Speed itself is measured by
# tests/bench/verify_speed.py, never asserted here.

import re
import shlex
import shutil


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
