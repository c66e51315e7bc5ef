#!/usr/bin/env python3
"""reference_cases.py — the upstream verifier cases of shared/REFERENCE.md, in UML.

Compiles the kernel tree's own selftest programs (tools/testing/selftests/bpf/
progs) against the UML vmlinux.h, verifies each listed program alone with
bpfuml, and compares the report category with the one an x86_64 7.3 kernel
with JIT prints (measured under QEMU, listed in REFERENCE.md).

With --backend qemu, the same cases run on the x86_64 reference kernel (JIT)
under QEMU, compiled against that kernel's own vmlinux.h (build/qemu/).

With --x86-64-types, UML verifies the objects compiled against the x86_64
kernel's vmlinux.h (build/qemu/vmlinux.h), as a developer targeting x86_64
would build them; CO-RE adapts them to UML.

usage: tests/upstream/reference_cases.py [--json] [--backend uml|qemu] [--x86-64-types]
"""
import json
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(TOP, 'build')
# The flags every BPF program here is compiled with (harness/bpf_cflags.def).
sys.path.insert(0, os.path.join(TOP, 'tests'))
from harness_defs import BPF_CFLAGS  # noqa: E402

# (selftest source, program, category on x86_64 with JIT; None = no report)
CASES = [
    ('cpumask_failure.c', 'test_populate_invalid_destination', 'Call Type Safety'),
    ('cpumask_failure.c', 'test_alloc_no_release', 'Resource Lifetime Safety'),
    ('test_global_func12.c', 'global_func12', 'Register Type Safety'),
    ('verifier_helper_restricted.c', 'in_bpf_prog_type_kprobe_1', 'Policy'),
    ('dynptr_fail.c', 'dynptr_slice_var_len1', 'Call Type Safety'),
    ('task_kfunc_failure.c', 'task_kfunc_acquire_untrusted', 'Call Type Safety'),
    ('dynptr_fail.c', 'ringbuf_missing_release2', 'Resource Lifetime Safety'),
    # No report in 7.3 (verifier limits); the legacy line must match too.
    ('test_global_func1.c', 'global_func1', None, 'combined stack size of 3 calls is 544'),
    ('verifier_helper_value_access.c', 'via_variable_no_max_check_1', 'Memory Safety'),
    ('verifier_sock.c', 'invalidate_pkt_pointers_from_global_func', 'Register Type Safety'),
    ('irq.c', 'irq_restore_ooo', 'Resource Lifetime Safety'),
    ('verifier_loops1.c', 'bounded_recursion', 'Program Structure'),
]


# Exit status when the kernel source is not on this machine (a kernel
# imported from a `make dist` file has none): the cases cannot be compiled.
NO_SOURCE = 4


def source_tree():
    with open(os.path.join(BUILD, 'manifest')) as f:
        for line in f:
            if line.startswith('build-dir:'):
                tree = os.path.join(os.path.dirname(line.split(':', 1)[1].strip()), 'linux')
                if not os.path.isdir(os.path.join(tree, 'tools', 'testing', 'selftests', 'bpf', 'progs')):
                    print(f'reference_cases: the kernel source {tree} is not here (a kernel imported with '
                          'BPFUML_ARTIFACTS has none); make kernel KERNEL_REBUILD=1 fetches it', file=sys.stderr)
                    sys.exit(NO_SOURCE)
                return tree
    sys.exit('reference_cases: build/manifest names no build-dir; run make')


BACKEND = 'uml'
if '--backend' in sys.argv:
    BACKEND = sys.argv[sys.argv.index('--backend') + 1]
# The x86_64 kernel's types first when verifying on it (build/qemu/vmlinux.h).
X86_64_TYPES = BACKEND == 'qemu' or '--x86-64-types' in sys.argv
VMLINUX_DIRS = [os.path.join(BUILD, 'qemu')] if X86_64_TYPES else []


def compile_selftest(tree, source, out_dir):
    selftests = os.path.join(tree, 'tools', 'testing', 'selftests', 'bpf')
    obj = os.path.join(out_dir, source.replace('.c', '.bpf.o'))
    # Rebuilt when the types it was compiled against changed (a new kernel).
    headers = [os.path.join(d, 'vmlinux.h') for d in VMLINUX_DIRS + [os.path.join(BUILD, 'include')]]
    if os.path.exists(obj) and all(os.path.getmtime(obj) > os.path.getmtime(h)
                                   for h in headers if os.path.exists(h)):
        return obj, None
    # As the selftests' Makefile does (BPF_CFLAGS, CLANG_SYS_INCLUDES).
    proc = subprocess.run(['clang-19', *BPF_CFLAGS,
                           *sum((['-I', d] for d in VMLINUX_DIRS), []),
                           '-I', os.path.join(BUILD, 'include'), '-I', selftests,
                           '-I', os.path.join(tree, 'tools', 'include', 'uapi'),
                           '-I', os.path.join(tree, 'tools', 'include'),
                           '-I', os.path.join(selftests, 'libarena', 'include'),
                           '-idirafter', '/usr/include/x86_64-linux-gnu',
                           '-I', os.path.join(selftests, 'progs'),
                           '-c', os.path.join(selftests, 'progs', source), '-o', obj],
                          capture_output=True, text=True)
    if proc.returncode:
        first_error = next((l for l in proc.stderr.splitlines() if 'error:' in l), proc.stderr[:200])
        return None, first_error
    return obj, None


def main():
    tree = source_tree()
    out_dir = os.path.join(BUILD, 'upstream-x86_64-types' if X86_64_TYPES else 'upstream')
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for source, prog, want, *legacy in CASES:
        obj, error = compile_selftest(tree, source, out_dir)
        row = {'case': f'{source[:-2]}/{prog}', 'want': want}
        if not obj:
            row.update(outcome=f'does not compile against the {BACKEND} vmlinux.h', got=None, detail=error)
            rows.append(row)
            continue
        proc = subprocess.run([os.path.join(BUILD, 'bin', 'bpfuml'), 'verify', '--json',
                               '--backend', BACKEND, '--prog', prog, obj], capture_output=True, text=True)
        doc = json.loads(proc.stdout)
        if 'error' in doc:
            row.update(outcome='error', got=None, detail=doc['error']['message'][:200])
            rows.append(row)
            continue
        p = doc['programs'][0]
        d = p['diagnostics'] or {}
        got = d['reports'][0]['category'] if d.get('has_report') else None
        row.update(verdict=p['verdict'], got=got,
                   detail=d.get('legacy_error') or p.get('error') or '')
        same = p['verdict'] == 'rejected' and got == want
        if legacy:
            same = same and legacy[0] in (d.get('legacy_error') or '')
        row['outcome'] = 'same' if same else 'different'
        rows.append(row)
    if '--json' in sys.argv:
        print(json.dumps(rows, indent=2))
        return
    same = sum(r['outcome'] == 'same' for r in rows)
    for r in rows:
        print(f'{r["outcome"]:<9} {r["case"]:<58} want {str(r["want"]):<26} got {str(r.get("got")):<26} '
              f'{r.get("verdict", "")} {r["detail"]}')
    types = ' (objects built against the x86_64 vmlinux.h)' if X86_64_TYPES else ''
    print(f'{same} of {len(rows)} cases give the x86_64 category on {BACKEND}{types}')


if __name__ == '__main__':
    main()
