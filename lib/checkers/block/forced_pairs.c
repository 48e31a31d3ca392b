/* block: the pairs of units that fork/join partly orders, decided on their progress graph. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"

/* ---- analysis: pairs that fork/join partly orders ---------------------------------------------
 *
 * 000 §5.1 decides feasibility with locks only. When a transaction forks or joins a thread,
 * some events of t must precede some events of t' (or the converse) although neither
 * transaction precedes the other as a whole: then only one serial order is feasible (or none,
 * when t' is nested inside t), Thm 5.1 does not apply, and the patterns that matter are those
 * that contradict the one serial order F;S:
 *   read-later      a read of F reads a write of S;
 *   overwritten-read a write of F comes between a write of S and a later read of S;
 *   early-read      an uninitialized read of S runs before the final write of F;
 *   final-write     the final write of S precedes the final write of F;
 *   no-serial-order F;S itself is not a feasible schedule.
 * Each is decided exactly on the progress graph of the pair: cell (i, j) = F has run i of its
 * events, S j of its; a cell is forbidden when both hold a common lock or when fork/join
 * requires an event not yet run; an order of events is feasible iff a monotone path from
 * (0, 0) to the far corner realizes it. Only accesses of variables both access (one writing)
 * and operations on locks both use are kept. */

typedef struct grid_event {
  uint32_t pos;    /* position in the unit's log */
  uint32_t kind, target, period;
  atom__ls held;   /* locks held after it (kept locks only) */
  uint32_t prev_w; /* 1-based index of the unit's previous write of the variable, 0 if none */
} grid_event;

typedef struct progress_grid {
  grid_event *c[2];
  size_t n[2], cap[2];
  uint32_t *lreq[2]; /* lreq[s][j]: events of the other side that must precede event j of s */
  size_t lcap[2];
  uint8_t *fr, *br;
  size_t cells, fcap, bcap;
  uint32_t wstamp;
  uint32_t *vs[2], *vw[2], *ls[2]; /* stamps: variable accessed / written / lock used by side */
  uint32_t *lws, *lwi; /* per variable: stamp, and 1-based index of the side's last write */
  size_t vcap, lkcap;
  uint32_t stamp;
} progress_grid;

#define GRID_MAX_CELLS ((size_t)1 << 24)

static void grid_free(atom__mem *m, progress_grid *g) {
  for (int s = 0; s < 2; s++) {
    atom__mem_free(m, g->c[s], g->cap[s] * sizeof *g->c[s]);
    atom__mem_free(m, g->lreq[s], g->lcap[s] * sizeof *g->lreq[s]);
    atom__mem_free(m, g->vs[s], g->vcap * sizeof *g->vs[s]);
    atom__mem_free(m, g->vw[s], g->vcap * sizeof *g->vw[s]);
    atom__mem_free(m, g->ls[s], g->lkcap * sizeof *g->ls[s]);
  }
  atom__mem_free(m, g->lws, g->vcap * sizeof *g->lws);
  atom__mem_free(m, g->lwi, g->vcap * sizeof *g->lwi);
  atom__mem_free(m, g->fr, g->fcap);
  atom__mem_free(m, g->br, g->bcap);
  memset(g, 0, sizeof *g);
}

/* The per-variable and per-lock stamps of the grid, zeroed; made once, for the first pair that
 * needs a grid. 0 or ATOM_ENOMEM (then grid_free frees what was made). */
static int grid_alloc(const block *b, progress_grid *g) {
  g->vcap = b->var_cap + 1; /* set first: grid_free frees by these sizes */
  g->lkcap = (size_t)b->nlocks + 1;
  for (int s = 0; s < 2; s++)
    if (!(g->vs[s] = atom__mem_calloc(b->mem, g->vcap, sizeof *g->vs[s])) ||
        !(g->vw[s] = atom__mem_calloc(b->mem, g->vcap, sizeof *g->vw[s])) ||
        !(g->ls[s] = atom__mem_calloc(b->mem, g->lkcap, sizeof *g->ls[s])))
      return ATOM_ENOMEM;
  if (!(g->lws = atom__mem_calloc(b->mem, g->vcap, sizeof *g->lws)) ||
      !(g->lwi = atom__mem_calloc(b->mem, g->vcap, sizeof *g->lwi)))
    return ATOM_ENOMEM;
  return 0;
}

/* Keep the events of unit u (side s) that can interact with the other side. @return 0,
 * ATOM_ENOMEM, or 1 if the side holds more than HELD_PREFIXES common locks at once (then the
 * pair is not decided: lock sets that deep are not interned one by one). */
static int grid_side(block *b, progress_grid *g, int s, uint32_t u, uint32_t wstamp) {
  const block_unit *un = &b->unit[u];
  const block_record *r = unit_log(b, un);
  int o = 1 - s;
  atom__ls held = ATOM__LS_EMPTY;
  size_t depth = 0;
  g->n[s] = 0;
  for (uint32_t p = 0; p < un->len; p++) {
    uint32_t k = rec_kind(&r[p]), x = r[p].target;
    int keep;
    if (k <= REC_WRITE)
      keep = g->vs[o][x] == g->stamp && (g->vw[o][x] == g->stamp || g->vw[s][x] == g->stamp);
    else
      keep = g->ls[o][x] == g->stamp;
    if (!keep) continue;
    if (k == REC_ACQUIRE) {
      if (++depth > HELD_PREFIXES) return 1;
      if (atom__ls_add(&b->ls, held, x, &held)) return ATOM_ENOMEM;
    }
    if (k == REC_RELEASE) {
      depth--;
      if (atom__ls_remove(&b->ls, held, x, &held)) return ATOM_ENOMEM;
    }
    uint32_t prev = 0;
    if (k <= REC_WRITE && g->lws[x] == wstamp) prev = g->lwi[x];
    if (ATOM__GROW(b->mem, g->c[s], g->cap[s], g->n[s] + 1)) return ATOM_ENOMEM;
    g->c[s][g->n[s]++] = (grid_event){p, k, x, rec_period(&r[p]), held, prev};
    if (k == REC_WRITE) {
      g->lws[x] = wstamp;
      g->lwi[x] = (uint32_t)g->n[s];
    }
  }
  return 0;
}

static void grid_marks(const block *b, progress_grid *g, int s, uint32_t u) {
  const block_unit *un = &b->unit[u];
  const block_record *r = unit_log(b, un);
  for (uint32_t p = 0; p < un->len; p++) {
    uint32_t k = rec_kind(&r[p]), x = r[p].target;
    if (k <= REC_WRITE) {
      g->vs[s][x] = g->stamp;
      if (k == REC_WRITE) g->vw[s][x] = g->stamp;
    } else {
      g->ls[s][x] = g->stamp;
    }
  }
}

static inline int cell_ok(const block *b, const progress_grid *g, size_t i, size_t j) {
  if (i < g->lreq[1][j] || j < g->lreq[0][i]) return 0;
  atom__ls hf = i ? g->c[0][i - 1].held : ATOM__LS_EMPTY;
  atom__ls hs = j ? g->c[1][j - 1].held : ATOM__LS_EMPTY;
  return hf == ATOM__LS_EMPTY || hs == ATOM__LS_EMPTY || atom__ls_disjoint(&b->ls, hf, hs);
}

#define FR(g, i, j) ((g)->fr[(i) * ((g)->n[1] + 1) + (j)])
#define BR(g, i, j) ((g)->br[(i) * ((g)->n[1] + 1) + (j)])

/* S's event j (1-based) can run while F has run exactly i events, on a complete path. */
static inline int vert(const progress_grid *g, size_t j, size_t i) { return FR(g, i, j - 1) && BR(g, i, j); }
/* F's event i (1-based) can run while S has run exactly j events. */
static inline int horz(const progress_grid *g, size_t i, size_t j) { return FR(g, i - 1, j) && BR(g, i, j); }

static int vert_in(const progress_grid *g, size_t j, size_t lo, size_t hi) {
  for (size_t i = lo; i <= hi && i <= g->n[0]; i++)
    if (vert(g, j, i)) return 1;
  return 0;
}
static int horz_in(const progress_grid *g, size_t i, size_t lo, size_t hi) {
  for (size_t j = lo; j <= hi && j <= g->n[1]; j++)
    if (horz(g, i, j)) return 1;
  return 0;
}


static int report_fj(block *b, int pattern, uint32_t uf, uint32_t us, const atom_ev *ev, size_t ne) {
  uint32_t units[2] = {uf, us};
  atom__block_mark_bad(b, uf);
  atom__block_mark_bad(b, us);
  return atom__block_finding(b, "fork-join-order", SAYS_FORCED + (unsigned)pattern, units, ev, ne,
                 100 + (uint64_t)pattern);
}

/* Keep the events of F (unit uf, side 0) and S (unit us, side 1) that can interact. @return
 * 0, ATOM_ENOMEM, or 1 when the pair is too big or too deep for the search (then it is
 * counted as undecided). */
static int grid_events(block *b, progress_grid *g, uint32_t uf, uint32_t us) {
  int rc;
  if (++g->stamp == 0) { /* wrapped: clear the stamps */
    for (int s = 0; s < 2; s++) {
      memset(g->vs[s], 0, g->vcap * sizeof *g->vs[s]);
      memset(g->vw[s], 0, g->vcap * sizeof *g->vw[s]);
      memset(g->ls[s], 0, g->lkcap * sizeof *g->ls[s]);
    }
    g->stamp = 1;
  }
  grid_marks(b, g, 0, uf);
  grid_marks(b, g, 1, us);
  /* two more stamps for the last-write indices of each side */
  int deep = 0;
  for (int s = 0; s < 2 && !deep; s++) {
    if (++g->wstamp == 0) {
      memset(g->lws, 0, g->vcap * sizeof *g->lws);
      g->wstamp = 1;
    }
    rc = grid_side(b, g, s, s ? us : uf, g->wstamp);
    if (rc < 0) return rc;
    deep = rc;
  }
  size_t nf = g->n[0], ns = g->n[1];
  if (deep || (nf + 1) > GRID_MAX_CELLS / (ns + 1)) {
    char msg[512];
    uint64_t bf = b->unit[uf].begin_index, bs = b->unit[us].begin_index;
    if (deep)
      snprintf(msg, sizeof msg, "fork/join partly orders the transactions beginning at events "
               "%" PRIu64 " and %" PRIu64 ", which hold more than %d common locks at once: "
               "atomicity of the pair is undecided", bf, bs, HELD_PREFIXES);
    else
      snprintf(msg, sizeof msg, "fork/join partly orders the transactions beginning at events "
               "%" PRIu64 " and %" PRIu64 "; their %zu x %zu relevant events are too many for "
               "the exact search: atomicity of the pair is undecided", bf, bs, nf, ns);
    (void)atom__block_undecided(b, msg);
    return 1;
  }
  return 0;
}

/* The fork/join requirement of every event, then which cells are reachable from the start
 * (fr) and reach the far corner (br). */
static int grid_fill(block *b, progress_grid *g) {
  size_t nf = g->n[0], ns = g->n[1];
  /* fork/join requirements, from the periods (periods.h: exact at event level) */
  for (int s = 0; s < 2; s++) {
    int o = 1 - s;
    if (ATOM__GROW(b->mem, g->lreq[s], g->lcap[s], g->n[s] + 1)) return ATOM_ENOMEM;
    g->lreq[s][0] = 0;
    size_t k = 0;
    for (size_t j = 1; j <= g->n[s]; j++) {
      uint32_t pj = g->c[s][j - 1].period;
      while (k < g->n[o] && atom__periods_before(&b->periods, g->c[o][k].period, pj)) k++;
      g->lreq[s][j] = (uint32_t)k;
    }
  }
  /* lreq[0][i] bounds S's count in cells (i, *) -- cell_ok reads lreq[0] by F index and
   * lreq[1] by S index, as filled above. */
  size_t cells = (nf + 1) * (ns + 1);
  if (cells > g->fcap) {
    size_t c = g->fcap;
    if (ATOM__GROW(b->mem, g->fr, g->fcap, cells)) return ATOM_ENOMEM;
    if (ATOM__GROW(b->mem, g->br, c, cells)) return ATOM_ENOMEM;
    g->bcap = c;
  }
  for (size_t i = 0; i <= nf; i++)
    for (size_t j = 0; j <= ns; j++) {
      int ok = cell_ok(b, g, i, j);
      FR(g, i, j) = ok && ((i == 0 && j == 0) || (i && FR(g, i - 1, j)) || (j && FR(g, i, j - 1)));
    }
  for (size_t i = nf + 1; i-- > 0;)
    for (size_t j = ns + 1; j-- > 0;) {
      int ok = cell_ok(b, g, i, j);
      BR(g, i, j) = ok && ((i == nf && j == ns) || (i < nf && BR(g, i + 1, j)) ||
                           (j < ns && BR(g, i, j + 1)));
    }
  return 0;
}

/* What a check returns when its pattern is not there (a report returns 0 or an error). */
#define NOT_FOUND 1

/* read-later: a read r of F (after its own last write w, if any) reads a write w' of S. */
static int check_read_later(block *b, const progress_grid *g, uint32_t uf, uint32_t us) {
  const grid_event *F = g->c[0], *S = g->c[1];
  size_t nf = g->n[0], ns = g->n[1];
  atom_ev ev[2];
  for (size_t ir = 1; ir <= nf; ir++) {
    if (F[ir - 1].kind != REC_READ) continue;
    size_t iw = F[ir - 1].prev_w;
    for (size_t jw = 1; jw <= ns; jw++) {
      if (S[jw - 1].kind != REC_WRITE || S[jw - 1].target != F[ir - 1].target) continue;
      if (!vert_in(g, jw, iw, ir - 1)) continue;
      ev[0] = atom__block_event(b, uf, F[ir - 1].pos);
      ev[1] = atom__block_event(b, us, S[jw - 1].pos);
      return report_fj(b, FORCED_READ_LATER, uf, us, ev, 2);
    }
  }
  return NOT_FOUND;
}

/* overwritten-read: a write of F between a write of S and its later read; early-read: an
 * uninitialized read of S before the final write of F. */
static int check_reads_of_s(block *b, const progress_grid *g, uint32_t uf, uint32_t us) {
  const grid_event *F = g->c[0], *S = g->c[1];
  size_t nf = g->n[0], ns = g->n[1];
  atom_ev ev[3];
  for (size_t jr = 1; jr <= ns; jr++) {
    if (S[jr - 1].kind != REC_READ) continue;
    uint32_t x = S[jr - 1].target;
    size_t jp = S[jr - 1].prev_w;
    if (jp) { /* overwritten-read: a write of F between S's write and its later read */
      for (size_t iw = 1; iw <= nf; iw++) {
        if (F[iw - 1].kind != REC_WRITE || F[iw - 1].target != x) continue;
        if (!horz_in(g, iw, jp, jr - 1)) continue;
        ev[0] = atom__block_event(b, us, S[jp - 1].pos);
        ev[1] = atom__block_event(b, uf, F[iw - 1].pos);
        ev[2] = atom__block_event(b, us, S[jr - 1].pos);
        return report_fj(b, FORCED_OVERWRITTEN, uf, us, ev, 3);
      }
    } else { /* early-read: an uninitialized read of S before the final write of F */
      size_t ifw = 0;
      for (size_t i = nf; i > 0 && !ifw; i--)
        if (F[i - 1].kind == REC_WRITE && F[i - 1].target == x) ifw = i;
      if (ifw && vert_in(g, jr, 0, ifw - 1)) {
        ev[0] = atom__block_event(b, us, S[jr - 1].pos);
        ev[1] = atom__block_event(b, uf, F[ifw - 1].pos);
        return report_fj(b, FORCED_EARLY_READ, uf, us, ev, 2);
      }
    }
  }
  return NOT_FOUND;
}

/* final-write: the final write of S before the final write of F. */
static int check_final_write(block *b, const progress_grid *g, uint32_t uf, uint32_t us) {
  const grid_event *F = g->c[0], *S = g->c[1];
  size_t nf = g->n[0], ns = g->n[1];
  atom_ev ev[2];
  /* final-write: the final write of S before the final write of F */
  for (size_t jf = ns; jf > 0; jf--) {
    if (S[jf - 1].kind != REC_WRITE) continue;
    uint32_t x = S[jf - 1].target;
    int final = 1;
    for (size_t j = jf; j < ns && final; j++) final = !(S[j].kind == REC_WRITE && S[j].target == x);
    if (!final) continue;
    size_t ifw = 0;
    for (size_t i = nf; i > 0 && !ifw; i--)
      if (F[i - 1].kind == REC_WRITE && F[i - 1].target == x) ifw = i;
    if (ifw && vert_in(g, jf, 0, ifw - 1)) {
      ev[0] = atom__block_event(b, us, S[jf - 1].pos);
      ev[1] = atom__block_event(b, uf, F[ifw - 1].pos);
      return report_fj(b, FORCED_FINAL_WRITE, uf, us, ev, 2);
    }
  }
  return NOT_FOUND;
}

/* F (unit uf) must partly precede S (unit us): the patterns that contradict the one serial
 * order F;S, each a finding; the first found decides the pair. */
static int forced_pair(block *b, progress_grid *g, uint32_t uf, uint32_t us) {
  int rc = grid_events(b, g, uf, us);
  if (rc) return rc < 0 ? rc : 0;
  if ((rc = grid_fill(b, g))) return rc;
  if (!BR(g, 0, 0)) return 0; /* no complete schedule of the pair (a deadlock) */
  size_t nf = g->n[0], ns = g->n[1];
  /* F;S must be a feasible schedule */
  int serial = 1;
  for (size_t i = 0; i <= nf && serial; i++) serial = cell_ok(b, g, i, 0);
  for (size_t j = 0; j <= ns && serial; j++) serial = cell_ok(b, g, nf, j);
  if (!serial) return report_fj(b, FORCED_NO_SERIAL, uf, us, NULL, 0);
  if ((rc = check_read_later(b, g, uf, us)) != NOT_FOUND) return rc;
  if ((rc = check_reads_of_s(b, g, uf, us)) != NOT_FOUND) return rc;
  rc = check_final_write(b, g, uf, us);
  return rc == NOT_FOUND ? 0 : rc;
}

/* Units of a site, as a linked list (filled by site_lists). */
typedef struct site_units {
  uint32_t *head, *next;
  size_t hcap, ncap;
} site_units;

int atom__block_forced_pairs(block *b) {
  size_t ns = b->sites.n;
  site_units sl;
  progress_grid g;
  memset(&sl, 0, sizeof sl);
  memset(&g, 0, sizeof g);
  int rc = 0;
  if (!ns) return 0;
  if (ATOM__GROW(b->mem, sl.head, sl.hcap, ns) || ATOM__GROW(b->mem, sl.next, sl.ncap, b->unit_n)) {
    rc = ATOM_ENOMEM;
    goto out;
  }
  for (size_t s = 0; s < ns; s++) sl.head[s] = NONE32;
  for (size_t u = b->unit_n; u-- > 0;) {
    sl.next[u] = sl.head[b->unit[u].site];
    sl.head[b->unit[u].site] = (uint32_t)u;
  }
  for (size_t c = 0; c < ns && !rc; c++) {
    const block_unit *uc = &b->unit[b->site_rep[c]];
    /* only a unit that forks or joins, or keeps a lock for good, orders part of another */
    if (uc->pfirst == uc->plast && uc->forever == ATOM__LS_EMPTY) continue;
    for (size_t s = 0; s < ns && !rc; s++) {
      atom__block_tick(b, b->work_base + c);
      if (s == c) continue;
      const block_unit *us = &b->unit[b->site_rep[s]];
      if ((us->pfirst != us->plast || us->forever != ATOM__LS_EMPTY) && s < c)
        continue; /* that pair was seen from s */
      int rel = atom__block_relation(b, uc, us);
      if (rel != PAIR_FORWARD && rel != PAIR_BACKWARD && rel != PAIR_NESTED) continue;
      if (rel != PAIR_NESTED && !g.vcap && (rc = grid_alloc(b, &g))) break;
      for (uint32_t u = sl.head[c]; u != NONE32 && !rc; u = sl.next[u])
        for (uint32_t v = sl.head[s]; v != NONE32 && !rc; v = sl.next[v]) {
          if (rel == PAIR_NESTED) {
            uint32_t outer = atom__periods_before(&b->periods, b->unit[u].pfirst, b->unit[v].pfirst)
                                 ? u : v;
            rc = report_fj(b, FORCED_NESTED, outer, outer == u ? v : u, NULL, 0);
          } else {
            rc = rel == PAIR_FORWARD ? forced_pair(b, &g, u, v) : forced_pair(b, &g, v, u);
          }
        }
    }
  }
out:
  atom__mem_free(b->mem, sl.head, sl.hcap * sizeof *sl.head);
  atom__mem_free(b->mem, sl.next, sl.ncap * sizeof *sl.next);
  grid_free(b->mem, &g);
  return rc;
}

