# verdicts.py — "accepted" means the kernel returned a program fd (issue 21).
import os
import tempfile

from testlib import EXIT_OK, EXIT_REJECTED, PROGS, bpfuml, bpfuml_json, check, check_no_leftovers, prog, test


def check_judged_by_kernel(p):
    """An accepted program's log carries the verifier's statistics line: the
    kernel saw it (a program libbpf skipped has an empty log)."""
    check(p['verdict'] == 'accepted', f'{p["name"]}: {p["verdict"]}, want accepted')
    check(p['log_bytes'] > 0 and p['diagnostics'] and p['diagnostics']['stats'],
          f'{p["name"]} reads accepted but the verifier never ran on it (empty log)')


@test
def verify_optional_section_programs_are_loaded():
    # SEC("?...") programs have autoload off in libbpf; each must be judged.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'optional_progs.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1 (opt_rejected): {err}')
    check(prog(doc, 'opt_rejected')['verdict'] == 'rejected',
          f'opt_rejected: {prog(doc, "opt_rejected")["verdict"]}')
    check_judged_by_kernel(prog(doc, 'opt_accepted'))
    check_judged_by_kernel(prog(doc, 'plain_accepted'))


@test
def verify_optional_section_programs_loaded_together():
    # Both accepted: one load of the two, each with its fd.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'optional_progs.bpf.o'),
                                 '--prog', 'opt_accepted', '--prog', 'plain_accepted')
    check(code == EXIT_OK, f'exit {code}: {err}')
    for name in ('opt_accepted', 'plain_accepted'):
        p = prog(doc, name)
        check_judged_by_kernel(p)
        check(p['load'] == 'together', f'{name} loaded {p["load"]}, want together')


@test
def verify_long_program_names_keep_their_verdicts():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'long_names.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1: {doc.get("error")}')
    names = sorted(p['name'] for p in doc['programs'])
    check(len(names) == 2 and all(len(n) == 132 for n in names), f'names: {names}')
    verdicts = {p['name'][-2:]: p['verdict'] for p in doc['programs']}
    check(verdicts == {'_a': 'accepted', '_b': 'rejected'}, f'verdicts: {verdicts}')
    check_no_leftovers()


@test
def verify_object_that_cannot_be_reopened_is_never_accepted():
    # The object vanishes after the first pass: every later open fails, and
    # no program may read accepted.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'two_progs.bpf.o'),
                                 '--test-fault', 'object-vanishes')
    check(code == EXIT_REJECTED, f'exit {code}, want 1: {doc}')
    check(len(doc['programs']) == 2, f'programs: {doc["programs"]}')
    for p in doc['programs']:
        check(p['verdict'] == 'not_loaded' and 'could not open' in (p.get('error') or ''),
              f'{p["name"]}: {p["verdict"]} ({p.get("error")})')


@test
def run_log_buffer_grows_instead_of_rejecting():
    # A level-2 log larger than the first 16 MiB buffer: the program is
    # accepted and run, not reported rejected with ENOSPC.
    with tempfile.TemporaryDirectory() as tmp:
        packet = os.path.join(tmp, 'packet.bin')
        with open(packet, 'wb') as f:
            f.write(bytes(64))
        code, doc, err = bpfuml_json('run', os.path.join(PROGS, 'long_log.bpf.o'), '--prog', 'long_loop',
                                     '--log-level', '2', '--data-in', packet)
    check(code == EXIT_OK, f'exit {code}: {doc.get("error")} {err[-500:]}')
    p = doc['program']
    check(p['verdict'] == 'accepted' and p['log_bytes'] > (16 << 20),
          f'{p["verdict"]}, log {p["log_bytes"]} bytes in a {p["log_buffer"]} buffer')
    check('retval' in doc['run'], f'no run: {doc.get("run")}')


@test
def verify_truncated_log_is_said_not_turned_into_a_verdict():
    # With the ceiling at 16 MiB (test hook), long_loop's >16 MiB level-2
    # log cannot fit: the log is marked truncated and the verdict is still
    # the kernel's (accepted).
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'long_log.bpf.o'), '--log-level', '2',
                                 '--test-fault', 'small-log-max')
    check(code == EXIT_OK, f'exit {code}: {doc}')
    p = prog(doc, 'long_loop')
    check(p['verdict'] == 'accepted', f'verdict {p["verdict"]} ({p.get("error")})')
    check(p.get('log_truncated') is True and p['log_bytes'] > 0, f'log_truncated {p.get("log_truncated")}')
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'long_log.bpf.o'), '--log-level', '2',
                            '--test-fault', 'small-log-max')
    check(code == EXIT_OK and 'verifier log did not fit' in out, f'exit {code}:\n{out[:2000]}')


@test
def not_loaded_program_names_the_missing_extern():
    # The errno alone ("Invalid argument") does not say what to fix; libbpf's
    # line about the extern it could not find does, in every format.
    obj = os.path.join(PROGS, 'missing_kfunc.bpf.o')
    want = "extern (func ksym) 'bpfuml_no_such_kfunc': not found in kernel or module BTFs"
    code, out, err = bpfuml('verify', obj)
    check(code == EXIT_REJECTED and f'could not be loaded: {want}' in out, f'human: exit {code}\n{out}')
    code, out, err = bpfuml('verify', '--format', 'gcc', obj)
    check(code == EXIT_REJECTED and f'error: program could not be loaded: {want} [prog calls_missing_kfunc]'
          in out, f'gcc: exit {code}\n{out}')
