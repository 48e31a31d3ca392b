/* aerodrome: conflict serializability by vector clocks (paper 003, Mathur & Viswanathan,
 * "Atomicity Checking in Linear Time using Vector Clocks", Algorithm 1 and §4.3).
 *
 * Two variants share the event plumbing:
 *
 *  variant=basic      Algorithm 1 as printed: a read clock R_{t,x} per thread and variable,
 *                     full ⊑ comparisons against C_t^▷, and END scans every thread, lock,
 *                     variable and read clock (lines 37-46).
 *  variant=optimized  (default) §4.3: one read clock R_x and one check-read clock chR_x per
 *                     variable, component tests instead of ⊑, and an END that visits only the
 *                     clocks that learned of the ending transaction (see "Optimized END").
 *
 * The component test. Values of component t originate only in C_t, and C_t(t) first takes the
 * value b = C_t^▷(t) at t's BEGIN (003 Alg. 1 line 35). Every other clock gets component t
 * only by ⊔ or := from a clock derived from C_t, always taking the whole clock. So for any
 * clock X: X(t) >= b  iff  X ⊒ (C_t at or after the BEGIN) ⊒ C_t^▷. Hence C_t^▷ ⊑ X iff
 * C_t^▷(t) <= X(t), an O(1) test (doc/checkers/aerodrome.md). chR_x = ⊔_u R_{u,x}[0/u] is never a source of
 * other clocks; chR_x(t) = max over u != t of R_{u,x}(t), so "some R_{u,x} with u != t knows
 * t's transaction" (lines 30-31) is chR_x(t) >= b.
 *
 * Optimized END. Lines 41-46 update every clock X with C_t^▷ ⊑ X. A clock learns t's open
 * transaction T only when it is assigned or joined from a clock that knows T:
 *   - W_x := C_u (write), R_x ⊔= C_u (read; chR_x rides along since chR_x ⊑ R_x),
 *     L_l := C_u (release): the clock learns the open transactions C_u knows;
 *   - X ⊔= C_v at END(v): X learns the open transactions C_v knows.
 * Each thread u keeps the list of open transactions its clock C_u knows ("known"): T of t
 * enters it when a join raises C_u(t) across b_t (tested inside the join loop, which is O(T)
 * anyway); u's own open transaction is not in the list (the stores test it first, as most
 * threads know no other); entries carry t's transaction number and are validated
 * lazily (T ended = stale). When u stores C_u into a variable or lock clock X that did not
 * know T yet, X is appended to T's "learned" list. Invariant: a clock that knows an open T is
 * in T's learned list. END(t) visits T's list only and, for each X it updates, registers X
 * with the other open transactions C_t knows. Thread clocks are not scanned either: a thread
 * clock learns T only in thread_join, whose crossing test appends the learner to T's list of
 * learner threads (lthr), slot or no slot. The stores are monotone -- W_x := C_u comes after C_u ⊔= W_x (or
 * W_x ⊑ C_u, u the last writer, see below), L_l := C_u after u's acquire joined L_l, and END
 * only joins -- so a clock never forgets T once it knows it: each clock is registered at most
 * once per transaction and the lists stay as small as the set of clocks T reached. (END still
 * re-checks X(t) >= b: an event dropped for lack of memory can break monotonicity.) If a list
 * cannot grow (out of memory), the transaction falls back to the full scan of lines 41-46 at
 * its END, which is always correct.
 *
 * Read clocks at END (optimized). Lines 45-46 update each R_{u,x} that knows T; we update R_x
 * and chR_x (⊔= C_t) when R_x knows T. For chR_x this is exact except in one case: the only
 * reader that knows T is a thread w whose open transaction W is known by C_t; then chR_x(w)
 * claims that a reader other than w knows W. But then C_w ⊒ R_{w,x} knows T and C_t knows W,
 * so lines 38-40 declare the violation between T and W at this very END. The variants agree
 * up to the first violation and may differ only in later reports about a transaction that
 * was already reported.
 *
 * Unary transactions (003 §4.1.4). Events outside BEGIN..END are transactions of one event;
 * Algorithm 1 never checks them (no active transaction), and none needs END propagation: a
 * path through a one-event transaction enters and leaves at the same event, so ≤CHB (what C_t
 * tracks) is all there is. One case of Algorithm 1 is wrong though: JOIN(t, u) of a thread u
 * that performed no event at all. Line 22 joins C_u, which holds C_t (from the FORK, line 20)
 * or whatever the forking thread knew, and would declare T (t's open transaction) in a cycle
 * with itself, or give t knowledge no event of u carries; but with no event of u there is no
 * conflict edge from u to the join (003 §2, conflict (c)). We skip such a JOIN entirely. A
 * thread with only BEGIN/END events has a (empty) transaction, which does conflict with the
 * fork and the join, so it counts as having events.
 *
 * Provenance (for reports that name every edge of the cycle). While T (thread t) is open,
 * component t of every clock is at most b_t, so a clock learns T exactly once (its component
 * reaches b_t) and keeps the knowledge until T ends. At that moment we record how, as an
 * immutable node (pnode): the edge it came over (EDGE: from the source
 * clock's event to the receiving event, plus the source's own node), a fork (FORK), or an END
 * that passed it on (END: T →* V from V's clock, V →* X from X's record of V). Thread clocks
 * keep one node per component (prov); R_x and chR_x keep per component the read that taught
 * them: T's own read as a small record (rlog_ent, rown), another thread's read as a node (HOLD), or an
 * END node; W_x, L_l and R_{u,x} are copies of their storer's clock at the store event, so
 * they only keep what they learn at ENDs after it (ends). A node is about one transaction
 * instance (of, about = its number): a slot about an older instance reads as empty. At a
 * violation, walk() follows the nodes from the victim's transaction to the closing edge and
 * yields the cycle's edges; two transactions of one thread on the path are joined by program
 * order. Nodes are made only when a clock learns an open transaction, never on the paths
 * that learn nothing. A record about an ended T stays in its slot until the slot is next
 * written (it reads as empty: `about`), so an END does not walk the records of the clocks T
 * reached; memory stays bounded by the slots (one per clock component). The records of a
 * variable about component c sit side by side (vslot), and "R_x learned T from T's own read"
 * goes to T's thread's read log (rown_origin), the cheapest place to write it. Throughput
 * matters here (the budget is 10 % of the checker without provenance): the provenance code is
 * kept out of line (AERO_RARE), and the event handlers build an event's description only when
 * a record needs it.
 *
 * Slots (optimized variant). A clock has one component per *slot*, not per thread, and a
 * transaction holds one only while a clock other than its thread's may know it: from its
 * publication (publish(): the first event that stores or joins C_t into another clock while
 * it is open -- a write, a read, a release, a fork) to its END. Why this is exact:
 *   - Every test on component s is "X(s) >= b" for the transaction open now on s (knows(),
 *     the join loop's crossing test with open_b[s], END, the registrations, the sweeps).
 *     Before its publication no clock but C_t derives from C_t after T's BEGIN, so nothing
 *     knows T and every test about T is false: b = NO_TXN, above every value, says so.
 *   - At the publication T takes slot s with b = top(s) + 1: values of s originate only at
 *     publications (C_t(s) := b, line 35 done late), so top(s), the last b given on s, is the
 *     largest value s ever had anywhere. Values an earlier owner left in any clock are below
 *     b: they read as "knows nothing of T", which is true. Knowledge of T then travels only in
 *     clocks derived from C_t after the publication, so X(s) >= b iff X knows T.
 *   - The slot: t's own if it still owns one (kept after its END: sticky); a joined thread's
 *     (free list); a new one below the width `slots`; the slot of a thread with nothing
 *     published (stolen, from the queue stq, oldest first, validated when taken); else a new
 *     one (exactness before width). While the width is below `slots` nothing is stolen, so a
 *     thread owning a slot publishes at its BEGIN, as Algorithm 1 does.
 *   - A learner may own no slot: END finds the thread clocks that know T by T's learner list.
 *   - Transaction numbers (seq) grow per thread and, at a publication, past every number
 *     published on the slot, so records kept per slot and named by number (provenance, rown)
 *     never match an earlier owner; ends_get and the known lists name the thread as well.
 *     Recorded events keep real thread numbers, so reports name the right threads. A joined
 *     thread keeps its provenance records and last event: a stored clock it wrote (W_x, L_l)
 *     may still name it. A joined thread performs no event again (ATOM_EJOINED; the session
 *     ends its open transaction before the JOIN), so its slot goes to the free list.
 *   - END reports in the order of ranks (athread.rank), the slots threads would own if every
 *     thread alive owned one: reports are deduplicated against their thread's last one, so
 *     the order decides which repetitions count, and this keeps them as they were.
 * The basic variant keeps slot = thread number (R_{u,x} is per thread there anyway).
 *
 * The lastWThr_x / lastRelThr_l shortcuts (lines 24, 28, 14) are exact: W_x ⊑ C_t while t is
 * the last writer (END joins W_x ⊔= C_v only if W_x knows V, and then C_t knows V too and is
 * joined with C_v at lines 38-40), and likewise for locks. The optimized variant adds more
 * shortcuts of the same kind (skip joins whose result is known, skip copies of an unchanged
 * clock); each is noted where it is taken.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/aerodrome/aerodrome_internal.h"
#include "checkers/builtin.h"
#include "support/argval.h"
#include "support/mem.h"
#include "support/vclock.h"

/* The last event of thread u (it has one). */
static aev last_aev(const aero *a, uint32_t u) {
  const athread *th = &a->thr[u];
  aev r = {thread_txn(a, u), th->last.index, th->last.loc, th->last.kind, th->last.target};
  return r;
}

/* ------------------------------------------------------------------ growth */

int atom__aero_ensure_threads_slow(aero *a, uint32_t id) {
  if (id < a->n_thr) return 0;
  if (id >= a->max_threads)
    return atom_env_error(a->env, ATOM_ELIMIT,
                          "thread number %u is beyond max_threads=%u (aerodrome keeps a record "
                          "for each thread it has seen); its events are not checked",
                          id + 1, a->max_threads);
  uint32_t want = atom_env_count(a->env, ATOM_SPACE_THREAD);
  if (want <= id) want = id + 1;
  if (want > a->max_threads) want = a->max_threads;
  if (ATOM__GROW(a->mem, a->thr, a->thr_cap, want)) return ATOM_ENOMEM;
  while (a->n_thr < want) {
    uint32_t u = a->n_thr;
    athread *th = &a->thr[u];
    memset(th, 0, sizeof *th);
    atom__vc_init(&th->c);
    atom__vc_init(&th->cb);
    th->slot = NIL; /* given at its fork or first event (take_slot) */
    th->seen_bit = SEEN_BIT(u);
    th->b = NO_TXN; /* no open transaction (knows()) */
    a->n_thr = u + 1;
  }
  return 0;
}

/* Room for one more slot: the per-slot tables (open_b, slots, the steal queue). 0 or
 * ATOM_ENOMEM (nothing changed but capacities). */
static int grow_slots(aero *a, uint32_t s) {
  if (s >= UINT32_MAX - 3) return ATOM_ENOMEM;
  if (ATOM__GROW(a->mem, a->open_b, a->open_cap, (size_t)s + 1) ||
      ATOM__GROW(a->mem, a->slots, a->slots_cap, (size_t)s + 1))
    return ATOM_ENOMEM;
  if (a->basic || a->stq_cap >= a->slots_cap) return 0;
  /* the ring holds each slot at most once: as large as the slot table, unwrapped on growth */
  uint32_t *q = atom__mem_alloc(a->mem, a->slots_cap * sizeof *q);
  if (!q) return ATOM_ENOMEM;
  for (uint32_t i = 0; i < a->stq_n; i++) q[i] = a->stq[(a->stq_head + i) % a->stq_cap];
  atom__mem_free(a->mem, a->stq, a->stq_cap * sizeof *a->stq);
  a->stq = q;
  a->stq_cap = a->slots_cap;
  a->stq_head = 0;
  return 0;
}

/* A new slot s = n_slot (room made by grow_slots). */
static void new_slot(aero *a, uint32_t s) {
  a->slots[s] = (aslot){NIL, 0, 0, NIL, 0};
  a->open_b[s] = NO_TXN;
  a->n_slot = s + 1;
}

/* Slot s (owned) goes to the back of the steal queue unless it is in it. */
static void queue_slot(aero *a, uint32_t s) {
  if (a->slots[s].queued) return;
  a->slots[s].queued = 1;
  a->stq[(a->stq_head + a->stq_n++) % a->stq_cap] = s;
}

/* Thread u (at its fork or first event) is considered for a slot. The basic variant gives it
 * slot u (003 Alg. 1 line 3: C_u := ⊥[1/u], C_u^▷ := ⊥). The optimized one gives it a slot
 * only if that is free: a slot of a joined thread, or a new one while the width is below the
 * argument slots; else it owns none until it publishes a transaction (SLOT_NONE). A slot
 * taken here carries no transaction yet (its owner's clock is not touched: only a
 * publication gives the component a value), so it can be stolen at once. */
int atom__aero_take_slot_slow(aero *a, uint32_t u) {
  athread *th = &a->thr[u];
  if (!a->basic) {
    /* its rank first (see athread.rank): the free list's head, or a new one */
    if (a->free_rank == NIL && a->n_rank >= a->rank_cap &&
        ATOM__GROW(a->mem, a->rank_next, a->rank_cap, (size_t)a->n_rank + 1))
      return ATOM_ENOMEM;
    uint32_t s = a->free_slot;
    if (s == NIL && a->n_slot < a->max_slots) {
      s = a->n_slot;
      if (grow_slots(a, s)) return ATOM_ENOMEM;
      new_slot(a, s);
    } else if (s != NIL) {
      a->free_slot = a->slots[s].next_free;
    }
    th->slot = s == NIL ? SLOT_NONE : s;
    if (a->free_rank != NIL) {
      th->rank = a->free_rank;
      a->free_rank = a->rank_next[th->rank];
    } else {
      th->rank = a->n_rank++;
    }
    if (s != NIL) {
      a->slots[s].owner = u;
      a->slots[s].next_free = NIL;
      queue_slot(a, s);
    }
    a->clocks++;
    return 0;
  }
  uint32_t s = u;
  /* all the memory first: a failure changes nothing */
  if (reserve(a, &th->c, s + 1) || grow_slots(a, s)) return ATOM_ENOMEM;
  for (uint32_t k = a->n_slot; k <= s; k++) new_slot(a, k);
  aslot *sl = &a->slots[s];
  atom__vc_set(a->mem, &th->c, s, sl->top + 1); /* cannot fail: reserved */
  th->slot = s;
  th->seq = sl->seq;
  sl->owner = u;
  a->clocks += 2;
  return 0;
}

/* The slot thread t (owning none) publishes on: a free one, else a new one below the width
 * `slots`, else one stolen from a thread without a published open transaction, else a new
 * one anyway (exactness before the width). NIL: out of memory. */
static uint32_t pick_slot(aero *a, uint32_t t) {
  uint32_t s = a->free_slot;
  if (s != NIL) {
    a->free_slot = a->slots[s].next_free;
    return s;
  }
  if (a->n_slot >= a->max_slots)
    while (a->stq_n) { /* the oldest queued slot whose owner has nothing published */
      s = a->stq[a->stq_head];
      a->stq_head = (uint32_t)((a->stq_head + 1) % a->stq_cap);
      a->stq_n--;
      a->slots[s].queued = 0;
      uint32_t o = a->slots[s].owner;
      if (o == NIL || o == t || a->thr[o].pub) continue; /* free (listed), or in use */
      a->thr[o].slot = SLOT_NONE; /* stolen: see "Slots" */
      return s;
    }
  s = a->n_slot;
  if (grow_slots(a, s)) return NIL;
  new_slot(a, s);
  return s;
}

/* Publication (optimized variant): thread t's open transaction T is about to become visible
 * to another clock. Until now no clock but C_t could know T, so every test about T was false,
 * as it is without a component for it. T now takes a slot s (its own if it still owns one,
 * see pick_slot) and the BEGIN value b = top(s) + 1, above every value s ever had anywhere:
 * any value of s in any clock reads as "knows nothing of T", which is true. C_t(s) := b and
 * open_b[s] := b, as 003 Alg. 1 line 35 does at the BEGIN. Its number continues past every
 * number published on s before, so that records kept per slot (provenance) about earlier
 * owners never match it. 0, or an error before any change. */
static int publish_on(aero *a, uint32_t t, uint32_t s);

int atom__aero_publish_slow(aero *a, uint32_t t) {
  athread *th = &a->thr[t];
  uint32_t s = th->slot;
  if (s >= a->n_slot) {
    /* all the memory first: a new slot, then the clock's room; a slot taken but unused
     * (clock room missing) stays owned and queued, as if taken at the first event */
    s = pick_slot(a, t);
    if (s == NIL) return ATOM_ENOMEM;
    th->slot = s;
    a->slots[s].owner = t;
    a->slots[s].next_free = NIL;
  }
  return publish_on(a, t, s);
}

/* The publication of t's open transaction on slot s, which t owns. */
static inline int publish_on(aero *a, uint32_t t, uint32_t s) {
  athread *th = &a->thr[t];
  aslot *sl = &a->slots[s];
  if (sl->top >= ATOM__VC_MAX - 2 || sl->seq == UINT32_MAX)
    return atom_env_error(a->env, ATOM_ELIMIT, "clock slot %" PRIu32 " served more than %" PRIu32
                          " transactions (thread %" PRIu32 ")", s,
                          (uint32_t)(ATOM__VC_MAX - 3), t);
  if (reserve(a, &th->c, s + 1)) {
    queue_slot(a, s);
    return ATOM_ENOMEM;
  }
  atom__vc_t b = ++sl->top;
  atom__vc_set(a->mem, &th->c, s, b); /* cannot fail: reserved */
  th->ver++;
  th->b = b;
  th->seq = max_u32(th->seq, sl->seq + 1);
  sl->seq = th->seq;
  th->pub = 1;
  th->nslot_b = a->n_slot;
  th->n_lthr = 0;
  a->open_b[s] = b;
  a->n_active++;
  return 0;
}

/* Thread u's clock learned o's open transaction: u goes to o's learner list (the inline
 * append of thread_join found it full). If the list cannot grow, o's END scans every thread. */
AERO_RARE void atom__aero_note_learner(aero *a, uint32_t o, uint32_t u) {
  athread *ot = &a->thr[o];
  if (ot->overflow) return;
  if (ATOM__GROW(a->mem, ot->lthr, ot->cap_lthr, ot->n_lthr + 1)) {
    ot->overflow = 1;
    return;
  }
  ot->lthr[ot->n_lthr++] = u;
}

/* Room for slot s in th's absorbed-version cache (absorb()): as wide as the slots in use. */
AERO_RARE void atom__aero_absorb_grow(aero *a, athread *th, uint32_t s) {
  size_t cap = th->abs_cap, want = min_u32(max_u32(s + 1, a->n_slot), ABS_MAX_SLOTS);
  if (ATOM__GROW(a->mem, th->abs, cap, want)) return;
  for (size_t k = th->abs_cap; k < cap; k++) th->abs[k] = (seenv){NIL, 0};
  th->abs_cap = (uint32_t)cap;
}

/* Thread u was joined: it performs no event again (the session rejects them, ATOM_EJOINED), so
 * its clock is never read again as a thread clock; its slot, if it owns one, goes to the free
 * list (optimized variant), its counters (top, seq) staying with the slot. Its last event and
 * provenance records stay: stored clocks it wrote may still name it in explanations. */
static void release_slot(aero *a, uint32_t u) {
  athread *th = &a->thr[u];
  uint32_t s = th->slot;
  th->slot = SLOT_GONE;
  if (s == NIL || s == SLOT_GONE) return; /* it never had an event, or was released already */
  if (a->basic) return;
  a->rank_next[th->rank] = a->free_rank;
  a->free_rank = th->rank;
  if (s < a->n_slot) {
    aslot *sl = &a->slots[s];
    if (th->pub) { /* (the session ends a transaction before the JOIN: not reached) */
      a->open_b[s] = NO_TXN;
      a->n_active--;
    }
    sl->owner = NIL;
    sl->next_free = a->free_slot;
    a->free_slot = s;
  }
  th->active = th->pub = 0;
  th->b = NO_TXN;
  atom__mem *m = a->mem;
  atom__vc_free(m, &th->c);
  atom__mem_free(m, th->known, th->cap_known * sizeof *th->known);
  atom__mem_free(m, th->learned, th->cap_learned * sizeof *th->learned);
  atom__mem_free(m, th->lthr, th->cap_lthr * sizeof *th->lthr);
  atom__mem_free(m, th->rlog, th->cap_rlog * sizeof *th->rlog);
  atom__mem_free(m, th->abs, th->abs_cap * sizeof *th->abs);
  th->abs = NULL;
  th->abs_cap = 0;
  th->known = NULL;
  th->learned = NULL;
  th->lthr = NULL;
  th->rlog = NULL;
  th->n_known = th->cap_known = th->n_learned = th->cap_learned = 0;
  th->n_lthr = th->cap_lthr = 0;
  th->n_rlog = th->cap_rlog = 0;
  a->clocks--;
}

/* Variable clocks. R_x and chR_x are read and joined together (a read joins C_t into both, an
 * END that updates R_x updates chR_x, a write reads chR_x(t) and joins R_x): they live in one
 * block of 2 * cap components (cap a whole number of chunks, support/vclock.h), R_x's storage
 * first, so that they share cache lines and one allocation. The block belongs to R_x (r.p), both clocks
 * keep cap equal, var_reserve_r is their only growth, var_free frees it. W_x is a clock of its
 * own (a variable only written pays for no read clocks). Each is as wide as the slots in use
 * when it first grows: the widest clock it can receive, so growth is rare.
 *
 * With many variables the sweeps (atom__aero_var_sweep) drop most clocks and the next access
 * to each allocates them again, at a high rate and of few sizes (W_x: cap components, R_x's
 * block: 2 * cap). So a dropped block goes to a free list for its size (up to VFREE_COMP
 * components), zeroed where its clocks were used (the rest is zero already: the invariant of
 * vclock.h), and an allocation takes from that list before the allocator and zeroes nothing
 * but the link. The blocks on the lists stay allocated, so the checker's bytes count them. The
 * lists are bounded: a sweep lists what it drops, then frees listed blocks until live clock
 * bytes plus listed bytes are within the new sweep_at, the level at which the next sweep runs
 * anyway; other drops (a block outgrown) are listed only within that bound. So the lists do
 * not raise the peak the sweep schedule allows. variant=basic (no sweeps) and sweep=1 keep
 * none. */

/* A zeroed block of n components (the caller's to account in vclk_bytes), or NULL. */
static atom__vc_t *vblk_get(aero *a, uint32_t n) {
  size_t bytes = (size_t)n * sizeof(atom__vc_t);
  if (n <= VFREE_COMP && a->vfree[n]) {
    atom__vc_t *p = a->vfree[n];
    memcpy(&a->vfree[n], p, sizeof(void *)); /* the link, in the block's first bytes */
    memset(p, 0, sizeof(void *));
    a->vfree_bytes -= bytes;
    return p;
  }
  atom__vc_t *p = atom__mem_alloc(a->mem, bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

/* Give back block p of n components, already taken out of vclk_bytes; its components at and
 * past `used` are zero (the caller zeroes the others: see vblk_zero). */
static void vblk_put(aero *a, atom__vc_t *p, uint32_t n, uint32_t used) {
  size_t bytes = (size_t)n * sizeof(atom__vc_t);
  if (!p) return;
  if (n > VFREE_COMP || n * sizeof(atom__vc_t) < sizeof(void *) || a->basic ||
      (!a->sweeping && a->vclk_bytes + a->vfree_bytes + bytes > a->sweep_at)) {
    atom__mem_free(a->mem, p, bytes);
    return;
  }
  memset(p, 0, (size_t)used * sizeof(atom__vc_t));
  memcpy(p, &a->vfree[n], sizeof(void *));
  a->vfree[n] = p;
  a->vfree_bytes += bytes;
}

/* Free the listed blocks until the lists hold at most `keep` bytes. */
static void vblk_trim(aero *a, size_t keep) {
  for (uint32_t n = VFREE_COMP; n > 0 && a->vfree_bytes > keep; n--)
    while (a->vfree[n] && a->vfree_bytes > keep) {
      void *p = a->vfree[n];
      memcpy(&a->vfree[n], p, sizeof(void *));
      a->vfree_bytes -= (size_t)n * sizeof(atom__vc_t);
      atom__mem_free(a->mem, p, (size_t)n * sizeof(atom__vc_t));
    }
}

/* R_x's block (R_x and chR_x, of cap c each) to the free list; both clocks are then ⊥. */
static void rblk_drop(aero *a, avar *v) {
  if (v->r.cap) {
    uint32_t c = v->r.cap;
    atom__vc_t *p = v->r.p;
    a->vclk_bytes -= (size_t)c * 2 * sizeof(atom__vc_t);
    memset(p + c, 0, (size_t)v->chr.len * sizeof(atom__vc_t)); /* chR_x's used part */
    vblk_put(a, p, 2 * c, v->r.len);
  }
  atom__vc_init(&v->r);
  atom__vc_init(&v->chr);
}

/* W_x's block to the free list; W_x is then ⊥. */
static void wblk_drop(aero *a, avar *v) {
  if (v->w.cap) {
    a->vclk_bytes -= (size_t)v->w.cap * sizeof(atom__vc_t);
    vblk_put(a, v->w.p, v->w.cap, v->w.len);
  }
  atom__vc_init(&v->w);
}

AERO_RARE int atom__aero_rclk_grow(aero *a, avar *v, uint32_t n) {
  uint32_t old = v->r.cap;
  uint64_t ncap = n;
  if (ncap < (uint64_t)old + old / 2) ncap = (uint64_t)old + old / 2;
  ncap = (ncap + ATOM__VC_CHUNK - 1) / ATOM__VC_CHUNK * ATOM__VC_CHUNK; /* whole chunks */
  if (ncap > UINT32_MAX / 2 || ncap * 2 > SIZE_MAX / sizeof(atom__vc_t)) return ATOM_ENOMEM;
  atom__vc_t *blk = vblk_get(a, (uint32_t)ncap * 2);
  if (!blk) return ATOM_ENOMEM;
  if (v->r.len) memcpy(blk, v->r.p, (size_t)v->r.len * sizeof(atom__vc_t));
  if (v->chr.len) memcpy(blk + ncap, v->chr.p, (size_t)v->chr.len * sizeof(atom__vc_t));
  uint32_t rlen = v->r.len, clen = v->chr.len;
  rblk_drop(a, v);
  v->r.p = blk;
  v->chr.p = blk + ncap;
  v->r.cap = v->chr.cap = (uint32_t)ncap;
  v->r.len = rlen;
  v->chr.len = clen;
  a->vclk_bytes += (size_t)ncap * 2 * sizeof(atom__vc_t);
  return 0;
}

/* The growth of atom__vc_reserve (doubling), through the free lists. */
AERO_RARE int atom__aero_wclk_grow(aero *a, avar *v, uint32_t n) {
  uint64_t ncap = (uint64_t)v->w.cap * 2;
  if (ncap < n) ncap = n;
  ncap = (ncap + ATOM__VC_CHUNK - 1) / ATOM__VC_CHUNK * ATOM__VC_CHUNK; /* whole chunks */
  if (ncap > ATOM__VC_CAP_MAX || ncap > SIZE_MAX / sizeof(atom__vc_t)) return ATOM_ENOMEM;
  atom__vc_t *blk = vblk_get(a, (uint32_t)ncap);
  if (!blk) return ATOM_ENOMEM;
  uint32_t len = v->w.len;
  if (len) memcpy(blk, v->w.p, (size_t)len * sizeof(atom__vc_t));
  wblk_drop(a, v);
  v->w.p = blk;
  v->w.cap = (uint32_t)ncap;
  v->w.len = len;
  a->vclk_bytes += (size_t)ncap * sizeof(atom__vc_t);
  return 0;
}

/* Whether clock x knows some open transaction: the only thing any test asks of a variable
 * clock (see "Dropping variable clocks"). */
static int knows_open(const aero *a, const atom__vc *x) {
  const atom__vc_t *d = atom__vc_cdata(x);
  for (uint32_t s = 0; s < x->len; s++)
    if (d[s] >= a->open_b[s]) return 1; /* open_b is NO_TXN for a slot without one */
  return 0;
}

/* Dropping variable clocks (optimized variant). Every test on a component s of a clock that is
 * not a thread's own component is X(s) >= b for the open transaction of s's owner (knows(),
 * the crossing test of thread_join, END, register_*): a value below the b of the transaction
 * open now reads as "knows nothing of it", and stays so, since the owner's next BEGIN value
 * is above every value of s anywhere (only the owner raises its own component). So a variable
 * clock that knows no open transaction is, for every later event, the same as ⊥: joined into
 * a thread clock it raises no component to a b, stored or joined over it gives the same
 * knowledge, and its provenance records are about ended transactions (they read as empty).
 * Such clocks are freed (⊥ inline). The shortcuts that claim equality with a thread clock
 * (w_from, r_from: "W_x is C_u at version ver", "R_x ⊒ C_u at ver") are dropped with them; the
 * others claim only W_x ⊑ C_t or R_x ⊑ C_t, which ⊥ keeps. chR_x ⊑ R_x, so R_x knowing
 * nothing open says the same of chR_x. Learned lists may still name a dropped clock: END
 * re-checks X(t) >= b before it touches one. Not in variant=basic, whose ⊑ tests compare
 * every component. A variable accessed since the last sweep keeps its clocks until the next
 * (freeing them would only make its next access allocate again). The sweep runs at the start
 * of an event, once the clock bytes have grown
 * since the last one by what it kept, by VAR_SWEEP_PER_VAR per variable and by the argument
 * sweep: its O(variables) visit is paid for by the bytes allocated in between. */
AERO_RARE void atom__aero_var_sweep(aero *a) {
  int all = a->sweep_min == 1; /* tests: drop every clock that can be dropped */
  a->sweeping = 1; /* vblk_put lists every block; vblk_trim bounds the lists below */
  for (uint32_t x = 0; x < a->n_var; x++) {
    avar *v = &a->var[x];
    if (v->hot && !all) { /* accessed since the last sweep: likely again soon, keep it */
      v->hot = 0;
      continue;
    }
    /* inline clocks free no memory, but are reset too: one path for every width */
    if (v->w.len && !knows_open(a, &v->w)) {
      wblk_drop(a, v);
      v->w_from = NIL;
    }
    if ((v->r.len || v->chr.len) && !knows_open(a, &v->r)) {
      rblk_drop(a, v);
      v->r_from = NIL;
    }
  }
  /* The next sweep when the clocks have grown by what this one kept, and by at least
   * VAR_SWEEP_PER_VAR bytes per variable (the sweep visits them all) and sweep_min. */
  size_t live = a->vclk_bytes, step = (size_t)a->n_var * VAR_SWEEP_PER_VAR;
  if (step < live) step = live;
  if (step < a->sweep_min) step = a->sweep_min;
  a->sweep_at = a->sweep_min == 1 ? 1 /* every event (tests) */ : live + step;
  a->sweeping = 0;
  vblk_trim(a, a->sweep_at > live ? a->sweep_at - live : 0); /* the lists' bound */
}

/* Release a variable's clocks; they are ⊥ afterwards. */
static void var_free(aero *a, avar *v) {
  atom__vc_free(a->mem, &v->w);
  if (v->r.cap) atom__mem_free(a->mem, v->r.p, (size_t)v->r.cap * 2 * sizeof(atom__vc_t));
  atom__vc_init(&v->r);
  atom__vc_init(&v->chr);
}

int atom__aero_ensure_vars_slow(aero *a, uint32_t id) {
  if (id < a->n_var) return 0;
  uint32_t want = atom_env_count(a->env, ATOM_SPACE_VAR);
  if (want <= id) want = id + 1;
  /* (the session interns variables one by one as they come: most calls need no growth) */
  if ((want > a->var_cap && ATOM__GROW(a->mem, a->var, a->var_cap, want)) ||
      (want > a->wlast_cap && ATOM__GROW(a->mem, a->wlast, a->wlast_cap, want)) ||
      (a->basic && ATOM__GROW(a->mem, a->vbasic, a->vbasic_cap, want)))
    return ATOM_ENOMEM;
  for (uint32_t x = a->n_var; x < want; x++) {
    /* Records past n_var are still as ATOM__GROW zeroed them: set what is not 0 (zeroed
     * clocks are ⊥ already) */
    avar *v = &a->var[x];
    v->lastw = v->w_from = v->r_from = NIL;
    a->wlast[x].txn.thread = NIL;
  }
  a->clocks += (uint64_t)(want - a->n_var) * (a->basic ? 1 : 3);
  a->n_var = want;
  return 0;
}

int atom__aero_ensure_locks_slow(aero *a, uint32_t id) {
  if (id < a->n_lock) return 0;
  uint32_t want = atom_env_count(a->env, ATOM_SPACE_LOCK);
  if (want <= id) want = id + 1;
  if (ATOM__GROW(a->mem, a->lock, a->lock_cap, want) ||
      ATOM__GROW(a->mem, a->rellast, a->rellast_cap, want))
    return ATOM_ENOMEM;
  for (uint32_t l = a->n_lock; l < want; l++) {
    alock *k = &a->lock[l];
    memset(k, 0, sizeof *k);
    atom__vc_init(&k->l);
    k->lastrel = k->l_from = NIL;
    a->rellast[l].txn.thread = NIL;
  }
  a->clocks += want - a->n_lock;
  a->n_lock = want;
  return 0;
}

/* ------------------------------------------------------------------ shared handlers */

int atom__aero_on_begin(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread;
  athread *th = &a->thr[t];
  if (th->active) return 0; /* the session forwards only outermost BEGINs */
  if (!a->basic) {
    /* Line 35 waits for the publication (publish()): until then no clock but C_t can know
     * the transaction, and b = NO_TXN makes every test about it false. */
    if (th->seq == UINT32_MAX)
      return atom_env_error(a->env, ATOM_ELIMIT, "thread %" PRIu32 " began more than %" PRIu32
                            " transactions", t, UINT32_MAX - 1);
    th->b = NO_TXN;
    th->seq++;
    th->active = 1;
    th->pub = 0;
    th->begin_index = ev->index;
    th->begin_loc = ev->loc;
    th->n_rlog = 0;
    /* While the clocks are narrower than `slots` no publication steals a slot, so a thread
     * that owns one loses nothing by publishing now, as 003 Alg. 1 line 35 does (and the
     * few threads of most programs then do no publication work in their transactions). A
     * failure here leaves the transaction unpublished, which is as exact. */
    if (th->slot < a->n_slot && a->n_slot < a->max_slots) (void)publish_on(a, t, th->slot);
    return 0;
  }
  uint32_t ts = th->slot;
  atom__vc_t cur = atom__vc_get(&th->c, ts);
  if (cur >= ATOM__VC_MAX - 1 || th->seq == UINT32_MAX)
    return atom_env_error(a->env, ATOM_ELIMIT, "thread %" PRIu32 " began more than %" PRIu32
                          " transactions (with the joined threads whose clock slot it took)",
                          t, (uint32_t)(ATOM__VC_MAX - 2));
  if (reserve(a, &th->c, ts + 1) || known_reserve(a, th) ||
      (a->basic && reserve(a, &th->cb, th->c.len)))
    return ATOM_ENOMEM;
  atom__vc_set(a->mem, &th->c, ts, cur + 1); /* line 35 (cannot fail: reserved) */
  th->ver++;
  th->b = cur + 1;
  th->seq++;
  th->active = 1;
  th->begin_index = ev->index;
  th->begin_loc = ev->loc;
  th->n_rlog = 0;
  th->nslot_b = a->n_slot;
  th->pub = 1;
  a->open_b[ts] = th->b;
  a->n_active++;
  /* (its own open transaction is not put in its known list: the stores test it first) */
  if (a->basic) atom__vc_copy(a->mem, &th->cb, &th->c); /* line 36 */
  return 0;
}

int atom__aero_on_fork(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, u = ev->target;
  athread *ch = &a->thr[u];
  int err;
  if (!a->basic && (err = publish(a, t)) != 0) return err; /* C_t flows into C_u */
  if (take_slot(a, u) || reserve(a, &ch->c, a->thr[t].c.len) || known_reserve(a, ch))
    return ATOM_ENOMEM;
  aev me = cur_aev(a, ev);
  srcd sd = {SD_FORK, t, &me, NULL, NULL, ev};
  thread_join(a, u, &a->thr[t].c, &sd); /* line 20 */
  return 0;
}

int atom__aero_on_join(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, u = ev->target;
  athread *th = &a->thr[t];
  const athread *ch = &a->thr[u];
  /* A thread that performed no event conflicts with nothing: see the header comment. */
  if (!ch->last.kind) {
    release_slot(a, u);
    return 0;
  }
  if (reserve(a, &th->c, max_u32(th->c.len, ch->c.len)) || known_reserve(a, th))
    return ATOM_ENOMEM;
  aev last = last_aev(a, u);
  if (a->basic ? basic_knows(a, &ch->c, t) : knows(a, &ch->c, t)) { /* line 22 */
    expl e = atom__aero_ex_thread(a, u, t, &last);
    note(a, atom__aero_report_edge(a, ev, t, &e, &last));
  }
  srcd sd = {SD_THREAD, u, &last, NULL, NULL, ev};
  thread_join(a, t, &a->thr[u].c, &sd);
  release_slot(a, u);
  return 0;
}

/* One event of variant=basic (on_event and each event of on_events); variant=optimized has
 * its own dispatch, compiled with its handlers (atom__aero_opt_event). */
static AERO_HOT int basic_event(aero *a, const atom_ev *ev) {
  int err = event_pre(a, ev, 1);
  if (!err) err = ensure_target(a, ev);
  if (err) return err;
  switch (ev->kind) {
    case ATOM_READ: err = atom__aero_basic_read(a, ev); break;
    case ATOM_WRITE: err = atom__aero_basic_write(a, ev); break;
    case ATOM_ACQUIRE: err = atom__aero_basic_acquire(a, ev); break;
    case ATOM_RELEASE: err = atom__aero_basic_release(a, ev); break;
    case ATOM_FORK: err = atom__aero_on_fork(a, ev); break;
    case ATOM_JOIN: err = atom__aero_on_join(a, ev); break;
    case ATOM_BEGIN: err = atom__aero_on_begin(a, ev); break;
    case ATOM_END: err = atom__aero_basic_end(a, ev); break;
    /* FENCE: no clock work (it touches no shared state), but it is an event of its thread:
     * a thread whose only events are fences still conflicts with its fork and join. */
    case ATOM_FENCE: break;
    default: return 0;
  }
  return event_post(a, ev, err);
}

static int aero_on_event(void *self, const atom_ev *ev) {
  aero *a = self;
  return a->basic ? basic_event(a, ev) : atom__aero_opt_event(a, ev);
}

/* The block form: each event in turn, exactly (the position of the first failure in *failed,
 * the events after it not taken), one call per block. */
static int aero_on_events(void *self, const atom_ev *ev, size_t n, size_t *failed) {
  aero *a = self;
  if (!a->basic) return atom__aero_opt_events(a, ev, n, failed);
  size_t pf = prefetch_end(a, n);
  for (size_t i = 0; i < n; i++) {
    prefetch_var(a, ev, i, pf);
    int err = basic_event(a, &ev[i]);
    if (err) {
      *failed = i;
      return err;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ lifecycle */

static void aero_destroy(void *self) {
  aero *a = self;
  if (!a) return;
  atom__mem *m = a->mem;
  for (uint32_t u = 0; u < a->n_thr; u++) {
    athread *th = &a->thr[u];
    atom__vc_free(m, &th->c);
    atom__vc_free(m, &th->cb);
    atom__mem_free(m, th->known, th->cap_known * sizeof *th->known);
    atom__mem_free(m, th->learned, th->cap_learned * sizeof *th->learned);
    atom__mem_free(m, th->lthr, th->cap_lthr * sizeof *th->lthr);
    atom__mem_free(m, th->rlog, th->cap_rlog * sizeof *th->rlog);
    atom__mem_free(m, th->abs, th->abs_cap * sizeof *th->abs);
    atom__aero_ends_free(a, &th->prov);
  }
  for (uint32_t x = 0; x < a->n_var; x++) {
    avar *v = &a->var[x];
    var_free(a, v);
    if (a->vbasic) {
      avar_basic *vb = &a->vbasic[x];
      for (uint32_t u = 0; u < vb->n_rt; u++) {
        atom__vc_free(m, &vb->rt[u]);
        atom__aero_ends_free(a, &vb->rtend[u]);
      }
      atom__mem_free(m, vb->rt, vb->rt_cap * sizeof *vb->rt);
      atom__mem_free(m, vb->rtev, vb->rtev_cap * sizeof *vb->rtev);
      atom__mem_free(m, vb->rtend, vb->rtend_cap * sizeof *vb->rtend);
    }
    atom__mem_free(m, v->slot, v->nslot * sizeof *v->slot);
  }
  vblk_trim(a, 0);
  for (uint32_t l = 0; l < a->n_lock; l++) {
    atom__vc_free(m, &a->lock[l].l);
    atom__aero_ends_free(a, &a->lock[l].lend);
  }
  atom__mem_free(m, a->thr, a->thr_cap * sizeof *a->thr);
  atom__mem_free(m, a->open_b, a->open_cap * sizeof *a->open_b);
  atom__mem_free(m, a->slots, a->slots_cap * sizeof *a->slots);
  atom__mem_free(m, a->stq, a->stq_cap * sizeof *a->stq);
  atom__mem_free(m, a->rank_next, a->rank_cap * sizeof *a->rank_next);
  atom__mem_free(m, a->rsort, a->rsort_cap * sizeof *a->rsort);
  atom__mem_free(m, a->var, a->var_cap * sizeof *a->var);
  atom__mem_free(m, a->vbasic, a->vbasic_cap * sizeof *a->vbasic);
  atom__mem_free(m, a->wlast, a->wlast_cap * sizeof *a->wlast);
  atom__mem_free(m, a->lock, a->lock_cap * sizeof *a->lock);
  atom__mem_free(m, a->rellast, a->rellast_cap * sizeof *a->rellast);
  atom__mem_free(m, a->scratch, a->scratch_cap * sizeof *a->scratch);
  atom__mem_free(m, a->cy, sizeof *a->cy);
  atom__rb_free(&a->rb);
  atom__aero_pn_free_chunks(a, a->chunks);
  atom__mem_free(m, a, sizeof *a);
}

static int aero_create(void **self, atom_env *env) {
  /* variant=optimized (or opt, the default) or basic */
  static const char *const variants[] = {"optimized", "opt", "basic", NULL};
  int variant = 0;
  uint64_t max_threads = 16384, sweep = VAR_SWEEP_MIN, slots = AERO_SLOTS_DEFAULT;
  int rc;
  if ((rc = atom__arg_choice(env, "variant", variants, &variant)) ||
      (rc = atom__arg_count(env, "max_threads", (uint64_t)1 << 24, "16777216", &max_threads)) ||
      (rc = atom__arg_count(env, "sweep", (uint64_t)1 << 40, "1099511627776", &sweep)) ||
      (rc = atom__arg_count(env, "slots", (uint64_t)1 << 24, "16777216", &slots)))
    return rc;
  int basic = variant == 2;
  aero *a = ATOM__NEW_STATE(env, aero, own_mem);
  if (!a) return atom_env_error(env, ATOM_ENOMEM, "out of memory");
  atom__mem *m = &a->own_mem;
  a->env = env;
  a->mem = m;
  a->basic = basic;
  a->max_threads = (uint32_t)max_threads;
  a->max_slots = (uint32_t)slots;
  a->collect_at = PN_COLLECT_MIN;
  a->sweep_min = (size_t)sweep;
  a->sweep_at = basic ? SIZE_MAX : a->sweep_min; /* see atom__aero_var_sweep */
  a->free_slot = NIL;
  a->free_rank = NIL;
  atom__rb_init(&a->rb, m);
  *self = a;
  return 0;
}

static int aero_stats(void *self, atom_checker_counters *out) {
  const aero *a = self;
  out->nodes = a->n_thr;
  out->edges = a->n_nodes; /* provenance nodes */
  out->clocks = a->clocks;
  return 0;
}

static const char *const aero_arg_keys[] = {"variant", "max_threads", "sweep", "slots", NULL};

const atom_checker atom__checker_aerodrome = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) |
                  ATOM_KIND_BIT(ATOM_ACQUIRE) | ATOM_KIND_BIT(ATOM_RELEASE) |
                  ATOM_KIND_BIT(ATOM_FORK) | ATOM_KIND_BIT(ATOM_JOIN) |
                  ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END) | ATOM_KIND_BIT(ATOM_FENCE),
    .name = "aerodrome",
    .summary = "conflict serializability by vector clocks (003 AeroDrome), online",
    .arg_keys = aero_arg_keys,
    .create = aero_create,
    .on_event = aero_on_event,
    .finish = NULL,
    .destroy = aero_destroy,
    .stats = aero_stats,
    .properties = ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_SOUND | ATOM_CHECKER_PROP_COMPLETE,
    .on_events = aero_on_events,
};
