"""testlib.py — what bpfuml's tests share: paths, exit codes, the test
registry, and the helpers that run build/bin/bpfuml and judge what it did.

tests/run_tests.py calls setup(BUILD_DIR) first, then imports each
tests/areas/*.py, whose `@test` functions register themselves here.  The
names that depend on the build directory (BUILD, BPFUML, PROGS, RUNDIR_BASE,
...) are None until setup() has run, so an area module imports them
(`from testlib import BUILD, ...`) only after it: run_tests.py does.
"""
import atexit
import functools
import glob
import json
import os
import subprocess
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC_PROGS = os.path.join(TOP, 'tests', 'progs')
FIXTURES = os.path.join(TOP, 'tests', 'unit', 'fixtures')

# Set by setup().
BUILD = None          # the build directory (run_tests.py's first argument; build/)
BPFUML = None         # build/bin/bpfuml, or BPFUML_BIN: another build of it against
                      # the same BUILD (make asan-test)
PROGS = None          # BUILD/tests/progs: tests/progs compiled
X86_VMLINUX_DIR = None   # BUILD/qemu: the x86_64 kernel's vmlinux.h
QEMU_KERNEL = None    # BUILD/qemu/bzImage: the --backend qemu kernel
RUNDIR_BASE = None    # our runs' run directories (BPFUML_RUNDIR), removed at exit

EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_INFRA, EXIT_COMPILE, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130

# The clang flags of every BPF program here, and what the console scan counts
# as the kernel complaining: the harness's own lists, so that tests and
# harness agree.
from harness_defs import BPF_CFLAGS, KERNEL_COMPLAINTS  # noqa: E402,F401


def setup(build_dir):
    """Points the tests at BUILD_DIR, and gives our runs a run-directory base
    of their own (BPFUML_RUNDIR), so that leftovers are ours alone even when
    other bpfuml runs share the machine; it is removed at exit."""
    global BUILD, BPFUML, PROGS, X86_VMLINUX_DIR, QEMU_KERNEL, RUNDIR_BASE
    if RUNDIR_BASE:
        return
    BUILD = os.path.abspath(build_dir)
    BPFUML = os.environ.get('BPFUML_BIN') or os.path.join(BUILD, 'bin', 'bpfuml')
    PROGS = os.path.join(BUILD, 'tests', 'progs')
    X86_VMLINUX_DIR = os.path.join(BUILD, 'qemu')
    QEMU_KERNEL = os.path.join(BUILD, 'qemu', 'bzImage')
    RUNDIR_BASE = tempfile.mkdtemp(prefix='bpfuml-tests.',
                                   dir='/dev/shm' if os.path.isdir('/dev/shm') else None)
    os.environ['BPFUML_RUNDIR'] = RUNDIR_BASE
    atexit.register(_remove_rundir_base)


def _remove_rundir_base():
    # Also after an interrupted run; a directory a guest left is kept for
    # guest_leftovers() to have reported.
    try:
        os.rmdir(RUNDIR_BASE)
    except OSError:
        pass


# ---- the registry ----------------------------------------------------------

class Test:
    """One registered test: NAME as reported, RUN called with no argument,
    QEMU when it needs the --backend qemu kernel (qemu_tests_wanted())."""

    def __init__(self, name, run, qemu=False):
        self.name, self.run, self.qemu = name, run, qemu


TESTS = []      # in registration order: tests/areas/*.py in name order, each top down


def register(name, run, qemu=False):
    if any(t.name == name for t in TESTS):
        raise ValueError(f'two tests named {name}')
    TESTS.append(Test(name, run, qemu))


def test(func=None, *, backends=None):
    """`@test`: FUNC is a test, reported under its own name.

    `@test(backends=('uml', 'qemu'))`: FUNC(backend) is one test per backend,
    reported as NAME for uml and qemu_NAME for qemu; BACKENDS may instead map
    each backend to the name it is reported under.  The qemu one runs only
    when qemu_tests_wanted()."""
    if func is None:
        return functools.partial(test, backends=backends)
    if backends is None:
        register(func.__name__, func)
        return func
    if not isinstance(backends, dict):
        backends = {b: func.__name__ if b == 'uml' else f'{b}_{func.__name__}' for b in backends}
    for backend, name in backends.items():
        register(name, functools.partial(func, backend), qemu=backend == 'qemu')
    return func


def qemu_test(func):
    """A test of the --backend qemu kernel alone (it has no UML twin)."""
    register(func.__name__, func, qemu=True)
    return func


def qemu_tests_wanted():
    """Only when its kernel is built (make qemu-kernel) or BPFUML_QEMU_TESTS=1
    asks for it (tests/run.sh then builds it); BPFUML_QEMU_TESTS=0 leaves the
    --backend qemu tests out."""
    env = os.environ.get('BPFUML_QEMU_TESTS')
    if env is not None and env != '':
        return env != '0'
    return os.path.exists(QEMU_KERNEL)


def backend_options(backend):
    """BACKEND on bpfuml's command line: nothing for uml, the default."""
    return () if backend == 'uml' else ('--backend', backend)


def backend_timeout(backend, uml=120):
    """How long a bpfuml command may take on BACKEND: UML seconds on UML
    (bpfuml()'s own 120 unless said), at least 600 on QEMU (TCG where there
    is no KVM)."""
    return uml if backend == 'uml' else max(uml, 600)


# ---- outcomes --------------------------------------------------------------

class Failure(Exception):
    pass


class Gap(Exception):
    """A known difference from x86_64 that kernel-patches have yet to close."""


class Skip(Exception):
    """This machine cannot run the test (the reason says why)."""


def check(condition, message):
    if not condition:
        raise Failure(message)


# ---- running bpfuml --------------------------------------------------------

def bpfuml(*args, timeout=120):
    """Run bpfuml; returns (exit code, stdout, stderr)."""
    proc = subprocess.run([BPFUML, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, 'NO_COLOR': '1'})
    return proc.returncode, proc.stdout, proc.stderr


def bpfuml_json(*args, **kw):
    code, out, err = bpfuml(*args, '--json', **kw)
    try:
        doc = json.loads(out)
    except ValueError as e:
        raise Failure(f'stdout is not one JSON document ({e}):\n{out[:2000]}\nstderr:\n{err[:2000]}')
    return code, doc, err


def bpfuml_bytes(*args, binary=None):
    """Run bpfuml; (exit code, stdout bytes, stderr text)."""
    proc = subprocess.run([binary or BPFUML, *args], capture_output=True, timeout=120,
                          env={**os.environ, 'NO_COLOR': '1', 'BPFUML_BUILD_DIR': BUILD})
    return proc.returncode, proc.stdout, proc.stderr.decode(errors='replace')


def prog(doc, name):
    for p in doc['programs']:
        if p['name'] == name:
            return p
    raise Failure(f'no program {name} in {[p["name"] for p in doc["programs"]]}')


def verify_all_accepted(path, count):
    """`verify` of the object at PATH: exit 0 and each of its COUNT programs
    accepted.  Returns the JSON document."""
    code, doc, err = bpfuml_json('verify', path)
    bad = [(p['name'], p['verdict'], p.get('error'), (p.get('libbpf_messages') or '')[-300:])
           for p in doc.get('programs', []) if p['verdict'] != 'accepted']
    check(code == EXIT_OK and len(doc.get('programs', [])) == count and not bad,
          f'{os.path.basename(path)}: exit {code}: {bad or doc.get("error")}')
    return doc


def run_globals(doc):
    """The object's variables after a `run --json`: {name: value}."""
    return {g['name']: g.get('value') for g in doc['run']['globals']}


# ---- leftovers -------------------------------------------------------------

def guest_leftovers():
    """UML or QEMU guests and run directories that outlived their bpfuml."""
    procs = []
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmdline = f.read().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
            continue
        if ('umid=bpfuml-' in cmdline or 'mount_tag=bpfuml_run' in cmdline) and RUNDIR_BASE in cmdline:
            procs.append(f'{pid}: {cmdline[:120]}')
    dirs = glob.glob(os.path.join(RUNDIR_BASE, 'bpfuml.*'))
    return procs, dirs


BASELINE_DIRS = set()   # run dirs kept (--keep) before a test started


def check_no_leftovers(before_dirs=()):
    procs, dirs = guest_leftovers()
    dirs = [d for d in dirs if d not in before_dirs and d not in BASELINE_DIRS]
    check(not procs, 'guest processes left behind:\n' + '\n'.join(procs))
    check(not dirs, 'run directories left behind: ' + ' '.join(dirs))


# ---- host programs in a guest (bpfuml exec) ---------------------------------

def guest_program(name, obj, *args, timeout=60):
    """Runs BUILD/tests/NAME in a guest with `bpfuml exec`, with OBJ
    (relative to BUILD/tests) copied into its run directory and named first
    on its command line.  Returns (exit code, the bpfuml-exec/1 document,
    stderr)."""
    obj_path = os.path.join(BUILD, 'tests', obj)
    proc = subprocess.run([BPFUML, 'exec', '--json', '--timeout', str(timeout), '--file', obj_path,
                           '--', os.path.join(BUILD, 'tests', name), os.path.basename(obj_path), *args],
                          capture_output=True, text=True, timeout=timeout + 300)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise Failure(f'bpfuml exec {name}: exit {proc.returncode}, no JSON document:\n'
                      f'{proc.stdout[-800:]}\n{proc.stderr[-800:]}')
    return proc.returncode, doc, proc.stderr


def guest_program_passed(name, obj, *args, timeout=60):
    code, doc, err = guest_program(name, obj, *args, timeout=timeout)
    out = doc.get('output', '')
    check(code == EXIT_OK and 'PASS' in out and '\nFAIL' not in '\n' + out,
          f'exit {code}: {doc.get("error") or doc.get("how")}\n{out[-2000:]}\n{err[-800:]}')
    return out


# ---- objects built for the x86_64 kernel ------------------------------------

def compile_for_x86_64(source, out_dir):
    """SOURCE (tests/progs) compiled against the x86_64 kernel's vmlinux.h;
    raises Gap when that kernel's artifacts are not there."""
    if not os.path.exists(os.path.join(X86_VMLINUX_DIR, 'vmlinux.h')):
        raise Gap(f'no x86_64 vmlinux.h in {X86_VMLINUX_DIR} (make qemu-kernel)')
    obj = os.path.join(out_dir, os.path.basename(source).replace('.bpf.c', '.x86_64.bpf.o'))
    proc = subprocess.run(['clang-19', *BPF_CFLAGS, '-I', X86_VMLINUX_DIR,
                           '-I', os.path.join(BUILD, 'include'), '-c', source, '-o', obj],
                          capture_output=True, text=True)
    check(proc.returncode == 0, f'{source} does not compile against the x86_64 vmlinux.h:\n{proc.stderr[-2000:]}')
    return obj


# ---- the selftests' stand-ins (tests/kselftest/fake) -------------------------

def fake_selftests_build_dir():
    """A build directory whose selftests are tests/kselftest/fake's stand-ins
    and whose kernel and agent are the real ones (the guest must see it, so
    it lives under build/, not /tmp)."""
    fake = os.path.join(BUILD, 'tests', 'kselftest-fake')
    os.makedirs(os.path.join(fake, 'bin'), exist_ok=True)
    os.makedirs(os.path.join(fake, 'selftests'), exist_ok=True)
    os.makedirs(os.path.join(fake, 'kselftest'), exist_ok=True)
    for link, target in (('kernel', os.path.join(BUILD, 'kernel')),
                         ('bin/bpfuml-agent', os.path.join(BUILD, 'bin', 'bpfuml-agent')),
                         ('selftests/bpf', os.path.join(TOP, 'tests', 'kselftest', 'fake')),
                         ('kselftest/DENYLIST.uml',
                          os.path.join(TOP, 'tests', 'kselftest', 'fake', 'DENYLIST.uml'))):
        path = os.path.join(fake, link)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)
    return fake


# ---- hostile text (tests/areas/diag_fuzz.py, ci_outputs.py) -------------------

def escaped_log():
    """A real report with terminal escapes where an object puts its text."""
    with open(os.path.join(FIXTURES, 'synthetic-resource-lock.log'), 'rb') as f:
        text = f.read()
    for old, new in ((b'double_lock @', b'double\x1b[8m_lock @'),
                     (b'Nested spin lock', b'Nested \x1b]52;c;ZXZpbA==\x07 spin lock'),
                     (b'>>> 53 |         bpf_spin_lock(&e->lock);',
                      b'>>> 53 |         bpf_spin_lock(&e->lock); // \xc2\x9b2J'),
                     (b'error: nested spin lock', b'error: nested \x1b]0;t\x07 lock'),
                     (b'Locking two', b'Locking \x1b[1A two')):
        check(old in text, f'fixture changed: {old!r} not in it')
        text = text.replace(old, new, 1)
    return text


def check_terminal_safe(what, out, shown=(b'\\x1b',)):
    """No ESC, BEL, CSI (raw or as U+009B) in @out; the escapes shown as \\xNN."""
    for bad in (b'\x1b', b'\x07', b'\x9b'):
        check(bad not in out, f'{what}: raw {bad!r} reaches the terminal: '
                              f'{out[max(out.find(bad) - 40, 0):out.find(bad) + 40]!r}')
    check(all(s in out for s in shown), f'{what}: the escapes are not shown:\n{out[:800]!r}')
