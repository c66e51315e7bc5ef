// SPDX-License-Identifier: GPL-2.0
/* options.c — option values, parsed in one place: whole numbers within their
 * range and one-of-a-list words.  A bad value is said with the option, the
 * value and what is accepted, and is a usage error (exit 2).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

int option_uint(const struct common_opts *opts, const char *name, const char *arg,
		unsigned int min, unsigned int max, const char *unit, unsigned int *out)
{
	unsigned long long v;
	char *end;

	/* Digits only: strtoull would take "-1" (as 2^64-1), " 5" and "+5". */
	errno = 0;
	v = isdigit((unsigned char)arg[0]) ? strtoull(arg, &end, 10) : 0;
	if (!isdigit((unsigned char)arg[0]) || *end || errno || v < min || v > max)
		return fail(opts, EXIT_USAGE, "usage", "%s wants a whole number%s%s from %u to %u, not '%s'",
			    name, unit ? " of " : "", unit ?: "", min, max, arg);
	*out = v;
	return EXIT_OK;
}

int option_enum(const struct common_opts *opts, const char *name, const char *arg,
		const char *const choices[], int *out)
{
	char list[256] = "";
	size_t len = 0;
	int i, n;

	for (n = 0; choices[n]; n++) {
		if (!strcmp(arg, choices[n])) {
			*out = n;
			return EXIT_OK;
		}
	}
	for (i = 0; i < n && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
				choices[i]);
	return fail(opts, EXIT_USAGE, "usage", "%s wants %s, not '%s'", name, list, arg);
}
