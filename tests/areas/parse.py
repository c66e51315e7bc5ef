# parse.py — `bpfuml parse`: a saved verifier log judged without a kernel
# (`make asan-test` runs `-k parse` under ASan/UBSan).  Hostile logs are
# diag_fuzz.py's.
import os

from testlib import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, FIXTURES, TOP, bpfuml, bpfuml_json, check, test


@test
def parse_saved_log_formats_and_exit_codes():
    log = os.path.join(FIXTURES, 'recorded-register_type_null_deref.log')
    code, doc, err = bpfuml_json('parse', log)
    check(code == EXIT_REJECTED, f'exit {code}, want 1 for a rejection log')
    check(doc['schema'] == 'bpfuml-diag/1' and doc['reports'][0]['category'] == 'Register Type Safety',
          f'json: {str(doc)[:300]}')
    code, out, err = bpfuml('parse', log, '--format=gcc', '--prog', 'null_deref',
                            '--source', os.path.join(TOP, 'progs', 'examples', 'x.bpf.c'))
    first = out.splitlines()[0]
    # The log names the source by basename; it is found beside --source.
    check(first.startswith(os.path.join(TOP, 'progs', 'examples', 'register_type_null_deref.bpf.c:')),
          f'gcc line does not point at the source beside --source: {first!r}')
    check(': error: Register Type Safety: Invalid dereference [prog null_deref]' in first, first)
    check(any(': note: ' in line for line in out.splitlines()[1:]), 'no note lines:\n' + out)
    code, doc, err = bpfuml_json('parse', os.path.join(FIXTURES, 'recorded-accepted.log'))
    check(code == EXIT_OK and not doc['has_report'] and doc['legacy_error'] is None,
          f'accepted log: exit {code} {doc}')
    code, out, err = bpfuml('parse', '/nonexistent.log')
    check(code == EXIT_USAGE and '/nonexistent.log' in err, f'missing log: exit {code} {err}')
