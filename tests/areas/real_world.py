# real_world.py — what programs people ship need from UML (issue 13).
import os
import tempfile

from testlib import (EXIT_OK, EXIT_REJECTED, EXIT_USAGE, PROGS, bpfuml, bpfuml_json, check, prog, run_globals, test,
                     verify_all_accepted)


@test
def legacy_probe_read_verified_and_reads_as_on_x86_64():
    # bpf_probe_read()/bpf_probe_read_str(): offered as on x86_64 (0029); a
    # kernel address reads kernel memory, a user address the process's own.
    obj = os.path.join(PROGS, 'legacy_probe_read.bpf.o')
    code, doc, err = bpfuml_json('verify', obj)
    check(code == EXIT_OK, f'exit {code}: ' + ' '.join(
        str((p.get('diagnostics') or {}).get('legacy_error')) for p in doc.get('programs', [])))
    with tempfile.TemporaryDirectory() as tmp:
        ctx_in = os.path.join(tmp, 'ctx.bin')
        with open(ctx_in, 'wb') as f:
            f.write(bytes(16))
        code, doc, err = bpfuml_json('run', obj, '--prog', 'legacy_reads', '--ctx-in', ctx_in)
    check(code == EXIT_OK and 'error' not in doc.get('run', {}), f'exit {code}: {doc.get("run")} {err}')
    check(doc['run']['retval'] == 0, f'retval {doc["run"]["retval"]}: the task had no mm')
    g = {x['name']: x for x in doc['run']['globals']}
    check(g['tgid_read']['value'] == g['tgid_expected']['value'] > 0,
          f'tgid read {g["tgid_read"]["value"]}, want {g["tgid_expected"]["value"]}')
    arg0 = bytes.fromhex(g['arg0']['hex']).split(b'\0')[0].decode(errors='replace')
    check(g['arg0_len']['value'] == len(arg0) + 1 and arg0.endswith('bpfuml-agent'),
          f'argv[0] read as {arg0!r} ({g["arg0_len"]["value"]})')


@test
def core_read_of_thread_info_status_built_for_x86_64():
    # x86_64's thread_info.status resolves on UML (0030) and reads 0, as for
    # a native task on x86_64.
    obj = os.path.join(PROGS, 'thread_info_status.bpf.o')
    with tempfile.TemporaryDirectory() as tmp:
        ctx_in = os.path.join(tmp, 'ctx.bin')
        with open(ctx_in, 'wb') as f:
            f.write(bytes(8))
        code, doc, err = bpfuml_json('run', obj, '--prog', 'read_status', '--ctx-in', ctx_in)
    p = doc.get('programs', [{}])[0]
    check(code == EXIT_OK, f'exit {code}: {p.get("verdict")} {p.get("libbpf_messages", "")[-400:]}')
    g = run_globals(doc)
    check(g['status'] == 0, f'thread_info.status read as {g["status"]}')


@test
def cgroup_controllers_of_distribution_kernels_take_programs():
    # fentry on cpuset's and the pids controller's functions, as container
    # agents attach them (uml-config/30-real-world.config).
    verify_all_accepted(os.path.join(PROGS, 'cgroup_controllers.bpf.o'), 2)


@test
def sched_ext_scheduler_verifies():
    # A sched_ext scheduler's struct_ops programs and their scx_bpf_* kfuncs
    # verify (uml-config/30-real-world.config); running it needs the JIT.
    verify_all_accepted(os.path.join(PROGS, 'sched_ext_minimal.bpf.o'), 3)


@test
def loader_fixups_size_maps_and_are_listed():
    # Maps of 0 entries (a hash, a map-in-map and its inner map) are sized
    # as their loader would; the fixups are listed; --no-fixups judges the
    # object as built (its maps cannot be created).
    obj = os.path.join(PROGS, 'loader_fixups.bpf.o')
    code, doc, err = bpfuml_json('verify', obj)
    check(code == EXIT_OK, f'exit {code}: {[(p["name"], p["verdict"], p.get("libbpf_messages")) for p in doc.get("programs", [])]}')
    fixups = doc.get('fixups', [])
    for want in ("map 'counts': max_entries 0 -> 1", "map 'per_ifindex': max_entries 0 -> 1",
                 "map 'per_ifindex' (inner map): max_entries 0 -> 1"):
        check(want in fixups, f'{want!r} not among the fixups listed: {fixups}')
    code, out, err = bpfuml('verify', obj)
    check(code == EXIT_OK and 'verified with fixups' in out and "max_entries 0 -> 1" in out, out[:1500])
    code, doc, err = bpfuml_json('verify', obj, '--no-fixups')
    check(code == EXIT_REJECTED and doc['fixups'] == [] and
          doc['programs'][0]['verdict'] == 'not_loaded', f'exit {code}: {doc.get("fixups")} {doc.get("programs")}')


@test
def loader_fixups_shape_maps_and_type_programs():
    # What bcc, cilium/ebpf and ebpf_exporter set at run time: a stack map's
    # value size, no value size on a ring buffer, the type of a program whose
    # section libbpf knows only by its prefix.  A section libbpf cannot know
    # is not loaded, and said to be the object's loader's to type, not UML's.
    obj = os.path.join(PROGS, 'loader_shapes.bpf.o')
    code, doc, err = bpfuml_json('verify', obj)
    fixups = doc.get('fixups', [])
    for want in ("map 'stack_traces': value_size 0 -> ", "map 'events': value_size 8 -> 0 (its type takes none)",
                 "program 'on_cache_miss': type perf_event, from its section name's 'perf_event'"):
        check(any(f.startswith(want) for f in fixups), f'{want!r} not among the fixups listed: {fixups}')
    check(prog(doc, 'on_cache_miss')['verdict'] == 'accepted',
          f'on_cache_miss: {prog(doc, "on_cache_miss")["verdict"]} {prog(doc, "on_cache_miss").get("libbpf_messages")}')
    unknown = prog(doc, 'typed_by_its_loader')
    check(code == EXIT_REJECTED and unknown['verdict'] == 'not_loaded' and unknown.get('type_unknown') is True
          and unknown.get('uml_fidelity_note') is None, f'exit {code}: {unknown}')
    code, out, err = bpfuml('verify', obj, '--prog', 'typed_by_its_loader')
    check("libbpf cannot tell the program type from the section name 'program1'" in out
          and 'UML differs' not in out, out[:1500])


def verdicts(doc):
    return {p['name']: p['verdict'] for p in doc.get('programs', [])}


@test
def set_global_decides_a_branch_as_its_loader_would():
    # const volatile settings a skeleton sets before load (veristat -G):
    # left at 0 the unsafe branches are pruned; set, they are live and
    # rejected.  Integers, enum names, veristat's "NAME = VALUE" spelling.
    obj = os.path.join(PROGS, 'global_switch.bpf.o')
    code, doc, err = bpfuml_json('verify', obj)
    check(code == EXIT_OK and verdicts(doc) == {'switched_by_int': 'accepted', 'switched_by_enum': 'accepted'},
          f'as built: exit {code} {verdicts(doc)}')
    code, doc, err = bpfuml_json('verify', obj, '--set-global', 'unsafe_path=1')
    check(code == EXIT_REJECTED and verdicts(doc) == {'switched_by_int': 'rejected', 'switched_by_enum': 'accepted'},
          f'unsafe_path=1: exit {code} {verdicts(doc)}')
    check("global 'unsafe_path' = 1 (--set-global)" in doc['fixups'], f'fixups {doc["fixups"]}')
    for spelling in (('--set-global', 'mode=MODE_ON'), ('-G', 'mode = MODE_ON'), ('-G', 'mode=1')):
        code, doc, err = bpfuml_json('verify', obj, *spelling)
        check(code == EXIT_REJECTED and verdicts(doc)['switched_by_enum'] == 'rejected' and
              verdicts(doc)['switched_by_int'] == 'accepted', f'{spelling}: exit {code} {verdicts(doc)}')


@test
def set_global_that_cannot_be_set_is_a_usage_error():
    obj = os.path.join(PROGS, 'global_switch.bpf.o')
    for arg, says in (('nosuch=1', "no global variable 'nosuch' in the object"),
                      ('unsafe_path=x', "global 'unsafe_path' (4 bytes) cannot hold 'x'"),
                      ('unsafe_path=4294967296', "cannot hold '4294967296'"),
                      ('mode=MODE_MAYBE', "cannot hold 'MODE_MAYBE'"),
                      ('unsafe_path', "--set-global wants NAME=VALUE, not 'unsafe_path'"),
                      ('=1', "--set-global wants NAME=VALUE")):
        code, out, err = bpfuml('verify', obj, '--set-global', arg)
        check(code == EXIT_USAGE and says in err, f'--set-global {arg}: exit {code} {err!r}')


@test
def verify_mem_sizes_the_guest():
    # --mem MB: the guest's memory, for objects whose maps (allocated at
    # load) need more than the default; out of range is a usage error.
    # big_map.bpf.o's 600 MiB array cannot be created in 512 MiB.
    obj = os.path.join(PROGS, 'big_map.bpf.o')
    code, doc, err = bpfuml_json('verify', obj)
    check(code == EXIT_REJECTED and "map 'big': failed to create: -ENOMEM" in
          (prog(doc, 'touch_big').get('libbpf_messages') or ''), f'default memory: exit {code}: {doc}')
    code, doc, err = bpfuml_json('verify', '--mem', '1024', obj)
    check(code == EXIT_OK and prog(doc, 'touch_big')['verdict'] == 'accepted', f'--mem 1024: exit {code}: {err}')
    code, out, err = bpfuml('verify', '--mem', '64', os.path.join(PROGS, 'accepted.bpf.o'))
    check(code == EXIT_USAGE and '--mem wants a whole number of MiB from 128' in err, f'--mem 64: exit {code}: {err}')
