/* block: view-atomicity by blocks and 2-blocks (Wang & Stoller, 000 §5).
 *
 * The checker is offline: on_event() only records, per unit, its accesses and lock operations
 * with the thread period of each (support/periods.h); finish() decides and frees everything.
 *
 * Units follow the conventions of 004 §2 that the corpus and the reference use: a thread is
 * *inside* while it has an open transaction or holds a lock; a unit runs from the event that
 * takes it inside to the event that takes it outside (so a lock block outside every
 * transaction is a transaction, and a transaction and a lock block that overlap are one unit);
 * every event at which a thread stays outside is a unary unit. FORK and JOIN inside a unit
 * belong to it.
 *
 * scope=pairs (000 §5.3, isAtomic-2Trans and Thm 5.4), for every two units of different threads
 * that fork/join leaves concurrent:
 *  - blocks (B1-B3) of one against the accesses of the other (isAtomicBlk): UP1-UP4, feasible
 *    when h12 ∩ held(e') = ∅ (Thm 5.1);
 *  - 2-blocks (2B1-2B2) of uninitialized reads and final writes (isAtomic2Blk): non-atomic when
 *    an interleaving of the derived table (atom__blk_2blk_mask) is feasible.
 * The paper's model has no fork/join. When fork/join or sync order (periods.h), or a lock one
 * unit never releases, orders some events of t before events of t' without ordering the whole units, one serial
 * order at most is feasible and Thm 5.1 no longer decides feasibility; such pairs are decided
 * exactly on the two-dimensional progress graph of the pair (forced_pair()).
 *
 * scope=all adds 000 §5.4: the UR-FW projections (uninitialized reads, final writes, lock
 * operations) of each group of related units are interleaved in every feasible way, up to
 * max_interleavings, and each interleaving is checked for view serializability
 * (atom__block_scope_all()). max_work bounds the steps of all groups together.
 *
 * A pair or group that a bound leaves undecided is never reported as a violation: the checker
 * becomes INCOMPLETE (atom_env_incomplete) with the first such reason and their count.
 *
 * Deduplication: units with the same thread, periods, begin location and lock usage form a
 * *site*; blocks, accesses and 2-blocks are kept once per site and content, so a loop that
 * repeats a transaction costs one set of tuples, and the pair analysis runs over sites. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/error.h"
#include "checkers/block/block.h"
#include "checkers/builtin.h"
#include "support/argval.h"

static void block_release(block *b);

static int block_finish(void *self) {
  block *b = self;
  if (b->analysed) return 0;
  b->analysed = 1;
  int rc = 0;
  /* Units still open (a thread that ends holding a lock) end with their thread's events. */
  for (size_t t = 0; t < b->th_cap && !rc; t++) {
    block_thread *th = &b->th[t];
    if (!th->open) continue;
    uint32_t p;
    if ((rc = atom__block_cur_period(b, (uint32_t)t, &p))) break;
    rc = atom__block_unit_close(b, (uint32_t)t, th, p, 1);
  }
  for (size_t t = 0; t < b->th_cap; t++) {
    atom__mem_free(b->mem, b->th[t].buf, b->th[t].cap * sizeof *b->th[t].buf);
    b->th[t].buf = NULL;
    b->th[t].cap = b->th[t].n = 0;
  }
  if (!rc) rc = atom__block_unit_locks(b);
  if (!rc) rc = atom__block_build_sites(b);
  if (!rc) rc = atom__block_build_tuples(b);
  b->work_total = b->tup.n + b->var_cap + b->sites.n + (b->scope_all ? b->unit_n : 0);
  b->work_base = 0;
  if (!rc) rc = atom__block_free_pairs(b);
  b->work_base = b->tup.n + b->var_cap;
  if (!rc) rc = atom__block_forced_pairs(b);
  b->work_base = b->tup.n + b->var_cap + b->sites.n;
  if (!rc) rc = atom__block_group_emit(b);
  if (!rc && b->scope_all) rc = atom__block_scope_all(b);
  if (!rc) (void)atom_env_progress(b->env, b->work_total, b->work_total);
  if (!rc && b->undecided) {
    char more[64] = "";
    if (b->undecided > 1)
      snprintf(more, sizeof more, " (%" PRIu64 " bounds reached in all)", b->undecided);
    rc = atom_env_incomplete(b->env, b->events, "%s%s", b->undecided_why, more);
  }
  /* Decided: nothing needs to stay (the reports belong to the session). */
  b->units_done = b->unit_n;
  b->periods_done = b->periods.n;
  block_release(b);
  return rc;
}

/* Free everything but the checker itself (its sizes are reset, so this may run twice). */
static void block_release(block *b) {
  for (size_t t = 0; t < b->th_cap; t++)
    atom__mem_free(b->mem, b->th[t].buf, b->th[t].cap * sizeof *b->th[t].buf);
#define BLOCK_FREE(arr, cap)                              \
  do {                                                    \
    atom__mem_free(b->mem, (arr), (cap) * sizeof *(arr)); \
    (arr) = NULL;                                         \
    (cap) = 0;                                            \
  } while (0)
  BLOCK_FREE(b->th, b->th_cap);
  BLOCK_FREE(b->var, b->var_cap);
  BLOCK_FREE(b->log, b->log_cap);
  BLOCK_FREE(b->unit, b->unit_cap);
  BLOCK_FREE(b->fj, b->fj_cap);
  BLOCK_FREE(b->site_rep, b->site_rep_cap);
  BLOCK_FREE(b->site_bad, b->site_bad_cap);
  BLOCK_FREE(b->unit_bad, b->unit_bad_cap);
  BLOCK_FREE(b->rep, b->rep_cap);
  BLOCK_FREE(b->hn, b->hn_cap);
  BLOCK_FREE(b->uf, b->uf_cap);
  BLOCK_FREE(b->uf_at, b->uf_at_n);
  b->hn_n = b->uf_n = 0;
#undef BLOCK_FREE
  b->log_n = b->unit_n = b->fj_n = 0;
  atom__block_keyset_free(b->mem, &b->sites);
  atom__block_keyset_free(b->mem, &b->tup);
  atom__ls_destroy(&b->ls);
  atom__periods_destroy(&b->periods);
  atom__periods_init(&b->periods, b->mem);
  atom__u64map_free(&b->seen, b->mem);
  atom__mem_free(b->mem, b->recent, 2 * FINDING_CACHE * sizeof *b->recent);
  b->recent = NULL; /* it only caches what the maps held */
  atom__mem_free(b->mem, b->grp, b->grp_cap * sizeof *b->grp);
  b->grp = NULL;
  b->grp_n = b->grp_cap = 0;
  atom__idindex_free(&b->grp_of, b->mem);
  atom__u64map_free(&b->grp_pair, b->mem);
  atom__rb_free(&b->rb);
}

static void block_destroy(void *self) {
  block *b = self;
  if (!b) return;
  block_release(b);
  atom__mem_free(b->mem, b, sizeof *b);
}

static int block_stats(void *self, atom_checker_counters *out) {
  block *b = self;
  /* units recorded, blocks/accesses/2-blocks built, thread periods */
  out->nodes = b->analysed ? b->units_done : b->unit_n;
  out->edges = b->tuples_built + b->two_blocks_made;
  out->clocks = b->analysed ? b->periods_done : b->periods.n;
  return 0;
}

static int block_create(void **self, atom_env *env) {
  int scope_all = 0;
  uint64_t max_il = 100000, max_work = BLOCK_MAX_WORK, max_2blk = BLOCK_MAX_2BLOCKS;
  uint64_t max_count = BLOCK_MAX_COUNT;
  static const char *const scopes[] = {"pairs", "all", NULL};
  int lock_blocks = 1;
  int rc = atom__arg_choice(env, "scope", scopes, &scope_all);
  if (!rc) rc = atom__arg_count(env, "max_interleavings", 1ull << 48, "2^48", &max_il);
  if (!rc) rc = atom__arg_count(env, "max_work", 1ull << 62, "2^62", &max_work);
  if (!rc) rc = atom__arg_count(env, "max_2blocks", 1ull << 62, "2^62", &max_2blk);
  if (!rc) rc = atom__arg_count(env, "max_count", 1ull << 62, "2^62", &max_count);
  if (!rc) rc = atom__arg_yes_no(env, "lock_blocks", &lock_blocks);
  if (rc) return rc;
  block *b = ATOM__NEW_STATE(env, block, own_mem);
  if (!b) return atom_env_error(env, ATOM_ENOMEM, "out of memory");
  atom__mem *mem = &b->own_mem;
  b->env = env;
  b->mem = mem;
  b->scope_all = scope_all;
  b->lock_blocks = lock_blocks;
  b->max_il = max_il;
  b->max_work = max_work;
  b->max_2blk = max_2blk;
  b->max_count = max_count;
  b->row_fast_min = BLOCK_ROW_FAST_MIN;
  atom__periods_init(&b->periods, mem);
  atom__ls_init(&b->ls, mem);
  atom__rb_init(&b->rb, mem);
  atom__block_keyset_init(&b->sites, SITE_WORDS);
  atom__block_keyset_init(&b->tup, TUPLE_WORDS);
  for (unsigned s = 0; s < ATOM__BLK_SHAPES; s++) b->tbl[s] = atom__blk_2blk_mask(s);
  *self = b;
  return 0;
}

static const char *const block_keys[] = {"scope",       "max_interleavings", "max_work",
                                         "max_2blocks", "max_count",         "lock_blocks",
                                         NULL};

const atom_checker atom__checker_block = {
    ATOM_CHECKER_ABI_VERSION,
    ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE) | ATOM_KIND_BIT(ATOM_ACQUIRE) |
        ATOM_KIND_BIT(ATOM_RELEASE) | ATOM_KIND_BIT(ATOM_FORK) | ATOM_KIND_BIT(ATOM_JOIN) |
        ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END) | ATOM_KIND_BIT(ATOM_FENCE),
    "block",
    "view-atomicity of every pair of transactions over the feasible interleavings (blocks)",
    block_keys,
    block_create,
    atom__block_on_event,
    block_finish,
    block_destroy,
    block_stats,
    .properties = ATOM_CHECKER_PROP_AT_FINISH | ATOM_CHECKER_PROP_PREDICTIVE,
};
