# ci_outputs.py — what CI systems read (issue 17): GitHub workflow-command
# annotations from verify and parse.
import os
import re
import tempfile

from testlib import (EXIT_OK, EXIT_REJECTED, PROGS, bpfuml, bpfuml_bytes, check, check_terminal_safe,
                     escaped_log, test)

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
