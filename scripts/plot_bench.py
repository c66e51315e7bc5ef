#!/usr/bin/env python3
"""plot_bench.py — draw `bpfuml bench --json` output as a PNG a person reads
at a glance: one pair of bars (htab, rhtab) per row, events/s on a log scale,
the rhtab/htab ratio written above each pair.

usage: plot_bench.py BENCH.json OUT.png
"""
import json
import sys

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


def main():
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
    ax.set_title(f'BPF_MAP_TYPE_RHASH vs HASH — backend {doc["backend"]}: {doc["kernel"]}', fontsize=10)
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color='#4878a8', label='htab (BPF_MAP_TYPE_HASH)'),
                       Patch(color='#e07b39', label='rhtab (BPF_MAP_TYPE_RHASH)')])
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == '__main__':
    main()
