/* block: scope=all (000 §5.4), the interleavings of each group of related units. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"
#include "support/msgbuf.h"
#include "support/unionfind.h"

/* ---- scope=all: 000 §5.4 ----------------------------------------------------------------------
 *
 * isAtomicTrans(T): every pair atomic, and every feasible interleaving of UR-FW(T) (the
 * uninitialized reads and final writes of each transaction, with its lock operations)
 * view-serializable. Groups of units that share no variable are searched separately (000 §5.4,
 * last paragraph). The interleavings are enumerated depth-first with sleep sets, so that of
 * interleavings that differ only in the order of independent events (other units; other
 * variables or two reads; other locks) one is explored: view equivalence depends only on the
 * order of conflicting accesses. A group with a pair already reported is not searched (the
 * pair decides it); a group of two units is decided by the pairs (Thm 5.4). */

#define ALL_MAX_UNITS 64

typedef struct projected_event {
  uint32_t pos, kind, target, period; /* target: variable or lock (group-local in a group) */
} projected_event;

typedef struct search_frame {
  uint64_t sleep, todo;
  int chosen;
} search_frame;

typedef struct group_search {
  /* projection of every unit */
  projected_event *pev;
  size_t pn, pcap;
  size_t *poff; /* per unit: offset in pev; poff[u + 1] - poff[u] events */
  size_t poff_cap;
  uint32_t *uf; /* union-find parent per unit */
  size_t uf_cap;
  uint32_t *vfirst; /* per variable: first unit accessing it in its projection, + 1 */
  size_t vf_cap;
  uint32_t *st1, *st2, *fwp; /* per variable scratch */
  size_t st_cap;
  /* the group being searched */
  uint32_t k;
  uint32_t unit[ALL_MAX_UNITS];
  projected_event *gev; /* its events, group-local targets */
  size_t gev_cap;
  uint32_t off[ALL_MAX_UNITS + 1], pos[ALL_MAX_UNITS];
  uint32_t *need; /* per group event: k counts (events of unit v that must come first) */
  size_t need_cap;
  uint64_t pred[ALL_MAX_UNITS]; /* units that a serial order must put before it */
  uint32_t nvar, nlock;
  uint32_t *vmap, *lmap; /* id -> local index + 1, 0 if not in the group */
  size_t vmap_cap, lmap_cap;
  uint32_t *gvar; /* local index -> variable id */
  size_t gvar_cap;
  uint32_t *lockuse; /* per lock id: units of the group using it (count, capped at 2) */
  size_t lockuse_cap;
  uint32_t *holder; /* per local lock: unit + 1, 0 free */
  size_t holder_cap;
  search_frame *fr;
  size_t fr_cap;
  uint32_t *sched; /* group event index of each executed event */
  size_t sched_cap, ns;
  int32_t *rf, *fin, *lastw; /* per scheduled event / per local variable */
  size_t rf_cap, fin_cap, lw_cap;
  int32_t *undo; /* (variable, previous last writer) pairs of all_place */
  size_t undo_cap, nundo;
  uint32_t *uof; /* group event -> its unit's index in the group */
  size_t uof_cap;
  uint64_t *rmask; /* per local variable: units that read it since its last write */
  size_t rmask_cap;
  uint64_t interleavings, steps, check_steps;
  int truncated;
  uint64_t work, max_work; /* steps of every group so far (max_work), its bound */
  int exhausted;           /* work reached max_work: the remaining groups are not searched */
} group_search;

static void all_free(atom__mem *m, group_search *a) {
  atom__mem_free(m, a->pev, a->pcap * sizeof *a->pev);
  atom__mem_free(m, a->poff, a->poff_cap * sizeof *a->poff);
  atom__mem_free(m, a->uf, a->uf_cap * sizeof *a->uf);
  atom__mem_free(m, a->vfirst, a->vf_cap * sizeof *a->vfirst);
  atom__mem_free(m, a->st1, a->st_cap * sizeof *a->st1);
  atom__mem_free(m, a->st2, a->st_cap * sizeof *a->st2);
  atom__mem_free(m, a->fwp, a->st_cap * sizeof *a->fwp);
  atom__mem_free(m, a->gev, a->gev_cap * sizeof *a->gev);
  atom__mem_free(m, a->need, a->need_cap * sizeof *a->need);
  atom__mem_free(m, a->vmap, a->vmap_cap * sizeof *a->vmap);
  atom__mem_free(m, a->lmap, a->lmap_cap * sizeof *a->lmap);
  atom__mem_free(m, a->gvar, a->gvar_cap * sizeof *a->gvar);
  atom__mem_free(m, a->lockuse, a->lockuse_cap * sizeof *a->lockuse);
  atom__mem_free(m, a->holder, a->holder_cap * sizeof *a->holder);
  atom__mem_free(m, a->fr, a->fr_cap * sizeof *a->fr);
  atom__mem_free(m, a->sched, a->sched_cap * sizeof *a->sched);
  atom__mem_free(m, a->rf, a->rf_cap * sizeof *a->rf);
  atom__mem_free(m, a->fin, a->fin_cap * sizeof *a->fin);
  atom__mem_free(m, a->lastw, a->lw_cap * sizeof *a->lastw);
  atom__mem_free(m, a->undo, a->undo_cap * sizeof *a->undo);
  atom__mem_free(m, a->uof, a->uof_cap * sizeof *a->uof);
  atom__mem_free(m, a->rmask, a->rmask_cap * sizeof *a->rmask);
  memset(a, 0, sizeof *a);
}

/* The UR-FW projection of every unit: the first uninitialized read and the final write of
 * each shared variable, and every lock operation, in order. */
static int all_project(block *b, group_search *a) {
  size_t vc = b->var_cap + 1;
  if (!(a->st1 = atom__mem_calloc(b->mem, vc, sizeof *a->st1)) ||
      !(a->st2 = atom__mem_calloc(b->mem, vc, sizeof *a->st2)) ||
      !(a->fwp = atom__mem_calloc(b->mem, vc, sizeof *a->fwp)))
    return ATOM_ENOMEM;
  a->st_cap = vc;
  if (ATOM__GROW(b->mem, a->poff, a->poff_cap, b->unit_n + 1)) return ATOM_ENOMEM;
  for (size_t u = 0; u < b->unit_n; u++) {
    const block_unit *un = &b->unit[u];
    const block_record *r = unit_log(b, un);
    uint32_t stamp = (uint32_t)u + 1;
    a->poff[u] = a->pn;
    for (uint32_t p = 0; p < un->len; p++)
      if (rec_kind(&r[p]) == REC_WRITE) a->fwp[r[p].target] = p;
    for (uint32_t p = 0; p < un->len; p++) {
      uint32_t k = rec_kind(&r[p]), x = r[p].target;
      int keep = k >= REC_ACQUIRE;
      if (k <= REC_WRITE && shared_var(b, x)) {
        if (k == REC_WRITE) {
          keep = a->fwp[x] == p;
          a->st1[x] = stamp; /* written from here on */
        } else if (a->st1[x] != stamp && a->st2[x] != stamp) {
          keep = 1;
          a->st2[x] = stamp; /* its first uninitialized read is kept */
        }
      }
      if (!keep) continue;
      if (ATOM__GROW(b->mem, a->pev, a->pcap, a->pn + 1)) return ATOM_ENOMEM;
      a->pev[a->pn++] = (projected_event){p, k, x, rec_period(&r[p])};
    }
  }
  a->poff[b->unit_n] = a->pn;
  return 0;
}

/* Units that take part in the search: those with a shared access; those that fork or join
 * (even without accesses, such a unit can close a cycle of serial-order constraints: it must
 * come before the thread it forks and after the thread it joins); and those with lock
 * operations (a lock block without accesses still decides which interleavings are feasible). */
static int all_has_access(const block *b, const group_search *a, uint32_t u) {
  return b->unit[u].pfirst != b->unit[u].plast || a->poff[u + 1] > a->poff[u];
}

/* Units u before v in every schedule, or some event of u before some event of v (fork/join,
 * or a lock v keeps for good): a serial order must put u first. */
static int must_precede(const block *b, uint32_t u, uint32_t v) {
  const block_unit *uu = &b->unit[u], *vv = &b->unit[v];
  if (uu->thread == vv->thread) return u < v;
  if (atom__periods_before(&b->periods, uu->pfirst, vv->plast)) return 1;
  return vv->forever != ATOM__LS_EMPTY && !atom__ls_disjoint(&b->ls, vv->forever, uu->used);
}

/* Build the group's event arrays: accesses, and operations on locks two of its units use. */
static int all_group(block *b, group_search *a) {
  uint32_t k = a->k;
  size_t n = 0;
  a->nvar = a->nlock = 0;
  for (uint32_t i = 0; i < k; i++) /* locks used by two units of the group */
    for (size_t e = a->poff[a->unit[i]]; e < a->poff[a->unit[i] + 1]; e++) {
      const projected_event *p = &a->pev[e];
      if (p->kind < REC_ACQUIRE) continue;
      uint32_t *c = &a->lockuse[p->target];
      if ((*c & 0xffffu) != i + 1) *c = ((*c >> 16) + 1 > 2 ? 2 : (*c >> 16) + 1) << 16 | (i + 1);
    }
  for (uint32_t i = 0; i < k; i++) {
    uint32_t u = a->unit[i];
    a->off[i] = (uint32_t)n;
    for (size_t e = a->poff[u]; e < a->poff[u + 1]; e++) {
      projected_event p = a->pev[e];
      if (p.kind >= REC_ACQUIRE) {
        if ((a->lockuse[p.target] >> 16) < 2) continue;
        if (!a->lmap[p.target]) a->lmap[p.target] = ++a->nlock;
        p.target = a->lmap[p.target] - 1;
      } else {
        if (!a->vmap[p.target]) {
          if (ATOM__GROW(b->mem, a->gvar, a->gvar_cap, (size_t)a->nvar + 1)) return ATOM_ENOMEM;
          a->gvar[a->nvar] = p.target;
          a->vmap[p.target] = ++a->nvar;
        }
        p.target = a->vmap[p.target] - 1;
      }
      if (ATOM__GROW(b->mem, a->gev, a->gev_cap, n + 1)) return ATOM_ENOMEM;
      a->gev[n++] = p;
    }
  }
  a->off[k] = (uint32_t)n;
  /* undo the id maps for the next group */
  for (uint32_t i = 0; i < k; i++)
    for (size_t e = a->poff[a->unit[i]]; e < a->poff[a->unit[i] + 1]; e++) {
      const projected_event *p = &a->pev[e];
      if (p->kind >= REC_ACQUIRE) {
        a->lockuse[p->target] = 0;
        a->lmap[p->target] = 0;
      } else {
        a->vmap[p->target] = 0;
      }
    }
  /* fork/join requirements of every event, and the serial-order constraints */
  if (ATOM__GROW(b->mem, a->need, a->need_cap, n * k + 1) ||
      ATOM__GROW(b->mem, a->holder, a->holder_cap, (size_t)a->nlock + 1) ||
      ATOM__GROW(b->mem, a->sched, a->sched_cap, n + 1) ||
      ATOM__GROW(b->mem, a->rf, a->rf_cap, n + 1) ||
      ATOM__GROW(b->mem, a->fr, a->fr_cap, n + 2) ||
      ATOM__GROW(b->mem, a->fin, a->fin_cap, (size_t)a->nvar + 1) ||
      ATOM__GROW(b->mem, a->lastw, a->lw_cap, (size_t)a->nvar + 1) ||
      ATOM__GROW(b->mem, a->undo, a->undo_cap, 2 * n + 2) ||
      ATOM__GROW(b->mem, a->uof, a->uof_cap, n + 1) ||
      ATOM__GROW(b->mem, a->rmask, a->rmask_cap, (size_t)a->nvar + 1))
    return ATOM_ENOMEM;
  for (uint32_t i = 0; i < k; i++)
    for (uint32_t e = a->off[i]; e < a->off[i + 1]; e++) a->uof[e] = i;
  memset(a->rmask, 0, ((size_t)a->nvar + 1) * sizeof *a->rmask);
  for (uint32_t i = 0; i < k; i++) {
    uint32_t u = a->unit[i];
    a->pred[i] = 0;
    for (uint32_t j = 0; j < k; j++)
      if (j != i && must_precede(b, a->unit[j], u)) a->pred[i] |= 1ull << j;
    for (uint32_t e = a->off[i]; e < a->off[i + 1]; e++)
      for (uint32_t j = 0; j < k; j++) {
        uint32_t c = 0, v = a->unit[j];
        if (j != i) {
          if (b->unit[v].thread == b->unit[u].thread) {
            c = v < u ? a->off[j + 1] - a->off[j] : 0;
          } else {
            while (a->off[j] + c < a->off[j + 1] &&
                   atom__periods_before(&b->periods, a->gev[a->off[j] + c].period, a->gev[e].period))
              c++;
          }
        }
        a->need[(size_t)e * k + j] = c;
      }
  }
  return 0;
}

static int all_enabled(const group_search *a, uint32_t i) {
  if (a->off[i] + a->pos[i] >= a->off[i + 1]) return 0;
  uint32_t e = a->off[i] + a->pos[i];
  const uint32_t *nd = a->need + (size_t)e * a->k;
  for (uint32_t j = 0; j < a->k; j++)
    if (a->pos[j] < nd[j]) return 0;
  const projected_event *p = &a->gev[e];
  return p->kind != REC_ACQUIRE || a->holder[p->target] == 0;
}

static uint64_t all_enabled_set(const group_search *a) {
  uint64_t s = 0;
  for (uint32_t i = 0; i < a->k; i++)
    if (all_enabled(a, i)) s |= 1ull << i;
  return s;
}

/* Events of different units commute unless they access one variable (not both reading) or
 * operate on one lock. */
static int all_dependent(const projected_event *x, const projected_event *y) {
  if ((x->kind >= REC_ACQUIRE) != (y->kind >= REC_ACQUIRE) || x->target != y->target) return 0;
  if (x->kind >= REC_ACQUIRE) return 1;
  return x->kind == REC_WRITE || y->kind == REC_WRITE;
}

/* Is there a serial order of the units in `mask` with the reads-from (a->rf) and final writes
 * (a->fin) of the schedule? Depth-first over the units that may come next. */
static int all_place(group_search *a, uint64_t mask, uint64_t placed) {
  if (placed == mask) return 1;
  if (++a->check_steps > (1u << 20) || ++a->work > a->max_work) { /* per schedule; in all */
    a->truncated = 1;
    a->exhausted |= a->work > a->max_work;
    return 1; /* undecided: counted as serializable, and the bound is reported */
  }
  for (uint32_t i = 0; i < a->k; i++) {
    uint64_t bit = 1ull << i;
    if (!(mask & bit) || (placed & bit) || (a->pred[i] & mask & ~placed)) continue;
    int ok = 1;
    for (uint32_t e = a->off[i]; e < a->off[i + 1] && ok; e++) {
      const projected_event *p = &a->gev[e];
      if (p->kind == REC_READ) ok = a->lastw[p->target] == a->rf[e];
      else if (p->kind == REC_WRITE)
        ok = a->fin[p->target] == (int32_t)i || a->fin[p->target] < 0 ||
             !(placed & 1ull << a->fin[p->target]);
    }
    if (!ok) continue;
    size_t mark = a->nundo; /* each unit writes a variable at most once (its final write) */
    for (uint32_t e = a->off[i]; e < a->off[i + 1]; e++)
      if (a->gev[e].kind == REC_WRITE) {
        a->undo[a->nundo++] = (int32_t)a->gev[e].target;
        a->undo[a->nundo++] = a->lastw[a->gev[e].target];
        a->lastw[a->gev[e].target] = (int32_t)i;
      }
    int found = all_place(a, mask, placed | bit);
    while (a->nundo > mark) {
      a->nundo -= 2;
      a->lastw[a->undo[a->nundo]] = a->undo[a->nundo + 1];
    }
    if (found) return 1;
  }
  return 0;
}

/* Conflict serializability of the schedule (restricted to mask) with the serial-order
 * constraints: the graph of units with an edge for each conflicting pair and each pred is
 * acyclic. It implies view serializability and settles almost every schedule at once. */
static int all_conflict_serializable(group_search *a, uint64_t mask) {
  uint64_t succ[ALL_MAX_UNITS] = {0};
  for (uint32_t x = 0; x < a->nvar; x++) {
    a->lastw[x] = -1;
  }
  for (size_t s = 0; s < a->ns; s++) {
    uint32_t e = a->sched[s], i = a->uof[e];
    if (!(mask & 1ull << i)) continue;
    const projected_event *p = &a->gev[e];
    if (p->kind > REC_WRITE) continue;
    int32_t w = a->lastw[p->target];
    if (w >= 0 && (uint32_t)w != i) succ[w] |= 1ull << i;
    if (p->kind == REC_WRITE) {
      for (uint64_t r = a->rmask[p->target] & ~(1ull << i); r; r &= r - 1)
        succ[__builtin_ctzll(r)] |= 1ull << i;
      a->rmask[p->target] = 0;
      a->lastw[p->target] = (int32_t)i;
    } else {
      a->rmask[p->target] |= 1ull << i;
    }
  }
  for (uint32_t x = 0; x < a->nvar; x++) a->rmask[x] = 0;
  uint64_t left = mask;
  for (uint32_t i = 0; i < a->k; i++)
    if (mask & 1ull << i)
      for (uint64_t q = a->pred[i] & mask; q; q &= q - 1) succ[__builtin_ctzll(q)] |= 1ull << i;
  /* Kahn's algorithm on at most 64 nodes: drop every node no remaining node points to */
  while (left) {
    uint64_t pointed = 0;
    for (uint64_t q = left; q; q &= q - 1) pointed |= succ[__builtin_ctzll(q)];
    uint64_t sources = left & ~pointed;
    if (!sources) return 0;
    left &= ~sources;
  }
  return 1;
}

/* View-serializability of the current schedule restricted to the units in mask. */
static int all_serializable(group_search *a, uint64_t mask) {
  if (all_conflict_serializable(a, mask)) return 1;
  for (uint32_t x = 0; x < a->nvar; x++) a->lastw[x] = a->fin[x] = -1;
  for (size_t s = 0; s < a->ns; s++) {
    uint32_t e = a->sched[s], i = a->uof[e];
    if (!(mask & 1ull << i)) continue;
    const projected_event *p = &a->gev[e];
    if (p->kind == REC_READ) a->rf[e] = a->lastw[p->target];
    else if (p->kind == REC_WRITE) a->lastw[p->target] = a->fin[p->target] = (int32_t)i;
  }
  for (uint32_t x = 0; x < a->nvar; x++) a->lastw[x] = -1;
  a->nundo = 0;
  a->check_steps = 0;
  return all_place(a, mask, 0);
}

static int all_report(block *b, group_search *a, uint64_t mask) {
  uint32_t units[ALL_MAX_UNITS];
  size_t nu = 0;
  for (uint32_t i = 0; i < a->k; i++)
    if (mask & 1ull << i) units[nu++] = a->unit[i];
  for (size_t i = 1; i < nu; i++) /* oldest first */
    for (size_t j = i; j > 0 && b->unit[units[j - 1]].begin_index > b->unit[units[j]].begin_index; j--) {
      uint32_t t = units[j];
      units[j] = units[j - 1];
      units[j - 1] = t;
    }
  atom_ev ev[48];
  size_t ne = 0;
  for (size_t s = 0; s < a->ns; s++) {
    uint32_t e = a->sched[s], i = a->uof[e];
    if (!(mask & 1ull << i) || a->gev[e].kind >= REC_ACQUIRE) continue;
    if (ne < sizeof ev / sizeof ev[0]) ev[ne++] = atom__block_event(b, a->unit[i], a->gev[e].pos);
  }
  /* The session keeps consecutive transactions of one thread as one run: {tN} counts runs. */
  size_t runs = 0;
  for (size_t i = 0; i < nu; i++)
    runs += i == 0 || b->unit[units[i]].thread != b->unit[units[i - 1]].thread;
  char msg[1024];
  size_t off = 0;
  for (size_t i = 0; i < runs && i < 8; i++)
    atom__msg_append(msg, sizeof msg, &off, "%s{t%zu}", i == 0 ? "" : i + 1 == runs ? " and " : ", ",
                     i);
  if (runs > 8) atom__msg_append(msg, sizeof msg, &off, " and others");
  atom__msg_append(msg, sizeof msg, &off, " are not atomic together: they can run as");
  for (size_t i = 0; i < ne && i < 12; i++)
    atom__msg_append(msg, sizeof msg, &off, "%s{e%zu}", i ? ", then " : " ", i);
  if (ne > 12) atom__msg_append(msg, sizeof msg, &off, ", ...");
  atom__msg_append(msg, sizeof msg, &off, ", and no serial order reads and leaves the same values");
  for (size_t i = 0; i < nu; i++) atom__block_mark_bad(b, units[i]);
  return atom__block_report(b, "unserializable-interleaving", units, nu, ev, ne, msg);
}

static int all_bound(block *b, group_search *a, const char *why) {
  char msg[512];
  snprintf(msg, sizeof msg,
             "scope=all: %s on a group of %u related transactions, the first beginning at event "
             "%" PRIu64 " (%" PRIu64 " interleavings explored): its atomicity is undecided",
             why, a->k, b->unit[a->unit[0]].begin_index, a->interleavings);
  return atom__block_undecided(b, msg);
}

/* A non-serializable schedule was found: shrink it to a smallest set of units that is still
 * not serializable, and report it unless it is a pair the pair analysis reported. */
static int all_found(block *b, group_search *a) {
  uint64_t mask = a->k == 64 ? ~0ull : (1ull << a->k) - 1;
  for (uint32_t i = 0; i < a->k; i++) {
    uint64_t m = mask & ~(1ull << i);
    if (!all_serializable(a, m)) mask = m;
  }
  if (a->exhausted) return 0;
  if (a->truncated) return all_bound(b, a, "the serializability test ran out of steps");
  uint32_t n = 0, bad = 0;
  for (uint32_t i = 0; i < a->k; i++)
    if (mask & 1ull << i) {
      n++;
      bad += b->site_bad[b->unit[a->unit[i]].site];
    }
  if (n <= 2 && bad == n) return 0;
  return all_report(b, a, mask);
}

/* Depth-first search over the feasible interleavings of the group, with sleep sets. */
static int all_search(block *b, group_search *a) {
  uint32_t k = a->k;
  uint32_t total = a->off[k];
  memset(a->pos, 0, sizeof a->pos);
  memset(a->holder, 0, ((size_t)a->nlock + 1) * sizeof *a->holder);
  a->ns = 0;
  a->interleavings = a->steps = a->check_steps = 0;
  a->truncated = 0;
  uint64_t full = k == 64 ? ~0ull : (1ull << k) - 1;
  size_t depth = 0;
  a->fr[0] = (search_frame){0, all_enabled_set(a), -1};
  for (;;) {
    atom__block_tick(b, b->work_base);
    search_frame *f = &a->fr[depth];
    if (f->chosen >= 0) { /* undo the event chosen at this depth */
      uint32_t i = (uint32_t)f->chosen;
      a->pos[i]--;
      a->ns--;
      const projected_event *p = &a->gev[a->off[i] + a->pos[i]];
      if (p->kind == REC_ACQUIRE) a->holder[p->target] = 0;
      else if (p->kind == REC_RELEASE) a->holder[p->target] = i + 1;
      f->sleep |= 1ull << i;
      f->chosen = -1;
    }
    if (!f->todo) {
      if (depth == 0) break;
      depth--;
      continue;
    }
    if (++a->steps > b->max_il * 64 + total) return all_bound(b, a, "max_interleavings reached");
    if (++a->work > a->max_work) {
      a->exhausted = 1;
      return 0;
    }
    uint32_t i = (uint32_t)__builtin_ctzll(f->todo);
    f->todo &= f->todo - 1;
    const projected_event *p = &a->gev[a->off[i] + a->pos[i]];
    uint64_t sleep = 0;
    for (uint64_t s = f->sleep; s; s &= s - 1) {
      uint32_t j = (uint32_t)__builtin_ctzll(s);
      if (!all_dependent(&a->gev[a->off[j] + a->pos[j]], p)) sleep |= 1ull << j;
    }
    a->sched[a->ns++] = a->off[i] + a->pos[i];
    if (p->kind == REC_ACQUIRE) a->holder[p->target] = i + 1;
    else if (p->kind == REC_RELEASE) a->holder[p->target] = 0;
    a->pos[i]++;
    f->chosen = (int)i;
    if (a->ns == total) {
      a->interleavings++;
      if (!all_serializable(a, full)) return all_found(b, a);
      if (a->exhausted) return 0;
      if (a->truncated) return all_bound(b, a, "the serializability test ran out of steps");
      if (a->interleavings >= b->max_il) {
        /* done only if nothing is left to explore */
        int more = 0;
        for (size_t d = 0; d <= depth && !more; d++) more = a->fr[d].todo != 0;
        if (more) return all_bound(b, a, "max_interleavings reached");
      }
      continue;
    }
    uint64_t en = all_enabled_set(a);
    if (!en) continue; /* deadlock: not a complete schedule */
    a->fr[++depth] = (search_frame){sleep, en & ~sleep, -1};
  }
  (void)full;
  return 0;
}

/* Groups: units that access a common shared variable, units of one thread and of threads
 * that fork or join one another (program order and fork/join order units), units that take a
 * lock another keeps for good -- transitively. 000 §5.4 splits by variables only; the orders
 * are needed too, because a cycle of serial-order constraints may run through units that
 * share no variable (a read orders two units in one group, program order or a fork closes the
 * cycle through another). a->uf becomes the union-find of the groups. */
static int group_units(block *b, group_search *a) {
  size_t nu = b->unit_n, nt = b->th_cap + 1;
  uint32_t *tuf = NULL, *trep = NULL; /* threads related by fork or join; a unit of each class */
  if (!(tuf = atom__mem_alloc(b->mem, nt * sizeof *tuf)) ||
      !(trep = atom__mem_alloc(b->mem, nt * sizeof *trep))) {
    atom__mem_free(b->mem, tuf, nt * sizeof *tuf);
    return ATOM_ENOMEM;
  }
  atom__uf_init(tuf, nt);
  for (size_t t = 0; t < nt; t++) trep[t] = NONE32;
  for (size_t i = 0; i + 1 < b->fj_n; i += 2)
    if (b->fj[i] < nt && b->fj[i + 1] < nt) atom__uf_union(tuf, b->fj[i], b->fj[i + 1]);
  atom__uf_init(a->uf, nu);
  for (size_t u = 0; u < nu; u++) {
    if (!all_has_access(b, a, (uint32_t)u)) continue;
    uint32_t tc = atom__uf_find(tuf, b->unit[u].thread);
    if (trep[tc] == NONE32) trep[tc] = (uint32_t)u;
    else atom__uf_union(a->uf, trep[tc], (uint32_t)u);
    for (size_t e = a->poff[u]; e < a->poff[u + 1]; e++) {
      const projected_event *p = &a->pev[e];
      if (p->kind >= REC_ACQUIRE) continue;
      if (!a->vfirst[p->target]) a->vfirst[p->target] = (uint32_t)u + 1;
      else atom__uf_union(a->uf, a->vfirst[p->target] - 1, (uint32_t)u);
    }
  }
  atom__mem_free(b->mem, tuf, nt * sizeof *tuf);
  atom__mem_free(b->mem, trep, nt * sizeof *trep);
  for (size_t u = 0; u < nu; u++) /* locks kept for good order their other users */
    if (b->unit[u].forever != ATOM__LS_EMPTY && all_has_access(b, a, (uint32_t)u))
      for (size_t v = 0; v < nu; v++)
        if (v != u && all_has_access(b, a, (uint32_t)v) &&
            !atom__ls_disjoint(&b->ls, b->unit[u].forever, b->unit[v].used))
          atom__uf_union(a->uf, (uint32_t)u, (uint32_t)v);
  return 0;
}

/* order[0 .. *no) := the units that take part, bucketed by group (a stable counting sort by
 * group root, so each group keeps the order of its units). order has unit_n + 1 entries. */
static int order_by_group(block *b, group_search *a, uint32_t *order, size_t *no) {
  size_t nu = b->unit_n, n = 0;
  for (size_t u = 0; u < nu; u++)
    if (all_has_access(b, a, (uint32_t)u)) order[n++] = (uint32_t)u;
  uint32_t *cnt = atom__mem_calloc(b->mem, nu + 1, sizeof *cnt), *tmp = NULL;
  if (cnt) tmp = atom__mem_alloc(b->mem, (n + 1) * sizeof *tmp);
  if (!cnt || !tmp) {
    atom__mem_free(b->mem, cnt, (nu + 1) * sizeof *cnt);
    return ATOM_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) cnt[atom__uf_find(a->uf, order[i]) + 1]++;
  for (size_t r = 0; r < nu; r++) cnt[r + 1] += cnt[r];
  for (size_t i = 0; i < n; i++) tmp[cnt[atom__uf_find(a->uf, order[i])]++] = order[i];
  memcpy(order, tmp, n * sizeof *order);
  atom__mem_free(b->mem, cnt, (nu + 1) * sizeof *cnt);
  atom__mem_free(b->mem, tmp, (n + 1) * sizeof *tmp);
  *no = n;
  return 0;
}

/* The total bound (max_work) stopped the search in the group that ends at order[ge]: it and
 * every later group of more than two units are left undecided. Counted as one more undecided
 * item, its reason preferred: it is the one to raise. */
static void stop_search(block *b, group_search *a, const uint32_t *order, size_t ge, size_t no) {
  uint64_t left = 1;
  for (size_t h = ge; h < no;) {
    uint32_t r2 = atom__uf_find(a->uf, order[h]);
    size_t he = h;
    while (he < no && atom__uf_find(a->uf, order[he]) == r2) he++;
    left += he - h > 2;
    h = he;
  }
  char msg[400];
  snprintf(msg, sizeof msg,
             "scope=all: the search stopped after %" PRIu64 " steps (max_work=%" PRIu64
             "): %" PRIu64 " group%s of more than two related transactions not searched",
             a->work - 1, b->max_work, left, left == 1 ? "" : "s");
  b->undecided++;
  atom__block_set_why(b, msg);
}

/* One search per group of order (bucketed by group), skipping groups already decided: those
 * of two units (the pairs decide them, Thm 5.4), of one thread, or with a reported pair. */
static int search_groups(block *b, group_search *a, const uint32_t *order, size_t no) {
  int rc = 0;
  for (size_t g = 0; g < no && !rc;) {
    uint32_t root = atom__uf_find(a->uf, order[g]);
    size_t ge = g, bad = 0;
    int multi = 0;
    while (ge < no && atom__uf_find(a->uf, order[ge]) == root) {
      uint32_t u = order[ge];
      bad += b->unit_bad[u];
      multi |= b->unit[u].thread != b->unit[order[g]].thread;
      if (ge - g < ALL_MAX_UNITS) a->unit[ge - g] = u;
      ge++;
    }
    size_t count = ge - g;
    g = ge;
    if (count <= 2 || bad || !multi) continue;
    if (count > ALL_MAX_UNITS) {
      a->k = ALL_MAX_UNITS;
      char why[96];
      snprintf(why, sizeof why, "a group of %zu transactions is more than the search handles (%d)",
                 count, ALL_MAX_UNITS);
      rc = all_bound(b, a, why);
      continue;
    }
    a->k = (uint32_t)count;
    if ((rc = all_group(b, a))) break;
    rc = all_search(b, a);
    if (!rc && a->exhausted) {
      stop_search(b, a, order, ge, no);
      break;
    }
  }
  return rc;
}

int atom__block_scope_all(block *b) {
  group_search a;
  memset(&a, 0, sizeof a);
  a.max_work = b->max_work;
  int rc = all_project(b, &a);
  size_t nu = b->unit_n;
  if (!rc && (ATOM__GROW(b->mem, a.uf, a.uf_cap, nu + 1) ||
              ATOM__GROW(b->mem, a.vfirst, a.vf_cap, b->var_cap + 1) ||
              ATOM__GROW(b->mem, a.vmap, a.vmap_cap, b->var_cap + 1) ||
              ATOM__GROW(b->mem, a.lmap, a.lmap_cap, (size_t)b->nlocks + 1) ||
              ATOM__GROW(b->mem, a.lockuse, a.lockuse_cap, (size_t)b->nlocks + 1)))
    rc = ATOM_ENOMEM;
  if (!rc) rc = group_units(b, &a);
  uint32_t *order = rc ? NULL : atom__mem_alloc(b->mem, (nu + 1) * sizeof *order);
  if (!rc && !order) rc = ATOM_ENOMEM;
  size_t no = 0;
  if (!rc) rc = order_by_group(b, &a, order, &no);
  if (!rc) rc = search_groups(b, &a, order, no);
  atom__mem_free(b->mem, order, (nu + 1) * sizeof *order);
  all_free(b->mem, &a);
  return rc;
}
