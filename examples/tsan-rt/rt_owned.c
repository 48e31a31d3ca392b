/* Memory one thread owns: accesses buffered per thread without the event lock.
 *
 * An address that only one thread has accessed so far is owned by it: its accesses are
 * buffered in the thread's own ring (rt_thread.pend) without the event lock, and pushed later,
 * in program order, under the lock, by the first of:
 *   - the thread's next event of its own through the lock (a synchronization, a transaction's
 *     begin or end, an access to shared memory, its end): rt_push_flagged (rt_core.c) flushes
 *     first;
 *   - another thread's first access to any address the thread owns (publication): that thread
 *     marks the address shared (a CAS on its shadow word) and, under the lock, flushes the
 *     owner's ring before pushing its own access;
 *   - a full ring, and the end of the run.
 * Why the session still sees a linearization that the checkers judge as they would the
 * locked order (doc/tsan-rt.md, "How events are ordered"): a buffered access e of thread T is
 * pushed later than in the locked order, past events of other threads only. None of these
 * conflicts with e (no other thread has accessed e's address: the first one that does
 * publishes it and flushes e before its own access), and none is ordered after e by
 * happens-before (such an order needs a synchronization of T after e, which flushes e first).
 * Moving an event past independent events of other threads keeps every conflict edge, every
 * program-order edge and every transaction boundary, so the trace is equivalent (commuting
 * independent events) and the checkers, which judge equivalence classes, give the same
 * verdicts.
 * Dropped: within one segment (no event of T through the lock in between), a read of an owned
 * address T already accessed, or a write of one T already wrote. In a segment T's events are
 * only owned accesses, which have no edges from other threads, so the first access has every
 * edge the repeated one has (in: program order, out: the same future conflicts), and it is in
 * the same transaction or, outside transactions, reachable from everything that reaches the
 * repeated one. No cycle (violation) needs the repeated access.
 * Every other access (sizes over 8, read-modify-writes, ranges, atomics) is pushed under the
 * lock and marks its address shared first, so an owned address has had no event of another
 * thread. The shadow map is a fixed table of (address, owner) pairs, never shrunk; an address
 * that finds no slot is shared (the locked path), which is always exact. */
#include <sys/mman.h>

#include "rt.h"

int rt_owned;

#define SHADOW_BITS 22   /* 4 M slots of 16 bytes: 64 MB of address space, touched as used */
#define SHADOW_PROBE 32  /* slots tried before an address counts as shared */
#define OWN_SHARED UINT64_MAX /* owner word: 0 = nobody yet, id + 1 = that thread, or this */

/* Ownership is kept per 8-byte granule (RT_GRANULE_KEY; all its bytes have one owner): two
 * threads touching different bytes of one granule make it shared, which is only slower, never
 * inexact. */

typedef struct shadow_slot {
  uint64_t key;   /* RT_GRANULE_KEY of the granule; 0 = free; set once by CAS */
  uint64_t owner; /* 0 -> id + 1 by CAS (the first accessor), then -> OWN_SHARED by CAS */
} shadow_slot;

static shadow_slot *shadow; /* mmap'ed at initialization when the owned path is on */

/* The owner word of addr, inserting it when absent and @p insert; NULL when the address has
 * no slot (the table region is full: the address is shared). Lock-free. */
static uint64_t *shadow_word(uint64_t addr, int insert) {
  size_t mask = ((size_t)1 << SHADOW_BITS) - 1;
  uint64_t key = RT_GRANULE_KEY(addr);
  /* Neighbouring granules in neighbouring slots: an array walked in order stays in a few
   * cache lines of the table (folding the high bits in keeps regions far apart from meeting
   * slot for slot). */
  size_t i = (size_t)(key ^ (key >> SHADOW_BITS) ^ (key >> (2 * SHADOW_BITS))) & mask;
  for (int n = 0; n < SHADOW_PROBE; n++, i = (i + 1) & mask) {
    shadow_slot *s = &shadow[i];
    uint64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
    if (k == key) return &s->owner;
    if (k == 0) {
      if (!insert) return NULL;
      if (__atomic_compare_exchange_n(&s->key, &k, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
          k == key)
        return &s->owner;
    }
  }
  return NULL;
}

/* Mark addr shared. @return the previous owner (id + 1) when it was another thread's, whose
 * buffered accesses the caller must flush under the lock before pushing its own; else 0. */
static uint64_t shadow_share(uint64_t *w, uint64_t me) {
  uint64_t cur = __atomic_load_n(w, __ATOMIC_ACQUIRE);
  while (cur != OWN_SHARED &&
         !__atomic_compare_exchange_n(w, &cur, OWN_SHARED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
  return cur != OWN_SHARED && cur != 0 && cur != me ? cur : 0;
}

/* Push t's buffered accesses, in order (caller holds the lock; t is the calling thread or a
 * live thread found under the lock). The ring has one producer (t) and one consumer at a time
 * (whoever holds the lock). */
void rt_pend_flush(rt_thread *t) {
  uint64_t h = __atomic_load_n(&t->pend_head, __ATOMIC_RELAXED);
  uint64_t e = __atomic_load_n(&t->pend_tail, __ATOMIC_ACQUIRE);
  if (h == e) return;
  for (; h != e; h++) {
    const struct rt_pend *p = &t->pend[h & (RT_PEND - 1)];
    rt_push_event(p->kind, 0, t->id, p->addr, p->loc);
  }
  __atomic_store_n(&t->pend_head, h, __ATOMIC_RELEASE);
}

/* Flush the buffer of the live thread whose owner word is @p owner (caller holds the lock). A
 * thread that ended flushed its own buffer. */
void rt_flush_owner(uint64_t owner) {
  for (rt_thread *t = rt_threads(); t; t = t->next)
    if (t->id + 1 == owner) {
      rt_pend_flush(t);
      return;
    }
}

/* Before a locked push of an access to addr by t (caller holds the lock): the address becomes
 * shared, and its owner's buffered accesses go first. */
void rt_share_locked(rt_thread *t, uint64_t addr) {
  if (!rt_owned) return;
  uint64_t *w = shadow_word(addr, 1);
  uint64_t prev = w ? shadow_share(w, t->id + 1) : 0;
  if (prev) rt_flush_owner(prev);
}

/* rt_owned_access (rt.h) once the granule is not in t's cache of shared ones. */
int rt_owned_lookup(rt_thread *t, uint64_t addr, uint64_t key, int write, uint64_t pc,
                    uint64_t *prev) {
  *prev = 0;
  size_t sc = (size_t)key & (RT_SHARED_CACHE - 1);
  uint64_t *w = shadow_word(addr, 1);
  if (!w) return 0;
  uint64_t me = t->id + 1, cur = __atomic_load_n(w, __ATOMIC_ACQUIRE);
  if (cur == 0 &&
      __atomic_compare_exchange_n(w, &cur, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    cur = me;
  if (cur != me) {
    if (cur != OWN_SHARED) *prev = shadow_share(w, me);
    t->shared[sc] = key;
    return 0;
  }
  size_t slot = (size_t)((addr >> 2) ^ (addr >> 12)) & (RT_SEEN - 1);
  if (t->seen[slot].addr == addr && t->seen[slot].seg == t->seg) {
    if (!write || t->seen[slot].write) {
      __atomic_store_n(&t->n_repeats, t->n_repeats + 1, __ATOMIC_RELAXED); /* read at the end */
      return 1;
    }
    t->seen[slot].write = 1;
  } else {
    t->seen[slot].addr = addr;
    t->seen[slot].seg = t->seg;
    t->seen[slot].write = (uint64_t)write;
  }
  rt_busy = 1;
  uint64_t loc = rt_stack_loc(t, pc);
  uint64_t tail = t->pend_tail;
  if (tail - __atomic_load_n(&t->pend_head, __ATOMIC_ACQUIRE) == RT_PEND) {
    rt_lock(); /* full: empty it (not a new segment: nothing new is known) */
    rt_pend_flush(t);
    rt_unlock();
  }
  struct rt_pend *p = &t->pend[tail & (RT_PEND - 1)];
  p->addr = addr;
  p->loc = loc;
  p->kind = write ? ATOM_WRITE : ATOM_READ;
  __atomic_store_n(&t->pend_tail, tail + 1, __ATOMIC_RELEASE);
  rt_busy = 0;
  return 1;
}

/* Every live thread's buffered accesses (the end of the run; caller holds the lock). */
void rt_owned_flush_all(void) {
  for (rt_thread *t = rt_threads(); t; t = t->next) rt_pend_flush(t);
}

/* The owned path at initialization: on unless off by option, recording (a recording keeps
 * every access) or perturbing the schedule (which watches every access). */
void rt_owned_setup(const rt_options *o) {
  if (!o->owned || o->record || o->schedule == RT_SCHEDULE_PERTURB) return;
  size_t bytes = sizeof(shadow_slot) << SHADOW_BITS;
  void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (m == MAP_FAILED) return; /* every access through the lock: slower, as exact */
  shadow = m;
  rt_owned = 1;
}
