/* aerodrome: reports. A violation's cycle is assembled from the provenance nodes (walk) and
 * handed to the session as a structured report (emit). */

#include "checkers/aerodrome/aerodrome_internal.h"
#include "support/rotate.h"

enum { PT_NONE, PT_EV, PT_FORK };
typedef struct pt {
  int kind;
  aev ev;
} pt;

static inline int same_txn(const aev *x, const aev *y) {
  return x->txn.thread == y->txn.thread && x->txn.unary == y->txn.unary &&
         x->txn.begin_index == y->txn.begin_index;
}

static void cyc_add(cyc *c, const aev *from, const aev *to) {
  if (c->n == CYC_MAX) {
    c->fail = 1;
    return;
  }
  c->from[c->n] = *from;
  c->to[c->n] = *to;
  c->n++;
}

/* The path has reached point p; go on from event b. Two events of one transaction need no
 * edge; two transactions of one thread are joined by program order; a fork reaches every
 * event of the child. */
static void cyc_link(cyc *c, pt p, const aev *b) {
  if (c->fail) return;
  if (p.kind == PT_NONE) {
    if (c->started) c->fail = 1;
    c->start = *b;
    c->started = 1;
  } else if (p.kind == PT_FORK) {
    if (b->txn.thread != p.ev.target || b->index < p.ev.index) c->fail = 1;
    else cyc_add(c, &p.ev, b);
  } else if (!same_txn(&p.ev, b)) {
    if (p.ev.txn.thread != b->txn.thread || p.ev.index > b->index) c->fail = 1;
    else cyc_add(c, &p.ev, b);
  }
}

static pt walk(cyc *c, const pnode *n, pt in);

static pt walk_src(cyc *c, const pnode *n, const aev *at, int origin, pt in) {
  if (!origin) in = walk(c, n, in);
  cyc_link(c, in, at);
  pt r = {PT_EV, *at};
  return r;
}

/* Append the edges of node n's path, entered from point in; return the point reached. */
static pt walk(cyc *c, const pnode *n, pt in) {
  if (c->fail || !n) {
    c->fail = 1;
    return in;
  }
  pt r = {PT_EV, n->e2};
  switch (n->kind) {
    case PN_EDGE:
      walk_src(c, n->a, &n->e1, n->flags & PN_ORIGIN, in);
      cyc_add(c, &n->e1, &n->e2);
      return r;
    case PN_FORK:
      walk_src(c, n->a, &n->e1, n->flags & PN_ORIGIN, in);
      r.kind = PT_FORK;
      r.ev = n->e1;
      return r;
    case PN_HOLD: /* not in chains (ex_rrec unwraps it) */
      c->fail = 1;
      return in;
    default: { /* PN_END */
      pt p = walk(c, n->a, in);
      if (n->flags & PN_ORIGIN) {
        cyc_link(c, p, &n->e2);
        return r;
      }
      pt q = walk(c, n->b, p);
      if (!(n->flags & PN_AT)) return q;
      cyc_link(c, q, &n->e2);
      return r;
    }
  }
}

/* Drop detours: while a transaction occurs twice on the cycle, cut the edges between its two
 * occurrences (the closing edge, last, is never cut). */
static void cyc_simplify(cyc *c) {
  for (size_t i = 0; i < c->n; i++)
    for (size_t j = c->n - 1; j > i; j--)
      if (same_txn(&c->from[i], &c->from[j])) {
        size_t cut = j - i;
        memmove(&c->from[i], &c->from[j], (c->n - j) * sizeof c->from[0]);
        memmove(&c->to[i], &c->to[j], (c->n - j) * sizeof c->to[0]);
        c->n -= cut;
        break;
      }
}

static inline atom_ev ev_of(const aev *e) {
  atom_ev x = {e->kind, e->txn.thread, e->target, 0, e->index, e->loc};
  return x;
}

/* The cycle's transactions (one per edge, from the victim's on), edges and variables. */
static int build_cycle(atom__report_build *rb, const cyc *c) {
  for (size_t i = 0; i < c->n; i++) {
    atom_ev from = ev_of(&c->from[i]), to = ev_of(&c->to[i]);
    int rc = atom__rb_txn(rb, &c->from[i].txn);
    if (!rc) rc = atom__rb_edge(rb, &from, &to, i + 1 == c->n ? ATOM_EDGE_CLOSING : 0);
    if (rc) return rc;
  }
  return atom__rb_vars_of_events(rb, CYC_VARS);
}

/* Report the cycle in c, whose edge `closing` was closed by ev; or, if the provenance was not
 * complete (c->fail) or the cycle finds no memory, the victim's transaction and `other`
 * without edges. */
static int emit(aero *a, cyc *c, const atom_ev *ev, uint32_t victim, size_t closing,
                const atom_txn_ref *other, const atom_ev *other_ev) {
  atom__report_build *rb = &a->rb;
  atom__rb_reset(rb);
  if (c && !c->fail && c->n > 0 && closing < c->n) {
    /* the closing edge last, so that the cycle starts with the victim's transaction */
    atom__rotate(c->from, c->n, sizeof c->from[0], closing + 1);
    atom__rotate(c->to, c->n, sizeof c->to[0], closing + 1);
    cyc_simplify(c);
    if (build_cycle(rb, c)) atom__rb_reset(rb);
  }
  if (!rb->n_edges) {
    /* Out of memory or a provenance chain cut at PN_MAX_DEPTH: the two transactions we know. */
    const athread *th = &a->thr[victim];
    atom_txn_ref mine = {victim, 0, th->begin_index, th->begin_loc};
    int rc = atom__rb_txn(rb, &mine);
    if (!rc && other) rc = atom__rb_txn(rb, other);
    if (!rc) rc = atom__rb_event_apart(rb, ev, NULL);
    if (!rc && other_ev) rc = atom__rb_event_apart(rb, other_ev, NULL);
    if (!rc && (ev->kind == ATOM_READ || ev->kind == ATOM_WRITE))
      rc = atom__rb_var(rb, ev->target);
    if (rc) return rc;
  }
  /* message NULL: the session tells the cycle (or names the transactions) */
  return atom__rb_submit(rb, a->env, "conflict-cycle", ev->index, 0, NULL, 0);
}

/* One cycle of two transaction instances is often seen at several events (ρ2: at the read and
 * again at the END): report each pair of instances once, so that the session's occurrence
 * count is the number of times the violation happened (a loop's iterations). */
static int reported(aero *a, uint32_t victim, const atom_txn_ref *other) {
  athread *th = &a->thr[victim];
  uint64_t key =
      other ? ((uint64_t)other->thread << 40) ^ other->begin_index ^ ((uint64_t)other->unary << 63)
            : UINT64_MAX;
  if (th->rep_seq == th->seq + 1 && th->rep_other == key) return 1;
  th->rep_seq = th->seq + 1;
  th->rep_other = key;
  return 0;
}

/* The report scratch, cleared; NULL if out of memory (the report then has no edges). */
static cyc *cyc_begin(aero *a) {
  if (!a->cy && !(a->cy = atom__mem_alloc(a->mem, sizeof *a->cy))) return NULL;
  a->cy->n = 0;
  a->cy->fail = 0;
  a->cy->started = 0;
  return a->cy;
}

/* The path must have started in the victim's open transaction. */
static void cyc_check_start(const aero *a, cyc *c, uint32_t victim) {
  const athread *th = &a->thr[victim];
  if (!c->started || c->start.txn.thread != victim || c->start.txn.unary ||
      c->start.txn.begin_index != th->begin_index)
    c->fail = 1;
}

/* Violation at ev (003 Alg. 1 lines 9-12): a clock that knows the victim's open transaction,
 * explained by x, reaches ev across the closing edge src -> ev. src: the event the clock was
 * taken at (NULL if unknown). */
int atom__aero_report_edge(aero *a, const atom_ev *ev, uint32_t victim, const expl *x,
                           const aev *src) {
  if (known_expl(x)) src = &x->at;
  if (reported(a, victim, src ? &src->txn : NULL)) return 0;
  atom_ev oe = {0, 0, 0, 0, 0, 0};
  if (src) oe = (atom_ev){src->kind, src->txn.thread, src->target, 0, src->index, src->loc};
  cyc *c = cyc_begin(a);
  size_t closing = 0;
  if (c) {
    aev to = cur_aev(a, ev);
    pt none = {PT_NONE, to}, end = {PT_EV, to};
    walk_src(c, x->n, &x->at, x->origin, none);
    cyc_add(c, &x->at, &to);
    closing = c->n - 1;
    cyc_check_start(a, c, victim);
    if (!c->fail) cyc_link(c, end, &c->start);
  }
  return emit(a, c, ev, victim, closing, src ? &src->txn : NULL, src ? &oe : NULL);
}

/* Violation at END(t) (lines 38-40): thread u's clock knows t's open transaction T, and t's
 * clock knows u's open transaction U. */
int atom__aero_report_end(aero *a, const atom_ev *ev, uint32_t t, uint32_t u) {
  atom_txn_ref ut = thread_txn(a, u);
  if (reported(a, t, &ut)) return 0;
  cyc *c = cyc_begin(a);
  size_t closing = 0;
  if (c) {
    pt none = {PT_NONE, {{0, 0, 0, 0}, 0, 0, 0, 0}};
    pt p = walk(c, ends_get(a, &a->thr[u].prov, t), none);
    pt q = walk(c, ends_get(a, &a->thr[t].prov, u), p);
    closing = c->n ? c->n - 1 : 0;
    cyc_check_start(a, c, t);
    if (!c->fail) cyc_link(c, q, &c->start);
  }
  return emit(a, c, ev, t, closing, &ut, &a->thr[u].last);
}
