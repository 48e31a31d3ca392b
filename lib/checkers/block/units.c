/* block: what the analysis asks of units -- the fork/join relation of two units, their
 * witness events, the locks each uses or keeps, and sites (units told apart by what the pair
 * analysis sees, so that a loop costs one site). */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"

/* Fork/join relation of units u and v (004 §7.4 periods): PAIR_ORDERED when one ends before the
 * other starts in every schedule, PAIR_FREE when no event of one must precede an event of the
 * other, PAIR_FORWARD when some event of u must precede some event of v (but not all of u all of v),
 * PAIR_BACKWARD the converse, PAIR_NESTED both. */
int atom__block_relation(const block *b, const block_unit *u, const block_unit *v) {
  if (u->thread == v->thread) return PAIR_SAME_THREAD;
  const atom__periods *ps = &b->periods;
  if (atom__periods_before(ps, u->plast, v->pfirst) || atom__periods_before(ps, v->plast, u->pfirst))
    return PAIR_ORDERED;
  int fwd = atom__periods_before(ps, u->pfirst, v->plast);
  int bwd = atom__periods_before(ps, v->pfirst, u->plast);
  /* A unit that keeps a lock for good forces every other unit that takes the lock to do so
   * before it (any other schedule deadlocks; 004 §2 counts only complete schedules). */
  if (u->forever != ATOM__LS_EMPTY && !atom__ls_disjoint(&b->ls, u->forever, v->used)) bwd = 1;
  if (v->forever != ATOM__LS_EMPTY && !atom__ls_disjoint(&b->ls, v->forever, u->used)) fwd = 1;
  return fwd && bwd ? PAIR_NESTED : fwd ? PAIR_FORWARD : bwd ? PAIR_BACKWARD : PAIR_FREE;
}

/* The locks each unit acquires, and those a unit still open at the end keeps for good (a unit
 * starts holding none, so they are the ones it acquired and did not release). */
int atom__block_unit_locks(block *b) {
  size_t nl = (size_t)b->nlocks + 1;
  uint32_t *stamp = NULL, *used = NULL, *kept = NULL;
  int rc = 0;
  if (!(stamp = atom__mem_calloc(b->mem, nl, sizeof *stamp)) ||
      !(used = atom__mem_alloc(b->mem, nl * sizeof *used)) ||
      !(kept = atom__mem_alloc(b->mem, nl * sizeof *kept))) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  for (size_t u = 0; u < b->unit_n && !rc; u++) {
    block_unit *un = &b->unit[u];
    const block_record *r = unit_log(b, un);
    const uint32_t st = 1; /* stamp[l]: 1 used in the unit, 2 held now; reset after the unit */
    size_t nu = 0, nk = 0;
    for (uint32_t p = 0; p < un->len; p++) {
      uint32_t k = rec_kind(&r[p]), l = r[p].target;
      if (k == REC_ACQUIRE) {
        if (stamp[l] != st && stamp[l] != st + 1) used[nu++] = l;
        stamp[l] = st + 1;
      } else if (k == REC_RELEASE && stamp[l] == st + 1) {
        stamp[l] = st;
      }
    }
    if (un->unary & 2u)
      for (size_t i = 0; i < nu; i++)
        if (stamp[used[i]] == st + 1) kept[nk++] = used[i];
    for (size_t i = 0; i < nu; i++) stamp[used[i]] = 0;
    if (atom__ls_make(&b->ls, used, nu, &un->used) || atom__ls_make(&b->ls, kept, nk, &un->forever))
      rc = ATOM_ENOMEM;
  }
out:
  atom__mem_free(b->mem, stamp, nl * sizeof *stamp);
  atom__mem_free(b->mem, used, nl * sizeof *used);
  atom__mem_free(b->mem, kept, nl * sizeof *kept);
  return rc;
}

int atom__block_build_sites(block *b) {
  for (size_t u = 0; u < b->unit_n; u++) {
    block_unit *un = &b->unit[u];
    uint32_t key[SITE_WORDS] = {un->thread, un->pfirst, un->plast, un->unary,
                             (uint32_t)un->begin_loc, (uint32_t)(un->begin_loc >> 32), un->used,
                             un->forever};
    uint32_t s;
    int added, rc = atom__block_keyset_add(b->mem, &b->sites, key, &s, &added);
    if (rc) return rc;
    if (added) {
      if (ATOM__GROW(b->mem, b->site_rep, b->site_rep_cap, (size_t)s + 1)) return ATOM_ENOMEM;
      b->site_rep[s] = (uint32_t)u;
    }
    un->site = s;
  }
  if (b->sites.n && ATOM__GROW(b->mem, b->site_bad, b->site_bad_cap, b->sites.n)) return ATOM_ENOMEM;
  if (b->unit_n && ATOM__GROW(b->mem, b->unit_bad, b->unit_bad_cap, b->unit_n)) return ATOM_ENOMEM;
  return 0;
}
