/* tso: TSO-serializability (002: Enea & Farzan, "On Atomicity in Presence of Non-atomic
 * Writes", TACAS 2016), of one TSO execution (mode=execution) or of a trace, that is of every
 * TSO execution that commits the trace's writes somewhere later (mode=trace).
 *
 * Events (doc/checkers/tso.md): WRITE is the issue of a write into the thread's store buffer;
 * COMMIT(x) is the commit of the thread's oldest pending write (FIFO, validated by the core);
 * FENCE, ACQUIRE and RELEASE drain the buffer: the writes still pending are committed just before
 * them, in order. A JOIN commits the joined thread's pending writes just before it (the core
 * refuses events of a joined thread). Writes still pending at the end are never committed.
 *
 * Conflict relation (002 §4.1 reconstructed, doc/checkers/tso.md): two events of different threads
 * conflict when they touch one variable and one is a commit, except that a read served from its own
 * thread's store buffer conflicts with no commit of another thread; issues conflict with nothing
 * in other threads; rel(l) -> acq(l), fork(u) -> events of u, events of u -> join(u). Events of
 * one thread conflict in program order, except: a commit conflicts only with its own write and
 * with later fences and lock operations; w(x) then r(y), y != x; and a buffered read r(x) (a w(x)
 * of the thread earlier, no fence or lock operation between) then r(y), y != x. A commit belongs
 * to the transaction of its write, whenever it happens.
 *
 * mode=execution: the conflict graph over transactions with incremental cycle detection
 * (support/digraph.h, shared with velodrome), one edge per direct conflict that is not implied by
 * others (execution.c). robust=yes adds the write-contraction graph of 002 §4.2 (every write
 * merged with its commit, every other event alone, program order kept whole): a cycle there means
 * the execution has no SC-equivalent ("non-robust").
 *
 * mode=trace: a write stands for issue and commit (002 §5). The event graph has a directed edge
 * where every execution orders the pair (same thread; rel -> acq, fork, join; a read before a
 * later write of another thread; a write whose thread drains before the other access) and an
 * undirected edge between a write and a later access of the variable by another thread inside
 * the write's window (before its thread's next drain). 002 Thm 5 / Cor. 1: the trace is not
 * TSO-serializable iff some cycle of the transaction graph can be oriented along its undirected
 * edges by a valid (acyclic) orientation of the event graph. A buffered read's conflicts with
 * other threads exist only in executions where it reads from memory, so they are conditional
 * links too, and each candidate cycle is checked exactly against the commit positions it needs
 * (commit_positions.c). First the directed edges alone (digraph, at the event that closes a cycle);
 * then the search of 002 §6.2 for simple cycles (cycle_search.c), bounded by max_work. fenced=yes:
 * 002 §6.3, SC-serializability plus robustness.
 *
 * mode=auto (the default): events are buffered until the first COMMIT, which selects execution
 * semantics (the buffer is replayed); without any COMMIT the trace is analysed at finish.
 *
 * This file: the vtable, the arguments and mode=auto; tso_internal.h lists the other files. */

#include <inttypes.h>
#include <string.h>

#include "checkers/builtin.h"
#include "checkers/tso/tso_internal.h"
#include "support/argval.h"

/* ---- vtable ---- */

/* Commit thread u's writes chained from head[u] (buffer positions, through next) just before
 * @p at, as explicit COMMITs. */
static int replay_commits(exec_engine *x, const atom_ev *buf, const uint32_t *next,
                          uint32_t *head, uint32_t u, const atom_ev *at) {
  for (uint32_t i = head[u]; i != NONE32; i = next[i]) {
    atom_ev cm = {ATOM_COMMIT, u, buf[i].target, 0, at->index, at->loc};
    int rc = atom__tso_exec_event(x, &cm);
    if (rc < 0) return rc;
  }
  head[u] = NONE32;
  return 0;
}

/* Replay what was buffered before the first COMMIT. Nothing was committed then but by drains
 * (and joins), which the session's FIFO no longer shows: the writes a buffered drain commits are
 * its thread's writes since its previous drain, chained per thread here (next: buffer position
 * -> the thread's next write; head, tail: per thread) and replayed as explicit COMMITs before
 * it. The writes still pending at the end stay pending, as they are in the session. */
static int replay(tso_checker *c, exec_engine *x) {
  uint32_t nth = atom_env_count(c->env, ATOM_SPACE_THREAD);
  uint32_t *next = atom__mem_alloc(c->mem, (c->nbuf + 1) * sizeof *next);
  uint32_t *head = atom__mem_alloc(c->mem, ((size_t)nth + 1) * sizeof *head);
  uint32_t *tail = atom__mem_alloc(c->mem, ((size_t)nth + 1) * sizeof *tail);
  int rc = next && head && tail ? 0 : ATOM_ENOMEM;
  if (head) memset(head, 0xff, ((size_t)nth + 1) * sizeof *head); /* NONE32 */
  for (size_t i = 0; i < c->nbuf && !rc; i++) {
    const atom_ev *ev = &c->buf[i];
    if (is_drain(ev->kind)) rc = replay_commits(x, c->buf, next, head, ev->thread, ev);
    if (!rc && ev->kind == ATOM_JOIN) rc = replay_commits(x, c->buf, next, head, ev->target, ev);
    if (rc || (rc = atom__tso_exec_event(x, ev)) < 0) break;
    rc = 0; /* a positive return is no error */
    if (ev->kind != ATOM_WRITE) continue;
    next[i] = NONE32;
    if (head[ev->thread] == NONE32) head[ev->thread] = (uint32_t)i;
    else next[tail[ev->thread]] = (uint32_t)i;
    tail[ev->thread] = (uint32_t)i;
  }
  atom__mem_free(c->mem, next, (c->nbuf + 1) * sizeof *next);
  atom__mem_free(c->mem, head, ((size_t)nth + 1) * sizeof *head);
  atom__mem_free(c->mem, tail, ((size_t)nth + 1) * sizeof *tail);
  return rc;
}

static int tso_to_exec(tso_checker *c) {
  exec_engine *x = atom__mem_alloc(c->mem, sizeof *x);
  if (!x) return ATOM_ENOMEM;
  atom__tso_exec_init(x, c->env, c->mem, c->robust, NULL);
  int rc = replay(c, x);
  if (rc < 0) {
    atom__tso_exec_free(x);
    atom__mem_free(c->mem, x, sizeof *x);
    return rc;
  }
  atom__mem_free(c->mem, c->buf, c->buf_cap * sizeof *c->buf);
  c->buf = NULL;
  c->nbuf = c->buf_cap = 0;
  c->x = x;
  c->active = MODE_EXECUTION;
  return 0;
}

static int tso_event(void *self, const atom_ev *ev) {
  tso_checker *c = self;
  c->last_index = ev->index;
  if (c->active == MODE_EXECUTION) return atom__tso_exec_event(c->x, ev);
  if (ev->kind == ATOM_COMMIT) {
    if (c->mode == MODE_TRACE) return 0; /* a trace forgets its commits (002 §5) */
    int rc = tso_to_exec(c);
    return rc ? rc : atom__tso_exec_event(c->x, ev);
  }
  if (c->nbuf >= (size_t)NONE32 - 2)
    return atom_env_error(c->env, ATOM_ELIMIT,
                          "tso: event %" PRIu64 ": a trace analysis holds at most %u events",
                          ev->index, NONE32 - 2);
  if (c->nbuf == c->buf_cap && ATOM__GROW(c->mem, c->buf, c->buf_cap, c->nbuf + 1))
    return ATOM_ENOMEM;
  c->buf[c->nbuf++] = *ev;
  return 0;
}

static int tso_finish(void *self) {
  tso_checker *c = self;
  if (c->active == MODE_EXECUTION) return 0;
  int rc = atom__tso_trace_analyse(c);
  atom__mem_free(c->mem, c->buf, c->buf_cap * sizeof *c->buf);
  c->buf = NULL;
  c->nbuf = c->buf_cap = 0;
  return rc;
}

static void tso_destroy(void *self) {
  tso_checker *c = self;
  if (!c) return;
  if (c->x) {
    atom__tso_exec_free(c->x);
    atom__mem_free(c->mem, c->x, sizeof *c->x);
  }
  atom__mem_free(c->mem, c->buf, c->buf_cap * sizeof *c->buf);
  atom__rb_free(&c->rb);
  atom__mem_free(c->mem, c, sizeof *c);
}

static int tso_create(void **self, atom_env *env) {
  static const char *const modes[] = {"auto", "execution", "trace", NULL}; /* MODE_* order */
  int mode = MODE_AUTO, fenced = 0, robust = 0, rc;
  uint64_t max_work = 100000000u;
  if ((rc = atom__arg_choice(env, "mode", modes, &mode)) ||
      (rc = atom__arg_yes_no(env, "fenced", &fenced)) ||
      (rc = atom__arg_yes_no(env, "robust", &robust)))
    return rc;
  if (fenced && mode == MODE_EXECUTION)
    return atom_env_error(env, ATOM_EINVAL, "fenced=yes applies to mode=trace (or auto), not to "
                                            "mode=execution");
  if ((rc = atom__arg_count(env, "max_work", UINT64_MAX, "2^64-1", &max_work))) return rc;
  tso_checker *c = ATOM__NEW_STATE(env, tso_checker, own_mem);
  if (!c) return ATOM_ENOMEM;
  atom__mem *m = &c->own_mem;
  c->env = env;
  c->mem = m;
  c->mode = mode;
  c->active = mode;
  c->fenced = fenced;
  c->robust = robust;
  c->max_work = max_work;
  atom__rb_init(&c->rb, m);
  if (mode == MODE_EXECUTION) {
    c->x = atom__mem_alloc(m, sizeof *c->x);
    if (!c->x) {
      atom__mem_free(m, c, sizeof *c);
      return ATOM_ENOMEM;
    }
    atom__tso_exec_init(c->x, env, m, robust, NULL);
  }
  *self = c;
  return 0;
}

static int tso_stats(void *self, atom_checker_counters *out) {
  tso_checker *c = self;
  out->clocks = 0;
  if (c->x) {
    out->nodes = atom__dg_node_count(&c->x->g) + atom__dg_node_count(&c->x->rg);
    out->edges = atom__dg_edge_count(&c->x->g) + atom__dg_edge_count(&c->x->rg);
  } else {
    out->nodes = c->nbuf; /* events held for the trace analysis */
    out->edges = 0;
  }
  return 0;
}

static const char *const tso_keys[] = {"mode", "fenced", "robust", "max_work", NULL};

const atom_checker atom__checker_tso = {
    .abi_version = ATOM_CHECKER_ABI_VERSION,
    .event_mask = ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) |
                  ATOM_KIND_BIT(ATOM_ACQUIRE) | ATOM_KIND_BIT(ATOM_RELEASE) |
                  ATOM_KIND_BIT(ATOM_FORK) | ATOM_KIND_BIT(ATOM_JOIN) | ATOM_KIND_BIT(ATOM_BEGIN) |
                  ATOM_KIND_BIT(ATOM_END) | ATOM_KIND_BIT(ATOM_FENCE) | ATOM_KIND_BIT(ATOM_COMMIT),
    .name = "tso",
    .summary = "TSO-serializability of an execution with commits, or of every TSO execution of a "
               "trace",
    .arg_keys = tso_keys,
    .create = tso_create,
    .on_event = tso_event,
    .finish = tso_finish,
    .destroy = tso_destroy,
    .stats = tso_stats,
    /* Predictive: without COMMIT events (mode=auto on a trace, mode=trace) it judges every TSO
     * execution of the trace (002 Def. 3), not only one order of the commits. */
    .properties = ATOM_CHECKER_PROP_ONLINE | ATOM_CHECKER_PROP_AT_FINISH | ATOM_CHECKER_PROP_SOUND |
                  ATOM_CHECKER_PROP_COMPLETE | ATOM_CHECKER_PROP_PREDICTIVE |
                  ATOM_CHECKER_PROP_STORE_BUFFER,
};

