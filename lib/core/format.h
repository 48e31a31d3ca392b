/* The one formatter of reports (internal): events, transactions, locations and cycles in one
 * notation for every checker and every output, rendered from a report's structured data with
 * the names and locations its session knows at the time (format.c). */
#ifndef ATOM_CORE_FORMAT_H
#define ATOM_CORE_FORMAT_H

#include <stddef.h>

#include "atomicity/report.h"

/* Is tpl a well-formed message template ({tN} {hN} {eN} {vN} {{ }}, checker.h)? */
int atom__template_valid(const char *tpl);

/* Render report r's message (its template, or the default) into buf[size], snprintf-style.
 * @return the full length. */
int atom__report_render(char *buf, size_t size, const atom_report *r);

/* The report's template as the checker gave it (NULL: the default message). report.c */
const char *atom__report_template(const atom_report *r);

#endif
