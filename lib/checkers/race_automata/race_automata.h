/* race-automata's state (internal to lib/checkers/race_automata/): the 14 patterns and their
 * automata as 3-bit fields of a word (patterns.c), the records held for units, cells, groups
 * and tuples and their indexes (tuples.c), and the event handling and reports that use them
 * (race_automata.c, whose opening comment tells the algorithm). */
#ifndef ATOM_CHECKERS_RACE_AUTOMATA_H
#define ATOM_CHECKERS_RACE_AUTOMATA_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/checker.h"
#include "support/idindex.h"
#include "support/mem.h"
#include "support/report_build.h"
#include "support/u64map.h"

#define NIL UINT32_MAX
/* Cell and tuple-list links: a link is tuple * 4 + position; the first link's prev names the
 * cell instead, flagged by HEAD. */
#define HEAD 0x80000000u
#define MAX_CELLS (HEAD - 2)
#define MAX_TUPLES (HEAD / 4 - 1)
#define MAX_UNITS (NIL - 1)

enum { NPAT = 14, NDESC = 8, MAXLEN = 4 };
enum { K_READ = 0, K_WRITE = 1 };
enum { POLICY_VAR, POLICY_ONE, POLICY_PREFIX }; /* sets=: the order of the choices */

/* An event of a pattern, seen from a tuple: role (0 = u, 1 = u'), location (0 = l1, or l for
 * patterns 1-5; 1 = l2), kind (0 = read, 1 = write). */
#define DESC(role, loc, kind) ((role) << 2 | (loc) << 1 | (kind))
enum {
  RU1 = DESC(0, 0, 0), WU1 = DESC(0, 0, 1), RU2 = DESC(0, 1, 0), WU2 = DESC(0, 1, 1),
  RV1 = DESC(1, 0, 0), WV1 = DESC(1, 0, 1), RV2 = DESC(1, 1, 0), WV2 = DESC(1, 1, 1)
};


/* A pattern of 001 Fig. 2: its events, and its meaning as a message template ({hN}, {vN}). */
typedef struct atom__ra_pattern {
  uint8_t len;
  uint8_t ev[MAXLEN];
  const char *what;
} atom__ra_pattern;

extern const atom__ra_pattern atom__ra_patterns[NPAT];
/* Field p of a state word: bits 3p..3p+2, the number of events of pattern p+1 matched. */
#define FIELD(p) ((uint64_t)1 << (3 * (p)))
#define ONES ((FIELD(NPAT) - 1) / 7) /* bit 0 of every field */
#define SINGLE ((FIELD(5) - 1) / 7)  /* patterns 1-5 */
#define DOUBLE (ONES & ~SINGLE)      /* patterns 6-14 */
#define MAXSLOTS 32                  /* >= n_fslots (17) */

/* One matched event: kept so that a report can name every event of the match. */
typedef struct ra_pos {
  uint64_t index;
  uint64_t loc;
} ra_pos;

enum { UF_UNARY = 1, UF_ENDED = 2 };

typedef struct ra_unit {
  uint32_t thread;
  uint32_t flags;
  uint64_t begin_index;
  uint64_t begin_loc;
  uint32_t refs;  /* its cells and the tuples naming it (and 1 while it runs) */
  uint32_t cells; /* its cells (through ra_cell.unext) */
} ra_unit;

#define NONE UINT64_MAX /* ra_pos.index of an event that did not happen */

/* The cell of (unit, var): the summary (unit,*,var,*) once the unit accessed var, and the anchor
 * of the tuples in which (unit, var) takes a role. */
typedef struct ra_cell {
  uint32_t unit, var;
  uint32_t unext, uprev; /* the unit's cells */
  uint32_t vnext, vprev; /* accessed cells of var, in order of last access */
  uint32_t group;        /* the unit's accessed cells in var's atomic set (NIL: none) */
  uint32_t gnext, gprev;
  uint32_t tuples; /* first link of the tuples that name (unit, var) */
  uint32_t seen;   /* bit k: the unit did an access of kind k to var; 0: only an anchor */
  uint32_t pad;
  uint64_t word;    /* 001 §3.2 Bits(u,*,l,*) */
  uint64_t stamp;   /* when word last changed (event index + 1) */
  uint64_t touched; /* when the unit last accessed var (event index + 1) */
  ra_pos first[2];  /* its first read / write: the first event of the patterns */
  ra_pos last[2];   /* its last read / write */
} ra_cell;

/* A tuple (u, u', l1, l2); l2 == NIL for (u,u',l,*). */
typedef struct ra_tuple {
  uint32_t u, v, l1, l2;
  uint64_t word;
  uint32_t next[4], prev[4]; /* cell lists: (u,l1), (u,l2), (u',l1), (u',l2) */
  uint32_t wit; /* its matched events (ra_pos[n_pslots or n_fslots]) */
} ra_tuple;

typedef struct ra_thread {
  uint32_t unit; /* unit of the open transaction, once it accessed something */
  uint32_t in_txn;
  uint64_t begin_index, begin_loc;
  atom__idindex cells; /* the cells of its running unit, by (unit, var) (tuples.c) */
} ra_thread;

typedef struct ra_var {
  uint32_t set; /* dense set id, or NIL: a set of its own */
  uint32_t resolved;
  uint32_t head, tail; /* accessed cells, in order of last access */
} ra_var;

/* The accessed cells of one unit in one atomic set. */
typedef struct ra_group {
  uint32_t unit, set;
  uint32_t head;
} ra_group;

/* A pool of fixed-size records addressed by index, with a free list through the first word. */
typedef struct ra_pool {
  unsigned char *a;
  size_t cap;  /* records */
  size_t elem; /* bytes per record */
  uint32_t used, free, max;
} ra_pool;

typedef struct race_automata {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int policy;

  /* Tables derived from the patterns (create()). */
  uint64_t adv[NDESC][MAXLEN]; /* fields whose automaton advances on descriptor d in state s */
  uint8_t need[NPAT][MAXLEN + 1]; /* roles (bit 0 u, bit 1 u') the remaining events need */
  uint8_t slot[NPAT][MAXLEN - 1]; /* where the event matched at each non-final position is kept */
  uint8_t first_slot[2];          /* slot of a pattern's first event, by kind */
  uint32_t n_pslots, n_fslots;    /* slots of a P tuple (l1-only prefixes), of a full tuple */

  ra_thread *th;
  size_t th_cap;
  ra_var *var;
  size_t var_cap;
  uint32_t n_sets;
  uint32_t one_set;        /* sets=one: the set of undeclared variables (NIL until used) */
  atom__u64map declared;   /* declared set key -> set id */

  ra_pool units, cells, groups, tuples, pwit, fwit;
  atom__idindex group_ix, tuple_ix; /* pool indices by key (tuples.c; cells: ra_thread) */
  uint64_t n_tuples;    /* P and full tuples held */
  uint64_t n_summaries; /* cells with a summary */

  atom__report_build rb; /* reused by every report */
  int err; /* first error of the current event */
} race_automata;


/* Advance the fields selected by `mask` on descriptor d: every field whose state is s and whose
 * pattern has d at position s moves to s + 1 (SWAR over the 14 fields). *inc gets the moved
 * fields (bit 0 of each). */
static inline uint64_t step(const race_automata *ra, uint64_t w, unsigned d, uint64_t mask,
                            uint64_t *inc) {
  uint64_t hit = 0;
  for (unsigned s = 0; s < MAXLEN; s++) {
    uint64_t x = w ^ (s * ONES);
    hit |= ~(x | x >> 1 | x >> 2) & ra->adv[d][s];
  }
  hit &= mask;
  *inc = hit;
  return w + hit;
}

static inline unsigned state_of(uint64_t w, int p) { return (unsigned)(w >> (3 * p)) & 7u; }

static inline void *pool_at(const ra_pool *p, uint32_t i) { return p->a + (size_t)i * p->elem; }

#define UNIT(i) ((ra_unit *)pool_at(&ra->units, (i)))
#define CELL(i) ((ra_cell *)pool_at(&ra->cells, (i)))
#define TUPLE(i) ((ra_tuple *)pool_at(&ra->tuples, (i)))
#define GROUP(i) ((ra_group *)pool_at(&ra->groups, (i)))

static inline uint64_t mix2(uint64_t a, uint64_t b) { return atom__hash64(a ^ atom__hash64(b)); }

static inline int is_full(const ra_tuple *x) { return x->l2 != NIL; }

static inline ra_pos *wit_of(race_automata *ra, const ra_tuple *x) {
  return is_full(x) ? (ra_pos *)pool_at(&ra->fwit, x->wit) : (ra_pos *)pool_at(&ra->pwit, x->wit);
}

static inline const ra_pos *wit_of_const(const race_automata *ra, const ra_tuple *x) {
  return (const ra_pos *)pool_at(is_full(x) ? &ra->fwit : &ra->pwit, x->wit);
}

/* patterns.c */
void atom__ra_build_tables(race_automata *ra);
int atom__ra_can_accept(const race_automata *ra, uint64_t word, uint64_t mask, unsigned ended);

/* tuples.c */
void atom__ra_pool_init(ra_pool *p, size_t elem, uint32_t max);
int atom__ra_pool_take(race_automata *ra, ra_pool *p, uint32_t *out);
void atom__ra_pool_put(ra_pool *p, uint32_t i);
void atom__ra_pool_free(race_automata *ra, ra_pool *p);
uint32_t atom__ra_cell_find(const race_automata *ra, uint32_t unit, uint32_t var);
uint32_t atom__ra_tuple_find(const race_automata *ra, uint32_t u, uint32_t v, uint32_t l1,
                             uint32_t l2, atom__idindex_probe *p);
int atom__ra_unit_new(race_automata *ra, uint32_t thread, uint32_t flags, uint64_t index,
                      uint64_t loc, uint32_t *out);
void atom__ra_unit_unref(race_automata *ra, uint32_t i);
void atom__ra_vlist_unlink(race_automata *ra, uint32_t c);
void atom__ra_vlist_append(race_automata *ra, uint32_t c);
int atom__ra_group_join(race_automata *ra, uint32_t c);
void atom__ra_group_leave(race_automata *ra, uint32_t c);
void atom__ra_link_add(race_automata *ra, uint32_t c, uint32_t t, unsigned pos);
uint32_t atom__ra_link_remove(race_automata *ra, uint32_t t, unsigned pos);
int atom__ra_cell_get(race_automata *ra, uint32_t unit, uint32_t var, uint32_t *out);
void atom__ra_cell_free(race_automata *ra, uint32_t c, int unindex);
int atom__ra_cells_unindex_all(race_automata *ra, uint32_t unit, size_t n);
void atom__ra_cell_release_if_idle(race_automata *ra, uint32_t c);
void atom__ra_tuple_delete(race_automata *ra, uint32_t t);
unsigned atom__ra_ended_roles(race_automata *ra, const ra_tuple *x);
void atom__ra_tuple_collect(race_automata *ra, uint32_t t);
int atom__ra_tuple_index(race_automata *ra, uint32_t t, const atom__idindex_probe *p);

#endif
