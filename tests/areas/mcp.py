# mcp.py — `bpfuml mcp`: the Model Context Protocol server that agents use
# (JSON-RPC 2.0 on stdio; both the initialize handshake and 2026-07-28's
# stateless requests).
import glob
import json
import os
import select
import subprocess
import time

from testlib import (BPFUML, BUILD, SRC_PROGS, Failure, check, check_no_leftovers, fake_selftests_build_dir, test)

MODERN = {'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {}}


class Client:
    def __init__(self, env=None):
        self.proc = subprocess.Popen([BPFUML, 'mcp'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
        self.pending = b''
        self.next_id = 0
        self.notifications = []

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + '\n').encode())
        self.proc.stdin.flush()

    def message(self, within=300):
        deadline = time.monotonic() + within
        while b'\n' not in self.pending:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0, deadline - time.monotonic()))
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20) if ready else b''
            if not chunk:
                raise Failure(f'no message from bpfuml mcp; stderr: {self.proc.stderr.read1(4096)!r}'
                              if not ready else 'bpfuml mcp closed its stdout')
            self.pending += chunk
        line, self.pending = self.pending.split(b'\n', 1)
        return json.loads(line)

    def request(self, method, params=None, within=300):
        self.next_id += 1
        self.send({'jsonrpc': '2.0', 'id': self.next_id, 'method': method, **({'params': params} if params else {})})
        while True:
            msg = self.message(within)
            if 'id' in msg and msg['id'] == self.next_id:
                return msg
            self.notifications.append(msg)

    def close(self):
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        return code, self.proc.stderr.read().decode(errors='replace')


def call(client, name, arguments, **extra):
    msg = client.request('tools/call', {'name': name, 'arguments': arguments, **extra})
    check('result' in msg, f'tools/call {name}: {msg}')
    return msg['result']


@test
def mcp_session_verifies_inline_sources_and_files():
    before = set(glob.glob('/tmp/bpfuml-mcp.*') + glob.glob('/tmp/bpfuml-serve.*'))
    client = Client()
    init = client.request('initialize', {'protocolVersion': '2025-11-25', 'capabilities': {},
                                         'clientInfo': {'name': 'test', 'version': '1'}})
    check(init['result']['protocolVersion'] == '2025-11-25' and 'tools' in init['result']['capabilities'],
          f'initialize: {init}')
    client.send({'jsonrpc': '2.0', 'method': 'notifications/initialized'})
    tools = {t['name']: t for t in client.request('tools/list')['result']['tools']}
    check(set(tools) == {'verify', 'run', 'parse_log', 'probe', 'kselftest'}, f'tools: {sorted(tools)}')
    check(all(t['inputSchema']['type'] == 'object' for t in tools.values()) and
          'reports' in tools['verify']['outputSchema']['properties'], 'schemas')

    # Inline source with a bug: the report's category and where, first.
    with open(os.path.join(SRC_PROGS, 'rejected.bpf.c')) as f:
        buggy = f.read()
    result = call(client, 'verify', {'source': buggy, 'name': 'buggy.bpf.c'})
    report = result['structuredContent']['reports'][0]
    check(not result['isError'] and list(result['structuredContent'])[0] == 'reports', f'{result}')
    check(report['verdict'] == 'rejected' and report['category'] == 'Register Type Safety' and
          report['at']['location']['file'] == 'buggy.bpf.c' and report['suggestion'],
          f'report: {report}')
    check(result['structuredContent']['schema'] == 'bpfuml-verify/1', 'the document follows the reports')
    check('buggy.bpf.c unchecked_lookup: rejected' in result['content'][0]['text'], f'{result["content"][0]}')
    # A good one.
    with open(os.path.join(SRC_PROGS, 'accepted.bpf.c')) as f:
        good = f.read()
    result = call(client, 'verify', {'source': good})
    check(not result['isError'] and result['structuredContent']['reports'][0]['verdict'] == 'accepted',
          f'{result["structuredContent"]["reports"]}')
    # Bad calls: a file that does not exist, both path and source, oversized
    # source, an unknown tool, a malformed message; the server stays up.
    result = call(client, 'verify', {'path': '/nonexistent/prog.bpf.o'})
    check(result['isError'] and '/nonexistent/prog.bpf.o' in result['content'][0]['text'], f'{result}')
    result = call(client, 'verify', {'path': 'x.bpf.o', 'source': good})
    check(result['isError'], f'{result}')
    result = call(client, 'verify', {'source': 'x' * (2 << 20)})
    check(result['isError'] and '1 MiB' in result['content'][0]['text'], 'oversized source')
    msg = client.request('tools/call', {'name': 'format_disk', 'arguments': {}})
    check(msg.get('error', {}).get('code') == -32602, f'unknown tool: {msg}')
    client.send({'jsonrpc': '2.0', 'id': 99, 'method': 'tools/call', 'params': 'not an object'})
    check(client.message().get('error', {}).get('code') == -32600, 'malformed params')
    client.proc.stdin.write(b'{not json\n')
    client.proc.stdin.flush()
    check(client.message().get('error', {}).get('code') == -32700, 'parse error')
    # On several kernels (verify --kernels): each report names its kernel.
    kernels = sorted(os.listdir(os.path.join(BUILD, 'kernels')))
    kernels = [k for k in kernels if not k.endswith('-qemu')]
    result = call(client, 'verify', {'source': buggy, 'name': 'buggy.bpf.c', 'kernels': kernels})
    reports = result['structuredContent']['reports']
    check(not result['isError'] and sorted(r['kernel'] for r in reports) == kernels
          and all(r['verdict'] == 'rejected' for r in reports)
          and result['structuredContent']['schema'] == 'bpfuml-verify-matrix/1', f'{result["structuredContent"]}')
    check(all(f'[kernel {k}] buggy.bpf.c unchecked_lookup: rejected' in result['content'][0]['text']
              for k in kernels), f'{result["content"][0]["text"]}')
    # parse_log needs no guest.
    result = call(client, 'parse_log', {'log': 'R1 invalid mem access \'scalar\'\nprocessed 3 insns\n'})
    check(not result['isError'] and result['structuredContent']['schema'].startswith('bpfuml-'), f'{result}')
    code, err = client.close()
    check(code == 0, f'exit {code}: {err[-2000:]}')
    after = set(glob.glob('/tmp/bpfuml-mcp.*') + glob.glob('/tmp/bpfuml-serve.*'))
    check(after <= before, f'left behind: {after - before}')
    check_no_leftovers()


@test
def mcp_speaks_the_stateless_revision():
    client = Client()
    found = client.request('server/discover', {'_meta': MODERN})['result']
    check(found['resultType'] == 'complete' and found['supportedVersions'][0] == '2026-07-28' and
          'tools' in found['capabilities'], f'{found}')
    listed = client.request('tools/list', {'_meta': MODERN})['result']
    check(listed['resultType'] == 'complete' and len(listed['tools']) == 5, f'{listed}')
    bad = client.request('tools/list', {'_meta': {**MODERN, 'io.modelcontextprotocol/protocolVersion': '2099-01-01'}})
    check(bad.get('error', {}).get('code') == -32022 and '2026-07-28' in bad['error']['data']['supported'],
          f'{bad}')
    code, err = client.close()
    check(code == 0, f'exit {code}: {err}')


@test
def mcp_kselftest_sends_progress_as_guests_finish():
    client = Client(env={'BPFUML_BUILD_DIR': fake_selftests_build_dir()})
    client.request('initialize', {'protocolVersion': '2025-06-18', 'capabilities': {},
                                  'clientInfo': {'name': 'test', 'version': '1'}})
    result = call(client, 'kselftest', {'filter': 'alpha,gamma,zeta'}, _meta={'progressToken': 'k1'})
    progress = [n['params'] for n in client.notifications if n.get('method') == 'notifications/progress']
    check(progress and all(p['progressToken'] == 'k1' for p in progress), f'notifications: {client.notifications}')
    check(any('done' in p.get('message', '') for p in progress), f'no guest progress: {progress}')
    doc = result['structuredContent']
    check(doc['schema'] == 'bpfuml-kselftest/1' and {'alpha', 'gamma', 'zeta'} <= {r['name'] for r in doc['results']},
          f'{doc.get("schema")}: {[r["name"] for r in doc.get("results", [])]}')
    code, err = client.close()
    check(code == 0, f'exit {code}: {err[-2000:]}')
    check_no_leftovers()
