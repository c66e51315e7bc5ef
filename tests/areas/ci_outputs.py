# ci_outputs.py — what CI systems read (issue 17): GitHub workflow-command
# annotations from verify and parse; Markdown summaries (--summary) and
# JUnit XML (--junit) from verify and kselftest.
import json
import os
import re
import subprocess
import tempfile

from testlib import (BPFUML, EXIT_INFRA, EXIT_OK, EXIT_REJECTED, EXIT_USAGE, PROGS, bpfuml, bpfuml_bytes, check,
                     check_terminal_safe, escaped_log, fake_selftests_build_dir, test)

GITHUB_LINE = re.compile(r'^::error (?:file=([^,:]*)(?:,line=(\d+))?(?:,col=(\d+))?,)?'
                         r'title=([^:]*)::(.*)$')


def github_lines(out):
    lines = out.splitlines()
    bad = [l for l in lines if not GITHUB_LINE.match(l)]
    check(not bad, f'not workflow commands: {bad[:3]}')
    return [GITHUB_LINE.match(l).groups() for l in lines]


@test
def verify_github_annotations_mark_the_failing_line():
    code, out, err = bpfuml('verify', '--format', 'github', os.path.join(PROGS, 'rejected.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}: {err[-800:]}')
    found = github_lines(out)
    check(len(found) == 1, f'want one annotation: {out}')
    file, line, col, title, message = found[0]
    # The same place and category as the gcc line.
    code, gcc, err = bpfuml('verify', '--format', 'gcc', os.path.join(PROGS, 'rejected.bpf.o'))
    where = re.match(r'^([^:]+):(\d+):(\d+): error: ([^:]+): ', gcc)
    check(where and (file, line, col) == where.groups()[:3] and title.startswith(where.group(4) + ' [prog '),
          f'annotation {found[0]} vs gcc {gcc.splitlines()[:1]}')
    check('%0AReason: ' in message and '%0ASuggestion: ' in message, f'message {message!r}')
    code, out, err = bpfuml('verify', '--format', 'github', os.path.join(PROGS, 'accepted.bpf.o'))
    check(code == EXIT_OK and out == '', f'accepted: exit {code}, {out!r}')


@test
def github_annotations_cannot_be_ended_by_the_object():
    # Text an object controls with '%0A' (which the runner would turn into
    # a line break), ':' and ',', and terminal escapes: each finding stays
    # one line, '%' is escaped, and the escapes are shown, not sent.
    text = escaped_log().replace(b'spin lock', b'spin,lock: %0A::warning::x', 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'hostile.log')
        with open(path, 'wb') as f:
            f.write(text)
        code, out, err = bpfuml_bytes('parse', '--format', 'github', '--prog', 'a,b:c%d', path)
    check_terminal_safe('github', out)
    found = github_lines(out.decode())
    check(len(found) >= 1, f'no annotation: {out[:600]!r}')
    check(all(' [prog a%2Cb%3Ac%25d]' in f[3] for f in found), f'prog name not escaped: {found}')
    check(b'spin,lock: %250A::warning::x' in out, f'the message is not escaped: {out[:800]!r}')


def summary_table(text):
    """The rows of a summary's table, each a list of its cells."""
    rows = [line for line in text.splitlines() if line.startswith('| ') and not line.startswith('| |')]
    return [[c.strip() for c in re.split(r'(?<!\\)\|', row)[1:-1]] for row in rows]


@test
def verify_summary_is_markdown_a_ci_page_shows():
    # Appended (CI steps share the file), a table row per program with the
    # report's category, the end of a rejected program's log in a fence.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'summary.md')
        with open(path, 'w') as f:
            f.write('earlier step\n')
        code, out, err = bpfuml('verify', os.path.join(PROGS, 'two_progs.bpf.o'), '--summary', path)
        check(code == EXIT_REJECTED, f'exit {code}: {err}')
        with open(path) as f:
            text = f.read()
    check(text.startswith('earlier step\n### bpfuml verify: 2 program(s) in 1 object(s), 1 accepted, 1 not accepted'),
          text[:300])
    rows = {r[2]: r for r in summary_table(text)}
    check(set(rows) == {'good\\_prog', 'bad\\_prog'}, f'rows {rows}')
    check(rows['good\\_prog'][3] == 'accepted' and rows['bad\\_prog'][3] == 'rejected', f'{rows}')
    check(rows['bad\\_prog'][4].isdigit(), f'no instruction count: {rows}')
    check(re.search(r'<details><summary>bad_prog: rejected[^<]*</summary>\n\n```+\n', text) and
          text.rstrip().endswith('</details>'), text[-800:])


@test
def summary_cells_and_logs_cannot_be_broken_by_an_object():
    # Names and logs are the object's: a '|' or '<' in a name, a ``` run in
    # a log cannot end the table or the fence.  Checked on the renderer the
    # CLI uses, through parse's escaped log and a program name with them.
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'odd.bpf.c')
        with open(src, 'w') as f:
            f.write('#include "vmlinux.h"\n#include <bpf/bpf_helpers.h>\n'
                    'SEC("xdp") int pipe_or_tag(struct xdp_md *ctx)\n'
                    '{ /* ``` </details> | */ int *p = 0; return *p; }\n'
                    'char LICENSE[] SEC("license") = "GPL";\n')
        path = os.path.join(tmp, 's.md')
        code, out, err = bpfuml('verify', src, '--summary', path, '--log-level', '2')
        check(code == EXIT_REJECTED, f'exit {code}: {err[-600:]}')
        with open(path) as f:
            text = f.read()
    fence = re.search(r'</summary>\n\n(`+)\n', text)
    check(fence, text[:600])
    inside = text[fence.end():text.rindex('\n' + fence.group(1) + '\n')]
    check(fence.group(1) not in inside and '</details>' in inside,
          f'the log can end its fence: fence {fence.group(1)!r}')
    check(text.count('</details>\n') == 1 + inside.count('</details>\n'), text[-400:])


@test
def kselftest_summary_counts_and_each_failure():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'summary.md')
        env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
        proc = subprocess.run([BPFUML, 'kselftest', '-j', '2', '--batch', '3', '--summary', path],
                              capture_output=True, text=True, timeout=120, env=env)
        check(proc.returncode == EXIT_INFRA, f'exit {proc.returncode}: {proc.stderr[-800:]}')
        with open(path) as f:
            text = f.read()
    check(text.startswith('### bpfuml kselftest: not passed in '), text[:200])
    table = {r[0]: r[1:] for r in summary_table(text)}
    check(table.get('tests') == ['4', '2', '1', '1', '1'], f'tests row {table}')
    for name in ('epsilon', 'epsilon/bad', 'beta'):
        check(f' {name} (' in text, f'{name} not among the failures:\n{text[:1500]}')
    check('assertion failed' in text, 'epsilon/bad\'s log is missing')


@test
def summary_file_that_cannot_be_written_is_refused_before_the_run():
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'accepted.bpf.o'), '--summary', '/nonexistent/dir/s.md')
    check(code == EXIT_USAGE and '--summary /nonexistent/dir/s.md' in err and 'guest' not in err,
          f'exit {code} {err!r}')


def junit_checked(path):
    """Parse PATH as JUnit XML and check the element rules CI readers rely
    on: <testsuites> of <testsuite>s of <testcase>s, each with classname and
    name, at most one of failure/error/skipped, counts that add up."""
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    check(root.tag == 'testsuites', f'root <{root.tag}>')
    cases = []
    for suite in root:
        check(suite.tag == 'testsuite' and suite.get('name'), f'<{suite.tag} {suite.attrib}>')
        check(int(suite.get('tests')) == len(suite), f'{suite.get("name")}: tests={suite.get("tests")}, {len(suite)} cases')
        for case in suite:
            check(case.tag == 'testcase' and case.get('classname') and case.get('name'), f'<{case.tag} {case.attrib}>')
            outcomes = [c.tag for c in case]
            check(len(outcomes) <= 1 and set(outcomes) <= {'failure', 'error', 'skipped'}, f'{case.attrib}: {outcomes}')
            cases.append(case)
    for attr, tag in (('failures', 'failure'), ('errors', 'error')):
        check(int(root.get(attr)) == sum(1 for c in cases if c.find(tag) is not None),
              f'{attr}={root.get(attr)} for {[c.attrib for c in cases if c.find(tag) is not None]}')
    check(int(root.get('tests')) == len(cases), f'tests={root.get("tests")}, {len(cases)} cases')
    return root, cases


@test
def verify_junit_has_a_testcase_per_program_with_its_report():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'verify.xml')
        code, out, err = bpfuml('verify', os.path.join(PROGS, 'two_progs.bpf.o'),
                                os.path.join(PROGS, 'loader_fixups.bpf.o'), '--no-fixups', '--junit', path)
        check(code == EXIT_REJECTED, f'exit {code}: {err[-600:]}')
        root, cases = junit_checked(path)
    by_name = {c.get('name'): c for c in cases}
    check(by_name['good_prog'].find('failure') is None and by_name['good_prog'].find('error') is None,
          'good_prog is not a pass')
    failure = by_name['bad_prog'].find('failure')
    check(failure is not None and failure.get('type') == 'rejected' and
          failure.get('message').startswith('Memory Safety: Access outside bounds (two_progs.bpf.c:') and
          'Verification failed' in failure.text, f'bad_prog: {by_name["bad_prog"].attrib} {failure}')
    errors = [c for c in cases if c.find('error') is not None]
    check(errors and all(c.get('classname').endswith('loader_fixups.bpf.o') for c in errors),
          f'the programs --no-fixups cannot load are not errors: {[c.attrib for c in cases]}')


@test
def junit_carries_any_bytes_an_object_puts_in_its_log():
    # XML 1.0 has no escape for most control characters or bytes that are
    # not UTF-8: a log with them must still give a document that parses.
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'bytes.bpf.c')
        with open(src, 'wb') as f:
            f.write(b'#include "vmlinux.h"\n#include <bpf/bpf_helpers.h>\n'
                    b'SEC("xdp") int odd_bytes(struct xdp_md *ctx)\n'
                    b'{ /* \x1b[31m \x01\x02 \xff\xfe \xed\xa0\x80 ]]> <&> */ int *p = 0; return *p; }\n'
                    b'char LICENSE[] SEC("license") = "GPL";\n')
        path = os.path.join(tmp, 'bytes.xml')
        code, out, err = bpfuml('verify', src, '--log-level', '2', '--junit', path)
        check(code == EXIT_REJECTED, f'exit {code}: {err[-600:]}')
        root, cases = junit_checked(path)
    text = cases[0].find('failure').text
    check(']]> <&>' in text and '\x1b' not in text and '\x01' not in text, f'log text: {text[:300]!r}')


@test
def kselftest_junit_counts_as_the_json_does():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'k.xml')
        env = {**os.environ, 'BPFUML_BUILD_DIR': fake_selftests_build_dir()}
        proc = subprocess.run([BPFUML, 'kselftest', '-j', '2', '--batch', '3', '--junit', path, '--json'],
                              capture_output=True, text=True, timeout=120, env=env)
        check(proc.returncode == EXIT_INFRA, f'exit {proc.returncode}: {proc.stderr[-800:]}')
        doc = json.loads(proc.stdout)
        root, cases = junit_checked(path)
    want = {k: doc['tests'][k] + doc['subtests'][k] for k in doc['tests']}
    check(int(root.get('failures')) == want['failed'] and int(root.get('errors')) == want['error'] and
          int(root.get('skipped')) == want['skipped'] + want['denied'] and
          len(cases) == sum(want.values()), f'junit {root.attrib}, json {want}')
    sub = [c for c in cases if c.get('classname') == 'epsilon' and c.get('name') == 'bad']
    check(sub and 'assertion failed' in sub[0].find('failure').text, 'epsilon/bad is not a failure with its log')


@test
def verify_sarif_file_is_the_log_format_sarif_prints():
    # --sarif FILE beside --format github: one run gives the annotations and
    # the file to upload, the same log as --format sarif prints.
    obj = os.path.join(PROGS, 'rejected.bpf.o')
    code, printed, err = bpfuml('verify', '--format', 'sarif', obj)
    check(code == EXIT_REJECTED, f'exit {code}: {err[-500:]}')
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'v.sarif')
        code, out, err = bpfuml('verify', '--format', 'github', '--sarif', path, obj)
        check(code == EXIT_REJECTED and out.startswith('::error '), f'exit {code}: {out[:300]!r} {err[-300:]}')
        with open(path) as f:
            written = json.load(f)
        code, out, err = bpfuml('verify', '--sarif', os.path.join(tmp, 'no', 'dir.sarif'), obj)
        check(code == EXIT_USAGE and 'dir.sarif' in err, f'unwritable --sarif: exit {code} {err!r}')
    check(written['version'] == '2.1.0', written.get('version'))
    check(written['runs'][0]['results'] == json.loads(printed)['runs'][0]['results'],
          'the file\'s results differ from --format sarif\'s')
