# probe.py — `bpfuml probe`: the table of what a kernel can verify, run and
# attach.  On UML it must list what UML can do and say why for the rest; on
# the x86_64 reference (--backend qemu) every row must be a yes (or n/a).
from testlib import EXIT_OK, backend_options, bpfuml_json, check, test


# What UML must be able to do (x86_64 can too); a regression here is a lost
# capability.  Rows UML cannot do yet are not listed: for those the test
# asserts that the table says why (the reason, and on UML a note when the
# cause is UML itself), never a bare "no".
UML_VERIFY_YES = {
    'prog_type': {'socket_filter', 'sched_cls', 'sched_act', 'xdp', 'cgroup_skb', 'cgroup_sock',
                  'lwt_in', 'sock_ops', 'sk_skb', 'cgroup_device', 'sk_msg', 'cgroup_sock_addr',
                  'sk_reuseport', 'flow_dissector', 'cgroup_sysctl', 'cgroup_sockopt', 'sk_lookup',
                  'syscall', 'netfilter', 'ext'},
    'feature': {'tail_call', 'bpf_to_bpf_call', 'global_function', 'kfunc_call',
                'callback_bpf_loop', 'open_coded_iterator', 'spin_lock', 'timer', 'ringbuf',
                'dynptr', 'allocated_object', 'atomics', 'rhash_map',
                'tail_call_in_subprog', 'exceptions', 'arena'},
}
# Verified as on x86_64 (kernel-patches 0008, 0013-0015), then refused: only a JIT runs them.
UML_VERIFY_ONLY = {'tail_call_in_subprog', 'exceptions', 'arena'}
# Attached on UML: kprobes (kernel-patches 0055-0057), trampolines (0045-0046).
# freplace (ext) patches its target's JITed code: with --jit only; interpreted,
# the attach is refused (checked below).
UML_ATTACH_YES = {'kprobe', 'tracing_fentry', 'tracing_fexit', 'tracing_fmod_ret', 'lsm', 'struct_ops'}
UML_RUN_YES = {'socket_filter', 'sched_cls', 'sched_act', 'xdp', 'cgroup_skb', 'lwt_in',
               'flow_dissector', 'sk_lookup', 'syscall', 'netfilter'} | \
              (UML_VERIFY_YES['feature'] - UML_VERIFY_ONLY)


def probe_rows(*extra):
    code, doc, err = bpfuml_json('probe', *extra, timeout=900)
    check(code == EXIT_OK, f'exit {code}: {doc.get("error")} {err}')
    check(doc['schema'] == 'bpfuml-probe/1', doc.get('schema'))
    return doc, {(r['kind'], r['name']): r for r in doc['rows']}


@test(backends={'uml': 'probe_table_for_uml', 'qemu': 'qemu_probe_table_is_the_x86_64_answer'})
def probe_table(backend):
    doc, rows = probe_rows(*backend_options(backend))
    if backend == 'qemu':
        # The reference kernel can do everything the probe asks; a "no" here is
        # a broken probe program or a broken reference, either of them ours.
        check(doc['backend'] == 'qemu' and doc['accel'] in ('kvm', 'tcg'), f'{doc["backend"]} {doc["accel"]}')
        for (kind, name), row in rows.items():
            steps = ('create',) if kind == 'map_type' else ('verify', 'run', 'attach')
            for step in steps:
                check(row[step]['status'] in ('yes', 'n/a'), f'{kind} {name}: {step} {row[step]}')
            check(not row.get('uml_note'), f'{name}: a UML note on the qemu backend')
        return
    check(doc['backend'] == 'uml', doc['backend'])
    for kind, names in UML_VERIFY_YES.items():
        for name in names:
            row = rows.get((kind, name))
            check(row, f'{kind} {name}: no row')
            check(row['verify']['status'] == 'yes', f'{kind} {name}: verify {row["verify"]}')
            if name in UML_RUN_YES:
                check(row['run']['status'] == 'yes', f'{kind} {name}: run {row["run"]}')
            if name in UML_VERIFY_ONLY:
                check(row['run']['status'] == 'no' and row.get('uml_note'),
                      f'{kind} {name}: run {row["run"]}, note {row.get("uml_note")}')
    for name in UML_ATTACH_YES:
        row = rows.get(('prog_type', name))
        check(row and row['attach']['status'] == 'yes', f'prog_type {name}: attach {row and row["attach"]}')
    # Interpreted, the target has no machine code of its own to patch (its
    # entry is the interpreter's, which the kernel refuses to patch).
    row = rows.get(('prog_type', 'ext'))
    check(row and row['attach']['status'] == 'no' and 'without --jit' in row.get('uml_note', ''),
          f'prog_type ext: attach {row and row["attach"]}, note {row and row.get("uml_note")}')
    for (kind, name), row in rows.items():
        if kind == 'map_type':
            continue
        verify = row['verify']
        if verify['status'] == 'no':
            check(verify.get('verifier_error') or verify.get('error'), f'{name}: a "no" without a reason')
            check(row.get('uml_note'),
                  f'{name}: UML cannot verify it and the table does not say that UML is the cause: {verify}')
        attach = row.get('attach') or {}
        if attach.get('status') == 'no':
            check(row.get('uml_note'), f'{name}: cannot attach on UML and the table does not say why: {attach}')
    for name in ('hash', 'array', 'rhash', 'ringbuf', 'prog_array'):
        check(rows[('map_type', name)]['create']['status'] == 'yes', f'map {name}: {rows[("map_type", name)]}')
