/* Report storage and deduplication (internal). */
#ifndef ATOM_CORE_REPORT_H
#define ATOM_CORE_REPORT_H

#include "atomicity/sys/checker.h"
#include "atomicity/report.h"
#include "support/mem.h"
#include "support/u64map.h"

typedef struct atom__reports {
  atom_report **list;  /* stored reports in order of discovery */
  size_t count, cap;
  atom__u64map by_signature; /* signature -> index in list */
  size_t dropped;      /* distinct reports not stored (max_reports, max_reports_per_checker) */
  size_t unconfirmed;  /* stored reports whose evidence is ATOM_EVIDENCE_PREDICTED */
  size_t observed;     /* stored reports whose evidence is ATOM_EVIDENCE_OBSERVED */
} atom__reports;

struct atom_session;
/* Copy spec into a report, deduplicate, call on_report for a new one. */
int atom__report_add(struct atom_session *s, atom_env *env, const atom_report_spec *spec);
void atom__reports_free(atom__reports *r, atom__mem *mem);

#endif
