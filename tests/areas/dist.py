# dist.py — the kernel as one file (issue 17): `make kernel-key` without the
# source, `make dist` packing the kernel (and its selftests), and
# BPFUML_ARTIFACTS importing it into a fresh checkout and cache with no
# kernel build; a dist of other inputs, or not a dist, refused plainly.
import os
import shutil
import subprocess
import tempfile

from testlib import BUILD, TOP, check, test

SCRIPT = os.path.join(TOP, 'scripts', 'kernel-dist.sh')


def copy_checkout(dest):
    """The checkout's tracked files as they are now (edits included)."""
    files = subprocess.run(['git', '-C', TOP, 'ls-files', '-z'], capture_output=True, check=True).stdout
    for rel in files.decode().split('\0'):
        if not rel or not os.path.lexists(os.path.join(TOP, rel)):
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
        shutil.copy2(os.path.join(TOP, rel), os.path.join(dest, rel), follow_symlinks=False)


def make(checkout, *targets, env, timeout=900):
    return subprocess.run(['make', '-s', '-C', checkout, '--no-print-directory', *targets],
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, **env})


def our_key():
    with open(os.path.join(BUILD, '.kernel-key')) as f:
        return f.read().strip()


@test
def kernel_key_is_known_without_the_source():
    # A CI cache is keyed before anything is fetched: the key comes from the
    # pinned package's name and version, the patches, config and toolchain.
    with tempfile.TemporaryDirectory() as cache:
        proc = make(TOP, 'kernel-key', env={'BPFUML_CACHE': cache}, timeout=60)
        check(proc.returncode == 0, f'make kernel-key: exit {proc.returncode} {proc.stderr[-500:]}')
        check(proc.stdout.strip() == our_key(), f'kernel-key {proc.stdout!r}, build/ has {our_key()}')
        left = [p for p in ('trees', 'debs', 'apt') if os.path.exists(os.path.join(cache, p))]
        check(not left, f'make kernel-key fetched or unpacked something: {left}')


@test
def dist_imports_into_a_fresh_checkout_and_cache_with_no_kernel_build():
    with tempfile.TemporaryDirectory(dir='/var/tmp') as tmp:
        dist = os.path.join(tmp, 'kernel.tar.gz')
        proc = subprocess.run([SCRIPT, 'export', dist], capture_output=True, text=True, timeout=600,
                              env={**os.environ, 'BUILD_DIR': BUILD})
        check(proc.returncode == 0, f'export: exit {proc.returncode} {proc.stderr[-800:]}')
        listing = subprocess.run(['tar', '-tzf', dist], capture_output=True, text=True, check=True).stdout.split()
        check(listing[0] == 'bpfuml-dist/', f'the manifest is not first: {listing[:3]}')
        check(f'artifacts/{our_key()}/kernel/linux' in listing, 'no kernel in the dist')
        with_selftests = os.path.isdir(os.path.join(BUILD, 'selftests', 'bpf'))
        check(not with_selftests or any(p.startswith('selftests/') for p in listing), 'selftests left out')

        checkout, cache = os.path.join(tmp, 'checkout'), os.path.join(tmp, 'cache')
        copy_checkout(checkout)
        env = {'BPFUML_CACHE': cache, 'BPFUML_ARTIFACTS': dist}
        proc = make(checkout, 'all', *(['kselftest-build'] if with_selftests else []), env=env)
        check(proc.returncode == 0, f'make all in the fresh checkout: exit {proc.returncode}\n{proc.stderr[-1500:]}')
        left = [p for p in ('trees', 'debs', 'apt') if os.path.exists(os.path.join(cache, p))]
        check(not left, f'the import fetched or built a kernel: {left} in the cache')
        with open(os.path.join(cache, 'artifacts', our_key(), 'manifest')) as f:
            check(f'imported: {dist}' in f.read(), 'the artifact does not say it was imported')
        if with_selftests:
            check(os.path.isfile(os.path.join(checkout, 'build', 'selftests', 'bpf', 'test_progs')),
                  'the selftests did not come with the dist')
        proc = subprocess.run([os.path.join(checkout, 'run.sh'), 'verify',
                               os.path.join(TOP, 'progs', 'examples', 'accepted.bpf.c')],
                              capture_output=True, text=True, timeout=300, env={**os.environ, **env})
        check(proc.returncode == 0 and 'accepted' in proc.stdout,
              f'verify in the fresh checkout: exit {proc.returncode} {proc.stdout[-500:]} {proc.stderr[-800:]}')


@test
def dist_of_other_inputs_or_not_a_dist_is_refused():
    with tempfile.TemporaryDirectory(dir='/var/tmp') as tmp:
        dist = os.path.join(tmp, 'kernel.tar.gz')
        checkout, cache = os.path.join(tmp, 'checkout'), os.path.join(tmp, 'cache')
        copy_checkout(checkout)
        # A kernel-only dist, then a checkout whose config differs from it.
        proc = subprocess.run([SCRIPT, 'export', dist], capture_output=True, text=True, timeout=600,
                              env={**os.environ, 'BUILD_DIR': BUILD})
        check(proc.returncode == 0, f'export: {proc.stderr[-500:]}')
        fragment = sorted(f for f in os.listdir(os.path.join(checkout, 'uml-config')) if f.endswith('.config'))[0]
        with open(os.path.join(checkout, 'uml-config', fragment), 'a') as f:
            f.write('# changed by tests/areas/dist.py\n')
        for artifacts, says in ((dist, f'fragment uml-config/{fragment}'),
                                (os.path.join(TOP, 'README.md'), 'is not a bpfuml kernel dist'),
                                (os.path.join(tmp, 'missing.tar.gz'), 'no such file')):
            proc = make(checkout, 'kernel', env={'BPFUML_CACHE': cache, 'BPFUML_ARTIFACTS': artifacts},
                        timeout=120)
            check(proc.returncode != 0 and says in proc.stderr and artifacts in proc.stderr,
                  f'BPFUML_ARTIFACTS={artifacts}: exit {proc.returncode}, stderr:\n{proc.stderr[-1200:]}')
            left = [p for p in ('trees', 'debs', 'apt') if os.path.exists(os.path.join(cache, p))]
            check(not left, f'{artifacts} refused, but the build went on to fetch: {left}')
            artifacts_dir = os.path.join(cache, 'artifacts')
            check(not os.path.isdir(artifacts_dir) or not os.listdir(artifacts_dir),
                  f'something was left in {artifacts_dir}')
