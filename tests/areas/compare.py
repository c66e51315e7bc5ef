# compare.py — `bpfuml compare OLD.json NEW.json`: two verify documents side
# by side (verdicts, instructions processed), as veristat -C compares runs.
import json
import os
import shutil
import tempfile

from testlib import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, FIXTURES, PROGS, bpfuml, bpfuml_json, check, test


def verify_document(tmp, name, *objects):
    """`bpfuml verify --json OBJECTS`, saved as TMP/NAME; (path, document)."""
    code, doc, err = bpfuml_json('verify', *objects)
    check(code in (EXIT_OK, EXIT_REJECTED), f'verify: exit {code} {err[-800:]}')
    path = os.path.join(tmp, name)
    with open(path, 'w') as f:
        json.dump(doc, f)
    return path, doc


def rows_by_name(doc):
    return {(r['file'], r['name']): r for r in doc['programs']}


@test
def compare_of_one_run_with_itself_changes_nothing():
    with tempfile.TemporaryDirectory() as tmp:
        a, _ = verify_document(tmp, 'a.json', os.path.join(PROGS, 'two_progs.bpf.o'))
        b, _ = verify_document(tmp, 'b.json', os.path.join(PROGS, 'two_progs.bpf.o'))
        code, doc, err = bpfuml_json('compare', a, b)
        check(code == EXIT_OK, f'exit {code}, want 0: {doc}')
        rows = rows_by_name(doc)
        check(set(rows) == {('two_progs.bpf.o', 'good_prog'), ('two_progs.bpf.o', 'bad_prog')}, f'rows {rows}')
        for r in rows.values():
            check(not r['verdict_changed'] and r['insns_diff'] == 0, f'changed: {r}')
        good = rows[('two_progs.bpf.o', 'good_prog')]['old']
        check(good['verdict'] == 'accepted' and good['insns_processed'] > 0, f'good_prog: {good}')
        check(doc['verdicts_changed'] == 0 and doc['insns_changed'] == 0, f'counts: {doc}')


@test
def compare_names_changed_verdicts_instruction_counts_and_lost_programs():
    with tempfile.TemporaryDirectory() as tmp:
        old, doc = verify_document(tmp, 'old.json', os.path.join(PROGS, 'two_progs.bpf.o'),
                                   os.path.join(PROGS, 'accepted.bpf.o'))
        # The same run as another kernel might have judged it: one verdict
        # turned, one count grown, one program gone.
        two = next(f for f in doc['files'] if f['file'].endswith('two_progs.bpf.o'))
        good = next(p for p in two['programs'] if p['name'] == 'good_prog')
        bad = next(p for p in two['programs'] if p['name'] == 'bad_prog')
        good['verdict'] = 'rejected'
        bad['diagnostics']['stats']['insns_processed'] += 7
        one = next(f for f in doc['files'] if f['file'].endswith('accepted.bpf.o'))
        lost = one['programs'].pop(0)['name']
        new = os.path.join(tmp, 'new.json')
        with open(new, 'w') as f:
            json.dump(doc, f)
        code, out, err = bpfuml('compare', old, new)
        check(code == EXIT_REJECTED, f'exit {code}, want 1: {out} {err}')
        check('accepted     rejected' in out and '<- verdict' in out, out)
        code, cmp, err = bpfuml_json('compare', old, new)
        rows = rows_by_name(cmp)
        check(rows[('two_progs.bpf.o', 'good_prog')]['verdict_changed'], f'{rows}')
        check(rows[('two_progs.bpf.o', 'bad_prog')]['insns_diff'] == 7 and
              not rows[('two_progs.bpf.o', 'bad_prog')]['verdict_changed'], f'{rows}')
        gone = rows[('accepted.bpf.o', lost)]
        check(gone['new'] is None and gone['old']['verdict'] == 'accepted' and gone['verdict_changed'],
              f'lost program: {gone}')
        check(cmp['verdicts_changed'] == 2 and cmp['exit_code'] == EXIT_REJECTED, f'{cmp}')


@test
def compare_matches_objects_by_file_name_across_directories():
    # The same objects verified from two build trees are the same programs.
    with tempfile.TemporaryDirectory() as tmp:
        other = os.path.join(tmp, 'other-tree')
        os.mkdir(other)
        names = ('two_progs.bpf.o', 'accepted.bpf.o')
        for name in names:
            shutil.copy(os.path.join(PROGS, name), other)
        a, _ = verify_document(tmp, 'a.json', *(os.path.join(PROGS, n) for n in names))
        b, _ = verify_document(tmp, 'b.json', *(os.path.join(other, n) for n in names))
        code, doc, err = bpfuml_json('compare', a, b)
        check(code == EXIT_OK, f'exit {code}: {doc}')
        check(all(r['old'] and r['new'] for r in doc['programs']) and
              {r['file'] for r in doc['programs']} == set(names), f'{doc["programs"]}')


@test
def compare_of_what_is_not_a_verify_document_is_an_input_error():
    with tempfile.TemporaryDirectory() as tmp:
        good, _ = verify_document(tmp, 'good.json', os.path.join(PROGS, 'accepted.bpf.o'))
        not_json = os.path.join(tmp, 'not.json')
        with open(not_json, 'w') as f:
            f.write('processed 12 insns\n')
        other = os.path.join(tmp, 'other.json')
        code, doc, err = bpfuml_json('parse', os.path.join(FIXTURES, 'recorded-accepted.log'))
        with open(other, 'w') as f:
            json.dump(doc, f)
        for bad, says in ((os.path.join(tmp, 'missing.json'), 'No such file'), (not_json, 'is not JSON'),
                          (other, 'is not a `bpfuml verify --json` document'), (tmp, 'Is a directory')):
            code, out, err = bpfuml('compare', good, bad)
            check(code == EXIT_USAGE and bad in err and says in err, f'{bad}: exit {code} {err!r}')
            code, doc, err = bpfuml_json('compare', bad, good)
            check(code == EXIT_USAGE and doc['error']['kind'] == 'input' and bad in doc['error']['message'],
                  f'{bad} --json: exit {code} {doc}')
        code, out, err = bpfuml('compare', good)
        check(code == EXIT_USAGE and 'usage: bpfuml compare' in err, f'one document: exit {code} {err!r}')
