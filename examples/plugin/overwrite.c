/* overwrite: reports a write to a variable that another thread's transaction has read while
 * that transaction is still open. The reader's transaction then depends on a value that was
 * replaced before it ended: if it reads or writes the variable again, or acts on what it read,
 * it is not atomic. A warning sign, not a proof (only half of a conflict cycle), found online.
 *
 *     T1|begin|10        T1's transaction reads x ...
 *     T1|r(x)|11
 *     T2|w(x)|20         ... T2 writes x while it is open: reported
 *     T1|end|12
 *
 * It uses nothing but the plugin layer (<atomicity/sys/checker.h>): dense ids from the
 * events, memory from atom_env_realloc, arguments from atom_env_arg, and reports whose
 * message is a template the library renders with the registered names. */
#include "overwrite.h"

#include <string.h>

/* A read of the open transaction: the first read of each variable. */
typedef struct read_rec {
  uint32_t var;
  atom_ev ev;
} read_rec;

/* One thread: its open transaction (if any) and what that transaction read. */
typedef struct thread_rec {
  int open;
  atom_txn_ref txn;   /* the open transaction (its BEGIN) */
  read_rec *reads;    /* nreads of cap, allocated with atom_env_realloc */
  size_t nreads, cap;
} thread_rec;

typedef struct overwrite {
  atom_env *env;
  int txn_writers_only; /* argument writers=txn: a write outside transactions is not reported */
  thread_rec *threads;  /* indexed by dense thread id; nthreads entries */
  uint32_t nthreads;
} overwrite;

/* Grow an array of *cap elements of size elem to hold at least need; 0 or ATOM_ENOMEM. */
static int grow(atom_env *env, void **array, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap * 2 : 8;
  while (n < need) n *= 2;
  void *p = atom_env_realloc(env, *array, *cap * elem, n * elem);
  if (!p) return ATOM_ENOMEM;
  memset((char *)p + *cap * elem, 0, (n - *cap) * elem);
  *array = p;
  *cap = n;
  return 0;
}

/* The record of thread t, created on first use (ids are dense: 0, 1, 2, ...). */
static thread_rec *thread_of(overwrite *o, uint32_t t) {
  if (t >= o->nthreads) {
    size_t cap = o->nthreads;
    void *a = o->threads;
    if (grow(o->env, &a, &cap, (size_t)t + 1, sizeof(thread_rec))) return NULL;
    o->threads = a;
    o->nthreads = (uint32_t)cap;
  }
  return &o->threads[t];
}

static int overwrite_create(void **self, atom_env *env) {
  const char *writers = atom_env_arg(env, "writers");
  if (writers && strcmp(writers, "all") != 0 && strcmp(writers, "txn") != 0)
    return atom_env_error(env, ATOM_EINVAL, "writers must be all or txn, not \"%s\"", writers);
  overwrite *o = atom_env_realloc(env, NULL, 0, sizeof *o);
  if (!o) return ATOM_ENOMEM; /* nothing else allocated: destroy is not called */
  memset(o, 0, sizeof *o);
  o->env = env;
  o->txn_writers_only = writers && strcmp(writers, "txn") == 0;
  *self = o;
  return 0;
}

/* Report that write w (by thread u) replaced what reader's open transaction read in r. */
static int report(overwrite *o, const thread_rec *reader, const read_rec *r, const atom_ev *w,
                  const thread_rec *writer) {
  atom_txn_ref txns[2];
  txns[0] = reader->txn;
  if (writer->open) {
    txns[1] = writer->txn;
  } else { /* a write outside transactions is a unary transaction of its own */
    txns[1].thread = w->thread;
    txns[1].unary = 1;
    txns[1].begin_index = w->index;
    txns[1].begin_loc = w->loc;
  }
  atom_ev events[2];
  events[0] = r->ev;
  events[1] = *w;
  uint32_t var = r->var;
  atom_report_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.version = ATOM_REPORT_SPEC_VERSION;
  spec.kind = "overwritten-read";
  spec.event_index = w->index;
  spec.txns = txns;
  spec.n_txns = 2;
  spec.events = events;
  spec.n_events = 2;
  spec.vars = &var;
  spec.n_vars = 1;
  /* {eN}, {tN}, {vN}: the library renders events, transactions and variables */
  spec.message = "{e1}, after {e0}, while {t0} was still open";
  return atom_env_report(o->env, &spec);
}

static int on_write(overwrite *o, const atom_ev *ev, const thread_rec *writer) {
  if (o->txn_writers_only && !writer->open) return 0;
  for (uint32_t t = 0; t < o->nthreads; t++) {
    const thread_rec *th = &o->threads[t];
    if (t == ev->thread || !th->open) continue;
    for (size_t i = 0; i < th->nreads; i++)
      if (th->reads[i].var == ev->target) {
        int err = report(o, th, &th->reads[i], ev, writer);
        if (err) return err;
        break;
      }
  }
  return 0;
}

static int overwrite_on_event(void *self, const atom_ev *ev) {
  overwrite *o = self;
  thread_rec *th = thread_of(o, ev->thread);
  if (!th) return ATOM_ENOMEM; /* the session disables the checker and says so */
  switch (ev->kind) {
  case ATOM_BEGIN: /* the session forwards only the outermost BEGIN/END of a thread */
    th->open = 1;
    th->txn.thread = ev->thread;
    th->txn.unary = 0;
    th->txn.begin_index = ev->index;
    th->txn.begin_loc = ev->loc;
    th->nreads = 0;
    return 0;
  case ATOM_END:
    th->open = 0;
    th->nreads = 0;
    return 0;
  case ATOM_READ:
    if (!th->open) return 0;
    for (size_t i = 0; i < th->nreads; i++)
      if (th->reads[i].var == ev->target) return 0; /* the first read is the one shown */
    {
      void *a = th->reads;
      if (grow(o->env, &a, &th->cap, th->nreads + 1, sizeof(read_rec))) return ATOM_ENOMEM;
      th->reads = a;
    }
    th->reads[th->nreads].var = ev->target;
    th->reads[th->nreads].ev = *ev;
    th->nreads++;
    return 0;
  case ATOM_WRITE:
    return on_write(o, ev, th);
  default:
    return 0; /* not in the event mask */
  }
}

static void overwrite_destroy(void *self) {
  overwrite *o = self;
  for (uint32_t t = 0; t < o->nthreads; t++)
    atom_env_realloc(o->env, o->threads[t].reads, o->threads[t].cap * sizeof(read_rec), 0);
  atom_env_realloc(o->env, o->threads, o->nthreads * sizeof(thread_rec), 0);
  atom_env_realloc(o->env, o, sizeof *o, 0);
}

static int overwrite_stats(void *self, atom_checker_counters *out) {
  const overwrite *o = self;
  for (uint32_t t = 0; t < o->nthreads; t++) out->nodes += o->threads[t].nreads;
  return 0;
}

static const char *const overwrite_keys[] = {"writers", NULL};

int overwrite_checker_init(atom_checker *vt) {
  int err = atom_checker_init(vt, ATOM_CHECKER_ABI_VERSION);
  if (err) return err;
  vt->event_mask = ATOM_KIND_BIT(ATOM_BEGIN) | ATOM_KIND_BIT(ATOM_END) |
                   ATOM_KIND_BIT(ATOM_READ) | ATOM_KIND_BIT(ATOM_WRITE);
  vt->name = "overwrite";
  vt->summary = "a write to a variable another thread's open transaction has read";
  vt->arg_keys = overwrite_keys;
  vt->create = overwrite_create;
  vt->on_event = overwrite_on_event;
  vt->destroy = overwrite_destroy; /* no finish: it decides as events arrive */
  vt->stats = overwrite_stats;
  vt->properties = ATOM_CHECKER_PROP_ONLINE; /* neither sound nor complete for atomicity */
  return 0;
}
