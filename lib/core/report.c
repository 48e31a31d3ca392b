/* Reports: copied out of the checker's spec into session-owned memory, deduplicated by a
 * signature (checker, kind, begin locations of the transactions, extra) so that a violation
 * inside a loop is one report with a count. */
#include "core/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/kinds.h"
#include "core/session.h"

typedef struct witness {
  atom_event ev;
  uint64_t index;
} witness;

typedef struct txn {
  uint64_t thread, begin_index, begin_loc;
  int unary;
} txn;

struct atom_report {
  size_t checker_index;
  const char *checker;
  char *kind;
  char *message;
  uint64_t event_index;
  uint64_t occurrences;
  uint64_t extra;
  int evidence; /* ATOM_EVIDENCE_* */
  txn *txns;
  size_t n_txns;
  uint64_t *sorted_locs; /* the signature's locations */
  witness *events;
  size_t n_events;
  uint64_t *vars;
  char **var_names;
  size_t n_vars;
};

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}


/* The dedup signature: checker, kind, sorted begin locations, extra. */
typedef struct signature {
  size_t checker_index;
  const char *kind;
  const uint64_t *locs; /* sorted */
  size_t n;
  uint64_t extra;
} signature;

static uint64_t signature_hash(const signature *g) {
  uint64_t h = atom__hash_mix(0x5157, g->checker_index);
  for (const char *p = g->kind; *p; p++) h = atom__hash_mix(h, (unsigned char)*p);
  for (size_t i = 0; i < g->n; i++) h = atom__hash_mix(h, g->locs[i]);
  return atom__hash_mix(h, g->extra);
}

static int signature_matches(const atom_report *r, const signature *g) {
  return r->checker_index == g->checker_index && r->extra == g->extra && r->n_txns == g->n &&
         strcmp(r->kind, g->kind) == 0 &&
         /* n == 0: a report without transactions has no array (NULL) to compare */
         (g->n == 0 || memcmp(r->sorted_locs, g->locs, g->n * sizeof(uint64_t)) == 0);
}

static void report_free(atom_report *r, atom__mem *mem) {
  if (!r) return;
  atom__mem_strfree(mem, r->kind);
  atom__mem_strfree(mem, r->message);
  atom__mem_free(mem, r->txns, r->n_txns * sizeof *r->txns);
  atom__mem_free(mem, r->sorted_locs, r->n_txns * sizeof *r->sorted_locs);
  atom__mem_free(mem, r->events, r->n_events * sizeof *r->events);
  if (r->var_names)
    for (size_t i = 0; i < r->n_vars; i++) atom__mem_strfree(mem, r->var_names[i]);
  atom__mem_free(mem, r->var_names, r->n_vars * sizeof *r->var_names);
  atom__mem_free(mem, r->vars, r->n_vars * sizeof *r->vars);
  atom__mem_free(mem, r, sizeof *r);
}

/* The default one-line message: "<kind>: transactions a@1 (loc 7), b@4 (loc 9)". */
static char *default_message(atom_session *s, const atom_report *r) {
  char buf[512], label[96];
  size_t n = (size_t)snprintf(buf, sizeof buf, "%s: transactions", r->kind);
  for (size_t i = 0; i < r->n_txns && n < sizeof buf; i++)
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s %s@%llu (loc %llu)", i ? "," : "",
                          atom__key_label(s, ATOM_SPACE_THREAD, r->txns[i].thread, label,
                                          sizeof label),
                          (unsigned long long)r->txns[i].begin_index,
                          (unsigned long long)r->txns[i].begin_loc);
  return atom__mem_strdup(&s->mem, buf);
}

static int report_build(atom_session *s, atom_env *env, const atom_report_spec *spec,
                        atom_report **out) {
  atom__mem *mem = &s->mem;
  atom_report *r = atom__mem_calloc(mem, 1, sizeof *r);
  if (!r) return ATOM_ENOMEM;
  r->checker_index = env->index;
  r->checker = env->vt->name;
  r->event_index = spec->event_index;
  r->occurrences = 1;
  r->extra = spec->signature_extra;
  r->evidence = spec->flags & ATOM_REPORT_PREDICTED ? ATOM_EVIDENCE_PREDICTED
                                                     : ATOM_EVIDENCE_OBSERVED;
  r->kind = atom__mem_strdup(mem, spec->kind);
  if (!r->kind) goto oom;
  if (spec->n_txns) {
    r->txns = atom__mem_calloc(mem, spec->n_txns, sizeof *r->txns);
    r->sorted_locs = atom__mem_calloc(mem, spec->n_txns, sizeof *r->sorted_locs);
    if (!r->txns || !r->sorted_locs) {
      atom__mem_free(mem, r->txns, spec->n_txns * sizeof *r->txns);
      atom__mem_free(mem, r->sorted_locs, spec->n_txns * sizeof *r->sorted_locs);
      r->txns = NULL;
      r->sorted_locs = NULL;
      goto oom;
    }
    r->n_txns = spec->n_txns;
    for (size_t i = 0; i < spec->n_txns; i++) {
      r->txns[i].thread = atom__intern_key(s, ATOM_SPACE_THREAD, spec->txns[i].thread);
      r->txns[i].begin_index = spec->txns[i].begin_index;
      r->txns[i].begin_loc = spec->txns[i].begin_loc;
      r->txns[i].unary = spec->txns[i].unary != 0;
      r->sorted_locs[i] = spec->txns[i].begin_loc;
    }
    qsort(r->sorted_locs, r->n_txns, sizeof *r->sorted_locs, cmp_u64);
  }
  if (spec->n_events) {
    r->events = atom__mem_calloc(mem, spec->n_events, sizeof *r->events);
    if (!r->events) goto oom;
    r->n_events = spec->n_events;
    for (size_t i = 0; i < spec->n_events; i++) {
      const atom_ev *e = &spec->events[i];
      int sp = atom__kind_space(e->kind);
      r->events[i].index = e->index;
      r->events[i].ev.kind = e->kind;
      r->events[i].ev.thread = atom__intern_key(s, ATOM_SPACE_THREAD, e->thread);
      r->events[i].ev.target = sp ? atom__intern_key(s, sp, e->target) : 0;
      r->events[i].ev.loc = e->loc;
    }
  }
  if (spec->n_vars) {
    r->vars = atom__mem_calloc(mem, spec->n_vars, sizeof *r->vars);
    if (!r->vars) goto oom;
    r->var_names = atom__mem_calloc(mem, spec->n_vars, sizeof *r->var_names);
    if (!r->var_names) {
      atom__mem_free(mem, r->vars, spec->n_vars * sizeof *r->vars);
      r->vars = NULL;
      goto oom;
    }
    r->n_vars = spec->n_vars;
    for (size_t i = 0; i < spec->n_vars; i++) {
      r->vars[i] = atom__intern_key(s, ATOM_SPACE_VAR, spec->vars[i]);
      const char *name = atom__names_get(&s->names, ATOM_SPACE_VAR, r->vars[i]);
      if (name && !(r->var_names[i] = atom__mem_strdup(mem, name))) goto oom;
    }
  }
  r->message = spec->message ? atom__mem_strdup(mem, spec->message) : default_message(s, r);
  if (!r->message) goto oom;
  *out = r;
  return 0;
oom:
  report_free(r, mem);
  return ATOM_ENOMEM;
}

/* Does observed report o involve the atomic blocks of predicted report p? Every begin location
 * of p's non-unary transactions (at least one) is the begin location of a non-unary transaction
 * of o. Reports name a handful of transactions: the nested loops cost nothing. */
static int confirms(const atom_report *o, const atom_report *p) {
  size_t atomic = 0;
  for (size_t i = 0; i < p->n_txns; i++) {
    if (p->txns[i].unary) continue;
    atomic++;
    size_t j = 0;
    while (j < o->n_txns && (o->txns[j].unary || o->txns[j].begin_loc != p->txns[i].begin_loc))
      j++;
    if (j == o->n_txns) return 0;
  }
  return atomic > 0;
}

/* A new stored report r confirms earlier predictions (r observed) or is confirmed by earlier
 * observations (r predicted). Predictions usually come at atom_finish, after the observations;
 * the count of unconfirmed ones keeps the observed path free while there are none. */
static void confirm_new(atom__reports *rs, atom_report *r) {
  if (r->evidence == ATOM_EVIDENCE_PREDICTED) {
    /* without observed reports (offline checkers alone) the scan would be quadratic for nothing */
    for (size_t i = 0; i < rs->count && rs->observed; i++)
      if (rs->list[i] != r && rs->list[i]->evidence == ATOM_EVIDENCE_OBSERVED &&
          confirms(rs->list[i], r)) {
        r->evidence = ATOM_EVIDENCE_CONFIRMED;
        return;
      }
    rs->unconfirmed++;
    return;
  }
  rs->observed++;
  for (size_t i = 0; i < rs->count && rs->unconfirmed; i++)
    if (rs->list[i]->evidence == ATOM_EVIDENCE_PREDICTED && confirms(r, rs->list[i])) {
      rs->list[i]->evidence = ATOM_EVIDENCE_CONFIRMED;
      rs->unconfirmed--;
    }
}

/* Map value of a signature whose report was not stored (max_reports, max_reports_per_checker):
 * only its hash is kept (about 16 bytes), so it is still delivered once and counted once. */
#define DROPPED_MARK (UINT32_MAX - 2)

int atom__report_add(atom_session *s, atom_env *env, const atom_report_spec *spec) {
  if (!spec || spec->version < 1 || (spec->flags & ~ATOM_REPORT_PREDICTED) || !spec->kind ||
      !*spec->kind ||
      (spec->n_txns && !spec->txns) || (spec->n_events && !spec->events) ||
      (spec->n_vars && !spec->vars))
    return atom__error(ATOM_EINVAL, "%s: malformed report", env->vt->name);
  /* Signature first: a duplicate (the common case in a loop) costs no allocation. */
  uint64_t stack_locs[16], *locs = stack_locs;
  size_t n = spec->n_txns;
  if (n > 16 && !(locs = atom__mem_alloc(&s->mem, n * sizeof *locs)))
    return atom__error(ATOM_ENOMEM, "%s: out of memory while reporting", env->vt->name);
  for (size_t i = 0; i < n; i++) locs[i] = spec->txns[i].begin_loc;
  qsort(locs, n, sizeof *locs, cmp_u64);
  signature g = {env->index, spec->kind, locs, n, spec->signature_extra};
  atom__reports *rs = &s->reports;
  uint64_t key = signature_hash(&g);
  uint32_t at;
  int duplicate = 0;
  while (atom__u64map_get(&rs->by_signature, key, &at)) {
    if (at == DROPPED_MARK || signature_matches(rs->list[at], &g)) {
      if (at != DROPPED_MARK) rs->list[at]->occurrences++;
      duplicate = 1;
      break;
    }
    key = atom__hash64(key + 1); /* a hash collision: probe on */
  }
  if (locs != stack_locs) atom__mem_free(&s->mem, locs, n * sizeof *locs);
  env->occurrences++;
  if (duplicate) return 0;

  /* Stored within both caps (the session's and this checker's); a dropped report is built
   * only for the callback, so a capped session without one spends no memory on it beyond its
   * signature's map entry (which keeps the deduplication exact). */
  int store = (!s->opt.max_reports || rs->count < s->opt.max_reports) &&
              (!s->opt.max_reports_per_checker || env->stored < s->opt.max_reports_per_checker);
  atom_report *r = NULL;
  if (store || s->opt.on_report) {
    int err = report_build(s, env, spec, &r);
    if (err) {
      env->occurrences--;
      return atom__error(err, "%s: out of memory while reporting", env->vt->name);
    }
  }
  if (rs->count >= DROPPED_MARK ||
      (store && ATOM__GROW(&s->mem, rs->list, rs->cap, rs->count + 1)) ||
      atom__u64map_put(&rs->by_signature, &s->mem, key,
                       store ? (uint32_t)rs->count : DROPPED_MARK)) {
    env->occurrences--;
    report_free(r, &s->mem);
    return atom__error(ATOM_ENOMEM, "%s: out of memory while storing a report", env->vt->name);
  }
  env->reports++;
  if (store) {
    rs->list[rs->count++] = r;
    env->stored++;
    confirm_new(rs, r);
  } else
    rs->dropped++;
  /* No more callbacks once the callback freed the session (the free waits for this call). */
  if (s->opt.on_report && !s->free_pending) s->opt.on_report(r, s->opt.report_payload);
  if (!store) report_free(r, &s->mem);
  return 0;
}

void atom__reports_free(atom__reports *rs, atom__mem *mem) {
  for (size_t i = 0; i < rs->count; i++) report_free(rs->list[i], mem);
  atom__mem_free(mem, rs->list, rs->cap * sizeof *rs->list);
  atom__u64map_free(&rs->by_signature, mem);
  memset(rs, 0, sizeof *rs);
}

/* ---- public accessors ---- */

ATOM_API size_t atom_report_count(const atom_session *s) { return s ? s->reports.count : 0; }

ATOM_API const atom_report *atom_report_get(const atom_session *s, size_t i) {
  return s && i < s->reports.count ? s->reports.list[i] : NULL;
}

ATOM_API size_t atom_report_dropped(const atom_session *s) { return s ? s->reports.dropped : 0; }

ATOM_API const char *atom_report_checker(const atom_report *r) { return r ? r->checker : NULL; }
ATOM_API size_t atom_report_checker_index(const atom_report *r) { return r ? r->checker_index : 0; }
ATOM_API const char *atom_report_kind(const atom_report *r) { return r ? r->kind : NULL; }
ATOM_API uint64_t atom_report_event_index(const atom_report *r) { return r ? r->event_index : 0; }
ATOM_API int atom_report_evidence(const atom_report *r) { return r ? r->evidence : 0; }

ATOM_API const char *atom_evidence_name(int evidence) {
  switch (evidence) {
  case ATOM_EVIDENCE_OBSERVED: return "observed";
  case ATOM_EVIDENCE_PREDICTED: return "predicted";
  case ATOM_EVIDENCE_CONFIRMED: return "confirmed";
  default: return NULL;
  }
}

ATOM_API uint64_t atom_report_occurrences(const atom_report *r) { return r ? r->occurrences : 0; }
ATOM_API const char *atom_report_message(const atom_report *r) { return r ? r->message : ""; }
ATOM_API size_t atom_report_txn_count(const atom_report *r) { return r ? r->n_txns : 0; }
ATOM_API size_t atom_report_event_count(const atom_report *r) { return r ? r->n_events : 0; }
ATOM_API size_t atom_report_var_count(const atom_report *r) { return r ? r->n_vars : 0; }

ATOM_API int atom_report_txn(const atom_report *r, size_t i, uint64_t *thread,
                             uint64_t *begin_index, uint64_t *begin_loc) {
  if (!r || i >= r->n_txns) return atom__error(ATOM_EINVAL, "no transaction %zu in report", i);
  if (thread) *thread = r->txns[i].thread;
  if (begin_index) *begin_index = r->txns[i].begin_index;
  if (begin_loc) *begin_loc = r->txns[i].begin_loc;
  return 0;
}

ATOM_API int atom_report_event(const atom_report *r, size_t i, atom_event *ev, uint64_t *index) {
  if (!r || i >= r->n_events) return atom__error(ATOM_EINVAL, "no event %zu in report", i);
  if (ev) *ev = r->events[i].ev;
  if (index) *index = r->events[i].index;
  return 0;
}

ATOM_API uint64_t atom_report_var(const atom_report *r, size_t i) {
  return r && i < r->n_vars ? r->vars[i] : 0;
}

ATOM_API const char *atom_report_var_name(const atom_report *r, size_t i) {
  return r && i < r->n_vars ? r->var_names[i] : NULL;
}
