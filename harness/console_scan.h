/* SPDX-License-Identifier: GPL-2.0 */
/* console_scan.h — reading a guest's console (session.c; tested on recorded
 * consoles by tests/unit/test_parsers.c). */
#ifndef BPFUML_CONSOLE_SCAN_H
#define BPFUML_CONSOLE_SCAN_H

#include <stddef.h>

/* The first line of LOG[0..LEN) that means kernel trouble (a line of
 * kernel_trouble.def) and the 24 lines after it, the trace that explains
 * it: malloc'ed, or NULL when there is none. */
char *console_find_trouble(const char *log, size_t len);
/* The last lines of LOG, when nothing better explains a failure. */
char *console_tail(const char *log, size_t len);

#endif
