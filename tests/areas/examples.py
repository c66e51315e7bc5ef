# examples.py — progs/examples: each declares its verdict in a bpfuml-expect
# line (and, where UML still differs from x86_64, a bpfuml-uml-gap line); one
# test per example, and what only the JIT kernel (--backend qemu) reports.
import glob
import os

from testlib import (EXIT_OK, EXIT_REJECTED, TOP, Failure, Gap, bpfuml_json, check,
                     qemu_test, test)


def example_expectations():
    for path in sorted(glob.glob(os.path.join(TOP, 'progs', 'examples', '*.bpf.c'))):
        with open(path) as f:
            text = f.read()
        expect = gap = None
        for line in text.splitlines():
            if 'bpfuml-expect:' in line:
                expect = line.split('bpfuml-expect:', 1)[1].strip()
            if 'bpfuml-uml-gap:' in line:
                gap = line.split('bpfuml-uml-gap:', 1)[1].strip()
        yield path, expect, gap


def make_example_test(path, expect, gap):
    def example():
        check(expect, f'{path} has no bpfuml-expect line')
        verdict, _, category = expect.partition(' ')
        code, doc, err = bpfuml_json('verify', path, timeout=600)
        check(code in (EXIT_OK, EXIT_REJECTED), f'exit {code}: {doc.get("error")}')
        p = doc['programs'][0]
        d = p['diagnostics'] or {}
        got_category = d['reports'][0]['category'] if d.get('has_report') else 'no-report'
        ok = p['verdict'] == verdict and (verdict == 'accepted' or got_category == category)
        if gap:
            if ok:
                raise Failure(f'the UML gap is closed ({verdict} {category}): remove its '
                              f'bpfuml-uml-gap line')
            # A verdict UML gives for its own limits must say so.
            check(p.get('uml_fidelity_note'), f'UML-only verdict without a fidelity note: '
                  f'{d.get("legacy_error")!r}')
            raise Gap(f'{gap} (today: {p["verdict"]}, {got_category}, '
                      f'{d.get("legacy_error")!r})')
        check(p['verdict'] == verdict, f'verdict {p["verdict"]}, want {verdict}; '
              f'legacy: {d.get("legacy_error")!r}')
        check(verdict == 'accepted' or got_category == category,
              f'category {got_category!r}, want {category!r}')
    example.__name__ = 'example_' + os.path.basename(path)[:-len('.bpf.c')]
    return example


for _path, _expect, _gap in example_expectations():
    test(make_example_test(_path, _expect, _gap))


@qemu_test
def qemu_jit_kfunc_example_gets_its_report():
    """What the JIT changes: UML refuses every kfunc call ("JIT is required for
    calling kernel function"); x86_64 finds the leaked iterator."""
    path = os.path.join(TOP, 'progs', 'examples', 'resource_iter_not_destroyed.bpf.c')
    code, doc, err = bpfuml_json('verify', '--backend', 'qemu', path, timeout=600)
    check(code == EXIT_REJECTED, f'exit {code}, want 1; {doc.get("error")} stderr: {err}')
    p = doc['programs'][0]
    d = p['diagnostics'] or {}
    check(p['verdict'] == 'rejected', f'verdict {p["verdict"]}')
    check('JIT is required' not in (d.get('legacy_error') or ''), f'legacy: {d.get("legacy_error")!r}')
    check(d.get('has_report') and d['reports'][0]['category'] == 'Resource Lifetime Safety',
          f'category {d.get("reports")}; legacy {d.get("legacy_error")!r}')
