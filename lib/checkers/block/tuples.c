/* block: the tuples of every unit -- blocks (B1-B3), accesses, and 2-blocks (2B1-2B2) of
 * uninitialized reads and final writes (000 §5.1, §5.3) -- each kept once per site and content
 * in a keyset, with the held-lock sets that decide feasibility. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"

static int add_tuple(block *b, const uint32_t key[TUPLE_WORDS], uint32_t u, uint32_t p1, uint32_t p2) {
  uint32_t it;
  int added, rc = atom__block_keyset_add(b->mem, &b->tup, key, &it, &added);
  if (rc) return rc;
  if (added) {
    if (ATOM__GROW(b->mem, b->rep, b->rep_cap, (size_t)it + 1)) return ATOM_ENOMEM;
    b->rep[it] = (tuple_origin){u, p1, p2};
  }
  return 0;
}

/* Per-variable state while a unit is replayed (valid when stamp == unit + 1). */
typedef struct var_scan {
  uint32_t stamp;
  uint32_t fw;       /* position of the final write, NONE32 if none */
  uint32_t last_w, last_r, first_ur;
  atom__ls held_w, held_r, held_ur;
} var_scan;

/* The locks a unit holds during its replay, in acquisition order, with the position of each
 * acquisition. With properly nested locks (000 §5.1) "held continuously since before position
 * p" is a prefix of that order, so the lock set of every prefix is kept (pref[k] = set of
 * e[0..k)), for the first HELD_PREFIXES prefixes only: deeper sets are built on demand, so that
 * a thread holding 10^6 locks costs linear, not quadratic, memory. */

typedef struct held_entry {
  uint32_t lock, at;
  uint32_t node; /* its node in b->hn (NONE32 for a unit without 2-blocks) */
} held_entry;

typedef struct held_locks {
  held_entry *e;
  size_t n, cap;
  atom__ls pref[HELD_PREFIXES + 1];
  size_t npref;     /* pref[0..npref] are valid */
  uint32_t *sorted; /* scratch to build a deep set */
  size_t scap;
  int nodes; /* the unit gets 2-blocks: its held stacks are kept as nodes of b->hn */
} held_locks;

static void held_free(atom__mem *m, held_locks *h) {
  atom__mem_free(m, h->e, h->cap * sizeof *h->e);
  atom__mem_free(m, h->sorted, h->scap * sizeof *h->sorted);
  memset(h, 0, sizeof *h);
}

static void held_clear(held_locks *h) {
  h->n = 0;
  h->npref = 0;
  h->pref[0] = ATOM__LS_EMPTY;
}


/* *out := the set of the first k locks held. */
static int held_prefix(block *b, held_locks *h, size_t k, atom__ls *out) {
  while (h->npref < k && h->npref < HELD_PREFIXES) {
    if (atom__ls_add(&b->ls, h->pref[h->npref], h->e[h->npref].lock, &h->pref[h->npref + 1]))
      return ATOM_ENOMEM;
    if (h->e[h->npref].node != NONE32) b->hn[h->e[h->npref].node].ls = h->pref[h->npref + 1];
    h->npref++;
  }
  if (k <= HELD_PREFIXES) {
    *out = h->pref[k];
    return 0;
  }
  if (ATOM__GROW(b->mem, h->sorted, h->scap, k)) return ATOM_ENOMEM;
  for (size_t i = 0; i < k; i++) h->sorted[i] = h->e[i].lock;
  return atom__ls_make(&b->ls, h->sorted, k, out);
}

/* The node of the stack entry k: its parent is the entry below it. Its lock set is filled in
 * by held_prefix when the prefix is first made (so lock sets are made in the same order
 * whether or not the unit keeps nodes). */
static int held_new_node(block *b, held_locks *h, size_t k) {
  if (!h->nodes) {
    h->e[k].node = NONE32;
    return 0;
  }
  if (b->hn_n >= UINT32_MAX - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(b->mem, b->hn, b->hn_cap, b->hn_n + 1)) return ATOM_ENOMEM;
  b->hn[b->hn_n] = (held_node){k ? h->e[k - 1].node : NONE32, h->e[k].at, h->e[k].lock, NONE32};
  h->e[k].node = (uint32_t)b->hn_n++;
  return 0;
}

static int held_push(block *b, held_locks *h, uint32_t lock, uint32_t at) {
  if (ATOM__GROW(b->mem, h->e, h->cap, h->n + 1)) return ATOM_ENOMEM;
  h->e[h->n++] = (held_entry){lock, at, NONE32};
  return held_new_node(b, h, h->n - 1);
}

static int held_pop(block *b, held_locks *h, uint32_t lock) {
  size_t k = h->n;
  while (k > 0 && h->e[k - 1].lock != lock) k--;
  if (k == 0) return 0;
  k--;
  memmove(h->e + k, h->e + k + 1, (h->n - k - 1) * sizeof *h->e);
  h->n--;
  if (h->npref > k) h->npref = k; /* the prefixes from k on changed */
  /* the entries above it have another stack below them now: new nodes */
  for (size_t i = k; i < h->n; i++) {
    int rc = held_new_node(b, h, i);
    if (rc) return rc;
  }
  return 0;
}

static inline int held_now(block *b, held_locks *h, atom__ls *out) {
  /* every prefix is made here (the nodes of the stack get their lock sets) */
  return held_prefix(b, h, h->n, out);
}

/* 000 §5.1: h12 = the locks held continuously from before position p1 until now. */
static int held_since(block *b, held_locks *h, uint32_t p1, atom__ls *out) {
  size_t k = 0;
  while (k < h->n && h->e[k].at < p1) k++;
  return held_prefix(b, h, k, out);
}

typedef struct unit_scan {
  var_scan *v;
  size_t vcap;
  held_locks h;
} unit_scan;

static void scan_free(atom__mem *m, unit_scan *sc) {
  atom__mem_free(m, sc->v, sc->vcap * sizeof *sc->v);
  held_free(m, &sc->h);
}

/* Blocks (B1-B3), accesses and 2-blocks (2B1-2B2) of unit u, added to the tuple set. */
static int unit_tuples(block *b, unit_scan *sc, uint32_t u) {
  const block_unit *un = &b->unit[u];
  const block_record *r = unit_log(b, un);
  uint32_t stamp = u + 1, site = un->site;
  int rc;
  /* B3 needs the final write of each variable: a first pass. It also counts the unit's
   * uninitialized reads (a variable whose first access is a read) and final writes. */
  uint64_t nurfw = 0;
  for (uint32_t p = 0; p < un->len; p++) {
    if (rec_kind(&r[p]) > REC_WRITE || !shared_var(b, r[p].target)) continue;
    var_scan *v = &sc->v[r[p].target];
    if (v->stamp != stamp) {
      v->stamp = stamp;
      v->fw = v->last_w = v->last_r = v->first_ur = NONE32;
      nurfw += rec_kind(&r[p]) == REC_READ;
    }
    if (rec_kind(&r[p]) == REC_WRITE) {
      nurfw += v->fw == NONE32;
      v->fw = p;
    }
  }
  /* max_2blocks: the 2-blocks (2B1) are at most the pairs of those events. A unit whose pairs
   * do not fit what is left of the bound gets none: its blocks and accesses are still built
   * (UP1-UP4 stay exact), the pairs of 2-blocks with it are undecided. */
  uint64_t cand = nurfw * (nurfw - (nurfw > 0)) / 2;
  int two_blocks = cand <= b->max_2blk - b->used_2blk;
  if (two_blocks) {
    b->used_2blk += cand;
  } else {
    char msg[300];
    snprintf(msg, sizeof msg, "max_2blocks=%" PRIu64 " reached: the transaction beginning at "
             "event %" PRIu64 " has %" PRIu64 " uninitialized reads and final writes, up to %"
             PRIu64 " 2-blocks, so its 2-blocks were not checked against other transactions "
             "(its blocks were)", b->max_2blk, un->begin_index, nurfw, cand);
    if ((rc = atom__block_undecided(b, msg))) return rc;
  }
  held_clear(&sc->h);
  sc->h.nodes = two_blocks;
  for (uint32_t p = 0; p < un->len; p++) {
    uint32_t k = rec_kind(&r[p]), x = r[p].target;
    if (k == REC_ACQUIRE) {
      if ((rc = held_push(b, &sc->h, x, p))) return rc;
      continue;
    }
    if (k == REC_RELEASE) {
      if ((rc = held_pop(b, &sc->h, x))) return rc;
      continue;
    }
    if (!shared_var(b, x)) continue;
    var_scan *v = &sc->v[x];
    atom__ls held, h12;
    if ((rc = held_now(b, &sc->h, &held))) return rc;
    uint32_t fw = k == REC_WRITE && v->fw == p;
    uint32_t ur = k == REC_READ && v->last_w == NONE32;
    uint32_t key[TUPLE_WORDS] = {TUPLE_ACCESS, site, x, 0, k | fw << 1 | ur << 2, held, 0, 0};
    if ((rc = add_tuple(b, key, u, p, NONE32))) return rc;
    /* B1(a): e1 is the last write of x before e2, else the last read. */
    uint32_t e1 = v->last_w != NONE32 ? v->last_w : v->last_r;
    if (e1 != NONE32) {
      uint32_t op1 = v->last_w != NONE32 ? REC_WRITE : REC_READ;
      uint32_t fw1 = op1 == REC_WRITE && v->fw == e1;
      if ((rc = held_since(b, &sc->h, e1, &h12))) return rc;
      uint32_t key2[TUPLE_WORDS] = {TUPLE_BLOCK, site, x, 0, op1 | k << 1 | fw1 << 2 | fw << 3,
                                 op1 == REC_WRITE ? v->held_w : v->held_r, held, h12};
      if ((rc = add_tuple(b, key2, u, e1, p))) return rc;
    }
    /* B1(b): the final write with the (first: it dominates, 000 §5.3) uninitialized read. */
    if (fw && v->first_ur != NONE32 && v->first_ur != e1) {
      if ((rc = held_since(b, &sc->h, v->first_ur, &h12))) return rc;
      uint32_t key2[TUPLE_WORDS] = {TUPLE_BLOCK, site, x, 0, REC_READ | REC_WRITE << 1 | 1u << 3,
                                 v->held_ur, held, h12};
      if ((rc = add_tuple(b, key2, u, v->first_ur, p))) return rc;
    }
    if (k == REC_WRITE) {
      v->last_w = p;
      v->held_w = held;
    } else {
      v->last_r = p;
      v->held_r = held;
      if (ur && v->first_ur == NONE32) {
        v->first_ur = p;
        v->held_ur = held;
      }
    }
    /* 2B1: the 2-blocks are the pairs of (first) uninitialized reads and final writes on
     * different variables; they are not stored (a long transaction has half a million), only
     * the events, with the node of the locks held at each (free_pairs.c makes the 2-blocks of
     * one variable at a time from them). */
    if (two_blocks && ((ur && v->first_ur == p) || fw)) {
      if (ATOM__GROW(b->mem, b->uf, b->uf_cap, b->uf_n + 1)) return ATOM_ENOMEM;
      b->uf[b->uf_n++] = (block_urfw){p, x, k, held, sc->h.n ? sc->h.e[sc->h.n - 1].node : NONE32};
    }
  }
  return 0;
}

int atom__block_build_tuples(block *b) {
  unit_scan sc;
  memset(&sc, 0, sizeof sc);
  int rc = 0;
  if (b->var_cap && !(sc.v = atom__mem_calloc(b->mem, b->var_cap, sizeof *sc.v))) return ATOM_ENOMEM;
  sc.vcap = b->var_cap;
  if (b->unit_n && !(b->uf_at = atom__mem_calloc(b->mem, b->unit_n + 1, sizeof *b->uf_at)))
    rc = ATOM_ENOMEM;
  else if (b->unit_n)
    b->uf_at_n = b->unit_n + 1;
  for (size_t u = 0; u < b->unit_n && !rc; u++) {
    b->uf_at[u] = b->uf_n;
    if (b->unit[u].len) rc = unit_tuples(b, &sc, (uint32_t)u);
  }
  if (b->uf_at) b->uf_at[b->unit_n] = b->uf_n;
  scan_free(b->mem, &sc);
  b->tuples_built = b->tup.n;
  return rc;
}
