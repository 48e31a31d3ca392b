/* reduction, lockset=precise (000 Thm 4.3): the race analysis over access classes. */
#include <string.h>

#include "atomicity/error.h"
#include "checkers/reduction/reduction.h"

/* 000 Thm 4.3, per class: a class is racy if a class of another thread accesses the same
 * variable, one of them writes, their held locksets are disjoint, and their segments are not
 * ordered by happens-before. */
int atom__reduction_race_analysis(reduction *r) {
  uint32_t nvar = 0;
  r->work = 0; /* a retry after running out of memory starts over */
  r->vars_cut = 0;
  for (size_t k = 0; k < r->nkey; k++)
    if (r->key[k].var + 1 > nvar) nvar = r->key[k].var + 1;
  size_t *start = atom__mem_calloc(r->mem, (size_t)nvar + 1, sizeof *start);
  uint32_t *order = atom__mem_calloc(r->mem, r->nkey ? r->nkey : 1, sizeof *order);
  if (!start || !order) {
    atom__mem_free(r->mem, start, ((size_t)nvar + 1) * sizeof *start);
    atom__mem_free(r->mem, order, (r->nkey ? r->nkey : 1) * sizeof *order);
    return ATOM_ENOMEM;
  }
  for (size_t k = 0; k < r->nkey; k++) start[r->key[k].var + 1]++;
  for (uint32_t x = 0; x < nvar; x++) start[x + 1] += start[x];
  for (size_t k = 0; k < r->nkey; k++) {
    access_class *key = &r->key[k];
    key->racy = 0;
    key->partner = NONE;
    order[start[key->var]++] = (uint32_t)k;
  }
  /* start[x] is now the end of x's group (and the beginning of x+1's) */
  size_t lo = 0;
  for (uint32_t x = 0; x < nvar; x++) {
    size_t hi = start[x];
    const uint32_t *g = order + lo;
    size_t n = hi - lo;
    lo = hi;
    if (n < 2) continue;
    int writes = 0, threads = 0;
    for (size_t i = 0; i < n; i++) {
      writes |= (int)r->key[g[i]].write;
      threads |= r->key[g[i]].thread != r->key[g[0]].thread;
    }
    if (!writes || !threads) continue;
    /* A lock held at every access of x: no race at all (000 Thm 4.4 implies Thm 4.3). */
    atom__ls ls0 = r->key[g[0]].ls;
    const uint32_t *l0 = atom__ls_elems(&r->ls, ls0);
    int common = 0;
    for (uint32_t j = 0; j < atom__ls_size(&r->ls, ls0) && !common; j++) {
      size_t i = 1;
      while (i < n && atom__ls_contains(&r->ls, r->key[g[i]].ls, l0[j])) i++;
      common = i == n;
    }
    if (common) continue;
    if (r->work >= r->max_work) { /* the bound was reached on an earlier variable */
      r->vars_cut++;
      continue;
    }
    /* left: classes not yet racy; once none is, no comparison can change anything */
    size_t left = n;
    for (size_t i = 0; i < n && left; i++) {
      access_class *a = &r->key[g[i]];
      for (size_t j = i + 1; j < n; j++) {
        access_class *b = &r->key[g[j]];
        if (a->racy && b->racy) continue;
        if (++r->work > r->max_work) break;
        /* progress: the classes of the variables before this one, of classes + transactions */
        if ((r->work & 4095) == 0)
          (void)atom_env_progress(r->env, lo - n, (uint64_t)r->nkey + r->ntxn);
        if (a->thread == b->thread || !(a->write || b->write)) continue;
        if (!atom__ls_disjoint(&r->ls, a->ls, b->ls) || seg_ordered(r, a, b)) continue;
        if (!a->racy) {
          a->racy = 1;
          a->partner = g[j];
          left--;
        }
        if (!b->racy) {
          b->racy = 1;
          b->partner = g[i];
          left--;
        }
        if (!left) break;
      }
      if (r->work > r->max_work) {
        r->work = r->max_work;
        r->vars_cut++;
        break;
      }
    }
  }
  atom__mem_free(r->mem, start, ((size_t)nvar + 1) * sizeof *start);
  atom__mem_free(r->mem, order, (r->nkey ? r->nkey : 1) * sizeof *order);
  return 0;
}
