# ci_action.py — the GitHub Action and the CI examples (issue 17): action.yml
# and docs/ci/*.yml parse and name only what exists; the Action's steps are
# the plain scripts of scripts/ci/, run here as a CI job runs them.
import json
import os
import re
import subprocess
import tempfile
import xml.etree.ElementTree as ET

import yaml

from testlib import BPFUML, BUILD, EXIT_REJECTED, EXIT_USAGE, PROGS, TOP, Gap, check, test

# What the Action may use from the marketplace: GitHub's own actions.
KNOWN_ACTIONS = ('actions/cache/restore@v4', 'actions/cache/save@v4', 'actions/upload-artifact@v4',
                 'actions/download-artifact@v4', 'actions/checkout@v4', 'github/codeql-action/upload-sarif@v3')


def load(path):
    with open(os.path.join(TOP, path)) as f:
        return yaml.safe_load(f)


def bpfuml_help(command):
    return subprocess.run([BPFUML, 'help', command], capture_output=True, text=True, timeout=30).stdout


def scripts_named(text):
    """The repository paths a step's shell text runs."""
    return re.findall(r'\$GITHUB_ACTION_PATH/([\w./-]+)', text)


@test
def action_yml_names_only_what_exists():
    action = load('action.yml')
    check(action['runs']['using'] == 'composite', action['runs'].get('using'))
    inputs = set(action['inputs'])
    for step in action['runs']['steps']:
        if 'uses' in step:
            check(step['uses'] in KNOWN_ACTIONS, f'unknown action {step["uses"]}')
            continue
        check(step.get('shell') == 'bash', f'a run step without shell: bash: {step}')
        for path in scripts_named(step['run']):
            check(os.access(os.path.join(TOP, path), os.X_OK), f'{path} is not an executable file of the repo')
        # Inputs reach the shell through env only (no ${{ }} in the script).
        check('${{' not in step['run'], f'an expression inside a script: {step["run"]!r}')
    text = open(os.path.join(TOP, 'action.yml')).read()
    used = set(re.findall(r'inputs\.([\w-]+)', text))
    check(used <= inputs, f'inputs used but not declared: {used - inputs}')
    steps = set(re.findall(r'steps\.([\w-]+)\.outputs', text))
    ids = {s.get('id') for s in action['runs']['steps']}
    check(steps <= ids, f'outputs of steps that do not exist: {steps - ids}')


def commands_of(node):
    """(command, args) of every use of the Action (with: command, args) and
    every scripts/ci/run.sh line in a parsed workflow."""
    if isinstance(node, dict):
        w = node.get('with')
        if isinstance(w, dict) and 'command' in w:
            yield w['command'], str(w.get('args', ''))
        for value in node.values():
            yield from commands_of(value)
    elif isinstance(node, list):
        for value in node:
            yield from commands_of(value)
    elif isinstance(node, str):
        yield from re.findall(r'scripts/ci/run\.sh \S+ ([\w-]+) ?([^\n]*)', node)


@test
def ci_examples_parse_and_use_real_options():
    options = {c: set(re.findall(r'--[a-z][a-z-]+', bpfuml_help(c))) for c in ('verify', 'kselftest', 'kselftest-merge')}
    for name in ('github-verify.yml', 'github-kselftest-matrix.yml', 'gitlab-ci.yml'):
        doc = load(os.path.join('docs', 'ci', name))
        check(isinstance(doc, dict) and doc, f'{name} is empty')
        text = open(os.path.join(TOP, 'docs', 'ci', name)).read()
        for uses in re.findall(r'uses: *([^\s#]+)', text):
            check(uses in KNOWN_ACTIONS or uses == './' or uses.endswith('/bpfuml@main'), f'{name}: uses {uses}')
        # Each command's options are options of that command.
        for command, args in commands_of(doc):
            for option in re.findall(r'--[a-z][a-z-]+', args):
                check(option in options.get(command, ()), f'{name}: {command} has no option {option}')
        for script in re.findall(r'(scripts/ci/[\w.]+)', text):
            check(os.access(os.path.join(TOP, script), os.X_OK), f'{name}: {script} does not exist')


def run_step(*args, env=None, timeout=900):
    with tempfile.NamedTemporaryFile('r', suffix='.out') as out:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, 'GITHUB_OUTPUT': out.name, **(env or {})})
        outputs = dict(line.split('=', 1) for line in out.read().splitlines() if '=' in line)
    return proc, outputs


@test
def action_setup_and_kernel_steps_run_here():
    if BUILD != os.path.join(TOP, 'build'):
        raise Gap('the Action builds into build/')
    proc, out = run_step(os.path.join(TOP, 'scripts', 'ci', 'setup.sh'), 'verify', timeout=300)
    check(proc.returncode == 0, f'setup.sh: exit {proc.returncode} {proc.stderr[-800:]}')
    with open(os.path.join(BUILD, '.kernel-key')) as f:
        key = f.read().strip()
    check(out.get('key') == f'bpfuml-kernel-{key}' and out.get('selftests') == 'no', f'setup outputs {out}')
    proc, out = run_step(os.path.join(TOP, 'scripts', 'ci', 'setup.sh'), 'kselftest', timeout=300)
    check(out.get('key', '').startswith(f'bpfuml-kernel-{key}-selftests-') and out.get('selftests') == 'yes', out)
    proc, out = run_step(os.path.join(TOP, 'scripts', 'ci', 'setup.sh'), 'deploy')
    check(proc.returncode == EXIT_USAGE and 'deploy' in proc.stderr, f'unknown command: {proc.returncode}')
    with tempfile.TemporaryDirectory(dir='/var/tmp') as tmp:
        dist = os.path.join(tmp, 'cache-entry', 'bpfuml-kernel.tar.gz')
        # No cache entry: built (here a cache hit of make) and packed for the cache to save.
        proc, out = run_step(os.path.join(TOP, 'scripts', 'ci', 'kernel.sh'), dist)
        check(proc.returncode == 0 and out.get('source') == 'built' and os.path.getsize(dist) > 1 << 20,
              f'kernel.sh without a dist: exit {proc.returncode} {out} {proc.stderr[-800:]}')
        # The entry restored: imported.
        proc, out = run_step(os.path.join(TOP, 'scripts', 'ci', 'kernel.sh'), dist)
        check(proc.returncode == 0 and out.get('source') == 'imported', f'with the dist: {out} {proc.stderr[-500:]}')
        # A stale entry (another kernel's): built again, not used.
        with open(dist, 'wb') as f:
            f.write(b'not a dist')
        proc, out = run_step(os.path.join(TOP, 'scripts', 'ci', 'kernel.sh'), dist)
        check(proc.returncode == 0 and out.get('source') == 'built', f'a stale dist: {out} {proc.stderr[-500:]}')


@test
def action_run_step_writes_what_ci_shows_for_verify():
    with tempfile.TemporaryDirectory() as tmp:
        results, summary = os.path.join(tmp, 'results'), os.path.join(tmp, 'step-summary.md')
        proc, out = run_step(os.path.join(TOP, 'scripts', 'ci', 'run.sh'), results, 'verify',
                             os.path.join(PROGS, 'rejected.bpf.o'), os.path.join(PROGS, 'accepted.bpf.o'),
                             env={'GITHUB_STEP_SUMMARY': summary}, timeout=300)
        check(proc.returncode == EXIT_REJECTED and out.get('exit-code') == str(EXIT_REJECTED),
              f'exit {proc.returncode}, outputs {out}: {proc.stderr[-800:]}')
        annotations = [l for l in proc.stdout.splitlines() if l.startswith('::error ')]
        check(len(annotations) == 1 and 'rejected' in annotations[0], f'annotations: {proc.stdout[:600]!r}')
        with open(os.path.join(results, 'verify.sarif')) as f:
            sarif = json.load(f)
        check(sarif['version'] == '2.1.0' and len(sarif['runs'][0]['results']) == 1, 'SARIF')
        suites = ET.parse(os.path.join(results, 'junit.xml')).getroot()
        check(suites.tag == 'testsuites' and suites.get('failures') == '1', ET.tostring(suites)[:300])
        with open(summary) as f:
            check('|' in f.read(), 'no summary table')
        proc, out = run_step(os.path.join(TOP, 'scripts', 'ci', 'run.sh'), results, 'deploy')
        check(proc.returncode == EXIT_USAGE and out.get('exit-code') == str(EXIT_USAGE), f'{proc.returncode} {out}')
