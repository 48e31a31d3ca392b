/* Report storage and deduplication (internal). */
#ifndef ATOM_CORE_REPORT_H
#define ATOM_CORE_REPORT_H

#include "atomicity/sys/checker.h"
#include "atomicity/report.h"
#include "support/mem.h"
#include "support/idindex.h"

/* A signature seen: its hash, and the stored report that holds it (whose signature a tag
 * match is compared with) or ATOM__SIGNATURE_DROPPED (a report not stored: its hash is all
 * that is kept of it). */
typedef struct atom__signature_seen {
  uint64_t hash;
  uint32_t report; /* index in list */
} atom__signature_seen;

#define ATOM__SIGNATURE_DROPPED UINT32_MAX

typedef struct atom__reports {
  atom_report **list;  /* stored reports in order of discovery */
  size_t count, cap;
  atom__signature_seen *seen; /* every distinct signature, stored or dropped */
  size_t n_seen, seen_cap;
  atom__idindex by_signature; /* signature hash -> index in seen */
  size_t dropped;      /* distinct reports not stored (max_reports, max_reports_per_checker) */
  size_t unconfirmed;  /* stored reports whose evidence is ATOM_EVIDENCE_PREDICTED */
  size_t observed;     /* stored reports whose evidence is ATOM_EVIDENCE_OBSERVED */
} atom__reports;

struct atom_session;
/* Copy spec into a report, deduplicate, call on_report for a new one. */
int atom__report_add(struct atom_session *s, atom_env *env, const atom_report_spec *spec);
/* atom_env_report_repeat (sys/checker.h): 1 and one more occurrence if spec's signature is
 * reported already, else 0 and nothing changes. */
int atom__report_repeat(struct atom_session *s, atom_env *env, const atom_report_spec *spec);
void atom__reports_free(atom__reports *r, atom__mem *mem);

#endif
