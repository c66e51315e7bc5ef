# bench.py — `bpfuml bench` (functional only: figures are printed by the
# benchmark itself, never asserted).
from testlib import EXIT_OK, bpfuml_json, check, test


@test
def bench_quick_profile_reports_every_row():
    code, doc, err = bpfuml_json('bench', '--quick', '--samples', '1', timeout=600)
    check(code == EXIT_OK, f'exit {code}: {doc.get("error")}')
    check(doc['backend'] == 'uml' and doc['kernel'].startswith('UML 7.3'), doc.get('kernel'))
    check(len(doc['rows']) == 6, f'{len(doc["rows"])} rows')
    for row in doc['rows']:
        for name in ('htab', 'rhtab'):
            fig = row[name]
            # Either a figure, or the reason there is none: never silence.
            check(fig['median_ops_per_sec'] or fig['raw'].get('error'),
                  f'{row["bench"]} {name}: neither a figure nor an error: {fig["raw"]}')
        if row['bench'] == 'lookup':
            check(row['htab']['median_ops_per_sec'] > 0, f'htab lookup has no figure: {row}')
