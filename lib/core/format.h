/* The one formatter of reports (internal): events, transactions, locations and cycles in one
 * notation for every checker and every output, rendered from a report's structured data with
 * the names and locations its session knows at the time (format.c). */
#ifndef ATOM_CORE_FORMAT_H
#define ATOM_CORE_FORMAT_H

#include <stddef.h>

#include "atomicity/report.h"

/* The longest rendering in bytes (a message, an event, a transaction, a location): a longer
 * one is cut and ends in "…". Keeps reports readable and outputs bounded whatever a checker or
 * a producer's names hold. */
#define ATOM__MESSAGE_MAX 1000

/* Is tpl a well-formed message template ({tN} {hN} {eN} {vN} {{ }}, checker.h)? */
int atom__template_valid(const char *tpl);

/* Render report r's message (its template, or the default) into buf[size], snprintf-style
 * (buf may be NULL when size is 0). Not for a literal (version-1) message.
 * @return the length of the whole rendering (at most ATOM__MESSAGE_MAX). */
int atom__report_render(char *buf, size_t size, const atom_report *r);

/* The report's template as the checker gave it (NULL: the default message). report.c */
const char *atom__report_template(const atom_report *r);

/* The report's literal message (a version-1 spec's), or NULL if it is rendered. report.c */
const char *atom__report_literal(const atom_report *r);

#endif
