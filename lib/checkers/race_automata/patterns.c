/* race-automata's patterns (001 Fig. 2) and the tables derived from them: which automata advance
 * on which event, which roles their remaining events need, where matched events are kept. */
#include <string.h>

#include "checkers/race_automata/race_automata.h"

const atom__ra_pattern atom__ra_patterns[NPAT] = {
    {3, {RU1, WV1, WU1}, "{h0} updated {v0} from a value that was already stale"},
    {3, {RU1, WV1, RU1}, "{h0}'s two reads of {v0} saw different values"},
    {3, {WU1, RV1, WU1}, "{h1} saw {v0} halfway through {h0}'s update"},
    {3, {WU1, WV1, RU1}, "{h0} did not read back the value it wrote to {v0}"},
    {3, {WU1, WV1, WU1}, "{h1}'s write to {v0} was lost"},
    {4, {WU1, WV1, WV2, WU2}, "{v0} and {v1} were left holding values of different transactions"},
    {4, {WU1, WV2, WV1, WU2}, "{v0} and {v1} were left holding values of different transactions"},
    {4, {WU1, WV2, WU2, WV1}, "{v0} and {v1} were left holding values of different transactions"},
    {4, {WU1, RV1, RV2, WU2}, "{h1} saw {v0} and {v1} halfway through {h0}'s update"},
    {4, {WU1, RV2, RV1, WU2}, "{h1} saw {v0} and {v1} halfway through {h0}'s update"},
    {4, {RU1, WV1, WV2, RU2}, "{h0} read {v0} and {v1} from two different states"},
    {4, {RU1, WV2, WV1, RU2}, "{h0} read {v0} and {v1} from two different states"},
    {4, {RU1, WV2, RU2, WV1}, "{h0} read {v0} and {v1} from two different states"},
    {4, {WU1, RV2, WU2, RV1}, "{h1} saw {v0} and {v1} halfway through {h0}'s update"},
};

/* Short name for the table in the functions below. */
static const atom__ra_pattern *const pat = atom__ra_patterns;


/* ---- tables ---------------------------------------------------------------------------------- */

static int same_prefix(int p, int q, int n) {
  for (int i = 0; i < n; i++)
    if (pat[p].ev[i] != pat[q].ev[i]) return 0;
  return 1;
}

static int l1_only(int p, int n) {
  for (int i = 0; i < n; i++)
    if (pat[p].ev[i] & DESC(0, 1, 0)) return 0;
  return 1;
}

void atom__ra_build_tables(race_automata *ra) {
  memset(ra->adv, 0, sizeof ra->adv);
  for (int p = 0; p < NPAT; p++) {
    for (int s = 0; s < pat[p].len; s++) ra->adv[pat[p].ev[s]][s] |= FIELD(p);
    for (int s = 0; s <= pat[p].len; s++) {
      uint8_t m = 0;
      for (int i = s; i < pat[p].len; i++) m |= (uint8_t)(1u << (pat[p].ev[i] >> 2));
      ra->need[p][s] = m;
    }
  }
  /* Patterns with the same first n events match them at the same events (greedy matching is
   * deterministic), so they share the slots of that prefix. Prefixes on l1 alone come first:
   * they are all a (u,u',l,*) tuple can match. */
  memset(ra->slot, 0xff, sizeof ra->slot);
  uint32_t n = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int len = 1; len < MAXLEN; len++)
      for (int p = 0; p < NPAT; p++) {
        if (len >= pat[p].len || ra->slot[p][len - 1] != 0xff) continue;
        if (pass == 0 && !l1_only(p, len)) continue;
        for (int q = p; q < NPAT; q++)
          if (len < pat[q].len && same_prefix(p, q, len)) ra->slot[q][len - 1] = (uint8_t)n;
        n++;
      }
    if (pass == 0) ra->n_pslots = n;
  }
  ra->n_fslots = n;
  for (int p = 0; p < NPAT; p++) ra->first_slot[pat[p].ev[0] & 1] = ra->slot[p][0];
}

/* Can some automaton of `word` among `mask` still accept, given the roles that have ended
 * (bit 0 u, bit 1 u')? Accepted automata have been reported and count as done. */
int atom__ra_can_accept(const race_automata *ra, uint64_t word, uint64_t mask, unsigned ended) {
  for (int p = 0; p < NPAT; p++) {
    if (!(mask & FIELD(p))) continue;
    unsigned s = state_of(word, p);
    if (s < pat[p].len && !(ra->need[p][s] & ended)) return 1;
  }
  return 0;
}
