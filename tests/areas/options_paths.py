# options_paths.py — input that cannot hurt (issue 21): option values checked
# against their range, paths that are never read as options, shell words or
# sub-options, and room for the guest checked before it boots.
import json
import os
import shlex
import shutil
import subprocess
import tempfile

from testlib import (BPFUML, BUILD, EXIT_INFRA, EXIT_OK, EXIT_USAGE, PROGS, RUNDIR_BASE, SRC_PROGS, TOP,
                     Failure, Skip, backend_options, backend_timeout, check, check_no_leftovers,
                     fake_selftests_build_dir, prog, test)

# No guest may boot in the option tests, even when a check is missing: the
# build directory does not exist, so a value that got through ends in exit 3.
NO_BUILD = {'BPFUML_BUILD_DIR': '/nonexistent/bpfuml-build'}

BAD_OPTION_VALUES = (
    # (command line, option, value, what the message says is accepted)
    (('kselftest', '--mem', '-1'), '--mem', '-1', 'a whole number of MiB from 128 to 65536'),
    (('kselftest', '--mem', '+512'), '--mem', '+512', 'a whole number of MiB from 128 to 65536'),
    (('kselftest', '--batch', '99999999999'), '--batch', '99999999999',
     'a whole number of tests per guest from 1 to 100000'),
    (('kselftest', '-j', '0'), '-j', '0', 'a whole number of guests from 1 to 256'),
    (('kselftest', '--cpus', '65'), '--cpus', '65', 'a whole number of CPUs per guest from 1 to 64'),
    (('bench', '--samples', '5x'), '--samples', '5x', 'a whole number from 1 to 64'),
    (('bench', '--backend', 'kvm'), '--backend', 'kvm', 'uml, qemu or host'),
    (('run', 'x.bpf.o', '--prog', 'p', '--repeat', '0'), '--repeat', '0',
     'a whole number of runs from 1 to 100000000'),
    (('verify', 'x.bpf.o', '--timeout', '1e3'), '--timeout', '1e3',
     'a whole number of seconds from 1 to 86400'),
    (('verify', 'x.bpf.o', '--log-level', '3'), '--log-level', '3', 'a whole number from 1 to 2'),
    (('verify', 'x.bpf.o', '--format', 'xml'), '--format', 'xml', 'human, json, gcc, sarif or github'),
    (('probe', '--backend', 'kvm'), '--backend', 'kvm', 'uml or qemu'),
)


def run_bpfuml(args, env=None, cwd=None, timeout=120):
    proc = subprocess.run([BPFUML, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, 'NO_COLOR': '1', **(env or {})})
    return proc.returncode, proc.stdout, proc.stderr


@test
def option_values_out_of_range_are_usage_errors():
    bad = []
    for args, name, value, accepted in BAD_OPTION_VALUES:
        code, out, err = run_bpfuml(args, env=NO_BUILD)
        want = f"{name} wants {accepted}, not '{value}'"
        if code != EXIT_USAGE or want not in err:
            bad.append(f'bpfuml {shlex.join(args)}: exit {code}, want 2 with "{want}"; stderr: {err.strip()}')
    check(not bad, '\n'.join(bad))
    # In JSON mode the message is the document's error.
    code, out, err = run_bpfuml(('kselftest', '--json', '--mem', '-1'), env=NO_BUILD)
    doc = json.loads(out)
    check(code == EXIT_USAGE and doc['exit_code'] == EXIT_USAGE and
          "--mem wants a whole number of MiB from 128 to 65536, not '-1'" in doc['error']['message'],
          f'exit {code}: {doc}')


# ---- paths: never options, shell words or sub-options ----------------------

def verify_accepted_with_rundir(base_name, *extra, timeout=120):
    """verify accepted.bpf.o with BPFUML_RUNDIR set to a directory named
    BASE_NAME (under our RUNDIR_BASE); returns (code, doc, err)."""
    base = os.path.join(RUNDIR_BASE, base_name)
    os.makedirs(base, exist_ok=True)
    try:
        code, out, err = run_bpfuml(('verify', '--json', os.path.join(PROGS, 'accepted.bpf.o'), *extra),
                                    env={'BPFUML_RUNDIR': base}, timeout=timeout)
        left = os.listdir(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    check(not left, f'run directories left in {base!r}: {left}')
    try:
        return code, json.loads(out), err
    except ValueError:
        raise Failure(f'stdout is not one JSON document:\n{out[:2000]}\nstderr:\n{err[-2000:]}')


def check_verified_in(base_name, *extra, timeout=120):
    code, doc, err = verify_accepted_with_rundir(base_name, *extra, timeout=timeout)
    check(code == EXIT_OK, f'BPFUML_RUNDIR .../{base_name!r}: exit {code}; {doc.get("error")} stderr: {err[-1500:]}')
    check(prog(doc, 'pass_all')['verdict'] == 'accepted', f'{base_name!r}: verdict {prog(doc, "pass_all")}')


# UML joins its argv into the kernel's command line, which splits at blanks;
# QEMU reads -fsdev path=... as a list of sub-options split at commas.
RUN_DIR_NAMES = {'uml': ('run dir', 'run,dir', "run dir,security_model=mapped,x'y"),
                 'qemu': ('run dir', 'run,dir', 'run,readonly=on')}


@test(backends=('uml', 'qemu'))
def run_directory_with_blank_or_comma_works(backend):
    for name in RUN_DIR_NAMES[backend]:
        check_verified_in(name, *backend_options(backend), timeout=backend_timeout(backend))
    check_no_leftovers()


@test
def run_directory_with_double_quote_is_refused_plainly():
    code, doc, err = verify_accepted_with_rundir('run"dir')
    msg = (doc.get('error') or {}).get('message', '')
    check(code == EXIT_USAGE, f'exit {code}, want 2; {doc}')
    check('BPFUML_RUNDIR' in msg and "'\"'" in msg, f'message: {msg!r}')
    check_no_leftovers()


@test
def build_directory_with_blank_works():
    """init= on the guest kernel's command line is a path into the build
    directory: a checkout under "/home/a b" must boot."""
    build = os.path.join(BUILD, 'tests', 'build dir, with blanks')
    os.makedirs(os.path.join(build, 'bin'), exist_ok=True)
    for link, target in (('kernel', os.path.join(BUILD, 'kernel')),
                         ('include', os.path.join(BUILD, 'include')),
                         ('bin/bpfuml-agent', os.path.join(BUILD, 'bin', 'bpfuml-agent'))):
        path = os.path.join(build, link)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)
    code, out, err = run_bpfuml(('verify', '--json', os.path.join(PROGS, 'accepted.bpf.o')),
                                env={'BPFUML_BUILD_DIR': build})
    check(code == EXIT_OK, f'exit {code}; stdout: {out[-1500:]} stderr: {err[-1500:]}')
    check(prog(json.loads(out), 'pass_all')['verdict'] == 'accepted', out[-1500:])
    check_no_leftovers()


@test
def source_named_like_an_option_is_compiled_as_a_file():
    """A .bpf.c named -fplugin=... is clang's option unless it is kept a file
    operand; a quote in its directory is nobody's shell word."""
    with tempfile.TemporaryDirectory() as tmp:
        quoted = os.path.join(tmp, "it's a dir")
        os.makedirs(quoted)
        for name in ('-fplugin=x.bpf.c', '-o.bpf.c'):
            shutil.copy(os.path.join(SRC_PROGS, 'accepted.bpf.c'), os.path.join(tmp, name))
        shutil.copy(os.path.join(SRC_PROGS, 'accepted.bpf.c'), os.path.join(quoted, "it's.bpf.c"))
        for args in (('--', '-fplugin=x.bpf.c'), ('--', '-o.bpf.c'), (os.path.join(quoted, "it's.bpf.c"),)):
            code, out, err = run_bpfuml(('verify', '--json', *args), cwd=tmp)
            check(code == EXIT_OK, f'verify {shlex.join(args)}: exit {code}; {out[-1500:]} {err[-1500:]}')
            check(prog(json.loads(out), 'pass_all')['verdict'] == 'accepted', out[-1500:])
        left = sorted(os.listdir(tmp))
        check(left == sorted(['-fplugin=x.bpf.c', '-o.bpf.c', "it's a dir"]), f'files made in {tmp}: {left}')


@test
def bench_png_path_is_not_a_shell_command():
    with tempfile.TemporaryDirectory() as tmp:
        # In the old '%s' quoting, $(touch ran) stood outside the quotes.
        marker = os.path.join(tmp, 'ran')
        png = os.path.join(tmp, "x'$(touch ran)'y.png")
        code, out, err = run_bpfuml(('bench', '--quick', '--samples', '1', '--png', png), cwd=tmp, timeout=900)
        check(code == EXIT_OK, f'bench exit {code}; stderr: {err[-2000:]}')
        check(not os.path.exists(marker), f'--png ran a shell command; files: {os.listdir(tmp)}')
        has_matplotlib = subprocess.run(['/usr/bin/python3', '-c', 'import matplotlib; matplotlib.use("Agg"); '
                                         'import matplotlib.pyplot'], capture_output=True).returncode == 0
        if has_matplotlib:
            check(os.path.exists(png), f'no chart at {png!r}: {os.listdir(tmp)}; stderr: {err[-1000:]}')
        else:
            check('could not draw' in err and 'matplotlib' in err, f'stderr: {err[-1000:]}')
    check_no_leftovers()


# ---- room for the guest ---------------------------------------------------

def in_small_tmpfs(size_mb, args, env=None, timeout=300):
    """Run bpfuml ARGS with BPFUML_RUNDIR on a tmpfs of SIZE_MB MiB, mounted
    in a mount namespace of its own (and a user namespace when not root), so
    that it goes with the run.  Skip when this machine cannot do that."""
    mnt = tempfile.mkdtemp(prefix='small-tmpfs.', dir=RUNDIR_BASE)
    unshare = ['unshare', '--mount'] + (['--user', '--map-root-user'] if os.geteuid() else [])
    script = 'mount -t tmpfs -o "size=$1m" bpfuml-test "$2" || exit 97; shift 2; exec "$@"'
    try:
        try:
            probe = subprocess.run([*unshare, 'sh', '-c', script, 'sh', str(size_mb), mnt, 'true'],
                                   capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            raise Skip('unshare (util-linux) is not installed: no private tmpfs to fill')
        if probe.returncode:
            raise Skip(f'cannot mount a private tmpfs ({" ".join(unshare)}: {probe.stderr.strip()}); '
                       'unprivileged user namespaces are off here')
        proc = subprocess.run([*unshare, 'sh', '-c', script, 'sh', str(size_mb), mnt, BPFUML, *args],
                              capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, 'NO_COLOR': '1', 'BPFUML_RUNDIR': mnt, **(env or {})})
    finally:
        os.rmdir(mnt)
    return proc.returncode, proc.stdout, proc.stderr


@test
def no_room_for_the_guest_memory_is_said_before_booting():
    # 300 MiB free; a verify guest needs its 512 MiB memory file + 64.
    code, out, err = in_small_tmpfs(300, ('verify', os.path.join(PROGS, 'accepted.bpf.o')))
    check(code == EXIT_INFRA, f'exit {code}, want 3; stdout: {out[-800:]} stderr: {err[-1500:]}')
    for words in ('not enough free space', 'the guest needs 576 MiB', 'its 512 MiB memory file',
                  'MiB free', 'BPFUML_RUNDIR'):
        check(words in err, f'{words!r} not in: {err!r}')
    check('kernel' not in err.lower(), f'a guest booted: {err!r}')
    check_no_leftovers()


@test
def kselftest_needs_room_for_its_parallel_guests():
    # 1000 MiB: room for the listing guest (512 + 64), not for two at once.
    env = {'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    code, out, err = in_small_tmpfs(1000, ('kselftest', '-j', '2', '--mem', '512', '--json'), env=env)
    doc = json.loads(out)
    msg = (doc.get('error') or {}).get('message', '')
    check(code == EXIT_INFRA and 'results' not in doc, f'exit {code}, want 3 before any test ran: {out[-800:]}')
    for words in ('2 guests at once need 1152 MiB', 'each: its 512 MiB memory file', 'MiB free',
                  'BPFUML_RUNDIR', 'fewer -j', 'smaller --mem'):
        check(words in msg, f'{words!r} not in: {msg!r}')
    check_no_leftovers()


# ---- scripts: a cache path with blanks ---------------------------------------

@test
def kernel_artifact_pruning_with_blank_in_cache_path():
    """build-kernel.sh keeps the KEEP_ARTIFACTS most recently used artifacts
    of each kind; with the cache under "a b" it must remove only those."""
    with tempfile.TemporaryDirectory() as tmp:
        outer = os.path.join(tmp, 'home')
        cache = os.path.join(outer, 'a b', 'cache')
        keep_me = os.path.join(outer, 'a', 'keep-me')
        os.makedirs(keep_me)
        cwd = os.path.join(tmp, 'cwd')
        os.makedirs(os.path.join(cwd, 'b', 'cache', 'artifacts'))
        # The default kernel's by key, another kernel's by version and key.
        names = [f'{c * 16}' for c in 'abcd'] + [f'qemu-x86_64-{c * 16}' for c in '123'] + \
            [f'kernel-7.2-{c * 16}' for c in '567'] + [f'qemu-x86_64-7.2-{c * 16}' for c in '89']
        for i, name in enumerate(names):
            done = os.path.join(cache, 'artifacts', name, '.complete')
            os.makedirs(os.path.dirname(done))
            open(done, 'w').close()
            os.utime(done, (1_000_000 + i, 1_000_000 + i))   # later in the list: used more recently
        os.makedirs(os.path.join(cache, 'artifacts', 'e' * 16 + '.tmp'))     # a build under way
        proc = subprocess.run([os.path.join(TOP, 'scripts', 'build-kernel.sh'), 'prune'], cwd=cwd,
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, 'BPFUML_CACHE': cache, 'KEEP_ARTIFACTS': '2'})
        check(os.path.isdir(keep_me), f'{keep_me} was removed; stderr: {proc.stderr}')
        check(proc.returncode == 0, f'exit {proc.returncode}: {proc.stderr}')
        left = sorted(os.listdir(os.path.join(cache, 'artifacts')))
        want = sorted(['c' * 16, 'd' * 16, 'e' * 16 + '.tmp', 'qemu-x86_64-' + '2' * 16,
                       'qemu-x86_64-' + '3' * 16, 'kernel-7.2-' + '6' * 16, 'kernel-7.2-' + '7' * 16,
                       'qemu-x86_64-7.2-' + '8' * 16, 'qemu-x86_64-7.2-' + '9' * 16])
        check(left == want, f'artifacts left {left}, want {want}')
        check(os.path.isdir(os.path.join(cwd, 'b', 'cache', 'artifacts')), 'a relative b/cache was removed')


@test
def kernel_build_in_cache_path_with_blank_is_refused_before_fetching():
    """The kernel's own build refuses a tree under a path with a blank or a
    colon, after the 170 MB download; the build scripts must say so first,
    with exit 2 and what to set, having fetched nothing."""
    for script in ('build-kernel.sh', 'build-selftests.sh'):
        for bad in ('c a', 'c:a'):
            with tempfile.TemporaryDirectory() as tmp:
                cache = os.path.join(tmp, bad)
                proc = subprocess.run([os.path.join(TOP, 'scripts', script)], capture_output=True,
                                      text=True, timeout=120,
                                      env={**os.environ, 'BPFUML_CACHE': cache,
                                           'BUILD_DIR': os.path.join(tmp, 'build')})
                check(proc.returncode == 2 and f"the cache directory '{cache}' contains a blank or a colon"
                      in proc.stderr and 'set BPFUML_CACHE' in proc.stderr,
                      f'{script} with {cache!r}: exit {proc.returncode}\n{proc.stdout[-500:]}{proc.stderr[-500:]}')
                check(os.listdir(cache) == [], f'{script} wrote {os.listdir(cache)} into {cache!r}')


@test
def qemu_command_line_escapes_run_directory_and_quotes_paths():
    """Without booting: a stand-in for qemu-system-x86_64 (BPFUML_QEMU)
    records its argv.  A comma in the run directory must stay in -fsdev's
    path (doubled), not start a sub-option; init= and the run directory go
    quoted on the kernel's command line."""
    with tempfile.TemporaryDirectory() as tmp:
        build = os.path.join(tmp, 'build dir')
        os.makedirs(os.path.join(build, 'qemu'))
        os.makedirs(os.path.join(build, 'bin'))
        open(os.path.join(build, 'qemu', 'bzImage'), 'w').close()
        fake = os.path.join(tmp, 'fake-qemu')
        for path, text in ((fake, '#!/bin/sh\nprintf "%s\\0" "$@" >"$BPFUML_TEST_ARGV"\nexit 1\n'),
                           (os.path.join(build, 'bin', 'bpfuml-agent'), '#!/bin/sh\n')):   # never run
            with open(path, 'w') as f:
                f.write(text)
            os.chmod(path, 0o755)
        base = os.path.join(RUNDIR_BASE, 'run,readonly=on x')
        os.makedirs(base)
        argv_file = os.path.join(tmp, 'argv')
        try:
            code, out, err = run_bpfuml(('verify', '--backend', 'qemu', os.path.join(PROGS, 'accepted.bpf.o')),
                                        env={'BPFUML_BUILD_DIR': build, 'BPFUML_QEMU': fake,
                                             'BPFUML_QEMU_ACCEL': 'tcg', 'BPFUML_RUNDIR': base,
                                             'BPFUML_TEST_ARGV': argv_file,
                                             # The stand-in writes its argv outside the
                                             # run directory, which confinement forbids.
                                             'BPFUML_CONFINE': 'none'})
            left = os.listdir(base)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        check(code == EXIT_INFRA, f'exit {code}, want 3 (the stand-in answers nothing): {err[-1000:]}')
        check(not left, f'run directories left: {left}')
        with open(argv_file) as f:
            argv = f.read().split('\0')[:-1]
    append = argv[argv.index('-append') + 1]
    check(f'init="{build}/bin/bpfuml-agent"' in append, f'init= not quoted: {append!r}')
    check(' -- "' in append and append.endswith('"'), f'run directory not quoted: {append!r}')
    run_dir = append[append.index(' -- "') + 5:-1]
    check(run_dir.startswith(base + '/bpfuml.'), f'run directory {run_dir!r} not under {base!r}')
    fsdevs = [argv[i + 1] for i, a in enumerate(argv) if a == '-fsdev' and 'id=run' in argv[i + 1]]
    want = f'local,id=run,path={run_dir.replace(",", ",,")},security_model=none'
    check(fsdevs == [want], f'-fsdev {fsdevs}, want [{want!r}]')


@test
def command_help_option_prints_that_commands_help():
    # `bpfuml CMD --help` (or -h), anywhere before "--", prints CMD's help
    # and runs nothing; exec's own PROGRAM keeps its --help.
    code, want, err = run_bpfuml(['help', 'verify'])
    check(code == 0 and want.startswith('usage: bpfuml verify'), f'help verify: {code} {want[:200]!r}')
    for args in (['verify', '--help'], ['verify', 'x.bpf.o', '-h'], ['verify', '--json', '--help']):
        code, out, err = run_bpfuml(args)
        check(code == 0 and out == want, f'{args}: exit {code}, {out[:200]!r} {err[:200]!r}')
    code, out, err = run_bpfuml(['kselftest', '--help'])
    check(code == 0 and out.startswith('usage: bpfuml kselftest') and '--durations' in out, out[:300])
    code, out, err = run_bpfuml(['exec', '/bin/true', '--help'])
    check(not out.startswith('usage: bpfuml exec'), f'exec PROGRAM --help was taken: {out[:200]!r}')
