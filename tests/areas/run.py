# run.py — `bpfuml run`: a program's test run (BPF_PROG_TEST_RUN) with its
# data in and out and its globals; the packet rewrite runs on both backends.
import os
import tempfile

from testlib import (EXIT_OK, EXIT_REJECTED, EXIT_USAGE, PROGS, backend_options, backend_timeout,
                     bpfuml_json, check, test)


@test(backends={'uml': 'run_with_data_in_out_and_globals', 'qemu': 'qemu_run_program'})
def run_with_data_in_out_and_globals(backend):
    packet = bytes(range(1, 7)) + bytes(range(11, 17)) + b'\x08\x00' + b'\x40' + bytes(49)
    with tempfile.TemporaryDirectory() as tmp:
        data_in = os.path.join(tmp, 'in.bin')
        data_out = os.path.join(tmp, 'out.bin')
        with open(data_in, 'wb') as f:
            f.write(packet)
        code, doc, err = bpfuml_json('run', *backend_options(backend),
                                     os.path.join(PROGS, 'packet_rewrite.bpf.o'),
                                     '--prog', 'rewrite', '--data-in', data_in,
                                     '--data-out', data_out, '--repeat', '1', timeout=backend_timeout(backend))
        check(code == EXIT_OK, f'exit {code}: {doc.get("error")} {err}')
        if backend == 'qemu':
            check(doc['backend'] == 'qemu', f'backend {doc["backend"]!r}')
        run = doc['run']
        check(run['retval'] == 3, f'retval {run["retval"]}, want XDP_TX (3)')
        want = packet[6:12] + packet[0:6] + packet[12:14] + bytes([0x43]) + packet[15:]
        got = bytes.fromhex(run['data_out_hex'])
        check(got == want, f'data_out {got.hex()} != {want.hex()}')
        with open(data_out, 'rb') as f:
            check(f.read() == want, '--data-out file differs from data_out')
    globals_ = {g['name']: g for g in run['globals']}
    check(globals_.get('runs', {}).get('value') == 1, f'runs: {globals_.get("runs")}')
    check(globals_.get('last_len', {}).get('value') == len(packet), f'last_len: {globals_.get("last_len")}')
    check(globals_.get('last_first_byte', {}).get('value') == 0x40, f'last_first_byte: {globals_.get("last_first_byte")}')
    check(globals_.get('bump', {}).get('value') == 3 and globals_['bump']['section'] == '.rodata',
          f'bump: {globals_.get("bump")}')
    check(globals_['runs']['section'] == '.bss' and globals_['last_len']['section'] == '.data',
          f'sections: {globals_}')


@test
def run_syscall_program_once_and_refuse_repeat():
    obj = os.path.join(PROGS, 'syscall_prog.bpf.o')
    code, doc, err = bpfuml_json('run', obj, '--prog', 'count_runs')
    check(code == EXIT_OK, f'exit {code}: {doc.get("error")} {doc.get("run")}')
    check(doc['run']['retval'] == 7, doc['run'])
    runs = [g for g in doc['run']['globals'] if g['name'] == 'runs']
    check(runs and runs[0]['value'] == 1, f'globals {doc["run"]["globals"]}')
    code, doc, err = bpfuml_json('run', obj, '--prog', 'count_runs', '--repeat', '5')
    check(code == EXIT_USAGE, f'exit {code}, want {EXIT_USAGE}')
    check('--repeat is not supported for syscall' in doc['run']['error'], doc['run'])


@test
def run_rejected_program_exits_1():
    code, doc, err = bpfuml_json('run', os.path.join(PROGS, 'rejected.bpf.o'), '--prog', 'unchecked_lookup')
    check(code == EXIT_REJECTED, f'exit {code}, want 1')
    check(doc['program']['verdict'] == 'rejected' and 'run' not in doc, doc.keys())
