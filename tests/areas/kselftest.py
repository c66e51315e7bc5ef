# kselftest.py — the kernel's own BPF selftests in UML (bpfuml kselftest):
# the harness on tests/kselftest/fake's stand-ins (sharding, the denylist,
# retries, KTAP, a crashed test_progs, the baseline gate), then a curated subset of the real
# selftests that runs in well under 3 minutes on 2 cores (make kselftest
# runs everything).  Each asserts that its named subset has no failure and
# no error, and that nothing of it was left out silently.
import json
import os
import subprocess
import tempfile
import time

from testlib import (BPFUML, EXIT_INFRA, EXIT_OK, EXIT_REJECTED, EXIT_USAGE, TOP, bpfuml_json, check,
                     check_no_leftovers, fake_selftests_build_dir, guest_leftovers, test)


def kselftest(filter_, expect_tests=None, timeout=600):
    """Run `bpfuml kselftest -t FILTER --json`; returns the results by name."""
    code, doc, err = bpfuml_json('kselftest', '-t', filter_, timeout=timeout)
    check('results' in doc, f'no results (exit {code}): {doc.get("error")}\n{err[-2000:]}')
    results = {r['name']: r for r in doc['results']}
    bad = [f'{r["status"]} {r["name"]}: {(r.get("reason") or "").strip()[:600]}'
           for r in doc['results'] if r['status'] in ('failed', 'error')]
    check(not bad, f'{len(bad)} of -t {filter_} not passed:\n' + '\n'.join(bad))
    check(code == EXIT_OK, f'exit {code} with no failure listed; stderr:\n{err[-2000:]}')
    tests = [r for r in doc['results'] if not r['subtest']]
    check(tests, f'-t {filter_} selected no test')
    for name in expect_tests or ():
        check(name in results, f'{name} is not among the results of -t {filter_}')
    return results


@test
def kselftest_refuses_selftests_built_for_another_kernel():
    # bpf_testmod.ko loads only into the kernel it was built against: a
    # build directory whose kernel moved on since `make kselftest-build` is
    # refused before any guest boots, naming both keys and the fix.
    fake = fake_selftests_build_dir()
    manifest, key = os.path.join(fake, 'selftests', 'manifest'), os.path.join(fake, '.kernel-key')
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake}
    try:
        with open(manifest, 'w') as f:
            f.write('key: 00000000000000aa\nkernel-key: 00000000000000bb\n')
        for kernel, refused in (('00000000000000cc', True), ('00000000000000bb', False)):
            with open(key, 'w') as f:
                f.write(kernel + '\n')
            proc = subprocess.run([BPFUML, 'kselftest', '-t', 'alpha'], capture_output=True, text=True,
                                  timeout=120, env=env)
            said = 'built for kernel 00000000000000bb, the kernel is 00000000000000cc' in proc.stderr
            if refused:
                check(proc.returncode == EXIT_INFRA and said and 'make kselftest-build' in proc.stderr,
                      f'keys differ: exit {proc.returncode}: {proc.stderr[-600:]}')
            else:
                check(proc.returncode == EXIT_OK and 'built for kernel' not in proc.stderr,
                      f'keys agree: exit {proc.returncode}: {proc.stderr[-600:]}')
    finally:
        for path in (manifest, key):
            if os.path.exists(path):
                os.unlink(path)


@test
def kselftest_harness_shards_denies_retries_and_reports():
    before = guest_leftovers()[1]
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    proc = subprocess.run([BPFUML, 'kselftest', '-j', '2', '--batch', '3', '--json'],
                          capture_output=True, text=True, timeout=120, env=env)
    doc = json.loads(proc.stdout)
    got = {r['name']: r['status'] for r in doc['results']}
    want = {'alpha': 'passed', 'alpha/one': 'passed', 'alpha/two': 'denied', 'beta': 'error',
            'gamma': 'passed', 'delta': 'skipped', 'epsilon': 'failed', 'epsilon/bad': 'failed',
            'epsilon/twin': 'failed', 'kprobe_like': 'denied', 'test_verifier': 'failed', 'test_verifier/0/u some test': 'passed',
            'test_verifier/0/p some test': 'failed', 'test_verifier/1/p other': 'skipped',
            'test_verifier/2/p loaded only': 'passed',
            'test_maps': 'passed', 'zeta': 'passed', 'zeta/meant': 'passed'}
    check(got == want, f'results {got}\nwant {want}\nstderr: {proc.stderr[-1500:]}')
    reasons = {r['name']: r.get('reason', '') for r in doc['results']}
    check('exit status 139' in reasons['beta'], f'beta: {reasons["beta"]!r}')
    check('assertion failed' in reasons['epsilon/bad'], f'epsilon/bad: {reasons["epsilon/bad"]!r}')
    check(reasons['kprobe_like'].startswith('no kprobes'), f'kprobe_like: {reasons["kprobe_like"]!r}')
    check('expects this subtest to fail' in reasons['zeta/meant'], f'zeta/meant: {reasons["zeta/meant"]!r}')
    check(doc['tests'] == {'passed': 4, 'failed': 2, 'skipped': 1, 'denied': 1, 'error': 1},
          f'test counts {doc["tests"]}')
    check(proc.returncode == EXIT_INFRA, f'exit {proc.returncode}, want 3 (a guest died)')
    # One writer for every document: "/" as is, as in verify's (json-c
    # escapes it by default).
    check('\\/' not in proc.stdout, f'escaped slashes: {proc.stdout[:400]}')
    check_no_leftovers(before)


@test
def kselftest_ktap_output():
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    proc = subprocess.run([BPFUML, 'kselftest', '-t', 'alpha,delta'], capture_output=True, text=True,
                          timeout=120, env=env)
    want = ('KTAP version 1\n1..2\n'
            '    # Subtest: alpha\n    KTAP version 1\n    1..2\n'
            '    ok 1 two # SKIP denied: a denied subtest\n    ok 2 one\n'
            'ok 1 alpha\nok 2 delta # SKIP\n')
    check(proc.stdout.startswith(want), f'stdout:\n{proc.stdout}\nwant it to start with:\n{want}')
    check('# tests:    passed 1, failed 0, skipped 1, denied 0, error 0' in proc.stdout, proc.stdout)
    check('# subtests: passed 1, failed 0, skipped 0, denied 1, error 0' in proc.stdout, proc.stdout)
    check(proc.returncode == EXIT_OK, f'exit {proc.returncode}; {proc.stderr}')


@test
def kselftest_harness_kills_test_progs_that_survives_its_crash():
    """test_progs' watchdog SIGSEGV leaves a test blocked in wait(): the agent
    kills it 10 s after "Caught signal", not at --timeout, and the rest of
    the batch runs in a new guest (uprobe_multi_test on UML); the failures
    before it keep their logs."""
    before = guest_leftovers()[1]
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    start = time.monotonic()
    proc = subprocess.run([BPFUML, 'kselftest', '-t', 'stuck,gamma', '--batch', '3', '--timeout', '90',
                           '--json'], capture_output=True, text=True, timeout=200, env=env)
    wall = time.monotonic() - start
    doc = json.loads(proc.stdout)
    got = {r['name']: r['status'] for r in doc['results']}
    want = {'stuck': 'error', 'stuck/first': 'failed', 'gamma': 'passed'}
    check(got == want, f'results {got}\nwant {want}\nstderr: {proc.stderr[-1500:]}')
    reasons = {r['name']: r.get('reason', '') for r in doc['results']}
    # No summary.json from a killed test_progs: the failure's log is taken
    # from the output, the lines before its result line.
    check(reasons['stuck/first'] == 'test_first:PASS:setup 0 nsec\n'
          'test_first:FAIL:count unexpected count: actual 1 != expected 2',
          f'reason of stuck/first: {reasons["stuck/first"]!r}')
    reason = reasons['stuck']
    for words in ('caught signal 11 (SIGSEGV)', 'did not exit', 'terminating with SIGSEGV',
                  'processes left', ' sleep '):
        check(words in reason, f'{words!r} not in the reason of stuck: {reason!r}')
    check(wall < 60, f'took {wall:.0f} s: the guest waited for --timeout (90 s)')
    check(proc.returncode == EXIT_INFRA, f'exit {proc.returncode}, want 3 (a test errored)')
    check_no_leftovers(before)


# Every upstream rhash subtest, the kptr ones included, must pass, and so must
# rhash_timer (a freed element recycled with its timer armed): RHASH is one
# of the two 7.3 developments bpfuml is built around (REFERENCE.md).
# rhash_timer needs a second CPU: its kern_sync_rcu() is a membarrier that
# waits for an RCU grace period only when more than one CPU is online, and
# the recycled element comes only after one (kselftest guests have 2 CPUs).
@test
def kselftest_rhash_all_subtests_pass():
    code, doc, err = bpfuml_json('kselftest', '-t', 'rhash', timeout=600)
    check('results' in doc, f'no results (exit {code}): {doc.get("error")}\n{err[-2000:]}')
    subs = [r for r in doc['results'] if r['subtest'] and r['name'].startswith('rhash/')]
    check(len(subs) == 12, f'rhash has 12 subtests upstream, got {[r["name"] for r in subs]}')
    got = {r['name'] for r in doc['results']}
    check('rhash_timer' in got, f'rhash_timer did not run: {sorted(got)}')
    not_passed = [r for r in doc['results'] if r['status'] != 'passed' and
                  (r['name'] in ('rhash', 'rhash_timer') or r['name'].startswith('rhash/'))]
    check(not not_passed, 'not passed:\n' + '\n'.join(
        f'{r["status"]} {r["name"]}: {(r.get("reason") or "").strip()[-600:]}' for r in not_passed))


# verifier_* are the verifier's own __success/__failure cases (test_loader):
# the programs of progs/verifier_*.c loaded one by one, their verdicts and
# messages checked.  make test runs all of them (-t verifier_); which ones
# UML cannot run is DENYLIST.uml's to say, nowhere else.  verifier_unpriv's
# first subtest loads unprivileged; it needs 0027 (libbpf caches the failed
# feature probes of a first, unprivileged load for the process).
def denylisted(prefix):
    """Whole tests (no subtest) of tests/kselftest/DENYLIST.uml named PREFIX*."""
    with open(os.path.join(TOP, 'tests', 'kselftest', 'DENYLIST.uml')) as f:
        names = (line.split('#')[0].strip() for line in f)
        return sorted(n for n in names if n.startswith(prefix) and '/' not in n)


@test
def kselftest_verifier_tests_pass():
    # Every verifier_* test of test_progs: the verifier's own __success /
    # __failure cases, the closest thing to a fidelity check of the verifier.
    # What UML cannot run is in DENYLIST.uml (reported denied, with its
    # reason); everything else must pass or skip.
    results = kselftest('verifier_', timeout=900)
    tests = {n: r for n, r in results.items() if not r['subtest']}
    for name in denylisted('verifier_'):
        check(tests.get(name, {}).get('status') == 'denied', f'{name}: {tests.get(name)}, want denied')
    ran = [n for n, r in tests.items() if r['status'] == 'passed']
    check(len(ran) >= 121, f'{len(ran)} verifier tests passed, want 121 or more: {sorted(tests)}')


# Selftests that failed (or skipped) on UML for a gap of ours and pass since a
# kernel patch, config fragment or host package closed it, each asserted by name.
FORMER_UML_FAILURES = {
    'btf_sysfs': 'mmap of /sys/kernel/btf/vmlinux (kernel-patches 0023)',
    'enable_stats': 'run_time_ns of a short program (0024: sched_clock at ns resolution)',
    'iters/task_vma': 'task_vma iterator (0025: per-VMA locks)',
    'dmabuf_iter': '/dev/udmabuf (uml-config: DMA emulation)',
    'cpumask/test_and_or_xor': 'CPU 1 exists (guests with 2 CPUs)',
    'cpumask/test_intersects_subset': 'CPU 1 exists (guests with 2 CPUs)',
    'xdp_flowtable': "nft in the guest: the host's nftables (scripts/deps.sh); it skipped without",
}


@test
def kselftest_former_uml_failures_pass():
    tests = dict.fromkeys(name.split('/')[0] for name in FORMER_UML_FAILURES)
    code, doc, err = bpfuml_json('kselftest', '-t', ','.join(tests), timeout=600)
    check('results' in doc, f'no results (exit {code}): {doc.get("error")}\n{err[-2000:]}')
    got = {r['name']: r for r in doc['results']}
    bad = [f'{name} ({what}): {got[name]["status"] if name in got else "not run"} '
           f'{((got.get(name) or {}).get("reason") or "").strip()[-400:]}'
           for name, what in FORMER_UML_FAILURES.items()
           if name not in got or got[name]['status'] != 'passed']
    check(not bad, '\n'.join(bad))


# verifier_unpriv's first subtest loads, with capabilities dropped, an object
# naming the per-CPU ksym bpf_prog_active.  Without SMP, UML's BTF had no
# per-CPU variables: libbpf then probed module BTF support unprivileged, failed,
# and cached "no module BTFs" for the process, so the bpf_testmod kfuncs of
# every later test in the same test_progs were "not found in kernel or module
# BTFs" (verifier_zext, wq, wq_custom in a full run).  uml-config's SMP puts
# bpf_prog_active in vmlinux BTF, as on x86_64.  --batch 100 puts both tests
# in one guest.
TESTMOD_KFUNC_LOST = 'not found in kernel or module BTFs'


@test
def kselftest_verifier_unpriv_leaves_testmod_kfuncs_to_later_tests():
    code, doc, err = bpfuml_json('kselftest', '-t', 'verifier_unpriv,verifier_zext', '--batch', '100',
                                 timeout=600)
    check('results' in doc, f'no results (exit {code}): {doc.get("error")}\n{err[-2000:]}')
    lost = [r['name'] for r in doc['results'] if TESTMOD_KFUNC_LOST in (r.get('reason') or '')]
    check(not lost, f'{len(lost)} results lost the bpf_testmod kfuncs: {lost[:5]}')
    got = {r['name']: r['status'] for r in doc['results']}
    # calls bpf_kfunc_call_test4 of bpf_testmod
    name = 'verifier_zext/zext_lost_across_checkpoint'
    check(got.get(name) == 'passed', f'{name}: {got.get(name)}')


def fake_kselftest(*args, timeout=180):
    """bpfuml kselftest ARGS on the stand-in runners: (exit code, JSON
    document or None, stdout, stderr)."""
    env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
    proc = subprocess.run([BPFUML, 'kselftest', *args], capture_output=True, text=True, timeout=timeout, env=env)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        doc = None
    return proc.returncode, doc, proc.stdout, proc.stderr


def edited_baseline(path, out, **statuses):
    """PATH's baseline with the given tests' statuses changed (a name of
    None adds it), written to OUT."""
    with open(path) as f:
        doc = json.load(f)
    for name, status in statuses.items():
        name = name.replace('__', '/')
        hits = [r for r in doc['results'] if r['name'] == name]
        if not hits:
            doc['results'].append({'runner': 'test_progs', 'name': name, 'subtest': '/' in name, 'status': status})
        for r in hits:
            r['status'] = status
    with open(out, 'w') as f:
        json.dump(doc, f)
    return out


@test
def kselftest_baseline_gate_fails_on_a_lost_pass_only():
    # uml-veristat's per-PR gate, with a retry: only what the baseline
    # passed and this run lost fails; a test that passes alone is flaky;
    # a pass the baseline lacked is a candidate for the next baseline.
    picked = ('-t', 'alpha,gamma,epsilon,flaky', '--runners', 'test_progs', '-j', '1', '--batch', '10')
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, 'base.json')
        code, doc, out, err = fake_kselftest(*picked, '--write-baseline', base)
        check(code == EXIT_REJECTED and os.path.exists(base), f'exit {code}: {err[-600:]}')
        status = {r['name']: r['status'] for r in json.load(open(base))['results']}
        check(status['flaky'] == 'failed' and status['epsilon'] == 'failed' and status['gamma'] == 'passed',
              f'the baseline written: {status}')

        # As written: nothing lost, known failures do not fail the gate.
        code, doc, out, err = fake_kselftest(*picked, '--baseline', base, '--json')
        check(code == EXIT_OK and doc['baseline']['regressions'] == [], f'exit {code}: {doc and doc["baseline"]}')

        # A pass the baseline lacked: a candidate, exit 0.
        ratchet = edited_baseline(base, os.path.join(tmp, 'r.json'), gamma='failed')
        code, doc, out, err = fake_kselftest(*picked, '--baseline', ratchet, '--json')
        check(code == EXIT_OK and [x['name'] for x in doc['baseline']['new_passes']] == ['gamma'],
              f'exit {code}: {doc["baseline"]}')

        # Lost passes: epsilon fails alone too (a regression, exit 1); flaky
        # passes alone (flaky, not failing).
        lost = edited_baseline(base, os.path.join(tmp, 'l.json'), epsilon='passed', epsilon__bad='passed',
                               flaky='passed')
        code, doc, out, err = fake_kselftest(*picked, '--baseline', lost, '--json')
        gate = doc['baseline']
        check(code == EXIT_REJECTED, f'exit {code}, want 1: {gate}')
        check({x['name'] for x in gate['regressions']} == {'epsilon', 'epsilon/bad'} and
              [x['name'] for x in gate['flaky']] == ['flaky'], f'{gate}')
        check(gate['regressions'][0]['was'] == 'passed' and gate['regressions'][0]['now'] == 'failed', f'{gate}')
        code, doc, out, err = fake_kselftest(*picked, '--baseline', lost)
        check('REGRESSION epsilon: passed -> failed' in out and 'flaky      flaky: passed -> failed' in out,
              out[-800:])

        # A test of the baseline this run lacks counts when the run is of
        # everything, not when -t left it out.
        gone = edited_baseline(base, os.path.join(tmp, 'g.json'), omega='passed')
        code, doc, out, err = fake_kselftest(*picked, '--baseline', gone, '--json')
        check(code == EXIT_OK, f'-t run: exit {code} {doc["baseline"]}')
        code, doc, out, err = fake_kselftest('--runners', 'test_progs', '-j', '2', '--baseline', gone, '--json')
        check(code == EXIT_REJECTED and {'name': 'omega', 'was': 'passed', 'now': 'missing', 'runner': 'test_progs'}
              in doc['baseline']['regressions'], f'full run: exit {code} {doc["baseline"]}')


@test
def kselftest_baseline_that_is_not_one_is_refused():
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, 'bad.json')
        with open(bad, 'w') as f:
            json.dump({'schema': 'bpfuml-verify/1'}, f)
        for path, says in ((bad, 'not a `bpfuml kselftest --json` document'),
                           (os.path.join(tmp, 'none.json'), 'No such file')):
            code, doc, out, err = fake_kselftest('--baseline', path)
            check(code == EXIT_USAGE and path in err and says in err, f'{path}: exit {code} {err!r}')


@test
def kselftest_shards_together_run_each_test_once_and_merge_into_one_run():
    # N CI jobs with --shard I/N, joined by kselftest-merge: the same
    # per-test results as one run, no test twice, none missing.
    code, whole, out, err = fake_kselftest('-j', '2', '--json')
    check(whole, f'the whole run: exit {code} {err[-500:]}')
    with tempfile.TemporaryDirectory() as tmp:
        parts, seen = [], {}
        for i in range(1, 5):
            code, doc, out, err = fake_kselftest('-j', '2', '--json', '--shard', f'{i}/4')
            check(doc, f'part {i}: exit {code} {err[-500:]}')
            for r in doc['results']:
                key = (r['runner'], r['name'])
                check(key not in seen, f'{key} in part {seen.get(key)} and part {i}')
                seen[key] = i
            parts.append(os.path.join(tmp, f'part{i}.json'))
            with open(parts[-1], 'w') as f:
                json.dump(doc, f)
        env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
        junit = os.path.join(tmp, 'k.xml')
        proc = subprocess.run([BPFUML, 'kselftest-merge', *parts, '--json', '--junit', junit],
                              capture_output=True, text=True, timeout=60, env=env)
        merged = json.loads(proc.stdout)
        check(os.path.getsize(junit) > 0, 'no JUnit from the merge')
        again = subprocess.run([BPFUML, 'kselftest-merge', parts[0], parts[0]], capture_output=True, text=True,
                               timeout=60, env=env)
        bad_part = os.path.join(tmp, 'part9.json')
        with open(bad_part, 'w') as f:
            f.write('{"schema": "bpfuml-kselftest/1"}')
        broken = subprocess.run([BPFUML, 'kselftest-merge', parts[0], bad_part], capture_output=True, text=True,
                                timeout=60, env=env)
    status = lambda d: {(r['runner'], r['name']): r['status'] for r in d['results']}
    check(status(merged) == status(whole), f'merged {status(merged)}\nwhole  {status(whole)}')
    check(merged['tests'] == whole['tests'] and merged['subtests'] == whole['subtests'],
          f'counts: merged {merged["tests"]} whole {whole["tests"]}')
    check(proc.returncode == code_of(whole), f'merge exit {proc.returncode}, the run\'s {code_of(whole)}')
    check(again.returncode == EXIT_USAGE and 'is in an earlier part too' in again.stderr, again.stderr)
    check(broken.returncode == EXIT_USAGE and bad_part in broken.stderr, broken.stderr)
    code, doc, out, err = fake_kselftest('--shard', '5/4')
    check(code == EXIT_USAGE and '--shard' in err, f'5/4: exit {code} {err!r}')
    # A part judged against the whole run's baseline: the tests of other
    # parts are not "missing".
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, 'whole.json')
        with open(base, 'w') as f:
            json.dump(whole, f)
        code, doc, out, err = fake_kselftest('-j', '2', '--json', '--shard', '3/4', '--baseline', base)
        check(doc and doc['baseline']['regressions'] == [], f'part 3 against the whole run: exit {code} '
              f'{doc and doc["baseline"]}')


@test
def kselftest_records_test_durations_and_deals_shards_by_them():
    # Each test's time from its result line (the agent's line clock); a
    # --durations file then decides the --shard split, longest first.
    code, whole, out, err = fake_kselftest('-j', '2', '--json')
    check(whole, f'the whole run: exit {code} {err[-500:]}')
    took = {(r['runner'], r['name']): r.get('duration_s') for r in whole['results'] if not r['subtest']}
    check(took[('test_progs', 'gamma')] is not None and 0.25 <= took[('test_progs', 'gamma')] < 30,
          f'gamma sleeps 0.3 s, recorded {took[("test_progs", "gamma")]}')
    check(took[('test_progs', 'alpha')] is not None and took[('test_progs', 'alpha')] < took[('test_progs', 'gamma')],
          f'alpha {took[("test_progs", "alpha")]} vs gamma {took[("test_progs", "gamma")]}')
    for runner in ('test_verifier', 'test_maps'):
        check(took[(runner, runner)] is not None and took[(runner, runner)] > 0, f'{runner}: {took}')
    with tempfile.TemporaryDirectory() as tmp:
        # The durations a CI job would pass: delta costs most, the two
        # runners half of it each.  Longest first over 2 parts: delta to
        # part 1, both runners to part 2; without the file test_maps (~800 s
        # by default) alone fills part 1.
        times = dict(whole)
        times['results'] = [{**r, 'duration_s': {'delta': 100, 'test_maps': 50, 'test_verifier': 50}.get(r['name'], 1)}
                            for r in whole['results']]
        durations = os.path.join(tmp, 'durations.json')
        with open(durations, 'w') as f:
            json.dump(times, f)
        parts = {}
        for i in (1, 2):
            code, doc, out, err = fake_kselftest('--json', '--shard', f'{i}/2', '--durations', durations)
            check(doc, f'part {i}: exit {code} {err[-500:]}')
            parts[i] = {r['name'] for r in doc['results'] if not r['subtest'] and r['status'] != 'denied'}
        check('delta' in parts[1] and not {'test_maps', 'test_verifier'} & parts[1], f'part 1: {parts[1]}')
        check({'test_maps', 'test_verifier'} <= parts[2] and 'delta' not in parts[2], f'part 2: {parts[2]}')
        code, doc, out, err = fake_kselftest('--json', '--shard', '1/2')
        default = {r['name'] for r in doc['results'] if not r['subtest'] and r['status'] != 'denied'}
        check(default == {'test_maps'}, f'part 1 of 2 by default costs: {default}')
        # A merged run keeps the times, so the next split can use them.
        part = os.path.join(tmp, 'part.json')
        with open(part, 'w') as f:
            json.dump(whole, f)
        env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
        proc = subprocess.run([BPFUML, 'kselftest-merge', part, '--json'], capture_output=True, text=True,
                              timeout=60, env=env)
        merged = {(r['runner'], r['name']): r.get('duration_s') for r in json.loads(proc.stdout)['results']
                  if not r['subtest']}
        check(merged == took, f'merged durations {merged}\nrun\'s {took}')
        code, doc, out, err = fake_kselftest('--durations', durations)
        check(code == EXIT_USAGE and '--shard' in err, f'--durations alone: exit {code} {err!r}')
        code, doc, out, err = fake_kselftest('--shard', '1/2', '--durations', os.path.join(tmp, 'none.json'))
        check(code == EXIT_USAGE and 'none.json' in err, f'a missing file: exit {code} {err!r}')


@test
def kselftest_runs_what_did_not_pass_with_one_cpu_again_with_two():
    # By default a test runs first in a 1-CPU guest; one that skips or
    # fails there runs again with 2 CPUs, and that result counts.  --cpus N
    # runs everything once with N.
    # How the first run ended stays in the result; a guest that died then
    # is named in the summary even when the test passed with 2 CPUs.
    code, doc, out, err = fake_kselftest('-t', 'alpha,two_cpus,delta,dies_alone', '--json')
    check(doc, f'exit {code} {err[-500:]}')
    got = {r['name']: (r['status'], r.get('cpus')) for r in doc['results']}
    want = {'alpha': ('passed', 1), 'alpha/one': ('passed', 1), 'alpha/two': ('denied', None),
            'two_cpus': ('passed', 2), 'delta': ('skipped', 2), 'dies_alone': ('passed', 2)}
    check(got == want, f'results {got}\nwant {want}\nstderr: {err[-800:]}')
    first = {r['name']: r.get('first_run') for r in doc['results']}
    check(first['two_cpus'] == {'status': 'skipped', 'cpus': 1} and first['alpha'] is None and
          first['dies_alone']['status'] == 'error' and 'exit status 139' in first['dies_alone']['reason'],
          f'first runs: {first}')
    check('3 test(s) did not pass with 1 CPU: run again with 2' in err, f'stderr: {err[-800:]}')
    code, doc, out, err = fake_kselftest('-t', 'dies_alone')
    check(code == EXIT_OK and '# Its guest died with 1 CPU(s), then passed with 2: dies_alone: ' in out,
          f'summary: exit {code}\n{out[-800:]}')
    code, doc, out, err = fake_kselftest('-t', 'alpha,two_cpus', '--cpus', '1', '--json')
    got = {r['name']: (r['status'], r.get('cpus')) for r in (doc or {}).get('results', [])}
    check(got.get('two_cpus') == ('skipped', 1) and got.get('alpha') == ('passed', 1) and
          'run again' not in err, f'--cpus 1: {got} {err[-500:]}')
    # test_maps runs whole on every CPU: it starts with 2.
    code, doc, out, err = fake_kselftest('-t', 'alpha', '--runners', 'test_progs,test_maps', '--json')
    got = {r['name']: (r['status'], r.get('cpus')) for r in (doc or {}).get('results', []) if not r['subtest']}
    check(got == {'alpha': ('passed', 1), 'test_maps': ('passed', 2)} and 'run again' not in err,
          f'test_maps: {got} {err[-500:]}')
    code, doc, out, err = fake_kselftest('-t', 'two_cpus', '--cpus', '2', '--json')
    got = {r['name']: (r['status'], r.get('cpus')) for r in (doc or {}).get('results', [])}
    check(got == {'two_cpus': ('passed', 2)} and 'run again' not in err, f'--cpus 2: {got} {err[-500:]}')


def code_of(doc):
    """A kselftest run's exit code, from its counts (as `kselftest` decides)."""
    t, s = doc['tests'], doc['subtests']
    return EXIT_INFRA if t['error'] or s['error'] else EXIT_REJECTED if t['failed'] or s['failed'] else EXIT_OK
