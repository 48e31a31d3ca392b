/* Reports: copied out of the checker's spec into session-owned memory, deduplicated by a
 * signature (checker, kind, begin locations of the transactions, extra) so that a violation
 * inside a loop is one report with a count. */
#include "core/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/location.h"
#include "core/error.h"
#include "core/format.h"
#include "core/session.h"
#include "support/assert.h"
#include "support/u64map.h" /* atom__hash_mix */

typedef struct witness {
  atom_event ev;
  uint64_t index;
} witness;

typedef struct txn {
  uint64_t thread, begin_index, begin_loc;
  uint64_t count;      /* transactions in the run it stands for (1: not a run) */
  uint64_t last_index; /* begin index of the run's last transaction */
  int unary;
} txn;

typedef struct edge {
  size_t from, to; /* positions in events */
  uint32_t flags;
} edge;

/* Bounds of one stored report (atom_env_report in checker.h): runs of transactions, witness
 * events, edges. */
#define MAX_EVENTS 256
#define MAX_EDGES 128

struct atom_report {
  const atom_session *session;
  size_t checker_index;
  const char *checker;
  char *kind;
  char *message;       /* a literal (spec version 1) or a template (version 2) */
  int literal;
  char *rendered;      /* the template rendered (atom_report_message), rendered_size bytes */
  size_t rendered_size;
  uint64_t rendered_generation; /* of the session's names and locations when rendered */
  uint64_t event_index;
  uint64_t occurrences;
  uint64_t extra;
  int evidence; /* ATOM_EVIDENCE_* */
  txn *txns;
  size_t n_txns;
  uint64_t txns_omitted;
  uint64_t *sorted_locs; /* the signature's locations */
  size_t n_sorted_locs;
  witness *events;
  size_t *event_txn;     /* per event: position in txns, or SIZE_MAX */
  size_t n_events;
  edge *edges;
  size_t n_edges;
  uint64_t *vars;
  char **var_names;
  size_t n_vars;
};

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The dedup signature: checker, kind, the set of begin locations (sorted, each once: a cycle
 * through 2 931 transactions of withdraw is the same bug as one through two), extra. */
typedef struct signature {
  size_t checker_index;
  const char *kind;
  const uint64_t *locs; /* sorted, distinct */
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
  return r->checker_index == g->checker_index && r->extra == g->extra &&
         r->n_sorted_locs == g->n && strcmp(r->kind, g->kind) == 0 &&
         /* n == 0: a report without transactions has no array (NULL) to compare */
         (g->n == 0 || memcmp(r->sorted_locs, g->locs, g->n * sizeof(uint64_t)) == 0);
}

/* Fill locs (room for n) with the spec's begin locations, sorted and distinct.
 * @return how many. */
static size_t signature_locs(const atom_session *s, const atom_report_spec *spec, uint64_t *locs) {
  size_t n = spec->n_txns, k = 0;
  /* A begin location with a stack (a runtime's stack id) counts as its first frame: the same
   * atomic function reached through two call paths is one bug. */
  for (size_t i = 0; i < n; i++) {
    const uint64_t *frames;
    locs[i] = atom_get_stack(s, spec->txns[i].begin_loc, &frames) ? frames[0]
                                                                   : spec->txns[i].begin_loc;
  }
  qsort(locs, n, sizeof *locs, cmp_u64);
  for (size_t i = 0; i < n; i++)
    if (k == 0 || locs[k - 1] != locs[i]) locs[k++] = locs[i];
  return k;
}

static void report_free(atom_report *r, atom__mem *mem) {
  if (!r) return;
  atom__mem_strfree(mem, r->kind);
  atom__mem_strfree(mem, r->message);
  atom__mem_free(mem, r->rendered, r->rendered_size);
  atom__mem_free(mem, r->txns, r->n_txns * sizeof *r->txns);
  atom__mem_free(mem, r->sorted_locs, r->n_sorted_locs * sizeof *r->sorted_locs);
  atom__mem_free(mem, r->events, r->n_events * sizeof *r->events);
  atom__mem_free(mem, r->event_txn, r->n_events * sizeof *r->event_txn);
  atom__mem_free(mem, r->edges, r->n_edges * sizeof *r->edges);
  if (r->var_names)
    for (size_t i = 0; i < r->n_vars; i++) atom__mem_strfree(mem, r->var_names[i]);
  atom__mem_free(mem, r->var_names, r->n_vars * sizeof *r->var_names);
  atom__mem_free(mem, r->vars, r->n_vars * sizeof *r->vars);
  atom__mem_free(mem, r, sizeof *r);
}

/* Spec fields of version 2, or their defaults for a version-1 spec (shorter struct). */
static size_t spec_n_edges(const atom_report_spec *spec) {
  return spec->version >= 2 ? spec->n_edges : 0;
}

/* Is the spec well-formed? Positions in range, flags known. */
static int spec_valid(const atom_report_spec *spec) {
  if (!spec || spec->version < 1 || (spec->flags & ~ATOM_REPORT_PREDICTED) || !spec->kind ||
      !*spec->kind || (spec->n_txns && !spec->txns) || (spec->n_events && !spec->events) ||
      (spec->n_vars && !spec->vars))
    return 0;
  size_t n_edges = spec_n_edges(spec);
  if (n_edges && !spec->edges) return 0;
  for (size_t i = 0; i < n_edges; i++) {
    const atom_edge_ref *e = &spec->edges[i];
    if (e->from >= spec->n_events || e->to >= spec->n_events || (e->flags & ~ATOM_EDGE_CLOSING))
      return 0;
  }
  return spec->version < 2 || !spec->message || atom__template_valid(spec->message);
}

/* Copy the spec's transactions as runs: consecutive transactions (in role order) of one thread
 * become one entry with a count; at most ATOM_REPORT_MAX_TXNS entries. run_of[i] receives the
 * entry of spec transaction i (SIZE_MAX if omitted). */
static int copy_txns(atom_session *s, atom_report *r, const atom_report_spec *spec,
                     size_t *run_of) {
  size_t runs = 0;
  for (size_t i = 0; i < spec->n_txns; i++)
    if (i == 0 || spec->txns[i].thread != spec->txns[i - 1].thread ||
        spec->txns[i].unary || spec->txns[i - 1].unary)
      runs++;
  size_t kept = runs < ATOM_REPORT_MAX_TXNS ? runs : ATOM_REPORT_MAX_TXNS;
  if (!kept) return 0;
  r->txns = atom__mem_calloc(&s->mem, kept, sizeof *r->txns);
  if (!r->txns) return ATOM_ENOMEM;
  r->n_txns = kept;
  r->txns_omitted = runs - kept;
  size_t at = SIZE_MAX;
  for (size_t i = 0; i < spec->n_txns; i++) {
    const atom_txn_ref *t = &spec->txns[i];
    int starts = i == 0 || t->thread != spec->txns[i - 1].thread || t->unary ||
                 spec->txns[i - 1].unary;
    if (starts) at = at == SIZE_MAX ? 0 : at + 1;
    if (at >= kept) {
      run_of[i] = SIZE_MAX;
      continue;
    }
    run_of[i] = at;
    txn *x = &r->txns[at];
    if (starts) {
      x->thread = atom__intern_key(s, ATOM_SPACE_THREAD, t->thread);
      x->begin_index = t->begin_index;
      x->begin_loc = t->begin_loc;
      x->unary = t->unary != 0;
      x->count = 0;
    }
    x->count++;
    x->last_index = t->begin_index;
  }
  return 0;
}

/* The entry of the transaction event e belongs to: among the spec's transactions of its thread,
 * the one with the largest begin index <= the event's (a unary one only if it is the event). */
static size_t txn_of_event(const atom_report_spec *spec, const size_t *run_of, const atom_ev *e) {
  size_t best = SIZE_MAX;
  for (size_t i = 0; i < spec->n_txns; i++) {
    const atom_txn_ref *t = &spec->txns[i];
    if (t->thread != e->thread || t->begin_index > e->index) continue;
    if (t->unary && t->begin_index != e->index) continue;
    if (best == SIZE_MAX || t->begin_index > spec->txns[best].begin_index) best = i;
  }
  return best == SIZE_MAX ? SIZE_MAX : run_of[best];
}

static int copy_events(atom_session *s, atom_report *r, const atom_report_spec *spec,
                       const size_t *run_of) {
  atom__mem *mem = &s->mem;
  size_t n = spec->n_events < MAX_EVENTS ? spec->n_events : MAX_EVENTS;
  if (!n) return 0;
  r->events = atom__mem_calloc(mem, n, sizeof *r->events);
  r->event_txn = atom__mem_calloc(mem, n, sizeof *r->event_txn);
  if (!r->events || !r->event_txn) {
    atom__mem_free(mem, r->events, n * sizeof *r->events);
    atom__mem_free(mem, r->event_txn, n * sizeof *r->event_txn);
    r->events = NULL;
    r->event_txn = NULL;
    return ATOM_ENOMEM;
  }
  r->n_events = n;
  for (size_t i = 0; i < n; i++) {
    const atom_ev *e = &spec->events[i];
    int sp = atom_kind_space(e->kind);
    r->events[i].index = e->index;
    r->events[i].ev.kind = e->kind;
    /* the public event speaks ATOM_FLAG_* (event.h), the checker's ATOM_EV_* (checker.h) */
    r->events[i].ev.flags = ((e->flags & ATOM_EV_ACQUIRE) ? ATOM_FLAG_ACQUIRE : 0) |
                            ((e->flags & ATOM_EV_RELEASE) ? ATOM_FLAG_RELEASE : 0);
    r->events[i].ev.thread = atom__intern_key(s, ATOM_SPACE_THREAD, e->thread);
    r->events[i].ev.target = sp ? atom__intern_key(s, sp, e->target) : 0;
    r->events[i].ev.loc = e->loc;
    r->event_txn[i] = txn_of_event(spec, run_of, e);
  }
  /* edges whose events were both kept, at most MAX_EDGES */
  size_t n_edges = 0, total = spec_n_edges(spec);
  for (size_t i = 0; i < total; i++)
    if (spec->edges[i].from < n && spec->edges[i].to < n) n_edges++;
  if (n_edges > MAX_EDGES) n_edges = MAX_EDGES;
  if (!n_edges) return 0;
  r->edges = atom__mem_calloc(mem, n_edges, sizeof *r->edges);
  if (!r->edges) return ATOM_ENOMEM;
  r->n_edges = n_edges;
  for (size_t i = 0, k = 0; i < total && k < n_edges; i++) {
    const atom_edge_ref *e = &spec->edges[i];
    if (e->from >= n || e->to >= n) continue;
    r->edges[k++] = (edge){e->from, e->to, e->flags & ATOM_EDGE_CLOSING};
  }
  return 0;
}

static int copy_vars(atom_session *s, atom_report *r, const atom_report_spec *spec) {
  atom__mem *mem = &s->mem;
  if (!spec->n_vars) return 0;
  r->vars = atom__mem_calloc(mem, spec->n_vars, sizeof *r->vars);
  if (!r->vars) return ATOM_ENOMEM;
  r->var_names = atom__mem_calloc(mem, spec->n_vars, sizeof *r->var_names);
  if (!r->var_names) {
    atom__mem_free(mem, r->vars, spec->n_vars * sizeof *r->vars);
    r->vars = NULL;
    return ATOM_ENOMEM;
  }
  r->n_vars = spec->n_vars;
  for (size_t i = 0; i < spec->n_vars; i++) {
    r->vars[i] = atom__intern_key(s, ATOM_SPACE_VAR, spec->vars[i]);
    const char *name = atom__names_get(&s->names, ATOM_SPACE_VAR, r->vars[i]);
    if (name && !(r->var_names[i] = atom__mem_strdup(mem, name))) return ATOM_ENOMEM;
  }
  return 0;
}

static int report_build(atom_session *s, atom_env *env, const atom_report_spec *spec,
                        const uint64_t *locs, size_t n_locs, atom_report **out) {
  atom__mem *mem = &s->mem;
  atom_report *r = atom__mem_calloc(mem, 1, sizeof *r);
  if (!r) return ATOM_ENOMEM;
  size_t stack_runs[16], *run_of = stack_runs;
  if (spec->n_txns > 16 && !(run_of = atom__mem_alloc(mem, spec->n_txns * sizeof *run_of))) {
    atom__mem_free(mem, r, sizeof *r);
    return ATOM_ENOMEM;
  }
  r->session = s;
  r->checker_index = env->index;
  r->checker = env->vt->name;
  r->event_index = spec->event_index;
  r->occurrences = 1;
  r->extra = spec->signature_extra;
  r->evidence = spec->flags & ATOM_REPORT_PREDICTED ? ATOM_EVIDENCE_PREDICTED
                                                     : ATOM_EVIDENCE_OBSERVED;
  r->literal = spec->version < 2 && spec->message;
  int err = ATOM_ENOMEM;
  if (!(r->kind = atom__mem_strdup(mem, spec->kind))) goto fail;
  if (n_locs) {
    if (!(r->sorted_locs = atom__mem_alloc(mem, n_locs * sizeof *locs))) goto fail;
    memcpy(r->sorted_locs, locs, n_locs * sizeof *locs);
    r->n_sorted_locs = n_locs;
  }
  if ((err = copy_txns(s, r, spec, run_of)) || (err = copy_events(s, r, spec, run_of)) ||
      (err = copy_vars(s, r, spec)))
    goto fail;
  err = ATOM_ENOMEM;
  if (spec->message && !(r->message = atom__mem_strdup(mem, spec->message))) goto fail;
  if (run_of != stack_runs) atom__mem_free(mem, run_of, spec->n_txns * sizeof *run_of);
  *out = r;
  return 0;
fail:
  if (run_of != stack_runs) atom__mem_free(mem, run_of, spec->n_txns * sizeof *run_of);
  report_free(r, mem);
  return err;
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

/* Look the signature g (hash) up; on a match count one more occurrence of its report (a
 * dropped one only in env) and return 1. Else return 0 with *p the probe that found nothing. */
static int count_repeat(atom__reports *rs, atom_env *env, const signature *g, uint64_t hash,
                        atom__idindex_probe *p) {
  atom__idindex_start(&rs->by_signature, hash, p);
  for (uint32_t i; (i = atom__idindex_next(&rs->by_signature, p)) != ATOM__IDINDEX_END;) {
    const atom__signature_seen *seen = &rs->seen[i];
    ATOM__ASSERT(seen->report == ATOM__SIGNATURE_DROPPED || seen->report < rs->count);
    /* A dropped report kept only its hash (a few dozen bytes each): equal hashes are one. */
    if (seen->hash == hash && (seen->report == ATOM__SIGNATURE_DROPPED ||
                               signature_matches(rs->list[seen->report], g))) {
      if (seen->report != ATOM__SIGNATURE_DROPPED) rs->list[seen->report]->occurrences++;
      env->occurrences++;
      return 1;
    }
  }
  return 0;
}

/* The signature of spec into *g: its locations in stack_locs (room for 16) or, for more
 * transactions, in memory that signature_done frees. 0, ATOM_EINVAL or ATOM_ENOMEM. */
static int signature_make(atom_session *s, atom_env *env, const atom_report_spec *spec,
                          uint64_t *stack_locs, signature *g) {
  if (!spec_valid(spec))
    return atom__error(ATOM_EINVAL, "%s: malformed report", env->vt->name);
  uint64_t *locs = stack_locs;
  if (spec->n_txns > 16 && !(locs = atom__mem_alloc(&s->mem, spec->n_txns * sizeof *locs)))
    return atom__error(ATOM_ENOMEM, "%s: out of memory while reporting", env->vt->name);
  *g = (signature){env->index, spec->kind, locs, signature_locs(s, spec, locs),
                   spec->signature_extra};
  return 0;
}

static void signature_done(atom_session *s, const atom_report_spec *spec, signature *g,
                           uint64_t *stack_locs) {
  if (g->locs != stack_locs)
    atom__mem_free(&s->mem, (void *)g->locs, spec->n_txns * sizeof *g->locs);
  g->locs = stack_locs;
}

int atom__report_repeat(atom_session *s, atom_env *env, const atom_report_spec *spec) {
  uint64_t stack_locs[16];
  signature g;
  int err = signature_make(s, env, spec, stack_locs, &g);
  if (err) return err;
  atom__idindex_probe p;
  int repeat = count_repeat(&s->reports, env, &g, signature_hash(&g), &p);
  signature_done(s, spec, &g, stack_locs);
  return repeat;
}

int atom__report_add(atom_session *s, atom_env *env, const atom_report_spec *spec) {
  /* Signature first: a duplicate (the common case in a loop) costs no allocation. */
  uint64_t stack_locs[16];
  signature g;
  int err = signature_make(s, env, spec, stack_locs, &g);
  if (err) return err;
  atom__reports *rs = &s->reports;
  uint64_t hash = signature_hash(&g);
  atom__idindex_probe p;
  if (count_repeat(rs, env, &g, hash, &p)) {
    signature_done(s, spec, &g, stack_locs);
    return 0;
  }
  env->occurrences++;

  /* Stored within both caps (the session's and this checker's); a dropped report is built
   * only for the callback, so a capped session without one spends no memory on it beyond its
   * signature's map entry (which keeps the deduplication exact). */
  int store = (!s->opt.max_reports || rs->count < s->opt.max_reports) &&
              (!s->opt.max_reports_per_checker || env->stored < s->opt.max_reports_per_checker);
  atom_report *r = NULL;
  if (store || s->opt.on_report) {
    err = report_build(s, env, spec, g.locs, g.n, &r);
    signature_done(s, spec, &g, stack_locs);
    if (err) {
      env->occurrences--;
      return atom__error(err, "%s: out of memory while reporting", env->vt->name);
    }
  }
  signature_done(s, spec, &g, stack_locs);
  /* p is still the probe that found no match: nothing was added to the index since. */
  if (rs->count >= ATOM__SIGNATURE_DROPPED || rs->n_seen >= UINT32_MAX - 1 ||
      (store && ATOM__GROW(&s->mem, rs->list, rs->cap, rs->count + 1)) ||
      ATOM__GROW(&s->mem, rs->seen, rs->seen_cap, rs->n_seen + 1) ||
      atom__idindex_add(&rs->by_signature, &s->mem, &p, (uint32_t)rs->n_seen)) {
    env->occurrences--;
    report_free(r, &s->mem);
    return atom__error(ATOM_ENOMEM, "%s: out of memory while storing a report", env->vt->name);
  }
  rs->seen[rs->n_seen++] =
      (atom__signature_seen){hash, store ? (uint32_t)rs->count : ATOM__SIGNATURE_DROPPED};
  env->reports++;
  if (store) {
    ATOM__ASSERT(rs->count < rs->cap);
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
  atom__mem_free(mem, rs->seen, rs->seen_cap * sizeof *rs->seen);
  atom__idindex_free(&rs->by_signature, mem);
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
/* The message, rendered again when names or locations changed since the last rendering (the
 * cache is not part of the report's value: the const is cast away for it alone). A rendering
 * that cannot be stored (out of memory) falls back on the previous one, else the template. */
ATOM_API const char *atom_report_message(const atom_report *r) {
  if (!r) return "";
  if (r->literal) return r->message;
  atom_report *m = (atom_report *)r;
  atom_session *s = (atom_session *)r->session;
  uint64_t generation = s->names.generation;
  if (m->rendered && m->rendered_generation == generation) return m->rendered;
  char text[ATOM__MESSAGE_MAX + 1]; /* a rendering is bounded: one pass on the stack */
  int len = atom__report_render(text, sizeof text, r);
  if (len >= 0) {
    size_t size = (size_t)len + 1;
    char *copy = m->rendered && m->rendered_size == size
                     ? m->rendered
                     : atom__mem_alloc(&s->mem, size);
    if (copy) {
      memcpy(copy, text, size);
      if (copy != m->rendered) atom__mem_free(&s->mem, m->rendered, m->rendered_size);
      m->rendered = copy;
      m->rendered_size = size;
      m->rendered_generation = generation;
    }
  }
  return m->rendered ? m->rendered : r->message ? r->message : r->kind;
}

const char *atom__report_template(const atom_report *r) { return r->literal ? NULL : r->message; }
const char *atom__report_literal(const atom_report *r) { return r->literal ? r->message : NULL; }

ATOM_API const struct atom_session *atom_report_session(const atom_report *r) {
  return r ? r->session : NULL;
}

ATOM_API int atom_report_txn_run(const atom_report *r, size_t i, uint32_t *flags,
                                 uint64_t *count, uint64_t *last_index) {
  if (!r || i >= r->n_txns) return atom__error(ATOM_EINVAL, "no transaction %zu in report", i);
  if (flags) *flags = r->txns[i].unary ? ATOM_TXN_UNARY : 0;
  if (count) *count = r->txns[i].count;
  if (last_index) *last_index = r->txns[i].last_index;
  return 0;
}

ATOM_API uint64_t atom_report_txns_omitted(const atom_report *r) {
  return r ? r->txns_omitted : 0;
}

ATOM_API size_t atom_report_event_txn(const atom_report *r, size_t i) {
  return r && i < r->n_events ? r->event_txn[i] : SIZE_MAX;
}

ATOM_API size_t atom_report_edge_count(const atom_report *r) { return r ? r->n_edges : 0; }

ATOM_API int atom_report_edge(const atom_report *r, size_t i, size_t *from, size_t *to,
                              uint32_t *flags) {
  if (!r || i >= r->n_edges) return atom__error(ATOM_EINVAL, "no edge %zu in report", i);
  if (from) *from = r->edges[i].from;
  if (to) *to = r->edges[i].to;
  if (flags) *flags = r->edges[i].flags;
  return 0;
}
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

/* ---- fingerprint ---- */

/* FNV-1a over a string, then mixed into h: the same bytes give the same value on every run
 * and every machine (no seed, no pointer). */
static uint64_t mix_string(uint64_t h, const char *str) {
  uint64_t f = 0xcbf29ce484222325ULL;
  for (const unsigned char *p = (const unsigned char *)str; p && *p; p++)
    f = (f ^ *p) * 0x100000001b3ULL;
  return atom__hash_mix(h, f ^ (str ? 1 : 0));
}

/* What a location stands for across runs: its description (function, file, line) when it has
 * one, else its loc value (a trace's location ids are stable; a pc is not, which is why a
 * runtime describes them). */
static uint64_t location_hash(const atom_session *s, uint64_t loc) {
  const char *function, *file;
  uint32_t line;
  if (!atom_get_location(s, loc, &function, &file, &line)) return atom__hash_mix(0x10c, loc);
  uint64_t h = mix_string(0xde5c, function);
  h = mix_string(h, file);
  return atom__hash_mix(h, line);
}

/* Hash of the checker's name (not its attach index), the kind and the sorted distinct set of
 * the locations of the transactions' begins (every one the checker named, runs included) and
 * of the edges' events. Event indexes, thread keys and the number of transactions stay out:
 * they change from run to run of the same bug. */
ATOM_API uint64_t atom_report_fingerprint(const atom_report *r) {
  if (!r) return 0;
  uint64_t stack[64], *set = stack;
  size_t max = r->n_sorted_locs + 2 * r->n_edges, n = 0;
  atom__mem *mem = &((atom_session *)r->session)->mem;
  if (max > 64 && !(set = atom__mem_alloc(mem, max * sizeof *set))) {
    /* out of memory: the begin locations alone still make a stable, if coarser, value */
    set = stack;
    max = 0;
  }
  for (size_t i = 0; i < r->n_sorted_locs && n < (max ? max : 64); i++)
    set[n++] = location_hash(r->session, r->sorted_locs[i]);
  for (size_t i = 0; max && i < r->n_edges; i++) {
    set[n++] = location_hash(r->session, r->events[r->edges[i].from].ev.loc);
    set[n++] = location_hash(r->session, r->events[r->edges[i].to].ev.loc);
  }
  qsort(set, n, sizeof *set, cmp_u64);
  uint64_t h = mix_string(0xf1a9, r->checker);
  h = mix_string(h, r->kind);
  for (size_t i = 0; i < n; i++)
    if (i == 0 || set[i] != set[i - 1]) h = atom__hash_mix(h, set[i]);
  if (set != stack) atom__mem_free(mem, set, max * sizeof *set);
  return h ? h : 1; /* 0 means "no report" */
}
