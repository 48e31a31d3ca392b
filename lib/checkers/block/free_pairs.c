/* block: the pairs of sites that fork/join leaves free (000 §5.2, §5.3, Thm 5.1, Thm 5.4). */
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"

/* ---- analysis: pairs of blocks (000 §5.2) ---------------------------------------------------- */

/* The sort order of the pair analysis over the stored tuples (blocks and accesses; 2-blocks
 * are made one variable at a time, below): by (type, variable, site, ...); ties by tuple id. */
static void sort_key(const block_keyset *t, uint32_t id, uint32_t out[TUPLE_WORDS]) {
  static const int order[TUPLE_WORDS] = {KEY_TYPE, KEY_X, KEY_Y, KEY_SITE, KEY_FLAGS, KEY_H1, KEY_H2, KEY_H12};
  const uint32_t *k = keyset_key(t, id);
  for (int w = 0; w < TUPLE_WORDS; w++) out[w] = k[order[w]];
}

static int id_before(const block_keyset *t, uint32_t a, uint32_t b) {
  uint32_t ka[TUPLE_WORDS], kb[TUPLE_WORDS];
  sort_key(t, a, ka);
  sort_key(t, b, kb);
  for (int i = 0; i < TUPLE_WORDS; i++)
    if (ka[i] != kb[i]) return ka[i] < kb[i];
  return a < b;
}

/* A prefix of sort_key() in one word, within one type of tuple: (variable, site). Each type
 * is sorted apart, and Y is 0 for blocks and accesses. */
static uint64_t sort_prefix(const block_keyset *t, uint32_t id) {
  const uint32_t *k = keyset_key(t, id);
  return (uint64_t)k[KEY_X] << 32 | k[KEY_SITE];
}

/* Bottom-up merge sort of tuple ids of one type (qsort has no context argument, and the keys
 * are long). The prefixes, kept beside the ids, decide most comparisons without touching the
 * keys (a cache miss each); equal prefixes compare the whole key. key and ktmp: n words each,
 * tmp: n ids. */
static void sort_ids(const block_keyset *t, uint32_t *ids, uint32_t *tmp, uint64_t *key,
                     uint64_t *ktmp, size_t n) {
  for (size_t i = 0; i < n; i++) key[i] = sort_prefix(t, ids[i]);
  uint32_t *src = ids, *dst = tmp;
  uint64_t *ks = key, *kd = ktmp;
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        int right = ks[j] != ks[i] ? ks[j] < ks[i] : id_before(t, src[j], src[i]);
        size_t from = right ? j++ : i++;
        kd[k] = ks[from];
        dst[k++] = src[from];
      }
      for (; i < mid; i++, k++) {
        kd[k] = ks[i];
        dst[k] = src[i];
      }
      for (; j < hi; j++, k++) {
        kd[k] = ks[j];
        dst[k] = src[j];
      }
    }
    uint32_t *x = src;
    src = dst;
    dst = x;
    uint64_t *y = ks;
    ks = kd;
    kd = y;
  }
  if (src != ids) memcpy(ids, src, n * sizeof *ids);
}

/* The unserializable pattern a block (op1, op2) of t can form with a third event of t', or -1.
 * 000 §5.2: UP1 a read between two writes; UP2 a write between two reads; UP3 a write between
 * a write and a later read; UP4 the final write of t' between a read and a later write.
 * "No three out of the four events in the two blocks" (000 §5.2) matters for UP1: a read r' of
 * t' that follows a write w' of t' reads e1 only if w' comes before e1 -- and then e1 lies
 * between w' and r', which is UP3 of the block (w', r'). So UP1 needs only the uninitialized
 * reads of t' (example (15) is atomic because of this). For UP2-UP4 the third event alone
 * makes the interleaving unserializable. */
static int up_of(uint32_t op1, uint32_t op2, uint32_t op3, uint32_t fw3, uint32_t ur3) {
  if (op1 == REC_WRITE && op2 == REC_WRITE) return op3 == REC_READ && ur3 ? 0 : -1;
  if (op1 == REC_READ && op2 == REC_READ) return op3 == REC_WRITE ? 1 : -1;
  if (op1 == REC_WRITE && op2 == REC_READ) return op3 == REC_WRITE ? 2 : -1;
  return op3 == REC_WRITE && fw3 ? 3 : -1;
}

static int report_up(block *b, int up, uint32_t tb, uint32_t ta) {
  const tuple_origin *rb = &b->rep[tb], *ra = &b->rep[ta];
  atom_ev ev[3] = {atom__block_event(b, rb->unit, rb->p1), atom__block_event(b, ra->unit, ra->p1),
                   atom__block_event(b, rb->unit, rb->p2)};
  uint32_t units[2] = {rb->unit, ra->unit};
  atom__block_mark_bad(b, rb->unit);
  atom__block_mark_bad(b, ra->unit);
  return atom__block_finding(b, "unserializable-pattern", SAYS_UP1 + (unsigned)up, units, ev, 3, (uint64_t)up + 1);
}


static int pairs_1var(block *b, const uint32_t *ids, size_t n) {
  int rc;
  /* ids: every BLOCK and ACCESS tuple sorted by (type, var, site, ...): walk variable by
   * variable. */
  size_t i = 0;
  while (i < n && keyset_key(&b->tup, ids[i])[KEY_TYPE] == TUPLE_BLOCK) i++;
  size_t nblk = i;
  size_t a0 = nblk;
  for (size_t bi = 0; bi < nblk;) {
    uint32_t x = keyset_key(&b->tup, ids[bi])[KEY_X];
    size_t be = bi;
    while (be < nblk && keyset_key(&b->tup, ids[be])[KEY_X] == x) be++;
    while (a0 < n && keyset_key(&b->tup, ids[a0])[KEY_X] < x) a0++;
    size_t ae = a0;
    while (ae < n && keyset_key(&b->tup, ids[ae])[KEY_X] == x) ae++;
    for (size_t j = bi; j < be; j++) {
      const uint32_t *kb = keyset_key(&b->tup, ids[j]);
      const block_unit *ub = &b->unit[b->site_rep[kb[KEY_SITE]]];
      uint32_t op1 = kb[KEY_FLAGS] & 1u, op2 = kb[KEY_FLAGS] >> 1 & 1u;
      for (size_t k = a0; k < ae; k++) {
        atom__block_tick(b, j);
        const uint32_t *ka = keyset_key(&b->tup, ids[k]);
        int up = up_of(op1, op2, ka[KEY_FLAGS] & 1u, ka[KEY_FLAGS] >> 1 & 1u, ka[KEY_FLAGS] >> 2 & 1u);
        if (up < 0 || ka[KEY_SITE] == kb[KEY_SITE]) continue;
        /* Thm 5.1: e' can occur between e1 and e2 iff h12 ∩ held(e') = ∅. */
        if (!atom__ls_disjoint(&b->ls, kb[KEY_H12], ka[KEY_H1])) continue;
        const block_unit *ua = &b->unit[b->site_rep[ka[KEY_SITE]]];
        if (atom__block_relation(b, ub, ua) != PAIR_FREE) continue;
        if ((rc = report_up(b, up, ids[j], ids[k]))) return rc;
      }
    }
    bi = be;
  }
  return 0;
}

/* ---- analysis: pairs of 2-blocks (000 §5.3) --------------------------------------------------- */

/* What the pair loop of one pair of variables reads of a 2-block. */
typedef struct blk2 {
  uint64_t begin;       /* begin index of the representative unit: the older goes first */
  const block_unit *su; /* the site's first unit: the fork/join relation */
  uint32_t site, x;     /* x: the variable of e1 */
  uint32_t op1, op2;
  atom__ls h1, h2, h12;
  uint32_t unit, p1, p2; /* the representative unit and the positions of e1, e2 in it */
} blk2;

static int report_2blk(block *b, const blk2 *pb, const blk2 *pc, unsigned order) {
  unsigned shape = ATOM__BLK_SHAPE(pb->op1, pb->op2, pc->op1, pc->op2, pc->x != pb->x);
  atom_ev a[2] = {atom__block_event(b, pb->unit, pb->p1), atom__block_event(b, pb->unit, pb->p2)};
  atom_ev c[2] = {atom__block_event(b, pc->unit, pc->p1), atom__block_event(b, pc->unit, pc->p2)};
  atom_ev seq[4];
  unsigned na = 0, nc = 0;
  for (unsigned k = 0; k < 4; k++) seq[k] = atom__blk_order_name(order)[k] == 'A' ? a[na++] : c[nc++];
  uint32_t units[2] = {pb->unit, pc->unit};
  uint64_t pattern = 16 + order * 64 + shape;
  atom__block_mark_bad(b, pb->unit);
  atom__block_mark_bad(b, pc->unit);
  return atom__block_finding(b, "2-block", SAYS_2BLOCK, units, seq, 4, pattern);
}

/* Feasibility of an order of the four events, by Thm 5.1 applied to each event that the order
 * places strictly between the two events of the other block. */
static int order_feasible(const block *b, unsigned order, const blk2 *pb, const blk2 *pc) {
  const char *o = atom__blk_order_name(order);
  atom__ls ha[2] = {pb->h1, pb->h2}, hc[2] = {pc->h1, pc->h2};
  unsigned na = 0, nc = 0;
  for (unsigned k = 0; k < 4; k++) {
    if (o[k] == 'A') {
      if (nc == 1 && !atom__ls_disjoint(&b->ls, ha[na], pc->h12)) return 0;
      na++;
    } else {
      if (na == 1 && !atom__ls_disjoint(&b->ls, hc[nc], pb->h12)) return 0;
      nc++;
    }
  }
  return 1;
}

/* Every pair of 2-blocks of one pair of variables (g2[0..n), in the order of their keys) of
 * sites that fork/join leaves free: non-atomic when an interleaving of the table is feasible. */
static int pairs_of_group(block *b, const blk2 *g2, size_t n, uint64_t tick) {
  for (size_t i = 0; i < n; i++) {
    for (size_t j = i + 1; j < n; j++) {
      atom__block_tick(b, tick);
      const blk2 *pb = &g2[i], *pc = &g2[j];
      if (pb->site == pc->site) continue;
      if (pb->begin > pc->begin) { /* b from the older transaction, so that reports read in order */
        const blk2 *t = pb;
        pb = pc;
        pc = t;
      }
      unsigned crossed = pc->x != pb->x;
      unsigned mask = b->tbl[ATOM__BLK_SHAPE(pb->op1, pb->op2, pc->op1, pc->op2, crossed)];
      if (!mask) continue;
      unsigned o = 0;
      while (o < ATOM__BLK_ORDERS && !(mask >> o & 1u && order_feasible(b, o, pb, pc))) o++;
      if (o == ATOM__BLK_ORDERS) continue;
      if (atom__block_relation(b, pb->su, pc->su) != PAIR_FREE) continue;
      int rc = report_2blk(b, pb, pc, o);
      if (rc) return rc;
    }
  }
  return 0;
}

/* ---- the 2-blocks of one variable at a time ---------------------------------------------------
 *
 * The 2-blocks of a unit are the pairs of its uninitialized reads and final writes (tuples.c
 * keeps the events, b->uf): a transaction that touches k shared variables has up to k(k-1)/2,
 * half a million for k = 1 000, so they are made on demand, one *row* at a time: row lo holds
 * the 2-blocks on lo and a larger variable hi. Sorted by (hi, the key of the tuple) and with
 * equal contents of one site kept once (the earliest unit represents them), a row is, pair of
 * variables by pair of variables, what the set of 2-block tuples would hold, in the same order,
 * so the pair loop makes the same findings in the same order. */

typedef struct row2 {
  uint32_t hi, y, site, flags; /* y: the variable of e2; flags: op1 | op2 << 1 */
  atom__ls h1, h2, h12;
  uint32_t unit, p1, p2;
} row2;

static int row2_cmp(const void *pa, const void *pb) {
  const row2 *a = pa, *c = pb;
  const uint32_t ka[8] = {a->hi, a->y, a->site, a->flags, a->h1, a->h2, a->h12, a->unit};
  const uint32_t kc[8] = {c->hi, c->y, c->site, c->flags, c->h1, c->h2, c->h12, c->unit};
  for (int i = 0; i < 8; i++)
    if (ka[i] != kc[i]) return ka[i] < kc[i] ? -1 : 1;
  return 0;
}

static int same_content(const row2 *a, const row2 *c) {
  return a->hi == c->hi && a->y == c->y && a->site == c->site && a->flags == c->flags &&
         a->h1 == c->h1 && a->h2 == c->h2 && a->h12 == c->h12;
}

/* h12 of the 2-block (e1 at position p1, e2 with its stack node): the locks held continuously
 * from before e1 until e2. At positions increase up a stack, so it is the deepest node below
 * e2's acquired before p1 (tuples.c: held_since). scratch: room for the locks of a deep stack
 * whose set was not made. */
static int block_h12(block *b, uint32_t node, uint32_t p1, uint32_t **scratch, size_t *scap,
                     atom__ls *out) {
  while (node != NONE32 && b->hn[node].at >= p1) node = b->hn[node].parent;
  if (node == NONE32) {
    *out = ATOM__LS_EMPTY;
    return 0;
  }
  if (b->hn[node].ls != NONE32) {
    *out = b->hn[node].ls;
    return 0;
  }
  size_t k = 0;
  for (uint32_t m = node; m != NONE32; m = b->hn[m].parent) {
    if (ATOM__GROW(b->mem, *scratch, *scap, k + 1)) return ATOM_ENOMEM;
    (*scratch)[k++] = b->hn[m].lock;
  }
  return atom__ls_make(&b->ls, *scratch, k, out);
}

typedef struct rows {
  uint32_t *vx;    /* per variable, the units that have an event of it, by unit (vx_at) */
  uint8_t *vxn;    /* how many events (1 or 2) the unit has of it */
  size_t *vx_at;   /* var_cap + 1 */
  size_t nvx;
  row2 *r;
  size_t rn, rcap;
  blk2 *g2;
  size_t g2cap;
  uint32_t *scratch;
  size_t scap;
  uint8_t *sat;    /* per unit: 1 saturated (below), 0 not known */
  uint64_t *sat_at; /* grp_pair_n when it was last found unsaturated, + 1 */
  uint32_t *w;     /* the units with two events or more */
  size_t nw;
} rows;

/* The 2-block of unit u made of its events a < c (indices in its b->uf list) for row lo. */
static int make_2blk(block *b, rows *rs, uint32_t u, size_t a, size_t c, uint32_t lo, row2 *out) {
  const block_urfw *f = b->uf + b->uf_at[u];
  atom__ls h12;
  int rc = block_h12(b, f[c].node, f[a].pos, &rs->scratch, &rs->scap, &h12);
  if (rc) return rc;
  uint32_t hi = f[a].var == lo ? f[c].var : f[a].var;
  *out = (row2){hi, f[c].var, b->unit[u].site, f[a].op | f[c].op << 1, f[a].held, f[c].held,
                h12, u, f[a].pos, f[c].pos};
  return 0;
}

/* Append the 2-blocks of row lo of unit u made of its first lim events. */
static int unit_row(block *b, rows *rs, uint32_t u, uint32_t lo, size_t lim) {
  const block_urfw *f = b->uf + b->uf_at[u];
  for (size_t i = 0; i < lim; i++) {
    if (f[i].var != lo) continue;
    for (size_t j = 0; j < lim; j++) {
      if (f[j].var <= lo) continue;
      if (ATOM__GROW(b->mem, rs->r, rs->rcap, rs->rn + 1)) return ATOM_ENOMEM;
      int rc = make_2blk(b, rs, u, i < j ? i : j, i < j ? j : i, lo, &rs->r[rs->rn]);
      if (rc) return rc;
      rs->rn++;
    }
  }
  return 0;
}

/* Is unit u paired in some finding with every unit of w that fork/join leaves free with it
 * (so that a finding of the two adds no occurrence and marks nothing new)? Once true, true for
 * good; false is remembered until grp_pair grows. */
static int saturated(block *b, rows *rs, uint32_t u) {
  if (rs->sat[u]) return 1;
  if (rs->sat_at[u] == b->grp_pair_n + 1) return 0;
  for (size_t k = 0; k < rs->nw; k++) {
    uint32_t v = rs->w[k];
    if (atom__block_relation(b, &b->unit[u], &b->unit[v]) != PAIR_FREE) continue;
    uint64_t pk = u < v ? (uint64_t)u << 32 | v : (uint64_t)v << 32 | u;
    uint32_t seen;
    if (!atom__u64map_get(&b->grp_pair, pk, &seen)) {
      rs->sat_at[u] = b->grp_pair_n + 1;
      return 0;
    }
  }
  return rs->sat[u] = 1;
}

/* Can row lo be made from the events before *lim_index only? When every group of findings its
 * units can form has reached max_count (its count is final: "at least") and every unit of the
 * row is saturated, a pair of 2-blocks can change a report only by showing an earlier finding:
 * one whose last event comes before the shown one's (findings.c). The last event of a pair of
 * 2-blocks is the later of their e2, so only the 2-blocks whose events all come before the
 * largest `last` of those groups matter. */
static int row_fast(block *b, rows *rs, uint32_t lo, uint64_t *lim_index) {
  const uint32_t *vu = rs->vx + rs->vx_at[lo];
  size_t n = rs->vx_at[lo + 1] - rs->vx_at[lo], events = 0;
  for (size_t i = 0; i < n; i++) events += b->uf_at[vu[i] + 1] - b->uf_at[vu[i]];
  if (events < b->row_fast_min) return 0;
  uint64_t locs[8];
  size_t nl = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t l = b->unit[vu[i]].begin_loc;
    size_t k = 0;
    while (k < nl && locs[k] != l) k++;
    if (k < nl) continue;
    if (nl == 8) return 0;
    locs[nl++] = l;
  }
  uint64_t lim = 0;
  for (size_t i = 0; i < nl; i++)
    for (size_t k = i; k < nl; k++) {
      int capped;
      uint64_t last;
      if (!atom__block_group_state(b, locs[i], locs[k], &capped, &last)) continue;
      if (!capped) return 0;
      if (last > lim) lim = last;
    }
  for (size_t i = 0; i < n; i++)
    if (!saturated(b, rs, vu[i])) return 0;
  *lim_index = lim;
  return 1;
}

/* Is r the first of its content (the representative) among the units of its site? Units are
 * looked at in order, so only an earlier unit of the site with an event of both variables can
 * hold it first. */
static int first_of_content(block *b, rows *rs, uint32_t lo, const row2 *r, int *first) {
  *first = 1;
  const uint32_t *vu = rs->vx + rs->vx_at[lo];
  size_t n = rs->vx_at[lo + 1] - rs->vx_at[lo];
  const uint32_t *vh = rs->vx + rs->vx_at[r->hi];
  size_t nh = rs->vx_at[r->hi + 1] - rs->vx_at[r->hi];
  for (size_t i = 0; i < n && vu[i] < r->unit; i++) {
    uint32_t a = vu[i];
    if (b->unit[a].site != r->site) continue;
    size_t lo_i = 0, hi_i = nh; /* is a among the units of r->hi? */
    while (lo_i < hi_i) {
      size_t mid = (lo_i + hi_i) / 2;
      if (vh[mid] < a) lo_i = mid + 1;
      else hi_i = mid;
    }
    if (lo_i == nh || vh[lo_i] != a) continue;
    const block_urfw *f = b->uf + b->uf_at[a];
    size_t m = b->uf_at[a + 1] - b->uf_at[a];
    for (size_t x = 0; x < m; x++) {
      if (f[x].var != lo) continue;
      for (size_t y = 0; y < m; y++) {
        if (f[y].var != r->hi) continue;
        row2 c;
        int rc = make_2blk(b, rs, a, x < y ? x : y, x < y ? y : x, lo, &c);
        if (rc) return rc;
        if (same_content(&c, r)) {
          *first = 0;
          return 0;
        }
      }
    }
  }
  return 0;
}

static int rows_index(block *b, rows *rs) {
  size_t nv = b->var_cap;
  uint32_t *stamp = NULL;
  if (!(rs->vx_at = atom__mem_calloc(b->mem, nv + 2, sizeof *rs->vx_at)) ||
      (nv && !(stamp = atom__mem_calloc(b->mem, nv, sizeof *stamp))))
    goto nomem;
  /* one entry per (variable, unit) (a variable has two events of a unit at most), units in
   * order; stamp[x] = the last unit + 1 that had x */
  for (int pass = 0; pass < 2; pass++) {
    if (pass) {
      for (size_t x = 2; x < nv + 2; x++) rs->vx_at[x] += rs->vx_at[x - 1];
      rs->nvx = rs->vx_at[nv + 1];
      if (rs->nvx && !(rs->vx = atom__mem_alloc(b->mem, rs->nvx * sizeof *rs->vx))) goto nomem;
      memset(stamp, 0, nv * sizeof *stamp);
    }
    for (size_t u = 0; u < b->unit_n; u++)
      for (size_t i = b->uf_at[u]; i < b->uf_at[u + 1]; i++) {
        uint32_t x = b->uf[i].var;
        if (stamp[x] == u + 1) continue;
        stamp[x] = (uint32_t)u + 1;
        if (pass) rs->vx[rs->vx_at[x + 1]++] = (uint32_t)u;
        else rs->vx_at[x + 2]++;
      }
  }
  atom__mem_free(b->mem, stamp, nv * sizeof *stamp);
  stamp = NULL;
  if (b->unit_n) {
    if (!(rs->sat = atom__mem_calloc(b->mem, b->unit_n, 1)) ||
        !(rs->sat_at = atom__mem_calloc(b->mem, b->unit_n, sizeof *rs->sat_at)) ||
        !(rs->w = atom__mem_alloc(b->mem, b->unit_n * sizeof *rs->w)))
      goto nomem;
  }
  for (size_t u = 0; u < b->unit_n; u++)
    if (b->uf_at[u + 1] - b->uf_at[u] >= 2) rs->w[rs->nw++] = (uint32_t)u;
  return 0;
nomem:
  atom__mem_free(b->mem, stamp, nv * sizeof *stamp);
  return ATOM_ENOMEM;
}

static void rows_free(block *b, rows *rs) {
  atom__mem_free(b->mem, rs->vx, rs->nvx * sizeof *rs->vx);
  atom__mem_free(b->mem, rs->vx_at, (b->var_cap + 2) * sizeof *rs->vx_at);
  atom__mem_free(b->mem, rs->r, rs->rcap * sizeof *rs->r);
  atom__mem_free(b->mem, rs->g2, rs->g2cap * sizeof *rs->g2);
  atom__mem_free(b->mem, rs->scratch, rs->scap * sizeof *rs->scratch);
  atom__mem_free(b->mem, rs->sat, b->unit_n);
  atom__mem_free(b->mem, rs->sat_at, b->unit_n * sizeof *rs->sat_at);
  atom__mem_free(b->mem, rs->w, b->unit_n * sizeof *rs->w);
}

/* The number of events of unit u that come before event index lim (a prefix: in order). */
static size_t events_before(const block *b, uint32_t u, uint64_t lim) {
  const block_urfw *f = b->uf + b->uf_at[u];
  size_t m = b->uf_at[u + 1] - b->uf_at[u], k = 0;
  while (k < m && urec(b, u, f[k].pos)->index < lim) k++;
  return k;
}

static int pairs_2blk(block *b, uint64_t tick0) {
  if (!b->uf_n) return 0;
  rows rs;
  memset(&rs, 0, sizeof rs);
  int rc = rows_index(b, &rs);
  for (uint32_t lo = 0; lo < b->var_cap && !rc; lo++) {
    const uint32_t *vu = rs.vx + rs.vx_at[lo];
    size_t n = rs.vx_at[lo + 1] - rs.vx_at[lo];
    if (n < 2) continue;
    uint64_t lim = UINT64_MAX;
    int fast = row_fast(b, &rs, lo, &lim);
    b->rows_fast += (uint64_t)fast;
    rs.rn = 0;
    for (size_t i = 0; i < n && !rc; i++) {
      uint32_t u = vu[i];
      size_t m = b->uf_at[u + 1] - b->uf_at[u];
      rc = unit_row(b, &rs, u, lo, fast ? events_before(b, u, lim) : m);
    }
    if (rc || rs.rn < 2) continue;
    qsort(rs.r, rs.rn, sizeof *rs.r, row2_cmp);
    /* equal contents of a site: the earliest unit's (sorted last by unit); a row made of the
     * events before lim only must also ask the units of the site before it */
    size_t k = 0;
    for (size_t i = 0; i < rs.rn && !rc; i++) {
      if (k && same_content(&rs.r[k - 1], &rs.r[i])) continue;
      int first = 1;
      if (fast) rc = first_of_content(b, &rs, lo, &rs.r[i], &first);
      if (first) rs.r[k++] = rs.r[i];
    }
    b->two_blocks_made += k;
    for (size_t g = 0; g < k && !rc;) {
      size_t ge = g;
      while (ge < k && rs.r[ge].hi == rs.r[g].hi) ge++;
      if (ge - g >= 2) {
        if (ATOM__GROW(b->mem, rs.g2, rs.g2cap, ge - g)) {
          rc = ATOM_ENOMEM;
          break;
        }
        for (size_t i = g; i < ge; i++) {
          const row2 *r = &rs.r[i];
          rs.g2[i - g] = (blk2){b->unit[r->unit].begin_index, &b->unit[b->site_rep[r->site]],
                                r->site, r->y == r->hi ? lo : r->hi, r->flags & 1u,
                                r->flags >> 1 & 1u, r->h1, r->h2, r->h12, r->unit, r->p1, r->p2};
        }
        rc = pairs_of_group(b, rs.g2, ge - g, tick0 + lo);
      }
      g = ge;
    }
  }
  rows_free(b, &rs);
  return rc;
}

/* Blocks against accesses, and 2-blocks against 2-blocks, over every pair of sites that
 * fork/join leaves free (000 Thm 5.4). */
int atom__block_free_pairs(block *b) {
  size_t n = b->tup.n;
  if (!n) return 0;
  uint32_t *ids = atom__mem_alloc(b->mem, n * sizeof *ids);
  uint32_t *tmp = atom__mem_alloc(b->mem, n * sizeof *tmp);
  uint64_t *key = atom__mem_alloc(b->mem, n * sizeof *key);
  uint64_t *ktmp = atom__mem_alloc(b->mem, n * sizeof *ktmp);
  int rc = 0;
  if (!ids || !tmp || !key || !ktmp) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  /* blocks, then accesses, then 2-blocks, each type sorted apart (the order within a type
   * does not matter: the sort is total) */
  size_t at[4] = {0, 0, 0, 0}; /* at[t]: where type t begins */
  for (size_t i = 0; i < n; i++) at[keyset_key(&b->tup, (uint32_t)i)[KEY_TYPE]]++;
  at[3] = at[1] + at[2];
  at[2] = at[1];
  at[1] = 0;
  size_t n1 = at[3];
  for (size_t i = 0; i < n; i++) ids[at[keyset_key(&b->tup, (uint32_t)i)[KEY_TYPE]]++] = (uint32_t)i;
  size_t nblk = at[1];
  sort_ids(&b->tup, ids, tmp, key, ktmp, nblk);
  sort_ids(&b->tup, ids + nblk, tmp, key, ktmp, n1 - nblk);
  sort_ids(&b->tup, ids + n1, tmp, key, ktmp, n - n1);
  atom__mem_free(b->mem, tmp, n * sizeof *tmp);
  atom__mem_free(b->mem, key, n * sizeof *key);
  atom__mem_free(b->mem, ktmp, n * sizeof *ktmp);
  tmp = NULL;
  key = ktmp = NULL;
  rc = pairs_1var(b, ids, n1);
  if (!rc) rc = pairs_2blk(b, n1);
out:
  atom__mem_free(b->mem, ids, n * sizeof *ids);
  atom__mem_free(b->mem, tmp, n * sizeof *tmp);
  atom__mem_free(b->mem, key, n * sizeof *key);
  atom__mem_free(b->mem, ktmp, n * sizeof *ktmp);
  return rc;
}
