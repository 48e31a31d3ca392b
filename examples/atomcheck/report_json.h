/* The JSON form of one report, shared by the JSON and SARIF outputs. */
#ifndef ATOMCHECK_REPORT_JSON_H
#define ATOMCHECK_REPORT_JSON_H

#include "atomcheck.h"
#include "json_writer.h"

/** Write the members "transactions", "variables" and "events" of @p r into the open object. */
void atc_json_report_details(atc_json *j, const atc_run *run, const atom_report *r);

/** Write the "stats" object's value (see doc/atomcheck.md). */
void atc_json_stats(atc_json *j, const atc_run *run);

#endif
