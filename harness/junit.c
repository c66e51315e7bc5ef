// SPDX-License-Identifier: GPL-2.0
/* junit.c — JUnit XML reports for CI systems (`--junit FILE`), written with
 * libxml2's xmlTextWriter: verify's programs (one testcase each, the
 * report as the failure's message and the end of the log as its text) and
 * kselftest's tests and subtests.
 *
 * Names and logs come from objects and guests.  XML 1.0 cannot carry most
 * control characters or bytes that are not UTF-8 at all, escaped or not:
 * those become '?' before the writer sees them; it escapes the rest.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/xmlwriter.h>

#include "bpfuml.h"
#include "diag.h"
#include "junit.h"
#include "kselftest.h"
#include "verdict.h"

/* Bytes of a failure's log kept, from its end. */
#define JUNIT_LOG_TAIL 16384

/*
 * libxml2 is opened when a report is written, not linked: it brings ICU,
 * and loading those libraries cost every bpfuml command ~0.8 ms (`bpfuml
 * help` 1.2 -> 2.0 ms) for a file few runs ask for.  The writer's
 * functions are called through this table.
 */
static struct {
	typeof(xmlNewTextWriterFilename) *new_filename;
	typeof(xmlFreeTextWriter) *free_writer;
	typeof(xmlTextWriterSetIndent) *set_indent;
	typeof(xmlTextWriterStartDocument) *start_document;
	typeof(xmlTextWriterEndDocument) *end_document;
	typeof(xmlTextWriterStartElement) *start_element;
	typeof(xmlTextWriterEndElement) *end_element;
	typeof(xmlTextWriterWriteAttribute) *write_attribute;
	typeof(xmlTextWriterWriteFormatAttribute) *write_format_attribute;
	typeof(xmlTextWriterWriteString) *write_string;
} xml;

static bool xml_open(void)
{
	void *lib = xml.new_filename ? NULL : dlopen("libxml2.so.2", RTLD_NOW | RTLD_LOCAL);

	if (xml.new_filename)
		return true;
	if (!lib) {
		fprintf(stderr, "bpfuml: --junit needs libxml2 (libxml2.so.2: %s); apt-get install libxml2\n",
			dlerror());
		return false;
	}
#define LOAD(field, symbol) (xml.field = (typeof(xml.field))dlsym(lib, #symbol))
	if (!LOAD(new_filename, xmlNewTextWriterFilename) || !LOAD(free_writer, xmlFreeTextWriter) ||
	    !LOAD(set_indent, xmlTextWriterSetIndent) || !LOAD(start_document, xmlTextWriterStartDocument) ||
	    !LOAD(end_document, xmlTextWriterEndDocument) || !LOAD(start_element, xmlTextWriterStartElement) ||
	    !LOAD(end_element, xmlTextWriterEndElement) || !LOAD(write_attribute, xmlTextWriterWriteAttribute) ||
	    !LOAD(write_format_attribute, xmlTextWriterWriteFormatAttribute) ||
	    !LOAD(write_string, xmlTextWriterWriteString)) {
		fprintf(stderr, "bpfuml: --junit: libxml2.so.2 lacks %s\n", dlerror());
		xml.new_filename = NULL;
		return false;
	}
#undef LOAD
	return true;
}

/* Length of the UTF-8 sequence at S (of N bytes) that XML 1.0 accepts,
 * or 0. */
static size_t xml_char_len(const unsigned char *s, size_t n)
{
	unsigned int c;
	size_t len, i;

	if (s[0] < 0x80)
		return s[0] >= 0x20 || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' ? 1 : 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, U+FFFE/U+FFFF and beyond U+10FFFF. */
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff) || c == 0xfffe || c == 0xffff)
		return 0;
	return len;
}

/* TEXT (LEN bytes) as XML can carry it: a malloc'ed copy. */
static char *xml_safe(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)(text ?: "");
	char *out = malloc(len + 1), *o = out;
	size_t i = 0, n;

	if (!out)
		return NULL;
	while (i < len && s[i]) {
		n = xml_char_len(s + i, len - i);
		if (n) {
			memcpy(o, s + i, n);
			o += n;
			i += n;
		} else {
			*o++ = '?';
			i++;
		}
	}
	*o = '\0';
	return out;
}

static int attr(xmlTextWriterPtr w, const char *name, const char *value)
{
	char *safe = xml_safe(value, strlen(value ?: ""));
	int rc = safe ? xml.write_attribute(w, BAD_CAST name, BAD_CAST safe) : -1;

	free(safe);
	return rc;
}

static int attr_int(xmlTextWriterPtr w, const char *name, long long value)
{
	return xml.write_format_attribute(w, BAD_CAST name, "%lld", value);
}

/* <KIND message="MESSAGE" type="TYPE">the end of LOG</KIND> */
static int outcome(xmlTextWriterPtr w, const char *kind, const char *type, const char *message, const char *log)
{
	size_t len = log ? strlen(log) : 0;
	const char *tail = len > JUNIT_LOG_TAIL ? log + len - JUNIT_LOG_TAIL : log;
	int rc;

	rc = xml.start_element(w, BAD_CAST kind);
	if (rc >= 0 && type)
		rc = attr(w, "type", type);
	if (rc >= 0)
		rc = attr(w, "message", message ?: "");
	if (rc >= 0 && tail) {
		char *safe = xml_safe(tail, strlen(tail));

		rc = safe ? xml.write_string(w, BAD_CAST safe) : -1;
		free(safe);
	}
	return rc >= 0 ? xml.end_element(w) : rc;
}

static xmlTextWriterPtr junit_open(const char *path)
{
	xmlTextWriterPtr w = xml_open() ? xml.new_filename(path, 0) : NULL;

	if (w && (xml.set_indent(w, 1) < 0 || xml.start_document(w, NULL, "UTF-8", NULL) < 0)) {
		xml.free_writer(w);
		return NULL;
	}
	return w;
}

static int junit_close(xmlTextWriterPtr w, int rc)
{
	if (rc >= 0)
		rc = xml.end_document(w);
	xml.free_writer(w);
	return rc < 0 ? -1 : 0;
}

/* ---- verify ---------------------------------------------------------------- */

int junit_verify(const char *path, struct session *s, const struct summary_object *objects, size_t n,
		 double seconds)
{
	size_t i, j, tests = 0, failures = 0, errors = 0;
	xmlTextWriterPtr w = junit_open(path);
	int rc = 0;

	if (!w)
		return -1;
	for (i = 0; i < n; i++) {
		size_t progs = objects[i].programs ? json_object_array_length(objects[i].programs) : 0;

		tests += objects[i].error ? 1 : progs;
		errors += !!objects[i].error;
		for (j = 0; j < progs; j++) {
			json_object *p = json_object_array_get_idx(objects[i].programs, j);
			const char *verdict = json_str(p, "verdict") ?: "";

			if (!strcmp(verdict, "not_loaded"))
				errors++;
			else if (strcmp(verdict, "accepted"))
				failures++;
		}
	}
	rc = xml.start_element(w, BAD_CAST "testsuites");
	rc = rc < 0 ? rc : attr(w, "name", "bpfuml verify");
	rc = rc < 0 ? rc : attr_int(w, "tests", tests);
	rc = rc < 0 ? rc : attr_int(w, "failures", failures);
	rc = rc < 0 ? rc : attr_int(w, "errors", errors);
	rc = rc < 0 ? rc : xml.write_format_attribute(w, BAD_CAST "time", "%.3f", seconds);
	for (i = 0; rc >= 0 && i < n; i++) {
		size_t progs = objects[i].programs ? json_object_array_length(objects[i].programs) : 0;

		rc = xml.start_element(w, BAD_CAST "testsuite");
		rc = rc < 0 ? rc : attr(w, "name", objects[i].file);
		rc = rc < 0 ? rc : attr_int(w, "tests", objects[i].error ? 1 : progs);
		if (rc >= 0 && objects[i].error) {
			rc = xml.start_element(w, BAD_CAST "testcase");
			rc = rc < 0 ? rc : attr(w, "classname", objects[i].file);
			rc = rc < 0 ? rc : attr(w, "name", "(object)");
			rc = rc < 0 ? rc : outcome(w, "error", "not opened", objects[i].error, NULL);
			rc = rc < 0 ? rc : xml.end_element(w);
		}
		for (j = 0; rc >= 0 && j < progs; j++) {
			struct program_verdict v;
			char message[1024];

			program_verdict_init(&v, s, json_object_array_get_idx(objects[i].programs, j));
			rc = xml.start_element(w, BAD_CAST "testcase");
			rc = rc < 0 ? rc : attr(w, "classname", objects[i].file);
			rc = rc < 0 ? rc : attr(w, "name", v.name);
			program_verdict_reason(&v, message, sizeof(message));
			if (rc >= 0 && v.not_loaded)
				rc = outcome(w, "error", "not_loaded", message, NULL);
			else if (rc >= 0 && !v.accepted)
				rc = outcome(w, "failure", v.needs_jit ? "needs-jit" : v.verdict, message, v.log_text);
			rc = rc < 0 ? rc : xml.end_element(w);
			program_verdict_free(&v);
		}
		rc = rc < 0 ? rc : xml.end_element(w);
	}
	rc = rc < 0 ? rc : xml.end_element(w);
	return junit_close(w, rc);
}

/* ---- kselftest ------------------------------------------------------------- */

int junit_kselftest(const char *path, const struct ks_results *r, double wall_s)
{
	static const char *const runners[] = { "test_progs", "test_verifier", "test_maps" };
	xmlTextWriterPtr w = junit_open(path);
	int counts[KS_NR_STATUS] = { 0 }, rc;
	size_t i, k;

	if (!w)
		return -1;
	for (i = 0; i < r->n; i++)
		counts[r->v[i].status]++;
	rc = xml.start_element(w, BAD_CAST "testsuites");
	rc = rc < 0 ? rc : attr(w, "name", "bpfuml kselftest");
	rc = rc < 0 ? rc : attr_int(w, "tests", r->n);
	rc = rc < 0 ? rc : attr_int(w, "failures", counts[KS_FAIL]);
	rc = rc < 0 ? rc : attr_int(w, "errors", counts[KS_ERROR]);
	rc = rc < 0 ? rc : attr_int(w, "skipped", counts[KS_SKIP] + counts[KS_DENIED]);
	rc = rc < 0 ? rc : xml.write_format_attribute(w, BAD_CAST "time", "%.3f", wall_s);
	for (k = 0; rc >= 0 && k < sizeof(runners) / sizeof(runners[0]); k++) {
		size_t n = 0;

		for (i = 0; i < r->n; i++)
			n += !strcmp(r->v[i].runner, runners[k]);
		if (!n)
			continue;
		rc = xml.start_element(w, BAD_CAST "testsuite");
		rc = rc < 0 ? rc : attr(w, "name", runners[k]);
		rc = rc < 0 ? rc : attr_int(w, "tests", n);
		for (i = 0; rc >= 0 && i < r->n; i++) {
			const struct ks_result *x = &r->v[i];
			const char *slash = x->subtest ? strrchr(x->name, '/') : NULL;
			char *classname;

			if (strcmp(x->runner, runners[k]))
				continue;
			/* A subtest's class is its test: "atomics" for "atomics/add". */
			classname = slash ? strndup(x->name, slash - x->name) : strdup(runners[k]);
			rc = xml.start_element(w, BAD_CAST "testcase");
			rc = rc < 0 ? rc : attr(w, "classname", classname ?: runners[k]);
			rc = rc < 0 ? rc : attr(w, "name", slash ? slash + 1 : x->name);
			if (rc >= 0 && x->duration_s >= 0)
				rc = xml.write_format_attribute(w, BAD_CAST "time", "%.3f", x->duration_s);
			free(classname);
			if (rc >= 0 && x->status == KS_FAIL)
				rc = outcome(w, "failure", "failed", "failed", x->reason);
			else if (rc >= 0 && x->status == KS_ERROR)
				rc = outcome(w, "error", "error", x->reason ? "no result: its guest died or timed out" :
					     "no result", x->reason);
			else if (rc >= 0 && (x->status == KS_SKIP || x->status == KS_DENIED))
				rc = outcome(w, "skipped", NULL, x->status == KS_DENIED ?
					     (x->reason ?: "denied on UML") : (x->reason ?: "skipped"), NULL);
			rc = rc < 0 ? rc : xml.end_element(w);
		}
		rc = rc < 0 ? rc : xml.end_element(w);
	}
	rc = rc < 0 ? rc : xml.end_element(w);
	return junit_close(w, rc);
}
