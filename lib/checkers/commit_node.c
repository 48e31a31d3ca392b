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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "support/argval.h"
#include "support/msgbuf.h"
#include "support/lockorder.h"
#include "support/periods.h"
#include "support/u64map.h"

#define NONE UINT32_MAX

enum { K_ROOT, K_LOCK, K_READ, K_WRITE, K_FORK, K_JOIN };
enum { U_TXN, U_LOCK, U_PLAIN };

typedef struct cn_node {
  uint64_t index;  /* event index (LOCK: its acquire; ROOT: the unit's first event) */
  uint64_t loc;
  uint64_t start;  /* LOCK: index where this piece of the block began */
  uint64_t prevw;  /* READ: 1 + index of the unit's previous write of the variable, 0: none */
  uint32_t parent; /* NONE for the root */
  uint32_t end;    /* one past the last node of the subtree (nodes are in pre-order) */
  uint32_t target; /* variable, lock or child thread */
  uint32_t period;
  uint32_t wrep;   /* READ: the leaf standing for that previous write, NONE */
  uint32_t unit;
  uint8_t kind;
  uint8_t final; /* WRITE: last write of its variable in the unit */
  uint8_t comm;  /* communication node */
  uint8_t pad;
} cn_node;

typedef struct cn_unit {
  uint32_t thread;
  uint32_t kind;
  uint32_t first; /* global node id of the root (valid once committed) */
  uint32_t n;     /* nodes (0 while open) */
  uint64_t begin_index, begin_loc;
  uint32_t copies; /* identical committed trees, counted on the first one */
  uint32_t dropped; /* tree dropped as the third identical copy */
} cn_unit;

/* A link endpoint: node `local` of unit `unit` (local ids until the unit is committed). */
typedef struct cn_end {
  uint32_t unit, local;
} cn_end;

typedef struct cn_link {
  cn_end a, b;
} cn_link;

typedef struct cn_lockent {
  uint32_t lock;
  uint32_t node; /* local node of the block in the open unit, NONE if not materialized */
  uint64_t acq_index, acq_loc, start;
  uint32_t acq_period;
  uint32_t pad;
} cn_lockent;

/* Trimming counters of the open unit: per (parent, variable), and per variable (parent NONE)
 * the unit's last write. */
typedef struct cn_trim {
  uint64_t key;
  uint64_t lastw_index;
  uint32_t nr, nw;
  uint32_t extra; /* leaf that stands for the third and later writes */
  uint32_t lastw; /* leaf standing for the unit's last write so far */
  uint32_t used;
  uint32_t period; /* accesses of different thread periods are not interchangeable */
} cn_trim;

typedef struct cn_thread {
  cn_node *b; /* tree of the open unit */
  size_t bn, bcap;
  uint32_t unit;      /* open unit, NONE */
  uint32_t last_unit; /* latest unit of the thread, NONE */
  uint32_t in_txn;
  uint32_t started;
  uint64_t seg_index, seg_loc; /* first event of the current segment (BEGIN, acquire, ...) */
  uint32_t seg_set;
  uint32_t start_period;
  uint64_t start_index, start_loc;
  cn_lockent *ls;
  size_t ls_n, ls_cap;
  cn_end *pend; /* endpoints the next unit's root must be linked to (fork, join) */
  size_t pend_n, pend_cap;
  cn_trim *tab;
  size_t tab_cap, tab_n;
  uint32_t *tab_used;
  size_t tab_used_cap;
} cn_thread;

typedef struct cn_edge {
  uint32_t a, b; /* global node ids, different units */
} cn_edge;

/* The latest release write of a variable by one thread: where acquire reads link to. */
typedef struct cn_release {
  uint32_t thread;
  uint32_t period; /* the write's period */
  cn_end end;      /* its leaf */
} cn_release;

typedef struct cn_relvar {
  cn_release *r; /* one entry per releasing thread */
  size_t n, cap;
} cn_relvar;

typedef struct cn_stamp {
  uint32_t stamp, leaf;
} cn_stamp;

typedef struct commit_node {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int view;
  int lock_blocks; /* a lock block outside transactions is a unit (004 §2); else plain events */
  int finished;
  size_t max_edges; /* documented limit on inter-edges (argument max_edges) */
  int lo_truncated;  /* the lock-order graph reached max_edges / 4 edges and stopped growing */
  uint64_t lo_truncated_at; /* the first acquire it did not record */
  atom__periods per;
  atom__lockorder lo;
  cn_thread *th;
  size_t th_cap;
  cn_unit *units;
  size_t nu, ucap;
  cn_node *nodes;
  size_t nn, ncap;
  cn_link *links;
  size_t nl, lcap;
  atom__u64map dedup; /* tree hash -> first unit with it */
  cn_edge *edges;
  size_t ne, ecap;
  atom__u64map edge_seen;
  cn_relvar *rel; /* per variable */
  size_t rel_cap;
  uint64_t n_txn_units, n_violations, n_deadlocks;
  uint64_t work, work_done, work_total; /* end-of-run progress (tick) */
  /* scratch of cycle_path(), nu entries each, allocated at the first violation */
  uint32_t *bfs_mark, *bfs_prev, *bfs_queue;
  uint32_t bfs_stamp;
  size_t bfs_n;
  /* scratch */
  cn_stamp *stamp; /* per variable: last write leaf of the unit being closed */
  size_t stamp_cap;
  uint32_t stamp_now;
} commit_node;

/* The thread is inside a unit that counts as a transaction: a transaction is open or, with
 * lock_blocks=yes (004 §2), it holds a lock (a transaction and a lock block that nest or
 * overlap are one unit). Reads the checker `c` of the enclosing function. */
#define INSIDE(th) ((th)->in_txn || (c->lock_blocks && (th)->ls_n > 0))

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

static cn_trim *trim_find(cn_thread *th, uint64_t key, uint32_t period, size_t *slot) {
  size_t mask = th->tab_cap - 1;
  size_t j = (size_t)atom__hash64(key ^ ((uint64_t)period << 20)) & mask;
  while (th->tab[j].used) {
    if (th->tab[j].key == key && th->tab[j].period == period) return &th->tab[j];
    j = (j + 1) & mask;
  }
  *slot = j;
  return NULL;
}

/* The entry of key, inserted if absent (only an insertion may move the table). */
static cn_trim *trim_get(commit_node *c, cn_thread *th, uint64_t key, uint32_t period) {
  size_t j = 0;
  cn_trim *e;
  if (th->tab_cap && (e = trim_find(th, key, period, &j))) return e;
  if (th->tab_n * 2 + 2 > th->tab_cap) {
    size_t ncap = th->tab_cap ? th->tab_cap * 2 : 16;
    cn_trim *nt = atom__mem_calloc(c->mem, ncap, sizeof *nt);
    if (!nt) return NULL;
    size_t nused_cap = ncap / 2 + 1;
    uint32_t *nu = atom__mem_alloc(c->mem, nused_cap * sizeof *nu);
    if (!nu) {
      atom__mem_free(c->mem, nt, ncap * sizeof *nt);
      return NULL;
    }
    for (size_t i = 0; i < th->tab_n; i++) {
      cn_trim *o = &th->tab[th->tab_used[i]];
      size_t k = (size_t)atom__hash64(o->key ^ ((uint64_t)o->period << 20)) & (ncap - 1);
      while (nt[k].used) k = (k + 1) & (ncap - 1);
      nt[k] = *o;
      nu[i] = (uint32_t)k;
    }
    atom__mem_free(c->mem, th->tab, th->tab_cap * sizeof *th->tab);
    atom__mem_free(c->mem, th->tab_used, th->tab_used_cap * sizeof *th->tab_used);
    th->tab = nt;
    th->tab_cap = ncap;
    th->tab_used = nu;
    th->tab_used_cap = nused_cap;
    (void)trim_find(th, key, period, &j);
  }
  e = &th->tab[j];
  memset(e, 0, sizeof *e);
  e->used = 1;
  e->key = key;
  e->period = period;
  e->extra = NONE;
  e->lastw = NONE;
  th->tab_used[th->tab_n++] = (uint32_t)j;
  return e;
}

static void trim_clear(cn_thread *th) {
  for (size_t i = 0; i < th->tab_n; i++) th->tab[th->tab_used[i]].used = 0;
  th->tab_n = 0;
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
  if (un->kind != U_PLAIN) c->n_txn_units++;
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
    if (!(pv = trim_get(c, th, trim_key(parent, ev->target), period))) return ATOM_ENOMEM;
    if (!(uv = trim_get(c, th, trim_key(NONE, ev->target), NONE))) return ATOM_ENOMEM;
    pv = trim_get(c, th, trim_key(parent, ev->target), period); /* the table may have moved */
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
  uint32_t leaf;
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
  case ATOM_ACQUIRE: {
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
  case ATOM_RELEASE: {
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
      if ((rc = close_unit(c, t))) return rc;
      th->seg_set = 0;
    }
    return 0;
  }
  case ATOM_FORK:
  case ATOM_JOIN: {
    uint32_t u = ev->target;
    cn_thread *tu = &c->th[u];
    /* What a JOIN is ordered after: u's last unit; or, if u had no event at all, whatever
     * was ordered before u (its forker), passed through. */
    cn_end *after = NULL;
    size_t n_after = 0;
    cn_end last;
    if (ev->kind == ATOM_JOIN) {
      uint32_t pu;
      if ((rc = lo_record(c, t, ATOM__LO_THREAD | u, ev, period))) return rc;
      if ((rc = atom__periods_of(&c->per, u, &pu))) return rc;
      if ((rc = close_unit(c, u))) return rc; /* u has ended */
      if ((rc = relay(c, u, ev, pu))) return rc;
      if (tu->started) {
        if (tu->last_unit != NONE) {
          last = (cn_end){tu->last_unit, 0};
          after = &last;
          n_after = 1;
        }
      } else {
        /* Pass through only what the fork/join order does not already put before the
         * joiner: a redundant link would close an undirected cycle of consistent orders. */
        size_t k = 0;
        for (size_t i = 0; i < tu->pend_n; i++) {
          uint32_t ep = end_period(c, tu->pend[i]);
          if (ep == NONE || !atom__periods_before(&c->per, ep, period)) tu->pend[k++] = tu->pend[i];
        }
        tu->pend_n = k;
        after = tu->pend;
        n_after = tu->pend_n;
      }
    }
    if (INSIDE(th)) {
      /* Inside a transaction the FORK/JOIN is a point of it that the child's units are
       * ordered against: a leaf, linked to the child's first (fork) or last (join) unit. */
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
  default:
    return 0;
  }
}

/* ---- inter-edges (004 Figs. 3 and 5) -------------------------------------------------- */

static int add_edge(commit_node *c, uint32_t a, uint32_t b) {
  if (a == b) return 0;
  if (a > b) {
    uint32_t x = a;
    a = b;
    b = x;
  }
  uint64_t key = ((uint64_t)a << 32) | b;
  uint32_t v;
  if (atom__u64map_get(&c->edge_seen, key, &v)) return 0;
  if (c->ne >= c->max_edges || c->ne >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(c->mem, c->edges, c->ecap, c->ne + 1)) return ATOM_ENOMEM;
  if (atom__u64map_put(&c->edge_seen, c->mem, key, (uint32_t)c->ne)) return ATOM_ENOMEM;
  c->edges[c->ne++] = (cn_edge){a, b};
  return 0;
}

/* Does some lock block above node e hold lock l? Returns that block (the outermost), or NONE. */
static uint32_t outer_block(const commit_node *c, uint32_t e, uint32_t l) {
  uint32_t found = NONE;
  for (uint32_t p = c->nodes[e].parent; p != NONE; p = c->nodes[p].parent)
    if (c->nodes[p].kind == K_LOCK && c->nodes[p].target == l) found = p;
  return found;
}

static int concurrent(const commit_node *c, uint32_t a, uint32_t b) {
  return c->nodes[a].unit != c->nodes[b].unit &&
         atom__periods_concurrent(&c->per, c->nodes[a].period, c->nodes[b].period);
}

/* 004 Figs. 3/5 addInterEdge(e, e2). *added: 0 when e is a read that cannot read e2's value
 * because of the common lock (the paper's "ELSE return"). */
/* The outermost common lock rule (004 Figs. 3/5): going down from the root towards e, the
 * first block of a lock that e2 holds too; *n is that block above e and *n2 the outermost
 * block of the same lock above e2, or both NONE when e and e2 hold no common lock. */
static void common_lock_blocks(const commit_node *c, uint32_t e, uint32_t e2, uint32_t *n,
                               uint32_t *n2) {
  uint32_t path[64];
  size_t depth = 0;
  for (uint32_t p = c->nodes[e].parent; p != NONE && depth < 64; p = c->nodes[p].parent)
    path[depth++] = p;
  *n = *n2 = NONE;
  for (size_t i = depth; i-- > 0;) {
    const cn_node *p = &c->nodes[path[i]];
    if (p->kind != K_LOCK) continue;
    uint32_t o = outer_block(c, e2, p->target);
    if (o != NONE) {
      *n = path[i];
      *n2 = o;
      return;
    }
  }
}

static int inter_edge(commit_node *c, uint32_t e, uint32_t e2, int *added) {
  const cn_node *ne = &c->nodes[e];
  uint32_t n, n2;
  common_lock_blocks(c, e, e2, &n, &n2);
  if (added) *added = 1;
  if (n == NONE) return add_edge(c, e, e2);
  if (ne->kind == K_READ && ne->prevw && ne->prevw - 1 >= c->nodes[n].start) {
    /* e reads a write of its own block: it cannot see e2 (lock l keeps them apart). */
    if (added) *added = 0;
    return 0;
  }
  return add_edge(c, n, n2);
}

static int is_write(const cn_node *n) { return n->kind == K_WRITE; }

/* A unit of end-of-run work; every 4096 the session hears how far the analysis is (work_done
 * of work_total: variables whose edges are made, then transactions decided). */
static void tick(commit_node *c) {
  if (++c->work & 4095) return;
  (void)atom_env_progress(c->env, c->work_done, c->work_total);
}

/* Leaves grouped by variable: ids[off[v] .. off[v+1]). */
static int group_leaves(commit_node *c, uint32_t **ids, size_t **off, size_t *nvars) {
  size_t nv = 0;
  for (size_t i = 0; i < c->nn; i++)
    if ((c->nodes[i].kind == K_READ || c->nodes[i].kind == K_WRITE) && c->nodes[i].target + 1 > nv)
      nv = c->nodes[i].target + 1;
  size_t *o = atom__mem_calloc(c->mem, nv + 2, sizeof *o);
  if (!o) return ATOM_ENOMEM;
  size_t total = 0;
  for (size_t i = 0; i < c->nn; i++)
    if (c->nodes[i].kind == K_READ || c->nodes[i].kind == K_WRITE) {
      o[c->nodes[i].target + 2]++;
      total++;
    }
  for (size_t v = 0; v < nv; v++) o[v + 2] += o[v + 1];
  uint32_t *l = atom__mem_calloc(c->mem, total ? total : 1, sizeof *l);
  if (!l) {
    atom__mem_free(c->mem, o, (nv + 2) * sizeof *o);
    return ATOM_ENOMEM;
  }
  for (size_t i = 0; i < c->nn; i++)
    if (c->nodes[i].kind == K_READ || c->nodes[i].kind == K_WRITE)
      l[o[c->nodes[i].target + 1]++] = (uint32_t)i;
  *ids = l;
  *off = o;
  *nvars = nv;
  return 0;
}

static int conflict_edges(commit_node *c, const uint32_t *ids, size_t lo, size_t hi) {
  int rc;
  for (size_t i = lo; i < hi; i++)
    for (size_t j = i + 1; j < hi; j++) {
      uint32_t a = ids[i], b = ids[j];
      tick(c);
      const cn_node *na = &c->nodes[a], *nb = &c->nodes[b];
      if (!is_write(na) && !is_write(nb)) continue;
      if (!concurrent(c, a, b)) continue;
      /* Fig. 3: each read with each write, each write with each write (both orders). */
      if (is_write(nb) && (rc = inter_edge(c, a, b, NULL))) return rc;
      if (is_write(na) && (rc = inter_edge(c, b, a, NULL))) return rc;
    }
  return 0;
}

/* Write w of another thread happens before read r (sync order, fork/join): r may still read
 * it, when w runs after r's own previous write, so w is one of r's potential
 * write-predecessors (Fig. 5's S(e)) although r and w get no inter-edge (the ordering links
 * already connect them). Without this, a read that follows a release by sync order and whose
 * transaction wrote the variable before would be silent in view mode. */
static int ordered_writer(const commit_node *c, uint32_t w, uint32_t r) {
  const cn_node *nw = &c->nodes[w], *nr = &c->nodes[r];
  return nw->unit != nr->unit && c->units[nw->unit].thread != c->units[nr->unit].thread &&
         atom__periods_before(&c->per, nw->period, nr->period);
}

static int view_edges(commit_node *c, const uint32_t *ids, size_t lo, size_t hi) {
  int rc, added;
  uint32_t *s = NULL;
  size_t ns = 0, scap = 0;
  for (size_t i = lo; i < hi; i++) {
    uint32_t r = ids[i];
    if (c->nodes[r].kind != K_READ) continue;
    ns = 0; /* Fig. 5: S(e) = {} */
    for (size_t j = lo; j < hi; j++) {
      uint32_t w = ids[j];
      tick(c);
      if (!is_write(&c->nodes[w])) continue;
      if (concurrent(c, r, w)) {
        if ((rc = inter_edge(c, r, w, &added))) goto out;
        if (!added) continue;
      } else if (!ordered_writer(c, w, r)) {
        continue;
      }
      /* The other potential write-predecessors of r (its own previous write included) get
       * edges with w: r may read either. */
      uint32_t ew = c->nodes[r].wrep;
      if (ATOM__GROW(c->mem, s, scap, ns + 2)) {
        rc = ATOM_ENOMEM;
        goto out;
      }
      if (ew != NONE) {
        size_t k = 0;
        while (k < ns && s[k] != ew) k++;
        if (k == ns) s[ns++] = ew;
      }
      for (size_t k = 0; k < ns; k++)
        if (s[k] != w && concurrent(c, w, s[k]) && (rc = inter_edge(c, w, s[k], NULL))) goto out;
      size_t k = 0;
      while (k < ns && s[k] != w) k++;
      if (k == ns) s[ns++] = w;
    }
  }
  /* Fig. 5: unit-final writes with each other. */
  for (size_t i = lo; i < hi; i++)
    for (size_t j = i + 1; j < hi; j++) {
      uint32_t a = ids[i], b = ids[j];
      if (!c->nodes[a].final || !c->nodes[b].final || !concurrent(c, a, b)) continue;
      if ((rc = inter_edge(c, a, b, NULL)) || (rc = inter_edge(c, b, a, NULL))) goto out;
    }
  rc = 0;
out:
  atom__mem_free(c->mem, s, scap * sizeof *s);
  return rc;
}

/* ---- reports --------------------------------------------------------------------------- */

/* Endpoints of the forest's edges (inter-edges, then links), per unit, for the decision. */
typedef struct cn_inc {
  uint32_t node;  /* this side's node */
  uint32_t other; /* the other side's node */
  uint32_t edge;  /* edge id in the unit graph */
  uint32_t pad;
} cn_inc;

typedef struct cn_graph {
  size_t nv, ne;     /* units, edges */
  uint32_t *ea, *eb; /* edge endpoints as nodes */
  size_t *off;       /* incidences of unit u: inc[off[u] .. off[u+1]) */
  cn_inc *inc;
  uint32_t *block;   /* per edge */
} cn_graph;


static atom_txn_ref unit_ref(const commit_node *c, uint32_t u) {
  const cn_unit *un = &c->units[u];
  return (atom_txn_ref){un->thread, un->kind == U_PLAIN, un->begin_index, un->begin_loc};
}

static atom_ev node_event(const commit_node *c, uint32_t id) {
  const cn_node *n = &c->nodes[id];
  atom_ev ev;
  memset(&ev, 0, sizeof ev);
  static const uint32_t kinds[] = {ATOM_BEGIN, ATOM_ACQUIRE, ATOM_READ,
                                   ATOM_WRITE, ATOM_FORK,    ATOM_JOIN};
  ev.kind = kinds[n->kind];
  ev.thread = c->units[n->unit].thread;
  ev.target = n->kind == K_ROOT ? 0 : n->target;
  ev.index = n->index;
  ev.loc = n->loc;
  return ev;
}


/* The event standing for node id. A root stands for its unit's first event: BEGIN of a
 * transaction, else the node after it when that is the same event (a lock block's acquire). */
static atom_ev node_event_of(const commit_node *c, uint32_t id) {
  const cn_node *n = &c->nodes[id];
  if (n->kind == K_ROOT && c->units[n->unit].kind != U_TXN && id + 1 < n->end &&
      c->nodes[id + 1].index == n->index)
    return node_event(c, id + 1);
  return node_event(c, id);
}

/* Longest cycle told in a report: edges along the path between the two other units. */
#define CYCLE_MAX_PATH 60

/* The shortest path of the forest's unit graph from unit `from` to unit `to` through edges of
 * biconnected component blk, avoiding unit u (it exists: two edges of one component lie on a
 * common simple cycle). Writes the incidences of the path, in order, to path (room for
 * CYCLE_MAX_PATH; incidence k leaves the k-th unit of the path). @return its length, 0 when
 * from == to, SIZE_MAX if none fits (or memory is short: the report is then made without the
 * cycle's edges). */
static size_t cycle_path(commit_node *c, const cn_graph *g, uint32_t blk, uint32_t u,
                         uint32_t from, uint32_t to, uint32_t *path) {
  if (from == to) return 0;
  size_t nv = g->nv;
  if (c->bfs_n < nv) {
    atom__mem_free(c->mem, c->bfs_mark, c->bfs_n * sizeof *c->bfs_mark);
    atom__mem_free(c->mem, c->bfs_prev, c->bfs_n * sizeof *c->bfs_prev);
    atom__mem_free(c->mem, c->bfs_queue, c->bfs_n * sizeof *c->bfs_queue);
    c->bfs_mark = atom__mem_calloc(c->mem, nv, sizeof *c->bfs_mark);
    c->bfs_prev = atom__mem_alloc(c->mem, nv * sizeof *c->bfs_prev);
    c->bfs_queue = atom__mem_alloc(c->mem, nv * sizeof *c->bfs_queue);
    c->bfs_n = nv;
    c->bfs_stamp = 0;
    if (!c->bfs_mark || !c->bfs_prev || !c->bfs_queue) {
      atom__mem_free(c->mem, c->bfs_mark, nv * sizeof *c->bfs_mark);
      atom__mem_free(c->mem, c->bfs_prev, nv * sizeof *c->bfs_prev);
      atom__mem_free(c->mem, c->bfs_queue, nv * sizeof *c->bfs_queue);
      c->bfs_mark = c->bfs_prev = c->bfs_queue = NULL;
      c->bfs_n = 0;
      return SIZE_MAX;
    }
  }
  if (++c->bfs_stamp == 0) {
    memset(c->bfs_mark, 0, c->bfs_n * sizeof *c->bfs_mark);
    c->bfs_stamp = 1;
  }
  uint32_t st = c->bfs_stamp, *mark = c->bfs_mark, *prev = c->bfs_prev, *q = c->bfs_queue;
  size_t head = 0, tail = 0;
  mark[u] = st;
  mark[from] = st;
  q[tail++] = from;
  while (head < tail && mark[to] != st) {
    uint32_t v = q[head++];
    for (size_t i = g->off[v]; i < g->off[v + 1]; i++) {
      const cn_inc *x = &g->inc[i];
      uint32_t w = c->nodes[x->other].unit;
      if (g->block[x->edge] != blk || mark[w] == st) continue;
      mark[w] = st;
      prev[w] = (uint32_t)i;
      q[tail++] = w;
    }
  }
  if (mark[to] != st) return SIZE_MAX;
  size_t n = 0;
  for (uint32_t w = to; w != from; w = c->nodes[g->inc[prev[w]].node].unit)
    if (++n > CYCLE_MAX_PATH) return SIZE_MAX;
  size_t k = n;
  for (uint32_t w = to; w != from; w = c->nodes[g->inc[prev[w]].node].unit) path[--k] = prev[w];
  return n;
}

/* Transaction u has communication nodes a and b that do not contain each other, made so by
 * the edges to pa and pb (nodes of other units), which lie on one cycle of the forest (edges
 * of component blk). The report carries that cycle as edges, in cycle order: a to pa, along
 * the path from pa's unit to pb's (each edge's two events), pb to b. */
static int report_violation(commit_node *c, const cn_graph *g, uint32_t blk, uint32_t u,
                            uint32_t a, uint32_t pa, uint32_t b, uint32_t pb) {
  if (c->nodes[a].index > c->nodes[b].index) {
    uint32_t x = a;
    a = b;
    b = x;
    x = pa;
    pa = pb;
    pb = x;
  }
  uint32_t ua = c->nodes[pa].unit, ub = c->nodes[pb].unit;
  uint32_t path[CYCLE_MAX_PATH];
  size_t np = cycle_path(c, g, blk, u, ua, ub, path);
  atom_txn_ref refs[CYCLE_MAX_PATH + 2];
  atom_ev evs[4 + 2 * CYCLE_MAX_PATH];
  atom_edge_ref edges[CYCLE_MAX_PATH + 2];
  size_t nr = 0, ne = 4, nedge = 0;
  /* the transactions in cycle order: u, then the units of the path */
  refs[nr++] = unit_ref(c, u);
  refs[nr++] = unit_ref(c, ua);
  evs[0] = node_event_of(c, a);
  evs[1] = node_event_of(c, b);
  evs[2] = node_event_of(c, pa);
  evs[3] = node_event_of(c, pb);
  if (np != SIZE_MAX) {
    edges[nedge++] = (atom_edge_ref){0, 2, 0, 0};
    for (size_t i = 0; i < np; i++) {
      const cn_inc *x = &g->inc[path[i]];
      evs[ne] = node_event_of(c, x->node);
      evs[ne + 1] = node_event_of(c, x->other);
      edges[nedge++] = (atom_edge_ref){(uint32_t)ne, (uint32_t)ne + 1, 0, 0};
      ne += 2;
      refs[nr++] = unit_ref(c, c->nodes[x->other].unit);
    }
    edges[nedge++] = (atom_edge_ref){3, 1, ATOM_EDGE_CLOSING, 0};
  } else if (ub != ua) {
    refs[nr++] = unit_ref(c, ub);
  }
  uint32_t vars[2];
  size_t nv = 0;
  if (c->nodes[a].kind == K_READ || c->nodes[a].kind == K_WRITE) vars[nv++] = c->nodes[a].target;
  if ((c->nodes[b].kind == K_READ || c->nodes[b].kind == K_WRITE) &&
      !(nv && vars[0] == c->nodes[b].target))
    vars[nv++] = c->nodes[b].target;
  /* Plain words; the theorem behind it is named on the checker's doc page. */
  const char *msg =
      c->view ? "{t0} is not view-atomic: other transactions can run between {e0} and {e1}: "
                "the order of the first and {e2}, and of the second and {e3}, changes what is "
                "read or left, and no serial order gives the same reads and final values"
              : "{t0} is not conflict-atomic: other transactions can run between {e0} and {e1}: "
                "the first conflicts with {e2}, the second with {e3}, and these conflicts lie "
                "on a cycle that no serial order has";
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.flags = ATOM_REPORT_PREDICTED; /* a feasible interleaving, not the observed one */
  spec.kind = "commit-nodes";
  spec.event_index = c->nodes[b].index;
  spec.txns = refs;
  spec.n_txns = nr;
  spec.events = evs;
  spec.n_events = ne;
  spec.vars = nv ? vars : NULL;
  spec.n_vars = nv;
  spec.message = msg;
  spec.edges = nedge ? edges : NULL;
  spec.n_edges = nedge;
  c->n_violations++;
  return atom_env_report(c->env, &spec);
}

/* A lock-order cycle: thread i acquires (or joins) what thread i+1 holds. The message tells
 * each acquisition and the hold it waits behind; the edges run from each acquisition to the
 * acquisition of the same lock by the next thread (both acquire events), in cycle order, when
 * every hold is an acquisition. */
static int on_deadlock(const atom__lo_edge *const *cyc, size_t n, void *payload) {
  commit_node *c = payload;
  atom_txn_ref refs[8];
  atom_ev evs[16];
  size_t held_at[8], acq_at[8];
  char msg[768];
  size_t off = 0, ne = 0;
  uint64_t at = 0;
  if (n > 8) n = 8;
  int all_held = 1;
  atom__msg_append(msg, sizeof msg, &off, "these lock operations can deadlock:");
  for (size_t i = 0; i < n; i++) {
    const atom__lo_edge *e = cyc[i];
    refs[i] = (atom_txn_ref){e->acq.thread, 1, e->acq.index, e->acq.loc};
    held_at[i] = SIZE_MAX;
    if (!(e->from & ATOM__LO_THREAD) && e->from != e->to) {
      atom_ev h;
      memset(&h, 0, sizeof h);
      h.kind = ATOM_ACQUIRE;
      h.thread = e->held.thread;
      h.target = e->from;
      h.index = e->held.index;
      h.loc = e->held.loc;
      held_at[i] = ne;
      evs[ne++] = h;
    } else {
      all_held = 0;
    }
    atom_ev a;
    memset(&a, 0, sizeof a);
    a.kind = (e->to & ATOM__LO_THREAD) ? ATOM_JOIN : ATOM_ACQUIRE;
    a.thread = e->acq.thread;
    a.target = e->to & ~ATOM__LO_THREAD;
    a.index = e->acq.index;
    a.loc = e->acq.loc;
    acq_at[i] = ne;
    evs[ne++] = a;
    if (e->acq.index > at) at = e->acq.index;
    if (e->from == e->to) /* held_at_end(): a hold that never ends */
      atom__msg_append(msg, sizeof msg, &off, "%s {e%zu}, and that thread ends without releasing "
                       "it", i ? ";" : "", acq_at[i]);
    else if (held_at[i] != SIZE_MAX)
      atom__msg_append(msg, sizeof msg, &off, "%s {e%zu} and, still holding it, {e%zu}",
                       i ? ";" : "", held_at[i], acq_at[i]);
    else
      atom__msg_append(msg, sizeof msg, &off, "%s {e%zu} while another thread waits for this one "
                       "to end", i ? ";" : "", acq_at[i]);
  }
  atom__msg_append(msg, sizeof msg, &off, ": in some feasible schedule each waits for the next");
  atom_edge_ref edges[8];
  size_t nedge = 0;
  if (all_held && n >= 2)
    for (size_t i = 0; i < n; i++)
      edges[nedge++] = (atom_edge_ref){(uint32_t)acq_at[i], (uint32_t)held_at[(i + 1) % n],
                                       i + 1 == n ? ATOM_EDGE_CLOSING : 0, 0};
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.flags = ATOM_REPORT_PREDICTED; /* a feasible interleaving, not the observed one */
  spec.kind = "potential-deadlock";
  spec.event_index = at;
  spec.txns = refs;
  spec.n_txns = n;
  spec.events = evs;
  spec.n_events = ne;
  spec.message = msg;
  spec.edges = nedge ? edges : NULL;
  spec.n_edges = nedge;
  c->n_deadlocks++;
  return atom_env_report(c->env, &spec);
}

/* A thread that ends holding lock l deadlocks every thread that still has to acquire l: report
 * the first such acquisition of each other thread that need not happen before the hold. */
static int held_at_end(commit_node *c) {
  for (uint32_t t = 0; t < c->th_cap; t++) {
    const cn_thread *th = &c->th[t];
    for (size_t i = 0; i < th->ls_n; i++) {
      const cn_lockent *le = &th->ls[i];
      atom__lo_site hold = {le->acq_index, le->acq_loc, t, le->acq_period};
      uint32_t reported = NONE;
      for (size_t k = 0; k < c->lo.n; k++) {
        const atom__lo_edge *e = &c->lo.e[k];
        if (e->to != le->lock || e->acq.thread == t || e->acq.thread == reported) continue;
        if (e->acq.period != ATOM__PERIOD_NONE &&
            atom__periods_before(&c->per, e->acq.period, hold.period))
          continue;
        atom__lo_edge forever = {le->lock, le->lock, 0, 0, hold, hold};
        const atom__lo_edge *cyc[2] = {e, &forever};
        int rc = on_deadlock(cyc, 2, c);
        if (rc) return rc;
        reported = e->acq.thread;
      }
    }
  }
  return 0;
}

/* ---- the decision (004 Thms 4.1, 4.3, 4.6) -------------------------------------------- */

static int is_txn(const cn_unit *u) { return u->kind != U_PLAIN && !u->dropped; }


static void graph_free(commit_node *c, cn_graph *g) {
  atom__mem_free(c->mem, g->ea, g->ne * sizeof *g->ea);
  atom__mem_free(c->mem, g->eb, g->ne * sizeof *g->eb);
  atom__mem_free(c->mem, g->off, (g->nv + 2) * sizeof *g->off);
  atom__mem_free(c->mem, g->inc, 2 * g->ne * sizeof *g->inc);
  atom__mem_free(c->mem, g->block, g->ne * sizeof *g->block);
}

static int graph_build(commit_node *c, cn_graph *g) {
  memset(g, 0, sizeof *g);
  g->nv = c->nu;
  size_t ne = c->ne;
  for (size_t i = 0; i < c->nl; i++)
    if (c->units[c->links[i].a.unit].first != NONE && c->units[c->links[i].b.unit].first != NONE)
      ne++;
  g->ne = ne;
  size_t n1 = ne ? ne : 1;
  g->ea = atom__mem_alloc(c->mem, n1 * sizeof *g->ea);
  g->eb = atom__mem_alloc(c->mem, n1 * sizeof *g->eb);
  g->block = atom__mem_alloc(c->mem, n1 * sizeof *g->block);
  g->off = atom__mem_calloc(c->mem, g->nv + 2, sizeof *g->off);
  g->inc = atom__mem_alloc(c->mem, 2 * n1 * sizeof *g->inc);
  if (!g->ea || !g->eb || !g->block || !g->off || !g->inc) {
    g->ne = n1;
    /* sizes must match what was allocated for graph_free */
    atom__mem_free(c->mem, g->ea, n1 * sizeof *g->ea);
    atom__mem_free(c->mem, g->eb, n1 * sizeof *g->eb);
    atom__mem_free(c->mem, g->block, n1 * sizeof *g->block);
    atom__mem_free(c->mem, g->off, (g->nv + 2) * sizeof *g->off);
    atom__mem_free(c->mem, g->inc, 2 * n1 * sizeof *g->inc);
    memset(g, 0, sizeof *g);
    return ATOM_ENOMEM;
  }
  g->ne = n1; /* allocation size, for graph_free */
  size_t k = 0;
  for (size_t i = 0; i < c->ne; i++, k++) {
    g->ea[k] = c->edges[i].a;
    g->eb[k] = c->edges[i].b;
  }
  for (size_t i = 0; i < c->nl; i++) {
    const cn_unit *ua = &c->units[c->links[i].a.unit], *ub = &c->units[c->links[i].b.unit];
    if (ua->first == NONE || ub->first == NONE) continue;
    /* A dropped tree keeps only its root: its leaves' links go to the root. */
    uint32_t la = c->links[i].a.local < ua->n ? c->links[i].a.local : 0;
    uint32_t lb = c->links[i].b.local < ub->n ? c->links[i].b.local : 0;
    g->ea[k] = ua->first + la;
    g->eb[k] = ub->first + lb;
    /* A sync link between two accesses under a common lock attaches where an inter-edge would
     * (the common lock rule): the lock keeps their blocks apart, so the order runs between the
     * blocks, not between the accesses (a link at the leaves would make false commit nodes of
     * a block that waits on and signals a condition variable under its mutex). */
    uint32_t n, n2;
    common_lock_blocks(c, g->ea[k], g->eb[k], &n, &n2);
    if (n != NONE) {
      g->ea[k] = n;
      g->eb[k] = n2;
    }
    k++;
  }
  size_t real = k;
  for (size_t i = 0; i < real; i++) {
    g->off[c->nodes[g->ea[i]].unit + 2]++;
    g->off[c->nodes[g->eb[i]].unit + 2]++;
  }
  for (size_t u = 0; u < g->nv; u++) g->off[u + 2] += g->off[u + 1];
  for (size_t i = 0; i < real; i++) {
    uint32_t ua = c->nodes[g->ea[i]].unit, ub = c->nodes[g->eb[i]].unit;
    g->inc[g->off[ua + 1]++] = (cn_inc){g->ea[i], g->eb[i], (uint32_t)i, 0};
    g->inc[g->off[ub + 1]++] = (cn_inc){g->eb[i], g->ea[i], (uint32_t)i, 0};
  }
  for (size_t i = real; i < g->ne; i++) g->block[i] = NONE;
  /* edges beyond `real` do not exist (allocation rounding) */
  return 0;
}

/* Biconnected components of the unit graph (iterative Tarjan on a multigraph: a parallel edge
 * is a back edge, only the tree edge itself is skipped). */
static int graph_blocks(commit_node *c, cn_graph *g) {
  size_t nv = g->nv;
  if (nv == 0) return 0;
  size_t nedges = g->off[nv]; /* incidences */
  uint32_t *disc = atom__mem_calloc(c->mem, nv, sizeof *disc);
  uint32_t *low = atom__mem_calloc(c->mem, nv, sizeof *low);
  size_t *it = atom__mem_calloc(c->mem, nv, sizeof *it);
  uint32_t *pedge = atom__mem_calloc(c->mem, nv, sizeof *pedge);
  uint32_t *stack = atom__mem_calloc(c->mem, nv, sizeof *stack);
  uint32_t *estack = atom__mem_calloc(c->mem, nedges / 2 + 1, sizeof *estack);
  int rc = 0;
  if (!disc || !low || !it || !pedge || !stack || !estack) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  uint32_t time = 0, nblocks = 0;
  size_t es = 0;
  for (size_t r = 0; r < nv; r++) {
    if (disc[r]) continue;
    size_t sp = 0;
    stack[sp++] = (uint32_t)r;
    disc[r] = low[r] = ++time;
    it[r] = g->off[r];
    pedge[r] = NONE;
    while (sp) {
      uint32_t v = stack[sp - 1];
      if (it[v] < g->off[v + 1]) {
        const cn_inc *x = &g->inc[it[v]++];
        uint32_t w = c->nodes[x->other].unit;
        if (x->edge == pedge[v]) continue;
        if (!disc[w]) {
          estack[es++] = x->edge;
          disc[w] = low[w] = ++time;
          it[w] = g->off[w];
          pedge[w] = x->edge;
          stack[sp++] = w;
        } else if (disc[w] < disc[v]) {
          estack[es++] = x->edge;
          if (disc[w] < low[v]) low[v] = disc[w];
        }
      } else {
        sp--;
        if (sp) {
          uint32_t p = stack[sp - 1];
          if (low[v] < low[p]) low[p] = low[v];
          if (low[v] >= disc[p]) {
            uint32_t b = nblocks++;
            while (es) {
              uint32_t e = estack[--es];
              g->block[e] = b;
              if (e == pedge[v]) break;
            }
          }
        }
      }
    }
  }
out:
  atom__mem_free(c->mem, disc, nv * sizeof *disc);
  atom__mem_free(c->mem, low, nv * sizeof *low);
  atom__mem_free(c->mem, it, nv * sizeof *it);
  atom__mem_free(c->mem, pedge, nv * sizeof *pedge);
  atom__mem_free(c->mem, stack, nv * sizeof *stack);
  atom__mem_free(c->mem, estack, (nedges / 2 + 1) * sizeof *estack);
  return rc;
}

/* Is a an ancestor of (or equal to) b? Nodes of one unit are in pre-order. */
static int contains(const commit_node *c, uint32_t a, uint32_t b) {
  return a <= b && b < c->nodes[a].end;
}

/* Thm 4.1 for unit u: its communication nodes form one chain. On failure *x, *y receive two
 * incidences whose nodes do not contain each other. */
static int one_commit_node(const commit_node *c, const cn_graph *g, uint32_t u, size_t *x,
                           size_t *y) {
  size_t deep = SIZE_MAX;
  for (size_t i = g->off[u]; i < g->off[u + 1]; i++)
    if (deep == SIZE_MAX || g->inc[i].node > g->inc[deep].node) deep = i;
  if (deep == SIZE_MAX) return 1;
  for (size_t i = g->off[u]; i < g->off[u + 1]; i++)
    if (!contains(c, g->inc[i].node, g->inc[deep].node)) {
      *x = i;
      *y = deep;
      return 0;
    }
  return 1;
}

static int cn_analyze(commit_node *c);

static int cn_finish(void *self) {
  commit_node *c = self;
  if (c->finished) return 0;
  int rc = cn_analyze(c);
  /* The atomicity verdict is complete but the deadlock search is not: INCOMPLETE, not
   * disabled (its reports stay true). */
  if (rc == 0 && c->lo_truncated)
    return atom_env_incomplete(c->env, c->lo_truncated_at,
                               "the lock-order graph reached %zu edges (max_edges / 4): locks "
                               "held in large numbers; potential deadlocks may be missed",
                               c->max_edges / 4);
  return rc;
}

static int cn_analyze(commit_node *c) {
  int rc;
  for (uint32_t t = 0; t < c->th_cap; t++)
    if ((rc = close_unit(c, t))) return rc;
  c->finished = 1;
  /* Potential deadlocks first: the theorems below assume there are none. */
  if ((rc = atom__lo_find(&c->lo, &c->per, 4, on_deadlock, c)) < 0) return rc;
  if ((rc = held_at_end(c))) return rc;

  uint32_t *ids = NULL;
  size_t *off = NULL, nv = 0;
  if ((rc = group_leaves(c, &ids, &off, &nv))) return rc;
  c->work_total = nv + c->nu;
  for (size_t v = 0; v < nv && !rc; v++, c->work_done = v)
    rc = c->view ? view_edges(c, ids, off[v], off[v + 1])
                 : conflict_edges(c, ids, off[v], off[v + 1]);
  atom__mem_free(c->mem, ids, (off[nv] ? off[nv] : 1) * sizeof *ids);
  atom__mem_free(c->mem, off, (nv + 2) * sizeof *off);
  if (rc == ATOM_ELIMIT)
    return atom_env_error(c->env, ATOM_ELIMIT,
                          "more than %zu inter-edges (raise max_edges; the forest is quadratic "
                          "in the concurrent accesses of one variable)",
                          c->max_edges);
  if (rc) return rc;

  cn_graph g;
  if ((rc = graph_build(c, &g))) return rc;
  for (size_t i = 0; i < g.off[g.nv]; i++) c->nodes[g.inc[i].node].comm = 1;
  int need_blocks = 0;
  size_t x, y;
  for (uint32_t u = 0; u < c->nu && !need_blocks; u++)
    if (is_txn(&c->units[u]) && !one_commit_node(c, &g, u, &x, &y)) need_blocks = 1;
  if (need_blocks && !(rc = graph_blocks(c, &g))) {
    /* Thm 4.3 / 4.6: per transaction and biconnected component, the attachment nodes must
     * form a chain; two that do not contain each other lie on one cycle. */
    for (uint32_t u = 0; u < c->nu && !rc; u++) {
      c->work_done = nv + u;
      tick(c);
      if (!is_txn(&c->units[u]) || one_commit_node(c, &g, u, &x, &y)) continue;
      size_t lo = g.off[u], hi = g.off[u + 1];
      int found = 0;
      for (size_t i = lo; i < hi && !found; i++) {
        uint32_t b = g.block[g.inc[i].edge];
        /* deepest attachment of this component */
        size_t deep = i;
        for (size_t j = lo; j < hi; j++)
          if (g.block[g.inc[j].edge] == b && g.inc[j].node > g.inc[deep].node) deep = j;
        for (size_t j = lo; j < hi; j++)
          if (g.block[g.inc[j].edge] == b && !contains(c, g.inc[j].node, g.inc[deep].node)) {
            rc = report_violation(c, &g, b, u, g.inc[j].node, g.inc[j].other,
                                  g.inc[deep].node, g.inc[deep].other);
            found = 1;
            break;
          }
      }
    }
  }
  graph_free(c, &g);
  if (!rc) (void)atom_env_progress(c->env, c->work_total, c->work_total);
  return rc;
}

/* ---- vtable ---------------------------------------------------------------------------- */

static void cn_destroy(void *self) {
  commit_node *c = self;
  if (!c) return;
  for (size_t i = 0; i < c->th_cap; i++) {
    cn_thread *th = &c->th[i];
    atom__mem_free(c->mem, th->b, th->bcap * sizeof *th->b);
    atom__mem_free(c->mem, th->ls, th->ls_cap * sizeof *th->ls);
    atom__mem_free(c->mem, th->pend, th->pend_cap * sizeof *th->pend);
    atom__mem_free(c->mem, th->tab, th->tab_cap * sizeof *th->tab);
    atom__mem_free(c->mem, th->tab_used, th->tab_used_cap * sizeof *th->tab_used);
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
  atom__u64map_free(&c->edge_seen, c->mem);
  atom__periods_destroy(&c->per);
  for (size_t i = 0; i < c->rel_cap; i++)
    atom__mem_free(c->mem, c->rel[i].r, c->rel[i].cap * sizeof *c->rel[i].r);
  atom__mem_free(c->mem, c->rel, c->rel_cap * sizeof *c->rel);
  atom__lo_destroy(&c->lo);
  atom__mem_free(c->mem, c, sizeof *c);
}

static int cn_create(void **self, atom_env *env) {
  const char *mode = atom_env_arg(env, "mode");
  int view = 0;
  if (mode && strcmp(mode, "view") == 0) view = 1;
  else if (mode && strcmp(mode, "conflict") != 0)
    return atom_env_error(env, ATOM_EINVAL, "mode must be conflict or view, not \"%s\"", mode);
  size_t max_edges = (size_t)1 << 22;
  const char *me = atom_env_arg(env, "max_edges");
  if (me) {
    char *end = NULL;
    unsigned long long x = strtoull(me, &end, 10);
    if (!*me || *end || x == 0 || x >= UINT32_MAX)
      return atom_env_error(env, ATOM_EINVAL, "max_edges must be 1..4294967294, not \"%s\"", me);
    max_edges = (size_t)x;
  }
  int lock_blocks = 1;
  int rc = atom__arg_yes_no(env, "lock_blocks", &lock_blocks);
  if (rc) return rc;
  commit_node *c = ATOM__NEW_STATE(env, commit_node, own_mem);
  if (!c) return ATOM_ENOMEM;
  atom__mem *mem = &c->own_mem;
  c->lock_blocks = lock_blocks;
  c->max_edges = max_edges;
  c->env = env;
  c->mem = mem;
  c->view = view;
  atom__periods_init(&c->per, mem);
  atom__lo_init(&c->lo, mem);
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
