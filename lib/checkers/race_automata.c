/* race-automata: atomic-set serializability by the race automata of 001 (Hammer, Dolby, Vaziri,
 * Tip, ICSE 2008).
 *
 * 001 §3 Def. 1: an execution has a violation when, for units of work u, u' of different threads
 * and locations l1, l2 of one atomic set (l1 != l2, or a single location l), the events of one of
 * the 14 patterns of Fig. 2 occur in that order. Units are the outermost transactions; an access
 * outside every transaction is a unit of its own, which can only play u' (u has two events or
 * more in every pattern).
 *
 * 001 §3.1: one automaton per pattern and tuple (u, u', l1, l2) advances when the next event of
 * its pattern arrives; greedy advancing decides "is a subsequence", so reaching the accept state
 * is exactly a match, and it happens at the match's last event (the report is online).
 *
 * 001 §3.2: the 14 automata of a tuple are 3-bit fields of one 64-bit word, and a tuple is only
 * held once it knows more than the summaries it is refined from:
 *   - a *summary* S = (u,*,l,*) lives in the cell of (u, l) from u's first access to l: the
 *     automata as driven by u's own events on l (only the first event of a pattern is u's before
 *     u' appears, so S records whether, and first when, u read and wrote l);
 *   - a tuple P = (u,u',l,*) holds patterns 1-5 on l, and the prefixes on l1 = l of patterns
 *     6-14; it is refined from S at the first event of u' on l that advances it (until then it
 *     would equal S: only u's events on l move it, and they move S alike);
 *   - a full tuple (u,u',l1,l2) holds patterns 6-14. Below their third event (fourth for 6, 9,
 *     11) its automata are a function of S(u,l1), P(u,u',l1) and the cell of (u',l2): the only
 *     event of those prefixes not seen by the summaries is an access of u' to l2 after a known
 *     time, and "u' accessed l2 after t" is "u's last access to l2 is after t" (the cell keeps
 *     the last read and write). So it is refined at the event that takes one of its automata
 *     past that: an event of u' on l1 (third event of 7, 10, 12), an event of u on l2 (third of
 *     8, 13, 14, last of 6, 9, 11), or the end of u' while 6, 9 or 11 waits for u alone.
 * The U x U x L x L space is never built: P and full tuples exist only for pairs of units that
 * interleave on the locations concerned.
 *
 * 001 §3.2 GC: when a unit ends, its summaries go (nothing can complete without a later event of
 * u), and so does every tuple none of whose automata can still accept (each automaton knows which
 * roles its remaining events need); in particular every tuple whose two units have ended.
 *
 * Finding what an event refines: the cells of a variable are kept in order of last access, and
 * the cell of (U, l) remembers when U last read and wrote l, so the refinement of P tuples looks
 * only at summaries that changed since U's last access of the same kind to l (older ones were
 * considered then, with the same outcome); full tuples pair the cells of the variable with the
 * current unit's cells in the same atomic set. */
#include <inttypes.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "support/msgbuf.h"
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
enum { POLICY_VAR, POLICY_ONE, POLICY_PREFIX };

/* An event of a pattern, seen from a tuple: role (0 = u, 1 = u'), location (0 = l1, or l for
 * patterns 1-5; 1 = l2), kind (0 = read, 1 = write). */
#define DESC(role, loc, kind) ((role) << 2 | (loc) << 1 | (kind))
enum {
  RU1 = DESC(0, 0, 0), WU1 = DESC(0, 0, 1), RU2 = DESC(0, 1, 0), WU2 = DESC(0, 1, 1),
  RV1 = DESC(1, 0, 0), WV1 = DESC(1, 0, 1), RV2 = DESC(1, 1, 0), WV2 = DESC(1, 1, 1)
};

/* 001 Fig. 2; `what` is the pattern's meaning as a message template ({hN}, {vN}). */
static const struct {
  uint8_t len;
  uint8_t ev[MAXLEN];
  const char *what;
} patterns[NPAT] = {
    {3, {RU1, WV1, WU1}, "{h0} updated {v0} from a value that was already stale"},
    {3, {RU1, WV1, RU1}, "{h0}'s two reads of {v0} saw different values"},
    {3, {WU1, RV1, WU1}, "{h1} saw {v0} halfway through {h0}'s update"},
    {3, {WU1, WV1, RU1}, "{h0} did not read back the value it wrote to {v0}"},
    {3, {WU1, WV1, WU1}, "{h1}'s write to {v0} was lost"},
    {4, {WU1, WV1, WV2, WU2}, "{v0} and {v1} were left holding values of different transactions"},
    {4, {WU1, WV2, WV1, WU2}, "{v0} and {v1} were left holding values of different transactions"},
    {4, {WU1, WV2, WU2, WV1}, "{v0} and {v1} were left holding values of different transactions"},
    {4, {WU1, RV1, RV2, WU2}, "{h1} saw {v0} and {v1} halfway through {h0}'s update"},
    {4, {WU1, RV2, RV1, WU2}, "{h1} saw {v0} and {v1} halfway through {h0}'s update"},
    {4, {RU1, WV1, WV2, RU2}, "{h0} read {v0} and {v1} from two different states"},
    {4, {RU1, WV2, WV1, RU2}, "{h0} read {v0} and {v1} from two different states"},
    {4, {RU1, WV2, RU2, WV1}, "{h0} read {v0} and {v1} from two different states"},
    {4, {WU1, RV2, WU2, RV1}, "{h1} saw {v0} and {v1} halfway through {h0}'s update"},
};

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
  uint32_t hnext;        /* hash chain */
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
  uint32_t hnext;
  uint32_t wit; /* its matched events (ra_pos[n_pslots or n_fslots]) */
} ra_tuple;

typedef struct ra_thread {
  uint32_t unit; /* unit of the open transaction, once it accessed something */
  uint32_t in_txn;
  uint64_t begin_index, begin_loc;
} ra_thread;

typedef struct ra_var {
  uint32_t set; /* dense set id, or NIL: a set of its own */
  uint32_t resolved;
  uint32_t head, tail; /* accessed cells, in order of last access */
} ra_var;

typedef struct ra_set {
  char *prefix; /* sets=prefix: the name prefix; NULL otherwise */
} ra_set;

/* The accessed cells of one unit in one atomic set. */
typedef struct ra_group {
  uint32_t unit, set;
  uint32_t head;
  uint32_t hnext;
} ra_group;

/* A pool of fixed-size records addressed by index, with a free list through the first word. */
typedef struct ra_pool {
  unsigned char *a;
  size_t cap;  /* records */
  size_t elem; /* bytes per record */
  uint32_t used, free, max;
} ra_pool;

/* Chained hash of pool indices. */
typedef struct ra_hash {
  uint32_t *b;
  size_t nb; /* power of two */
  size_t n;
} ra_hash;

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
  ra_set *set;
  size_t set_cap;
  uint32_t n_sets;
  uint32_t one_set;        /* sets=one: the set of undeclared variables (NIL until used) */
  atom__u64map declared;   /* declared set key -> set id */
  atom__u64map prefixes;   /* hash of a prefix (+ probe) -> set id */

  ra_pool units, cells, groups, tuples, pwit, fwit;
  ra_hash hcells, hgroups, htuples;
  uint64_t n_tuples;    /* P and full tuples held */
  uint64_t n_summaries; /* cells with a summary */

  int err; /* first error of the current event */
} race_automata;

/* ---- tables ---------------------------------------------------------------------------------- */

static int same_prefix(int p, int q, int n) {
  for (int i = 0; i < n; i++)
    if (patterns[p].ev[i] != patterns[q].ev[i]) return 0;
  return 1;
}

static int l1_only(int p, int n) {
  for (int i = 0; i < n; i++)
    if (patterns[p].ev[i] & DESC(0, 1, 0)) return 0;
  return 1;
}

static void build_tables(race_automata *ra) {
  memset(ra->adv, 0, sizeof ra->adv);
  for (int p = 0; p < NPAT; p++) {
    for (int s = 0; s < patterns[p].len; s++) ra->adv[patterns[p].ev[s]][s] |= FIELD(p);
    for (int s = 0; s <= patterns[p].len; s++) {
      uint8_t m = 0;
      for (int i = s; i < patterns[p].len; i++) m |= (uint8_t)(1u << (patterns[p].ev[i] >> 2));
      ra->need[p][s] = m;
    }
  }
  /* Patterns with the same first n events match them at the same events (greedy matching is
   * deterministic), so they share the slots of that prefix. Prefixes on l1 alone come first:
   * they are all a (u,u',l,*) tuple can match. */
  memset(ra->slot, 0xff, sizeof ra->slot);
  uint32_t n = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int len = 1; len < MAXLEN; len++)
      for (int p = 0; p < NPAT; p++) {
        if (len >= patterns[p].len || ra->slot[p][len - 1] != 0xff) continue;
        if (pass == 0 && !l1_only(p, len)) continue;
        for (int q = p; q < NPAT; q++)
          if (len < patterns[q].len && same_prefix(p, q, len)) ra->slot[q][len - 1] = (uint8_t)n;
        n++;
      }
    if (pass == 0) ra->n_pslots = n;
  }
  ra->n_fslots = n;
  for (int p = 0; p < NPAT; p++) ra->first_slot[patterns[p].ev[0] & 1] = ra->slot[p][0];
}

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

/* Can some automaton of `word` among `mask` still accept, given the roles that have ended
 * (bit 0 u, bit 1 u')? Accepted automata have been reported and count as done. */
static int can_accept(const race_automata *ra, uint64_t word, uint64_t mask, unsigned ended) {
  for (int p = 0; p < NPAT; p++) {
    if (!(mask & FIELD(p))) continue;
    unsigned s = state_of(word, p);
    if (s < patterns[p].len && !(ra->need[p][s] & ended)) return 1;
  }
  return 0;
}

/* ---- pools and hashes ---------------------------------------------------------------------- */

static void pool_init(ra_pool *p, size_t elem, uint32_t max) {
  memset(p, 0, sizeof *p);
  p->elem = elem;
  p->free = NIL;
  p->max = max;
}

static inline void *pool_at(const ra_pool *p, uint32_t i) { return p->a + (size_t)i * p->elem; }

/* @return 0, ATOM_ENOMEM or ATOM_ELIMIT; the pool may move. */
static int pool_take(race_automata *ra, ra_pool *p, uint32_t *out) {
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

static void pool_put(ra_pool *p, uint32_t i) {
  memcpy(pool_at(p, i), &p->free, sizeof p->free);
  p->free = i;
}

static void pool_free(race_automata *ra, ra_pool *p) {
  atom__mem_free(ra->mem, p->a, p->cap * p->elem);
  p->a = NULL;
  p->cap = 0;
}

#define UNIT(i) ((ra_unit *)pool_at(&ra->units, (i)))
#define CELL(i) ((ra_cell *)pool_at(&ra->cells, (i)))
#define TUPLE(i) ((ra_tuple *)pool_at(&ra->tuples, (i)))
#define GROUP(i) ((ra_group *)pool_at(&ra->groups, (i)))

static inline uint64_t mix2(uint64_t a, uint64_t b) { return atom__hash64(a ^ atom__hash64(b)); }

static inline uint64_t cell_hash(uint32_t unit, uint32_t var) {
  return atom__hash64(((uint64_t)unit << 32 | var) + 0x9e3779b97f4a7c15ULL);
}

static inline uint64_t tuple_hash(uint32_t u, uint32_t v, uint32_t l1, uint32_t l2) {
  return mix2((uint64_t)u << 32 | v, (uint64_t)l1 << 32 | l2);
}

static int hash_init(race_automata *ra, ra_hash *h) {
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

static uint32_t cell_find(const race_automata *ra, uint32_t unit, uint32_t var) {
  const ra_hash *h = &ra->hcells;
  uint32_t c = h->b[(size_t)cell_hash(unit, var) & (h->nb - 1)];
  while (c != NIL) {
    const ra_cell *x = CELL(c);
    if (x->unit == unit && x->var == var) return c;
    c = x->hnext;
  }
  return NIL;
}

static uint32_t tuple_find(const race_automata *ra, uint32_t u, uint32_t v, uint32_t l1,
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

static int unit_new(race_automata *ra, uint32_t thread, uint32_t flags, uint64_t index,
                    uint64_t loc, uint32_t *out) {
  int rc = pool_take(ra, &ra->units, out);
  if (rc) return rc;
  ra_unit *u = UNIT(*out);
  *u = (ra_unit){thread, flags, index, loc, 0, NIL};
  return 0;
}

static void unit_unref(race_automata *ra, uint32_t i) {
  ra_unit *u = UNIT(i);
  if (--u->refs == 0 && (u->flags & UF_ENDED)) pool_put(&ra->units, i);
}

/* ---- lists ----------------------------------------------------------------------------------- */

/* Summaries of a variable and of a set, oldest change first. */
static void vlist_unlink(race_automata *ra, uint32_t c) {
  ra_cell *x = CELL(c);
  ra_var *v = &ra->var[x->var];
  if (x->vprev != NIL) CELL(x->vprev)->vnext = x->vnext;
  else v->head = x->vnext;
  if (x->vnext != NIL) CELL(x->vnext)->vprev = x->vprev;
  else v->tail = x->vprev;
  x->vnext = x->vprev = NIL;
}

static void vlist_append(race_automata *ra, uint32_t c) {
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
static int group_join(race_automata *ra, uint32_t c) {
  ra_cell *x = CELL(c);
  uint32_t unit = x->unit, set = ra->var[x->var].set;
  uint32_t g = group_find(ra, unit, set);
  if (g == NIL) {
    int rc = pool_take(ra, &ra->groups, &g);
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

static void group_leave(race_automata *ra, uint32_t c) {
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
    pool_put(&ra->groups, g);
  }
}

/* Tuples that name (unit, var) at some position. */
static void link_add(race_automata *ra, uint32_t c, uint32_t t, unsigned pos) {
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
static uint32_t link_remove(race_automata *ra, uint32_t t, unsigned pos) {
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

static int cell_get(race_automata *ra, uint32_t unit, uint32_t var, uint32_t *out) {
  uint32_t c = cell_find(ra, unit, var);
  if (c != NIL) {
    *out = c;
    return 0;
  }
  int rc = pool_take(ra, &ra->cells, &c);
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
static void cell_free(race_automata *ra, uint32_t c) {
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
  pool_put(&ra->cells, c);
  unit_unref(ra, unit);
}

/* An anchor of a running unit that no longer anchors anything is not needed. (The cells of an
 * ending unit are freed by unit_end.) */
static void cell_release_if_idle(race_automata *ra, uint32_t c) {
  ra_cell *x = CELL(c);
  if (!x->seen && x->tuples == NIL && !(UNIT(x->unit)->flags & UF_ENDED)) cell_free(ra, c);
}

/* ---- tuples ---------------------------------------------------------------------------------- */

static inline int is_full(const ra_tuple *x) { return x->l2 != NIL; }

static inline ra_pos *wit_of(race_automata *ra, const ra_tuple *x) {
  return is_full(x) ? (ra_pos *)pool_at(&ra->fwit, x->wit) : (ra_pos *)pool_at(&ra->pwit, x->wit);
}

static inline const ra_pos *wit_of_const(const race_automata *ra, const ra_tuple *x) {
  return (const ra_pos *)pool_at(is_full(x) ? &ra->fwit : &ra->pwit, x->wit);
}

static void tuple_delete(race_automata *ra, uint32_t t) {
  ra_tuple *x;
  for (unsigned pos = 0; pos < 4; pos++) {
    if (TUPLE(t)->prev[pos] == NIL) continue;
    uint32_t c = link_remove(ra, t, pos);
    if (c != NIL) cell_release_if_idle(ra, c);
  }
  x = TUPLE(t);
  ra_hash *h = &ra->htuples;
  uint32_t *p = &h->b[(size_t)tuple_hash(x->u, x->v, x->l1, x->l2) & (h->nb - 1)];
  while (*p != t) p = &TUPLE(*p)->hnext;
  *p = x->hnext;
  h->n--;
  pool_put(is_full(x) ? &ra->fwit : &ra->pwit, x->wit);
  uint32_t u = x->u, v = x->v;
  pool_put(&ra->tuples, t);
  ra->n_tuples--;
  unit_unref(ra, u);
  unit_unref(ra, v);
}

static unsigned ended_roles(race_automata *ra, const ra_tuple *x) {
  return ((UNIT(x->u)->flags & UF_ENDED) ? 1u : 0u) | ((UNIT(x->v)->flags & UF_ENDED) ? 2u : 0u);
}

/* Delete t if none of its automata can accept any more. While both units run it stays, even
 * when all of them have accepted: it must not be made again from its summary. */
static void tuple_collect(race_automata *ra, uint32_t t) {
  ra_tuple *x = TUPLE(t);
  unsigned ended = ended_roles(ra, x);
  if (!ended) return;
  if (!can_accept(ra, x->word, is_full(x) ? DOUBLE : SINGLE, ended)) tuple_delete(ra, t);
}

/* ---- reports --------------------------------------------------------------------------------- */


/* 001 §3.2 reportBits: pattern p of tuple t accepted at event ev. */
static int report_match(race_automata *ra, uint32_t t, int p, const atom_ev *ev) {
  const ra_tuple *x = TUPLE(t);
  const ra_unit *units[2] = {UNIT(x->u), UNIT(x->v)};
  uint32_t vars[2] = {x->l1, x->l2};
  const ra_pos *wit = wit_of(ra, x);
  atom_txn_ref txns[2];
  for (int i = 0; i < 2; i++)
    txns[i] = (atom_txn_ref){units[i]->thread, (units[i]->flags & UF_UNARY) ? 1u : 0u,
                             units[i]->begin_index, units[i]->begin_loc};
  atom_ev evs[MAXLEN];
  unsigned len = patterns[p].len;
  for (unsigned s = 0; s < len; s++) {
    unsigned d = patterns[p].ev[s];
    evs[s].kind = (d & 1) ? ATOM_WRITE : ATOM_READ;
    evs[s].thread = units[d >> 2]->thread;
    evs[s].target = vars[(d >> 1) & 1];
    evs[s].flags = 0;
    if (s + 1 < len) {
      evs[s].index = wit[ra->slot[p][s]].index;
      evs[s].loc = wit[ra->slot[p][s]].loc;
    } else {
      evs[s].index = ev->index;
      evs[s].loc = ev->loc;
    }
  }

  /* The message template (rendered by the session): the events in order, then what the
   * pattern means in words; its number stays visible in words at the end. */
  char msg[512];
  size_t off = 0;
  atom__msg_append(msg, sizeof msg, &off, "{t0} was interleaved by {t1}:");
  for (unsigned s = 0; s < len; s++)
    atom__msg_append(msg, sizeof msg, &off, "%s{e%u}", s == 0 ? " " : s + 1 == len ? ", and then " : ", then ", s);
  atom__msg_append(msg, sizeof msg, &off, ": %s (pattern %d of the atomic-set patterns)",
                   patterns[p].what, p + 1);

  /* The session's signature holds the begin locations of u and u' unordered; the roles, l1 and
   * l2 make a distinct match. */
  uint64_t extra = mix2(atom_env_key(ra->env, ATOM_SPACE_VAR, x->l1),
                        is_full(x) ? atom_env_key(ra->env, ATOM_SPACE_VAR, x->l2) ^ 0x6c32ULL
                                   : 0x6c31ULL);
  extra = mix2(extra, units[0]->begin_loc);

  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  static const char *const kinds[NPAT] = {
      "pattern-1", "pattern-2", "pattern-3",  "pattern-4",  "pattern-5",  "pattern-6",  "pattern-7",
      "pattern-8", "pattern-9", "pattern-10", "pattern-11", "pattern-12", "pattern-13", "pattern-14"};
  spec.kind = kinds[p];
  spec.event_index = ev->index;
  spec.txns = txns;
  spec.n_txns = 2;
  spec.events = evs;
  spec.n_events = len;
  spec.vars = vars;
  spec.n_vars = is_full(x) ? 2 : 1;
  spec.message = msg;
  spec.signature_extra = extra;
  return atom_env_report(ra->env, &spec);
}

static void note_error(race_automata *ra, int rc) {
  if (rc < 0 && !ra->err) ra->err = rc;
}

/* Record the events matched at non-final positions, and report the automata that accepted. */
static void after_advance(race_automata *ra, uint32_t t, uint64_t inc, const atom_ev *ev) {
  ra_tuple *x = TUPLE(t);
  ra_pos *wit = wit_of(ra, x);
  uint64_t acc = 0;
  for (int p = 0; p < NPAT; p++) {
    if (!(inc & FIELD(p))) continue;
    unsigned s = state_of(x->word, p);
    if (s < patterns[p].len) wit[ra->slot[p][s - 1]] = (ra_pos){ev->index, ev->loc};
    else acc |= FIELD(p);
  }
  acc &= is_full(x) ? DOUBLE : SINGLE;
  for (int p = 0; p < NPAT; p++)
    if (acc & FIELD(p)) note_error(ra, report_match(ra, t, p, ev));
}

/* 001 §3.2 updateBits on an existing tuple, for event ev playing descriptor d. */
static void tuple_update(race_automata *ra, uint32_t t, unsigned d, const atom_ev *ev) {
  ra_tuple *x = TUPLE(t);
  uint64_t inc;
  uint64_t w = step(ra, x->word, d, is_full(x) ? DOUBLE : ONES, &inc);
  if (!inc) return;
  x->word = w;
  after_advance(ra, t, inc, ev);
  tuple_collect(ra, t);
}

/* 001 §3.2 copyBits: make tuple (u, v, l1, l2) with state `word` (already advanced by ev, `inc`
 * being the advanced fields; ev may be NULL when inc is 0) and the matched events `src` (nsrc
 * slots). Links it to the cells of its positions, making anchors where needed (none for a
 * unary v, which has no later event). */
static int tuple_make(race_automata *ra, uint32_t u, uint32_t v, uint32_t l1, uint32_t l2,
                      uint64_t word, uint64_t inc, const ra_pos *src, uint32_t nsrc,
                      const atom_ev *ev) {
  int full = l2 != NIL;
  ra_pool *wp = full ? &ra->fwit : &ra->pwit;
  uint32_t t, w, c[4] = {NIL, NIL, NIL, NIL};
  int rc = pool_take(ra, &ra->tuples, &t);
  if (rc) return rc;
  if ((rc = pool_take(ra, wp, &w)) != 0) {
    pool_put(&ra->tuples, t);
    return rc;
  }
  /* Cells of the positions; those of a running unit may have to be made as anchors. */
  int unary_v = (UNIT(v)->flags & UF_UNARY) != 0;
  uint32_t want[4][2] = {{u, l1}, {u, l2}, {v, l1}, {v, l2}};
  for (unsigned pos = 0; pos < 4 && !rc; pos++) {
    if (want[pos][1] == NIL || (pos >= 2 && unary_v)) continue;
    rc = cell_get(ra, want[pos][0], want[pos][1], &c[pos]);
  }
  if (rc) {
    for (unsigned pos = 0; pos < 4; pos++)
      if (c[pos] != NIL) cell_release_if_idle(ra, c[pos]);
    pool_put(wp, w);
    pool_put(&ra->tuples, t);
    return rc;
  }
  ra_tuple *x = TUPLE(t);
  memset(x, 0, sizeof *x);
  x->u = u;
  x->v = v;
  x->l1 = l1;
  x->l2 = l2;
  x->word = word;
  x->wit = w;
  for (unsigned pos = 0; pos < 4; pos++) x->next[pos] = x->prev[pos] = NIL;
  ra_pos *wit = (ra_pos *)pool_at(wp, w);
  uint32_t n = full ? ra->n_fslots : ra->n_pslots;
  for (uint32_t i = 0; i < n; i++) wit[i] = i < nsrc ? src[i] : (ra_pos){NONE, 0};
  for (unsigned pos = 0; pos < 4; pos++)
    if (c[pos] != NIL) link_add(ra, c[pos], t, pos);
  ra_hash *h = &ra->htuples;
  size_t b = (size_t)tuple_hash(u, v, l1, l2) & (h->nb - 1);
  x = TUPLE(t);
  x->hnext = h->b[b];
  h->b[b] = t;
  if (++h->n > h->nb) hash_grow(ra, h, &ra->tuples, offsetof(ra_tuple, hnext), tuple_key_hash);
  UNIT(u)->refs++;
  UNIT(v)->refs++;
  ra->n_tuples++;
  if (inc) after_advance(ra, t, inc, ev);
  tuple_collect(ra, t);
  return 0;
}

/* The matched events a summary holds: the first read and write, in their slots. */
static void summary_wit(const race_automata *ra, const ra_cell *s, ra_pos *out) {
  for (uint32_t i = 0; i < ra->n_pslots; i++) out[i] = (ra_pos){NONE, 0};
  for (int k = 0; k < 2; k++)
    if (s->first[k].index != NONE) out[ra->first_slot[k]] = s->first[k];
}

/* The state of full tuple (u, v, l1, l2) while it is not held (see the top of the file): from
 * su = S(u,l1), p = P(u,v,l1) or NULL, and cv = the cell of (v,l2). Its matched events go to
 * wit (n_fslots): the summaries' ones, and v's last access to l2 of the right kind for the
 * event of v on l2 (a valid witness: it lies between the events around it). */
static uint64_t derive(const race_automata *ra, const ra_cell *su, const ra_tuple *p,
                       const ra_cell *cv, ra_pos *wit) {
  for (uint32_t i = 0; i < ra->n_fslots; i++) wit[i] = (ra_pos){NONE, 0};
  if (p) memcpy(wit, wit_of_const(ra, p), ra->n_pslots * sizeof *wit);
  else summary_wit(ra, su, wit);
  uint64_t w = 0;
  for (int q = 5; q < NPAT; q++) {
    unsigned d0 = patterns[q].ev[0], d1 = patterns[q].ev[1], d2 = patterns[q].ev[2];
    const ra_pos *f = &su->first[d0 & 1];
    if (f->index == NONE) continue;
    unsigned st = 1;
    if (d1 & DESC(0, 1, 0)) { /* second event: v on l2 (7, 8, 10, 12, 13, 14) */
      const ra_pos *x = &cv->last[d1 & 1];
      if (x->index != NONE && x->index > f->index) {
        st = 2;
        wit[ra->slot[q][1]] = *x;
      }
    } else if (p && (st = state_of(p->word, q)) == 2) { /* v on l1, then v on l2 (6, 9, 11) */
      const ra_pos *x = &cv->last[d2 & 1];
      if (x->index != NONE && x->index > wit[ra->slot[q][1]].index) {
        st = 3;
        wit[ra->slot[q][2]] = *x;
      }
    }
    w |= (uint64_t)st * FIELD(q);
  }
  return w;
}

/* ---- atomic sets ----------------------------------------------------------------------------- */

static int set_new(race_automata *ra, uint32_t *out) {
  if (ra->n_sets >= NIL - 1) return ATOM_ELIMIT;
  if (ATOM__GROW(ra->mem, ra->set, ra->set_cap, (size_t)ra->n_sets + 1)) return ATOM_ENOMEM;
  ra->set[ra->n_sets] = (ra_set){NULL};
  *out = ra->n_sets++;
  return 0;
}

static uint64_t str_hash(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
  return atom__hash64(h);
}

/* sets=prefix: the set of the variable named "obj.field" is the one of every "obj.*". */
static int prefix_set(race_automata *ra, const char *name, size_t n, uint32_t *out) {
  uint64_t h = str_hash(name, n);
  for (uint64_t probe = 0;; probe++) {
    uint32_t id;
    if (!atom__u64map_get(&ra->prefixes, h + probe, &id)) break;
    const char *pre = ra->set[id].prefix;
    if (strlen(pre) == n && memcmp(pre, name, n) == 0) {
      *out = id;
      return 0;
    }
  }
  char *copy = atom__mem_alloc(ra->mem, n + 1);
  if (!copy) return ATOM_ENOMEM;
  memcpy(copy, name, n);
  copy[n] = '\0';
  uint32_t id;
  int rc = set_new(ra, &id);
  uint64_t probe = 0;
  uint32_t dummy;
  while (!rc && atom__u64map_get(&ra->prefixes, h + probe, &dummy)) probe++;
  if (!rc && atom__u64map_put(&ra->prefixes, ra->mem, h + probe, id)) {
    ra->n_sets--;
    rc = ATOM_ENOMEM;
  }
  if (rc) {
    atom__mem_free(ra->mem, copy, n + 1);
    return rc;
  }
  ra->set[id].prefix = copy;
  *out = id;
  return 0;
}

/* The atomic set of var, decided at its first access: its declared set (atom_declare_set),
 * else the policy's. */
static int resolve_set(race_automata *ra, uint32_t var) {
  uint32_t id = NIL;
  uint64_t key;
  int rc = 0;
  if (atom_env_var_set(ra->env, var, &key)) {
    if (!atom__u64map_get(&ra->declared, key, &id)) {
      rc = set_new(ra, &id);
      if (!rc && atom__u64map_put(&ra->declared, ra->mem, key, id)) {
        ra->n_sets--;
        rc = ATOM_ENOMEM;
      }
    }
  } else if (ra->policy == POLICY_ONE) {
    if (ra->one_set == NIL) rc = set_new(ra, &ra->one_set);
    id = ra->one_set;
  } else if (ra->policy == POLICY_PREFIX) {
    const char *name = atom_env_name(ra->env, ATOM_SPACE_VAR, var);
    const char *dot = name ? strrchr(name, '.') : NULL;
    if (dot && dot > name) rc = prefix_set(ra, name, (size_t)(dot - name), &id);
  }
  if (rc) return rc;
  ra->var[var].set = id;
  ra->var[var].resolved = 1;
  return 0;
}

/* ---- events ---------------------------------------------------------------------------------- */

static int ensure_thread(race_automata *ra, uint32_t t) {
  if (t < ra->th_cap) return 0;
  size_t old = ra->th_cap;
  if (ATOM__GROW(ra->mem, ra->th, ra->th_cap, (size_t)t + 1)) return ATOM_ENOMEM;
  for (size_t i = old; i < ra->th_cap; i++) ra->th[i].unit = NIL;
  return 0;
}

static int ensure_var(race_automata *ra, uint32_t l) {
  if (l >= ra->var_cap) {
    size_t old = ra->var_cap;
    if (ATOM__GROW(ra->mem, ra->var, ra->var_cap, (size_t)l + 1)) return ATOM_ENOMEM;
    for (size_t i = old; i < ra->var_cap; i++) ra->var[i] = (ra_var){NIL, 0, NIL, NIL};
  }
  return ra->var[l].resolved ? 0 : resolve_set(ra, l);
}

/* An access by a unit of one event (outside every transaction): it can only be u', and only
 * patterns 1-5 can still accept with it (patterns 6-14 need two events of u'). */
static void access_unary(race_automata *ra, const atom_ev *ev, unsigned k) {
  uint32_t l = ev->target, unary = NIL;
  unsigned d = DESC(1, 0, k);
  ra_pos src[MAXSLOTS];
  for (uint32_t c = ra->var[l].head; c != NIL; c = CELL(c)->vnext) {
    const ra_cell *s = CELL(c);
    uint32_t u = s->unit;
    if (UNIT(u)->thread == ev->thread) continue;
    uint64_t inc, w = step(ra, s->word, d, ONES, &inc);
    if (!inc || !can_accept(ra, w, SINGLE, 2)) continue;
    int rc = 0;
    if (unary == NIL) {
      rc = unit_new(ra, ev->thread, UF_UNARY | UF_ENDED, ev->index, ev->loc, &unary);
      if (!rc) UNIT(unary)->refs = 1; /* held until the end of the event */
    }
    if (!rc) {
      summary_wit(ra, CELL(c), src);
      rc = tuple_make(ra, u, unary, l, NIL, w, inc, src, ra->n_pslots, ev);
    }
    if (rc) {
      note_error(ra, rc);
      break;
    }
  }
  if (unary != NIL) unit_unref(ra, unary);
}

/* Patterns 6-14 whose automaton, at an event of descriptor d, can pass the states derive()
 * knows: d is their third event after a second event of u' on l2, or their fourth after the
 * third (6, 9, 11). A cheap test before any lookup: is some such pattern's derived prefix there,
 * given the first access kinds of su and the last ones of cv? */
static int may_pass(const ra_cell *su, const ra_cell *cv, unsigned d) {
  for (int q = 5; q < NPAT; q++) {
    unsigned d0 = patterns[q].ev[0], d1 = patterns[q].ev[1], d2 = patterns[q].ev[2];
    unsigned dv = (d1 & DESC(0, 1, 0)) ? d1 : d2; /* the event of u' on l2 */
    if (((d1 & DESC(0, 1, 0)) ? d2 : patterns[q].ev[3]) != d) continue;
    const ra_pos *f = &su->first[d0 & 1], *x = &cv->last[dv & 1];
    if (f->index != NONE && x->index != NONE && x->index > f->index) return 1;
  }
  return 0;
}

/* Refine the full tuple (u, v, l1, l2) if event ev, of descriptor d, takes it past its derived
 * state. su = S(u,l1), cv = the cell of (v,l2). */
static int refine_full(race_automata *ra, uint32_t su, uint32_t cv, unsigned d,
                       const atom_ev *ev) {
  const ra_cell *x = CELL(su), *y = CELL(cv);
  uint32_t u = x->unit, v = y->unit, l1 = x->var, l2 = y->var;
  if (!may_pass(x, y, d) || tuple_find(ra, u, v, l1, l2) != NIL) return 0;
  uint32_t p = tuple_find(ra, u, v, l1, NIL);
  ra_pos wit[MAXSLOTS];
  uint64_t inc, w = derive(ra, x, p == NIL ? NULL : TUPLE(p), y, wit);
  w = step(ra, w, d, DOUBLE, &inc);
  if (!inc) return 0;
  return tuple_make(ra, u, v, l1, l2, w, inc, wit, ra->n_fslots, ev);
}

/* An access by U, the running transaction of ev's thread, to l (kind k). */
static void access_txn(race_automata *ra, const atom_ev *ev, unsigned k) {
  uint32_t t = ev->thread, l = ev->target, c;
  uint64_t now = ev->index + 1, inc, w;
  ra_thread *th = &ra->th[t];
  int rc;
  if (th->unit == NIL) {
    if ((rc = unit_new(ra, t, 0, th->begin_index, th->begin_loc, &th->unit)) != 0) {
      note_error(ra, rc);
      return;
    }
    UNIT(th->unit)->refs = 1; /* released when it ends */
  }
  uint32_t U = th->unit;
  if ((rc = cell_get(ra, U, l, &c)) != 0) {
    note_error(ra, rc);
    return;
  }
  uint32_t set = ra->var[l].set;
  ra_cell *x = CELL(c);
  uint64_t since = x->last[k].index == NONE ? 0 : x->last[k].index + 1;

  /* 001 §3.2 createBits(U,*,l,*) at U's first access to l; updateBits on it. */
  if (!x->seen) {
    x->word = 0;
    x->stamp = now;
    ra->n_summaries++;
    if (set != NIL && (rc = group_join(ra, c)) != 0) note_error(ra, rc);
  } else {
    vlist_unlink(ra, c);
  }
  vlist_append(ra, c);
  x = CELL(c);
  x->seen |= 1u << k;
  x->touched = now;
  if (x->first[k].index == NONE) x->first[k] = (ra_pos){ev->index, ev->loc};
  x->last[k] = (ra_pos){ev->index, ev->loc};
  w = step(ra, x->word, DESC(0, 0, k), ONES, &inc);
  if (inc) {
    x->word = w;
    x->stamp = now;
  }

  /* 001 Fig. 5 Update: the tuples in which (U, l) takes a role. */
  for (uint32_t id = CELL(c)->tuples, next; id != NIL; id = next) {
    next = TUPLE(id >> 2)->next[id & 3];
    unsigned pos = id & 3;
    tuple_update(ra, id >> 2, DESC(pos >> 1, pos & 1, k), ev);
  }

  /* 001 Fig. 5 Create, U in the role of u': (u,U,l,*) from the summaries (u,*,l,*) this access
   * advances. Summaries unchanged since U's last access of kind k to l were seen then (the list
   * is in order of last access, which is never before the last change). */
  ra_pos src[MAXSLOTS];
  for (uint32_t s = ra->var[l].tail; s != NIL; s = CELL(s)->vprev) {
    const ra_cell *y = CELL(s);
    if (y->touched <= since) break;
    uint32_t u = y->unit;
    if (y->stamp <= since || UNIT(u)->thread == t) continue;
    w = step(ra, y->word, DESC(1, 0, k), ONES, &inc);
    if (!inc || tuple_find(ra, u, U, l, NIL) != NIL) continue;
    summary_wit(ra, y, src);
    if ((rc = tuple_make(ra, u, U, l, NIL, w, inc, src, ra->n_pslots, ev)) != 0) {
      note_error(ra, rc);
      return;
    }
  }
  if (set == NIL || CELL(c)->group == NIL) return;

  /* Full tuples past their derived state: (u,U,l,l2) at U's event on l1 = l, and (U,v,l1,l) at
   * U's event on l2 = l, for every other unit u (v) that accessed l and every l1 (l2) of the set
   * U accessed. */
  for (uint32_t s = ra->var[l].head; s != NIL; s = CELL(s)->vnext) {
    if (UNIT(CELL(s)->unit)->thread == t) continue;
    for (uint32_t o = GROUP(CELL(c)->group)->head; o != NIL; o = CELL(o)->gnext) {
      if (o == c) continue;
      if ((rc = refine_full(ra, s, o, DESC(1, 0, k), ev)) != 0 ||
          (rc = refine_full(ra, o, s, DESC(0, 1, k), ev)) != 0) {
        note_error(ra, rc);
        return;
      }
    }
  }
}

/* 001 Fig. 5 GC: unit U ends. Its summaries go; a tuple naming it stays only while one of its
 * automata can still accept with events of the other unit alone. */
static void unit_end(race_automata *ra, uint32_t U) {
  /* Full tuples (u,U,l1,l2) whose pattern 6, 9 or 11 is at its third event only wait for u now:
   * derive() could no longer see them once U's cells are gone. */
  for (uint32_t c = UNIT(U)->cells; c != NIL; c = CELL(c)->unext) {
    if (CELL(c)->group == NIL) continue;
    for (uint32_t id = CELL(c)->tuples; id != NIL; id = TUPLE(id >> 2)->next[id & 3]) {
      const ra_tuple *p = TUPLE(id >> 2);
      if ((id & 3) != 2 || is_full(p)) continue;
      /* patterns 6, 9, 11 at their second event, and when (for the test below) */
      uint64_t t2[NPAT];
      int any = 0;
      for (int q = 5; q < NPAT; q++) {
        t2[q] = NONE;
        if (!(patterns[q].ev[1] & DESC(0, 1, 0)) && state_of(p->word, q) == 2) {
          t2[q] = wit_of_const(ra, p)[ra->slot[q][1]].index;
          any = 1;
        }
      }
      if (!any) continue;
      uint32_t u = p->u, l1 = p->l1, su = cell_find(ra, u, l1);
      if (su == NIL) continue;
      for (uint32_t o = GROUP(CELL(c)->group)->head; o != NIL; o = CELL(o)->gnext) {
        int past = 0;
        for (int q = 5; q < NPAT && !past; q++) {
          const ra_pos *x = &CELL(o)->last[patterns[q].ev[2] & 1];
          past = t2[q] != NONE && x->index != NONE && x->index > t2[q];
        }
        if (o == c || !past || tuple_find(ra, u, U, l1, CELL(o)->var) != NIL) continue;
        ra_pos wit[MAXSLOTS];
        uint64_t w = derive(ra, CELL(su), TUPLE(id >> 2), CELL(o), wit);
        if (!can_accept(ra, w, DOUBLE, 2)) continue;
        int rc = tuple_make(ra, u, U, l1, CELL(o)->var, w, 0, wit, ra->n_fslots, NULL);
        if (rc) note_error(ra, rc);
      }
    }
  }

  ra_unit *x = UNIT(U);
  x->flags |= UF_ENDED;
  for (uint32_t c = x->cells, nc; c != NIL; c = nc) {
    ra_cell *y = CELL(c);
    nc = y->unext;
    if (y->seen) {
      vlist_unlink(ra, c);
      group_leave(ra, c);
      ra->n_summaries--;
    }
    for (uint32_t id = CELL(c)->tuples, next; id != NIL; id = next) {
      uint32_t tt = id >> 2;
      next = TUPLE(tt)->next[id & 3];
      const ra_tuple *z = TUPLE(tt);
      if (can_accept(ra, z->word, is_full(z) ? DOUBLE : SINGLE, ended_roles(ra, z)))
        link_remove(ra, tt, id & 3);
      else
        tuple_delete(ra, tt);
    }
    cell_free(ra, c);
  }
  unit_unref(ra, U);
}

static int ra_event(void *self, const atom_ev *ev) {
  race_automata *ra = self;
  ra->err = 0;
  if (ensure_thread(ra, ev->thread)) return ATOM_ENOMEM;
  ra_thread *th = &ra->th[ev->thread];
  switch (ev->kind) {
  case ATOM_BEGIN:
    th->in_txn = 1;
    th->unit = NIL;
    th->begin_index = ev->index;
    th->begin_loc = ev->loc;
    return 0;
  case ATOM_END:
    if (th->in_txn && th->unit != NIL) unit_end(ra, th->unit);
    th = &ra->th[ev->thread];
    th->in_txn = 0;
    th->unit = NIL;
    return 0;
  case ATOM_READ:
  case ATOM_WRITE: {
    int rc = ensure_var(ra, ev->target);
    if (rc) return rc == ATOM_ELIMIT ? atom_env_error(ra->env, rc, "more than 2^32 - 2 atomic sets")
                                     : rc;
    unsigned k = ev->kind == ATOM_WRITE ? K_WRITE : K_READ;
    if (ra->th[ev->thread].in_txn) access_txn(ra, ev, k);
    else access_unary(ra, ev, k);
    if (ra->err == ATOM_ELIMIT)
      return atom_env_error(ra->env, ATOM_ELIMIT,
                            "event %" PRIu64 ": more than %u tuples, %u cells or %u units held",
                            ev->index, (unsigned)MAX_TUPLES, (unsigned)MAX_CELLS,
                            (unsigned)MAX_UNITS);
    return ra->err;
  }
  default:
    return 0;
  }
}

static void ra_destroy(void *self) {
  race_automata *ra = self;
  if (!ra) return;
  for (uint32_t i = 0; i < ra->n_sets; i++)
    if (ra->set[i].prefix) atom__mem_strfree(ra->mem, ra->set[i].prefix);
  atom__mem_free(ra->mem, ra->set, ra->set_cap * sizeof *ra->set);
  atom__mem_free(ra->mem, ra->th, ra->th_cap * sizeof *ra->th);
  atom__mem_free(ra->mem, ra->var, ra->var_cap * sizeof *ra->var);
  atom__u64map_free(&ra->declared, ra->mem);
  atom__u64map_free(&ra->prefixes, ra->mem);
  pool_free(ra, &ra->units);
  pool_free(ra, &ra->cells);
  pool_free(ra, &ra->groups);
  pool_free(ra, &ra->tuples);
  pool_free(ra, &ra->pwit);
  pool_free(ra, &ra->fwit);
  atom__mem_free(ra->mem, ra->hcells.b, ra->hcells.nb * sizeof *ra->hcells.b);
  atom__mem_free(ra->mem, ra->hgroups.b, ra->hgroups.nb * sizeof *ra->hgroups.b);
  atom__mem_free(ra->mem, ra->htuples.b, ra->htuples.nb * sizeof *ra->htuples.b);
  atom__mem_free(ra->mem, ra, sizeof *ra);
}

static int ra_create(void **self, atom_env *env) {
  int policy = POLICY_VAR;
  const char *sets = atom_env_arg(env, "sets");
  if (sets) {
    if (strcmp(sets, "var") == 0) policy = POLICY_VAR;
    else if (strcmp(sets, "one") == 0) policy = POLICY_ONE;
    else if (strcmp(sets, "prefix") == 0) policy = POLICY_PREFIX;
    else
      return atom_env_error(env, ATOM_EINVAL, "sets must be one, var or prefix, not \"%s\"",
                            sets);
  }
  race_automata *ra = ATOM__NEW_STATE(env, race_automata, own_mem);
  if (!ra) return ATOM_ENOMEM;
  atom__mem *mem = &ra->own_mem;
  ra->env = env;
  ra->mem = mem;
  ra->policy = policy;
  ra->one_set = NIL;
  build_tables(ra);
  pool_init(&ra->units, sizeof(ra_unit), MAX_UNITS);
  pool_init(&ra->cells, sizeof(ra_cell), MAX_CELLS);
  pool_init(&ra->groups, sizeof(ra_group), MAX_CELLS);
  pool_init(&ra->tuples, sizeof(ra_tuple), MAX_TUPLES);
  pool_init(&ra->pwit, ra->n_pslots * sizeof(ra_pos), MAX_TUPLES);
  pool_init(&ra->fwit, ra->n_fslots * sizeof(ra_pos), MAX_TUPLES);
  if (hash_init(ra, &ra->hcells) || hash_init(ra, &ra->hgroups) || hash_init(ra, &ra->htuples)) {
    ra_destroy(ra);
    return ATOM_ENOMEM;
  }
  *self = ra;
  return 0;
}

/* nodes: the bitsets held (001 §5 Table 1 |B|): summaries (u,*,l,*) and tuples. */
static int ra_stats(void *self, atom_checker_counters *out) {
  race_automata *ra = self;
  out->nodes = ra->n_summaries + ra->n_tuples;
  out->edges = 0;
  out->clocks = 0;
  return 0;
}

static const char *const ra_keys[] = {"sets", NULL};

const atom_checker atom__checker_race_automata = {
    ATOM_CHECKER_ABI_VERSION,
    ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_BEGIN) |
        ATOM_KIND_BIT(ATOM_END),
    "race-automata",
    "atomic-set serializability: 14 access patterns over units of work, by race automata",
    ra_keys,
    ra_create,
    ra_event,
    NULL,
    ra_destroy,
    ra_stats,
    .properties = ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_SOUND | ATOM_CHECKER_PROP_COMPLETE,
};
