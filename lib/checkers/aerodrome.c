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
 * C_t^▷(t) <= X(t), an O(1) test (DESIGN §4). chR_x = ⊔_u R_{u,x}[0/u] is never a source of
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
 * anyway) or when u itself begins; entries carry t's transaction number and are validated
 * lazily (T ended = stale). When u stores C_u into a variable or lock clock X that did not
 * know T yet, X is appended to T's "learned" list. Invariant: a clock that knows an open T is
 * in T's learned list. END(t) visits T's list only and, for each X it updates, registers X
 * with the other open transactions C_t knows. Thread clocks are scanned at END (O(T), the
 * cost of one join). The stores are monotone -- W_x := C_u comes after C_u ⊔= W_x (or
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
 * The lastWThr_x / lastRelThr_l shortcuts (lines 24, 28, 14) are exact: W_x ⊑ C_t while t is
 * the last writer (END joins W_x ⊔= C_v only if W_x knows V, and then C_t knows V too and is
 * joined with C_v at lines 38-40), and likewise for locks. The optimized variant adds more
 * shortcuts of the same kind (skip joins whose result is known, skip copies of an unchanged
 * clock); each is noted where it is taken.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/builtin.h"
#include "core/kinds.h"
#include "core/env.h"
#include "support/mem.h"
#include "support/vclock.h"

#define NIL UINT32_MAX
#define NO_TXN ATOM__VC_MAX  /* open_b[] of a thread without an open transaction */
#define SEEN_BIT(t) ((t) < 64 ? (uint64_t)1 << (t) : 0)
#define REPORT_CACHE 1024u /* direct-mapped cache of report signatures */

enum { REG_W = 0, REG_R = 1, REG_L = 2 };

/* A clock registered with an open transaction (optimized variant). */
typedef struct reg {
  uint32_t kind; /* REG_W, REG_R (R_x with chR_x), REG_L */
  uint32_t id;
} reg;

/* An open transaction a thread clock knows: thread and its transaction number. */
typedef struct kent {
  uint32_t t, seq;
} kent;

/* Who last wrote a variable / released a lock / read a variable, for reports. */
typedef struct actor {
  atom_txn_ref txn;
  uint64_t index, loc;
} actor;

typedef struct athread { /* hot fields first */
  atom__vc c;           /* C_t */
  atom__vc_t b;         /* C_t^▷(t) */
  uint32_t active;      /* inside a transaction */
  uint32_t seq;         /* transactions begun so far */
  uint32_t overflow;    /* its learned list could not grow: END scans everything */
  uint64_t ver;         /* bumped whenever c changes */
  kent *known;          /* open transactions c knows (validated lazily) */
  size_t n_known, cap_known;
  reg *learned;         /* clocks that learned its open transaction */
  size_t n_learned, cap_learned;
  uint64_t begin_index; /* of the open (or last) transaction */
  uint64_t begin_loc;
  atom_ev last;         /* its last event */
  uint32_t last_in_txn; /* that event belonged to a transaction */
  uint32_t started;     /* performed some event */
  uint32_t rep_seq;     /* seq + 1 of its transaction last reported, 0 = none */
  uint64_t rep_other;   /* the other transaction of that report */
  atom__vc cb;          /* C_t^▷ (basic variant) */
} athread;

typedef struct avar {
  atom__vc w;       /* W_x */
  atom__vc r, chr;  /* R_x, chR_x (optimized) */
  atom__vc *rt;     /* R_{u,x} for u < n_rt (basic); rt_cap allocated */
  uint32_t n_rt;
  size_t rt_cap;
  uint32_t lastw;   /* lastWThr_x */
  /* shortcuts (optimized): W_x == C_{w_from} at version w_ver; R_x ⊒ C_{r_from} at r_ver */
  uint32_t w_from, r_from;
  uint64_t w_ver, r_ver;
  uint64_t w_seen;  /* threads < 64 whose clock ⊒ the current W_x */
  uint32_t rd_other; /* a thread other than lastw read since lastw joined R_x */
} avar;

typedef struct alock {
  atom__vc l;       /* L_l */
  uint32_t lastrel; /* lastRelThr_l */
  uint32_t l_from;  /* L_l == C_{l_from} at version l_ver */
  uint64_t l_ver;
  uint64_t seen;
} alock;

typedef struct aero {
  atom_env *env;
  atom__mem *mem;
  int basic;
  uint32_t max_threads; /* vector clocks make memory grow with its square: see max_threads */
  uint32_t n_thr, n_var, n_lock, n_active;
  athread *thr;
  size_t thr_cap;
  atom__vc_t *open_b; /* b_t of the open transaction of t, NO_TXN if none */
  size_t open_cap;
  avar *var;
  size_t var_cap;
  actor *wlast, *rlast;
  size_t wlast_cap, rlast_cap;
  alock *lock;
  size_t lock_cap;
  actor *rellast;
  size_t rellast_cap;
  uint64_t clocks;   /* vector clocks held */
  kent *scratch;     /* END: open transactions C_t knows */
  size_t scratch_cap;
  uint64_t *seen;    /* REPORT_CACHE signatures already reported (see report()) */
  int rep_err;       /* first report failure of the current event */
} aero;

/* ------------------------------------------------------------------ reports */

/* "r(y)", "end", "join(t2)" */
static void describe_op(const aero *a, const atom_ev *e, char *buf, size_t size) {
  int space = atom__kind_space(e->kind);
  if (!space) {
    snprintf(buf, size, "%s", atom__kind_op(e->kind));
    return;
  }
  char name[96];
  atom_env_label(a->env, space, e->target, name, sizeof name);
  snprintf(buf, size, "%s(%s)", atom__kind_op(e->kind), name);
}

/* "t2's transaction (begun at event 1, loc 1)" or "t2's unary transaction w(y) at event 4" */
static void describe_txn(const aero *a, const atom_txn_ref *x, const atom_ev *e, char *buf,
                         size_t size) {
  char th[96];
  atom_env_label(a->env, ATOM_SPACE_THREAD, x->thread, th, sizeof th);
  if (x->unary && e) {
    char op[128];
    describe_op(a, e, op, sizeof op);
    snprintf(buf, size, "%s's unary transaction %s at event %" PRIu64, th, op, e->index);
  } else if (x->unary) {
    snprintf(buf, size, "%s's unary transaction at event %" PRIu64, th, x->begin_index);
  } else {
    snprintf(buf, size, "%s's transaction (begun at event %" PRIu64 ", loc %" PRIu64 ")", th,
             x->begin_index, x->begin_loc);
  }
}

static atom_txn_ref thread_txn(const aero *a, uint32_t t) {
  const athread *th = &a->thr[t];
  atom_txn_ref r = {t, 0, th->begin_index, th->begin_loc};
  if (!th->active && !th->last_in_txn) {
    r.unary = 1;
    r.begin_index = th->last.index;
    r.begin_loc = th->last.loc;
  }
  return r;
}

/* The transaction of thread t performing ev now (unary if t is outside BEGIN..END). */
static actor current_actor(const aero *a, uint32_t t, const atom_ev *ev) {
  const athread *th = &a->thr[t];
  actor r;
  r.txn.thread = t;
  r.txn.unary = !th->active;
  r.txn.begin_index = th->active ? th->begin_index : ev->index;
  r.txn.begin_loc = th->active ? th->begin_loc : ev->loc;
  r.index = ev->index;
  r.loc = ev->loc;
  return r;
}

/* Declare a violation at ev: the open transaction of thread `victim` (role 0) is in a cycle
 * with `other` (may be NULL), whose event other_ev (may be NULL) the check saw. */
static int report(aero *a, const atom_ev *ev, uint32_t victim, const atom_txn_ref *other,
                  const atom_ev *other_ev) {
  athread *th = &a->thr[victim];
  /* One cycle of two transaction instances is often seen at several events (ρ2: at the read
   * and again at the END): report each pair of instances once, so that the session's
   * occurrence count is the number of times the violation happened (a loop's iterations). */
  uint64_t other_key =
      other ? ((uint64_t)other->thread << 40) ^ other->begin_index ^ ((uint64_t)other->unary << 63)
            : UINT64_MAX;
  if (th->rep_seq == th->seq + 1 && th->rep_other == other_key) return 0;
  th->rep_seq = th->seq + 1;
  th->rep_other = other_key;
  atom_txn_ref txns[2];
  txns[0] = (atom_txn_ref){victim, 0, th->begin_index, th->begin_loc};
  size_t n_txns = 1;
  if (other) txns[n_txns++] = *other;
  atom_ev evs[2];
  size_t n_evs = 0;
  evs[n_evs++] = *ev;
  if (other_ev) evs[n_evs++] = *other_ev;
  uint32_t var = ev->target;
  int is_access = ev->kind == ATOM_READ || ev->kind == ATOM_WRITE;
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = "conflict-cycle";
  spec.event_index = ev->index;
  spec.txns = txns;
  spec.n_txns = n_txns;
  spec.events = evs;
  spec.n_events = n_evs;
  spec.vars = is_access ? &var : NULL;
  spec.n_vars = is_access ? 1 : 0;

  /* Once a transaction is in a cycle, every later access of it that reads from a clock that
   * knows it fires again: the session counts these as occurrences of one report (same
   * begin locations). Skip formatting a message that would be thrown away: remember the
   * signatures reported so far (a cache: a miss only costs the formatting). */
  uint64_t l0 = txns[0].begin_loc, l1 = n_txns > 1 ? txns[1].begin_loc : UINT64_MAX;
  if (l1 < l0) {
    uint64_t tmp = l0;
    l0 = l1;
    l1 = tmp;
  }
  uint64_t sig = (l0 * 0x9e3779b97f4a7c15ull) ^ (l1 + 0x632be59bd9b4e019ull) ^ n_txns;
  sig ^= sig >> 29;
  sig *= 0xbf58476d1ce4e5b9ull;
  sig ^= sig >> 32;
  if (sig == 0) sig = 1;
  if (!a->seen) a->seen = atom__mem_calloc(a->mem, REPORT_CACHE, sizeof *a->seen);
  uint64_t *slot = a->seen ? &a->seen[sig % REPORT_CACHE] : NULL;
  if (slot && *slot == sig) return atom_env_report(a->env, &spec); /* NULL: not formatted */

  char me[256], them[256], op[128], msg[800];
  describe_txn(a, &txns[0], NULL, me, sizeof me);
  if (other)
    describe_txn(a, other, other_ev, them, sizeof them);
  else if (ev->kind == ATOM_WRITE)
    snprintf(them, sizeof them, "an earlier read of it by another thread");
  else
    snprintf(them, sizeof them, "another transaction");
  if (ev->kind == ATOM_END) {
    /* 003 Alg. 1 line 37-40: at the END, the other open transaction knows this one's BEGIN
     * and this one's clock knows the other's BEGIN. */
    snprintf(msg, sizeof msg, "%s is not serializable: at its end (event %" PRIu64
             ") it depends on %s, which depends on it", me, ev->index, them);
  } else {
    describe_op(a, ev, op, sizeof op);
    snprintf(msg, sizeof msg, "%s is not serializable: %s at event %" PRIu64
             " depends on %s, which depends on it", me, op, ev->index, them);
  }
  spec.message = msg;
  int err = atom_env_report(a->env, &spec);
  if (!err && slot) *slot = sig;
  return err;
}

static atom_ev actor_event(const actor *x, uint32_t kind, uint32_t target) {
  atom_ev e = {kind, x->txn.thread, target, 0, x->index, x->loc};
  return e;
}

/* A failed report (out of memory in the session) does not stop the event: its update
 * completes and the first such error is returned at the end of the event. */
static inline void note(aero *a, int err) {
  if (err && !a->rep_err) a->rep_err = err;
}

/* ------------------------------------------------------------------ growth */

static int ensure_threads_slow(aero *a, uint32_t id) {
  if (id < a->n_thr) return 0;
  if (id >= a->max_threads)
    return atom_env_error(a->env, ATOM_ELIMIT,
                          "thread number %u is beyond max_threads=%u (each vector clock has a "
                          "component per thread); its events are not checked",
                          id + 1, a->max_threads);
  uint32_t want = atom_env_count(a->env, ATOM_SPACE_THREAD);
  if (want <= id) want = id + 1;
  if (want > a->max_threads) want = a->max_threads;
  if (ATOM__GROW(a->mem, a->thr, a->thr_cap, want) ||
      ATOM__GROW(a->mem, a->open_b, a->open_cap, want))
    return ATOM_ENOMEM;
  while (a->n_thr < want) {
    uint32_t u = a->n_thr;
    athread *th = &a->thr[u];
    memset(th, 0, sizeof *th);
    atom__vc_init(&th->c);
    atom__vc_init(&th->cb);
    /* 003 Alg. 1 line 3: C_u := ⊥[1/u], C_u^▷ := ⊥ */
    if (atom__vc_set(a->mem, &th->c, u, 1)) return ATOM_ENOMEM;
    a->open_b[u] = NO_TXN;
    a->clocks += a->basic ? 2 : 1;
    a->n_thr = u + 1;
  }
  return 0;
}

static int ensure_vars_slow(aero *a, uint32_t id) {
  if (id < a->n_var) return 0;
  uint32_t want = atom_env_count(a->env, ATOM_SPACE_VAR);
  if (want <= id) want = id + 1;
  if (ATOM__GROW(a->mem, a->var, a->var_cap, want) ||
      ATOM__GROW(a->mem, a->wlast, a->wlast_cap, want) ||
      ATOM__GROW(a->mem, a->rlast, a->rlast_cap, want))
    return ATOM_ENOMEM;
  for (uint32_t x = a->n_var; x < want; x++) {
    avar *v = &a->var[x];
    memset(v, 0, sizeof *v);
    atom__vc_init(&v->w);
    atom__vc_init(&v->r);
    atom__vc_init(&v->chr);
    v->lastw = v->w_from = v->r_from = NIL;
    a->wlast[x].txn.thread = NIL;
    a->rlast[x].txn.thread = NIL;
  }
  a->clocks += (uint64_t)(want - a->n_var) * (a->basic ? 1 : 3);
  a->n_var = want;
  return 0;
}

static int ensure_locks_slow(aero *a, uint32_t id) {
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

/* The common case (the id is known) without a call. */
static inline int ensure_threads(aero *a, uint32_t id) {
  return id < a->n_thr ? 0 : ensure_threads_slow(a, id);
}
static inline int ensure_vars(aero *a, uint32_t id) {
  return id < a->n_var ? 0 : ensure_vars_slow(a, id);
}
static inline int ensure_locks(aero *a, uint32_t id) {
  return id < a->n_lock ? 0 : ensure_locks_slow(a, id);
}

static inline int reserve(aero *a, atom__vc *c, uint32_t n) {
  return n <= c->cap ? 0 : atom__vc_reserve(a->mem, c, n);
}

static inline uint32_t max_u32(uint32_t x, uint32_t y) { return x > y ? x : y; }

/* ------------------------------------------------------------------ known / learned lists */

static inline int kent_valid(const aero *a, kent e) {
  const athread *o = &a->thr[e.t];
  return o->active && o->seq == e.seq;
}

/* Room for every open transaction thread u could learn during one event: each addition is
 * an open transaction not yet (validly) in the list. */
static int known_reserve(aero *a, athread *th) {
  if (a->basic || th->n_known + a->n_active + 1 <= th->cap_known) return 0;
  size_t k = 0;
  for (size_t i = 0; i < th->n_known; i++)
    if (kent_valid(a, th->known[i])) th->known[k++] = th->known[i];
  th->n_known = k;
  return ATOM__GROW(a->mem, th->known, th->cap_known, k + a->n_active + 1);
}

static atom__vc *reg_clock(aero *a, reg r) {
  switch (r.kind) {
    case REG_W: return &a->var[r.id].w;
    case REG_R: return &a->var[r.id].r;
    default: return &a->lock[r.id].l;
  }
}

/* Append r to the learned list of t's open transaction. Never fails: if the list cannot
 * grow, the transaction falls back to the full scan at its END. */
static void learn(aero *a, uint32_t t, reg r) {
  athread *o = &a->thr[t];
  if (o->overflow) return;
  if (o->n_learned == o->cap_learned &&
      ATOM__GROW(a->mem, o->learned, o->cap_learned, o->n_learned + 1)) {
    o->overflow = 1;
    return;
  }
  o->learned[o->n_learned++] = r;
}

/* Clock X (about to receive C_u's knowledge) learns the open transactions C_u knows that it
 * did not know: register it with each. Call before the store. Drops the stale entries of
 * u's list on the way (this runs at every store, so the list stays as short as the set of
 * open transactions u knows). */
static void register_from(aero *a, athread *src, reg r, const atom__vc *x) {
  size_t k = 0;
  for (size_t i = 0; i < src->n_known; i++) {
    kent e = src->known[i];
    if (!kent_valid(a, e)) continue;
    src->known[k++] = e;
    if (atom__vc_get(x, e.t) < a->thr[e.t].b) learn(a, e.t, r);
  }
  src->n_known = k;
}

/* C_u := C_u ⊔ src (capacity reserved by the caller). Optimized: a component crossing the
 * BEGIN value of an open transaction means C_u now knows it. */
static void thread_join(aero *a, uint32_t u, const atom__vc *src) {
  athread *th = &a->thr[u];
  atom__vc_t *d = atom__vc_data(&th->c);
  const atom__vc_t *s = atom__vc_cdata(src);
  uint32_t n = src->len;
  int grew = 0;
  if (a->basic) {
    for (uint32_t i = 0; i < n; i++)
      if (s[i] > d[i]) {
        d[i] = s[i];
        grew = 1;
      }
  } else {
    const atom__vc_t *ob = a->open_b;
    for (uint32_t i = 0; i < n; i++)
      if (s[i] > d[i]) {
        if (d[i] < ob[i] && s[i] >= ob[i])
          th->known[th->n_known++] = (kent){i, a->thr[i].seq};
        d[i] = s[i];
        grew = 1;
      }
  }
  if (n > th->c.len) th->c.len = n;
  if (grew) th->ver++;
}

/* ------------------------------------------------------------------ optimized variant */

/* 003 Alg. 1 line 9-12, optimized check: C_t^▷ ⊑ clk iff clk(t) >= b_t. */
static inline int knows(const aero *a, const atom__vc *clk, uint32_t t) {
  return a->thr[t].active && atom__vc_get(clk, t) >= a->thr[t].b;
}

static int opt_read(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  /* line 24: the last writer's W_x ⊑ C_t already; w_seen: t joined this W_x before */
  int join_w = v->lastw != t && !(v->w_seen & SEEN_BIT(t));
  /* line 26 as §4.3: R_x ⊔= C_t, chR_x ⊔= C_t[0/t]; skip if R_x ⊒ C_t already */
  int store_r = join_w || !(v->r_from == t && v->r_ver == th->ver);
  uint32_t len = th->c.len;
  if (join_w) len = max_u32(len, v->w.len);
  if ((join_w && (reserve(a, &th->c, len) || known_reserve(a, th))) ||
      (store_r && (reserve(a, &v->r, len) || reserve(a, &v->chr, len))))
    return ATOM_ENOMEM;

  if (v->lastw != t) {
    if (knows(a, &v->w, t)) { /* line 25 */
      atom_ev we = actor_event(&a->wlast[x], ATOM_WRITE, x);
      note(a, report(a, ev, t, &a->wlast[x].txn, &we));
    }
    if (join_w) {
      thread_join(a, t, &v->w);
      v->w_seen |= SEEN_BIT(t);
    }
    v->rd_other = 1;
  }
  if (!(v->r_from == t && v->r_ver == th->ver)) {
    register_from(a, th, (reg){REG_R, x}, &v->r);
    atom__vc_join(a->mem, &v->r, &th->c, NULL);          /* cannot fail: reserved */
    atom__vc_join_except(a->mem, &v->chr, &th->c, t);   /* cannot fail: reserved */
    v->r_from = t;
    v->r_ver = th->ver;
  }
  a->rlast[x] = current_actor(a, t, ev);
  return 0;
}

static int opt_write(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  int join_w = v->lastw != t && !(v->w_seen & SEEN_BIT(t));
  /* lines 30-31: R_x ⊑ C_t if t wrote last and nobody else read since (see avar) */
  int join_r = !(v->lastw == t && !v->rd_other);
  uint32_t len = th->c.len;
  if (join_w) len = max_u32(len, v->w.len);
  if (join_r) len = max_u32(len, v->r.len);
  if (((join_w || join_r) && (reserve(a, &th->c, len) || known_reserve(a, th))) ||
      reserve(a, &v->w, len))
    return ATOM_ENOMEM;

  if (v->lastw != t) {
    if (knows(a, &v->w, t)) { /* line 29 */
      atom_ev we = actor_event(&a->wlast[x], ATOM_WRITE, x);
      note(a, report(a, ev, t, &a->wlast[x].txn, &we));
    }
    if (join_w) thread_join(a, t, &v->w);
  }
  /* lines 30-31 (§4.3): some R_{u,x}, u != t, knows t's transaction iff chR_x(t) >= b_t */
  if (knows(a, &v->chr, t)) {
    const actor *rl = &a->rlast[x];
    if (rl->txn.thread != NIL && rl->txn.thread != t) {
      atom_ev re = actor_event(rl, ATOM_READ, x);
      note(a, report(a, ev, t, &rl->txn, &re));
    } else {
      note(a, report(a, ev, t, NULL, NULL));
    }
  }
  if (join_r) thread_join(a, t, &v->r);
  /* lines 32-33: W_x := C_t, unless W_x is C_t already */
  if (!(v->w_from == t && v->w_ver == th->ver)) {
    register_from(a, th, (reg){REG_W, x}, &v->w);
    atom__vc_copy(a->mem, &v->w, &th->c); /* cannot fail: reserved */
    v->w_from = t;
    v->w_ver = th->ver;
  }
  v->w_seen = SEEN_BIT(t);
  v->lastw = t;
  v->rd_other = 0;
  a->wlast[x] = current_actor(a, t, ev);
  return 0;
}

static int opt_acquire(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  athread *th = &a->thr[t];
  alock *k = &a->lock[l];
  if (k->lastrel == t || k->lastrel == NIL) return 0; /* line 14 (L_l = ⊥ if never released) */
  int join = !(k->seen & SEEN_BIT(t));
  if (join && (reserve(a, &th->c, max_u32(th->c.len, k->l.len)) || known_reserve(a, th)))
    return ATOM_ENOMEM;
  if (knows(a, &k->l, t)) { /* line 15 */
    atom_ev re = actor_event(&a->rellast[l], ATOM_RELEASE, l);
    note(a, report(a, ev, t, &a->rellast[l].txn, &re));
  }
  if (join) {
    thread_join(a, t, &k->l);
    k->seen |= SEEN_BIT(t);
  }
  return 0;
}

static int opt_release(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  athread *th = &a->thr[t];
  alock *k = &a->lock[l];
  if (reserve(a, &k->l, th->c.len)) return ATOM_ENOMEM;
  /* lines 17-18 */
  if (!(k->l_from == t && k->l_ver == th->ver)) {
    register_from(a, th, (reg){REG_L, l}, &k->l);
    atom__vc_copy(a->mem, &k->l, &th->c);
    k->l_from = t;
    k->l_ver = th->ver;
  }
  k->seen = SEEN_BIT(t);
  k->lastrel = t;
  a->rellast[l] = current_actor(a, t, ev);
  return 0;
}

/* Lines 41-46 for one registered clock: X := C_t^▷ ⊑ X ? C_t ⊔ X : X, registering X with the
 * other open transactions C_t knows (in a->scratch[0..nk)). */
static void opt_end_update(aero *a, uint32_t t, reg r, size_t nk) {
  athread *th = &a->thr[t];
  atom__vc *x = reg_clock(a, r);
  if (atom__vc_get(x, t) < th->b) return; /* see "Optimized END" */
  for (size_t i = 0; i < nk; i++) {
    kent e = a->scratch[i];
    if (atom__vc_get(x, e.t) < a->thr[e.t].b) learn(a, e.t, r);
  }
  atom__vc_join(a->mem, x, &th->c, NULL); /* cannot fail: reserved */
  if (r.kind == REG_W) {
    avar *v = &a->var[r.id];
    v->w_from = NIL; /* W_x changed: the shortcuts no longer hold */
    v->w_seen = 0;
  } else if (r.kind == REG_R) {
    atom__vc_join(a->mem, &a->var[r.id].chr, &th->c, NULL);
  } else {
    alock *k = &a->lock[r.id];
    k->l_from = NIL;
    k->seen = 0;
  }
}

static int opt_end_reserve(aero *a, reg r, uint32_t t, uint32_t len) {
  atom__vc *x = reg_clock(a, r);
  if (atom__vc_get(x, t) < a->thr[t].b) return 0;
  if (reserve(a, x, len)) return ATOM_ENOMEM;
  if (r.kind == REG_R && reserve(a, &a->var[r.id].chr, len)) return ATOM_ENOMEM;
  return 0;
}

static int opt_end(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread;
  athread *th = &a->thr[t];
  uint32_t len = th->c.len;
  if (!th->active) return 0;

  /* Reserve everything first so that the update below cannot fail half-way. */
  for (uint32_t u = 0; u < a->n_thr; u++)
    if (u != t && atom__vc_get(&a->thr[u].c, t) >= th->b &&
        (reserve(a, &a->thr[u].c, len) || known_reserve(a, &a->thr[u])))
      return ATOM_ENOMEM;
  if (len <= ATOM__VC_INLINE) {
    /* every clock has room for ATOM__VC_INLINE components: nothing to reserve */
  } else if (th->overflow) {
    for (uint32_t x = 0; x < a->n_var; x++)
      if (opt_end_reserve(a, (reg){REG_W, x}, t, len) || opt_end_reserve(a, (reg){REG_R, x}, t, len))
        return ATOM_ENOMEM;
    for (uint32_t l = 0; l < a->n_lock; l++)
      if (opt_end_reserve(a, (reg){REG_L, l}, t, len)) return ATOM_ENOMEM;
  } else {
    for (size_t i = 0; i < th->n_learned; i++)
      if (opt_end_reserve(a, th->learned[i], t, len)) return ATOM_ENOMEM;
  }
  if (th->n_known + 1 > a->scratch_cap &&
      ATOM__GROW(a->mem, a->scratch, a->scratch_cap, th->n_known + 1))
    return ATOM_ENOMEM;

  /* lines 38-40: threads whose clock knows t's transaction (scanned: O(T) like the join) */
  for (uint32_t u = 0; u < a->n_thr; u++) {
    if (u == t || atom__vc_get(&a->thr[u].c, t) < th->b) continue;
    if (knows(a, &th->c, u)) {
      atom_txn_ref ut = thread_txn(a, u);
      note(a, report(a, ev, t, &ut, &a->thr[u].last));
    }
    thread_join(a, u, &th->c);
  }
  /* The other open transactions C_t knows: clocks updated below learn them too. */
  size_t nk = 0;
  for (size_t i = 0; i < th->n_known; i++) {
    kent e = th->known[i];
    if (e.t != t && kent_valid(a, e)) a->scratch[nk++] = e;
  }
  /* lines 41-46, restricted to the clocks that learned t's transaction */
  if (th->overflow) {
    for (uint32_t x = 0; x < a->n_var; x++) {
      opt_end_update(a, t, (reg){REG_W, x}, nk);
      opt_end_update(a, t, (reg){REG_R, x}, nk);
    }
    for (uint32_t l = 0; l < a->n_lock; l++) opt_end_update(a, t, (reg){REG_L, l}, nk);
  } else {
    for (size_t i = 0; i < th->n_learned; i++) opt_end_update(a, t, th->learned[i], nk);
  }
  th->n_learned = 0;
  th->overflow = 0;
  th->active = 0;
  a->open_b[t] = NO_TXN;
  a->n_active--;
  return 0;
}

/* ------------------------------------------------------------------ basic variant */

/* 003 Alg. 1 line 9-12 */
static inline int basic_knows(const aero *a, const atom__vc *clk, uint32_t t) {
  return a->thr[t].active && atom__vc_leq(&a->thr[t].cb, clk);
}

static int basic_read(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  if (t >= v->n_rt) {
    if (ATOM__GROW(a->mem, v->rt, v->rt_cap, a->n_thr)) return ATOM_ENOMEM;
    for (uint32_t u = v->n_rt; u < a->n_thr; u++) atom__vc_init(&v->rt[u]);
    a->clocks += a->n_thr - v->n_rt;
    v->n_rt = a->n_thr;
  }
  uint32_t len = max_u32(th->c.len, v->w.len);
  if (reserve(a, &th->c, len) || reserve(a, &v->rt[t], len)) return ATOM_ENOMEM;
  if (v->lastw != t) { /* lines 24-25 */
    if (basic_knows(a, &v->w, t)) {
      atom_ev we = actor_event(&a->wlast[x], ATOM_WRITE, x);
      note(a, report(a, ev, t, &a->wlast[x].txn, &we));
    }
    thread_join(a, t, &v->w);
  }
  atom__vc_copy(a->mem, &v->rt[t], &th->c); /* line 26 */
  a->rlast[x] = current_actor(a, t, ev);
  return 0;
}

static int basic_write(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, x = ev->target;
  athread *th = &a->thr[t];
  avar *v = &a->var[x];
  uint32_t len = max_u32(th->c.len, v->w.len);
  for (uint32_t u = 0; u < v->n_rt; u++) len = max_u32(len, v->rt[u].len);
  if (reserve(a, &th->c, len) || reserve(a, &v->w, len)) return ATOM_ENOMEM;
  if (v->lastw != t) { /* lines 28-29 */
    if (basic_knows(a, &v->w, t)) {
      atom_ev we = actor_event(&a->wlast[x], ATOM_WRITE, x);
      note(a, report(a, ev, t, &a->wlast[x].txn, &we));
    }
    thread_join(a, t, &v->w);
  }
  for (uint32_t u = 0; u < v->n_rt; u++) { /* lines 30-31 */
    if (u == t) continue;
    if (basic_knows(a, &v->rt[u], t)) {
      const actor *rl = &a->rlast[x];
      if (rl->txn.thread == u) {
        atom_ev re = actor_event(rl, ATOM_READ, x);
        note(a, report(a, ev, t, &rl->txn, &re));
      } else {
        note(a, report(a, ev, t, NULL, NULL));
      }
    }
    thread_join(a, t, &v->rt[u]);
  }
  atom__vc_copy(a->mem, &v->w, &th->c); /* lines 32-33 */
  v->lastw = t;
  a->wlast[x] = current_actor(a, t, ev);
  return 0;
}

static int basic_acquire(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  athread *th = &a->thr[t];
  alock *k = &a->lock[l];
  if (k->lastrel == t) return 0; /* line 14 */
  if (reserve(a, &th->c, max_u32(th->c.len, k->l.len))) return ATOM_ENOMEM;
  if (basic_knows(a, &k->l, t)) { /* line 15 */
    atom_ev re = actor_event(&a->rellast[l], ATOM_RELEASE, l);
    note(a, report(a, ev, t, &a->rellast[l].txn, &re));
  }
  thread_join(a, t, &k->l);
  return 0;
}

static int basic_release(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, l = ev->target;
  alock *k = &a->lock[l];
  if (atom__vc_copy(a->mem, &k->l, &a->thr[t].c)) return ATOM_ENOMEM; /* line 17 */
  k->lastrel = t;                                                       /* line 18 */
  a->rellast[l] = current_actor(a, t, ev);
  return 0;
}

/* X := C_t^▷ ⊑ X ? C_t ⊔ X : X (lines 42, 44, 46); reserve = 1 only reserves room. */
static int basic_end_one(aero *a, athread *th, atom__vc *x, int reserve_only) {
  if (!atom__vc_leq(&th->cb, x)) return 0;
  if (reserve_only) return reserve(a, x, th->c.len);
  atom__vc_join(a->mem, x, &th->c, NULL);
  return 0;
}

static int basic_end(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread;
  athread *th = &a->thr[t];
  if (!th->active) return 0;
  for (int pass = 0; pass < 2; pass++) {
    int ro = pass == 0; /* first pass: reserve, so the second cannot fail */
    for (uint32_t u = 0; u < a->n_thr; u++) { /* lines 38-40 */
      if (u == t || !atom__vc_leq(&th->cb, &a->thr[u].c)) continue;
      if (ro) {
        if (reserve(a, &a->thr[u].c, th->c.len)) return ATOM_ENOMEM;
        continue;
      }
      if (basic_knows(a, &th->c, u)) {
        atom_txn_ref ut = thread_txn(a, u);
        note(a, report(a, ev, t, &ut, &a->thr[u].last));
      }
      thread_join(a, u, &th->c);
    }
    for (uint32_t l = 0; l < a->n_lock; l++) /* lines 41-42 */
      if (basic_end_one(a, th, &a->lock[l].l, ro)) return ATOM_ENOMEM;
    for (uint32_t x = 0; x < a->n_var; x++) { /* lines 43-46 */
      avar *v = &a->var[x];
      if (basic_end_one(a, th, &v->w, ro)) return ATOM_ENOMEM;
      for (uint32_t u = 0; u < v->n_rt; u++)
        if (basic_end_one(a, th, &v->rt[u], ro)) return ATOM_ENOMEM;
    }
  }
  th->active = 0;
  a->open_b[t] = NO_TXN;
  a->n_active--;
  return 0;
}

/* ------------------------------------------------------------------ shared handlers */

static int on_begin(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread;
  athread *th = &a->thr[t];
  if (th->active) return 0; /* the session forwards only outermost BEGINs */
  atom__vc_t cur = atom__vc_get(&th->c, t);
  if (cur >= ATOM__VC_MAX - 1 || th->seq == UINT32_MAX)
    return atom_env_error(a->env, ATOM_ELIMIT, "thread %" PRIu32 " began more than %" PRIu32
                          " transactions", t, (uint32_t)(ATOM__VC_MAX - 2));
  if (reserve(a, &th->c, t + 1) || known_reserve(a, th) ||
      (a->basic && reserve(a, &th->cb, th->c.len)))
    return ATOM_ENOMEM;
  atom__vc_set(a->mem, &th->c, t, cur + 1); /* line 35 (cannot fail: reserved) */
  th->ver++;
  th->b = cur + 1;
  th->seq++;
  th->active = 1;
  th->begin_index = ev->index;
  th->begin_loc = ev->loc;
  a->open_b[t] = th->b;
  a->n_active++;
  if (a->basic)
    atom__vc_copy(a->mem, &th->cb, &th->c); /* line 36 */
  else
    th->known[th->n_known++] = (kent){t, th->seq};
  return 0;
}

static int on_fork(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, u = ev->target;
  athread *ch = &a->thr[u];
  if (reserve(a, &ch->c, a->thr[t].c.len) || known_reserve(a, ch)) return ATOM_ENOMEM;
  thread_join(a, u, &a->thr[t].c); /* line 20 */
  return 0;
}

static int on_join(aero *a, const atom_ev *ev) {
  uint32_t t = ev->thread, u = ev->target;
  athread *th = &a->thr[t];
  const athread *ch = &a->thr[u];
  /* A thread that performed no event conflicts with nothing: see the header comment. */
  if (!ch->started) return 0;
  if (reserve(a, &th->c, max_u32(th->c.len, ch->c.len)) || known_reserve(a, th))
    return ATOM_ENOMEM;
  if (a->basic ? basic_knows(a, &ch->c, t) : knows(a, &ch->c, t)) { /* line 22 */
    atom_txn_ref ut = thread_txn(a, u);
    note(a, report(a, ev, t, &ut, &ch->last));
  }
  thread_join(a, t, &a->thr[u].c);
  return 0;
}

static int aero_on_event(void *self, const atom_ev *ev) {
  aero *a = self;
  uint32_t t = ev->thread;
  int err;
  a->rep_err = 0;
  if ((err = ensure_threads(a, t)) != 0) return err;
  switch (ev->kind) {
    case ATOM_READ:
      if ((err = ensure_vars(a, ev->target)) != 0) return err;
      err = a->basic ? basic_read(a, ev) : opt_read(a, ev);
      break;
    case ATOM_WRITE:
      if ((err = ensure_vars(a, ev->target)) != 0) return err;
      err = a->basic ? basic_write(a, ev) : opt_write(a, ev);
      break;
    case ATOM_ACQUIRE:
      if ((err = ensure_locks(a, ev->target)) != 0) return err;
      err = a->basic ? basic_acquire(a, ev) : opt_acquire(a, ev);
      break;
    case ATOM_RELEASE:
      if ((err = ensure_locks(a, ev->target)) != 0) return err;
      err = a->basic ? basic_release(a, ev) : opt_release(a, ev);
      break;
    case ATOM_FORK:
      if ((err = ensure_threads(a, ev->target)) != 0) return err;
      err = on_fork(a, ev);
      break;
    case ATOM_JOIN:
      if ((err = ensure_threads(a, ev->target)) != 0) return err;
      err = on_join(a, ev);
      break;
    case ATOM_BEGIN:
      err = on_begin(a, ev);
      break;
    case ATOM_END:
      err = a->basic ? basic_end(a, ev) : opt_end(a, ev);
      break;
    case ATOM_FENCE:
      /* No clock work (it touches no shared state), but it is an event of its thread: a
       * thread whose only events are fences still conflicts with its fork and join. */
      err = 0;
      break;
    default:
      return 0;
  }
  /* Handlers fail (out of memory) only before changing anything: the event is then
   * ignored. A report that failed did not stop the update. */
  if (err) return err;
  athread *th = &a->thr[t];
  th->started = 1;
  th->last = *ev;
  th->last_in_txn = th->active || ev->kind == ATOM_END;
  err = a->rep_err;
  a->rep_err = 0;
  return err;
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
  }
  for (uint32_t x = 0; x < a->n_var; x++) {
    avar *v = &a->var[x];
    atom__vc_free(m, &v->w);
    atom__vc_free(m, &v->r);
    atom__vc_free(m, &v->chr);
    for (uint32_t u = 0; u < v->n_rt; u++) atom__vc_free(m, &v->rt[u]);
    atom__mem_free(m, v->rt, v->rt_cap * sizeof *v->rt);
  }
  for (uint32_t l = 0; l < a->n_lock; l++) atom__vc_free(m, &a->lock[l].l);
  atom__mem_free(m, a->thr, a->thr_cap * sizeof *a->thr);
  atom__mem_free(m, a->open_b, a->open_cap * sizeof *a->open_b);
  atom__mem_free(m, a->var, a->var_cap * sizeof *a->var);
  atom__mem_free(m, a->wlast, a->wlast_cap * sizeof *a->wlast);
  atom__mem_free(m, a->rlast, a->rlast_cap * sizeof *a->rlast);
  atom__mem_free(m, a->lock, a->lock_cap * sizeof *a->lock);
  atom__mem_free(m, a->rellast, a->rellast_cap * sizeof *a->rellast);
  atom__mem_free(m, a->scratch, a->scratch_cap * sizeof *a->scratch);
  atom__mem_free(m, a->seen, REPORT_CACHE * sizeof *a->seen);
  atom__mem_free(m, a, sizeof *a);
}

static int aero_create(void **self, atom_env *env) {
  const char *variant = atom_env_arg(env, "variant");
  int basic;
  if (!variant || strcmp(variant, "optimized") == 0 || strcmp(variant, "opt") == 0)
    basic = 0;
  else if (strcmp(variant, "basic") == 0)
    basic = 1;
  else
    return atom_env_error(env, ATOM_EINVAL, "variant must be basic or optimized (opt), not \"%s\"",
                          variant);
  uint32_t max_threads = 16384;
  const char *mt = atom_env_arg(env, "max_threads");
  if (mt) {
    char *end;
    unsigned long long v = strtoull(mt, &end, 10);
    if (!*mt || *end || v < 1 || v > (1u << 24))
      return atom_env_error(env, ATOM_EINVAL, "max_threads must be 1..16777216, not \"%s\"", mt);
    max_threads = (uint32_t)v;
  }
  atom__mem *m = atom__env_mem(env);
  aero *a = atom__mem_calloc(m, 1, sizeof *a);
  if (!a) return atom_env_error(env, ATOM_ENOMEM, "out of memory");
  a->env = env;
  a->mem = m;
  a->basic = basic;
  a->max_threads = max_threads;
  *self = a;
  return 0;
}

static int aero_stats(void *self, atom_checker_counters *out) {
  const aero *a = self;
  out->nodes = a->n_thr;
  out->edges = 0;
  out->clocks = a->clocks;
  return 0;
}

static const char *const aero_arg_keys[] = {"variant", "max_threads", NULL};

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
};
