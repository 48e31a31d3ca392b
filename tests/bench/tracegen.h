/* Streaming generator of long synthetic traces for the benchmarks.
 *
 * Thread 1 forks threads 2..T, every thread then runs transactions, and thread 1 joins the
 * others at the end. Keys are small and dense: threads 1..T, variables 1..V, locks 1..L.
 *
 * TG_2PL: each transaction acquires one or two locks (in increasing order), accesses only
 * variables those locks protect (variable v belongs to lock v mod L), releases them and ends:
 * two-phase locking, so the trace is conflict serializable.
 * TG_RACY: each transaction accesses random variables without locks (violations abound).
 * TG_POOL: a thread pool. Lock 1 protects a work queue whose head is variable 1; variables
 * 2..5 are shared counters; the others form a table, variable v guarded by item lock
 * 2 + v mod (L - 1) (so L >= 2 and V >= 5 + L). Each transaction takes an item (acquire lock 1,
 * read and write variable 1, release), then runs its long body of about txn_len accesses in
 * segments of 8..39: half under one item lock (30 % writes to the lock's variables), half
 * plain (reads of random table variables, 1 in 16 a write), and ends with a read and a write
 * of one counter. Program locations repeat as in a loop: a small set per kind of access.
 *
 * alive K (0 < K < T-1): many threads, few at once. Thread 1 only forks and joins: it forks
 * threads in waves of K, the wave runs its share of the events (the body as above), each of
 * its threads finishes its transaction, and thread 1 joins the wave before forking the next.
 */
#ifndef ATOM_BENCH_TRACEGEN_H
#define ATOM_BENCH_TRACEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "atomicity/event.h"

enum { TG_2PL = 0, TG_RACY = 1, TG_POOL = 2 };

typedef struct tg_params {
  uint64_t events;  /* about this many events (the closing tail may add or save a few) */
  unsigned threads; /* >= 1 */
  unsigned vars;    /* >= 1; for 2PL >= locks */
  unsigned locks;   /* 2PL: >= 1; POOL: >= 2 */
  unsigned txn_len; /* accesses per transaction, >= 1 */
  int kind;         /* TG_2PL, TG_RACY or TG_POOL */
  uint64_t seed;
} tg_params;

typedef struct tg_gen tg_gen;

/* @return 0, or -1 (bad parameters: message in *why, or out of memory). */
int tg_new(tg_gen **out, const tg_params *p, const char **why);
/* tg_new with threads alive at once in waves of @p alive (0: all at once; see above). */
int tg_new_alive(tg_gen **out, const tg_params *p, unsigned alive, const char **why);
/* Fill up to @p cap events; @return how many (0 at the end of the trace). */
size_t tg_next(tg_gen *g, atom_event *buf, size_t cap);
void tg_free(tg_gen *g);

/** Parse a count: a plain integer or a 1e7-style shorthand. @return 0, or -1 if malformed. */
int tg_parse_u64(const char *s, uint64_t *out);

#endif
