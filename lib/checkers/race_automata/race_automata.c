/* race-automata: atomic-set serializability by the race automata of 001 (Hammer, Dolby, Vaziri,
 * Tip, ICSE 2008).
 *
 * 001 §3 Def. 1: an execution has a violation when, for units of work u, u' of different threads
 * and locations l1, l2 of one atomic set (l1 != l2, or a single location l), the events of one of
 * the 14 patterns of Fig. 2 occur in that order. Units are the outermost transactions; an access
 * outside every transaction is a unit of its own, which can only play u' (u has two events or
 * more in every pattern).
 *
 * 001 §3.1: one automaton per pattern and tuple (u, u', l1, l2) advances when the next event of
 * its pattern arrives; greedy advancing decides "is a subsequence", so reaching the accept state
 * is exactly a match, and it happens at the match's last event (the report is online).
 *
 * 001 §3.2: the 14 automata of a tuple are 3-bit fields of one 64-bit word, and a tuple is only
 * held once it knows more than the summaries it is refined from:
 *   - a *summary* S = (u,*,l,*) lives in the cell of (u, l) from u's first access to l: the
 *     automata as driven by u's own events on l (only the first event of a pattern is u's before
 *     u' appears, so S records whether, and first when, u read and wrote l);
 *   - a tuple P = (u,u',l,*) holds patterns 1-5 on l, and the prefixes on l1 = l of patterns
 *     6-14; it is refined from S at the first event of u' on l that advances it (until then it
 *     would equal S: only u's events on l move it, and they move S alike);
 *   - a full tuple (u,u',l1,l2) holds patterns 6-14. Below their third event (fourth for 6, 9,
 *     11) its automata are a function of S(u,l1), P(u,u',l1) and the cell of (u',l2): the only
 *     event of those prefixes not seen by the summaries is an access of u' to l2 after a known
 *     time, and "u' accessed l2 after t" is "u's last access to l2 is after t" (the cell keeps
 *     the last read and write). So it is refined at the event that takes one of its automata
 *     past that: an event of u' on l1 (third event of 7, 10, 12), an event of u on l2 (third of
 *     8, 13, 14, last of 6, 9, 11), or the end of u' while 6, 9 or 11 waits for u alone.
 * The U x U x L x L space is never built: P and full tuples exist only for pairs of units that
 * interleave on the locations concerned.
 *
 * 001 §3.2 GC: when a unit ends, its summaries go (nothing can complete without a later event of
 * u), and so does every tuple none of whose automata can still accept (each automaton knows which
 * roles its remaining events need); in particular every tuple whose two units have ended.
 *
 * Finding what an event refines: the cells of a variable are kept in order of last access, and
 * the cell of (U, l) remembers when U last read and wrote l, so the refinement of P tuples looks
 * only at summaries that changed since U's last access of the same kind to l (older ones were
 * considered then, with the same outcome); full tuples pair the cells of the variable with the
 * current unit's cells in the same atomic set. */
#include <inttypes.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "checkers/race_automata/race_automata.h"
#include "support/argval.h"
#include "support/report_build.h"
#include "support/msgbuf.h"

/* ---- reports --------------------------------------------------------------------------------- */


/* 001 §3.2 reportBits: pattern p of tuple t accepted at event ev. */
static int report_match(race_automata *ra, uint32_t t, int p, const atom_ev *ev) {
  const ra_tuple *x = TUPLE(t);
  const ra_unit *units[2] = {UNIT(x->u), UNIT(x->v)};
  uint32_t vars[2] = {x->l1, x->l2};
  const ra_pos *wit = wit_of(ra, x);
  atom__report_build *rb = &ra->rb;
  atom__rb_reset(rb);
  int rc = 0;
  for (int i = 0; i < 2 && !rc; i++) {
    atom_txn_ref txn = {units[i]->thread, (units[i]->flags & UF_UNARY) ? 1u : 0u,
                        units[i]->begin_index, units[i]->begin_loc};
    rc = atom__rb_txn(rb, &txn);
  }
  unsigned len = atom__ra_patterns[p].len;
  for (unsigned s = 0; s < len && !rc; s++) {
    unsigned d = atom__ra_patterns[p].ev[s];
    atom_ev e;
    e.kind = (d & 1) ? ATOM_WRITE : ATOM_READ;
    e.thread = units[d >> 2]->thread;
    e.target = vars[(d >> 1) & 1];
    e.flags = 0;
    e.index = s + 1 < len ? wit[ra->slot[p][s]].index : ev->index;
    e.loc = s + 1 < len ? wit[ra->slot[p][s]].loc : ev->loc;
    rc = atom__rb_event(rb, &e, NULL);
  }
  for (int i = 0; i < (is_full(x) ? 2 : 1) && !rc; i++) rc = atom__rb_var(rb, vars[i]);
  if (rc) return rc;

  /* The message template (rendered by the session): the events in order, then what the
   * pattern means in words; its number stays visible in words at the end. */
  char msg[512];
  size_t off = 0;
  atom__msg_append(msg, sizeof msg, &off, "{t0} was interleaved by {t1}:");
  for (unsigned s = 0; s < len; s++)
    atom__msg_append(msg, sizeof msg, &off, "%s{e%u}",
                     s == 0 ? " " : s + 1 == len ? ", and then " : ", then ", s);
  atom__msg_append(msg, sizeof msg, &off, ": %s (pattern %d of the atomic-set patterns)",
                   atom__ra_patterns[p].what, p + 1);

  /* The session's signature holds the begin locations of u and u' unordered; the roles, l1 and
   * l2 make a distinct match. */
  uint64_t extra = mix2(atom_env_key(ra->env, ATOM_SPACE_VAR, x->l1),
                        is_full(x) ? atom_env_key(ra->env, ATOM_SPACE_VAR, x->l2) ^ 0x6c32ULL
                                   : 0x6c31ULL);
  extra = mix2(extra, units[0]->begin_loc);
  static const char *const kinds[NPAT] = {
      "pattern-1", "pattern-2", "pattern-3",  "pattern-4",  "pattern-5",  "pattern-6",  "pattern-7",
      "pattern-8", "pattern-9", "pattern-10", "pattern-11", "pattern-12", "pattern-13", "pattern-14"};
  return atom__rb_submit(rb, ra->env, kinds[p], ev->index, 0, msg, extra);
}

static void note_error(race_automata *ra, int rc) {
  if (rc < 0 && !ra->err) ra->err = rc;
}

/* Record the events matched at non-final positions, and report the automata that accepted. */
static void after_advance(race_automata *ra, uint32_t t, uint64_t inc, const atom_ev *ev) {
  ra_tuple *x = TUPLE(t);
  ra_pos *wit = wit_of(ra, x);
  uint64_t acc = 0;
  for (int p = 0; p < NPAT; p++) {
    if (!(inc & FIELD(p))) continue;
    unsigned s = state_of(x->word, p);
    if (s < atom__ra_patterns[p].len) wit[ra->slot[p][s - 1]] = (ra_pos){ev->index, ev->loc};
    else acc |= FIELD(p);
  }
  acc &= is_full(x) ? DOUBLE : SINGLE;
  for (int p = 0; p < NPAT; p++)
    if (acc & FIELD(p)) note_error(ra, report_match(ra, t, p, ev));
}

/* 001 §3.2 updateBits on an existing tuple, for event ev playing descriptor d. */
static void tuple_update(race_automata *ra, uint32_t t, unsigned d, const atom_ev *ev) {
  ra_tuple *x = TUPLE(t);
  uint64_t inc;
  uint64_t w = step(ra, x->word, d, is_full(x) ? DOUBLE : ONES, &inc);
  if (!inc) return;
  x->word = w;
  after_advance(ra, t, inc, ev);
  atom__ra_tuple_collect(ra, t);
}

/* 001 §3.2 copyBits: make tuple (u, v, l1, l2) with state `word` (already advanced by ev, `inc`
 * being the advanced fields; ev may be NULL when inc is 0) and the matched events `src` (nsrc
 * slots). `at` is where atom__ra_tuple_find did not find the tuple (the tuple index unchanged
 * since). Links it to the cells of its positions, making anchors where needed (none for a
 * unary v, which has no later event). */
static int tuple_make(race_automata *ra, uint32_t u, uint32_t v, uint32_t l1, uint32_t l2,
                      const atom__idindex_probe *at, uint64_t word, uint64_t inc,
                      const ra_pos *src, uint32_t nsrc, const atom_ev *ev) {
  int full = l2 != NIL;
  ra_pool *wp = full ? &ra->fwit : &ra->pwit;
  uint32_t t, w, c[4] = {NIL, NIL, NIL, NIL};
  int rc = atom__ra_pool_take(ra, &ra->tuples, &t);
  if (rc) return rc;
  if ((rc = atom__ra_pool_take(ra, wp, &w)) != 0) {
    atom__ra_pool_put(&ra->tuples, t);
    return rc;
  }
  /* Cells of the positions; those of a running unit may have to be made as anchors. */
  int unary_v = (UNIT(v)->flags & UF_UNARY) != 0;
  uint32_t want[4][2] = {{u, l1}, {u, l2}, {v, l1}, {v, l2}};
  for (unsigned pos = 0; pos < 4 && !rc; pos++) {
    if (want[pos][1] == NIL || (pos >= 2 && unary_v)) continue;
    rc = atom__ra_cell_get(ra, want[pos][0], want[pos][1], &c[pos]);
  }
  if (!rc) rc = atom__ra_tuple_index(ra, t, at);
  if (rc) {
    for (unsigned pos = 0; pos < 4; pos++)
      if (c[pos] != NIL) atom__ra_cell_release_if_idle(ra, c[pos]);
    atom__ra_pool_put(wp, w);
    atom__ra_pool_put(&ra->tuples, t);
    return rc;
  }
  ra_tuple *x = TUPLE(t);
  memset(x, 0, sizeof *x);
  x->u = u;
  x->v = v;
  x->l1 = l1;
  x->l2 = l2;
  x->word = word;
  x->wit = w;
  for (unsigned pos = 0; pos < 4; pos++) x->next[pos] = x->prev[pos] = NIL;
  ra_pos *wit = (ra_pos *)pool_at(wp, w);
  uint32_t n = full ? ra->n_fslots : ra->n_pslots;
  for (uint32_t i = 0; i < n; i++) wit[i] = i < nsrc ? src[i] : (ra_pos){NONE, 0};
  for (unsigned pos = 0; pos < 4; pos++)
    if (c[pos] != NIL) atom__ra_link_add(ra, c[pos], t, pos);
  UNIT(u)->refs++;
  UNIT(v)->refs++;
  ra->n_tuples++;
  if (inc) after_advance(ra, t, inc, ev);
  atom__ra_tuple_collect(ra, t);
  return 0;
}

/* The matched events a summary holds: the first read and write, in their slots. */
static void summary_wit(const race_automata *ra, const ra_cell *s, ra_pos *out) {
  for (uint32_t i = 0; i < ra->n_pslots; i++) out[i] = (ra_pos){NONE, 0};
  for (int k = 0; k < 2; k++)
    if (s->first[k].index != NONE) out[ra->first_slot[k]] = s->first[k];
}

/* The state of full tuple (u, v, l1, l2) while it is not held (see the top of the file): from
 * su = S(u,l1), p = P(u,v,l1) or NULL, and cv = the cell of (v,l2). Its matched events go to
 * wit (n_fslots): the summaries' ones, and v's last access to l2 of the right kind for the
 * event of v on l2 (a valid witness: it lies between the events around it). */
static uint64_t derive(const race_automata *ra, const ra_cell *su, const ra_tuple *p,
                       const ra_cell *cv, ra_pos *wit) {
  for (uint32_t i = 0; i < ra->n_fslots; i++) wit[i] = (ra_pos){NONE, 0};
  if (p) memcpy(wit, wit_of_const(ra, p), ra->n_pslots * sizeof *wit);
  else summary_wit(ra, su, wit);
  uint64_t w = 0;
  for (int q = 5; q < NPAT; q++) {
    const uint8_t *pev = atom__ra_patterns[q].ev;
    unsigned d0 = pev[0], d1 = pev[1], d2 = pev[2];
    const ra_pos *f = &su->first[d0 & 1];
    if (f->index == NONE) continue;
    unsigned st = 1;
    if (d1 & DESC(0, 1, 0)) { /* second event: v on l2 (7, 8, 10, 12, 13, 14) */
      const ra_pos *x = &cv->last[d1 & 1];
      if (x->index != NONE && x->index > f->index) {
        st = 2;
        wit[ra->slot[q][1]] = *x;
      }
    } else if (p && (st = state_of(p->word, q)) == 2) { /* v on l1, then v on l2 (6, 9, 11) */
      const ra_pos *x = &cv->last[d2 & 1];
      if (x->index != NONE && x->index > wit[ra->slot[q][1]].index) {
        st = 3;
        wit[ra->slot[q][2]] = *x;
      }
    }
    w |= (uint64_t)st * FIELD(q);
  }
  return w;
}

/* ---- atomic sets ----------------------------------------------------------------------------- */

static int set_new(race_automata *ra, uint32_t *out) {
  if (ra->n_sets >= NIL - 1) return ATOM_ELIMIT;
  *out = ra->n_sets++;
  return 0;
}

/* The atomic set of var, decided at its first access: its declared set (atom_declare_set),
 * else the policy's. */
static int resolve_set(race_automata *ra, uint32_t var) {
  uint32_t id = NIL;
  uint64_t key;
  int rc = 0;
  if (atom_env_var_set(ra->env, var, &key)) {
    if (!atom__u64map_get(&ra->declared, key, &id)) {
      rc = set_new(ra, &id);
      if (!rc && atom__u64map_put(&ra->declared, ra->mem, key, id)) {
        ra->n_sets--;
        rc = ATOM_ENOMEM;
      }
    }
  } else if (ra->policy == POLICY_ONE) {
    if (ra->one_set == NIL) rc = set_new(ra, &ra->one_set);
    id = ra->one_set;
  }
  if (rc) return rc;
  ra->var[var].set = id;
  ra->var[var].resolved = 1;
  return 0;
}

/* ---- events ---------------------------------------------------------------------------------- */

static int ensure_thread(race_automata *ra, uint32_t t) {
  if (t < ra->th_cap) return 0;
  size_t old = ra->th_cap;
  if (ATOM__GROW(ra->mem, ra->th, ra->th_cap, (size_t)t + 1)) return ATOM_ENOMEM;
  for (size_t i = old; i < ra->th_cap; i++) ra->th[i] = (ra_thread){.unit = NIL};
  return 0;
}

static int ensure_var(race_automata *ra, uint32_t l) {
  if (l >= ra->var_cap) {
    size_t old = ra->var_cap;
    if (ATOM__GROW(ra->mem, ra->var, ra->var_cap, (size_t)l + 1)) return ATOM_ENOMEM;
    for (size_t i = old; i < ra->var_cap; i++) ra->var[i] = (ra_var){NIL, 0, NIL, NIL};
  }
  return ra->var[l].resolved ? 0 : resolve_set(ra, l);
}

/* An access by a unit of one event (outside every transaction): it can only be u', and only
 * patterns 1-5 can still accept with it (patterns 6-14 need two events of u'). */
static void access_unary(race_automata *ra, const atom_ev *ev, unsigned k) {
  uint32_t l = ev->target, unary = NIL;
  unsigned d = DESC(1, 0, k);
  ra_pos src[MAXSLOTS];
  for (uint32_t c = ra->var[l].head; c != NIL; c = CELL(c)->vnext) {
    const ra_cell *s = CELL(c);
    uint32_t u = s->unit;
    if (UNIT(u)->thread == ev->thread) continue;
    uint64_t inc, w = step(ra, s->word, d, ONES, &inc);
    if (!inc || !atom__ra_can_accept(ra, w, SINGLE, 2)) continue;
    int rc = 0;
    if (unary == NIL) {
      rc = atom__ra_unit_new(ra, ev->thread, UF_UNARY | UF_ENDED, ev->index, ev->loc, &unary);
      if (!rc) UNIT(unary)->refs = 1; /* held until the end of the event */
    }
    if (!rc) {
      atom__idindex_probe at; /* unary is new: no tuple names it yet */
      uint32_t old = atom__ra_tuple_find(ra, u, unary, l, NIL, &at);
      ATOM__ASSERT(old == NIL);
      summary_wit(ra, CELL(c), src);
      rc = tuple_make(ra, u, unary, l, NIL, &at, w, inc, src, ra->n_pslots, ev);
    }
    if (rc) {
      note_error(ra, rc);
      break;
    }
  }
  if (unary != NIL) atom__ra_unit_unref(ra, unary);
}

/* Patterns 6-14 whose automaton, at an event of descriptor d, can pass the states derive()
 * knows: d is their third event after a second event of u' on l2, or their fourth after the
 * third (6, 9, 11). A cheap test before any lookup: is some such pattern's derived prefix there,
 * given the first access kinds of su and the last ones of cv? */
static int may_pass(const ra_cell *su, const ra_cell *cv, unsigned d) {
  for (int q = 5; q < NPAT; q++) {
    const uint8_t *pev = atom__ra_patterns[q].ev;
    unsigned d0 = pev[0], d1 = pev[1], d2 = pev[2];
    unsigned dv = (d1 & DESC(0, 1, 0)) ? d1 : d2; /* the event of u' on l2 */
    if (((d1 & DESC(0, 1, 0)) ? d2 : atom__ra_patterns[q].ev[3]) != d) continue;
    const ra_pos *f = &su->first[d0 & 1], *x = &cv->last[dv & 1];
    if (f->index != NONE && x->index != NONE && x->index > f->index) return 1;
  }
  return 0;
}

/* Refine the full tuple (u, v, l1, l2) if event ev, of descriptor d, takes it past its derived
 * state. su = S(u,l1), cv = the cell of (v,l2). */
static int refine_full(race_automata *ra, uint32_t su, uint32_t cv, unsigned d,
                       const atom_ev *ev) {
  const ra_cell *x = CELL(su), *y = CELL(cv);
  uint32_t u = x->unit, v = y->unit, l1 = x->var, l2 = y->var;
  atom__idindex_probe at;
  if (!may_pass(x, y, d) || atom__ra_tuple_find(ra, u, v, l1, l2, &at) != NIL) return 0;
  uint32_t p = atom__ra_tuple_find(ra, u, v, l1, NIL, NULL);
  ra_pos wit[MAXSLOTS];
  uint64_t inc, w = derive(ra, x, p == NIL ? NULL : TUPLE(p), y, wit);
  w = step(ra, w, d, DOUBLE, &inc);
  if (!inc) return 0;
  return tuple_make(ra, u, v, l1, l2, &at, w, inc, wit, ra->n_fslots, ev);
}

/* An access by U, the running transaction of ev's thread, to l (kind k). */
static void access_txn(race_automata *ra, const atom_ev *ev, unsigned k) {
  uint32_t t = ev->thread, l = ev->target, c;
  uint64_t now = ev->index + 1, inc, w;
  ra_thread *th = &ra->th[t];
  int rc;
  if (th->unit == NIL) {
    if ((rc = atom__ra_unit_new(ra, t, 0, th->begin_index, th->begin_loc, &th->unit)) != 0) {
      note_error(ra, rc);
      return;
    }
    UNIT(th->unit)->refs = 1; /* released when it ends */
  }
  uint32_t U = th->unit;
  if ((rc = atom__ra_cell_get(ra, U, l, &c)) != 0) {
    note_error(ra, rc);
    return;
  }
  uint32_t set = ra->var[l].set;
  ra_cell *x = CELL(c);
  uint64_t since = x->last[k].index == NONE ? 0 : x->last[k].index + 1;

  /* 001 §3.2 createBits(U,*,l,*) at U's first access to l; updateBits on it. */
  if (!x->seen) {
    x->word = 0;
    x->stamp = now;
    ra->n_summaries++;
    if (set != NIL && (rc = atom__ra_group_join(ra, c)) != 0) note_error(ra, rc);
  } else {
    atom__ra_vlist_unlink(ra, c);
  }
  atom__ra_vlist_append(ra, c);
  x = CELL(c);
  x->seen |= 1u << k;
  x->touched = now;
  if (x->first[k].index == NONE) x->first[k] = (ra_pos){ev->index, ev->loc};
  x->last[k] = (ra_pos){ev->index, ev->loc};
  w = step(ra, x->word, DESC(0, 0, k), ONES, &inc);
  if (inc) {
    x->word = w;
    x->stamp = now;
  }

  /* 001 Fig. 5 Update: the tuples in which (U, l) takes a role. */
  for (uint32_t id = CELL(c)->tuples, next; id != NIL; id = next) {
    next = TUPLE(id >> 2)->next[id & 3];
    unsigned pos = id & 3;
    tuple_update(ra, id >> 2, DESC(pos >> 1, pos & 1, k), ev);
  }

  /* 001 Fig. 5 Create, U in the role of u': (u,U,l,*) from the summaries (u,*,l,*) this access
   * advances. Summaries unchanged since U's last access of kind k to l were seen then (the list
   * is in order of last access, which is never before the last change). */
  ra_pos src[MAXSLOTS];
  for (uint32_t s = ra->var[l].tail; s != NIL; s = CELL(s)->vprev) {
    const ra_cell *y = CELL(s);
    if (y->touched <= since) break;
    uint32_t u = y->unit;
    if (y->stamp <= since || UNIT(u)->thread == t) continue;
    w = step(ra, y->word, DESC(1, 0, k), ONES, &inc);
    atom__idindex_probe at;
    if (!inc || atom__ra_tuple_find(ra, u, U, l, NIL, &at) != NIL) continue;
    summary_wit(ra, y, src);
    if ((rc = tuple_make(ra, u, U, l, NIL, &at, w, inc, src, ra->n_pslots, ev)) != 0) {
      note_error(ra, rc);
      return;
    }
  }
  if (set == NIL || CELL(c)->group == NIL) return;

  /* Full tuples past their derived state: (u,U,l,l2) at U's event on l1 = l, and (U,v,l1,l) at
   * U's event on l2 = l, for every other unit u (v) that accessed l and every l1 (l2) of the set
   * U accessed. */
  for (uint32_t s = ra->var[l].head; s != NIL; s = CELL(s)->vnext) {
    if (UNIT(CELL(s)->unit)->thread == t) continue;
    for (uint32_t o = GROUP(CELL(c)->group)->head; o != NIL; o = CELL(o)->gnext) {
      if (o == c) continue;
      if ((rc = refine_full(ra, s, o, DESC(1, 0, k), ev)) != 0 ||
          (rc = refine_full(ra, o, s, DESC(0, 1, k), ev)) != 0) {
        note_error(ra, rc);
        return;
      }
    }
  }
}

/* 001 Fig. 5 GC: unit U ends. Its summaries go; a tuple naming it stays only while one of its
 * automata can still accept with events of the other unit alone. */
static void unit_end(race_automata *ra, uint32_t U) {
  /* Full tuples (u,U,l1,l2) whose pattern 6, 9 or 11 is at its third event only wait for u now:
   * derive() could no longer see them once U's cells are gone. */
  for (uint32_t c = UNIT(U)->cells; c != NIL; c = CELL(c)->unext) {
    if (CELL(c)->group == NIL) continue;
    for (uint32_t id = CELL(c)->tuples; id != NIL; id = TUPLE(id >> 2)->next[id & 3]) {
      const ra_tuple *p = TUPLE(id >> 2);
      if ((id & 3) != 2 || is_full(p)) continue;
      /* patterns 6, 9, 11 at their second event, and when (for the test below) */
      uint64_t t2[NPAT];
      int any = 0;
      for (int q = 5; q < NPAT; q++) {
        t2[q] = NONE;
        if (!(atom__ra_patterns[q].ev[1] & DESC(0, 1, 0)) && state_of(p->word, q) == 2) {
          t2[q] = wit_of_const(ra, p)[ra->slot[q][1]].index;
          any = 1;
        }
      }
      if (!any) continue;
      uint32_t u = p->u, l1 = p->l1, su = atom__ra_cell_find(ra, u, l1);
      if (su == NIL) continue;
      for (uint32_t o = GROUP(CELL(c)->group)->head; o != NIL; o = CELL(o)->gnext) {
        int past = 0;
        for (int q = 5; q < NPAT && !past; q++) {
          const ra_pos *x = &CELL(o)->last[atom__ra_patterns[q].ev[2] & 1];
          past = t2[q] != NONE && x->index != NONE && x->index > t2[q];
        }
        atom__idindex_probe at;
        if (o == c || !past || atom__ra_tuple_find(ra, u, U, l1, CELL(o)->var, &at) != NIL)
          continue;
        ra_pos wit[MAXSLOTS];
        uint64_t w = derive(ra, CELL(su), TUPLE(id >> 2), CELL(o), wit);
        if (!atom__ra_can_accept(ra, w, DOUBLE, 2)) continue;
        int rc = tuple_make(ra, u, U, l1, CELL(o)->var, &at, w, 0, wit, ra->n_fslots, NULL);
        if (rc) note_error(ra, rc);
      }
    }
  }

  ra_unit *x = UNIT(U);
  x->flags |= UF_ENDED;
  size_t n = 0;
  for (uint32_t c = x->cells; c != NIL; c = CELL(c)->unext) n++;
  int unindexed = atom__ra_cells_unindex_all(ra, U, n); /* nothing looks U's cells up below */
  for (uint32_t c = x->cells, nc; c != NIL; c = nc) {
    ra_cell *y = CELL(c);
    nc = y->unext;
    if (y->seen) {
      atom__ra_vlist_unlink(ra, c);
      atom__ra_group_leave(ra, c);
      ra->n_summaries--;
    }
    for (uint32_t id = CELL(c)->tuples, next; id != NIL; id = next) {
      uint32_t tt = id >> 2;
      next = TUPLE(tt)->next[id & 3];
      const ra_tuple *z = TUPLE(tt);
      unsigned ended = atom__ra_ended_roles(ra, z);
      if (atom__ra_can_accept(ra, z->word, is_full(z) ? DOUBLE : SINGLE, ended))
        atom__ra_link_remove(ra, tt, id & 3);
      else
        atom__ra_tuple_delete(ra, tt);
    }
    atom__ra_cell_free(ra, c, !unindexed);
  }
  atom__ra_unit_unref(ra, U);
}

static int ra_event(void *self, const atom_ev *ev) {
  race_automata *ra = self;
  ra->err = 0;
  if (ensure_thread(ra, ev->thread)) return ATOM_ENOMEM;
  ra_thread *th = &ra->th[ev->thread];
  switch (ev->kind) {
  case ATOM_BEGIN:
    th->in_txn = 1;
    th->unit = NIL;
    th->begin_index = ev->index;
    th->begin_loc = ev->loc;
    return 0;
  case ATOM_END:
    if (th->in_txn && th->unit != NIL) unit_end(ra, th->unit);
    th = &ra->th[ev->thread];
    th->in_txn = 0;
    th->unit = NIL;
    return 0;
  case ATOM_READ:
  case ATOM_WRITE: {
    int rc = ensure_var(ra, ev->target);
    if (rc) return rc == ATOM_ELIMIT ? atom_env_error(ra->env, rc, "more than 2^32 - 2 atomic sets")
                                     : rc;
    unsigned k = ev->kind == ATOM_WRITE ? K_WRITE : K_READ;
    if (ra->th[ev->thread].in_txn) access_txn(ra, ev, k);
    else access_unary(ra, ev, k);
    if (ra->err == ATOM_ELIMIT)
      return atom_env_error(ra->env, ATOM_ELIMIT,
                            "event %" PRIu64 ": more than %u tuples, %u cells or %u units held",
                            ev->index, (unsigned)MAX_TUPLES, (unsigned)MAX_CELLS,
                            (unsigned)MAX_UNITS);
    return ra->err;
  }
  default:
    return 0;
  }
}

static void ra_destroy(void *self) {
  race_automata *ra = self;
  if (!ra) return;
  for (size_t i = 0; i < ra->th_cap; i++) atom__idindex_free(&ra->th[i].cells, ra->mem);
  atom__mem_free(ra->mem, ra->th, ra->th_cap * sizeof *ra->th);
  atom__mem_free(ra->mem, ra->var, ra->var_cap * sizeof *ra->var);
  atom__u64map_free(&ra->declared, ra->mem);
  atom__ra_pool_free(ra, &ra->units);
  atom__ra_pool_free(ra, &ra->cells);
  atom__ra_pool_free(ra, &ra->groups);
  atom__ra_pool_free(ra, &ra->tuples);
  atom__ra_pool_free(ra, &ra->pwit);
  atom__ra_pool_free(ra, &ra->fwit);
  atom__idindex_free(&ra->group_ix, ra->mem);
  atom__idindex_free(&ra->tuple_ix, ra->mem);
  atom__rb_free(&ra->rb);
  atom__mem_free(ra->mem, ra, sizeof *ra);
}

static int ra_create(void **self, atom_env *env) {
  /* "prefix" is what "var" is: sets by name prefix are declared where the names are read
   * (atom_trace_reader_sets_by_prefix, atomcheck), and the checker sees only declared sets. */
  static const char *const policies[] = {"var", "one", "prefix", NULL};
  int policy = POLICY_VAR;
  int rc = atom__arg_choice(env, "sets", policies, &policy);
  if (rc) return rc;
  if (policy == POLICY_PREFIX) policy = POLICY_VAR;
  race_automata *ra = ATOM__NEW_STATE(env, race_automata, own_mem);
  if (!ra) return ATOM_ENOMEM;
  atom__mem *mem = &ra->own_mem;
  ra->env = env;
  ra->mem = mem;
  ra->policy = policy;
  ra->one_set = NIL;
  atom__rb_init(&ra->rb, ra->mem);
  atom__ra_build_tables(ra);
  atom__ra_pool_init(&ra->units, sizeof(ra_unit), MAX_UNITS);
  atom__ra_pool_init(&ra->cells, sizeof(ra_cell), MAX_CELLS);
  atom__ra_pool_init(&ra->groups, sizeof(ra_group), MAX_CELLS);
  atom__ra_pool_init(&ra->tuples, sizeof(ra_tuple), MAX_TUPLES);
  atom__ra_pool_init(&ra->pwit, ra->n_pslots * sizeof(ra_pos), MAX_TUPLES);
  atom__ra_pool_init(&ra->fwit, ra->n_fslots * sizeof(ra_pos), MAX_TUPLES);
  *self = ra;
  return 0;
}

/* nodes: the bitsets held (001 §5 Table 1 |B|): summaries (u,*,l,*) and tuples. */
static int ra_stats(void *self, atom_checker_counters *out) {
  race_automata *ra = self;
  out->nodes = ra->n_summaries + ra->n_tuples;
  out->edges = 0;
  out->clocks = 0;
  return 0;
}

static const char *const ra_keys[] = {"sets", NULL};

const atom_checker atom__checker_race_automata = {
    ATOM_CHECKER_ABI_VERSION,
    ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_BEGIN) |
        ATOM_KIND_BIT(ATOM_END),
    "race-automata",
    "atomic-set serializability: 14 access patterns over units of work, by race automata",
    ra_keys,
    ra_create,
    ra_event,
    NULL,
    ra_destroy,
    ra_stats,
    .properties = ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_SOUND | ATOM_CHECKER_PROP_COMPLETE,
};
