# rhash.py — RHASH, one of the two 7.3 developments bpfuml is built around.
# The suite of tests/rhash itself (rhash/AREA/NAME, rhash/console_clean) is
# run by tests/run_tests.py; here: the console scan it relies on, and the
# smoke test.  kselftest_rhash_all_subtests_pass is in kselftest.py.
from testlib import KERNEL_COMPLAINTS, check, guest_program_passed, test


def kernel_complaints(console_text):
    """The console lines that say the kernel warned, oopsed or panicked."""
    return [line for line in console_text.splitlines()
            if any(word in line for word in KERNEL_COMPLAINTS)]


@test
def console_scan_finds_kernel_warnings():
    """The scan behind rhash/console_clean, on a WARN and an oops as 7.3
    prints them (kernel/panic.c __warn(), arch/um's oops) and on a clean log."""
    warn = ('------------[ cut here ]------------\n'
            'WARNING: kernel/bpf/hashtab.c:3089 at rhtab_map_update_elem+0x5c/0x2a0, CPU#0: rhash_suite/1\n'
            'Modules linked in:\n')
    oops = 'Oops: 0000 [#1] NOPTI\nKernel panic - not syncing: Attempted to kill init!\n'
    clean = 'Could not setup DMA mask for udmabuf device\nreboot: Power down\n'
    check(len(kernel_complaints(warn)) == 2, f'WARN not found: {kernel_complaints(warn)}')   # cut here + WARNING
    check(len(kernel_complaints(oops)) == 2, f'oops/panic not found: {kernel_complaints(oops)}')
    check(kernel_complaints(clean) == [], f'clean log flagged: {kernel_complaints(clean)}')


@test
def smoke_rhash_syscall_prog():
    guest_program_passed('rhash_smoke', 'rhash_smoke.bpf.o')
