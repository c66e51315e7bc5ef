# watch.py — `verify --watch` / `run --watch`: the command again on every
# save, through a warm guest; and the precompiled vmlinux.h that keeps a
# .bpf.c's compile short.
import glob
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

from testlib import (BPFUML, BUILD, EXIT_INTERRUPTED, EXIT_OK, RUNDIR_BASE, Failure, bpfuml, check,
                     check_no_leftovers, test)

SOURCE = '''#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "switch.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

SEC("xdp")
int count(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *value = bpf_map_lookup_elem(&counters, &key);
#if CHECKED
	if (!value)
		return XDP_PASS;
#endif
	*value += 1;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
'''


class Watcher:
    """`bpfuml verify --watch` on a scratch copy; reads its stderr lines."""

    def __init__(self, scratch, *args):
        self.proc = subprocess.Popen([BPFUML, 'verify', '--watch', *args], cwd=scratch, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env={**os.environ, 'NO_COLOR': '1'})
        self.lines, self.pending = [], b''

    def wait_for(self, text, within=120):
        # Read from the pipe itself: a buffered reader would keep the next
        # line where select() cannot see it.
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            while b'\n' in self.pending:
                line, self.pending = self.pending.split(b'\n', 1)
                self.lines.append(line.decode(errors='replace') + '\n')
                if text in self.lines[-1]:
                    return self.lines[-1]
            ready, _, _ = select.select([self.proc.stderr], [], [], max(0.1, deadline - time.monotonic()))
            chunk = os.read(self.proc.stderr.fileno(), 4096) if ready else b''
            if ready and not chunk:
                break
            self.pending += chunk
        raise Failure(f'no {text!r} from verify --watch within {within} s; it said:\n' + ''.join(self.lines[-30:]))

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, out.decode(errors='replace')


@test
def verify_watch_verifies_again_on_each_save_of_the_source_or_a_header():
    scratch = tempfile.mkdtemp(prefix='watch.')
    try:
        with open(os.path.join(scratch, 'counter.bpf.c'), 'w') as f:
            f.write(SOURCE)
        with open(os.path.join(scratch, 'switch.h'), 'w') as f:
            f.write('#define CHECKED 0\n')
        w = Watcher(scratch, 'counter.bpf.c')
        w.wait_for('watching')
        # The header the source includes is watched: fixing the bug there
        # turns the verdict, and the line says so.
        with open(os.path.join(scratch, 'switch.h.new'), 'w') as f:
            f.write('#define CHECKED 1\n')
        os.rename(os.path.join(scratch, 'switch.h.new'), os.path.join(scratch, 'switch.h'))  # as editors save
        line = w.wait_for('since last')
        check('count: rejected -> accepted' in line, f'since-last line {line!r}')
        # Saving the source itself without a change of verdict.
        with open(os.path.join(scratch, 'counter.bpf.c'), 'a') as f:
            f.write('/* a comment */\n')
        line = w.wait_for('since last')
        check('no verdict changed' in line, f'since-last line {line!r}')
        code, out = w.stop()
        check(code == EXIT_INTERRUPTED, f'exit {code} after SIGINT')
        # Each pass printed the command's own output, the warm guest's.
        check(out.count('count (xdp, type xdp): ') == 3 and out.count('warm guest: ') == 3,
              f'stdout:\n{out[-3000:]}')
        check(not glob.glob(os.path.join(scratch, '*.o')) and not glob.glob('/tmp/bpfuml-watch.*/'),
              'watch left files behind')
    finally:
        shutil.rmtree(scratch)
    check_no_leftovers()


@test
def precompiled_vmlinux_h_gives_the_same_object():
    # The harness compiles a .bpf.c with build/include/vmlinux.h.pch when
    # nothing can tell; --cflags turns it off.  Same object either way.
    pch = os.path.join(BUILD, 'include', 'vmlinux.h.pch')
    check(os.path.exists(pch), f'{pch} was not built')
    source = os.path.join(os.path.dirname(BUILD), 'tests', 'progs', 'accepted.bpf.c')
    objects = []
    for extra in ((), ('--cflags', '-DBPFUML_TEST_UNUSED=1')):
        before = set(glob.glob(os.path.join(RUNDIR_BASE, 'bpfuml.*')))
        code, out, err = bpfuml('verify', '--keep', *extra, source)
        check(code == EXIT_OK, f'exit {code}: {err}')
        kept = set(glob.glob(os.path.join(RUNDIR_BASE, 'bpfuml.*'))) - before
        check(len(kept) == 1, f'kept: {kept}')
        run_dir = kept.pop()
        with open(os.path.join(run_dir, 'object-0.bpf.o'), 'rb') as f:
            objects.append(f.read())
        shutil.rmtree(run_dir)
    check(objects[0] == objects[1], 'the object compiled with the precompiled vmlinux.h differs')
