#!/usr/bin/env python3
"""plot_bench.py — draw `bpfuml bench --json` output as a PNG a person reads
at a glance: one pair of bars (htab, rhtab) per row, events/s on a log scale,
the rhtab/htab ratio written above each pair.

With several BENCH.json (one per backend), it draws instead the rhtab/htab
ratio of each row per backend beside the published x86_64 ratio (from the
RHASH series, see ../shared/REFERENCE.md), so that directions compare at a
glance: above 1 rhtab is faster.

usage: plot_bench.py BENCH.json OUT.png
       plot_bench.py --ratios OUT.png BENCH.json...
"""
import json
import sys
import textwrap

try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit('plot_bench: python3-matplotlib is missing: apt-get install python3-matplotlib')


def label(row):
    if row['bench'] == 'mem':
        return f'mem\nvalue {row["value_size"]}'
    return f'{row["bench"]}\nkey {row["key_size"]}, {row["entries"]}/{row["max_entries"]}'


# The series' published x86_64 ratios (rhtab/htab), by (bench, key size,
# max_entries, entries); only rows the series reports.
PUBLISHED = {
    ('lookup', 8, 1000, 750): 0.82,
    ('lookup', 8, 1000000, 750000): 3.08,
    ('lookup', 8, 1000000, 1000000): 4.01,
    ('lookup', 32, 1000000, 750000): 1.36,
    ('lookup', 256, 1000000, 1000000): 1.20,
    ('full-update', 4, 65536, 65536): 5.25,
}


def ratios(out, paths):
    docs = []
    for path in paths:
        with open(path) as f:
            docs.append(json.load(f))
    keys = []
    for doc in docs:
        for row in doc['rows']:
            key = (row['bench'], row['key_size'], row['max_entries'], row['entries'], row['value_size'])
            if key not in keys:
                keys.append(key)
    series = [(f'published (x86_64, JIT)', {k: PUBLISHED.get(k[:4]) for k in keys})]
    for doc in docs:
        by_key = {(r['bench'], r['key_size'], r['max_entries'], r['entries'], r['value_size']): r['ratio']
                  for r in doc['rows']}
        series.append((doc['backend'], {k: by_key.get(k) for k in keys}))
    fig, ax = plt.subplots(figsize=(max(7, 1.5 * len(keys)), 5))
    width = 0.8 / len(series)
    colors = ['#444444', '#4878a8', '#e07b39', '#59a14f', '#b07aa1']
    for j, (name, values) in enumerate(series):
        for i, k in enumerate(keys):
            x = i + (j - (len(series) - 1) / 2) * width
            if values.get(k) is None:
                ax.text(x, 0.02, 'n/a', rotation=90, ha='center', va='bottom', fontsize=7,
                        transform=ax.get_xaxis_transform())
                continue
            ax.bar(x, values[k], width, color=colors[j % len(colors)], label=name if i == 0 else None)
            ax.text(x, values[k] * 1.08, f'{values[k]:.2f}', ha='center', fontsize=7)
    ax.axhline(1, color='black', linewidth=0.8)
    ax.set_yscale('log')
    ax.set_ylabel('rhtab / htab events per second (above 1: rhtab faster)')
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([label({'bench': k[0], 'key_size': k[1], 'max_entries': k[2], 'entries': k[3],
                               'value_size': k[4]}) for k in keys], fontsize=8)
    ax.set_title('BPF_MAP_TYPE_RHASH / HASH ratio per backend against the published x86_64 figures'
                 '\n(qemu under TCG is emulated, ratios only; uml interprets BPF)',
                 fontsize=9)
    handles, names = ax.get_legend_handles_labels()
    ax.legend(handles, names, fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    if sys.argv[1] == '--ratios':
        ratios(sys.argv[2], sys.argv[3:])
        return
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    rows = doc['rows']
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows)), 5))
    width = 0.38
    for i, row in enumerate(rows):
        for j, (name, color) in enumerate((('htab', '#4878a8'), ('rhtab', '#e07b39'))):
            fig_ = row[name]
            median = fig_['median_ops_per_sec']
            if median is None:
                # x in data units, y in axes units: visible whatever the scale.
                ax.text(i + (j - 0.5) * width, 0.02, f'{name}: failed', rotation=90, ha='center',
                        va='bottom', fontsize=8, color=color, transform=ax.get_xaxis_transform())
                continue
            err = [[median - fig_['min']], [fig_['max'] - median]]
            ax.bar(i + (j - 0.5) * width, median, width, color=color, yerr=err, capsize=3)
        if row['ratio']:
            top = max(row['htab']['max'] or 0, row['rhtab']['max'] or 0)
            ax.text(i, top * 1.15, f'{row["ratio"]:.2f}x', ha='center', fontsize=9)
    ax.set_yscale('log')
    ax.set_ylabel('events per second (median, min-max)')
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([label(r) for r in rows], fontsize=8)
    ax.set_title('\n'.join(textwrap.wrap(f'BPF_MAP_TYPE_RHASH vs HASH — backend {doc["backend"]}: '
                                         f'{doc["kernel"]}', 110)), fontsize=9)
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color='#4878a8', label='htab (BPF_MAP_TYPE_HASH)'),
                       Patch(color='#e07b39', label='rhtab (BPF_MAP_TYPE_RHASH)')])
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == '__main__':
    main()
