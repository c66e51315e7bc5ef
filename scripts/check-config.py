#!/usr/bin/env python3
"""check-config.py — did every option a config fragment asked for survive?

Compares each fragment's requests with the final .config and, for every option
that did not survive, looks for the reason in the tree's Kconfig files (unmet
"depends on", a later fragment overriding it, a symbol that does not exist).

usage: check-config.py [--arch=um|x86_64] SRCTREE FINAL_CONFIG STRICT_LABEL... -- LABEL=FRAGMENT...
Fragments whose label is listed before '--' are strict: a dropped option of
theirs makes the exit status 1.  The report goes to stdout.
"""
import os
import re
import sys

OPTION_SET = re.compile(r'^(CONFIG_[A-Za-z0-9_]+)=(.*)$')
OPTION_UNSET = re.compile(r'^# (CONFIG_[A-Za-z0-9_]+) is not set$')
SYMBOL = re.compile(r'\b([A-Z][A-Z0-9_]+)\b')


def read_config(path):
    """Return {CONFIG_X: value}, value 'n' for '# ... is not set'."""
    values = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            m = OPTION_SET.match(line)
            if m:
                values[m.group(1)] = m.group(2)
                continue
            m = OPTION_UNSET.match(line)
            if m:
                values[m.group(1)] = 'n'
    return values


ARCH = 'um'


def kconfig_files(srctree):
    """Kconfig files an ARCH=um (or x86_64) build can source: all but other arches'."""
    for root, dirs, files in os.walk(srctree):
        rel = os.path.relpath(root, srctree)
        parts = rel.split(os.sep)
        if parts[0] in ('.git', 'tools', 'Documentation', 'scripts'):
            dirs[:] = []
            continue
        if parts[0] == 'arch' and len(parts) > 1:
            if parts[1] not in ('um', 'x86'):
                dirs[:] = []
                continue
            if parts[1] == 'um' and ARCH != 'um':
                dirs[:] = []
                continue
            if parts[1] == 'x86' and len(parts) > 2 and parts[2] != 'um' and ARCH == 'um':
                dirs[:] = []
                continue
        for name in files:
            if name.startswith('Kconfig'):
                yield os.path.join(root, name)


def parse_kconfig(srctree):
    """Map symbol -> list of (file, dependency expressions, has_prompt)."""
    defs = {}
    for path in kconfig_files(srctree):
        try:
            with open(path, errors='replace') as f:
                raw = f.read()
        except OSError:
            continue
        lines = raw.replace('\\\n', ' ').splitlines()
        if_stack = []
        current = None
        for line in lines:
            s = line.strip()
            if s.startswith('if '):
                if_stack.append(s[3:].strip())
                current = None
            elif s == 'endif':
                if if_stack:
                    if_stack.pop()
                current = None
            elif s.startswith(('config ', 'menuconfig ')):
                name = s.split()[1]
                current = {'file': os.path.relpath(path, srctree),
                           'depends': list(if_stack), 'prompt': False}
                defs.setdefault(name, []).append(current)
            elif s.startswith(('menu ', 'choice', 'endmenu', 'endchoice',
                               'source ', 'comment ')):
                current = None
            elif current is not None:
                if s.startswith('depends on '):
                    current['depends'].append(s[len('depends on '):])
                elif re.match(r'^(bool|tristate|string|int|hex)\s+"', s) or \
                        s.startswith('prompt '):
                    current['prompt'] = True
    return defs


def value_of(final, symbol):
    return final.get('CONFIG_' + symbol, 'n')


def explain(symbol, final, defs, depth=0, seen=None):
    """Why is SYMBOL off?  Returns a list of human-readable reasons."""
    seen = seen if seen is not None else set()
    if symbol in seen or depth > 3:
        return []
    seen.add(symbol)
    entries = defs.get(symbol)
    if not entries:
        return [f'{symbol} is not defined in this tree (for ARCH={ARCH})']
    reasons = []
    for entry in entries:
        unmet = []
        for expr in entry['depends']:
            for dep in SYMBOL.findall(expr):
                if dep in ('y', 'm', 'n') or dep == symbol:
                    continue
                negated = re.search(r'!\s*' + dep + r'\b', expr)
                value = value_of(final, dep)
                if (value == 'n') != bool(negated):
                    unmet.append((dep, value, negated, expr))
        for dep, value, negated, expr in unmet:
            state = f'{dep}={value}'
            reasons.append(f'depends on {expr.strip()} ({state}; {entry["file"]})')
            if not negated:
                reasons += ['  ' + r for r in explain(dep, final, defs,
                                                      depth + 1, seen)]
        if not unmet and not entry['prompt']:
            reasons.append(f'{symbol} has no prompt: it is only selected, '
                           f'and nothing selects it for ARCH={ARCH} ({entry["file"]})')
    return reasons


def main(argv):
    global ARCH
    if len(argv) > 1 and argv[1].startswith('--arch='):
        ARCH = argv[1][len('--arch='):]
        argv = argv[:1] + argv[2:]
    if len(argv) < 4 or '--' not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    srctree, final_path = argv[1], argv[2]
    split = argv.index('--')
    strict_labels = set(argv[3:split])
    fragments = [a.split('=', 1) for a in argv[split + 1:]]

    final = read_config(final_path)
    requests = []                     # (label, option, wanted), in merge order
    for label, path in fragments:
        for option, wanted in read_config(path).items():
            requests.append((label, option, wanted))

    last_request = {}
    for label, option, wanted in requests:
        last_request[option] = (label, wanted)

    defs = None
    dropped_strict = 0
    dropped = []
    for label, option, wanted in requests:
        got = final.get(option, 'n')
        if got == wanted:
            continue
        if defs is None:
            defs = parse_kconfig(srctree)
        later_label, later_wanted = last_request[option]
        if later_label != label and later_wanted == got:
            why = [f'overridden by {later_label} ({option}={later_wanted})']
        else:
            why = explain(option[len('CONFIG_'):], final, defs) or \
                ['no reason found in Kconfig (a choice, a range, or a select)']
        dropped.append((label, option, wanted, got, why))
        if label in strict_labels:
            dropped_strict += 1

    by_label = {}
    for item in dropped:
        by_label.setdefault(item[0], []).append(item)
    for label, items in by_label.items():
        print(f'{label}: {len(items)} option(s) not carried')
        for _, option, wanted, got, why in items:
            print(f'  {option}={wanted} -> {got}')
            for line in why:
                print(f'      {line}')
    if not dropped:
        print('every requested option is in the final .config')
    return 1 if dropped_strict else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
