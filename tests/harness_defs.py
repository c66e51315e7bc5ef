"""harness_defs.py — the harness's one-home lists, read by the Python side:
harness/bpf_cflags.def (the clang flags of every BPF program here) and
harness/kernel_trouble.def (console lines that mean kernel trouble).  Used
by tests/testlib.py and tests/upstream/reference_cases.py."""
import os
import re

_HARNESS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'harness')


def _entries(name, macro):
    with open(os.path.join(_HARNESS, name)) as f:
        return tuple(re.findall(rf'^{macro}\("(.*)"\)', f.read(), re.M))


BPF_CFLAGS = list(_entries('bpf_cflags.def', 'BPF_CFLAG'))
KERNEL_COMPLAINTS = _entries('kernel_trouble.def', 'TROUBLE')
