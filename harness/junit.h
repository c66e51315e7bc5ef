/* SPDX-License-Identifier: GPL-2.0 */
/* junit.h — JUnit XML reports for CI systems (junit.c). */
#ifndef BPFUML_JUNIT_H
#define BPFUML_JUNIT_H

#include <json-c/json.h>
#include <stddef.h>

struct session;
struct ks_results;

#include "summary.h"	/* struct summary_object: a verify run's objects */

/* Write the report of a verify run (SECONDS: its guest's time) to PATH;
 * 0, or -1. */
int junit_verify(const char *path, struct session *s, const struct summary_object *objects, size_t n,
		 double seconds);
/* Write the report of a kselftest run to PATH; 0, or -1. */
int junit_kselftest(const char *path, const struct ks_results *r, double wall_s);

#endif
