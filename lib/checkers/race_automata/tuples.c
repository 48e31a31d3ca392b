/* race-automata's records (internal): pools of units, cells, groups and tuples addressed by
 * index, their hash indexes, and the lists that tie them together (race_automata.c tells what
 * each one means in 001 §3.2). */
#include <stddef.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/race_automata/race_automata.h"

/* ---- pools and hashes ---------------------------------------------------------------------- */

void atom__ra_pool_init(ra_pool *p, size_t elem, uint32_t max) {
  memset(p, 0, sizeof *p);
  p->elem = elem;
  p->free = NIL;
  p->max = max;
}


/* @return 0, ATOM_ENOMEM or ATOM_ELIMIT; the pool may move. */
int atom__ra_pool_take(race_automata *ra, ra_pool *p, uint32_t *out) {
  if (p->free != NIL) {
    *out = p->free;
    memcpy(&p->free, pool_at(p, p->free), sizeof p->free);
    return 0;
  }
  if (p->used >= p->max) return ATOM_ELIMIT;
  if (p->used == p->cap) {
    void *a = p->a;
    if (atom__grow(ra->mem, &a, &p->cap, (size_t)p->used + 1, p->elem)) return ATOM_ENOMEM;
    p->a = a;
  }
  *out = p->used++;
  return 0;
}

void atom__ra_pool_put(ra_pool *p, uint32_t i) {
  memcpy(pool_at(p, i), &p->free, sizeof p->free);
  p->free = i;
}

void atom__ra_pool_free(race_automata *ra, ra_pool *p) {
  atom__mem_free(ra->mem, p->a, p->cap * p->elem);
  p->a = NULL;
  p->cap = 0;
}



static inline uint64_t cell_hash(uint32_t unit, uint32_t var) {
  return atom__hash64(((uint64_t)unit << 32 | var) + 0x9e3779b97f4a7c15ULL);
}

static inline uint64_t tuple_hash(uint32_t u, uint32_t v, uint32_t l1, uint32_t l2) {
  return mix2((uint64_t)u << 32 | v, (uint64_t)l1 << 32 | l2);
}

int atom__ra_hash_init(race_automata *ra, ra_hash *h) {
  h->nb = 256;
  h->n = 0;
  h->b = atom__mem_alloc(ra->mem, h->nb * sizeof *h->b);
  if (!h->b) return ATOM_ENOMEM;
  memset(h->b, 0xff, h->nb * sizeof *h->b);
  return 0;
}

/* The hash of a record by its key, for hash_grow. */
static uint64_t cell_key_hash(const void *r) {
  const ra_cell *x = r;
  return cell_hash(x->unit, x->var);
}
static uint64_t tuple_key_hash(const void *r) {
  const ra_tuple *x = r;
  return tuple_hash(x->u, x->v, x->l1, x->l2);
}

/* Double the buckets of h (records in pool p, chained through the uint32_t at hnext_at, hashed
 * by key_hash) when the chains get long; a failure only leaves them longer. */
static void hash_grow(race_automata *ra, ra_hash *h, const ra_pool *p, size_t hnext_at,
                      uint64_t (*key_hash)(const void *)) {
  size_t nb = h->nb * 2;
  uint32_t *b = atom__mem_alloc(ra->mem, nb * sizeof *b);
  if (!b) return;
  memset(b, 0xff, nb * sizeof *b);
  for (size_t i = 0; i < h->nb; i++)
    for (uint32_t r = h->b[i], next; r != NIL; r = next) {
      unsigned char *x = pool_at(p, r);
      memcpy(&next, x + hnext_at, sizeof next);
      size_t j = (size_t)key_hash(x) & (nb - 1);
      memcpy(x + hnext_at, &b[j], sizeof b[j]);
      b[j] = r;
    }
  atom__mem_free(ra->mem, h->b, h->nb * sizeof *h->b);
  h->b = b;
  h->nb = nb;
}

uint32_t atom__ra_cell_find(const race_automata *ra, uint32_t unit, uint32_t var) {
  const ra_hash *h = &ra->hcells;
  uint32_t c = h->b[(size_t)cell_hash(unit, var) & (h->nb - 1)];
  while (c != NIL) {
    const ra_cell *x = CELL(c);
    if (x->unit == unit && x->var == var) return c;
    c = x->hnext;
  }
  return NIL;
}

uint32_t atom__ra_tuple_find(const race_automata *ra, uint32_t u, uint32_t v, uint32_t l1,
                             uint32_t l2) {
  const ra_hash *h = &ra->htuples;
  uint32_t t = h->b[(size_t)tuple_hash(u, v, l1, l2) & (h->nb - 1)];
  while (t != NIL) {
    const ra_tuple *x = TUPLE(t);
    if (x->u == u && x->v == v && x->l1 == l1 && x->l2 == l2) return t;
    t = x->hnext;
  }
  return NIL;
}

/* ---- units ----------------------------------------------------------------------------------- */

int atom__ra_unit_new(race_automata *ra, uint32_t thread, uint32_t flags, uint64_t index,
                      uint64_t loc, uint32_t *out) {
  int rc = atom__ra_pool_take(ra, &ra->units, out);
  if (rc) return rc;
  ra_unit *u = UNIT(*out);
  *u = (ra_unit){thread, flags, index, loc, 0, NIL};
  return 0;
}

void atom__ra_unit_unref(race_automata *ra, uint32_t i) {
  ra_unit *u = UNIT(i);
  if (--u->refs == 0 && (u->flags & UF_ENDED)) atom__ra_pool_put(&ra->units, i);
}

/* ---- lists ----------------------------------------------------------------------------------- */

/* Summaries of a variable and of a set, oldest change first. */
void atom__ra_vlist_unlink(race_automata *ra, uint32_t c) {
  ra_cell *x = CELL(c);
  ra_var *v = &ra->var[x->var];
  if (x->vprev != NIL) CELL(x->vprev)->vnext = x->vnext;
  else v->head = x->vnext;
  if (x->vnext != NIL) CELL(x->vnext)->vprev = x->vprev;
  else v->tail = x->vprev;
  x->vnext = x->vprev = NIL;
}

void atom__ra_vlist_append(race_automata *ra, uint32_t c) {
  ra_cell *x = CELL(c);
  ra_var *v = &ra->var[x->var];
  x->vprev = v->tail;
  x->vnext = NIL;
  if (v->tail != NIL) CELL(v->tail)->vnext = c;
  else v->head = c;
  v->tail = c;
}

static inline uint64_t group_hash(uint32_t unit, uint32_t set) {
  return atom__hash64(((uint64_t)set << 32 | unit) ^ 0x5851f42d4c957f2dULL);
}

static uint32_t group_find(const race_automata *ra, uint32_t unit, uint32_t set) {
  const ra_hash *h = &ra->hgroups;
  uint32_t g = h->b[(size_t)group_hash(unit, set) & (h->nb - 1)];
  while (g != NIL) {
    const ra_group *x = GROUP(g);
    if (x->unit == unit && x->set == set) return g;
    g = x->hnext;
  }
  return NIL;
}

static uint64_t group_key_hash(const void *r) {
  const ra_group *x = r;
  return group_hash(x->unit, x->set);
}

/* Put accessed cell c into its unit's group for var's set. @return 0 or an error (c stays out
 * of any group: it then takes no part in full tuples as a summary). */
int atom__ra_group_join(race_automata *ra, uint32_t c) {
  ra_cell *x = CELL(c);
  uint32_t unit = x->unit, set = ra->var[x->var].set;
  uint32_t g = group_find(ra, unit, set);
  if (g == NIL) {
    int rc = atom__ra_pool_take(ra, &ra->groups, &g);
    if (rc) return rc;
    ra_group *y = GROUP(g);
    *y = (ra_group){unit, set, NIL, NIL};
    ra_hash *h = &ra->hgroups;
    size_t b = (size_t)group_hash(unit, set) & (h->nb - 1);
    y->hnext = h->b[b];
    h->b[b] = g;
    if (++h->n > h->nb) hash_grow(ra, h, &ra->groups, offsetof(ra_group, hnext), group_key_hash);
  }
  ra_group *y = GROUP(g);
  x = CELL(c);
  x->group = g;
  x->gprev = NIL;
  x->gnext = y->head;
  if (y->head != NIL) CELL(y->head)->gprev = c;
  y->head = c;
  return 0;
}

void atom__ra_group_leave(race_automata *ra, uint32_t c) {
  ra_cell *x = CELL(c);
  uint32_t g = x->group;
  if (g == NIL) return;
  ra_group *y = GROUP(g);
  if (x->gprev != NIL) CELL(x->gprev)->gnext = x->gnext;
  else y->head = x->gnext;
  if (x->gnext != NIL) CELL(x->gnext)->gprev = x->gprev;
  x->group = x->gnext = x->gprev = NIL;
  if (y->head == NIL) {
    ra_hash *h = &ra->hgroups;
    uint32_t *q = &h->b[(size_t)group_hash(y->unit, y->set) & (h->nb - 1)];
    while (*q != g) q = &GROUP(*q)->hnext;
    *q = y->hnext;
    h->n--;
    atom__ra_pool_put(&ra->groups, g);
  }
}

/* Tuples that name (unit, var) at some position. */
void atom__ra_link_add(race_automata *ra, uint32_t c, uint32_t t, unsigned pos) {
  ra_cell *x = CELL(c);
  ra_tuple *y = TUPLE(t);
  uint32_t id = t * 4 + pos;
  y->next[pos] = x->tuples;
  y->prev[pos] = HEAD | c;
  if (x->tuples != NIL) TUPLE(x->tuples >> 2)->prev[x->tuples & 3] = id;
  x->tuples = id;
}

/* Unlink position pos of tuple t. @return the cell when t was its first tuple (only then can
 * the cell's list become empty), else NIL. */
uint32_t atom__ra_link_remove(race_automata *ra, uint32_t t, unsigned pos) {
  ra_tuple *y = TUPLE(t);
  uint32_t prev = y->prev[pos], next = y->next[pos], c = NIL;
  if (prev & HEAD) {
    c = prev & ~HEAD;
    CELL(c)->tuples = next;
  } else {
    TUPLE(prev >> 2)->next[prev & 3] = next;
  }
  if (next != NIL) TUPLE(next >> 2)->prev[next & 3] = prev;
  y->prev[pos] = y->next[pos] = NIL;
  return c;
}

/* ---- cells ----------------------------------------------------------------------------------- */

int atom__ra_cell_get(race_automata *ra, uint32_t unit, uint32_t var, uint32_t *out) {
  uint32_t c = atom__ra_cell_find(ra, unit, var);
  if (c != NIL) {
    *out = c;
    return 0;
  }
  int rc = atom__ra_pool_take(ra, &ra->cells, &c);
  if (rc) return rc;
  ra_cell *x = CELL(c);
  memset(x, 0, sizeof *x);
  x->unit = unit;
  x->var = var;
  x->vnext = x->vprev = x->group = x->gnext = x->gprev = NIL;
  x->tuples = NIL;
  for (int k = 0; k < 2; k++) x->first[k].index = x->last[k].index = NONE;
  ra_unit *u = UNIT(unit);
  x->uprev = NIL;
  x->unext = u->cells;
  if (u->cells != NIL) CELL(u->cells)->uprev = c;
  u->cells = c;
  u->refs++;
  ra_hash *h = &ra->hcells;
  size_t b = (size_t)cell_hash(unit, var) & (h->nb - 1);
  x->hnext = h->b[b];
  h->b[b] = c;
  if (++h->n > h->nb) hash_grow(ra, h, &ra->cells, offsetof(ra_cell, hnext), cell_key_hash);
  *out = c;
  return 0;
}

/* Free a cell that is in no summary list and anchors no tuple. */
void atom__ra_cell_free(race_automata *ra, uint32_t c) {
  ra_cell *x = CELL(c);
  ra_hash *h = &ra->hcells;
  uint32_t *p = &h->b[(size_t)cell_hash(x->unit, x->var) & (h->nb - 1)];
  while (*p != c) p = &CELL(*p)->hnext;
  *p = x->hnext;
  h->n--;
  ra_unit *u = UNIT(x->unit);
  if (x->uprev != NIL) CELL(x->uprev)->unext = x->unext;
  else u->cells = x->unext;
  if (x->unext != NIL) CELL(x->unext)->uprev = x->uprev;
  uint32_t unit = x->unit;
  atom__ra_pool_put(&ra->cells, c);
  atom__ra_unit_unref(ra, unit);
}

/* An anchor of a running unit that no longer anchors anything is not needed. (The cells of an
 * ending unit are freed by unit_end.) */
void atom__ra_cell_release_if_idle(race_automata *ra, uint32_t c) {
  ra_cell *x = CELL(c);
  if (!x->seen && x->tuples == NIL && !(UNIT(x->unit)->flags & UF_ENDED)) atom__ra_cell_free(ra, c);
}

/* ---- tuples ---------------------------------------------------------------------------------- */




void atom__ra_tuple_delete(race_automata *ra, uint32_t t) {
  ra_tuple *x;
  for (unsigned pos = 0; pos < 4; pos++) {
    if (TUPLE(t)->prev[pos] == NIL) continue;
    uint32_t c = atom__ra_link_remove(ra, t, pos);
    if (c != NIL) atom__ra_cell_release_if_idle(ra, c);
  }
  x = TUPLE(t);
  ra_hash *h = &ra->htuples;
  uint32_t *p = &h->b[(size_t)tuple_hash(x->u, x->v, x->l1, x->l2) & (h->nb - 1)];
  while (*p != t) p = &TUPLE(*p)->hnext;
  *p = x->hnext;
  h->n--;
  atom__ra_pool_put(is_full(x) ? &ra->fwit : &ra->pwit, x->wit);
  uint32_t u = x->u, v = x->v;
  atom__ra_pool_put(&ra->tuples, t);
  ra->n_tuples--;
  atom__ra_unit_unref(ra, u);
  atom__ra_unit_unref(ra, v);
}

unsigned atom__ra_ended_roles(race_automata *ra, const ra_tuple *x) {
  return ((UNIT(x->u)->flags & UF_ENDED) ? 1u : 0u) | ((UNIT(x->v)->flags & UF_ENDED) ? 2u : 0u);
}

/* Delete t if none of its automata can accept any more. While both units run it stays, even
 * when all of them have accepted: it must not be made again from its summary. */
void atom__ra_tuple_collect(race_automata *ra, uint32_t t) {
  ra_tuple *x = TUPLE(t);
  unsigned ended = atom__ra_ended_roles(ra, x);
  if (!ended) return;
  if (!atom__ra_can_accept(ra, x->word, is_full(x) ? DOUBLE : SINGLE, ended))
    atom__ra_tuple_delete(ra, t);
}

/* Enter tuple t (its u, v, l1, l2 set) in the tuple index. */
void atom__ra_tuple_index(race_automata *ra, uint32_t t) {
  ra_tuple *x = TUPLE(t);
  ra_hash *h = &ra->htuples;
  size_t b = (size_t)tuple_hash(x->u, x->v, x->l1, x->l2) & (h->nb - 1);
  x->hnext = h->b[b];
  h->b[b] = t;
  if (++h->n > h->nb) hash_grow(ra, h, &ra->tuples, offsetof(ra_tuple, hnext), tuple_key_hash);
}
