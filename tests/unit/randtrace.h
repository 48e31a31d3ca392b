/* Seeded generator of random well-formed traces, for cross-checking the checkers.
 *
 * A trace is an array of atom_event in push order. Keys: threads 1..threads, variables
 * RT_VAR_BASE + i, locks RT_LOCK_BASE + i. Thread 1 is a root; every other thread is either a
 * root too (its first event has no FORK) or forked by a running thread. The result is
 * well-formed in the sense of doc/api.md ("Events"): END only inside a BEGIN, RELEASE only of a lock held
 * by the thread (possibly re-entrantly), ACQUIRE only of a free lock or one the thread holds,
 * FORK before every event of the child, JOIN after the child's last event (the child has
 * closed its transactions and released its locks by then) and nothing of the child after.
 *
 * Synchronizing accesses (doc/api.md "Synchronization") are off by default (sync_vars = 0):
 * with sync_vars > 0, some accesses go to the sync variables RT_SYNC_BASE + i instead, as
 * acquire READs and release WRITEs (or a READ|ACQUIRE then WRITE|RELEASE pair: a seq_cst
 * read-modify-write), never under the generator's locks. With sync_vars = 0 no random number
 * is drawn for them, so the traces of every other parameter set are unchanged.
 *
 * The same parameters and seed always give the same trace (own PRNG, no global state).
 */
#ifndef ATOM_TEST_RANDTRACE_H
#define ATOM_TEST_RANDTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "atomicity/event.h"

#define RT_VAR_BASE 100u
#define RT_LOCK_BASE 200u
#define RT_SYNC_BASE 300u
#define RT_MAX_THREADS 64u

/** Generation parameters. Probabilities are in [0, 1]. */
typedef struct rt_params {
  unsigned threads;   /**< 1..RT_MAX_THREADS */
  unsigned vars;      /**< >= 1 */
  unsigned locks;     /**< >= 0 */
  size_t events;      /**< events drawn before the optional closing tail */
  double p_root;      /**< a thread other than 1 is a root rather than forked */
  double p_begin;     /**< at depth 0: open a transaction (else a unary event) */
  double p_nest;      /**< inside a transaction: open a nested BEGIN */
  double p_end;       /**< inside a transaction: close the innermost level */
  double p_lock;      /**< do a lock operation (acquire, re-acquire or release) */
  double p_reacquire; /**< a lock operation re-acquires a lock already held */
  double p_fork;      /**< fork a child that was not started yet */
  double p_join;      /**< join a finished thread */
  double p_finish;    /**< a thread at depth 0 holding no lock stops (becomes joinable) */
  double p_write;     /**< an access is a write (else a read) */
  int leave_open;     /**< 1: leave transactions open and locks held at the end */
  /** 1: two-phase locking. Variable v is protected by lock v % locks (locks >= 1): an access in
   *  a transaction first acquires that lock and keeps it until the outermost END; an access
   *  outside is acq, access, rel. Random lock operations are off; FORK only outside
   *  transactions. Such traces are conflict serializable unless p_unprotected injects
   *  accesses without their lock. */
  int twopl;
  double p_unprotected; /**< twopl: an access skips its lock */
  double p_fence;       /**< an access is replaced by a FENCE (an event of the thread only) */
  unsigned sync_vars;   /**< sync variables (0: no synchronizing accesses) */
  double p_sync;        /**< an access goes to a sync variable (also in twopl: unprotected) */
  double p_rmw;         /**< a sync access is an acquire READ then a release WRITE */
  double p_plain;       /**< a sync access (or each half of a pair) carries no flag */
} rt_params;

/** Fill @p p with moderate defaults for small traces (2 threads, 2 vars, 1 lock, 20 events). */
void rt_params_default(rt_params *p);

/** Derive varied small-trace parameters from @p seed (2-4 threads, 1-4 vars, 0-2 locks, ...). */
void rt_params_random(rt_params *p, uint64_t seed, size_t max_events);

/** Turn on synchronizing accesses in @p p with varied parameters derived from @p seed (1-2
 *  sync variables, ...); the other parameters are untouched. */
void rt_params_sync(rt_params *p, uint64_t seed);

/**
 * Generate a trace. *@p out receives a malloc'd array (free with free()) of *@p n events.
 * @return 0, or -1 on bad parameters or out of memory.
 */
int rt_generate(const rt_params *p, uint64_t seed, atom_event **out, size_t *n);

/**
 * Generate a trace of fork/join waves (slot recycling in the vector clock checkers): thread 1
 * forks 1-3 children, they run random transactions, accesses (1-3 variables) and lock
 * operations (0-1 lock), close them, and thread 1 joins them before forking the next wave
 * (2-5 waves; new keys each time). Thread 1 may keep a transaction open across a wave, and
 * thread 2, unforked, may run across all of them and fork or join some waves in place of
 * thread 1. Same seed, same trace.
 * @return 0, or -1 out of memory (*@p out: malloc'd, free with free()).
 */
int rt_generate_waves(uint64_t seed, atom_event **out, size_t *n);

/** Write events in STD form (`t1|r(v100)|7`, `t2|w.rel(v300)|8`), one per line, to @p f. */
void rt_write_std(FILE *f, const atom_event *ev, size_t n);

/** A small deterministic PRNG (splitmix64), exposed for tests that need their own draws. */
typedef struct rt_rng {
  uint64_t state;
} rt_rng;

void rt_rng_seed(rt_rng *r, uint64_t seed);
uint64_t rt_rng_next(rt_rng *r);
/** Uniform in [0, n); n > 0. */
uint64_t rt_rng_below(rt_rng *r, uint64_t n);
/** 1 with probability @p p. */
int rt_rng_chance(rt_rng *r, double p);

#endif
