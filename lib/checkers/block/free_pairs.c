/* block: the pairs of sites that fork/join leaves free (000 §5.2, §5.3, Thm 5.1, Thm 5.4). */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"

/* ---- analysis: pairs of blocks (000 §5.2) ---------------------------------------------------- */

/* The sort order of the pair analysis: blocks and accesses first, by (type, variable, site,
 * ...); then 2-blocks by (smaller variable, larger variable, ...); ties by tuple id. */
static void sort_key(const block_keyset *t, uint32_t id, uint32_t out[9]) {
  static const int order[TUPLE_WORDS] = {KEY_TYPE, KEY_X, KEY_Y, KEY_SITE, KEY_FLAGS, KEY_H1, KEY_H2, KEY_H12};
  const uint32_t *k = keyset_key(t, id);
  for (int w = 0; w < TUPLE_WORDS; w++) out[1 + w] = k[order[w]];
  out[0] = 0;
  if (k[KEY_TYPE] == TUPLE_2BLOCK) {
    uint32_t lo = k[KEY_X] < k[KEY_Y] ? k[KEY_X] : k[KEY_Y];
    out[0] = 1 + lo; /* variable ids are below UINT32_MAX */
    out[2] = k[KEY_X] ^ k[KEY_Y] ^ lo;
  }
}

static int id_before(const block_keyset *t, uint32_t a, uint32_t b) {
  uint32_t ka[9], kb[9];
  sort_key(t, a, ka);
  sort_key(t, b, kb);
  for (int i = 0; i < 9; i++)
    if (ka[i] != kb[i]) return ka[i] < kb[i];
  return a < b;
}

/* A prefix of sort_key() in one word, within one type of tuple: (variable, site) of a block
 * or an access, (smaller variable, larger variable) of a 2-block. Each type is sorted apart. */
static uint64_t sort_prefix(const block_keyset *t, uint32_t id) {
  const uint32_t *k = keyset_key(t, id);
  if (k[KEY_TYPE] != TUPLE_2BLOCK) return (uint64_t)k[KEY_X] << 32 | k[KEY_SITE]; /* Y is 0 */
  uint32_t lo = k[KEY_X] < k[KEY_Y] ? k[KEY_X] : k[KEY_Y];
  return (uint64_t)lo << 32 | (k[KEY_X] ^ k[KEY_Y] ^ lo);
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

static int report_2blk(block *b, uint32_t ti, uint32_t tj, unsigned order) {
  const uint32_t *kb = keyset_key(&b->tup, ti), *kc = keyset_key(&b->tup, tj);
  unsigned shape = ATOM__BLK_SHAPE(kb[KEY_FLAGS] & 1u, kb[KEY_FLAGS] >> 1 & 1u, kc[KEY_FLAGS] & 1u,
                                   kc[KEY_FLAGS] >> 1 & 1u, kc[KEY_X] != kb[KEY_X]);
  const tuple_origin *ri = &b->rep[ti], *rj = &b->rep[tj];
  atom_ev a[2] = {atom__block_event(b, ri->unit, ri->p1), atom__block_event(b, ri->unit, ri->p2)};
  atom_ev c[2] = {atom__block_event(b, rj->unit, rj->p1), atom__block_event(b, rj->unit, rj->p2)};
  atom_ev seq[4];
  unsigned na = 0, nc = 0;
  for (unsigned k = 0; k < 4; k++) seq[k] = atom__blk_order_name(order)[k] == 'A' ? a[na++] : c[nc++];
  uint32_t units[2] = {ri->unit, rj->unit};
  uint64_t pattern = 16 + order * 64 + shape;
  atom__block_mark_bad(b, ri->unit);
  atom__block_mark_bad(b, rj->unit);
  return atom__block_finding(b, "2-block", SAYS_2BLOCK, units, seq, 4, pattern);
}

/* Feasibility of an order of the four events, by Thm 5.1 applied to each event that the order
 * places strictly between the two events of the other block. */
static int order_feasible(const block *b, unsigned order, const uint32_t *kb, const uint32_t *kc,
                          int crossed) {
  (void)crossed;
  const char *o = atom__blk_order_name(order);
  atom__ls ha[2] = {kb[KEY_H1], kb[KEY_H2]}, hc[2] = {kc[KEY_H1], kc[KEY_H2]};
  unsigned na = 0, nc = 0;
  for (unsigned k = 0; k < 4; k++) {
    if (o[k] == 'A') {
      if (nc == 1 && !atom__ls_disjoint(&b->ls, ha[na], kc[KEY_H12])) return 0;
      na++;
    } else {
      if (na == 1 && !atom__ls_disjoint(&b->ls, hc[nc], kb[KEY_H12])) return 0;
      nc++;
    }
  }
  return 1;
}

/* What the pair loop of a group reads of a 2-block, copied out of the keyset once per group:
 * the loop looks at every pair of the group, and the keys, representatives and units it reads
 * are three cache misses per 2-block when fetched inside it. */
typedef struct blk2 {
  uint64_t begin;        /* begin index of the representative unit: the older goes first */
  const uint32_t *k;     /* the key */
  const block_unit *su;  /* the site's first unit: the fork/join relation */
  uint32_t id, site, x;
  uint32_t op1, op2;
} blk2;

static int pairs_2blk(block *b, const uint32_t *ids, size_t n) {
  int rc = 0;
  blk2 *g2 = NULL;
  size_t g2cap = 0;
  for (size_t g = 0; g < n && !rc;) {
    const uint32_t *k0 = keyset_key(&b->tup, ids[g]);
    uint32_t lo = k0[KEY_X] < k0[KEY_Y] ? k0[KEY_X] : k0[KEY_Y], hi = k0[KEY_X] ^ k0[KEY_Y] ^ lo;
    size_t ge = g;
    while (ge < n) {
      const uint32_t *k = keyset_key(&b->tup, ids[ge]);
      uint32_t l2 = k[KEY_X] < k[KEY_Y] ? k[KEY_X] : k[KEY_Y], h2 = k[KEY_X] ^ k[KEY_Y] ^ l2;
      if (l2 != lo || h2 != hi) break;
      ge++;
    }
    if (ge - g < 2) {
      g = ge;
      continue;
    }
    if (ATOM__GROW(b->mem, g2, g2cap, ge - g)) {
      rc = ATOM_ENOMEM;
      break;
    }
    for (size_t i = g; i < ge; i++) {
      const uint32_t *k = keyset_key(&b->tup, ids[i]);
      g2[i - g] = (blk2){b->unit[b->rep[ids[i]].unit].begin_index, k,
                         &b->unit[b->site_rep[k[KEY_SITE]]], ids[i], k[KEY_SITE], k[KEY_X],
                         k[KEY_FLAGS] & 1u, k[KEY_FLAGS] >> 1 & 1u};
    }
    for (size_t i = g; i < ge && !rc; i++) {
      for (size_t j = i + 1; j < ge; j++) {
        atom__block_tick(b, b->work_base + i);
        const blk2 *pb = &g2[i - g], *pc = &g2[j - g];
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
        while (o < ATOM__BLK_ORDERS && !(mask >> o & 1u && order_feasible(b, o, pb->k, pc->k, (int)crossed))) o++;
        if (o == ATOM__BLK_ORDERS) continue;
        if (atom__block_relation(b, pb->su, pc->su) != PAIR_FREE) continue;
        if ((rc = report_2blk(b, pb->id, pc->id, o))) break;
      }
    }
    g = ge;
  }
  atom__mem_free(b->mem, g2, g2cap * sizeof *g2);
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
  b->work_base = n1;
  if (!rc) rc = pairs_2blk(b, ids + n1, n - n1);
out:
  atom__mem_free(b->mem, ids, n * sizeof *ids);
  atom__mem_free(b->mem, tmp, n * sizeof *tmp);
  atom__mem_free(b->mem, key, n * sizeof *key);
  atom__mem_free(b->mem, ktmp, n * sizeof *ktmp);
  return rc;
}
