/* Lock-order graph and potential-deadlock search (see lockorder.h). */
#include "support/lockorder.h"

#include <string.h>

#include "atomicity/error.h"
#include "support/u64map.h" /* atom__hash_mix */

void atom__lo_init(atom__lockorder *lo, atom__mem *mem) {
  memset(lo, 0, sizeof *lo);
  lo->mem = mem;
}

void atom__lo_destroy(atom__lockorder *lo) {
  atom__mem_free(lo->mem, lo->e, lo->cap * sizeof *lo->e);
  atom__mem_free(lo->mem, lo->pool, lo->pool_cap * sizeof *lo->pool);
  atom__idindex_free(&lo->seen, lo->mem);
  memset(lo, 0, sizeof *lo);
}

static int same_edge(const atom__lockorder *lo, const atom__lo_edge *e, uint32_t from, uint32_t to,
                     uint32_t thread, const uint32_t *gate, size_t ng) {
  return e->from == from && e->to == to && e->acq.thread == thread && e->gate_len == ng &&
         (ng == 0 || memcmp(lo->pool + e->gate_off, gate, ng * sizeof *gate) == 0);
}

int atom__lo_acquire(atom__lockorder *lo, uint32_t to, const atom__lo_site *acq,
                     const uint32_t *held, const atom__lo_site *held_sites, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (held[i] == to) continue;
    /* The gate: the other locks held (thread lives are never shared, so they are left out),
     * sorted so that equal sets compare equal. */
    if (ATOM__GROW(lo->mem, lo->pool, lo->pool_cap, lo->pool_len + n)) return ATOM_ENOMEM;
    uint32_t *gate = lo->pool + lo->pool_len;
    size_t ng = 0;
    for (size_t j = 0; j < n; j++) {
      if (j == i || (held[j] & ATOM__LO_THREAD) || held[j] == to) continue;
      size_t k = ng++;
      while (k > 0 && gate[k - 1] > held[j]) {
        gate[k] = gate[k - 1];
        k--;
      }
      gate[k] = held[j];
    }
    uint64_t h = atom__hash_mix(atom__hash_mix(atom__hash_mix(0, held[i]), to), acq->thread);
    for (size_t k = 0; k < ng; k++) h = atom__hash_mix(h, gate[k]);
    atom__idindex_probe p;
    atom__idindex_start(&lo->seen, h, &p);
    uint32_t found;
    while ((found = atom__idindex_next(&lo->seen, &p)) != ATOM__IDINDEX_END)
      if (same_edge(lo, &lo->e[found], held[i], to, acq->thread, gate, ng)) break;
    if (found != ATOM__IDINDEX_END) continue; /* an edge made before */
    if (lo->n >= UINT32_MAX - 1 || ATOM__GROW(lo->mem, lo->e, lo->cap, lo->n + 1))
      return ATOM_ENOMEM;
    if (atom__idindex_add(&lo->seen, lo->mem, &p, (uint32_t)lo->n)) return ATOM_ENOMEM;
    atom__lo_edge *e = &lo->e[lo->n++];
    e->from = held[i];
    e->to = to;
    e->gate_off = (uint32_t)lo->pool_len;
    e->gate_len = (uint32_t)ng;
    e->held = held_sites[i];
    e->acq = *acq;
    lo->pool_len += ng;
  }
  return 0;
}

static int disjoint(const atom__lockorder *lo, const atom__lo_edge *a, const atom__lo_edge *b) {
  const uint32_t *x = lo->pool + a->gate_off, *y = lo->pool + b->gate_off;
  uint32_t i = 0, j = 0;
  while (i < a->gate_len && j < b->gate_len) {
    if (x[i] == y[j]) return 0;
    if (x[i] < y[j]) i++;
    else j++;
  }
  return 1;
}

static int site_before(const atom__periods *ps, const atom__lo_site *a, const atom__lo_site *b) {
  if (!ps || a->period == ATOM__PERIOD_NONE || b->period == ATOM__PERIOD_NONE) return 0;
  if (a->thread == b->thread) return a->index < b->index;
  return atom__periods_before(ps, a->period, b->period);
}

/* Can edge c join the partial cycle path[0..n)? Distinct threads, disjoint gates, and all
 * holds can be in place while all acquisitions are pending. */
static int compatible(const atom__lockorder *lo, const atom__periods *ps,
                      const atom__lo_edge *const *path, size_t n, const atom__lo_edge *c) {
  for (size_t i = 0; i < n; i++) {
    const atom__lo_edge *p = path[i];
    if (p->acq.thread == c->acq.thread || !disjoint(lo, p, c)) return 0;
    if (site_before(ps, &p->acq, &c->held) || site_before(ps, &c->acq, &p->held)) return 0;
    if (p->from == c->from) return 0; /* a resource is held by one thread at a time */
  }
  return 1;
}

typedef struct lo_search {
  atom__lockorder *lo;
  const atom__periods *ps;
  size_t *order; /* edge ids sorted by `from` */
  size_t max_len;
  atom__lo_cycle_fn fn;
  void *payload;
  const atom__lo_edge *path[8];
  size_t budget;
} lo_search;

/* First position in order[] of edges leaving resource r (binary search). */
static size_t first_from(const lo_search *s, uint32_t r) {
  size_t lo = 0, hi = s->lo->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->lo->e[s->order[mid]].from < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int extend(lo_search *s, size_t n, size_t start) {
  const atom__lo_edge *last = s->path[n - 1];
  for (size_t k = first_from(s, last->to); k < s->lo->n; k++) {
    size_t id = s->order[k];
    const atom__lo_edge *c = &s->lo->e[id];
    if (c->from != last->to) break;
    if (id <= start) continue; /* each cycle once: from its smallest edge */
    if (s->budget == 0) return 0;
    s->budget--;
    if (!compatible(s->lo, s->ps, s->path, n, c)) continue;
    s->path[n] = c;
    if (c->to == s->path[0]->from) {
      int rc = s->fn(s->path, n + 1, s->payload);
      if (rc) return rc;
      continue;
    }
    if (n + 1 < s->max_len) {
      int rc = extend(s, n + 1, start);
      if (rc) return rc;
    }
  }
  return 0;
}

int atom__lo_find(atom__lockorder *lo, const atom__periods *ps, size_t max_len,
                  atom__lo_cycle_fn fn, void *payload) {
  if (lo->n < 2) return 0;
  if (max_len > 8) max_len = 8;
  if (max_len < 2) max_len = 2;
  size_t *order = atom__mem_alloc(lo->mem, lo->n * sizeof *order);
  if (!order) return ATOM_ENOMEM;
  /* Counting would need the resource range; an insertion-merge sort keeps this simple. */
  for (size_t i = 0; i < lo->n; i++) order[i] = i;
  size_t *tmp = atom__mem_alloc(lo->mem, lo->n * sizeof *tmp);
  if (!tmp) {
    atom__mem_free(lo->mem, order, lo->n * sizeof *order);
    return ATOM_ENOMEM;
  }
  for (size_t w = 1; w < lo->n; w *= 2) {
    for (size_t i = 0; i < lo->n; i += 2 * w) {
      size_t a = i, am = i + w < lo->n ? i + w : lo->n, b = am,
             bm = i + 2 * w < lo->n ? i + 2 * w : lo->n, k = i;
      while (a < am || b < bm) {
        if (b >= bm || (a < am && lo->e[order[a]].from <= lo->e[order[b]].from))
          tmp[k++] = order[a++];
        else
          tmp[k++] = order[b++];
      }
    }
    memcpy(order, tmp, lo->n * sizeof *order);
  }
  atom__mem_free(lo->mem, tmp, lo->n * sizeof *tmp);
  lo_search s;
  memset(&s, 0, sizeof s);
  s.lo = lo;
  s.ps = ps;
  s.order = order;
  s.max_len = max_len;
  s.fn = fn;
  s.payload = payload;
  s.budget = (size_t)1 << 24; /* the search is exponential in max_len: bound its work */
  int rc = 0;
  for (size_t i = 0; i < lo->n && !rc; i++) {
    s.path[0] = &lo->e[i];
    rc = extend(&s, 1, i);
  }
  atom__mem_free(lo->mem, order, lo->n * sizeof *order);
  return rc;
}
