/* Names a person can read: lock sites named after the user's code, not a lock wrapper, and the
 * names of variables, locks and locations written into a recording (record=).
 *
 * Lock sites. Each thread keeps a shadow stack of (callee, call site) pairs from
 * __tsan_func_entry (rt_thread::frames). An ACQUIRE is pushed with the call site in the first
 * frame up the stack that is not a lock wrapper. A wrapper is a function that returns while
 * holding a lock acquired in its own frame (learned at its first such return, rt_names_exit),
 * or any function whose module is a system library or whose source is a system header (from
 * the start: std::mutex::lock, std::lock_guard, __gthread_mutex_lock). An acquisition made
 * through a wrapper before it was learned has the wrapper's own pc as its innermost frame;
 * that pc is then marked (an alias of the call site that taught the runtime), and the stack's
 * headline frame (rt_stack.c) skips it, so reports still name the user's function and line.
 *
 * Recordings. With record=, the first event that uses a variable, lock or location writes a
 * "#name" directive (doc/trace-format.md) before itself, so that atomcheck of the recording
 * prints the names and lines the runtime prints, even if the trace is cut by a crash.
 *
 * Locks: names_mu guards the maps below; it is taken after the event lock (rt_lock) when both
 * are needed, never before it, and the symbolizer's own lock is taken inside it. */
#include <string.h>

#include "rt.h"

static pthread_mutex_t names_mu = PTHREAD_MUTEX_INITIALIZER;
static rt_map pc_fn;    /* pc -> start of its function + 1 (0 + 1 when unknown) */
static rt_map fn_kind;  /* function start -> 1 + (FN_SYSTEM | FN_LEARNED) */
static rt_map alias;    /* provisional acquire loc (a pc in a wrapper) -> the call site named */
static rt_map written[ATOM_SPACE_LOC + 1]; /* per atom_space: keys whose "#name" directive is in the recording */

enum { FN_SYSTEM = 1, FN_LEARNED = 2 };

static void names_lock(void) { rt_fn.pthread_mutex_lock(&names_mu); }
static void names_unlock(void) { rt_fn.pthread_mutex_unlock(&names_mu); }

static int prefix(const char *s, const char *p) { return s && !strncmp(s, p, strlen(p)); }

/* Source in a system header, or code of a system library. */
int rt_sym_is_system(const rt_symbol *s) {
  static const char *const dirs[] = {"/usr/include/", "/usr/local/include/", "/usr/lib/gcc/",
                                     "/usr/lib/llvm"};
  if (rt_sym_system_object(s->module))
    return 1; /* first: no debug information of a system library is read */
  const char *file = NULL;
  unsigned line = 0;
  char clean[1024];
  if (!(s->start && rt_sym_function_line(s->start, &file, &line) == 0 && file)) file = s->file;
  if (file) {
    rt_path_clean(file, clean, sizeof clean);
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
      if (prefix(clean, dirs[i]) || strstr(clean, "/include/c++/")) return 1;
  }
  return 0;
}

/* The start of the function containing pc, 0 if unknown (caller holds names_mu). */
static uint64_t function_of(uint64_t pc) {
  uint64_t v;
  if (rt_map_get(&pc_fn, pc, &v)) return v - 1;
  rt_symbol s;
  uint64_t start = rt_sym_code(pc, &s) == 0 ? s.start : 0;
  if (start && !rt_map_get(&fn_kind, start, &v))
    rt_map_put(&fn_kind, start, 1 + (rt_sym_is_system(&s) ? FN_SYSTEM : 0));
  rt_map_put(&pc_fn, pc, start + 1);
  return start;
}

static int is_wrapper(uint64_t start) {
  uint64_t v;
  return start && rt_map_get(&fn_kind, start, &v) && v - 1 != 0;
}

uint64_t rt_lock_site(uint64_t lock, uint64_t pc) {
  rt_thread *t = rt_self;
  if (!t || rt_busy || !RT_ACTIVE()) return t ? rt_stack_loc(t, pc) : pc;
  int busy = rt_busy;
  rt_busy = 1;
  long i = t->depth - 1;
  uint64_t at = pc;
  names_lock();
  uint64_t fn = function_of(at);
  while (i >= 0 && i < RT_FRAMES && is_wrapper(fn)) {
    uint64_t callee = function_of(t->frames[i].fn);
    if (callee == fn) {
      at = t->frames[i].site; /* the call of the wrapper, in its caller */
      i--;
    } else {
      at = t->frames[i].fn; /* fn is not instrumented: go on from the innermost frame that is */
    }
    fn = function_of(at);
  }
  names_unlock();
  if (t->n_holds < RT_HOLDS) t->holds[t->n_holds++] = (struct rt_hold){lock, t->depth, at};
  /* at is in the function at depth i + 1: its callers are the sites of depths i + 1 .. 1 */
  uint64_t loc = rt_stack_loc_at(t, at, i + 1);
  rt_busy = busy;
  return loc;
}

void rt_lock_dropped(uint64_t lock) {
  rt_thread *t = rt_self;
  if (!t) return;
  for (int i = t->n_holds; i-- > 0;)
    if (t->holds[i].lock == lock) {
      t->holds[i] = t->holds[--t->n_holds];
      return;
    }
}

/* Write the directive of loc (caller holds the event lock, not names_mu). */
static void write_loc_name(atom_trace_writer *w, uint64_t loc) {
  char buf[600];
  rt_describe_loc(loc, buf, sizeof buf);
  if (strncmp(buf, "0x", 2) != 0) atom_trace_writer_write_name(w, ATOM_SPACE_LOC, loc, buf);
}

/* The directives already written for stacks whose innermost frame is pc name the wrapper:
 * write them again, now that their headline is the wrapper's caller (caller holds the event
 * lock). */
static void rewrite_loc_names(atom_trace_writer *w, uint64_t pc) {
  rt_map *m = &written[ATOM_SPACE_LOC];
  for (size_t i = 0; i < m->cap; i++) {
    uint64_t loc = m->keys[i], first;
    if (loc && loc != UINT64_MAX && rt_stack_frames(loc, &first, 1) == 1 && first == pc)
      write_loc_name(w, loc);
  }
}

void rt_names_exit(rt_thread *t) {
  long d = t->depth;
  if (d < 1 || d > RT_FRAMES) return;
  int busy = rt_busy;
  rt_busy = 1;
  for (int i = 0; i < t->n_holds; i++) {
    struct rt_hold *h = &t->holds[i];
    if (h->depth != d) continue;
    /* The function of this frame returns holding a lock it acquired: a wrapper. */
    h->depth = d - 1;
    rt_lock(); /* the event lock first: the recording may get a new directive */
    names_lock();
    uint64_t fn = function_of(t->frames[d - 1].fn), v, named = 0;
    if (fn && rt_map_get(&fn_kind, fn, &v) && !((v - 1) & FN_LEARNED))
      rt_map_put(&fn_kind, fn, v | FN_LEARNED);
    if (fn && function_of(h->at) == fn) {
      /* The acquisition was named inside the wrapper: name it after the wrapper's caller. */
      rt_map_put(&alias, h->at, t->frames[d - 1].site);
      named = h->at;
      h->at = t->frames[d - 1].site;
    }
    names_unlock();
    atom_trace_writer *w = rt_recording();
    if (w && named) rewrite_loc_names(w, named);
    rt_unlock();
  }
  rt_busy = busy;
}

int rt_names_is_wrapper_pc(uint64_t pc) {
  uint64_t v;
  names_lock();
  int r = rt_map_get(&alias, pc, &v);
  names_unlock();
  return r;
}

/* Write the directive of key in space once (caller holds the event lock). */
static void record_name(atom_trace_writer *w, int space, uint64_t key) {
  uint64_t v;
  if (!key || rt_map_get(&written[space], key, &v)) return;
  rt_map_put(&written[space], key, 1);
  char buf[600];
  if (space == ATOM_SPACE_LOC) {
    write_loc_name(w, key);
    return;
  }
  rt_key_name(space, key, buf, sizeof buf);
  if (strncmp(buf, "0x", 2) != 0) atom_trace_writer_write_name(w, space, key, buf);
}

void rt_names_record(atom_trace_writer *w, const atom_event *ev) {
  /* Directives name variables, locks and locations only: a FORK or JOIN target (a thread)
   * gets none here. */
  int space = atom_kind_space(ev->kind);
  if (space && space != ATOM_SPACE_THREAD) record_name(w, space, ev->target);
  record_name(w, ATOM_SPACE_LOC, ev->loc);
}
