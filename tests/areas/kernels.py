# kernels.py — the kernel matrix's plumbing (issue 22): --kernel VERSION and
# BPFUML_KERNEL pick a kernel of kernel-patches/versions.conf.  The checks
# per version run for every kernel other than the default that is built
# here (build/kernels/VERSION); the others are named with the command that
# builds them.  No test here builds a kernel.

import json
import os
import re
import shutil
import subprocess
import tempfile

from testlib import (BPFUML, BUILD, EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_INFRA, PROGS, TOP,
                     Skip, bpfuml, bpfuml_json, check, check_no_leftovers, prog, run_globals, test)

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
    # which booted), and a run runs, in each of its BPF modes; an attach its
    # UML cannot make says why.
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
            # bpf_loop()'s callback runs (the interpreter's callbacks: 0003).
            with tempfile.NamedTemporaryFile() as packet:
                packet.write(bytes(64))
                packet.flush()
                code, doc, err = bpfuml_json('run', '--kernel', version, flag, '--prog', 'loop_helper',
                                             '--data-in', packet.name,
                                             os.path.join(PROGS, 'kernel_features.bpf.o'))
            check(code == EXIT_OK and run_globals(doc).get('loops') == 4,
                  f'{version} {mode} run: exit {code}: {doc.get("error")} {doc.get("run")}')
        if 'jit' in modes:
            continue
        # Without the JIT series: no kprobes, no trampolines, said as such.
        for obj, name, want in (('kprobe_kinds.bpf.o', 'on_nanosleep', 'has no kprobes'),
                                ('tracing_types.bpf.o', 'fentry_test1', 'has no BPF trampolines')):
            code, out, err = bpfuml('run', '--kernel', version, '--attach', '--prog', name,
                                    os.path.join(PROGS, obj))
            check(code == EXIT_REJECTED and want in out, f'{version} run --attach {name}: exit {code}: {out}{err}')
    check_no_leftovers()


@test
def verify_kernels_prints_a_matrix():
    # --kernels: one verify per kernel, combined.  With the default alone
    # (every machine has it) and with every kernel built here.
    kernels = [default_kernel()] + [v for v, _ in built_other_kernels()]
    rejected = os.path.join(PROGS, 'rejected.bpf.o')
    accepted = os.path.join(PROGS, 'accepted.bpf.o')
    code, out, err = bpfuml('verify', '--kernels', ','.join(kernels), rejected, accepted)
    check(code == EXIT_REJECTED, f'exit {code}: {out}{err}')
    lines = out.splitlines()
    header = next((l for l in lines if l.startswith(rejected)), '')
    check(header.split()[1:] == kernels, f'matrix header {header!r}, want the kernels {kernels}:\n{out}')
    row = next((l for l in lines if l.split()[:1] == ['unchecked_lookup']), '')
    check(row.split()[1:] == ['rejected'] * len(kernels), f'row {row!r}:\n{out}')
    row = next((l for l in lines if l.split()[:1] == ['pass_all']), '')
    check(row.split()[1:] == ['accepted'] * len(kernels), f'row {row!r}:\n{out}')
    for k in kernels:
        check(f"unchecked_lookup on {k}: rejected: R0 invalid mem access 'map_value_or_null'" in out,
              f'no first error for {k}:\n{out}')
    # JSON: each kernel's whole verify document.
    code, doc, err = bpfuml_json('verify', '--kernels', ','.join(kernels), rejected)
    check(code == EXIT_REJECTED and doc['schema'] == 'bpfuml-verify-matrix/1' and doc['exit_code'] == 1,
          f'exit {code}: {str(doc)[:500]}')
    check([r['kernel'] for r in doc['kernels']] == kernels, f'kernels {[r["kernel"] for r in doc["kernels"]]}')
    for r in doc['kernels']:
        check(r['exit_code'] == EXIT_REJECTED and r['result']['schema'] == 'bpfuml-verify/1'
              and r['result']['kernel'].startswith(r['kernel'] + '.')
              and r['result']['programs'][0]['verdict'] == 'rejected', f'{r["kernel"]}: {str(r)[:500]}')
    # gcc and SARIF name the kernel in each message (7.3's structured report,
    # or an older kernel's error line).
    code, out, err = bpfuml('verify', '--kernels', ','.join(kernels), '--format', 'gcc', rejected)
    for k in kernels:
        check(re.search(rf'^rejected\.bpf\.c:20(:9)?: error: \[kernel {re.escape(k)}\] ', out, re.M),
              f'gcc, {k}:\n{out}')
    code, out, err = bpfuml('verify', '--kernels', ','.join(kernels), '--format', 'sarif', rejected)
    runs = json.loads(out)['runs']
    check([r['properties']['kernel'] for r in runs] == kernels
          and all(r['results'][0]['message']['text'].startswith(f'[kernel {r["properties"]["kernel"]}] ')
                  for r in runs), f'SARIF runs: {out[:1500]}')
    check_no_leftovers()


@test
def verify_kernels_refuses_what_it_cannot_do():
    obj = os.path.join(PROGS, 'accepted.bpf.o')
    for args, want in ((['--kernels', '4.19'], 'no kernel 4.19'),
                       (['--kernels', default_kernel(), '--kernel', default_kernel()], 'give one'),
                       (['--kernels', f'{default_kernel()},{default_kernel()}'], 'twice'),
                       (['--kernels', default_kernel(), '--junit', '/dev/null'], 'not with --kernels')):
        code, out, err = bpfuml('verify', *args, obj)
        check(code == EXIT_USAGE and want in err, f'{args}: exit {code}: {out}{err}')


def btf_has_function(version, name):
    """Whether kernel VERSION's BTF has function NAME (bpftool, from the
    kernel binary itself)."""
    kernel = os.path.join(BUILD, 'kernel' if version == default_kernel() else f'kernels/{version}/kernel',
                          'linux')
    proc = subprocess.run([os.path.join(BUILD, 'bin', 'bpftool'), 'btf', 'dump', 'file', kernel],
                          capture_output=True, text=True, timeout=120)
    check(proc.returncode == 0, f'bpftool btf dump of {kernel}: {proc.stderr[-500:]}')
    return f"FUNC '{name}' " in proc.stdout


def qemu_reference(version):
    """The x86_64 reference kernel of VERSION when it is built, else None."""
    path = os.path.join(BUILD, 'qemu' if version == default_kernel() else f'kernels/{version}-qemu', 'bzImage')
    return path if os.path.exists(path) else None


@test
def kernel_features_follow_each_kernel():
    # One object, programs of different eras (tests/progs/kernel_features.bpf.c):
    # on each kernel built here, a kfunc it lacks rejects the program that
    # calls it outright and not the one that asks bpf_ksym_exists() first;
    # where that kernel's x86_64 reference is built, its verdicts are the same.
    obj = os.path.join(PROGS, 'kernel_features.bpf.o')
    kernels = [default_kernel()] + [v for v, _ in built_other_kernels()]
    code, doc, err = bpfuml_json('verify', '--kernels', ','.join(kernels), obj)
    check(code in (EXIT_OK, EXIT_REJECTED), f'exit {code}: {str(doc)[:800]}')
    for row in doc['kernels']:
        version = row['kernel']
        verdicts = {p['name']: p['verdict'] for p in row['result']['programs']}
        has_icmp_send = btf_has_function(version, 'bpf_icmp_send')
        want = {'loop_helper': 'accepted', 'icmp_send_if_present': 'accepted',
                'icmp_send_kfunc': 'accepted' if has_icmp_send else 'rejected'}
        check(verdicts == want, f'kernel {version} (bpf_icmp_send: {has_icmp_send}): {verdicts}, want {want}')
        if not has_icmp_send:
            error = prog(row['result'], 'icmp_send_kfunc')['diagnostics']['legacy_error']
            check("kfunc 'bpf_icmp_send' is referenced but wasn't resolved" in error, f'{version}: {error}')
        if qemu_reference(version):
            code, ref, err = bpfuml_json('verify', '--backend', 'qemu', '--kernel', version, obj, timeout=900)
            ref_verdicts = {p['name']: p['verdict'] for p in ref.get('programs', [])}
            check(ref_verdicts == verdicts, f'kernel {version}: UML {verdicts}, x86_64 {ref_verdicts}')
        else:
            print(f'    (kernel {version}: its x86_64 reference is not built; '
                  f'`make qemu-kernel KERNEL={version}` adds the comparison)')
