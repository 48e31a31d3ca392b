/* mode=execution: the conflict graph of one TSO execution (002 §3-§4), over transactions,
 * with incremental cycle detection (support/digraph.h, as velodrome), and with robust=yes the
 * write-contraction graph (002 §4.2). */
#include "checkers/tso/tso_internal.h"
#include "support/assert.h"

void atom__tso_exec_init(exec_engine *x, atom_env *env, atom__mem *mem, int robust,
                         const char *what) {
  memset(x, 0, sizeof *x);
  x->env = env;
  x->mem = mem;
  x->robust = robust;
  x->what = what;
  atom__dg_init(&x->g, mem, sizeof(exec_txn));
  atom__dg_set_edge_payload(&x->g, sizeof(exec_label));
  atom__dg_init(&x->rg, mem, sizeof(exec_rnode));
  atom__dg_set_edge_payload(&x->rg, sizeof(exec_label));
  atom__rb_init(&x->rb, mem);
}

static void readers_free(exec_readers *s, atom__mem *m) {
  atom__mem_free(m, s->r, s->cap * sizeof *s->r);
  memset(s, 0, sizeof *s);
}

static void exec_thread_free(exec_thread *t, atom__mem *m) {
  atom__tso_buffer_free(&t->bt, m);
  atom__mem_free(m, t->bv, t->bv_cap * sizeof *t->bv);
  t->bv = NULL;
  t->bv_cap = 0;
  id_list_free(&t->rb, m);
}

void atom__tso_exec_free(exec_engine *x) {
  atom__mem *m = x->mem;
  for (size_t i = 0; i < x->th_cap; i++) exec_thread_free(&x->th[i], m);
  for (size_t i = 0; i < x->var_cap; i++) {
    readers_free(&x->var[i].rd, m);
    readers_free(&x->var[i].rrd, m);
  }
  atom__mem_free(m, x->th, x->th_cap * sizeof *x->th);
  atom__mem_free(m, x->var, x->var_cap * sizeof *x->var);
  atom__mem_free(m, x->lk, x->lk_cap * sizeof *x->lk);
  atom__rb_free(&x->rb);
  atom__dg_destroy(&x->g);
  atom__dg_destroy(&x->rg);
  memset(x, 0, sizeof *x);
}


/* Add from -> to in graph g for the conflict (from->ev, dst); a cycle is reported. The first
 * error is kept in *err and the event is still applied in full. */
static void exec_edge(exec_engine *x, atom__dg *g, const exec_src *from, atom__dg_node to,
                      const atom_ev *dst, int *err) {
  if (from->n == ATOM__DG_NONE || to == ATOM__DG_NONE) return;
  exec_label lb = {from->ev, *dst};
  if (from->n == to && g == &x->rg && atom__dg_alive(g, to)) {
    /* Only a commit adds an edge into an existing node of the write contraction, and an event
     * merged into that node comes after its write: a real cycle (see exec_write_contraction). */
    int rc = atom__tso_report_exec_self(x, to, &lb);
    if (rc < 0 && !*err) *err = rc;
    return;
  }
  int rc = atom__dg_add_edge_labeled(g, from->n, to, &lb);
  if (rc == 1) rc = atom__tso_report_exec_cycle(x, g, &lb, g == &x->rg);
  if (rc < 0 && !*err) *err = rc;
}

static int exec_grow(exec_engine *x, uint32_t t, const atom_ev *ev) {
  size_t need = (size_t)t + 1;
  if (ev->kind == ATOM_FORK || ev->kind == ATOM_JOIN) {
    if ((size_t)ev->target + 1 > need) need = (size_t)ev->target + 1;
  }
  if (need > x->th_cap && ATOM__GROW(x->mem, x->th, x->th_cap, need)) return ATOM_ENOMEM;
  if ((ev->kind == ATOM_READ || ev->kind == ATOM_WRITE || ev->kind == ATOM_COMMIT) &&
      ev->target >= x->var_cap && ATOM__GROW(x->mem, x->var, x->var_cap, (size_t)ev->target + 1))
    return ATOM_ENOMEM;
  if ((ev->kind == ATOM_ACQUIRE || ev->kind == ATOM_RELEASE) && ev->target >= x->lk_cap &&
      ATOM__GROW(x->mem, x->lk, x->lk_cap, (size_t)ev->target + 1))
    return ATOM_ENOMEM;
  return 0;
}

/* Record (or replace) thread t's latest reader entry. */
static int readers_put(exec_readers *s, atom__mem *m, uint32_t t, const exec_src *src) {
  if (s->n && s->r[s->n - 1].thread == t) {
    s->r[s->n - 1].src = *src;
    return 0;
  }
  for (uint32_t i = 0; i < s->n; i++)
    if (s->r[i].thread == t) {
      s->r[i].src = *src;
      return 0;
    }
  if (s->n == s->cap) {
    uint32_t ncap = s->cap ? s->cap * 2 : 2;
    exec_reader *nr = atom__mem_realloc(m, s->r, s->cap * sizeof *nr, ncap * sizeof *nr);
    if (!nr) return ATOM_ENOMEM;
    s->r = nr;
    s->cap = ncap;
  }
  s->r[s->n++] = (exec_reader){t, 0, *src};
  return 0;
}

static exec_txn *exec_txn_of(exec_engine *x, atom__dg_node n) { return atom__dg_payload(&x->g, n); }

static void exec_txn_done(exec_engine *x, atom__dg_node n) {
  exec_txn *p = exec_txn_of(x, n);
  if (p && p->ended && !p->pending) atom__dg_complete(&x->g, n);
}

/* Commit thread t's oldest pending write, of variable cev->target (an explicit COMMIT, or one
 * implied by a drain or a join: then @p cev is made up with the drain's index and loc). */
static void exec_commit(exec_engine *x, uint32_t t, const atom_ev *cev, int *err) {
  exec_thread *th = &x->th[t];
  if (!th->npending) return; /* cannot happen: the core validates commits */
  th->npending--;
  uint32_t var = cev->target;
  atom__dg_node txn = th->ptxn_head;
  exec_var *v = &x->var[var];
  /* 002 §4.1: the commit conflicts with earlier commits of x and with earlier reads of x from
   * memory in other threads; the last commit and the readers since then imply the rest (two
   * commits of one thread are ordered through their writes, w -> w in program order). */
  exec_edge(x, &x->g, &v->com, txn, cev, err);
  for (uint32_t i = 0; i < v->rd.n; i++) exec_edge(x, &x->g, &v->rd.r[i].src, txn, cev, err);
  v->com = (exec_src){txn, *cev};
  v->rd.n = 0;
  uint32_t e = buffer_find(&th->bt, var);
  if (e != NONE32 && th->bv[e].pending) th->bv[e].pending--;
  exec_txn *p = exec_txn_of(x, txn); /* live: it has a pending write */
  ATOM__ASSERT(p && p->pending);
  if (!--p->pending) { /* its last one: the next transaction holds the oldest pending write */
    th->ptxn_head = p->next;
    if (th->ptxn_head == ATOM__DG_NONE) th->ptxn_tail = ATOM__DG_NONE;
  }
  exec_txn_done(x, txn);
  if (x->robust) {
    atom__dg_node rn = th->pw_head;
    exec_rnode *rp = atom__dg_payload(&x->rg, rn); /* live: not complete before its commit */
    ATOM__ASSERT(rp);
    th->pw_head = rp->next;
    if (th->pw_head == ATOM__DG_NONE) th->pw_tail = ATOM__DG_NONE;
    exec_edge(x, &x->rg, &v->rcom, rn, cev, err);
    for (uint32_t i = 0; i < v->rrd.n; i++) exec_edge(x, &x->rg, &v->rrd.r[i].src, rn, cev, err);
    v->rcom = (exec_src){rn, *cev};
    v->rrd.n = 0;
    atom__dg_complete(&x->rg, rn);
  }
}

/* Commit thread t's pending writes, oldest first, just before @p at (a drain of t, or the JOIN
 * of t). The session's FIFO names their variables: it is emptied only after @p at's dispatch. */
static void exec_commit_all(exec_engine *x, uint32_t t, const atom_ev *at, int *err) {
  atom_ev w[16];
  size_t done = 0;
  while (x->th[t].npending) {
    size_t n = atom_env_pending_writes(x->env, t, done, w, sizeof w / sizeof *w);
    ATOM__ASSERT(n == done + x->th[t].npending); /* the session's FIFO and ours agree */
    if (n <= done) return; /* cannot happen (see above) */
    for (size_t i = 0; i < n - done && i < sizeof w / sizeof *w; i++) {
      atom_ev cev = {ATOM_COMMIT, t, w[i].target, 0, at->index, at->loc};
      exec_commit(x, t, &cev, err);
    }
    done = n - x->th[t].npending;
  }
}

/* Edges into h from every earlier event of the thread: a non-read conflicts with all of them in
 * program order; nstar, sstar and the buffered reads since nstar reach the others. */
static void exec_program_order_edges(exec_engine *x, exec_thread *th, atom__dg_node h,
                                     const atom_ev *ev, int *err) {
  exec_edge(x, &x->g, &th->nstar, h, ev, err);
  exec_edge(x, &x->g, &th->sstar, h, ev, err);
  for (size_t i = 0; i < th->rb.n; i++) exec_edge(x, &x->g, &th->bv[th->rb.a[i]].rb, h, ev, err);
}

static void exec_after_nonread(exec_thread *th, atom__dg_node h, const atom_ev *ev, int strong) {
  th->nstar = (exec_src){h, *ev};
  if (strong) th->sstar = th->nstar;
  th->epoch++;
  th->rb.n = 0;
}

static int exec_new_txn(exec_engine *x, uint32_t t, int unary, uint64_t index, uint64_t loc,
                      atom__dg_node *out) {
  atom__dg_node h;
  int rc = atom__dg_add_node(&x->g, &h);
  if (rc) return rc;
  exec_txn *p = exec_txn_of(x, h);
  *p = (exec_txn){t, (uint32_t)unary, index, loc, 0, 0, ATOM__DG_NONE};
  *out = h;
  return 0;
}

/* robust=yes: the write-contraction graph (002 §4.2). Program order is kept whole, so a thread's
 * events form a chain; an event with no in-edge but program order is merged into the node
 * before it (its out-edges then leave that node, which reaches it anyway). A write always gets a
 * node of its own, which its commit joins later. */
static int exec_write_contraction(exec_engine *x, uint32_t t, const atom_ev *ev, int served,
                                  int *err) {
  exec_thread *th = &x->th[t];
  const exec_src *cross = NULL;
  if (ev->kind == ATOM_READ && !served) cross = &x->var[ev->target].rcom;
  else if (ev->kind == ATOM_ACQUIRE) cross = &x->lk[ev->target].rrel;
  else if (ev->kind == ATOM_JOIN && x->th[ev->target].started) cross = &x->th[ev->target].rcur;
  int own = ev->kind == ATOM_WRITE || (cross && atom__dg_alive(&x->rg, cross->n));
  if (own) {
    atom__dg_node n;
    int rc = atom__dg_add_node(&x->rg, &n);
    if (rc) return rc;
    exec_rnode *p = atom__dg_payload(&x->rg, n);
    p->ev = *ev;
    p->ev.flags &= ~EV_BUFFERED;
    p->txn = th->in_txn ? (atom_txn_ref){t, 0, th->begin_index, th->begin_loc}
                        : (atom_txn_ref){t, 1, ev->index, ev->loc};
    exec_edge(x, &x->rg, &th->rcur, n, ev, err);
    if (cross) exec_edge(x, &x->rg, cross, n, ev, err);
    th->rcur = (exec_src){n, *ev};
    if (ev->kind == ATOM_WRITE) { /* last in the thread's list of pending writes */
      p->next = ATOM__DG_NONE;
      if (th->pw_tail != ATOM__DG_NONE) {
        exec_rnode *tail = atom__dg_payload(&x->rg, th->pw_tail); /* live: pending */
        ATOM__ASSERT(tail);
        tail->next = n;
      } else {
        th->pw_head = n;
      }
      th->pw_tail = n;
    } else {
      atom__dg_complete(&x->rg, n);
    }
  }
  /* Later edges leave the event's node but name the event itself. */
  exec_src me = {th->rcur.n, *ev};
  int rc = 0;
  switch (ev->kind) {
  case ATOM_READ:
    if (!served) rc = readers_put(&x->var[ev->target].rrd, x->mem, t, &me);
    break;
  case ATOM_RELEASE: x->lk[ev->target].rrel = me; break;
  case ATOM_FORK: x->th[ev->target].rcur = me; break;
  default: break;
  }
  return rc;
}

/* Room for what a WRITE or READ of thread th needs, taken before the event changes anything, so
 * that it cannot be half-applied: a WRITE's variable current in the buffer view; a READ's place
 * in the list of buffered reads. *e := the current buffer entry of a READ's or WRITE's variable
 * (NONE32: a READ's is not buffered; any other event), looked up here once for the event. */
static int exec_reserve(exec_engine *x, exec_thread *th, const atom_ev *ev, uint32_t *e) {
  *e = NONE32;
  if (ev->kind == ATOM_READ) {
    if (th->rb.n == th->rb.cap && ATOM__GROW(x->mem, th->rb.a, th->rb.cap, th->rb.n + 1))
      return ATOM_ENOMEM;
    *e = buffer_find(&th->bt, ev->target);
    return 0;
  }
  if (ev->kind != ATOM_WRITE) return 0;
  uint32_t known = buffer_entry(&th->bt, ev->target);
  if (buffer_current(&th->bt, known)) {
    *e = known;
    return 0;
  }
  if (ATOM__GROW(x->mem, th->bv, th->bv_cap, th->bt.n + 1) ||
      atom__tso_buffer_add(&th->bt, x->mem, ev->target, known, e))
    return ATOM_ENOMEM;
  memset(&th->bv[*e], 0, sizeof th->bv[*e]); /* a fresh view since the last drain */
  return 0;
}

/* The node of the transaction that performs ev (a new unary one outside a transaction). */
static int exec_performer(exec_engine *x, exec_thread *th, const atom_ev *ev, atom__dg_node *h) {
  if (!th->in_txn) return exec_new_txn(x, ev->thread, 1, ev->index, ev->loc, h);
  if (th->cur == ATOM__DG_NONE) {
    int rc = exec_new_txn(x, ev->thread, 0, th->begin_index, th->begin_loc, &th->cur);
    if (rc < 0) return rc;
  }
  *h = th->cur;
  return 0;
}

/* A READ performed by h, e its variable's current buffer entry (exec_reserve); @return whether
 * it was served from the store buffer. */
static int exec_read(exec_engine *x, exec_thread *th, atom__dg_node h, const atom_ev *ev,
                     uint32_t e, int *err) {
  exec_var *v = &x->var[ev->target];
  int buffered = e != NONE32; /* 002 §4.1 "buffered read": a w(x) since the last drain */
  int served = buffered && th->bv[e].pending > 0; /* served from the store buffer */
  atom_ev evb = *ev;
  if (buffered) evb.flags |= EV_BUFFERED;
  /* Program order: a read conflicts with earlier strong events and, when buffered, with the
   * thread's w(x) / buffered r(x) since the drain; not with w(y) or buffered r(y), y != x. */
  exec_edge(x, &x->g, &th->sstar, h, &evb, err);
  if (buffered) exec_edge(x, &x->g, &th->bv[e].wb, h, &evb, err);
  if (!served) {
    exec_edge(x, &x->g, &v->com, h, &evb, err);
    exec_src me = {h, evb};
    int rc = readers_put(&v->rd, x->mem, ev->thread, &me);
    if (rc < 0 && !*err) *err = rc;
  }
  if (buffered) {
    exec_buffer_view *b = &th->bv[e];
    b->wb = (exec_src){h, evb};
    b->rb = b->wb;
    if (b->rb_mark != th->epoch + 1) {
      b->rb_mark = th->epoch + 1;
      th->rb.a[th->rb.n++] = e; /* reserved by exec_reserve */
    }
  } else {
    th->sstar = (exec_src){h, evb};
  }
  return served;
}

/* A WRITE (its issue) performed by h: it enters the thread's store buffer at entry e (made
 * current by exec_reserve). */
static void exec_write(exec_engine *x, exec_thread *th, atom__dg_node h, const atom_ev *ev,
                       uint32_t e, int *err) {
  exec_program_order_edges(x, th, h, ev, err);
  exec_after_nonread(th, h, ev, 0);
  ATOM__ASSERT(e != NONE32 && e == buffer_find(&th->bt, ev->target));
  th->bv[e].wb = (exec_src){h, *ev};
  th->bv[e].pending++;
  th->npending++;
  exec_txn *p = exec_txn_of(x, h);
  if (p->pending++) return; /* h is last in the thread's list of pending transactions already */
  p->next = ATOM__DG_NONE;
  if (th->ptxn_tail != ATOM__DG_NONE) exec_txn_of(x, th->ptxn_tail)->next = h; /* live: pending */
  else th->ptxn_head = h;
  th->ptxn_tail = h;
}

/* JOIN(u) performed by h: every event of u conflicts with it; u's nstar, sstar and buffered
 * reads reach them (a thread without events has no conflict with its fork or join). */
static void exec_join(exec_engine *x, exec_thread *th, atom__dg_node h, const atom_ev *ev,
                      int *err) {
  exec_thread *ch = &x->th[ev->target];
  if (ch->started) {
    /* u's nstar or sstar may still be its fork (u did only reads, or only writes): the fork
     * reaches the join through u's own events, and an edge fork -> join would name two events
     * that do not conflict. */
    exec_src fn = ch->nstar, fs = ch->sstar;
    if (fn.ev.thread != ev->target) ch->nstar.n = ATOM__DG_NONE;
    if (fs.ev.thread != ev->target) ch->sstar.n = ATOM__DG_NONE;
    exec_program_order_edges(x, ch, h, ev, err);
    ch->nstar = fn;
    ch->sstar = fs;
  }
  exec_program_order_edges(x, th, h, ev, err);
  exec_after_nonread(th, h, ev, 1);
}

/* The conflicts of a graph event (anything but BEGIN, END, COMMIT) performed by h; e is a READ's
 * or WRITE's buffer entry (exec_reserve). @return whether a READ was served from the store
 * buffer. */
static int exec_graph_event(exec_engine *x, exec_thread *th, atom__dg_node h, const atom_ev *ev,
                            uint32_t e, int *err) {
  switch (ev->kind) {
  case ATOM_READ: return exec_read(x, th, h, ev, e, err);
  case ATOM_WRITE: exec_write(x, th, h, ev, e, err); return 0;
  case ATOM_FENCE:
  case ATOM_ACQUIRE:
  case ATOM_RELEASE:
    exec_program_order_edges(x, th, h, ev, err);
    if (ev->kind == ATOM_ACQUIRE) exec_edge(x, &x->g, &x->lk[ev->target].rel, h, ev, err);
    if (ev->kind == ATOM_RELEASE) x->lk[ev->target].rel = (exec_src){h, *ev};
    exec_after_nonread(th, h, ev, 1);
    atom__tso_buffer_clear(&th->bt);
    return 0;
  case ATOM_FORK: {
    exec_program_order_edges(x, th, h, ev, err);
    exec_after_nonread(th, h, ev, 1);
    /* fork(u) conflicts with every event of u: as if u's program order started with it. */
    exec_thread *ch = &x->th[ev->target];
    ch->nstar = ch->sstar = (exec_src){h, *ev};
    return 0;
  }
  case ATOM_JOIN: exec_join(x, th, h, ev, err); return 0;
  default: return 0;
  }
}

int atom__tso_exec_event(exec_engine *x, const atom_ev *ev) {
  uint32_t t = ev->thread;
  if (exec_grow(x, t, ev)) return ATOM_ENOMEM;
  exec_thread *th = &x->th[t];
  int err = 0, rc;
  uint32_t e = NONE32; /* a READ's or WRITE's buffer entry, found once (exec_reserve) */

  switch (ev->kind) {
  case ATOM_BEGIN:
    th->in_txn = 1;
    th->begin_index = ev->index;
    th->begin_loc = ev->loc;
    th->cur = ATOM__DG_NONE;
    return exec_new_txn(x, t, 0, ev->index, ev->loc, &th->cur);
  case ATOM_END:
    if (th->in_txn && th->cur != ATOM__DG_NONE) {
      exec_txn *p = exec_txn_of(x, th->cur);
      if (p) p->ended = 1;
      exec_txn_done(x, th->cur);
    }
    th->in_txn = 0;
    th->cur = ATOM__DG_NONE;
    return 0;
  case ATOM_COMMIT:
    exec_commit(x, t, ev, &err);
    return err;
  default:
    if ((rc = exec_reserve(x, th, ev, &e))) return rc;
    break;
  }

  /* Writes still in a buffer are committed just before a drain, or before the JOIN of their
   * thread (doc/checkers/tso.md: FENCE and lock operations drain; a joined thread has no later
   * events). */
  if (is_drain(ev->kind)) exec_commit_all(x, t, ev, &err);
  if (ev->kind == ATOM_JOIN) {
    atom_ev at = *ev;
    at.thread = ev->target;
    exec_commit_all(x, ev->target, &at, &err);
  }

  atom__dg_node h = ATOM__DG_NONE;
  int unary = !th->in_txn;
  if ((rc = exec_performer(x, th, ev, &h)) < 0) return rc;
  th->started = 1;
  int served = exec_graph_event(x, th, h, ev, e, &err);
  if (x->robust && (rc = exec_write_contraction(x, t, ev, served, &err)) < 0 && !err) err = rc;

  if (unary) {
    exec_txn *p = exec_txn_of(x, h);
    if (p) p->ended = 1;
    exec_txn_done(x, h);
  }
  return err;
}

/* ---- the store-buffer view (buffer_table, shared with the trace's event graph) ---- */

int atom__tso_buffer_add(buffer_table *t, atom__mem *m, uint32_t var, uint32_t known,
                         uint32_t *entry) {
  ATOM__ASSERT(known == buffer_entry(t, var) && !buffer_current(t, known));
  uint32_t e = known;
  if (e == NONE32) {
    e = (uint32_t)t->n;
    if (ATOM__GROW(m, t->var, t->var_cap, t->n + 1) ||
        ATOM__GROW(m, t->mark, t->mark_cap, t->n + 1) ||
        ATOM__GROW(m, t->live.a, t->live.cap, t->n + 1) || atom__u64map_put(&t->map, m, var, e))
      return ATOM_ENOMEM;
    t->var[e] = var;
    t->n++;
  }
  t->mark[e] = t->drains + 1;
  t->live.a[t->live.n++] = e; /* live.n <= n: room reserved above */
  *entry = e;
  return 0;
}

void atom__tso_buffer_clear(buffer_table *t) {
  t->live.n = 0;
  if (++t->drains == UINT32_MAX - 1) { /* marks would come round again: start over */
    if (t->n) memset(t->mark, 0, t->n * sizeof *t->mark);
    t->drains = 0;
  }
}

void atom__tso_buffer_free(buffer_table *t, atom__mem *m) {
  atom__u64map_free(&t->map, m);
  atom__mem_free(m, t->var, t->var_cap * sizeof *t->var);
  atom__mem_free(m, t->mark, t->mark_cap * sizeof *t->mark);
  id_list_free(&t->live, m);
  memset(t, 0, sizeof *t);
}
