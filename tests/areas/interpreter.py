# interpreter.py — what only a JIT could do on stock UML, done by the
# interpreter (kernel-patches 0001-0004, 0008, 0013-0015): irq_work, kfunc
# calls, callbacks, tail calls; and what only a JIT runs (arena, exceptions),
# verified as on x86_64 and then refused plainly.
import os
import tempfile

from testlib import (EXIT_OK, EXIT_REJECTED, PROGS, bpfuml, bpfuml_json, check, guest_program_passed,
                     prog, run_globals, test)


def run_prog(obj, name, *extra):
    """bpfuml run --json on a tc program with a 64-byte packet; returns (run, globals by name)."""
    with tempfile.TemporaryDirectory() as tmp:
        data_in = os.path.join(tmp, 'in.bin')
        with open(data_in, 'wb') as f:
            f.write(bytes(range(0x40, 0x80)))
        code, doc, err = bpfuml_json('run', os.path.join(PROGS, obj), '--prog', name,
                                     '--data-in', data_in, *extra)
    p = doc.get('program', {})
    check(code == EXIT_OK and p.get('verdict') == 'accepted' and 'run' in doc,
          f'{name}: exit {code}, verdict {p.get("verdict")}: {(p.get("log") or "")[-1500:]} '
          f'{doc.get("error")} {err}')
    return doc['run'], run_globals(doc)


@test
def irq_work_refills_bpf_mem_alloc_between_inserts():
    # 0001-um-Deliver-irq_work-through-a-soft-interrupt.patch: without it the
    # 5th insert of a run fails with -ENOMEM (first_err -12 at 4).
    for prefix in ('rhash', 'hash'):
        run, g = run_prog('many_inserts.bpf.o', f'insert_{prefix}')
        check(g[f'{prefix}_first_err'] == 0,
              f'{prefix}: insert #{g[f"{prefix}_first_err_at"]} failed with {g[f"{prefix}_first_err"]}'
              f' after {g[f"{prefix}_inserted"]} inserts')
        check(g[f'{prefix}_inserted'] == 500 and g[f'{prefix}_found'] == 500, f'{prefix}: {g}')
        check(run['retval'] == 0, f'{prefix}: retval {run["retval"]}')


@test
def kfunc_calls_verified_and_run_on_the_interpreter():
    # 0002-bpf-Let-the-interpreter-call-kfuncs-...: without it the verifier
    # stops at "JIT is required for calling kernel function".
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'kfunc_calls.bpf.o'))
    p = prog(doc, 'kfunc_calls')
    check(code == EXIT_OK and p['verdict'] == 'accepted',
          f'exit {code}, verdict {p["verdict"]}: {p["log"][-1500:]}')
    check(p['diagnostics']['stats']['insns_processed'] > 20, f'stats: {p["diagnostics"]["stats"]}')
    run, g = run_prog('kfunc_calls.bpf.o', 'kfunc_calls')
    check(g['iter_sum'] == 4950, f'bpf_for() sum {g["iter_sum"]}, want 4950')
    check(g['obj_sum'] == 49, f'bpf_obj_new() object read back as {g["obj_sum"]}, want 49')
    check(g['slice_byte'] == 0x40, f'bpf_dynptr_slice() byte {g["slice_byte"]}, want 0x40')
    check(run['retval'] == 0, f'retval {run["retval"]}')


@test
def callbacks_run_on_the_interpreter():
    # 0003-bpf-Run-callbacks-of-interpreted-programs-...: without it the
    # verifier's last step says "callbacks are not allowed in non-JITed programs".
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'callbacks.bpf.o'))
    verdicts = {p['name']: p['verdict'] for p in doc['programs']}
    check(code == EXIT_OK and set(verdicts.values()) == {'accepted'},
          f'exit {code}, verdicts {verdicts}: ' +
          ' | '.join(p['log'][-600:] for p in doc['programs'] if p['verdict'] != 'accepted'))
    run, g = run_prog('callbacks.bpf.o', 'loop')
    check(g['loop_iters'] == 10 and g['loop_sum'] == 285,
          f'bpf_loop(): {g["loop_iters"]} iterations, sum {g["loop_sum"]}; want 10, 285')
    check(run['retval'] == 0, f'loop: retval {run["retval"]}')
    run, g = run_prog('callbacks.bpf.o', 'loop_inlined')
    check(g['loop_iters'] == 10 and g['loop_sum'] == 285 and run['retval'] == 0,
          f'inlined bpf_loop(): {g["loop_iters"]} iterations, sum {g["loop_sum"]}, retval {run["retval"]}')
    run, g = run_prog('callbacks.bpf.o', 'for_each')
    check(g['for_each_elems'] == 8 and g['for_each_sum'] == 280,
          f'bpf_for_each_map_elem(): {g["for_each_elems"]} elements, sum {g["for_each_sum"]}; want 8, 280')
    check(run['retval'] == 0, f'for_each: retval {run["retval"]}')
    # bpf_timer_init() allocates with kmalloc_nolock(): -ENOMEM on UML without
    # 0004-um-Let-SLUB-use-cmpxchg16b-...; the callback's firing is checked
    # by callback_trampolines_are_given_back.
    run, g = run_prog('callbacks.bpf.o', 'timer')
    check(g['timer_err'] == 0 and run['retval'] == 0,
          f'timer: retval {run["retval"]}, error {g["timer_err"]} (2: bpf_timer_init, 3: set_callback, 4: start)')
    run, g = run_prog('callbacks.bpf.o', 'rbtree')
    check(g['rbtree_first_key'] == 1 and g['rbtree_less_calls'] >= 2,
          f'bpf_rbtree_add(): first key {g["rbtree_first_key"]}, less() ran {g["rbtree_less_calls"]} times')
    check(run['retval'] == 0, f'rbtree: retval {run["retval"]}')


@test
def callback_trampolines_are_given_back():
    # 0003: a loaded program holds one of 512 trampolines per callback subprog;
    # the guest fills them all, sees ENOSPC, frees them and loads 1000 more.
    guest_program_passed('callback_slots', 'progs/callbacks.bpf.o')


@test
def tail_call_prog_array_filled_at_load():
    # With the JIT requested the verifier adds a tail-call poke descriptor and
    # the prog array tracks the program (0008); libbpf's update of the array
    # at load then walks the descriptors, which no interpreted program marks
    # stable.  Both programs load together, with no kernel warning (exit 3).
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'tail_call.bpf.o'))
    got = {p['name']: (p['verdict'], p['load']) for p in doc.get('programs', [])}
    check(code == EXIT_OK and got == {'tail_target': ('accepted', 'together'),
                                      'tail_caller': ('accepted', 'together')},
          f'exit {code}: {got} {doc.get("error")}')


@test
def tail_call_target_not_loaded_alone_keeps_verdict():
    # Loaded alone, a program whose object fills a prog array with another
    # program: libbpf fails the array's filling (the target has no fd) after
    # the verifier accepted the program.  That is not the program's verdict.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'tail_call_rejected_target.bpf.o'))
    got = {p['name']: (p['verdict'], p['load']) for p in doc.get('programs', [])}
    check(code == EXIT_REJECTED and got == {'good_caller': ('accepted', 'alone'),
                                            'bad_target': ('rejected', 'alone')},
          f'exit {code}: {got} {doc.get("error")}')


@test
def tail_call_into_a_deeper_stack_runs():
    # 0014: the interpreter runs a tail-called program in the caller's frame,
    # which must be MAX_BPF_STACK deep; without it the kernel oopses (exit 3).
    run, g = run_prog('tail_call_deep_stack.bpf.o', 'shallow_caller')
    check(run.get('retval') == 3 and g.get('deep_sum') == sum(i & 0xff for i in range(480)),
          f'retval {run.get("retval")}, deep_sum {g.get("deep_sum")}')


@test
def arena_verified_then_refused_plainly():
    # Verified as on x86_64 (stock UML: "JIT is required to use arena"), then
    # not loaded: only a JIT runs arena programs.
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'arena.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1:\n{out}{err}')
    check('JIT is required' not in out and 'the verifier accepted this program' in out
          and 'UML' in out, f'no plain note:\n{out}')
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'arena.bpf.o'))
    p = prog(doc, 'arena_write')
    check(p.get('errno') == 524 and 'processed' in (p.get('log') or ''),
          f'errno {p.get("errno")}, log: {(p.get("log") or "")[-600:]}')


@test
def jit_only_programs_verify_as_on_x86_64_then_refused():
    # 0013-0015: stock UML rejects these in the verifier ("JIT does not
    # support calling kfunc bpf_throw", "mixing of tail_calls and bpf-to-bpf
    # calls"); x86_64 accepts both.  UML now verifies them as x86_64 does and
    # refuses them afterwards, saying so.
    code, doc, err = bpfuml_json('verify', os.path.join(PROGS, 'jit_only.bpf.o'))
    check(code == EXIT_REJECTED, f'exit {code}, want 1: {doc.get("error")} {err}')
    for name, refusal in (('throws', 'program requires BPF JIT compiler'),
                          ('tail_calls_from_subprog', 'tail_calls are not allowed in non-JITed')):
        p = prog(doc, name)
        log = p.get('log') or ''
        check(p.get('verified') is True and refusal in log and 'processed' in log,
              f'{name}: verified {p.get("verified")}, log: {log[-600:]}')
        check('the verifier accepted this program' in (p.get('uml_fidelity_note') or ''),
              f'{name}: note {p.get("uml_fidelity_note")!r}')
    code, out, err = bpfuml('verify', os.path.join(PROGS, 'jit_only.bpf.o'))
    check(out.count('verified, but refused afterwards (needs a JIT)') == 2, out)
