/* SPDX-License-Identifier: GPL-2.0 */
/* summary.h — Markdown summaries for CI pages (summary.c). */
#ifndef BPFUML_SUMMARY_H
#define BPFUML_SUMMARY_H

#include <json-c/json.h>
#include <stddef.h>

struct session;
struct ks_results;


/* One object of a verify run: its programs (the guest's records), or why
 * it could not be opened. */
struct summary_object {
	const char *file;
	json_object *programs;
	const char *error;
};

/* Append a verify run's summary to PATH; 0, or -1 with errno set. */
int summary_verify(const char *path, struct session *s, const struct summary_object *objects, size_t n);
/* Append a kselftest run's summary to PATH; 0, or -1 with errno set. */
int summary_kselftest(const char *path, const struct ks_results *r, double wall_s);

#endif
