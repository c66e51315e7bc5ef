# verify.py — `bpfuml verify`: verdicts, the verifier's log and report,
# several programs and files, and what is not a BPF object.
# verify_accepted_program and the rejected program run on both backends.
import json
import os

from testlib import (BPFUML, EXIT_COMPILE, EXIT_OK, EXIT_REJECTED, EXIT_USAGE, PROGS, SRC_PROGS, TOP,
                     backend_options, backend_timeout, bpfuml, bpfuml_json, check, check_no_leftovers,
                     guest_leftovers, prog, test)


@test(backends=('uml', 'qemu'))
def verify_accepted_program(backend):
    code, doc, err = bpfuml_json('verify', *backend_options(backend), os.path.join(PROGS, 'accepted.bpf.o'),
                                 timeout=backend_timeout(backend))
    check(code == EXIT_OK, f'exit {code}, want 0; {doc.get("error")} stderr: {err}')
    if backend == 'qemu':
        check(doc['backend'] == 'qemu', f'backend {doc["backend"]!r}')
        check(doc['accel'] in ('kvm', 'tcg'), f'accel {doc["accel"]!r}')
    p = prog(doc, 'pass_all')
    check(p['verdict'] == 'accepted', f'verdict {p["verdict"]}')
    check(p['type'] == 'xdp', f'type {p["type"]}')
    stats = p['diagnostics']['stats']
    check(stats and stats['insns_processed'] > 0, f'no statistics line: {p["diagnostics"]}')
    if backend == 'qemu':
        check(doc['timing']['boot_ms'] > 0, f'timing: {doc["timing"]}')
    check_no_leftovers()


@test(backends={'uml': 'verify_rejected_program_has_legacy_line_and_report',
                'qemu': 'qemu_verify_rejected_program'})
def verify_rejected_program(backend):
    code, doc, err = bpfuml_json('verify', *backend_options(backend), os.path.join(PROGS, 'rejected.bpf.o'),
                                 timeout=backend_timeout(backend))
    check(code == EXIT_REJECTED, f'exit {code}, want 1; {doc.get("error")} stderr: {err}')
    if backend == 'qemu':
        check(doc['backend'] == 'qemu', f'backend {doc["backend"]!r}')
    p = prog(doc, 'unchecked_lookup')
    check(p['verdict'] == 'rejected', f'verdict {p["verdict"]}')
    d = p['diagnostics']
    check(d['legacy_error'] and 'map_value_or_null' in d['legacy_error'],
          f'legacy line: {d["legacy_error"]!r}')
    check(d['has_report'], 'no structured report parsed; log tail:\n' + p['log'][-1500:])
    check(d['reports'][0]['category'] == 'Register Type Safety', f'category: {d["reports"][0]["category"]}')
    check_no_leftovers()


@test
def verify_rejected_program_human_output():
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'rejected.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}')
    check('unchecked_lookup' in out and 'rejected' in out, out)
    check('Verification failed:' in out, 'the report is not shown:\n' + out)
    check("error: R0 invalid mem access 'map_value_or_null'" in out or
          "invalid mem access 'map_value_or_null'" in out, 'legacy line missing:\n' + out)


@test
def verify_two_programs_judged_independently():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'two_progs.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1')
    check(prog(doc, 'good_prog')['verdict'] == 'accepted', 'good_prog not accepted')
    check(prog(doc, 'bad_prog')['verdict'] == 'rejected', 'bad_prog not rejected')
    # --prog selects one: the good one alone passes.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'two_progs.bpf.o'), '--prog', 'good_prog')
    check(code == EXIT_OK and [p['name'] for p in doc['programs']] == ['good_prog'],
          f'--prog good_prog: exit {code}, programs {[p["name"] for p in doc["programs"]]}')


@test
def verify_several_files_in_one_boot():
    files = [os.path.join(PROGS, n) for n in ('accepted.bpf.o', 'rejected.bpf.o', 'two_progs.bpf.o')]
    code, doc, err = bpfuml_json('verify', *files)
    check(code == EXIT_REJECTED, f'exit {code}, want 1: {doc.get("error")}')
    check([f['file'] for f in doc['files']] == files, [f['file'] for f in doc['files']])
    check([f['exit_code'] for f in doc['files']] == [0, 1, 1], [f['exit_code'] for f in doc['files']])
    # Each object judged as if alone: the same verdicts as one file per boot.
    for f in files:
        code1, alone, _ = bpfuml_json('verify', f)
        got = next(x for x in doc['files'] if x['file'] == f)
        check([(p['name'], p['verdict'], p.get('legacy_error')) for p in got['programs']] ==
              [(p['name'], p['verdict'], p.get('legacy_error')) for p in alone['programs']],
              f'{f}: {got["programs"]} vs {alone["programs"]}')
    code, doc, err = bpfuml_json('verify', files[0], os.path.join(SRC_PROGS, 'no-such.bpf.o'))
    check(code == EXIT_USAGE and 'no such file' in doc['error']['message'], f'exit {code}: {doc}')
    check_no_leftovers()


@test
def verify_log_buffer_grows_instead_of_truncating():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'long_log.bpf.o'), '--log-level', '2')
    check(code == EXIT_OK, f'exit {code}')
    p = prog(doc, 'long_loop')
    check(p['log_bytes'] > (16 << 20), f'log is {p["log_bytes"]} bytes; the test needs > 16 MiB')
    check(p['log_buffer'] > (16 << 20), f'the log buffer did not grow: {p["log_buffer"]}')
    check(p['diagnostics']['stats'] and not p['diagnostics']['truncated'],
          'the log lost its statistics line: ' + p['log'][-300:])
    check(len(p['log']) == p['log_bytes'], 'the log in the JSON is not the whole log')


@test
def verify_many_rejected_programs_within_guest_memory():
    # Twice in one boot: the second object's 40 log buffers are allocated
    # after the first one's were freed (the case that filled the guest).
    obj = os.path.join(PROGS, 'many_rejected.bpf.o')
    code, doc, err = bpfuml_json('verify', obj, obj)
    check(code == EXIT_REJECTED, f'exit {code}, want 1: {doc.get("error")}')
    for f in doc['files']:
        check(len(f['programs']) == 40, f'{len(f["programs"])} programs')
        check(all(p['verdict'] == 'rejected' for p in f['programs']),
              [p['verdict'] for p in f['programs'] if p['verdict'] != 'rejected'])


@test
def verify_map_that_cannot_be_created():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'map_create_fails.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1')
    p = prog(doc, 'uses_bad_map')
    check(p['verdict'] == 'not_loaded', f'verdict {p["verdict"]}')
    check("map 'needs_no_prealloc': failed to create" in p.get('libbpf_messages', ''),
          f'the reason is not given: {p.get("libbpf_messages")!r}')
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'map_create_fails.bpf.o'))
    check("could not be loaded: map 'needs_no_prealloc': failed to create" in out, out)


@test
def verify_unknown_program_name_is_usage_error():
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'two_progs.bpf.o'), '--prog', 'nope')
    check(code == EXIT_USAGE, f'exit {code}, want 2')
    check('good_prog' in doc['error']['message'], doc['error'])


@test
def verify_source_file_is_compiled():
    code, doc, err = bpfuml_json('verify', os.path.join(SRC_PROGS, 'accepted.bpf.c'))
    check(code == EXIT_OK, f'exit {code}; {doc}')
    check(prog(doc, 'pass_all')['verdict'] == 'accepted', 'not accepted')


@test
def verify_compile_error():
    before = guest_leftovers()[1]
    code, out, err = bpfuml('verify', os.path.join(SRC_PROGS, 'compile_error.bpf.c'))
    check(code == EXIT_COMPILE, f'exit {code}, want 4')
    check('undeclared_variable' in err and 'error:' in err, "clang's message not shown:\n" + err)
    check(out == '', 'stdout should be empty: ' + out)
    check_no_leftovers(before)


@test
def verify_missing_file():
    code, out, err = bpfuml('verify', '/nonexistent/prog.bpf.o')
    check(code == EXIT_USAGE, f'exit {code}, want 2')
    check('/nonexistent/prog.bpf.o' in err and 'no such file' in err, err)


@test
def verify_file_that_is_not_elf():
    code, doc, err = bpfuml_json('verify', os.path.join(TOP, 'README.md'))
    check(code == EXIT_USAGE, f'exit {code}, want 2')
    check('not an ELF object' in doc['error']['message'], doc['error'])


@test
def verify_host_elf_that_is_not_bpf():
    code, out, err = bpfuml('verify', BPFUML)
    check(code == EXIT_USAGE, f'exit {code}, want 2')
    check('not BPF' in err, err)


@test
def verify_sarif_output():
    code, out, err = bpfuml('verify', '--format=sarif',
                            os.path.join(TOP, 'progs', 'examples', 'memory_packet_bounds.bpf.c'))
    check(code == EXIT_REJECTED, f'exit {code}')
    sarif = json.loads(out)
    check(sarif['version'] == '2.1.0', sarif.get('version'))
    result = sarif['runs'][0]['results'][0]
    check(result['ruleId'] and 'Memory Safety' in json.dumps(result), json.dumps(result)[:500])
    region = result['locations'][0]['physicalLocation']['region']
    check(region['startLine'] > 0, region)
