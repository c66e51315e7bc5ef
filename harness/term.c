// SPDX-License-Identifier: GPL-2.0
/* term.c — text from outside bpfuml, made safe for a terminal (term.h). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <string.h>

#include "term.h"

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n, unsigned int *cp)
{
	unsigned int c = s[0], min;
	size_t need, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1, min = 0x80, c &= 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2, min = 0x800, c &= 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3, min = 0x10000, c &= 0x07;
	} else {
		return 0;
	}
	if (n <= need)
		return 0;
	for (i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and beyond U+10FFFF are invalid. */
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return need + 1;
}

static bool shown_raw(unsigned int cp, unsigned int flags)
{
	if (cp == '\t' || (cp == '\n' && (flags & TERM_KEEP_NEWLINES)))
		return true;
	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
		return false;
	if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
		return false;
	return true;
}

void term_write(FILE *out, const char *s, size_t n, unsigned int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0, len, k;
	unsigned int cp;

	while (i < n) {
		len = utf8_seq(p + i, n - i, &cp);
		if (len && shown_raw(cp, flags)) {
			i += len;
			continue;
		}
		fwrite(p + run, 1, i - run, out);
		/* An invalid byte alone; a whole control sequence byte by byte. */
		for (k = 0; k < (len ? len : 1); k++)
			fprintf(out, "\\x%02x", p[i + k]);
		i += len ? len : 1;
		run = i;
	}
	fwrite(p + run, 1, i - run, out);
}

void term_puts(FILE *out, const char *s)
{
	if (!s)
		s = "(null)";
	term_write(out, s, strlen(s), 0);
}

void term_puts_lines(FILE *out, const char *s)
{
	if (!s)
		s = "(null)";
	term_write(out, s, strlen(s), TERM_KEEP_NEWLINES);
}

char *term_escape(char *dst, size_t size, const char *s)
{
	FILE *f;
	long n;

	if (!size)
		return dst;
	dst[0] = '\0';
	f = fmemopen(dst, size, "w");
	if (!f)
		return dst;
	/* Unbuffered: what fits is in @dst even when the rest did not. */
	setbuf(f, NULL);
	term_puts(f, s);
	n = ftell(f);
	fclose(f);
	dst[n >= 0 && (size_t)n < size ? (size_t)n : size - 1] = '\0';
	return dst;
}
