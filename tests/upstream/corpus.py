#!/usr/bin/env python3
"""corpus.py — fidelity of UML against the x86_64 reference on a real corpus.

Every program of every BPF object in a directory (by default the 7.3
selftests' objects, built by `make corpus`) is verified with
`bpfuml verify --json` on UML and on the x86_64 reference (--backend qemu),
in chunks of objects per boot.  Per program it compares the verdict, the
verifier's legacy error line and the structured report's category, and
prints counts of identical / different programs and every difference with
its cause (the UML fidelity note bpfuml gives, else the UML error line).
A program that UML's verifier accepts as x86_64's does, but that UML then
refuses to load because only a JIT runs it (arena, bpf_throw, tail calls
from subprograms), counts as identical, and is counted apart as well.

usage: tests/upstream/corpus.py [--objects DIR] [--sample N | --shard I/N]
                                [--uml-build DIR] [--json FILE] [--chunk N]
  --sample N      every k-th object so that about N are taken (sorted by
                  name: the same sample on every run)
  --shard I/N     objects I, I+N, I+2N, ... (0-based), to split a full run
  --uml-build DIR the build directory whose UML kernel is compared (e.g. one
                  holding an unpatched kernel, for a before/after figure)
  --uml-json FILE  reuse the UML side of an earlier --json output
  --reference-json FILE  reuse the x86_64 side of an earlier --json output
                  (the reference does not change with kernel-patches that
                  touch only UML; it takes minutes under TCG)
  --uml-only      verify on UML only and write that side to --json, for a
                  later --uml-json (e.g. while the reference kernel builds)
  --jit           UML runs BPF with x86_64's JIT (`verify --jit`), as the
                  reference does; by default UML interprets
  --kernel V      compare kernel V of kernel-patches/versions.conf on both
                  sides (UML `--kernel V` against `--backend qemu --kernel
                  V`); the objects stay the same, as a user's would
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(TOP, 'build')
DEFAULT_OBJECTS = os.path.join(BUILD, 'corpus')
# Objects are named by their path below --objects: a corpus of several
# projects has the same file name in more than one (biolatency.bpf.o).
OBJECTS_ROOT = DEFAULT_OBJECTS


def object_name(path):
    return os.path.relpath(os.path.abspath(path), OBJECTS_ROOT)


def pick(objects, sample, shard):
    objects = sorted(objects)
    if shard:
        i, n = (int(x) for x in shard.split('/'))
        return objects[i::n]
    if sample and sample < len(objects):
        step = len(objects) / sample
        return [objects[int(k * step)] for k in range(sample)]
    return objects


def category(prog):
    diag = prog.get('diagnostics') or {}
    reports = diag.get('reports') or []
    return reports[0].get('category') if reports else None


def legacy(prog):
    diag = prog.get('diagnostics') or {}
    return diag.get('legacy_error') or (prog.get('error') if prog['verdict'] == 'not_loaded' else None)


def verify_chunk(build_dir, backend, chunk, timeout, mode=()):
    """{(object, program): outcome} for one boot over CHUNK; MODE: bpfuml's
    --jit / --interpreter option, or nothing for the backend's default."""
    env = {**os.environ, 'BPFUML_BUILD_DIR': build_dir, 'NO_COLOR': '1'}
    cmd = [os.path.join(build_dir, 'bin', 'bpfuml'), 'verify', '--json', '--backend', backend, *mode,
           '--timeout', str(timeout), *chunk]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        doc = {}
    files = doc.get('files') or ([doc] if 'programs' in doc else None)
    if proc.returncode not in (0, 1, 2) or files is None:
        # A chunk that broke the guest (panic, time-out) is retried one
        # object at a time, so that one bad object costs only itself.
        if len(chunk) > 1:
            out = {}
            for obj in chunk:
                out.update(verify_chunk(build_dir, backend, [obj], timeout, mode))
            return out
        error = (doc.get('error') or {}).get('message') or proc.stderr.strip()[-300:]
        return {(object_name(chunk[0]), '*'): {'verdict': 'infrastructure', 'legacy': error,
                                                    'category': None}}
    out = {}
    for f in files:
        name = object_name(f['file'])
        if f.get('error'):
            out[(name, '*')] = {'verdict': 'not_opened', 'legacy': f['error'], 'category': None}
        for p in f['programs']:
            out[(name, p['name'])] = {'verdict': p['verdict'], 'legacy': legacy(p),
                                      'category': category(p), 'note': p.get('uml_fidelity_note'),
                                      'verified': p.get('verified')}
    return out


def verify_all(build_dir, backend, objects, chunk_size, timeout, label, mode=()):
    results = {}
    start = time.monotonic()
    for i in range(0, len(objects), chunk_size):
        chunk = objects[i:i + chunk_size]
        results.update(verify_chunk(build_dir, backend, chunk, timeout, mode))
        print(f'  {label}: {min(i + chunk_size, len(objects))}/{len(objects)} objects, '
              f'{time.monotonic() - start:.0f} s', file=sys.stderr, flush=True)
    return results, time.monotonic() - start


def load_side(path, side):
    """One side (uml or reference) of an earlier --json output."""
    with open(path) as f:
        saved = json.load(f)
    outcomes = {}
    for k, v in saved[side].items():
        obj, prog = k.split('::', 1)
        outcomes[(obj, prog)] = v
    return outcomes, saved.get(f'{side}_seconds')


def keyed(outcomes):
    """One side's outcomes as saved in --json: load_side() reads them back."""
    return {'::'.join(k): v for k, v in outcomes.items()}


def comparable(legacy):
    """An error line without what no two kernels share: BTF type ids."""
    return re.sub(r'\b(attach_btf_id|btf_id) [1-9][0-9]*', r'\1 N', legacy) if legacy else legacy


def difference(uml, ref):
    """None when identical, else (kind, cause)."""
    if uml['verdict'] == ref['verdict'] and comparable(uml['legacy']) == comparable(ref['legacy']) and \
       uml['category'] == ref['category']:
        return None
    if uml['verdict'] != ref['verdict']:
        kind = f'{uml["verdict"]} on UML, {ref["verdict"]} on x86_64'
    elif uml['category'] != ref['category']:
        kind = 'same verdict, different report category'
    else:
        kind = 'same verdict, different error line'
    cause = uml.get('note') or uml['legacy'] or ref['legacy'] or '?'
    return kind, cause


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--objects', default=DEFAULT_OBJECTS)
    ap.add_argument('--sample', type=int)
    ap.add_argument('--shard')
    ap.add_argument('--uml-build', default=BUILD)
    ap.add_argument('--reference-json')
    ap.add_argument('--uml-json')
    ap.add_argument('--uml-only', action='store_true')
    ap.add_argument('--jit', action='store_true')
    ap.add_argument('--kernel')
    ap.add_argument('--chunk', type=int, default=40)
    ap.add_argument('--timeout', type=int, default=900)
    ap.add_argument('--json', help='write every outcome and difference to this file')
    ap.add_argument('--list', type=int, default=40, help='differences to print per cause (0: all)')
    args = ap.parse_args()
    if args.uml_only and not args.json:
        sys.exit('corpus: --uml-only needs --json FILE to keep the UML side in')

    global OBJECTS_ROOT
    OBJECTS_ROOT = os.path.abspath(args.objects)
    objects = glob.glob(os.path.join(args.objects, '**', '*.bpf.o'), recursive=True)
    if not objects:
        sys.exit(f'corpus: no .bpf.o under {args.objects}; run `make corpus` or give --objects')
    objects = pick(objects, args.sample, args.shard)
    kernel = ('--kernel', args.kernel) if args.kernel else ()
    print(f'corpus: {len(objects)} objects from {args.objects}', file=sys.stderr)

    if args.uml_json:
        uml, uml_s = load_side(args.uml_json, 'uml')
    else:
        uml, uml_s = verify_all(os.path.abspath(args.uml_build), 'uml', objects, args.chunk,
                                args.timeout, 'uml', (('--jit',) if args.jit else ()) + kernel)
    if args.uml_only:
        with open(args.json, 'w') as f:
            json.dump({'objects': len(objects), 'uml_seconds': uml_s, 'uml': keyed(uml)}, f, indent=1)
        print(f'corpus: UML side of {len(objects)} objects ({len(uml)} programs) in {args.json}')
        return
    if args.reference_json:
        ref, ref_s = load_side(args.reference_json, 'reference')
    else:
        ref, ref_s = verify_all(BUILD, 'qemu', objects, args.chunk, args.timeout, 'x86_64', kernel)

    names = {object_name(o) for o in objects}
    keys = sorted(k for k in set(uml) | set(ref) if k[0] in names)
    missing = {'verdict': 'absent', 'legacy': None, 'category': None}
    counts = collections.Counter()
    causes = collections.defaultdict(list)
    needs_jit = []
    for key in keys:
        u, r = uml.get(key, missing), ref.get(key, missing)
        d = difference(u, r)
        if d is None:
            counts['identical'] += 1
        elif u.get('verified') and r['verdict'] == 'accepted':
            # The verifier said what x86_64's says; then UML refused to load
            # the program, which only a JIT runs.
            counts['identical'] += 1
            needs_jit.append(key)
        else:
            counts['different'] += 1
            counts[d[0]] += 1
            causes[d[1]].append((key, d[0]))

    total = counts['identical'] + counts['different']
    print(f'\ncorpus: {len(objects)} objects, {total} programs; UML ({"--jit" if args.jit else "interpreter"}) '
          f'{uml_s:.0f} s, '
          f'x86_64 {ref_s or 0:.0f} s')
    print(f'  identical (verdict, error line, category): {counts["identical"]}')
    print(f'    of which verified as on x86_64 but not runnable on UML (needs a JIT): {len(needs_jit)}')
    print(f'  different: {counts["different"]}')
    for kind, n in counts.most_common():
        if kind not in ('identical', 'different'):
            print(f'    {n:5d}  {kind}')
    print('\nDifferences by cause (most frequent first):')
    for cause, items in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        print(f'  {len(items):5d}  {cause}')
        for (obj, prog), kind in items[:args.list or None]:
            print(f'           {obj} {prog}: {kind}')
        if args.list and len(items) > args.list:
            print(f'           ... {len(items) - args.list} more')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'objects': len(objects), 'programs': total, 'counts': dict(counts),
                       'uml_bpf_mode': 'jit' if args.jit else 'interpreter',
                       'uml_seconds': uml_s, 'reference_seconds': ref_s,
                       'verified_needs_jit': ['::'.join(k) for k in needs_jit],
                       'uml': keyed(uml), 'reference': keyed(ref),
                       'differences': {c: [['::'.join(k), kind] for k, kind in items]
                                       for c, items in causes.items()}}, f, indent=1)


if __name__ == '__main__':
    main()
