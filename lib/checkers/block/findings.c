/* block: findings grouped into one report per pair of transactions, and the bounds that leave
 * a pair or group undecided. */
#include <inttypes.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"
#include "support/msgbuf.h"


/* Build a report in b->rb: the transactions (units[0] first), the witness events and the
 * variables of its reads and writes (at most 8); *last := its largest event index, where it is
 * found. */
static int build_report(block *b, const uint32_t *units, size_t nu, const atom_ev *evs,
                        size_t ne, uint64_t *last) {
  atom__report_build *rb = &b->rb;
  int rc = 0;
  *last = 0;
  atom__rb_reset(rb);
  if (nu > 64) nu = 64;
  for (size_t i = 0; i < nu && !rc; i++) {
    const block_unit *un = &b->unit[units[i]];
    atom_txn_ref ref = {un->thread, un->unary & 1u, un->begin_index, un->begin_loc};
    if (un->begin_index > *last) *last = un->begin_index;
    rc = atom__rb_txn(rb, &ref);
  }
  for (size_t i = 0; i < ne && !rc; i++) {
    if (evs[i].index > *last) *last = evs[i].index;
    rc = atom__rb_event(rb, &evs[i], NULL);
  }
  return rc ? rc : atom__rb_vars_of_events(rb, 8);
}

/* Report: kind, the transactions (units[0] first), witness events, the message template
 * (version 2: {tN} {hN} {eN} {vN}, rendered by the session; NULL for a repeat, which only
 * counts an occurrence). It is found at its last event; it names the variables of its reads
 * and writes (at most 8). The dedup signature is the session's (kind, begin locations): one
 * pair of transactions is one report. */
int atom__block_report(block *b, const char *kind, const uint32_t *units, size_t nu,
                       const atom_ev *evs, size_t ne, const char *msg) {
  uint64_t last;
  int rc = build_report(b, units, nu, evs, ne, &last);
  if (rc) return rc;
  /* a feasible interleaving, not the observed one */
  return atom__rb_submit(&b->rb, b->env, kind, last, ATOM_REPORT_PREDICTED, msg, 0);
}

/* Keep msg (truncated) as the reason the checker gives. */
void atom__block_set_why(block *b, const char *msg) {
  size_t n = strlen(msg);
  if (n >= sizeof b->undecided_why) n = sizeof b->undecided_why - 1;
  memcpy(b->undecided_why, msg, n);
  b->undecided_why[n] = '\0';
}

/* A bound left a pair or group undecided: no report (an undecided search is not a violation);
 * the checker ends INCOMPLETE with the first reason and the count (block_finish). */
int atom__block_undecided(block *b, const char *msg) {
  if (b->undecided++ == 0) atom__block_set_why(b, msg);
  return 0;
}

/* Is this finding of the pair with begin locations lo <= hi new (not the same kind, pattern
 * and witness locations as an earlier one)? Only a new one counts as one more interleaving of
 * its group. */
static int fresh(block *b, const char *kind, uint64_t lo, uint64_t hi, const atom_ev *evs,
                 size_t ne, uint64_t pattern) {
  uint64_t h = 0x51;
  if (kind == b->kind_of_hash) { /* the kinds are a few constant strings: hash each once */
    h = b->kind_hash;
  } else {
    for (const char *p = kind; *p; p++) h = atom__hash_mix(h, (unsigned char)*p);
    b->kind_of_hash = kind;
    b->kind_hash = h;
  }
  h = atom__hash_mix(atom__hash_mix(h, lo), hi);
  h = atom__hash_mix(h, pattern);
  for (size_t i = 0; i < ne; i++) h = atom__hash_mix(h, evs[i].loc);
  uint64_t dummy = 0, *slot = b->recent ? &b->recent[(h ^ h >> 29) & (FINDING_CACHE - 1)] : &dummy;
  if (*slot == h && h) return 0;
  uint32_t v;
  if (atom__u64map_get(&b->seen, h, &v)) {
    *slot = h;
    return 0;
  }
  /* on failure a repeat counts once more */
  if (atom__u64map_put(&b->seen, b->mem, h, 1) == 0) *slot = h;
  return 1;
}

void atom__block_mark_bad(block *b, uint32_t u) {
  uint32_t s = b->unit[u].site;
  if (s < b->site_bad_cap) b->site_bad[s] = 1;
  if (u < b->unit_bad_cap) b->unit_bad[u] = 1;
}

/* ---- one report per pair of transactions ---------------------------------------------------
 *
 * The pair analysis finds a violation of two transactions as several findings (a pattern per
 * variable, 2-blocks, fork/join orders). A user acts on the pair, so they are grouped by the
 * pair of begin locations (the session's signature of the report) and reported once, at the
 * end of the pair analysis: the witness events of the smallest finding (earliest last event),
 * the number of the others in the message, and one occurrence per pair of units. */


/* Record a finding of units[0], units[1] (different threads). */
int atom__block_finding(block *b, const char *kind, unsigned what, const uint32_t units[2],
                   const atom_ev *evs, size_t ne, uint64_t pattern) {
  if (!b->recent) b->recent = atom__mem_calloc(b->mem, 2 * FINDING_CACHE, sizeof *b->recent);
  uint64_t la = b->unit[units[0]].begin_loc, lb = b->unit[units[1]].begin_loc;
  uint64_t lo = la < lb ? la : lb, hi = la < lb ? lb : la;
  uint64_t last = b->unit[units[0]].begin_index;
  if (b->unit[units[1]].begin_index > last) last = b->unit[units[1]].begin_index;
  for (size_t i = 0; i < ne; i++)
    if (evs[i].index > last) last = evs[i].index;
  uint32_t at = b->last_grp;
  pair_group *g;
  /* most findings belong to the same pair of begin locations as the one before */
  if (at >= b->grp_n || b->grp[at].loc[0] != lo || b->grp[at].loc[1] != hi) {
    atom__idindex_probe p;
    atom__idindex_start(&b->grp_of, atom__hash_mix(atom__hash_mix(0xb10c, lo), hi), &p);
    while ((at = atom__idindex_next(&b->grp_of, &p)) != ATOM__IDINDEX_END)
      if (b->grp[at].loc[0] == lo && b->grp[at].loc[1] == hi) break;
    if (at == ATOM__IDINDEX_END) {
      if (b->grp_n >= UINT32_MAX - 1 || ATOM__GROW(b->mem, b->grp, b->grp_cap, b->grp_n + 1) ||
          atom__idindex_add(&b->grp_of, b->mem, &p, (uint32_t)b->grp_n))
        return ATOM_ENOMEM;
      at = (uint32_t)b->grp_n++;
      g = &b->grp[at];
      memset(g, 0, sizeof *g);
      g->loc[0] = lo;
      g->loc[1] = hi;
      g->last = UINT64_MAX;
    }
  }
  b->last_grp = at;
  g = &b->grp[at];
  /* Past max_count the group no longer tells its findings apart (the set of all of them is
   * what long transactions cannot afford): only one that could become the shown finding (an
   * earlier last event) is still looked up. */
  int distinct = !g->capped || last < g->last ? fresh(b, kind, lo, hi, evs, ne, pattern) : 0;
  if (distinct || g->findings == 0) {
    if (g->findings <= b->max_count)
      g->findings++;
    else
      g->capped = 1;
    if (last < g->last) {
      g->kind = kind;
      g->units[0] = units[0];
      g->units[1] = units[1];
      g->ne = (uint32_t)(ne < 4 ? ne : 4);
      if (g->ne) memcpy(g->ev, evs, g->ne * sizeof *evs); /* evs may be NULL when ne is 0 */
      g->what = what;
      g->last = last;
    }
  }
  /* The pair of units is the key: their begin locations decide the group. */
  uint32_t u = units[0] < units[1] ? units[0] : units[1], v = units[0] ^ units[1] ^ u;
  uint64_t pk = (uint64_t)u << 32 | v;
  uint64_t dummy = 0, *slot = b->recent ? &b->recent[FINDING_CACHE + (atom__hash_mix(0x9a1, pk) &
                                                                       (FINDING_CACHE - 1))]
                                         : &dummy;
  if (*slot == pk + 1) return 0; /* + 1: 0 marks an empty slot */
  uint32_t seen;
  if (!atom__u64map_get(&b->grp_pair, pk, &seen)) {
    if (atom__u64map_put(&b->grp_pair, b->mem, pk, 1)) return ATOM_ENOMEM;
    g->pairs++;
    b->grp_pair_n++;
  }
  *slot = pk + 1;
  return 0;
}

/* The group of the begin locations lo, hi (in either order): 0 if there is none; else 1, with
 * whether its count stopped at max_count and the last event of its shown finding. */
int atom__block_group_state(const block *b, uint64_t lo, uint64_t hi, int *capped,
                            uint64_t *last) {
  if (lo > hi) {
    uint64_t t = lo;
    lo = hi;
    hi = t;
  }
  atom__idindex_probe p;
  atom__idindex_start(&b->grp_of, atom__hash_mix(atom__hash_mix(0xb10c, lo), hi), &p);
  for (uint32_t at; (at = atom__idindex_next(&b->grp_of, &p)) != ATOM__IDINDEX_END;)
    if (b->grp[at].loc[0] == lo && b->grp[at].loc[1] == hi) {
      *capped = b->grp[at].capped;
      *last = b->grp[at].last;
      return 1;
    }
  return 0;
}

/* The message template of a group: plain words, one notation ({tN} {hN} {eN}, core/format.c). */
static void group_message(const pair_group *g, char *msg, size_t size) {
  static const char *const up[4] = {
      "{e1} can run between {e0} and {e2}, and reads a value {h0} is still changing",
      "{e1} can run between {e0} and {e2}, so that the two reads see different values",
      "{e1} can run between {e0} and {e2}, so that the read does not see the write before it",
      ("{e1} can run between {e0} and {e2}, so that {h1}'s write is lost and {h0} writes from a "
       "stale read")};
  static const char *const fj = "fork and join make {h0} go first";
  size_t off = 0;
  atom__msg_append(msg, size, &off, "{t0} and {t1} are not atomic: ");
  if (g->what <= SAYS_UP4) {
    atom__msg_append(msg, size, &off, "%s", up[g->what]);
  } else if (g->what == SAYS_2BLOCK) {
    atom__msg_append(msg, size, &off, "they can run as {e0}, then {e1}, then {e2}, then {e3}, "
                     "and no serial order reads and leaves the same values");
  } else {
    switch (g->what - SAYS_FORCED) {
    case FORCED_NESTED:
      atom__msg_append(msg, size, &off, "fork and join force {h1}'s part to run inside "
                       "{h0}'s, so no serial order exists");
      break;
    case FORCED_NO_SERIAL:
      atom__msg_append(msg, size, &off, "%s, but that order is not a feasible schedule", fj);
      break;
    case FORCED_READ_LATER:
      atom__msg_append(msg, size, &off, "%s, but {e0} can run after {e1} and read its value", fj);
      break;
    case FORCED_OVERWRITTEN:
      atom__msg_append(msg, size, &off, "%s, but {e1} can run between {e0} and {e2}", fj);
      break;
    case FORCED_EARLY_READ:
      atom__msg_append(msg, size, &off, "%s, but {e0} can run before {e1}, the last write "
                       "{h0} makes to it", fj);
      break;
    default: /* FORCED_FINAL_WRITE */
      atom__msg_append(msg, size, &off, "%s, but {e0}, {h1}'s last write, can run before "
                       "{e1}, so that {h0}'s value is left last", fj);
    }
  }
  if (g->capped)
    atom__msg_append(msg, size, &off, " (at least %" PRIu64 " more interleaving%s of these two "
                     "transactions %s not serializable either)", g->findings - 1,
                     g->findings > 2 ? "s" : "", g->findings > 2 ? "are" : "is");
  else if (g->findings > 1)
    atom__msg_append(msg, size, &off, " (%" PRIu64 " more interleaving%s of these two "
                     "transactions %s not serializable either)", g->findings - 1,
                     g->findings > 2 ? "s" : "", g->findings > 2 ? "are" : "is");
}

/* Report every group once, with one occurrence per pair of units; then forget them. */
int atom__block_group_emit(block *b) {
  int rc = 0;
  for (size_t i = 0; i < b->grp_n && !rc; i++) {
    const pair_group *g = &b->grp[i];
    char msg[640];
    uint64_t last;
    group_message(g, msg, sizeof msg);
    if ((rc = build_report(b, g->units, 2, g->ev, g->ne, &last))) break;
    rc = atom__rb_submit(&b->rb, b->env, g->kind, last, ATOM_REPORT_PREDICTED, msg, 0);
    /* repeats only count an occurrence: the same report, built once, without its message */
    for (uint64_t k = 1; k < g->pairs && !rc; k++)
      rc = atom__rb_submit(&b->rb, b->env, g->kind, last, ATOM_REPORT_PREDICTED, NULL, 0);
  }
  return rc;
}
/* The slow half of atom__block_tick (block.h): tell the session. */
void atom__block_progress(block *b, uint64_t done) {
  (void)atom_env_progress(b->env, done < b->work_total ? done : b->work_total, b->work_total);
}
