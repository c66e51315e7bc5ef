/* SPDX-License-Identifier: GPL-2.0 */
/* term.h — the one place where text from outside bpfuml (a BPF object, the
 * guest, a log file) is made safe to show on a terminal.
 *
 * Program and section names, libbpf's and the verifier's messages and the
 * source lines of BTF line info are chosen by whoever wrote the object: raw,
 * an ESC or C1 CSI in them could set the terminal's clipboard (OSC 52), hide
 * text or rewrite earlier lines.  Human and gcc-style output write every such
 * string through here; JSON and SARIF are escaped by json-c instead.
 */
#ifndef BPFUML_TERM_H
#define BPFUML_TERM_H

#include <stddef.h>
#include <stdio.h>

/* Keep '\n' (for text that is printed as several lines on purpose). */
#define TERM_KEEP_NEWLINES 1u

/*
 * Write @n bytes of @s to @out.  Valid UTF-8 passes through, except C0
 * controls (other than '\t', and '\n' with TERM_KEEP_NEWLINES), DEL, the C1
 * controls U+0080..U+009F and the bidirectional overrides and isolates
 * (U+202A..U+202E, U+2066..U+2069, which reorder what a reader sees); those
 * and every byte that is not part of valid UTF-8 are written as "\xNN", one
 * per byte, so that the original bytes can still be read off.
 */
void term_write(FILE *out, const char *s, size_t n, unsigned int flags);

/* term_write() of a NUL-terminated string; NULL is written as "(null)". */
void term_puts(FILE *out, const char *s);

/* The same, with '\n' kept. */
void term_puts_lines(FILE *out, const char *s);

/*
 * term_write()'s text for a NUL-terminated @s, into @dst (at most @size
 * bytes with the NUL; cut short if longer), for columns laid out with
 * printf widths; @dst and @s must not overlap.  Returns @dst.
 */
char *term_escape(char *dst, size_t size, const char *s);

#endif
