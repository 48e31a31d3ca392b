/* reduction checker: what its files share (internal).
 *
 * One concept per file:
 *   reduction.c       the vtable: arguments, the event dispatch, finish, freeing;
 *   classes.c         access classes and what the open transaction records of them;
 *   transactions.c    the end of a transaction: judged now, kept for finish, or pending;
 *   form.c            where (R+B)*N?(L+B)* first fails (000 Thm 4.1);
 *   report.c          the not-reducible report of a transaction;
 *   eraser.c          lockset=eraser: per-variable state online, pending transactions;
 *   races.c           lockset=precise: the race analysis at finish (000 Thm 4.3).
 *
 * Happens-before (fork/join and sync order) is support/periods: a segment of a thread (the
 * stretch between two of its FORK, JOIN, release writes and acquire reads that learn
 * something) is a period, named by its id. */
#ifndef ATOM_CHECKERS_REDUCTION_REDUCTION_H
#define ATOM_CHECKERS_REDUCTION_REDUCTION_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/checker.h"
#include "support/idindex.h"
#include "support/lockset.h"
#include "support/mem.h"
#include "support/periods.h"
#include "support/report_build.h"
#include "support/u64map.h"

#define NONE UINT32_MAX
#define NO_INDEX UINT64_MAX

enum { MODE_PRECISE = 0, MODE_ERASER = 1 };

/* held(e) is tracked up to this many locks per thread; locks taken beyond it are ignored, which
 * only makes accesses look less protected (more races, more reports: still sound) and keeps
 * the hash-consed sets small when a thread holds thousands of locks. */
#define HELD_MAX 64u

/* Default max_work: class comparisons of the precise race analysis, about a second. */
#define REDUCTION_MAX_WORK 100000000ull

/* ---------------------------------------------------------------- records */

/* An occurrence of a class in a transaction. */
typedef struct class_use {
  uint32_t key;   /* access class */
  uint32_t aux;   /* eraser, pending: its waiter node */
  uint32_t count; /* occurrences in the transaction (saturates) */
  uint8_t kind1, kind2, is_n, pad;
  uint64_t i1, l1; /* index and loc of the first occurrence */
  uint64_t i2, l2; /* of the second (count >= 2) */
} class_use;

/* A synchronization event of a transaction: a right mover (acquire, join) or its first left
 * mover (release, fork). */
typedef struct sync_event {
  uint64_t index, loc;
  uint32_t kind, target;
} sync_event;

/* A completed transaction kept for a later verdict. One block: header, entries, syncs. */
typedef struct kept_txn {
  uint32_t thread;
  uint32_t nent, nrs;
  uint32_t has_l;
  uint32_t slot;     /* eraser: its slot in the pending table */
  uint32_t nwait;    /* eraser: waiters still linked */
  uint64_t begin_index, begin_loc;
  sync_event first_l;
  class_use ent[];    /* then nrs sync_event */
} kept_txn;

static inline sync_event *txn_rs(kept_txn *t) { return (sync_event *)(void *)(t->ent + t->nent); }
static inline size_t txn_size(uint32_t nent, uint32_t nrs) {
  return sizeof(kept_txn) + (size_t)nent * sizeof(class_use) + (size_t)nrs * sizeof(sync_event);
}

/* An access class. */
typedef struct access_class {
  uint32_t var, thread;
  uint32_t seg;   /* precise: happens-before segment (period); eraser: exclusive segment uid
                     or NONE */
  uint32_t ls;    /* precise: held lockset; eraser: 0 */
  uint32_t write; /* precise: 1 for writes; eraser: 0 */
  uint32_t entry; /* its entry in the open transaction whose serial is stamp */
  uint64_t stamp;
  /* precise: the analysis at finish */
  uint32_t racy, partner;
  uint64_t first_index; /* its first access (named when it is a partner) */
  uint64_t first_loc;
} access_class;

typedef struct thread_state {
  atom__ls held;     /* 000 §4 held(e): the locks the thread holds now */
  /* the open transaction */
  uint32_t in_txn;
  uint32_t has_l, rs_done;
  uint64_t serial;
  uint64_t begin_index, begin_loc;
  sync_event first_l;
  class_use *ent;
  size_t nent, ent_cap;
  sync_event *rs;
  size_t nrs, rs_cap;
} thread_state;

/* eraser: per-variable state. */
typedef struct front_access {
  uint32_t thread, period; /* last access of a thread, not known to precede a later access */
} front_access;

typedef struct exclusive_segment {
  uint32_t thread, period; /* the segment */
  uint32_t uid;
  atom__ls ls;            /* ∩ held over its accesses */
  uint32_t wrote;
  uint32_t waiters;       /* sentinel of its waiter list */
} exclusive_segment;

typedef struct eraser_var {
  front_access *fr;
  uint32_t nfr, frcap;
  front_access wit[2]; /* earlier accesses of two threads that were concurrent with a later one */
  uint32_t nwit;
  exclusive_segment *al; /* alive exclusive segments, a happens-before chain, oldest first */
  uint32_t nal, alcap;
  uint32_t next_uid;
  atom__ls c;          /* ∩ held over the shared (non-exclusive) accesses */
  uint8_t c_top;       /* no shared access yet (c is "every lock") */
  uint8_t shared_write;
  uint8_t racy;
  uint8_t pad;
  uint32_t nx_waiters; /* sentinel of the waiters on shared accesses, or NONE */
  atom_ev racy_ev;     /* the access that made it racy (when racy) */
} eraser_var;

/* eraser: doubly-linked waiter lists with sentinels, in one pool. */
typedef struct waiter {
  uint32_t prev, next;
  uint32_t txn;   /* pending slot; NONE for a sentinel */
  uint32_t entry;
} waiter;

typedef struct reduction {
  atom_env *env;
  atom__mem *mem;    /* &own_mem */
  atom__mem own_mem; /* the instance's accounted allocator (atom__mem_init_env) */
  int mode;
  atom__lsets ls;
  thread_state *th;
  size_t th_cap;
  uint32_t n_th;
  uint64_t serial;
  /* access classes */
  access_class *key;
  size_t nkey, key_cap;
  atom__idindex class_of; /* hash of a class's fields -> the class (classes.c) */
  atom__periods periods; /* happens-before: fork/join and sync order */
  /* precise */
  kept_txn **txn;
  size_t ntxn, txn_cap;
  /* eraser */
  eraser_var *var;
  size_t var_cap;
  waiter *w;
  size_t nw, w_cap;
  uint32_t w_free;
  kept_txn **pend;
  size_t npend_slots, pend_cap, npend;
  uint32_t *pend_free;
  size_t npend_free, pend_free_cap;
  uint8_t *isn; /* scratch */
  size_t isn_cap;
  size_t done; /* precise: transactions judged at finish */
  int finished;
  uint64_t max_work;    /* precise: class comparisons the race analysis may make */
  uint64_t events;      /* 1 + the largest event index seen: where the end-of-run bound stops */
  uint64_t work;        /* comparisons made */
  uint32_t vars_cut;    /* variables whose comparisons the bound cut short */
  atom__report_build rb;
} reduction;

static inline int is_access(uint32_t kind) { return kind == ATOM_READ || kind == ATOM_WRITE; }

/* ---- the form (000 Thm 4.1, form.c) ------------------------------------------------------- */

enum { BREAK_NONE = 0, BREAK_TWO_NONMOVERS, BREAK_NONMOVER_AFTER_LEFT, BREAK_RIGHT_AFTER };

/* An event named in a report. */
typedef struct named_event {
  uint64_t index, loc;
  uint32_t kind, target;
  uint32_t key; /* for an access: its class */
} named_event;

typedef struct form_break {
  int what;
  named_event c, f; /* where the transaction commits (first non-mover or left mover), and where
                    the form breaks */
} form_break;

/* ---- shared steps (each defined in the file named) ------------------------------------------ */

/* Does segment a happen before segment b, or is it b? */
static inline int seg_precedes(const reduction *r, uint32_t a, uint32_t b) {
  return a == b || atom__periods_before(&r->periods, a, b);
}

/* precise: are the segments of two classes ordered by happens-before (either way)? */
static inline int seg_ordered(const reduction *r, const access_class *a, const access_class *b) {
  return seg_precedes(r, a->seg, b->seg) || atom__periods_before(&r->periods, b->seg, a->seg);
}

/* classes.c */
int atom__reduction_key_get(reduction *r, uint32_t var, uint32_t thread, uint32_t seg,
                            uint32_t ls, uint32_t w, uint32_t *out);
int atom__reduction_txn_note_access(reduction *r, thread_state *th, uint32_t k,
                                    const atom_ev *ev);
int atom__reduction_txn_note_sync(reduction *r, thread_state *th, const atom_ev *ev);

/* form.c */
form_break atom__reduction_first_break(const reduction *r, const class_use *ent, size_t nent,
                                       const sync_event *rs, size_t nrs, int has_l,
                                       const sync_event *first_l, const uint8_t *isn);

/* report.c */
int atom__reduction_report_break(reduction *r, const form_break *b, uint32_t thread,
                                 uint64_t begin_index, uint64_t begin_loc, uint64_t found_at);
int atom__reduction_grow_isn(reduction *r, size_t n);

/* transactions.c */
void atom__reduction_txn_reset(thread_state *th);
kept_txn *atom__reduction_txn_freeze(reduction *r, uint32_t t);
int atom__reduction_can_still_fail(reduction *r, const thread_state *th);
int atom__reduction_on_end(reduction *r, uint32_t t, const atom_ev *ev);

/* eraser.c */
void atom__reduction_pend_release(reduction *r, kept_txn *t);
int atom__reduction_eraser_is_n(const reduction *r, const access_class *k);
int atom__reduction_eraser_access(reduction *r, const atom_ev *ev, atom__ls h, uint32_t *seg);
int atom__reduction_pend_add(reduction *r, uint32_t t);

/* races.c */
int atom__reduction_race_analysis(reduction *r);

#endif
