/* The JSON form of a report (see json_report.h). */
#include "json_report.h"

#define NAME_BUF 512

int atc_target_space(uint32_t kind) {
  switch (kind) {
  case ATOM_READ:
  case ATOM_WRITE:
  case ATOM_COMMIT:
    return ATOM_SPACE_VAR;
  case ATOM_ACQUIRE:
  case ATOM_RELEASE:
    return ATOM_SPACE_LOCK;
  case ATOM_FORK:
  case ATOM_JOIN:
    return ATOM_SPACE_THREAD;
  default:
    return 0;
  }
}

const char *atc_evidence_name(const atom_report *r) {
  const char *name = atom_evidence_name(atom_report_evidence(r));
  return name ? name : "observed";
}

const char *atc_kind_name(uint32_t kind) {
  const char *name = atom_kind_name((int)kind);
  return name ? name : "unknown";
}

void atc_json_report_members(atc_json *j, const atom_report *r, atc_name_fn name, void *payload) {
  char buf[NAME_BUF];

  atc_json_key(j, "transactions");
  atc_json_array_begin(j);
  for (size_t i = 0, n = atom_report_txn_count(r); i < n; i++) {
    uint64_t thread = 0, index = 0, loc = 0;
    if (atom_report_txn(r, i, &thread, &index, &loc) != 0) continue;
    atc_json_object_begin(j);
    atc_json_member_string(j, "thread", name(ATOM_SPACE_THREAD, thread, buf, sizeof buf, payload));
    atc_json_member_uint(j, "begin_index", index);
    atc_json_member_uint(j, "begin_loc", loc);
    const char *at = name(ATOM_SPACE_LOC, loc, buf, sizeof buf, payload);
    if (at) atc_json_member_string(j, "begin_at", at);
    atc_json_object_end(j);
  }
  atc_json_array_end(j);

  atc_json_key(j, "variables");
  atc_json_array_begin(j);
  for (size_t i = 0, n = atom_report_var_count(r); i < n; i++) {
    const char *vname = atom_report_var_name(r, i);
    if (!vname) vname = name(ATOM_SPACE_VAR, atom_report_var(r, i), buf, sizeof buf, payload);
    atc_json_string(j, vname);
  }
  atc_json_array_end(j);

  atc_json_key(j, "events");
  atc_json_array_begin(j);
  for (size_t i = 0, n = atom_report_event_count(r); i < n; i++) {
    atom_event ev;
    uint64_t index = 0;
    if (atom_report_event(r, i, &ev, &index) != 0) continue;
    atc_json_object_begin(j);
    atc_json_member_uint(j, "index", index);
    atc_json_member_string(j, "kind", atc_kind_name(ev.kind));
    atc_json_member_string(j, "thread", name(ATOM_SPACE_THREAD, ev.thread, buf, sizeof buf, payload));
    int space = atc_target_space(ev.kind);
    atc_json_member_string(j, "target", space ? name(space, ev.target, buf, sizeof buf, payload) : NULL);
    atc_json_member_uint(j, "loc", ev.loc);
    const char *at = name(ATOM_SPACE_LOC, ev.loc, buf, sizeof buf, payload);
    if (at) atc_json_member_string(j, "at", at);
    atc_json_object_end(j);
  }
  atc_json_array_end(j);
}

void atc_json_report_object(atc_json *j, const atom_report *r, atc_name_fn name, void *payload) {
  atc_json_object_begin(j);
  atc_json_member_string(j, "checker", atom_report_checker(r));
  atc_json_member_string(j, "kind", atom_report_kind(r));
  atc_json_member_uint(j, "event_index", atom_report_event_index(r));
  atc_json_member_uint(j, "count", atom_report_occurrences(r));
  atc_json_member_string(j, "evidence", atc_evidence_name(r));
  atc_json_member_string(j, "message", atom_report_message(r));
  atc_json_report_members(j, r, name, payload);
  atc_json_object_end(j);
}
