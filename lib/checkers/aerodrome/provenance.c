/* aerodrome: provenance, how each clock came to know each open transaction (see "Provenance"
 * in aerodrome.c): node memory and its collection, the records per clock, the explanations
 * (ex_*) of how a clock knows a transaction, and what a thread clock records when it learns one. */

#include "checkers/aerodrome/aerodrome_internal.h"

/* size bytes of node memory, or NULL (out of memory). Nodes are not freed one by one: a
 * record that is replaced just drops its pointer, and atom__aero_pn_collect reclaims the memory
 * of the nodes no record reaches any more. So replacing a record never reads the old node (a
 * cache miss per record with reference counts) and nodes are written in order. */
static void *pn_alloc(aero *a, size_t size) {
  size = (size + 7) & ~(size_t)7;
  pchunk *c = a->chunks;
  if (!c || c->size - c->used < size) {
    size_t bytes = PN_CHUNK;
    if (!(c = atom__mem_alloc(a->mem, offsetof(pchunk, data) + bytes))) return NULL;
    c->next = a->chunks;
    c->size = bytes;
    c->used = 0;
    a->chunks = c;
  }
  void *p = (char *)c->data + c->used;
  c->used += size;
  a->node_bytes += size;
  a->n_nodes++;
  return p;
}

void atom__aero_pn_free_chunks(aero *a, pchunk *c) {
  while (c) {
    pchunk *next = c->next;
    atom__mem_free(a->mem, c, offsetof(pchunk, data) + c->size);
    c = next;
  }
}

/* A copy of node n and of the nodes it reaches in the current chunks (n already copied: its
 * copy). Out of memory, a node is lost (NULL): the path through it becomes unknown. The
 * recursion is as deep as the chain (at most PN_MAX_DEPTH + 1: a HOLD over a chain). */
static pnode *pn_copy(aero *a, pnode *n) {
  if (!n) return NULL;
  if (n->kind == PN_FWD) return n->a;
  size_t size = pn_size(n->kind);
  pnode *m = pn_alloc(a, size);
  if (m) memcpy(m, n, size);
  n->kind = PN_FWD;
  n->a = m;
  if (m) {
    m->a = pn_copy(a, m->a);
    if (m->kind != PN_HOLD) m->b = pn_copy(a, m->b);
  }
  return m;
}

/* A root record at clock component c: its node copied if it is about the current transaction
 * of c's owner (the only time it is read, ends_get), dropped otherwise. */
static inline void pn_keep(aero *a, pnode **cell, uint32_t c) {
  pnode *n = *cell;
  if (!n) return;
  uint32_t o = c < a->n_slot ? a->slots[c].owner : NIL;
  *cell = o != NIL && n->of == o && n->about == a->thr[o].seq ? pn_copy(a, n) : NULL;
}

static size_t pn_keep_ends(aero *a, ends *e) {
  for (uint32_t c = 0; c < e->cap; c++) pn_keep(a, &e->p[(size_t)c * (e->gap + 1)], c);
  return e->cap;
}

/* Reclaim the nodes no record reaches: copy the reachable ones (from the records, the roots)
 * into new chunks and free the old ones; records about ended transactions are dropped on the
 * way. Run between events, when the nodes made since the last collection outgrow twice the
 * survivors of that collection (and a floor that grows with the number of record slots, so a
 * collection's scan of them is paid for by the nodes made meanwhile): node memory stays
 * within about three times what the records reach, plus the floor. */
AERO_RARE void atom__aero_pn_collect(aero *a) {
  pchunk *old = a->chunks;
  a->chunks = NULL;
  a->node_bytes = 0;
  a->n_nodes = 0;
  size_t slots = 0;
  for (uint32_t u = 0; u < a->n_thr; u++) slots += pn_keep_ends(a, &a->thr[u].prov);
  for (uint32_t x = 0; x < a->n_var; x++) {
    avar *v = &a->var[x];
    for (uint32_t c = 0; c < v->nslot; c++) {
      pn_keep(a, &v->slot[c].wend, c);
      pn_keep(a, &v->slot[c].rp, c);
      pn_keep(a, &v->slot[c].cp, c);
    }
    slots += 3 * (size_t)v->nslot;
    if (a->vbasic)
      for (uint32_t u = 0; u < a->vbasic[x].n_rt; u++)
        slots += pn_keep_ends(a, &a->vbasic[x].rtend[u]);
  }
  for (uint32_t l = 0; l < a->n_lock; l++) slots += pn_keep_ends(a, &a->lock[l].lend);
  atom__aero_pn_free_chunks(a, old);
  size_t floor = 16 * slots > PN_COLLECT_MIN ? 16 * slots : PN_COLLECT_MIN;
  a->collect_at = 2 * a->node_bytes + floor;
}

/* A new node about the open transaction of thread `of`, or NULL (out of memory, or the chain
 * would be longer than PN_MAX_DEPTH: the knowledge is then of unknown provenance and a report
 * about it names only the closing edge). */
pnode *atom__aero_pn_new(aero *a, uint32_t kind, uint32_t flags, uint32_t of, pnode *x,
                         pnode *y, const aev *e1, const aev *e2, uint64_t made) {
  uint32_t d = 0;
  if (x && x->depth > d) d = x->depth;
  if (y && y->depth > d) d = y->depth;
  if (d + 1 > PN_MAX_DEPTH) return NULL;
  pnode *n = pn_alloc(a, pn_size(kind));
  if (!n) return NULL;
  n->kind = (uint8_t)kind;
  n->flags = (uint8_t)flags;
  n->depth = (uint16_t)(d + 1);
  n->of = of;
  n->about = a->thr[of].seq;
  n->a = x;
  if (e2) n->e2 = *e2;
  else memset(&n->e2, 0, sizeof n->e2);
  if (kind == PN_HOLD) return n; /* the node ends here (pn_size) */
  n->b = y;
  n->made = made;
  if (kind == PN_END) return n;
  if (e1) n->e1 = *e1;
  else memset(&n->e1, 0, sizeof n->e1);
  return n;
}

/* Slot c of e := n (if there is no room, the slot is empty: never left describing an older
 * transaction). */
void atom__aero_ends_put(aero *a, ends *e, uint32_t c, pnode *n) {
  if (c >= e->cap) {
    if (!n) return;
    size_t cap = e->cap;
    if (e->gap || /* a view: the variable grows it first (vslot_room) */
        ATOM__GROW(a->mem, e->p, cap, c + 1 > a->n_slot ? c + 1 : a->n_slot))
      return;
    e->cap = (uint32_t)cap;
  }
  e->p[(size_t)c * (e->gap + 1)] = n;
}

void atom__aero_ends_free(aero *a, ends *e) {
  if (!e->gap) atom__mem_free(a->mem, e->p, e->cap * sizeof *e->p);
  e->p = NULL;
  e->cap = 0;
}

/* Room for slot c of v->slot (one per clock component). */
AERO_RARE int atom__aero_vslot_grow(aero *a, avar *v, uint32_t c) {
  size_t want = c + 1 > a->n_slot ? c + 1 : a->n_slot;
  vslot *p = atom__mem_realloc(a->mem, v->slot, v->nslot * sizeof *p, want * sizeof *p);
  if (!p) return ATOM_ENOMEM;
  memset(p + v->nslot, 0, (want - v->nslot) * sizeof *p);
  v->slot = p;
  v->nslot = (uint32_t)want;
  return 0;
}

AERO_RARE int atom__aero_rlog_grow(aero *a, athread *th) {
  size_t cap = th->cap_rlog;
  if (ATOM__GROW(a->mem, th->rlog, cap, (size_t)th->n_rlog + 1)) return ATOM_ENOMEM;
  th->cap_rlog = (uint32_t)(cap < RLOG_MAX ? cap : RLOG_MAX);
  return 0;
}

/* How thread u's clock (at its event `at`) knows thread c's open transaction. */
expl atom__aero_ex_thread(const aero *a, uint32_t u, uint32_t c, const aev *at) {
  expl x = {NULL, *at, u == c};
  if (u != c) x.n = ends_get(a, &a->thr[u].prov, c);
  return x;
}

/* How a stored clock (W_x, L_l, R_{u,x}: a copy of its storer's clock at event `store`, joined
 * at ENDs since) knows thread c's open transaction. */
expl atom__aero_ex_snap(const aero *a, const aev *store, const ends *e, uint32_t c) {
  pnode *n = ends_get(a, e, c);
  ATOM__ASSERT(!n || n->kind != PN_HOLD); /* stored clocks' records are END nodes: made is set */
  if (n && n->made > store->index) {
    expl x = {n, n->e2, 0};
    return x;
  }
  return atom__aero_ex_thread(a, store->txn.thread, c, store);
}

static expl ex_rrec(const aero *a, const ends *e, uint32_t c) {
  pnode *n = ends_get(a, e, c);
  if (!n) return AERO_UNKNOWN;
  expl x = {n->kind == PN_HOLD ? n->a : n, n->e2, 0};
  return x;
}

/* How R_x (of variable v) knows thread c's open transaction. */
expl atom__aero_ex_rp(const aero *a, const avar *v, uint32_t c) {
  const athread *th = &a->thr[c];
  uint32_t seq = th->seq, var = (uint32_t)(v - a->var), k = th->slot;
  const rlog_ent *own = NULL;
  if (th->active)
    for (uint32_t i = 0; i < th->n_rlog && !own; i++)
      if (th->rlog[i].var == var) own = &th->rlog[i];
  if (!own && k < v->nslot && v->slot[k].ro.o_about == seq && seq) {
    const rown *s = &v->slot[k].ro;
    expl x = {NULL, {{c, 0, th->begin_index, th->begin_loc}, s->index, s->loc, ATOM_READ, var},
              1};
    return x;
  }
  if (own) {
    expl x = {NULL, {{c, 0, th->begin_index, th->begin_loc}, own->index, own->loc, ATOM_READ, var},
              1};
    return x;
  }
  return ex_rrec(a, VAR_ENDS(v, rp), c);
}

/* How chR_x knows thread c's open transaction. */
expl atom__aero_ex_chr(const aero *a, const avar *v, uint32_t c) {
  uint32_t seq = a->thr[c].seq, k = slot_of(a, c);
  if (k < v->nslot && v->slot[k].ro.a_about == seq && seq) return atom__aero_ex_rp(a, v, c);
  return ex_rrec(a, VAR_ENDS(v, cp), c);
}

/* An EDGE node: the knowledge explained by x crosses the edge x.at -> to. */
static pnode *pn_edge(aero *a, uint32_t of, const expl *x, const aev *to, uint64_t made) {
  if (!known_expl(x)) return NULL;
  return atom__aero_pn_new(a, PN_EDGE, x->origin ? PN_ORIGIN : 0, of, x->n, NULL, &x->at, to, made);
}

/* An END node for a stored clock: C (thread of) →* V (left, V's thread clock) →* the clock
 * (right, ending at its store event). */
pnode *atom__aero_pn_end_at(aero *a, uint32_t of, pnode *left, const expl *right, uint64_t made) {
  if (!left || !known_expl(right)) return NULL;
  uint32_t flags = PN_AT | (right->origin ? PN_ORIGIN : 0);
  return atom__aero_pn_new(a, PN_END, flags, of, left, right->n, NULL, &right->at, made);
}

/* Thread u's clock learns the open transaction of the owner of slot k from sd: record how.
 * Called only when a component crosses an open transaction's BEGIN value (rare), so kept out
 * of the join loop. */
AERO_RARE void atom__aero_learn_thread(aero *a, uint32_t u, uint32_t k, const srcd *sd) {
  uint32_t i = a->slots[k].owner;
  pnode *n = NULL;
  uint64_t made = sd->ev->index;
  expl x;
  aev to;
  switch (sd->kind) {
    case SD_SNAP:
      /* W_x's records are a view made here, off the hot path that fills sd */
      x = atom__aero_ex_snap(a, sd->at, sd->e ? sd->e : VAR_ENDS(sd->v, wend), i);
      to = cur_aev(a, sd->ev);
      n = pn_edge(a, i, &x, &to, made);
      break;
    case SD_RREC:
      x = atom__aero_ex_rp(a, sd->v, i);
      to = cur_aev(a, sd->ev);
      n = pn_edge(a, i, &x, &to, made);
      break;
    case SD_THREAD:
      x = atom__aero_ex_thread(a, sd->who, i, sd->at);
      to = cur_aev(a, sd->ev);
      n = pn_edge(a, i, &x, &to, made);
      break;
    case SD_FORK:
      x = atom__aero_ex_thread(a, sd->who, i, sd->at);
      if (known_expl(&x))
        n = atom__aero_pn_new(a, PN_FORK, x.origin ? PN_ORIGIN : 0, i, x.n, NULL, &x.at, NULL,
                              made);
      break;
    default: { /* SD_END: C_i →* V (V's clock), V →* C_u (u's clock) */
      pnode *l = ends_get(a, &a->thr[sd->who].prov, i), *r = ends_get(a, &a->thr[u].prov, sd->who);
      if (l && r) n = atom__aero_pn_new(a, PN_END, 0, i, l, r, NULL, NULL, made);
    }
  }
  atom__aero_ends_put(a, &a->thr[u].prov, k, n);
}
