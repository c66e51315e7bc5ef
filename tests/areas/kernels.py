# kernels.py — the kernel matrix's plumbing (issue 22): --kernel VERSION and
# BPFUML_KERNEL pick a kernel of kernel-patches/versions.conf.  The checks
# per version run for every kernel other than the default that is built
# here (build/kernels/VERSION); the others are named with the command that
# builds them.  No test here builds a kernel.

import os
import shutil
import subprocess

from testlib import (BPFUML, BUILD, EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_INFRA, PROGS, TOP,
                     Skip, bpfuml, bpfuml_json, check, check_no_leftovers, prog, test)

VERSIONS_CONF = os.path.join(TOP, 'kernel-patches', 'versions.conf')


def versions():
    """[(version, bpf modes)] of versions.conf, the default first."""
    rows = []
    with open(VERSIONS_CONF) as f:
        for line in f:
            fields = line.split('#')[0].split()
            if fields:
                rows.append((fields[0], fields[4].split(',')))
    return rows


def default_kernel():
    return versions()[0][0]


def built_other_kernels():
    """The kernels other than the default that are built here; prints the
    ones left out and how to add them."""
    built, left = [], []
    for version, modes in versions()[1:]:
        if os.access(os.path.join(BUILD, 'kernels', version, 'kernel', 'linux'), os.X_OK):
            built.append((version, modes))
        else:
            left.append(version)
    if left:
        print(f'    (kernels not built here, their checks left out: {" ".join(left)}; '
              f'add one with `make kernel KERNEL={left[0]}`)')
    return built


@test
def kernel_option_names_versions_of_versions_conf():
    # An unknown version is a usage error that lists the known ones; a
    # malformed one says what a version looks like; neither boots a guest.
    code, out, err = bpfuml('verify', '--kernel', '4.19', os.path.join(PROGS, 'accepted.bpf.o'))
    check(code == EXIT_USAGE and 'no kernel 4.19' in err and default_kernel() in err,
          f'--kernel 4.19: exit {code}: {err}')
    code, out, err = bpfuml('verify', '--kernel', 'latest', os.path.join(PROGS, 'accepted.bpf.o'))
    check(code == EXIT_USAGE and 'want a kernel version' in err, f'--kernel latest: exit {code}: {err}')
    env = {**os.environ, 'BPFUML_KERNEL': '4.19', 'NO_COLOR': '1'}
    proc = subprocess.run([BPFUML, 'verify', os.path.join(PROGS, 'accepted.bpf.o')], env=env,
                          capture_output=True, text=True, timeout=120)
    check(proc.returncode == EXIT_USAGE and 'no kernel 4.19' in proc.stderr,
          f'BPFUML_KERNEL=4.19: exit {proc.returncode}: {proc.stderr}')
    check_no_leftovers()


@test
def default_kernel_by_name_is_the_default():
    # --kernel with the default's version boots build/kernel: same verdicts,
    # and the guest's release is that version's.
    version = default_kernel()
    code, doc, err = bpfuml_json('verify', '--kernel', version, os.path.join(PROGS, 'rejected.bpf.o'))
    check(code == EXIT_REJECTED and doc['programs'][0]['verdict'] == 'rejected',
          f'exit {code}: {doc.get("error") or doc["programs"]}')
    check(doc.get('kernel', '').startswith(version + '.'), f'guest kernel {doc.get("kernel")}, not {version}')


@test
def interpreter_only_kernel_refuses_jit():
    # --jit on a kernel whose UML series has no JIT is refused before any
    # boot, built or not; --backend qemu would JIT (x86_64 has it).
    interp_only = [v for v, modes in versions() if 'jit' not in modes]
    if not interp_only:
        raise Skip('every kernel of versions.conf has the JIT in UML')
    version = interp_only[0]
    code, out, err = bpfuml('verify', '--jit', '--kernel', version, os.path.join(PROGS, 'accepted.bpf.o'))
    check(code == EXIT_USAGE and 'interpreter only' in err and '--backend qemu' in err,
          f'--jit --kernel {version}: exit {code}: {err}')


@test
def kernel_not_built_says_how_to_build_it():
    # A build directory whose versions.conf knows a kernel that is not built:
    # the message names it and the make command (run.sh would build it).
    fake = os.path.join(BUILD, 'tests', 'kernels-fake')
    shutil.rmtree(fake, ignore_errors=True)
    os.makedirs(os.path.join(fake, 'bin'))
    for link in ('kernel', 'include', 'bin/bpfuml-agent'):
        os.symlink(os.path.join(BUILD, link), os.path.join(fake, link))
    with open(VERSIONS_CONF) as src, open(os.path.join(fake, 'versions.conf'), 'w') as dst:
        dst.write(src.read() + '9.9  linux-source-9.9  9.9.1-1  sid  interpreter  9.9/series\n')
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake, 'NO_COLOR': '1'}
    proc = subprocess.run([BPFUML, 'verify', '--kernel', '9.9', os.path.join(PROGS, 'accepted.bpf.o')],
                          env=env, capture_output=True, text=True, timeout=120)
    shutil.rmtree(fake)
    check(proc.returncode == EXIT_INFRA and 'kernel 9.9 is not built' in proc.stderr
          and 'make kernel KERNEL=9.9' in proc.stderr, f'exit {proc.returncode}: {proc.stderr}')
    check_no_leftovers()


@test
def kselftest_runs_on_the_default_kernel_only():
    # The selftests are built against the default kernel's tree and modules.
    others = versions()[1:]
    if not others:
        raise Skip('versions.conf has one kernel')
    code, out, err = bpfuml('kselftest', '--kernel', others[0][0], '-t', 'atomics')
    check(code == EXIT_USAGE and 'default kernel only' in err, f'exit {code}: {err}')


@test
def each_built_kernel_verifies_and_runs():
    # Every other kernel built here: a verify of an accepted and a rejected
    # program gives their verdicts on that kernel (the guest's release says
    # which booted), and a run runs, in each of its BPF modes.
    kernels = built_other_kernels()
    if not kernels:
        raise Skip('no kernel other than the default is built here')
    for version, modes in kernels:
        for mode in modes:
            flag = '--jit' if mode == 'jit' else '--interpreter'
            code, doc, err = bpfuml_json('verify', '--kernel', version, flag,
                                         os.path.join(PROGS, 'accepted.bpf.o'))
            check(code == EXIT_OK and doc['programs'][0]['verdict'] == 'accepted'
                  and doc.get('kernel', '').startswith(version + '.') and doc['bpf_mode'] == mode,
                  f'{version} {mode}: exit {code}: {doc.get("error")} kernel {doc.get("kernel")}')
            code, doc, err = bpfuml_json('verify', '--kernel', version, flag,
                                         os.path.join(PROGS, 'rejected.bpf.o'))
            check(code == EXIT_REJECTED and doc['programs'][0]['verdict'] == 'rejected'
                  and doc['programs'][0].get('error'),
                  f'{version} {mode} rejected.bpf.o: exit {code}: {doc.get("error") or doc["programs"]}')
            code, doc, err = bpfuml_json('run', '--kernel', version, flag,
                                         os.path.join(PROGS, 'accepted.bpf.o'))
            check(code == EXIT_OK, f'{version} {mode} run: exit {code}: {doc.get("error")}')
    check_no_leftovers()
