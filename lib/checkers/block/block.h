/* block checker: what its files share (internal).
 *
 * The checker (000 §5) is one concept per file:
 *   block.c         the vtable: arguments, finish() in its phases, stats, freeing;
 *   record.c        on_event(): the trace recorded as units (transactions, lock blocks, unary
 *                   events) with the thread period of every event;
 *   keyset.c        the set of fixed-size keys that interns sites and tuples;
 *   units.c         what the analysis asks of units: lock sets, sites, fork/join relation;
 *   tuples.c        blocks (B1-B3), accesses and 2-blocks (2B1-2B2) of every unit;
 *   table.c         the table of non-atomic 2-block interleavings, derived;
 *   free_pairs.c    pairs that fork/join leaves free: UP1-UP4 and 2-block pairs (Thm 5.1);
 *   forced_pairs.c  pairs that fork/join partly orders: the exact progress-graph search;
 *   findings.c      findings grouped into one report per pair of transactions, bounds;
 *   scope_all.c     scope=all (000 §5.4): the interleavings of groups of related units.
 *
 * 000 §5.3 leaves out the table of non-atomic 2-block pairs ("a few dozen specific cases ...
 * enumerated in [WS03]"). table.c derives it instead of copying it: for every shape of a pair
 * of 2-blocks it enumerates the six interleavings of the four events and keeps those that are
 * view-equivalent to neither serial order. atom__blk_* expose that derivation so that the
 * tests can check every entry against the brute-force reference. */
#ifndef ATOM_CHECKERS_BLOCK_BLOCK_H
#define ATOM_CHECKERS_BLOCK_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/checker.h"
#include "support/idindex.h"
#include "support/lockset.h"
#include "support/mem.h"
#include "support/periods.h"
#include "support/report_build.h"
#include "support/u64map.h"

/* ---- the 2-block table (table.c) ------------------------------------------------------------ */

/* Operation codes inside a shape. */
#define ATOM__BLK_R 0u
#define ATOM__BLK_W 1u

/* Shape of a pair of 2-blocks b = (e1, e2) of t and b' = (e1', e2') of t', var(e1) = x,
 * var(e2) = y (2B1: x != y). b' accesses the same two variables, in the same order
 * (crossed = 0: var(e1') = x, var(e2') = y) or the other way round (crossed = 1). */
#define ATOM__BLK_SHAPE(op1, op2, op1p, op2p, crossed) \
  ((unsigned)(op1) | (unsigned)(op2) << 1 | (unsigned)(op1p) << 2 | (unsigned)(op2p) << 3 | \
   (unsigned)(crossed) << 4)
#define ATOM__BLK_SHAPES 32u

/* The interleavings of b and b' that keep each block's order. Order k is described by
 * atom__blk_order_name(k): four letters, 'A' for an event of b and 'C' for one of b'
 * ("ACCA": e1, e1', e2', e2). Order 0 is the serial order t t', order 5 is t' t. */
#define ATOM__BLK_ORDERS 6u
static inline const char *atom__blk_order_name(unsigned order) {
  static const char names[ATOM__BLK_ORDERS][5] = {"AACC", "ACAC", "ACCA", "CAAC", "CACA", "CCAA"};
  return order < ATOM__BLK_ORDERS ? names[order] : NULL;
}

/* Bit k set iff order k of a pair of 2-blocks of this shape is view-equivalent to neither
 * t t' nor t' t (derived, see block.c). */
unsigned atom__blk_2blk_mask(unsigned shape);

/* ---- the recorded trace and the checker ------------------------------------------------------ */

#define NONE32 UINT32_MAX

/* The lock sets of the first HELD_PREFIXES locks a unit holds are interned one by one
 * (tuples.c); deeper ones are built on demand, and a pair that holds more in common is not
 * searched (forced_pairs.c). */
#define HELD_PREFIXES 64

/* ---- types -------------------------------------------------------------------------------- */

enum { REC_READ = 0, REC_WRITE = 1, REC_ACQUIRE = 2, REC_RELEASE = 3 };
#define PERIOD_LIMIT (UINT32_MAX >> 2)

/* One event of a unit's log. */
typedef struct block_record {
  uint64_t index;
  uint64_t loc;
  uint32_t target; /* variable or lock */
  uint32_t kp;     /* kind | period << 2 */
} block_record;

static inline uint32_t rec_kind(const block_record *r) { return r->kp & 3u; }
static inline uint32_t rec_period(const block_record *r) { return r->kp >> 2; }

typedef struct block_unit {
  uint64_t begin_index, begin_loc;
  uint64_t off; /* first record in the log */
  uint32_t len;
  uint32_t thread;
  uint32_t pfirst, plast; /* thread periods of its first and last event */
  uint32_t site;
  uint32_t unary; /* bit 0: a unary unit; bit 1: still open when the trace ended */
  atom__ls used;   /* locks it acquires */
  atom__ls forever; /* locks it still holds when its thread's events end (never released) */
} block_unit;

typedef struct block_thread {
  block_record *buf; /* the open unit's records */
  size_t n, cap;
  uint64_t begin_index, begin_loc;
  uint32_t pfirst;
  uint32_t in_txn, nheld, open;
  uint32_t lock_only; /* lock_blocks=no: the open unit is a lock block with no transaction */
} block_thread;

typedef struct block_var {
  uint32_t thread_plus1; /* first thread that accessed it */
  uint8_t multi;         /* accessed by two threads or more */
  uint8_t written;
  uint8_t pad[2];
} block_var;

/* A set of fixed-size keys (kw words each), items numbered 0, 1, 2, ... in insertion order
 * (keyset.c). A key is found through a 64-bit hash of its words in a support/idindex (the hot
 * path of the tuple construction): the index holds a tag of the hash beside each item, so a
 * lookup is one probe and, nearly always, one comparison of the key. */
typedef struct block_keyset {
  uint32_t kw;
  uint32_t *keys;      /* item i: keys[i * kw .. (i + 1) * kw) */
  size_t n, kcap;      /* items; capacity in words */
  atom__idindex index; /* hash of a key -> its item */
} block_keyset;

/* Tuple keys (8 words): type, site, var x, var y (or 0), flags, h1, h2, h12. */
enum { TUPLE_BLOCK = 1, TUPLE_ACCESS = 2 }; /* 2-blocks are not stored: see free_pairs.c */
enum { KEY_TYPE, KEY_SITE, KEY_X, KEY_Y, KEY_FLAGS, KEY_H1, KEY_H2, KEY_H12, TUPLE_WORDS };
/* flags of a block: op1 | op2 << 1 | fw1 << 2 | fw2 << 3; of an access: op | fw << 1 |
 * ur << 2 (an uninitialized read); of a 2-block: op1 | op2 << 1. */

/* Where a tuple was first seen: unit and positions of its events in the unit's log. */
typedef struct tuple_origin {
  uint32_t unit, p1, p2;
} tuple_origin;

/* A node of the tree of held-lock stacks (tuples.c): the stack of a unit after it acquired
 * `lock` at position `at`, below it the stack `parent` (NONE32: empty). `ls` is the set of the
 * locks of the stack (NONE32 while it was not made: a stack deeper than HELD_PREFIXES). With
 * properly nested locks, the locks held continuously from before position p until an event
 * are the deepest node of the event's stack acquired before p (block_h12()). */
typedef struct held_node {
  uint32_t parent, at, lock;
  atom__ls ls;
} held_node;

/* An uninitialized read (the first of its variable) or a final write of a unit that gets
 * 2-blocks (2B1): position, variable, REC_READ/REC_WRITE, the locks held at it and the node of
 * its stack of held locks. A unit's are b->uf[b->uf_at[u] .. b->uf_at[u + 1]), in order. */
typedef struct block_urfw {
  uint32_t pos, var, op;
  atom__ls held;
  uint32_t node;
} block_urfw;

/* Site keys (8 words): thread, pfirst, plast, unary, begin_loc low, high, locks used, locks
 * held for good. */
enum { SITE_WORDS = 8 };

#define FINDING_CACHE 4096u

typedef struct block {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int scope_all;
  int lock_blocks; /* a lock block outside transactions is a unit (004 §2); else unary events */
  uint64_t max_il;
  uint64_t max_work;  /* scope=all: steps of all groups together */
  uint64_t max_2blk;  /* 2-blocks (candidates: pairs of UR/FW events) of all units together */
  uint64_t used_2blk; /* candidates of the units whose 2-blocks were built */
  uint64_t max_count; /* a report counts at most this many further interleavings exactly */
  uint64_t row_fast_min; /* rows with fewer events are made whole (free_pairs.c, row_fast) */
  uint64_t rows_fast;    /* rows made from a prefix of their events (for tests) */
  uint64_t events;    /* 1 + the largest event index seen: where an end-of-run bound stops */
  uint64_t undecided; /* pairs and groups a bound left undecided */
  char undecided_why[400]; /* the first one's reason */
  atom__periods periods;
  block_thread *th;
  size_t th_cap;
  block_var *var;
  size_t var_cap;
  uint32_t nlocks; /* 1 + largest lock id seen */
  block_record *log;
  size_t log_n, log_cap;
  block_unit *unit;
  size_t unit_n, unit_cap;
  uint32_t *fj; /* (thread, other thread) of every FORK and JOIN, for scope=all */
  size_t fj_n, fj_cap;
  int analysed;
  /* analysis */
  atom__lsets ls;
  block_keyset sites;
  uint32_t *site_rep; /* first unit of each site */
  size_t site_rep_cap;
  uint8_t *site_bad; /* a pair of this site was reported */
  size_t site_bad_cap;
  uint8_t *unit_bad; /* this unit is in a reported pair */
  size_t unit_bad_cap;
  atom__u64map seen; /* findings made so far (fresh()): a repeat is not a new interleaving */
  /* Recently seen findings and unit pairs, direct-mapped by hash (0: empty): the pair loops
   * meet the same few hundred thousand findings millions of times, and a hit here saves a
   * probe of the large maps (a cache miss each). Only ever holds keys already in those maps.
   * Allocated at the first finding (2 * FINDING_CACHE words: findings, then pairs); NULL
   * without memory, which only makes the lookups slower. */
  uint64_t *recent;
  const char *kind_of_hash; /* fresh(): the kind whose hash kind_hash is */
  uint64_t kind_hash;
  uint32_t last_grp; /* the group of the last finding (an index in grp, checked before use) */
  /* One report per pair of transactions: findings of two units (patterns, 2-blocks, fork/join
   * orders) are grouped by the pair of begin locations and reported together at the end of the
   * pair analysis (atom__block_group_emit). */
  struct pair_group *grp;
  size_t grp_n, grp_cap;
  atom__idindex grp_of;  /* hash of the begin locations -> group */
  atom__u64map grp_pair; /* unit pairs seen (u << 32 | v, u < v): the groups' occurrences */
  uint64_t work;         /* units of end-of-run work done, for atom_env_progress */
  uint64_t work_base;    /* where the current phase starts in work_total */
  uint64_t work_total;   /* tuples (pairs) + sites (forced pairs) + units (scope=all) */
  /* 2-blocks, kept as their events (tuples.c) and made per variable (free_pairs.c) */
  held_node *hn;
  size_t hn_n, hn_cap;
  block_urfw *uf;
  size_t uf_n, uf_cap;
  size_t *uf_at; /* unit_n + 1 entries (uf_at_n) */
  size_t uf_at_n;
  uint64_t two_blocks_made; /* distinct 2-blocks the pair loop made (stats) */
  uint64_t grp_pair_n;      /* pairs in grp_pair */
  block_keyset tup;
  tuple_origin *rep;
  size_t rep_cap;
  unsigned tbl[ATOM__BLK_SHAPES];
  atom__report_build rb; /* the one report builder (findings.c) */
  uint64_t tuples_built, units_done, periods_done; /* for stats() after finish */
} block;

/* Default max_work: steps (search steps plus serializability-test steps) of all the groups of
 * scope=all together; about a second or two of search (doc/limits.md). */
#define BLOCK_MAX_WORK 100000000ull

/* Default max_2blocks: the 2-blocks of a unit are the pairs of its uninitialized reads and
 * final writes on two variables, quadratic in the variables it touches (a transaction of 2 000
 * accesses to 1 000 shared variables makes half a million). They are not stored (the events
 * are, free_pairs.c makes them one variable at a time), so the bound is one of time: the rows
 * that must be made whole cost about 10 ns per 2-block (doc/limits.md). */
#define BLOCK_MAX_2BLOCKS 268435456ull

/* Default max_count: the further interleavings a report counts exactly. Past it the report
 * says "at least max_count more": telling findings apart costs a set of all of them, and two
 * long transactions have millions (doc/checkers/block.md). */
#define BLOCK_MAX_COUNT 1000ull

/* A row of 2-blocks (free_pairs.c) with fewer events than this is made whole: below it, asking
 * whether a prefix of its events is enough costs more than it saves. Tests lower it (to 0: the
 * short way wherever it is exact) and compare the reports. */
#define BLOCK_ROW_FAST_MIN 4096u

/* A group of findings of one pair of transactions (findings.c): keyed by the two begin
 * locations, it shows its smallest finding (earliest last event) and counts the others. */
typedef struct pair_group {
  uint64_t loc[2];   /* the two begin locations, sorted: the key */
  const char *kind;  /* of the shown finding */
  uint32_t units[2]; /* of the shown finding, in its role order */
  atom_ev ev[4];
  uint32_t ne, what;
  uint64_t last;     /* largest event index of the shown finding */
  uint64_t findings; /* distinct findings (at most max_count + 1 are told apart) */
  int capped;        /* more than max_count + 1 findings: `findings` is a lower bound */
  uint64_t pairs;    /* distinct pairs of units: the report's occurrences */
} pair_group;

/* ---- shared steps (each defined in the file named) -------------------------------------------- */

/* The records of a unit (NULL for an empty one: the log may not exist yet, and an offset on a
 * NULL pointer is undefined). */
static inline const block_record *unit_log(const block *b, const block_unit *un) {
  return un->len ? b->log + un->off : NULL;
}

static inline const block_record *urec(const block *b, uint32_t u, uint32_t pos) {
  return &b->log[b->unit[u].off + pos];
}

/* Is x accessed by two threads, one of them writing? Only such variables can make a pair of
 * transactions non-atomic. */
static inline int shared_var(const block *b, uint32_t x) {
  return x < b->var_cap && b->var[x].multi && b->var[x].written;
}

/* The witness event of the record at position pos of unit u (inline: the pair analyses make
 * one for every event of every finding). */
static inline atom_ev atom__block_event(const block *b, uint32_t u, uint32_t pos) {
  static const uint32_t kinds[4] = {ATOM_READ, ATOM_WRITE, ATOM_ACQUIRE, ATOM_RELEASE};
  const block_record *r = urec(b, u, pos);
  return (atom_ev){kinds[rec_kind(r)], b->unit[u].thread, r->target, 0, r->index, r->loc};
}

static inline const uint32_t *keyset_key(const block_keyset *s, uint32_t item) {
  return s->keys + (size_t)item * s->kw;
}

/* keyset.c */
void atom__block_keyset_init(block_keyset *s, unsigned kw);
void atom__block_keyset_free(atom__mem *m, block_keyset *s);
/* *item := the item with this key; added (and *added = 1) if it was not there. 0, ATOM_ENOMEM
 * or ATOM_ELIMIT. */
int atom__block_keyset_add(atom__mem *m, block_keyset *s, const uint32_t *key, uint32_t *item,
                           int *added);

/* record.c */
int atom__block_on_event(void *self, const atom_ev *ev);
int atom__block_cur_period(block *b, uint32_t t, uint32_t *p);
/* Store the open unit of thread t; open: it is still open when the trace ends. */
int atom__block_unit_close(block *b, uint32_t t, block_thread *th, uint32_t period, int open);

/* units.c */
enum { PAIR_SAME_THREAD, PAIR_ORDERED, PAIR_FREE, PAIR_FORWARD, PAIR_BACKWARD, PAIR_NESTED };
int atom__block_relation(const block *b, const block_unit *u, const block_unit *v);
int atom__block_unit_locks(block *b);
int atom__block_build_sites(block *b);

/* tuples.c */
int atom__block_build_tuples(block *b);

/* free_pairs.c, forced_pairs.c, scope_all.c: the three analyses */
int atom__block_free_pairs(block *b);
int atom__block_forced_pairs(block *b);
int atom__block_scope_all(block *b);

/* findings.c */
/* What a finding says, for its message. */
enum { FORCED_NESTED = 1, FORCED_READ_LATER, FORCED_OVERWRITTEN, FORCED_EARLY_READ,
       FORCED_FINAL_WRITE, FORCED_NO_SERIAL };
enum {
  SAYS_UP1 = 0, SAYS_UP2, SAYS_UP3, SAYS_UP4, /* a block of t0 and an access of t1 (000 §5.2) */
  SAYS_2BLOCK = 8,                           /* two 2-blocks (000 §5.3) */
  SAYS_FORCED = 16                           /* + FORCED_* (forced_pairs.c) */
};
int atom__block_finding(block *b, const char *kind, unsigned what, const uint32_t units[2],
                        const atom_ev *evs, size_t ne, uint64_t pattern);
int atom__block_group_emit(block *b);
int atom__block_group_state(const block *b, uint64_t lo, uint64_t hi, int *capped,
                            uint64_t *last);
int atom__block_report(block *b, const char *kind, const uint32_t *units, size_t nu,
                       const atom_ev *evs, size_t ne, const char *msg);
void atom__block_mark_bad(block *b, uint32_t u);
void atom__block_set_why(block *b, const char *msg);
int atom__block_undecided(block *b, const char *msg);
void atom__block_progress(block *b, uint64_t done);

/* A unit of end-of-run work done; every 4096 the session hears how far the analysis is
 * (done: the position in the work of the phases, b->work_total in all). Inline: the pair
 * loops tick once per pair they look at. */
static inline void atom__block_tick(block *b, uint64_t done) {
  if (++b->work & 4095) return;
  atom__block_progress(b, done);
}

#endif
