# diag_fuzz.py — input that cannot hurt (issue 21): hostile
# verifier logs and object text through `bpfuml parse`, the libFuzzer targets
# of tests/fuzz over their seeds, and the ASan/UBSan build of the harness.
# The hostile text itself (escaped_log, check_terminal_safe, bpfuml_bytes) is
# testlib's: ci_outputs.py uses it too.
import glob
import json
import os
import subprocess
import tempfile

from testlib import (BUILD, EXIT_OK, EXIT_REJECTED, EXIT_USAGE, FIXTURES, TOP, Gap, bpfuml_bytes, check,
                     check_terminal_safe, escaped_log, test)

FUZZ_SRC = os.path.join(TOP, 'tests', 'fuzz')
# Bounded and repeatable: the same inputs every run (-seed), no clock.
FUZZ_TEST_RUNS = 10000


class NotInstalled(Gap):
    """A skip that is not a UML gap: something the host lacks."""
    prefix = ''


def fuzz_runtime_missing():
    """Why clang's libFuzzer runtime is unusable, or None (as the Makefile checks)."""
    try:
        res = subprocess.run(['clang-19', '-print-resource-dir'], capture_output=True,
                             text=True, timeout=60).stdout.strip()
    except OSError:
        return 'clang-19 is not installed'
    if not glob.glob(os.path.join(res, 'lib', '*', 'libclang_rt.fuzzer*.a')):
        return ("clang's fuzzer runtime is missing (Debian: libclang-rt-19-dev; "
                "make deps as root installs it)")
    return None


def make_fuzz_test(name):
    def run():
        why = fuzz_runtime_missing()
        if why:
            raise NotInstalled(why)
        binary = os.path.join(BUILD, 'fuzz', f'fuzz_{name}')
        seeds = os.path.join(BUILD, 'fuzz', 'seeds', name)
        check(os.access(binary, os.X_OK) and os.path.isdir(seeds),
              f'{binary} or {seeds} is not built: run make fuzz-build')
        with tempfile.TemporaryDirectory(prefix='bpfuml-fuzz.') as tmp:
            corpus, found = os.path.join(tmp, 'corpus'), os.path.join(tmp, 'found')
            os.mkdir(corpus)
            os.mkdir(found)
            # Every seed (crashes once found are kept as seeds), then a short
            # run from them; a hang of one input is a finding too.
            proc = subprocess.run([binary, f'-runs={FUZZ_TEST_RUNS}', '-seed=1', '-timeout=120',
                                   f'-artifact_prefix={found}/', corpus, seeds],
                                  capture_output=True, text=True, errors='replace', timeout=1800)
            kept = os.listdir(found)
            tail = '\n'.join(proc.stderr.splitlines()[-25:])
            check(proc.returncode == 0 and not kept,
                  f'fuzz_{name} exit {proc.returncode}, found {kept}:\n{tail}')
            check('Done ' in proc.stderr, f'fuzz_{name} did not finish its runs:\n{tail}')
    run.__name__ = f'fuzz_{name}_seeds_and_{FUZZ_TEST_RUNS}_runs_find_nothing'
    return run


for _src in sorted(glob.glob(os.path.join(FUZZ_SRC, 'fuzz_*.c'))):
    test(make_fuzz_test(os.path.basename(_src)[len('fuzz_'):-len('.c')]))


# libFuzzer's first find (tests/fuzz/seeds/diag keeps it as a seed too).
CRASHING_LOG = b'Verification failed: \nC:\n  p:2:0\n  Source context:\n   |  ^-- \n  \n    |     \x05'


@test
def parse_log_with_terminal_escapes_shows_them_escaped():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'escapes.log')
        with open(path, 'wb') as f:
            f.write(escaped_log())
        code, out, err = bpfuml_bytes('parse', path)
        check(code == EXIT_REJECTED, f'human: exit {code}: {err}')
        check_terminal_safe('parse (human)', out, (b'\\x1b', b'\\xc2\\x9b'))
        code, out, err = bpfuml_bytes('parse', path, '--format=gcc', '--prog', 'p\x1b[2Jx')
        check(code == EXIT_REJECTED, f'gcc: exit {code}: {err}')
        check_terminal_safe('parse --format=gcc', out)
        # JSON keeps the text as it was (json-c escapes it as \u001b).
        code, out, err = bpfuml_bytes('parse', path, '--json')
        doc = json.loads(out)
        check('\x1b]52' in doc['reports'][0]['problem'], f'json lost the text: {doc["reports"][0]["problem"]!r}')


@test
def parse_log_that_crashed_the_parser():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'crash.log')
        with open(path, 'wb') as f:
            f.write(CRASHING_LOG)
        for fmt in ('human', 'gcc', 'json', 'sarif'):
            code, out, err = bpfuml_bytes('parse', path, f'--format={fmt}')
            check(code == EXIT_REJECTED, f'--format={fmt}: exit {code} (a negative one is a signal): {err[-2000:]}')
            if fmt in ('json', 'sarif'):
                json.loads(out)


@test
def parse_directory_is_an_input_error():
    with tempfile.TemporaryDirectory() as tmp:
        code, out, err = bpfuml_bytes('parse', tmp)
        check(code == EXIT_USAGE and tmp in err and 'directory' in err.lower(),
              f'exit {code}, stdout {out[:200]!r}, stderr {err!r}')


@test
def asan_build_passes_unit_tests_and_parses_every_log():
    asan_bin = os.path.join(BUILD, 'asan', 'bin', 'bpfuml')
    units = [os.path.join(BUILD, 'asan', 'tests', os.path.basename(c)[:-2])
             for c in sorted(glob.glob(os.path.join(TOP, 'tests', 'unit', 'test_*.c')))]
    for binary in [asan_bin] + units:
        check(os.access(binary, os.X_OK), f'{binary} is not built: run make asan')
    for unit in units:
        proc = subprocess.run([unit, FIXTURES], capture_output=True, text=True,
                              errors='replace', timeout=600)
        check(proc.returncode == 0, f'{os.path.basename(unit)} under ASan/UBSan: exit {proc.returncode}\n'
                                    f'{proc.stdout[-1500:]}\n{proc.stderr[-3000:]}')
    with tempfile.TemporaryDirectory() as tmp:
        logs = sorted(glob.glob(os.path.join(FIXTURES, '*.log')))
        for name, text in (('crash.log', CRASHING_LOG), ('escapes.log', escaped_log())):
            logs.append(os.path.join(tmp, name))
            with open(logs[-1], 'wb') as f:
                f.write(text)
        for log in logs:
            for fmt in ('human', 'gcc', 'json', 'sarif'):
                code, out, err = bpfuml_bytes('parse', log, f'--format={fmt}', binary=asan_bin)
                check(code in (EXIT_OK, EXIT_REJECTED) and 'Sanitizer' not in err and
                      'runtime error' not in err,
                      f'{os.path.basename(log)} --format={fmt}: exit {code}\n{err[-3000:]}')


ESCAPES_SOURCE = b'''// A rejected program whose failing source line (BTF line info) and a
// section name carry terminal escapes.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

SEC("xdp")
int unchecked_lookup(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *value = bpf_map_lookup_elem(&counters, &key);

	*value += 1; /* \x1b]52;c;ZXZpbA==\x07 \xc2\x9b2J */
	return XDP_PASS;
}

SEC("tp/esc\x1b[8m/hidden")
int escaped_section(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
'''


@test
def verify_object_text_with_terminal_escapes_shows_them_escaped():
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'escapes.bpf.c')
        with open(src, 'wb') as f:
            f.write(ESCAPES_SOURCE)
        code, out, err = bpfuml_bytes('verify', src)
        check(code == EXIT_REJECTED, f'exit {code}: {err[-2000:]}')
        check(b'unchecked_lookup' in out and b'escaped_section' in out, out[:2000])
        # The source line from BTF and the section name, each shown escaped.
        check_terminal_safe('verify (human)', out, (b'\\x1b]52', b'\\xc2\\x9b', b'esc\\x1b[8m'))
        code, out, err = bpfuml_bytes('verify', src, '--format=gcc')
        check(code == EXIT_REJECTED, f'gcc: exit {code}: {err[-2000:]}')
        for bad in (b'\x1b', b'\x07', b'\x9b'):
            check(bad not in out, f'gcc: raw {bad!r}: {out[:1500]!r}')
