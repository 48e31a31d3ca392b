/* The JSON form of a report (doc/atomcheck.md, "JSON output"), shared by atomcheck and the
 * tsan-rt runtime so that both print the same schema. Names of threads, variables and locks
 * come from a callback, since each program knows its own. */
#ifndef ATOMICITY_EXAMPLES_JSON_REPORT_H
#define ATOMICITY_EXAMPLES_JSON_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include <atomicity.h>

#include "json_writer.h"

/**
 * The readable name of @p key in @p space (an atom_space). Write it into @p buf (of @p size
 * bytes) or return a string that stays valid until the next call. For ATOM_SPACE_LOC, NULL
 * when the location has no name (the members "begin_at" and "at" are then left out).
 */
typedef const char *(*atc_name_fn)(int space, uint64_t key, char *buf, size_t size,
                                   void *payload);

/** Write the members "transactions", "variables" and "events" of @p r into the open object. */
void atc_json_report_members(atc_json *j, const atom_report *r, atc_name_fn name, void *payload);

/** Write one report as an object: checker, kind, event_index, count, evidence, message and
 *  the above. */
void atc_json_report_object(atc_json *j, const atom_report *r, atc_name_fn name, void *payload);

/** @return the atom_space of the target of an event of @p kind, or 0 if it has none. */
int atc_target_space(uint32_t kind);

/** @return "observed", "predicted" or "confirmed" (atom_report_evidence()). */
const char *atc_evidence_name(const atom_report *r);

/** @return the lower-case name of @p kind ("read"), or "unknown". */
const char *atc_kind_name(uint32_t kind);

#endif
