# confinement.py — the guest cannot touch the host; no root needed.
import json
import os
import pwd
import re
import shutil
import subprocess
import tempfile

from testlib import (BPFUML, BUILD, EXIT_INFRA, EXIT_OK, EXIT_REJECTED, EXIT_USAGE, PROGS, TOP, Failure,
                     Skip, backend_options, bpfuml, check, check_no_leftovers, fake_selftests_build_dir,
                     test)

ACCEPTED = os.path.join(PROGS, 'accepted.bpf.o')


def escape_attempt(*extra, env=None):
    """verify with --test-fault escape=TARGET, TARGET a host file outside the
    run directory that the host user could write; returns (exit code, the
    JSON document, stderr, the agent's "escape" record, whether TARGET
    exists afterwards).  The target's directory is under build/ (not /tmp,
    which the guest covers with its tmpfs)."""
    scratch = tempfile.mkdtemp(prefix='escape.', dir=os.path.join(BUILD, 'tests'))
    target = os.path.join(scratch, 'escaped')
    try:
        proc = subprocess.run([BPFUML, 'verify', ACCEPTED, '--json', '--keep',
                               '--test-fault', 'escape=' + target, *extra],
                              capture_output=True, text=True, timeout=600,
                              env={**os.environ, 'NO_COLOR': '1', **(env or {})})
        said = proc.stderr + proc.stdout     # --json: the error is in the document
        kept = re.search(r'run directory kept: (\S+)', proc.stderr)
        if 'a read-only mount namespace could not be made' in said:
            # Only when the namespace was forced: hosts where it cannot be
            # made (a chroot cannot make / private) fall back to Landlock.
            # --keep kept the run directory of the job that never booted.
            if kept:
                shutil.rmtree(kept.group(1), ignore_errors=True)
            raise Skip(f'no read-only mount namespace here: {said.strip()[-300:]}')
        check(kept, f'no run directory kept (exit {proc.returncode}):\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}')
        try:
            with open(os.path.join(kept.group(1), 'result.json')) as f:
                escape = json.load(f).get('escape')
        except FileNotFoundError:
            raise Failure(f'the guest wrote no result (exit {proc.returncode}):\n{proc.stderr[-1500:]}')
        finally:
            shutil.rmtree(kept.group(1), ignore_errors=True)
        check(escape and escape.get('attempts'), f'the agent recorded no escape attempt: {escape}')
        return proc.returncode, json.loads(proc.stdout), proc.stderr, escape, os.path.exists(target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def attempts_text(escape):
    return '\n'.join(f'  {a["how"]}: mounted={a["mounted"]} wrote={a["wrote"]} error={a["error"]}'
                     for a in escape['attempts'])


def check_escape_failed(result, want_confinement, backend='uml'):
    code, doc, err, escape, exists = result
    check(not exists, 'the guest created a host file outside its run directory:\n' + attempts_text(escape))
    check(not escape['wrote'], 'the agent says an attempt wrote:\n' + attempts_text(escape))
    check(code == EXIT_OK, f'exit {code}; the job after the attempt should pass: {doc.get("error")}')
    check(doc.get('confinement') == want_confinement,
          f'confinement {doc.get("confinement")!r}, want {want_confinement!r}')
    how = {a['how']: a for a in escape['attempts']}
    # The attempt reached the host: the guest's own kernel let it through
    # (mounted), the host refused the write.
    reached = 'hostfs' if backend == 'uml' else 'remount-root-rw'
    check(how[reached]['mounted'] and how[reached]['error'],
          f'the {reached} attempt did not get as far as the host:\n' + attempts_text(escape))
    check_no_leftovers()


def default_confinement():
    """What `bpfuml help` says confines guests here, as the JSON names it."""
    code, out, err = bpfuml('help')
    m = re.search(r'Landlock \(ABI (\d+)\)', out)
    return f'landlock-abi{m.group(1)}' if m else 'namespace'


@test(backends=('uml', 'qemu'))
def guest_cannot_write_outside_its_run_directory(backend):
    check_escape_failed(escape_attempt(*backend_options(backend)), default_confinement(), backend=backend)


@test
def guest_cannot_write_outside_its_run_directory_namespace():
    # The fallback for hosts without Landlock, forced.
    check_escape_failed(escape_attempt(env={'BPFUML_CONFINE': 'namespace'}), 'namespace')


@test
def unconfined_guest_writes_the_host_and_is_warned():
    # What the two tests above guard against: without confinement the same
    # attempt succeeds.  BPFUML_CONFINE=none must be asked for and is said.
    code, doc, err, escape, exists = escape_attempt(env={'BPFUML_CONFINE': 'none'})
    check(exists and escape['wrote'], 'an unconfined guest could not write the host file, so the '
          'escape tests prove nothing:\n' + attempts_text(escape))
    check('WARNING' in err and 'not confined' in err, f'no warning on stderr: {err!r}')
    check(doc.get('confinement') == 'none', f'confinement {doc.get("confinement")!r}')


@test
def help_says_which_confinement_and_bad_setting_is_usage_error():
    code, out, err = bpfuml('help')
    check(code == EXIT_OK and re.search(r'This host: guests are confined by (Landlock \(ABI \d+\)|'
                                        r'a read-only mount namespace)', out),
          f'no confinement line in help:\n{out[-600:]}')
    proc = subprocess.run([BPFUML, 'verify', ACCEPTED], capture_output=True, text=True, timeout=120,
                          env={**os.environ, 'BPFUML_CONFINE': 'bogus'})
    check(proc.returncode == EXIT_USAGE and "BPFUML_CONFINE wants landlock, namespace or none, not 'bogus'"
          in proc.stderr, f'exit {proc.returncode}: {proc.stderr!r}')
    check_no_leftovers()


def guest_processes():
    out = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                out.append(f'{pid}: ' + f.read().replace(b'\0', b' ').decode(errors='replace'))
        except OSError:
            pass
    return out


# ---- no root needed ----------------------------------------------------------
# As root, the commands run as a throwaway system user (created here when
# missing, removed again); as any other user, this test is the non-root case
# itself.

TEST_USER = 'bpfuml-test'


def ordinary_user():
    """(argv prefix, uid, gid, created) running a command as a non-root user."""
    if os.geteuid() != 0:
        return [], os.geteuid(), os.getegid(), False
    created = False
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run(['useradd', '--system', '--no-create-home', '--shell', '/usr/sbin/nologin',
                        TEST_USER], check=True, capture_output=True)
        created = True
    pw = pwd.getpwnam(TEST_USER)
    return (['setpriv', f'--reuid={pw.pw_uid}', f'--regid={pw.pw_gid}', '--init-groups', '--'],
            pw.pw_uid, pw.pw_gid, created)


def build_view_for_another_user():
    """build/ as another user can reach it.  make run by root links
    build/kernel and build/selftests into root's cache (~/.cache under a 0700
    /root), out of every other user's reach; a user who builds for himself
    has his own.  So for the throwaway user: the same files, hard-linked (no
    copy) into a directory under build/, the bpfuml binary among them (it
    finds its build directory from its own path)."""
    view = tempfile.mkdtemp(prefix='user-view.', dir=os.path.join(BUILD, 'tests'))
    os.chmod(view, 0o755)
    for part in ('bin', 'kernel', 'progs', 'kselftest', 'selftests', 'include', 'lib', 'manifest'):
        src = os.path.join(BUILD, part)
        if not os.path.exists(src):
            continue
        # -L: through the links into the cache; -l: hard links, not copies.
        proc = subprocess.run(['cp', '-a', '-L', '-l', src, view], capture_output=True, text=True)
        if proc.returncode:
            subprocess.run(['cp', '-a', '-L', src, view], check=True)
    return view


def fake_build_dir_in(view):
    """fake_selftests_build_dir() inside VIEW, for the throwaway user."""
    fake = os.path.join(view, 'kselftest-fake')
    for d in ('bin', 'selftests', 'kselftest'):
        os.makedirs(os.path.join(fake, d))
    for link, target in (('kernel', os.path.join(view, 'kernel')),
                         ('bin/bpfuml-agent', os.path.join(view, 'bin', 'bpfuml-agent')),
                         ('selftests/bpf', os.path.join(TOP, 'tests', 'kselftest', 'fake')),
                         ('kselftest/DENYLIST.uml', os.path.join(TOP, 'tests', 'kselftest', 'fake', 'DENYLIST.uml'))):
        os.symlink(target, os.path.join(fake, link))
    return fake


@test
def every_guest_command_works_as_an_ordinary_user():
    prefix, uid, gid, created = ordinary_user()
    base = tempfile.mkdtemp(prefix='bpfuml-user.', dir='/dev/shm' if os.path.isdir('/dev/shm') else None)
    home = tempfile.mkdtemp(prefix='bpfuml-user-home.')
    view = build_view_for_another_user() if prefix else BUILD
    bpfuml_bin = os.path.join(view, 'bin', 'bpfuml')
    try:
        os.chown(base, uid, gid)
        os.chown(home, uid, gid)
        env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'HOME': home, 'NO_COLOR': '1',
               'BPFUML_RUNDIR': base, 'TMPDIR': home}

        def run(*args, timeout=600, extra_env=None):
            proc = subprocess.run([*prefix, bpfuml_bin, *args], capture_output=True, text=True,
                                  timeout=timeout, env={**env, **(extra_env or {})}, cwd=home)
            return proc.returncode, proc.stdout, proc.stderr

        who = subprocess.run([*prefix, 'id', '-u'], capture_output=True, text=True, env=env).stdout.strip()
        check(who == str(uid) and uid != 0, f'not an ordinary user: uid {who}')
        data_in = os.path.join(home, 'in.bin')
        with open(data_in, 'wb') as f:
            f.write(bytes(64))
        os.chown(data_in, uid, gid)
        steps = [
            (('verify', ACCEPTED), EXIT_OK),
            (('verify', os.path.join(PROGS, 'rejected.bpf.o')), EXIT_REJECTED),
            (('run', os.path.join(PROGS, 'packet_rewrite.bpf.o'), '--prog', 'rewrite',
              '--data-in', data_in), EXIT_OK),
            (('bench', '--quick'), EXIT_OK),
            (('probe',), EXIT_OK),
            (('exec', '--', '/bin/sh', '-c', 'exit 6'), 6),
        ]
        if os.path.exists(os.path.join(view, 'selftests', 'bpf', 'test_progs')):
            steps.insert(3, (('kselftest', '-t', 'verifier_and', '-j', '1'), EXIT_OK))
        else:
            # The harness's own stand-ins (kselftest_harness_shards_...):
            # sharded 2-CPU guests, one of which dies (exit 3 by design).
            fake = fake_selftests_build_dir() if view == BUILD else fake_build_dir_in(view)
            code, out, err = run('kselftest', '-j', '2', '--batch', '3', '--json',
                                 extra_env={'BPFUML_BUILD_DIR': fake})
            got = {r['name']: r['status'] for r in json.loads(out).get('results', [])} if out else {}
            check(code == EXIT_INFRA and got.get('alpha') == 'passed' and got.get('gamma') == 'passed',
                  f'kselftest (stand-ins) as uid {uid}: exit {code}, results {got}\n{err[-1500:]}')
            print('    note: selftests not built (make kselftest-build): kselftest ran the stand-ins')
        for args, want in steps:
            code, out, err = run(*args)
            check(code == want, f'`bpfuml {" ".join(args)}` as uid {uid}: exit {code}, want {want}\n'
                  f'stdout: {out[-1500:]}\nstderr: {err[-2000:]}')
        left = os.listdir(base)
        check(not left, f'left in the run directory base {base}: {left}')
        procs = [p for p in guest_processes() if base in p]
        check(not procs, 'guest processes left behind:\n' + '\n'.join(procs))
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
        if view != BUILD:
            shutil.rmtree(view, ignore_errors=True)
        if created:
            subprocess.run(['userdel', TEST_USER], capture_output=True)


@test
def deps_says_root_is_needed_only_to_install_packages():
    # A dpkg-query that reports one package missing; deps.sh as a non-root
    # user must print the exact apt-get line and exit 2.
    prefix, uid, gid, created = ordinary_user()
    fake = tempfile.mkdtemp(prefix='bpfuml-fakebin.')
    try:
        os.chmod(fake, 0o755)
        with open(os.path.join(fake, 'dpkg-query'), 'w') as f:
            f.write('#!/bin/sh\n'
                    'for a; do p=$a; done\n'
                    '[ "$p" = libjson-c-dev ] && exit 1\n'
                    'printf "ii "\n')
        os.chmod(os.path.join(fake, 'dpkg-query'), 0o755)
        proc = subprocess.run([*prefix, os.path.join(TOP, 'scripts', 'deps.sh')], capture_output=True,
                              text=True, timeout=60,
                              env={'PATH': fake + ':' + os.environ.get('PATH', '/usr/bin:/bin')})
        check(proc.returncode == 2, f'exit {proc.returncode}, want 2; stderr {proc.stderr!r}')
        check('root is needed only to install' in proc.stderr, f'stderr: {proc.stderr!r}')
        check('apt-get install -y --no-install-recommends libjson-c-dev' in proc.stderr,
              f'no exact apt-get line: {proc.stderr!r}')
    finally:
        shutil.rmtree(fake, ignore_errors=True)
        if created:
            subprocess.run(['userdel', TEST_USER], capture_output=True)
