/* race-automata's records (internal): pools of units, cells, groups and tuples addressed by
 * index, their indexes, and the lists that tie them together (race_automata.c tells what
 * each one means in 001 §3.2). */
#include <stddef.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/race_automata/race_automata.h"
#include "support/assert.h"

/* ---- pools and indexes ---------------------------------------------------------------------- */

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



/* The indexes (cells by (unit, var), groups by (unit, set), tuples by (u, u', l1, l2)) are
 * support/idindex: the keys stay in the records, compared here.
 *
 * Only running units have cells (a unit's end frees them all), and a thread runs one unit at a
 * time: so the cells are indexed per thread, and a unit's end empties its thread's index at
 * once (atom__ra_cells_unindex_all) instead of removing cell after cell, which made up most of
 * the cost of the index. */

/* One multiply is enough for the small per-thread indexes of cells (the index folds the high
 * half into the low one). */
static inline uint64_t cell_hash(uint32_t unit, uint32_t var) {
  return ((uint64_t)unit << 32 | var) * 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t group_hash(uint32_t unit, uint32_t set) {
  return atom__hash64(((uint64_t)set << 32 | unit) ^ 0x5851f42d4c957f2dULL);
}

static inline uint64_t tuple_hash(uint32_t u, uint32_t v, uint32_t l1, uint32_t l2) {
  return mix2((uint64_t)u << 32 | v, (uint64_t)l1 << 32 | l2);
}

/* The cell of (unit, var), or NIL; *p ends where the cell would be added. */
static inline atom__idindex *cell_index(const race_automata *ra, uint32_t unit) {
  return &ra->th[UNIT(unit)->thread].cells;
}

static uint32_t cell_probe(const race_automata *ra, uint32_t unit, uint32_t var,
                           atom__idindex_probe *p) {
  const atom__idindex *ix = cell_index(ra, unit);
  atom__idindex_start(ix, cell_hash(unit, var), p);
  for (uint32_t c; (c = atom__idindex_next(ix, p)) != ATOM__IDINDEX_END;) {
    const ra_cell *x = CELL(c);
    if (x->unit == unit && x->var == var) return c;
  }
  return NIL;
}

uint32_t atom__ra_cell_find(const race_automata *ra, uint32_t unit, uint32_t var) {
  atom__idindex_probe p;
  return cell_probe(ra, unit, var, &p);
}

static uint32_t tuple_probe(const race_automata *ra, uint32_t u, uint32_t v, uint32_t l1,
                            uint32_t l2, atom__idindex_probe *p) {
  atom__idindex_start(&ra->tuple_ix, tuple_hash(u, v, l1, l2), p);
  for (uint32_t t; (t = atom__idindex_next(&ra->tuple_ix, p)) != ATOM__IDINDEX_END;) {
    const ra_tuple *x = TUPLE(t);
    if (x->u == u && x->v == v && x->l1 == l1 && x->l2 == l2) return t;
  }
  return NIL;
}

uint32_t atom__ra_tuple_find(const race_automata *ra, uint32_t u, uint32_t v, uint32_t l1,
                             uint32_t l2, atom__idindex_probe *p) {
  atom__idindex_probe local;
  return tuple_probe(ra, u, v, l1, l2, p ? p : &local);
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

static uint32_t group_probe(const race_automata *ra, uint32_t unit, uint32_t set,
                            atom__idindex_probe *p) {
  atom__idindex_start(&ra->group_ix, group_hash(unit, set), p);
  for (uint32_t g; (g = atom__idindex_next(&ra->group_ix, p)) != ATOM__IDINDEX_END;) {
    const ra_group *x = GROUP(g);
    if (x->unit == unit && x->set == set) return g;
  }
  return NIL;
}

/* Put accessed cell c into its unit's group for var's set. @return 0 or an error (c stays out
 * of any group: it then takes no part in full tuples as a summary). */
int atom__ra_group_join(race_automata *ra, uint32_t c) {
  ra_cell *x = CELL(c);
  uint32_t unit = x->unit, set = ra->var[x->var].set;
  atom__idindex_probe p;
  uint32_t g = group_probe(ra, unit, set, &p);
  if (g == NIL) {
    int rc = atom__ra_pool_take(ra, &ra->groups, &g);
    if (rc) return rc;
    if ((rc = atom__idindex_add(&ra->group_ix, ra->mem, &p, g))) {
      atom__ra_pool_put(&ra->groups, g);
      return rc;
    }
    *GROUP(g) = (ra_group){unit, set, NIL};
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
    atom__idindex_remove(&ra->group_ix, group_hash(y->unit, y->set), g);
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
  atom__idindex_probe p;
  uint32_t c = cell_probe(ra, unit, var, &p);
  if (c != NIL) {
    *out = c;
    return 0;
  }
  int rc = atom__ra_pool_take(ra, &ra->cells, &c);
  if (rc) return rc;
  if ((rc = atom__idindex_add(cell_index(ra, unit), ra->mem, &p, c))) {
    atom__ra_pool_put(&ra->cells, c);
    return rc;
  }
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
  *out = c;
  return 0;
}

/* Free a cell that is in no summary list and anchors no tuple; `unindex`: remove it from its
 * thread's index too (0: atom__ra_cells_unindex_all does it). */
void atom__ra_cell_free(race_automata *ra, uint32_t c, int unindex) {
  ra_cell *x = CELL(c);
  if (unindex) atom__idindex_remove(cell_index(ra, x->unit), cell_hash(x->unit, x->var), c);
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
  if (!x->seen && x->tuples == NIL && !(UNIT(x->unit)->flags & UF_ENDED))
    atom__ra_cell_free(ra, c, 1);
}

/* Take the n cells of unit, which ends, out of its thread's index. When they are all it holds
 * (the rule: see above) and the slots are few, the index is emptied in one go; the caller then
 * frees the cells with atom__ra_cell_free(..., 0). @return whether it did (else the caller
 * frees them with unindex = 1). */
int atom__ra_cells_unindex_all(race_automata *ra, uint32_t unit, size_t n) {
  atom__idindex *ix = cell_index(ra, unit);
  if (ix->count != n || ix->cap > 32 * n) return 0; /* clearing costs the capacity */
  atom__idindex_clear(ix);
  return 1;
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
  atom__idindex_remove(&ra->tuple_ix, tuple_hash(x->u, x->v, x->l1, x->l2), t);
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

/* Enter tuple t in the tuple index where the probe p of atom__ra_tuple_find ended, its key
 * being absent then; the caller may have changed anything but the tuple index since (handing
 * the probe over spares looking the key up twice on every new tuple). @return 0 or
 * ATOM_ENOMEM (not entered). */
int atom__ra_tuple_index(race_automata *ra, uint32_t t, const atom__idindex_probe *p) {
  return atom__idindex_add(&ra->tuple_ix, ra->mem, p, t);
}
