# one_document.py — in JSON and SARIF modes stdout carries exactly one
# document, errors included (harness/common.c print_document/output_finish).
import json

from testlib import EXIT_INFRA, EXIT_USAGE, bpfuml, check, check_no_leftovers, test


def documents(text):
    """The JSON documents in TEXT, in order."""
    decoder, docs, i = json.JSONDecoder(), [], 0
    text = text.strip()
    while i < len(text):
        doc, i = decoder.raw_decode(text, i)
        docs.append(doc)
        while i < len(text) and text[i].isspace():
            i += 1
    return docs


@test
def bench_json_after_a_guest_failure_is_one_document():
    # The guest panics in the first row: the error goes into bench's own
    # document (before: an error document, then the results document).
    code, out, err = bpfuml('bench', '--quick', '--json', '--test-fault', 'panic', timeout=600)
    docs = documents(out)
    check(len(docs) == 1, f'{len(docs)} documents on stdout:\n{out[:1500]}')
    doc = docs[0]
    check(code == EXIT_INFRA and doc.get('exit_code') == EXIT_INFRA, f'exit {code}, document says '
          f'{doc.get("exit_code")}')
    check((doc.get('error') or {}).get('kind') == 'kernel' and 'rows' in doc,
          f'want the results with the kernel error in them: {list(doc)} {doc.get("error")}')
    check_no_leftovers()


@test
def sarif_failure_is_a_sarif_log():
    # A SARIF reader gets SARIF even when nothing could be verified: no
    # results, the invocation failed with the reason.
    code, out, err = bpfuml('verify', '--format', 'sarif', '/nonexistent/x.bpf.o')
    docs = documents(out)
    check(code == EXIT_USAGE and len(docs) == 1, f'exit {code}, {len(docs)} documents:\n{out[:1500]}')
    doc = docs[0]
    check(doc.get('version') == '2.1.0' and 'error' not in doc, f'not a SARIF log: {list(doc)}')
    invocation = doc['runs'][0]['invocations'][0]
    check(invocation['executionSuccessful'] is False and 'no such file' in
          invocation['toolExecutionNotifications'][0]['message']['text'], f'invocation {invocation}')
    check(doc['runs'][0]['results'] == [], f'results {doc["runs"][0]["results"]}')
