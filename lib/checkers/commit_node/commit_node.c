/* commit-node: conflict-atomicity and view-atomicity of all feasible interleavings of the
 * observed units, by access trees, inter-edges and commit nodes (004 §3, §4).
 *
 * While events stream in, each unit gets an access tree (004 §3.1): the root is the unit,
 * synchronization nodes are lock blocks, leaves are accesses (and, inside a transaction, FORK
 * and JOIN, which order the whole child against one point of the transaction). Trees are
 * trimmed as they grow (004 §7.2) and identical trees of one thread period are kept at most
 * twice (004 §7); nothing else of the trace is kept. Units (doc/checkers/commit-node.md):
 *   - a transaction is the outermost BEGIN..END;
 *   - outside transactions, a run of events during which the thread holds a lock is a lock
 *     block and counts as a transaction (004 §2: "E contains no synchronization");
 *   - the remaining events form non-transactional units, cut at fork/join (thread periods,
 *     004 §7.4), at sync points (a release write ends a period, an acquire read that learns
 *     of new releases starts one: periods.h) and at the transactions and lock blocks between
 *     them. 004 §7.4 needs every event of a non-transactional unit to be concurrent with the
 *     same events of other threads; a period has that property, a unit across a sync point
 *     does not.
 *
 * At finish: inter-edges between concurrent events (004 Fig. 3 or Fig. 5, with the outermost
 * common lock rule), plus ordering links the paper leaves implicit (program order between the
 * units of a thread, fork and join, and sync order: an acquire read is linked to the latest
 * release write of its variable by each other thread that it is not already ordered after).
 * Thm 4.1: a transaction whose communication nodes form one
 * chain (at most one commit node) is fine. Otherwise Thm 4.3 / 4.6: it violates iff two of its
 * communication nodes that do not contain each other lie on a cycle of the forest, tree edges
 * undirected. That test is linear: contract every tree to one vertex (a tree is connected, so
 * this keeps connectivity outside any one tree); two edges at a vertex are on a common cycle
 * iff they are in the same biconnected component; so one Tarjan pass suffices, then for each
 * transaction and each component the attachment nodes there must form a chain.
 *
 * The theorems assume no potential for deadlock, so a goodlock pass (support/lockorder.h)
 * reports `potential-deadlock`. */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "checkers/commit_node/commit_node.h"
#include "support/argval.h"

/* ---- small helpers ------------------------------------------------------------------- */

static int ensure_thread(commit_node *c, uint32_t t) {
  if (t < c->th_cap) return 0;
  size_t old = c->th_cap;
  if (ATOM__GROW(c->mem, c->th, c->th_cap, (size_t)t + 1)) return ATOM_ENOMEM;
  for (size_t i = old; i < c->th_cap; i++) {
    c->th[i].unit = NONE;
    c->th[i].last_unit = NONE;
  }
  return 0;
}

static int add_link(commit_node *c, cn_end a, cn_end b) {
  if (ATOM__GROW(c->mem, c->links, c->lcap, c->nl + 1)) return ATOM_ENOMEM;
  c->links[c->nl++] = (cn_link){a, b};
  return 0;
}

static int add_pending(commit_node *c, cn_thread *th, cn_end e) {
  if (ATOM__GROW(c->mem, th->pend, th->pend_cap, th->pend_n + 1)) return ATOM_ENOMEM;
  th->pend[th->pend_n++] = e;
  return 0;
}

/* ---- trimming table ------------------------------------------------------------------ */

static uint64_t trim_key(uint32_t parent, uint32_t var) { return ((uint64_t)parent << 32) | var; }

static uint64_t trim_hash(uint64_t key, uint32_t period) {
  return atom__hash64(key ^ ((uint64_t)period << 20));
}

/* The entry of (key, period) in *out, added if absent (an addition may move th->trim, so the
 * callers keep indexes). @return 0 or ATOM_ENOMEM. */
static int trim_get(commit_node *c, cn_thread *th, uint64_t key, uint32_t period, uint32_t *out) {
  atom__idindex_probe p;
  atom__idindex_start(&th->trim_ix, trim_hash(key, period), &p);
  for (uint32_t i; (i = atom__idindex_next(&th->trim_ix, &p)) != ATOM__IDINDEX_END;) {
    if (th->trim[i].key == key && th->trim[i].period == period) {
      *out = i;
      return 0;
    }
  }
  if (th->trim_n >= UINT32_MAX - 1 || ATOM__GROW(c->mem, th->trim, th->trim_cap, th->trim_n + 1) ||
      atom__idindex_add(&th->trim_ix, c->mem, &p, (uint32_t)th->trim_n))
    return ATOM_ENOMEM;
  cn_trim *e = &th->trim[th->trim_n];
  memset(e, 0, sizeof *e);
  e->key = key;
  e->period = period;
  e->extra = NONE;
  e->lastw = NONE;
  *out = (uint32_t)th->trim_n++;
  return 0;
}

/* Forget the closed unit's counters. Emptying the index costs its capacity, which the largest
 * unit of the thread set; a small unit after a large one takes its entries out one by one. */
static void trim_clear(cn_thread *th) {
  if (th->trim_ix.cap <= 16 * th->trim_n) {
    atom__idindex_clear(&th->trim_ix);
  } else {
    for (size_t i = 0; i < th->trim_n; i++)
      atom__idindex_remove(&th->trim_ix, trim_hash(th->trim[i].key, th->trim[i].period),
                           (uint32_t)i);
  }
  th->trim_n = 0;
}

/* ---- building trees ------------------------------------------------------------------ */

static int bnode(commit_node *c, cn_thread *th, uint32_t *out) {
  if (th->bn >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(c->mem, th->b, th->bcap, th->bn + 1)) return ATOM_ENOMEM;
  cn_node *n = &th->b[th->bn];
  memset(n, 0, sizeof *n);
  n->parent = NONE;
  n->wrep = NONE;
  n->unit = th->unit;
  *out = (uint32_t)th->bn++;
  return 0;
}

/* Open a unit for thread t at event ev (its kind follows the thread's state), linked after the
 * thread's previous unit and after whatever forked or joined into it. */
static int open_unit(commit_node *c, uint32_t t, const atom_ev *ev, uint32_t period) {
  cn_thread *th = &c->th[t];
  if (c->nu >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(c->mem, c->units, c->ucap, c->nu + 1)) return ATOM_ENOMEM;
  if (ATOM__GROW(c->mem, c->links, c->lcap, c->nl + th->pend_n + 1)) return ATOM_ENOMEM;
  if (ATOM__GROW(c->mem, th->b, th->bcap, 1)) return ATOM_ENOMEM;
  uint32_t u = (uint32_t)c->nu++;
  cn_unit *un = &c->units[u];
  memset(un, 0, sizeof *un);
  un->thread = t;
  un->kind = INSIDE(th) ? (th->in_txn ? U_TXN : U_LOCK) : U_PLAIN;
  un->first = NONE;
  if (th->seg_set && un->kind != U_PLAIN) {
    un->begin_index = th->seg_index;
    un->begin_loc = th->seg_loc;
  } else {
    un->begin_index = ev->index;
    un->begin_loc = ev->loc;
  }
  /* 004 §3.1: the root stands for the whole unit. */
  th->unit = u;
  th->bn = 0;
  uint32_t root = 0;
  (void)bnode(c, th, &root); /* room reserved above */
  th->b[root].kind = K_ROOT;
  th->b[root].index = un->begin_index;
  th->b[root].loc = un->begin_loc;
  th->b[root].period = period;
  /* Program order and fork/join order between units (room reserved above). */
  if (th->last_unit != NONE) c->links[c->nl++] = (cn_link){{th->last_unit, 0}, {u, 0}};
  for (size_t i = 0; i < th->pend_n; i++) c->links[c->nl++] = (cn_link){th->pend[i], {u, 0}};
  th->pend_n = 0;
  th->last_unit = u;
  for (size_t i = 0; i < th->ls_n; i++) th->ls[i].node = NONE;
  return 0;
}

/* The parent for a new leaf: the innermost held lock's block, creating the blocks of the lock
 * stack that have no node in this unit yet (a block inherited from before the unit started, or
 * the rest of a block split by a release out of nesting order). */
static int materialize(commit_node *c, cn_thread *th, uint32_t *parent) {
  uint32_t p = 0;
  for (size_t i = 0; i < th->ls_n; i++) {
    cn_lockent *le = &th->ls[i];
    if (le->node == NONE) {
      uint32_t id;
      int rc = bnode(c, th, &id);
      if (rc) return rc;
      cn_node *n = &th->b[id];
      n->kind = K_LOCK;
      n->target = le->lock;
      n->parent = p;
      n->index = le->acq_index;
      n->loc = le->acq_loc;
      n->start = le->start;
      n->period = le->acq_period;
      le->node = id;
    }
    p = le->node;
  }
  *parent = p;
  return 0;
}

static int add_leaf(commit_node *c, uint32_t t, const atom_ev *ev, uint32_t period, int kind,
                    uint32_t *out) {
  cn_thread *th = &c->th[t];
  int rc;
  if (th->unit == NONE && (rc = open_unit(c, t, ev, period))) return rc;
  uint32_t parent;
  if ((rc = materialize(c, th, &parent))) return rc;
  cn_trim *pv = NULL, *uv = NULL;
  if (kind == K_READ || kind == K_WRITE) {
    /* 004 §7.2: per parent and variable, the first two reads and the first two writes stand
     * for the others (of the same thread period: a FORK/JOIN inside the unit changes what an
     * access can be concurrent with). A third leaf per parent stands for the later writes, so that the unit's
     * last write (which the view forest needs, Fig. 5) is always represented exactly. */
    uint32_t pi, ui;
    if ((rc = trim_get(c, th, trim_key(parent, ev->target), period, &pi)) ||
        (rc = trim_get(c, th, trim_key(NONE, ev->target), NONE, &ui)))
      return rc;
    pv = &th->trim[pi];
    uv = &th->trim[ui];
    if (kind == K_READ && pv->nr >= 2) {
      *out = NONE;
      return 0;
    }
    if (kind == K_WRITE && pv->nw >= 2 && pv->extra != NONE) {
      cn_node *x = &th->b[pv->extra];
      x->index = ev->index;
      x->loc = ev->loc;
      x->period = period;
      uv->lastw_index = ev->index + 1;
      uv->lastw = pv->extra;
      *out = pv->extra;
      return 0;
    }
  }
  uint32_t id;
  if ((rc = bnode(c, th, &id))) return rc;
  cn_node *n = &th->b[id];
  n->kind = (uint8_t)kind;
  n->target = ev->target;
  n->parent = parent;
  n->index = ev->index;
  n->loc = ev->loc;
  n->period = period;
  if (kind == K_READ) {
    pv->nr++;
    n->prevw = uv->lastw_index;
    n->wrep = uv->lastw;
  } else if (kind == K_WRITE) {
    if (pv->nw >= 2) pv->extra = id;
    else pv->nw++;
    uv->lastw_index = ev->index + 1;
    uv->lastw = id;
  }
  *out = id;
  return 0;
}

static uint64_t tree_hash(const cn_unit *un, const cn_node *b, size_t n) {
  uint64_t h = atom__hash64(((uint64_t)un->kind << 32) ^ b[0].period ^ 0x51ed27a3u);
  for (size_t i = 0; i < n; i++) {
    const cn_node *x = &b[i];
    h = atom__hash64(h ^ (((uint64_t)x->kind << 56) ^ ((uint64_t)x->final << 48) ^ x->target));
    h = atom__hash64(h ^ x->loc);
    h = atom__hash64(h ^ (((uint64_t)x->parent << 32) ^ x->wrep ^ (x->prevw ? 1ull << 63 : 0)));
  }
  return h;
}

/* Same tree up to event indexes: kinds, targets, locations, shape. */
static int same_tree(const commit_node *c, const cn_unit *a, const cn_unit *bu, const cn_node *b,
                     size_t n) {
  if (a->n != n || a->kind != bu->kind) return 0;
  const cn_node *x = &c->nodes[a->first];
  if (x[0].period != b[0].period) return 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t xp = x[i].parent == NONE ? NONE : x[i].parent - a->first;
    uint32_t xw = x[i].wrep == NONE ? NONE : x[i].wrep - a->first;
    if (x[i].kind != b[i].kind || x[i].target != b[i].target || x[i].loc != b[i].loc ||
        x[i].final != b[i].final || xp != b[i].parent || xw != b[i].wrep ||
        (x[i].prevw != 0) != (b[i].prevw != 0) || x[i].period != b[i].period)
      return 0;
  }
  return 1;
}

/* Close the open unit of thread t: mark final writes, compute subtree ranges, drop the tree if
 * two identical ones are kept already, else append it to the forest. */
static int close_unit(commit_node *c, uint32_t t) {
  cn_thread *th = &c->th[t];
  if (th->unit == NONE) return 0;
  cn_unit *un = &c->units[th->unit];
  cn_node *b = th->b;
  size_t n = th->bn;
  /* Final writes: the leaf holding the largest write index of each variable. */
  size_t nvars = atom_env_count(c->env, ATOM_SPACE_VAR);
  if (ATOM__GROW(c->mem, c->stamp, c->stamp_cap, nvars)) return ATOM_ENOMEM;
  if (c->nn + n >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(c->mem, c->nodes, c->ncap, c->nn + n)) return ATOM_ENOMEM;
  uint32_t key_unit = NONE;
  uint64_t h = 0;
  if (++c->stamp_now == 0) {
    memset(c->stamp, 0, c->stamp_cap * sizeof *c->stamp);
    c->stamp_now = 1;
  }
  for (size_t i = 0; i < n; i++) {
    if (b[i].kind != K_WRITE || b[i].target >= c->stamp_cap) continue;
    cn_stamp *st = &c->stamp[b[i].target];
    if (st->stamp != c->stamp_now || b[st->leaf].index < b[i].index) {
      st->stamp = c->stamp_now;
      st->leaf = (uint32_t)i;
    }
  }
  for (size_t i = 0; i < n; i++)
    b[i].final = b[i].kind == K_WRITE && b[i].target < c->stamp_cap &&
                 c->stamp[b[i].target].leaf == i;
  for (size_t i = n; i-- > 0;) {
    if (b[i].end < i + 1) b[i].end = (uint32_t)(i + 1);
    if (b[i].parent != NONE && b[b[i].parent].end < b[i].end) b[b[i].parent].end = b[i].end;
  }
  /* 004 §7: more than two identical trees (same thread period, same accesses and locations)
   * add nothing; keep two. */
  h = tree_hash(un, b, n);
  uint32_t first;
  int drop = 0;
  if (atom__u64map_get(&c->dedup, h, &first)) {
    if (same_tree(c, &c->units[first], un, b, n)) {
      if (c->units[first].copies >= 2) drop = 1;
      else key_unit = first;
    }
  } else if (atom__u64map_put(&c->dedup, c->mem, h, th->unit)) {
    return ATOM_ENOMEM;
  } else {
    un->copies = 1;
  }
  if (key_unit != NONE) c->units[key_unit].copies++;
  size_t keep = drop ? 1 : n;
  uint32_t base = (uint32_t)c->nn;
  for (size_t i = 0; i < keep; i++) {
    cn_node *x = &c->nodes[c->nn++];
    *x = b[i];
    x->unit = th->unit;
    if (x->parent != NONE) x->parent += base;
    if (x->wrep != NONE) x->wrep += base;
    x->end = drop ? base + 1 : x->end + base;
  }
  un->first = base;
  un->n = (uint32_t)keep;
  un->dropped = (uint32_t)drop;
  th->unit = NONE;
  th->bn = 0;
  trim_clear(th);
  for (size_t i = 0; i < th->ls_n; i++) th->ls[i].node = NONE;
  return 0;
}

/* Thread t needs a unit to link to now (fork/join outside a transaction): if events reached it
 * through links it has not passed on yet, a unit without accesses relays them. */
static int relay(commit_node *c, uint32_t t, const atom_ev *ev, uint32_t period) {
  cn_thread *th = &c->th[t];
  /* A thread without events has no unit: nothing orders through it. */
  if (th->unit != NONE || th->pend_n == 0 || !th->started) return 0;
  int rc = open_unit(c, t, ev, period);
  if (!rc) rc = close_unit(c, t);
  return rc;
}

/* The thread period of a link endpoint (NONE if unknown). */
static uint32_t end_period(const commit_node *c, cn_end e) {
  const cn_unit *un = &c->units[e.unit];
  if (un->first != NONE) return e.local < un->n ? c->nodes[un->first + e.local].period : NONE;
  const cn_thread *th = &c->th[un->thread];
  return th->unit == e.unit && e.local < th->bn ? th->b[e.local].period : NONE;
}

/* ---- events ---------------------------------------------------------------------------- */

static int lo_record(commit_node *c, uint32_t t, uint32_t to, const atom_ev *ev,
                     uint32_t period) {
  cn_thread *th = &c->th[t];
  /* Each acquire adds an edge (with its gate set) per held lock: bounded so that a thread
   * holding very many locks cannot exhaust memory; finish then says the analysis is partial. */
  if (c->lo.n >= c->max_edges / 4) {
    if (!c->lo_truncated) c->lo_truncated_at = ev->index;
    c->lo_truncated = 1;
    return 0;
  }
  uint32_t held[17];
  atom__lo_site sites[17];
  size_t n = 0;
  /* The thread's life is a resource too (a JOIN waits for it). */
  held[n] = ATOM__LO_THREAD | t;
  sites[n++] = (atom__lo_site){th->start_index, th->start_loc, t, th->start_period};
  for (size_t i = 0; i < th->ls_n && n < 17; i++) {
    held[n] = th->ls[i].lock;
    sites[n++] = (atom__lo_site){th->ls[i].acq_index, th->ls[i].acq_loc, t, th->ls[i].acq_period};
  }
  atom__lo_site acq = {ev->index, ev->loc, t, period};
  return atom__lo_acquire(&c->lo, to, &acq, held, sites, n);
}

static void seg_mark(cn_thread *th, const atom_ev *ev) {
  th->seg_index = ev->index;
  th->seg_loc = ev->loc;
  th->seg_set = 1;
}

/* Link endpoint `me` (or, when me.unit is NONE, the thread's next unit) to the latest release
 * of x by every other thread that `before` (the acquirer's period before the acquire) does not
 * already follow: a redundant link would close an undirected cycle of consistent orders. */
static int link_releases(commit_node *c, uint32_t t, uint32_t x, uint32_t before, cn_end me) {
  if (x >= c->rel_cap) return 0;
  const cn_relvar *rv = &c->rel[x];
  for (size_t i = 0; i < rv->n; i++) {
    const cn_release *r = &rv->r[i];
    if (r->thread == t || atom__periods_before(&c->per, r->period, before)) continue;
    int rc = me.unit == NONE ? add_pending(c, &c->th[t], r->end)
             : r->end.unit != me.unit ? add_link(c, me, r->end) : 0;
    if (rc) return rc;
  }
  return 0;
}

static int note_release(commit_node *c, uint32_t t, uint32_t x, uint32_t period, cn_end end) {
  if (x >= c->rel_cap) {
    size_t old = c->rel_cap;
    if (ATOM__GROW(c->mem, c->rel, c->rel_cap, (size_t)x + 1)) return ATOM_ENOMEM;
    memset(c->rel + old, 0, (c->rel_cap - old) * sizeof *c->rel);
  }
  cn_relvar *rv = &c->rel[x];
  size_t i = 0;
  while (i < rv->n && rv->r[i].thread != t) i++;
  if (i == rv->n) {
    if (ATOM__GROW(c->mem, rv->r, rv->cap, rv->n + 1)) return ATOM_ENOMEM;
    rv->n++;
  }
  rv->r[i] = (cn_release){t, period, end};
  return 0;
}

/* A read or write; flagged ones are sync points (periods.h). */
static int access_event(commit_node *c, uint32_t t, const atom_ev *ev, uint32_t period) {
  cn_thread *th = &c->th[t];
  uint32_t leaf, before = period;
  int rc, moved = 0;
  if (ev->flags & ATOM_EV_ACQUIRE) {
    if ((rc = atom__periods_acquire(&c->per, t, ev->target, &moved))) return rc;
    if (moved && (rc = atom__periods_of(&c->per, t, &period))) return rc;
  }
  /* A non-transactional unit lies within one period: cut it where the period changed (after
   * a release write, at an acquire read that learnt of new releases). */
  if (!INSIDE(th) && th->unit != NONE && th->b[0].period != period) {
    if ((rc = close_unit(c, t))) return rc;
  }
  if (moved && !INSIDE(th) && (rc = link_releases(c, t, ev->target, before, (cn_end){NONE, 0})))
    return rc;
  if ((rc = add_leaf(c, t, ev, period, ev->kind == ATOM_READ ? K_READ : K_WRITE, &leaf)))
    return rc;
  /* A trimmed access stands for an earlier one of the same period: link the root instead. */
  cn_end me = {th->unit, leaf == NONE ? 0 : leaf};
  if (moved && INSIDE(th) && (rc = link_releases(c, t, ev->target, before, me))) return rc;
  if (ev->flags & ATOM_EV_RELEASE) {
    if ((rc = note_release(c, t, ev->target, period, me))) return rc;
    if ((rc = atom__periods_release(&c->per, t, ev->target))) return rc;
  }
  return 0;
}

static inline int acquire_event(commit_node *c, uint32_t t, const atom_ev *ev,
                                uint32_t period) {
  cn_thread *th = &c->th[t];
  int rc;
  if ((rc = lo_record(c, t, ev->target, ev, period))) return rc;
  if (ATOM__GROW(c->mem, th->ls, th->ls_cap, th->ls_n + 1)) return ATOM_ENOMEM;
  if (c->lock_blocks && !INSIDE(th)) {
    /* A lock block outside transactions starts: it counts as a transaction. */
    if ((rc = close_unit(c, t))) return rc;
    seg_mark(th, ev);
  }
  th->ls[th->ls_n++] = (cn_lockent){ev->target, NONE, ev->index, ev->loc, ev->index, period, 0};
  return 0;
}

static inline int release_event(commit_node *c, uint32_t t, const atom_ev *ev) {
  cn_thread *th = &c->th[t];
  size_t i = th->ls_n;
  while (i > 0 && th->ls[i - 1].lock != ev->target) i--;
  if (i == 0) return 0;
  i--;
  /* Blocks opened inside the released one continue as new pieces (lock blocks must nest
   * to form a tree; keeping the locks held keeps held(e) exact). */
  for (size_t j = i + 1; j < th->ls_n; j++) {
    th->ls[j - 1] = th->ls[j];
    th->ls[j - 1].node = NONE;
    th->ls[j - 1].start = ev->index;
  }
  th->ls_n--;
  if (c->lock_blocks && !INSIDE(th)) {
    int rc;
    if ((rc = close_unit(c, t))) return rc;
    th->seg_set = 0;
  }
  return 0;
}

/* A JOIN of thread u by thread t: u has ended. Sets *after (n_after entries) to what the join
 * is ordered after: u's last unit (stored in *last); or, if u had no event at all, whatever
 * was ordered before u (its forker), passed through. */
static int join_after(commit_node *c, uint32_t t, uint32_t u, const atom_ev *ev,
                      uint32_t period, cn_end *last, cn_end **after, size_t *n_after) {
  cn_thread *tu = &c->th[u];
  uint32_t pu;
  int rc;
  *after = NULL;
  *n_after = 0;
  if ((rc = lo_record(c, t, ATOM__LO_THREAD | u, ev, period))) return rc;
  if ((rc = atom__periods_of(&c->per, u, &pu))) return rc;
  if ((rc = close_unit(c, u))) return rc; /* u has ended */
  if ((rc = relay(c, u, ev, pu))) return rc;
  if (tu->started) {
    if (tu->last_unit != NONE) {
      *last = (cn_end){tu->last_unit, 0};
      *after = last;
      *n_after = 1;
    }
    return 0;
  }
  /* Pass through only what the fork/join order does not already put before the joiner: a
   * redundant link would close an undirected cycle of consistent orders. */
  size_t k = 0;
  for (size_t i = 0; i < tu->pend_n; i++) {
    uint32_t ep = end_period(c, tu->pend[i]);
    if (ep == NONE || !atom__periods_before(&c->per, ep, period)) tu->pend[k++] = tu->pend[i];
  }
  tu->pend_n = k;
  *after = tu->pend;
  *n_after = tu->pend_n;
  return 0;
}

/* A FORK or JOIN of thread ev->target by thread t. */
static int fork_join_event(commit_node *c, uint32_t t, const atom_ev *ev, uint32_t period) {
  uint32_t u = ev->target;
  cn_thread *th = &c->th[t], *tu = &c->th[u];
  cn_end *after = NULL, last;
  size_t n_after = 0;
  int rc;
  if (ev->kind == ATOM_JOIN && (rc = join_after(c, t, u, ev, period, &last, &after, &n_after)))
    return rc;
  if (INSIDE(th)) {
    /* Inside a transaction the FORK/JOIN is a point of it that the child's units are
     * ordered against: a leaf, linked to the child's first (fork) or last (join) unit. */
    uint32_t leaf;
    if ((rc = add_leaf(c, t, ev, period, ev->kind == ATOM_FORK ? K_FORK : K_JOIN, &leaf)))
      return rc;
    cn_end me = {th->unit, leaf};
    if (ev->kind == ATOM_FORK) {
      if ((rc = add_pending(c, tu, me))) return rc;
    }
    for (size_t i = 0; i < n_after; i++)
      if (after[i].unit != th->unit && (rc = add_link(c, me, after[i]))) return rc;
  } else {
    /* 004 §2: outside transactions, fork and join are unit boundaries. */
    if ((rc = close_unit(c, t))) return rc;
    if ((rc = relay(c, t, ev, period))) return rc;
    th->seg_set = 0;
    if (ev->kind == ATOM_FORK) {
      if (th->last_unit != NONE && (rc = add_pending(c, tu, (cn_end){th->last_unit, 0})))
        return rc;
    }
    for (size_t i = 0; i < n_after; i++)
      if ((rc = add_pending(c, th, after[i]))) return rc;
  }
  if (ev->kind == ATOM_JOIN && !tu->started) tu->pend_n = 0;
  if (ev->kind == ATOM_FORK) return atom__periods_fork(&c->per, t, u);
  return atom__periods_join(&c->per, t, u);
}

static int cn_event(void *self, const atom_ev *ev) {
  commit_node *c = self;
  if (c->finished) return 0;
  uint32_t t = ev->thread;
  int rc;
  if ((rc = ensure_thread(c, t))) return rc;
  if ((ev->kind == ATOM_FORK || ev->kind == ATOM_JOIN) && (rc = ensure_thread(c, ev->target)))
    return rc;
  cn_thread *th = &c->th[t];
  uint32_t period;
  if ((rc = atom__periods_of(&c->per, t, &period))) return rc;
  if (!th->started) {
    th->started = 1;
    th->start_index = ev->index;
    th->start_loc = ev->loc;
    th->start_period = period;
  }
  switch (ev->kind) {
  case ATOM_BEGIN:
    if (!INSIDE(th)) {
      /* The thread goes inside: a new unit starts here. */
      if ((rc = close_unit(c, t))) return rc;
      seg_mark(th, ev);
    }
    th->in_txn = 1;
    return 0;
  case ATOM_END:
    th->in_txn = 0;
    if (!INSIDE(th)) {
      if ((rc = close_unit(c, t))) return rc;
      th->seg_set = 0;
    }
    return 0;
  case ATOM_READ:
  case ATOM_WRITE:
    return access_event(c, t, ev, period);
  case ATOM_ACQUIRE:
    return acquire_event(c, t, ev, period);
  case ATOM_RELEASE:
    return release_event(c, t, ev);
  case ATOM_FORK:
  case ATOM_JOIN:
    return fork_join_event(c, t, ev, period);
  default:
    return 0;
  }
}

/* ---- vtable ---------------------------------------------------------------------------- */

static int cn_finish(void *self) {
  commit_node *c = self;
  if (c->finished) return 0;
  int rc;
  for (uint32_t t = 0; t < c->th_cap; t++)
    if ((rc = close_unit(c, t))) return rc;
  c->finished = 1;
  rc = atom__cn_analyze(c);
  /* The atomicity verdict is complete but the deadlock search is not: INCOMPLETE, not
   * disabled (its reports stay true). */
  if (rc == 0 && c->lo_truncated)
    return atom_env_incomplete(c->env, c->lo_truncated_at,
                               "the lock-order graph reached %zu edges (max_edges / 4): locks "
                               "held in large numbers; potential deadlocks may be missed",
                               c->max_edges / 4);
  return rc;
}


static void cn_destroy(void *self) {
  commit_node *c = self;
  if (!c) return;
  for (size_t i = 0; i < c->th_cap; i++) {
    cn_thread *th = &c->th[i];
    atom__mem_free(c->mem, th->b, th->bcap * sizeof *th->b);
    atom__mem_free(c->mem, th->ls, th->ls_cap * sizeof *th->ls);
    atom__mem_free(c->mem, th->pend, th->pend_cap * sizeof *th->pend);
    atom__mem_free(c->mem, th->trim, th->trim_cap * sizeof *th->trim);
    atom__idindex_free(&th->trim_ix, c->mem);
  }
  atom__mem_free(c->mem, c->th, c->th_cap * sizeof *c->th);
  atom__mem_free(c->mem, c->units, c->ucap * sizeof *c->units);
  atom__mem_free(c->mem, c->nodes, c->ncap * sizeof *c->nodes);
  atom__mem_free(c->mem, c->links, c->lcap * sizeof *c->links);
  atom__mem_free(c->mem, c->edges, c->ecap * sizeof *c->edges);
  atom__mem_free(c->mem, c->stamp, c->stamp_cap * sizeof *c->stamp);
  atom__mem_free(c->mem, c->bfs_mark, c->bfs_n * sizeof *c->bfs_mark);
  atom__mem_free(c->mem, c->bfs_prev, c->bfs_n * sizeof *c->bfs_prev);
  atom__mem_free(c->mem, c->bfs_queue, c->bfs_n * sizeof *c->bfs_queue);
  atom__u64map_free(&c->dedup, c->mem);
  atom__mem_free(c->mem, c->seen, c->seen_cap * sizeof *c->seen);
  atom__periods_destroy(&c->per);
  for (size_t i = 0; i < c->rel_cap; i++)
    atom__mem_free(c->mem, c->rel[i].r, c->rel[i].cap * sizeof *c->rel[i].r);
  atom__mem_free(c->mem, c->rel, c->rel_cap * sizeof *c->rel);
  atom__lo_destroy(&c->lo);
  atom__rb_free(&c->rb);
  atom__mem_free(c->mem, c, sizeof *c);
}

static int cn_create(void **self, atom_env *env) {
  static const char *const modes[] = {"conflict", "view", NULL};
  int view = 0, lock_blocks = 1, rc;
  uint64_t max_edges = (uint64_t)10 << 20; /* the thread-pool shape (9.4 million) fits */
  if ((rc = atom__arg_choice(env, "mode", modes, &view)) ||
      (rc = atom__arg_count(env, "max_edges", INT32_MAX, "2147483647", &max_edges)) ||
      (rc = atom__arg_yes_no(env, "lock_blocks", &lock_blocks)))
    return rc;
  commit_node *c = ATOM__NEW_STATE(env, commit_node, own_mem);
  if (!c) return ATOM_ENOMEM;
  atom__mem *mem = &c->own_mem;
  c->lock_blocks = lock_blocks;
  c->max_edges = (size_t)max_edges;
  c->env = env;
  c->mem = mem;
  c->view = view;
  atom__periods_init(&c->per, mem);
  atom__lo_init(&c->lo, mem);
  atom__rb_init(&c->rb, mem);
  *self = c;
  return 0;
}

static int cn_stats(void *self, atom_checker_counters *out) {
  commit_node *c = self;
  out->nodes = c->nn;
  out->edges = c->ne;
  out->clocks = c->per.n;
  return 0;
}

static const char *const cn_keys[] = {"mode", "max_edges", "lock_blocks", NULL};

const atom_checker atom__checker_commit_node = {
    ATOM_CHECKER_ABI_VERSION,
    ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_ACQUIRE) |
        ATOM_KIND_BIT(ATOM_RELEASE) | ATOM_KIND_BIT(ATOM_FORK) | ATOM_KIND_BIT(ATOM_JOIN) |
        ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END) | ATOM_KIND_BIT(ATOM_FENCE),
    "commit-node",
    "conflict- or view-atomicity of all feasible interleavings by access trees and commit "
    "nodes",
    cn_keys,
    cn_create,
    cn_event,
    cn_finish,
    cn_destroy,
    cn_stats,
    .properties = ATOM_CHECKER_PROP_AT_FINISH | ATOM_CHECKER_PROP_PREDICTIVE | ATOM_CHECKER_PROP_COMPLETE,
};
