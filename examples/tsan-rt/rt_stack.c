/* Stacks: the loc of every event is a stack id, and a report shows the user's own line.
 *
 * The depot. A stack is a chain of nodes (pc, parent): the innermost frame first, its callers
 * through the parents. Nodes are hash-consed, so equal stacks have equal ids, and an id is
 * what the core sees as the event's loc: the checkers compare and deduplicate stacks without
 * knowing. Ids are 1 .. RT_DEPOT_CAP - 1; when the depot is full (or out of memory) a new
 * stack's loc is its innermost pc alone, which user-space code addresses on Linux x86_64
 * always exceed (the first page a program may map is at 64 KiB, code is loaded far above
 * RT_DEPOT_CAP), so the two kinds of loc cannot be confused. depot_mu guards the depot; it is
 * taken after the event lock and names_mu when they are held, never before them.
 *
 * The hot path. An event at pc in the frame at depth d has the stack pc, site(d), site(d-1),
 * ... (site(d): where the function at depth d was called), cut to stack_depth frames. Each
 * thread caches, per depth, the id of its callers' part (rt_thread::callers) until a call at
 * that depth or above comes from another site, and a small table of (pc, callers) -> id: an
 * access in a loop costs two compares, no lock.
 *
 * Reports. rt_stack_describe() symbolizes a loc's frames and tells the session: every frame is
 * a loc of its own (its pc), described by atom_set_location(); the loc itself gets the
 * location of its headline frame and the stack from the headline frame outwards. The headline
 * frame is the first that is not library code (rt_sym_is_system) and not a lock wrapper the
 * runtime learned (rt_names.c), so that a std::mutex acquisition shows the user's line, not
 * gthr-default.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

typedef struct node {
  uint64_t pc;
  uint32_t parent; /* 0: outermost frame kept */
  uint32_t next;   /* hash chain */
} node;

static pthread_mutex_t depot_mu = PTHREAD_MUTEX_INITIALIZER;
static node *nodes;          /* nodes[id]; nodes[0] unused */
static uint32_t n_nodes = 1, cap_nodes;
static uint32_t *buckets;    /* head id of each chain, 0 = empty */
static size_t n_buckets;
static int depot_full_said;
int rt_stack_depth = 8;
int rt_crash_child; /* in the crash child (rt_crash.c): readers only try the locks */

/* Take a lock of the naming code; in the crash child only try it: a thread of the parent may
 * have held it at the fork, and that thread does not exist in the child. @return 1 if taken. */
int rt_name_lock(pthread_mutex_t *mu) {
  if (RT_UNLIKELY(rt_crash_child)) return rt_fn.pthread_mutex_trylock(mu) == 0;
  rt_fn.pthread_mutex_lock(mu);
  return 1;
}

static size_t hash(uint64_t pc, uint32_t parent) {
  uint64_t h = (pc ^ ((uint64_t)parent << 32) ^ parent) * UINT64_C(0x9e3779b97f4a7c15);
  return (size_t)(h >> 29);
}

static int grow_buckets(void) {
  size_t n = n_buckets ? n_buckets * 2 : 4096;
  uint32_t *b = calloc(n, sizeof *b);
  if (!b) return -1;
  for (uint32_t id = 1; id < n_nodes; id++) {
    size_t h = hash(nodes[id].pc, nodes[id].parent) & (n - 1);
    nodes[id].next = b[h];
    b[h] = id;
  }
  free(buckets);
  buckets = b;
  n_buckets = n;
  return 0;
}

/* The id of (pc, parent), added when new; 0 when the depot is full (caller holds depot_mu). */
static uint32_t depot_put(uint64_t pc, uint32_t parent) {
  if (n_buckets) {
    for (uint32_t id = buckets[hash(pc, parent) & (n_buckets - 1)]; id; id = nodes[id].next)
      if (nodes[id].pc == pc && nodes[id].parent == parent) return id;
  }
  if (n_nodes >= RT_DEPOT_CAP) {
    if (!depot_full_said++)
      rt_note("stack depot full (%u stacks): further new stacks keep their innermost frame only",
              (unsigned)RT_DEPOT_CAP - 1);
    return 0;
  }
  if (n_nodes >= cap_nodes) {
    uint32_t cap = cap_nodes ? cap_nodes * 2 : 4096;
    node *v = realloc(nodes, cap * sizeof *v);
    if (!v) return 0;
    nodes = v;
    cap_nodes = cap;
  }
  if (n_nodes >= n_buckets / 2 && grow_buckets() != 0 && !n_buckets) return 0;
  uint32_t id = n_nodes++;
  size_t h = hash(pc, parent) & (n_buckets - 1);
  nodes[id] = (node){pc, parent, buckets[h]};
  buckets[h] = id;
  return id;
}

/* The callers' part of a stack at depth d: site(d), site(d-1), ... cut to stack_depth - 1
 * frames (caller holds depot_mu). */
static uint32_t callers_of(const rt_thread *t, long d) {
  long keep = rt_stack_depth - 1, first = d - keep + 1;
  if (first < 1) first = 1;
  uint32_t p = 0;
  for (long j = first; j <= d; j++) {
    uint32_t q = depot_put(t->frames[j - 1].site, p);
    if (!q) return p; /* full: the outer frames only */
    p = q;
  }
  return p;
}

void rt_stack_entered(rt_thread *t, long d) {
  /* The frame at depth d changed: the cached callers of depths d .. d + stack_depth - 2
   * include its site. */
  long last = d + rt_stack_depth - 2;
  if (last > RT_FRAMES) last = RT_FRAMES;
  for (long j = d; j <= last; j++) {
    t->callers_ok[j - 1] = 0;
    __asm__ volatile("" ::: "memory"); /* not a memset call: memset is intercepted */
  }
}

uint64_t rt_stack_loc_at(rt_thread *t, uint64_t pc, long d) {
  if (d > RT_FRAMES) d = RT_FRAMES; /* deeper frames are not kept: cut at the innermost kept */
  uint32_t callers = 0;
  int locked = 0;
  if (d > 0) {
    if (!t->callers_ok[d - 1]) {
      rt_fn.pthread_mutex_lock(&depot_mu);
      locked = 1;
      t->callers[d - 1] = callers_of(t, d);
      t->callers_ok[d - 1] = 1;
    }
    callers = t->callers[d - 1];
  }
  size_t slot = (size_t)((pc >> 1) ^ (pc >> 9) ^ callers) & (RT_STACK_CACHE - 1);
  if (t->scache[slot].pc == pc && t->scache[slot].callers == callers && t->scache[slot].id) {
    if (locked) rt_fn.pthread_mutex_unlock(&depot_mu);
    return t->scache[slot].id;
  }
  if (!locked) rt_fn.pthread_mutex_lock(&depot_mu);
  uint32_t id = depot_put(pc, callers);
  rt_fn.pthread_mutex_unlock(&depot_mu);
  if (!id) return pc;
  t->scache[slot].pc = pc;
  t->scache[slot].callers = callers;
  t->scache[slot].id = id;
  return id;
}


/* An allocation: pc is usually in the C or C++ library (operator new), which is not
 * instrumented, so the frame of the function at depth d that called it would be missing.
 * It is added as its entry pc, tagged (RT_FRAME_ENTRY): a tagged frame is dropped when the
 * frame before it is in the same function (malloc called directly). */
uint64_t rt_stack_loc_alloc(rt_thread *t, uint64_t pc) {
  long d = t->depth;
  if (d < 1 || d > RT_FRAMES || rt_stack_depth <= 1) return rt_stack_loc(t, pc);
  uint64_t callers_loc = rt_stack_loc_at(t, t->frames[d - 1].fn | RT_FRAME_ENTRY, d);
  if (callers_loc >= RT_DEPOT_CAP) return rt_stack_loc(t, pc);
  rt_fn.pthread_mutex_lock(&depot_mu);
  uint32_t id = depot_put(pc, (uint32_t)callers_loc);
  rt_fn.pthread_mutex_unlock(&depot_mu);
  return id ? id : pc;
}

void rt_path_clean(const char *in, char *out, size_t size) {
  /* Lexically: "a/b/../c" -> "a/c", "a/./b" -> "a/b" (DWARF joins the compilation directory
   * and relative names: "/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/..."). */
  size_t n = 0;
  if (!size) return;
  const char *p = in;
  int absolute = *p == '/';
  while (*p) {
    while (*p == '/') p++;
    const char *e = p;
    while (*e && *e != '/') e++;
    size_t len = (size_t)(e - p);
    if (len == 1 && p[0] == '.') {
      /* skip */
    } else if (len == 2 && p[0] == '.' && p[1] == '.' && n > (size_t)absolute &&
               !(n >= 2 && out[n - 1] == '.' && out[n - 2] == '.' &&
                 (n == 2 || out[n - 3] == '/'))) {
      while (n > (size_t)absolute && out[n - 1] != '/') n--; /* drop the last component */
      if (n > (size_t)absolute) n--;
    } else if (len) {
      if ((n > 0 && out[n - 1] != '/') || (n == 0 && absolute)) {
        if (n + 1 >= size) break;
        out[n++] = '/';
      }
      if (n + len >= size) break;
      memcpy(out + n, p, len);
      n += len;
    }
    p = e;
  }
  if (n == 0 && absolute && size > 1) out[n++] = '/';
  out[n < size ? n : size - 1] = '\0';
}

/* Start of the function containing pc, 0 if unknown. */
static uint64_t function_start(uint64_t pc) {
  rt_symbol s;
  return rt_sym_code(pc, &s) == 0 ? s.start : 0;
}

size_t rt_stack_frames(uint64_t loc, uint64_t *pcs, size_t max) {
  if (!loc || !max) return 0;
  if (loc >= RT_DEPOT_CAP) {
    pcs[0] = loc;
    return 1;
  }
  size_t n = 0;
  if (!rt_name_lock(&depot_mu)) return 0;
  for (uint32_t id = (uint32_t)loc; id && id < n_nodes && n < max; id = nodes[id].parent)
    pcs[n++] = nodes[id].pc;
  rt_fn.pthread_mutex_unlock(&depot_mu);
  /* An allocation's entry frame (rt_stack_loc_alloc): dropped after a frame of its function */
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (pcs[i] & RT_FRAME_ENTRY) {
      uint64_t pc = pcs[i] & ~RT_FRAME_ENTRY;
      if (k && function_start(pcs[k - 1]) == function_start(pc)) continue;
      pcs[i] = pc;
    }
    pcs[k++] = pcs[i];
  }
  return k;
}

/* The headline frame of the n frames pcs: the first that is the user's code (is_user) and no
 * lock wrapper, else the innermost. */
static size_t pick_headline(const uint64_t *pcs, size_t n, int (*is_user)(uint64_t)) {
  for (size_t i = 0; i < n; i++)
    if (is_user(pcs[i]) && !rt_names_is_wrapper_pc(pcs[i])) return i;
  return 0;
}

/* Is pc the user's code: symbolized, and not in a system object or library. */
static int user_code(uint64_t pc) {
  rt_symbol s;
  return rt_sym_code(pc, &s) == 0 && !rt_sym_is_system(&s);
}

/* The headline frame of the n frames pcs (rt_stack_headline), its symbol into *sym. */
static size_t headline_of(const uint64_t *pcs, size_t n, rt_symbol *sym) {
  size_t h = pick_headline(pcs, n, user_code);
  if (sym && n) rt_sym_code(pcs[h], sym);
  return h;
}

size_t rt_stack_headline(uint64_t loc, uint64_t *pcs, size_t max, rt_symbol *sym) {
  return headline_of(pcs, rt_stack_frames(loc, pcs, max), sym);
}

/* Describe one frame pc as a loc of its own. */
static void describe_frame(atom_session *s, uint64_t pc, const rt_symbol *sym, int ok) {
  if (ok && (sym->function || sym->file)) {
    char file[1024];
    if (sym->file) rt_path_clean(sym->file, file, sizeof file);
    atom_set_location(s, pc, sym->function, sym->file ? file : NULL, sym->line);
  } else {
    const char *mod = sym->module ? strrchr(sym->module, '/') : NULL;
    atom_set_location(s, pc, "(unknown function)", mod ? mod + 1 : NULL, 0);
  }
}

/* ---- sites: what the session deduplicates by
 *
 * The session counts a begin location with a stack as the stack's first frame (atom_set_stack).
 * The stack a loc gets, when it is first pushed (rt_stack_site) and again when a report names
 * it (rt_stack_describe), is the one the report shows: its frames from the headline frame
 * outwards, the headline frame replaced by the first pc seen at the same (function, file,
 * line). So two reports of one bug merge even when their stacks differ below the headline (a
 * std::mutex acquisition inlined at two places, a libstdc++ frame under the user's line), or
 * above it (the same atomic function or the same access reached through two call paths), and
 * a report found before its stacks were symbolized merges with one found after. The caller
 * holds the event lock, which guards the maps below. */

uint64_t rt_sited_ids[RT_DEPOT_CAP / 64]; /* bit per depot id: given its stack */
static rt_map sited_pcs;  /* locs that are raw pcs (the depot was full) given their stack */
static rt_map site_of_pc; /* headline pc -> the pc that stands for its (function, file, line) */
static rt_map pc_of_site; /* hash of (function, file, line) -> the first pc seen there */
static rt_map pc_kind;    /* pc -> 1: the user's code, 2: library code or no symbol */

int rt_stack_pc_sited(uint64_t loc) {
  uint64_t v;
  return rt_map_get(&sited_pcs, loc, &v);
}

static void mark_sited(uint64_t loc) {
  if (loc < RT_DEPOT_CAP) rt_sited_ids[loc >> 6] |= UINT64_C(1) << (loc & 63);
  else rt_map_put(&sited_pcs, loc, 1);
}

static uint64_t hash_str(uint64_t h, const char *str) {
  for (const unsigned char *p = (const unsigned char *)(str ? str : ""); *p; p++)
    h = (h ^ *p) * UINT64_C(0x100000001b3);
  return (h ^ 0xff) * UINT64_C(0x100000001b3); /* end mark: ("ab", "c") differs from ("a", "bc") */
}

/* Symbolize pc once and remember both what site_pc and cached_user_code answer for it: the pc
 * standing for its (function, file, line) (a frame without a symbol stands for itself; keyed
 * by a 64-bit hash, so two different sites with one hash, about 2^-64 per pair, would be
 * counted as one), and whether it is the user's code (1) or library code or unknown (2). */
static void learn_pc(uint64_t pc, uint64_t *site, uint64_t *kind) {
  uint64_t v, canon = pc;
  rt_symbol sym;
  int known = rt_sym_code(pc, &sym) == 0;
  if (known) {
    char file[1024] = "";
    if (sym.file) rt_path_clean(sym.file, file, sizeof file);
    uint64_t h = hash_str(hash_str(UINT64_C(0xcbf29ce484222325), sym.function), file);
    h = (h ^ sym.line) * UINT64_C(0x100000001b3);
    if (!h) h = 1; /* rt_map keys are non-zero */
    if (rt_map_get(&pc_of_site, h, &v)) canon = v;
    else rt_map_put(&pc_of_site, h, pc);
  }
  *site = canon;
  *kind = known && !rt_sym_is_system(&sym) ? 1 : 2;
  rt_map_put(&site_of_pc, pc, *site); /* out of memory: learned again next time */
  rt_map_put(&pc_kind, pc, *kind);
}

static uint64_t site_pc(uint64_t pc) {
  uint64_t site, kind;
  if (!rt_map_get(&site_of_pc, pc, &site)) learn_pc(pc, &site, &kind);
  return site;
}

/* user_code with the answer kept per pc (the caller holds the event lock). */
static int cached_user_code(uint64_t pc) {
  uint64_t site, kind;
  if (!rt_map_get(&pc_kind, pc, &kind)) learn_pc(pc, &site, &kind);
  return kind == 1;
}

/* The stack the session gets for loc into pcs (room for RT_FRAMES): its frames from the
 * headline (pick_headline) outwards, the first one site_pc's. @return how many;
 * every frame of loc into all (may be NULL) and the headline's position among them into *h. */
static size_t site_stack(uint64_t loc, uint64_t *pcs, uint64_t *all, size_t *h) {
  uint64_t own[RT_FRAMES];
  if (!all) all = own;
  size_t n = rt_stack_frames(loc, all, RT_FRAMES);
  if (!n) return 0;
  *h = pick_headline(all, n, cached_user_code);
  memcpy(pcs, all + *h, (n - *h) * sizeof *pcs);
  pcs[0] = site_pc(all[*h]);
  return n - *h;
}

void rt_stack_site(atom_session *s, uint64_t loc) {
  if (!loc || rt_stack_is_sited(loc)) return;
  mark_sited(loc);
  uint64_t pcs[RT_FRAMES];
  size_t h, n = site_stack(loc, pcs, NULL, &h);
  if (n) atom_set_stack(s, loc, pcs, n);
}

void rt_stack_describe(atom_session *s, uint64_t loc) {
  static rt_map described; /* locs told to the session (the caller holds the event lock) */
  uint64_t v;
  if (!loc || rt_map_get(&described, loc, &v)) return;
  rt_map_put(&described, loc, 1);
  uint64_t all[RT_FRAMES], pcs[RT_FRAMES];
  size_t h, n = site_stack(loc, pcs, all, &h);
  if (!n) return;
  rt_symbol hsym = {0};
  int hok = 0;
  for (size_t i = 0; i < h + n; i++) {
    rt_symbol sym;
    int ok = rt_sym_code(all[i], &sym) == 0;
    describe_frame(s, all[i], &sym, ok);
    if (i == h) {
      hsym = sym;
      hok = ok;
    }
  }
  /* the loc and the pc standing for the headline's site read as the headline frame */
  describe_frame(s, loc, &hsym, hok);
  if (pcs[0] != all[h]) describe_frame(s, pcs[0], &hsym, hok);
  mark_sited(loc); /* a loc never pushed gets its stack now */
  /* A wrapper learned since the loc was sited may have moved its headline: the report shows
   * the new one. */
  atom_set_stack(s, loc, pcs, n);
}
