// SPDX-License-Identifier: GPL-2.0
/* kselftest_gate.c — a kselftest result read back (ks_results_load: a
 * baseline, the parts kselftest-merge joins), and `kselftest --baseline
 * FILE`: the run judged against an earlier one, as a pre-submit gate.  A test or subtest that passed in the
 * baseline and does not pass now (failed, skipped, denied, no result, or
 * missing) is a regression; cmd_kselftest.c runs each regressed test_progs
 * test once more alone, and one that passes then is reported flaky, not
 * failed.  Tests that pass now and did not then are listed as candidates
 * for a new baseline.  The baseline is a `kselftest --json` document (what
 * --write-baseline writes), read as the user's file: size-capped, its
 * shape checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfuml.h"
#include "kselftest.h"

#define KS_RESULTS_MAX ((size_t)256 << 20)

static enum ks_status status_of_name(const char *name)
{
	for (int s = 0; s < KS_NR_STATUS; s++)
		if (!strcmp(name, ks_status_name[s]))
			return s;
	return KS_NR_STATUS;
}

int ks_results_load(struct ks_results *r, const char *path, double *wall_s, int *jobs, char *why, size_t len)
{
	json_object *doc, *results, *wall;
	size_t i;

	doc = read_our_document(path, KS_RESULTS_MAX, "kselftest", why, len);
	if (!doc)
		return -1;
	if (!json_object_object_get_ex(doc, "results", &results) || !json_object_is_type(results, json_type_array)) {
		snprintf(why, len, "is not a `bpfuml kselftest --json` document (it has no results)");
		json_object_put(doc);
		return -1;
	}
	for (i = 0; i < json_object_array_length(results); i++) {
		json_object *x = json_object_array_get_idx(results, i);
		const char *runner = json_str(x, "runner"), *name = json_str(x, "name"), *status = json_str(x, "status");
		json_object *sub = NULL, *duration = NULL;
		struct ks_result *added;

		if (!runner || !name || !status || status_of_name(status) == KS_NR_STATUS) {
			snprintf(why, len, "has a result (results[%zu]) without runner, name or known status", i);
			json_object_put(doc);
			return -1;
		}
		json_object_object_get_ex(x, "subtest", &sub);
		added = ks_add(r, runner, name, sub && json_object_get_boolean(sub), status_of_name(status),
			       json_str(x, "reason"));
		if (json_object_object_get_ex(x, "duration_s", &duration) &&
		    (json_object_is_type(duration, json_type_double) || json_object_is_type(duration, json_type_int)) &&
		    json_object_get_double(duration) >= 0 && json_object_get_double(duration) < 1e6)
			added->duration_s = json_object_get_double(duration);
		/* A guest's CPUs, as --cpus allows them. */
		if (json_int(x, "cpus", 0) > 0 && json_int(x, "cpus", 0) <= 64)
			added->cpus = json_int(x, "cpus", 0);
		json_object *first = NULL;

		if (json_object_object_get_ex(x, "first_run", &first) && json_str(first, "status") &&
		    status_of_name(json_str(first, "status")) < KS_NR_STATUS) {
			added->first_status = status_of_name(json_str(first, "status"));
			if (json_int(first, "cpus", 0) > 0 && json_int(first, "cpus", 0) <= 64)
				added->first_cpus = json_int(first, "cpus", 0);
			if (json_str(first, "reason"))
				added->first_reason = strdup(json_str(first, "reason"));
		}
	}
	if (wall_s)
		*wall_s = json_object_object_get_ex(doc, "wall_s", &wall) ? json_object_get_double(wall) : 0;
	if (jobs)
		*jobs = json_int(doc, "jobs", 0);
	json_object_put(doc);
	return 0;
}

static int add_change(struct ks_gate *g, const struct ks_result *was, const struct ks_result *now)
{
	struct ks_change *grown = realloc(g->changes, (g->n_changes + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	g->changes = grown;
	g->changes[g->n_changes++] = (struct ks_change){
		.runner = now ? now->runner : was->runner,
		.name = now ? now->name : was->name,
		.subtest = now ? now->subtest : was->subtest,
		.was = was ? (int)was->status : -1,
		.now = now ? (int)now->status : -1,
	};
	return 0;
}

int ks_gate_compare(struct ks_gate *g, struct ks_results *now, bool (*selected)(const char *runner, void *ctx),
		    bool missing_counts, void *ctx)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < g->base.n; i++) {
		const struct ks_result *was = &g->base.v[i];
		struct ks_result *cur = ks_find(now, was->runner, was->name);

		if (!selected(was->runner, ctx) || (!cur && !missing_counts))
			continue;
		if (was->status == KS_PASS && (!cur || cur->status != KS_PASS))
			err = add_change(g, was, cur);
	}
	for (i = 0; !err && i < now->n; i++) {
		const struct ks_result *cur = &now->v[i];
		struct ks_result *was = ks_find(&g->base, cur->runner, cur->name);

		if (cur->status == KS_PASS && (!was || was->status != KS_PASS))
			err = add_change(g, was, cur);
	}
	return err;
}

bool ks_change_is_regression(const struct ks_change *c)
{
	return c->was == KS_PASS && c->now != KS_PASS;
}

size_t ks_gate_regressions(const struct ks_gate *g, bool count_flaky)
{
	size_t i, n = 0;

	for (i = 0; i < g->n_changes; i++)
		n += ks_change_is_regression(&g->changes[i]) && (count_flaky || !g->changes[i].flaky);
	return n;
}

void ks_gate_mark_flaky(struct ks_gate *g, struct ks_results *retried)
{
	for (size_t i = 0; i < g->n_changes; i++) {
		struct ks_change *c = &g->changes[i];
		struct ks_result *again = ks_find(retried, c->runner, c->name);

		if (ks_change_is_regression(c) && again && again->status == KS_PASS)
			c->flaky = true;
	}
}

static const char *state(int s)
{
	return s < 0 ? "missing" : ks_status_name[s];
}

void ks_gate_print(FILE *out, const struct ks_gate *g, const char *file)
{
	size_t i, new_passes = g->n_changes - ks_gate_regressions(g, true);

	fprintf(out, "# baseline %s: %zu regression(s), %zu flaky, %zu new pass(es)\n", file,
		ks_gate_regressions(g, false), ks_gate_regressions(g, true) - ks_gate_regressions(g, false),
		new_passes);
	for (i = 0; i < g->n_changes; i++) {
		const struct ks_change *c = &g->changes[i];

		fprintf(out, "#   %s %s: %s -> %s\n",
			!ks_change_is_regression(c) ? "new pass  " : c->flaky ? "flaky     " : "REGRESSION",
			c->name, state(c->was), state(c->now));
	}
}

json_object *ks_gate_json(const struct ks_gate *g, const char *file)
{
	json_object *doc = json_object_new_object(), *lists[3];
	static const char *const keys[] = { "regressions", "flaky", "new_passes" };
	size_t i;

	for (i = 0; i < 3; i++)
		lists[i] = json_object_new_array();
	for (i = 0; i < g->n_changes; i++) {
		const struct ks_change *c = &g->changes[i];
		json_object *x = json_object_new_object();
		int list = !ks_change_is_regression(c) ? 2 : c->flaky ? 1 : 0;

		json_object_object_add(x, "runner", json_object_new_string(c->runner));
		json_object_object_add(x, "name", json_object_new_string(c->name));
		json_object_object_add(x, "was", json_object_new_string(state(c->was)));
		json_object_object_add(x, "now", json_object_new_string(state(c->now)));
		json_object_array_add(lists[list], x);
	}
	json_object_object_add(doc, "file", json_object_new_string(file));
	for (i = 0; i < 3; i++)
		json_object_object_add(doc, keys[i], lists[i]);
	return doc;
}

void ks_gate_free(struct ks_gate *g)
{
	ks_free(&g->base);
	free(g->changes);
	memset(g, 0, sizeof(*g));
}
