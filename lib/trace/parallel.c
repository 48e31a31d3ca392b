/* Reading an STD trace in parallel (doc/trace-format.md, "Reading in parallel").
 *
 * The input (a memory buffer, or a regular file read with read()) is cut at line ends into
 * chunks, in file order. Worker threads take the next chunk, cut it (under the lock: the cut
 * and the file's reads are sequential) and parse it with the reader of its slot into events
 * whose keys are that reader's (reader_state.h: the final key of a name it met in an earlier
 * chunk, settled at that chunk's turn; a provisional one, its index in the reader's names, for a
 * name new to it), with line numbers counted from the chunk's start. The consumer (the
 * thread calling atom_trace_feed() or atom_trace_reader_next()) takes the chunks in file order:
 * it maps each provisional key to the reader's own key the first time an event of the chunk uses it,
 * interning the name then, so names get the same keys in the same order as the serial reader
 * gives them; moves the chunk's "#name" directives in at the place of their lines; and adds the
 * lines of the chunks before to every line number. A chunk's parse error (or a read error after
 * it) is raised when the consumer reaches it, every event before it delivered first, with the
 * same message and line as the serial reader's. When the chunk it waits for is not ready, the
 * consumer parses the next free chunk itself, so -j N keeps N threads busy.
 *
 * Names are mapped to the reader's keys in the workers, so that the consumer, which also runs
 * the checkers, only copies ready events: a worker that parsed chunk k waits for its turn (every
 * chunk before k mapped), interns the names the chunk brought to its slot's reader (in their
 * first-use order in the chunk) into a shared table, `shared`, whose keys are the keys the
 * serial reader gives, passes the turn on, rewrites its events' provisional keys to those and
 * settles them in the slot's reader, which keeps its names for its next chunk (up to a bound:
 * beyond it, or once names are mapped by the consumer, it forgets them before its next chunk,
 * and every key of that chunk is provisional). The consumer interns a name
 * in the reader's own table (what atom_trace_reader_name() shows) when the first event or
 * directive that uses it is delivered, as the serial reader does; the keys agree, as both tables
 * see the same names in the same order. Should the shared table fail (out of memory), that chunk
 * and every later one are mapped by the consumer instead, event by event.
 *
 * Memory is bounded: at most 2 N chunks are cut and not yet consumed; each slot keeps its
 * buffer, worker reader (with at most keep_names names) and event arrays from chunk to chunk. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "atomicity/error.h"
#include "core/error.h"
#include "support/mem.h"
#include "trace/reader_state.h"

#define DEFAULT_CHUNK ((size_t)256 << 10)
/* Bytes read at a time past the chunk size while looking for the chunk's last line end. */
#define READ_PAST ((size_t)4 << 10)

enum { SLOT_FREE, SLOT_BUSY, SLOT_DONE };

typedef struct slot {
  int state;
  uint64_t seq;
  atom_trace_reader *w; /* parses the chunk: its names are the chunk-local keys */
  atom__chunk_events out;
  const unsigned char *data; /* the chunk: into the reader's buffer, or `buf` */
  size_t size;
  unsigned char *buf; /* file chunks: owned */
  size_t buf_cap;
  int first;     /* the input's first chunk (a byte order mark may open it) */
  int keep;      /* the slot's reader keeps the names of its chunks before (decided at the cut) */
  int settle;    /* the chunk's names new to the slot's reader get their final keys */
  int io_err;    /* an error after the chunk's lines (read error, shrink, long line), or 0 */
  char io_msg[256];
  int rc;        /* the parse's result: 0, or w's error */
  /* Mapped by the worker (`mapped`): the events hold the reader's keys; map[i][local] is the
   * reader's key of each name of the slot's reader (local: its index + 1; map[i][0] is 0, the
   * key of no target), kept with the names from chunk to chunk; the chunk's names new to the
   * input are the reader's keys gbase[i] + 1 .. gbase[i] + n_new[i], newloc[i][j] the local key
   * of gbase[i] + 1 + j. */
  int mapped;
  uint32_t *map[3], *newloc[3];
  size_t map_cap[3], newloc_cap[3];
  uint64_t gbase[3];
  size_t n_new[3];
} slot;

typedef struct atom__trace_par {
  pthread_mutex_t mu;
  pthread_cond_t work; /* a slot became free, or stop */
  pthread_cond_t done; /* a chunk was parsed */
  pthread_cond_t turn; /* names_turn moved */
  slot *slots;
  size_t n_slots;
  pthread_t *th;
  size_t n_th;
  int stop;
  size_t chunk;

  /* The cutter (under mu). Its memory is its own: the consumer allocates from the reader's
   * without the lock. */
  atom__mem mem;
  uint64_t next_cut; /* seq of the next chunk to cut */
  uint64_t next_use; /* seq of the chunk the consumer is on or waits for */
  int cut_end;       /* every chunk is cut */
  int cutting;       /* a thread is reading the next chunk of a file (without the lock) */
  const unsigned char *mem_pos; /* memory input: where the next chunk starts */
  unsigned char *carry;         /* file input: the bytes after the last chunk's last '\n' */
  size_t carry_len, carry_cap;
  uint64_t read_total; /* bytes read from the file */
  uint64_t end_off;    /* the input's size, once the end was read */

  /* Mapping names in the workers (under mu): the chunk whose names are mapped next, and 0
   * once the shared table failed. `shared` is used by the turn's holder only (its names). */
  uint64_t names_turn;
  int eager;
  atom_trace_reader *shared;
  /* The slots' readers keep their names from chunk to chunk (0 once a final key did not fit
   * a worker's tables, or settling failed), up to keep_names names each. */
  int persist;
  size_t keep_names;

  /* The consumer (its own thread only). */
  slot *cur;
  size_t ev_i, dir_i;
  uint64_t base_line; /* lines of the chunks before cur */
  uint64_t base_off;  /* bytes of the chunks before cur */
  uint64_t *map[3];   /* local key -> reader key, 0: not mapped yet */
  size_t map_cap[3];
} atom__trace_par;

/* ---- cutting (under the lock) ---------------------------------------------------------- */

static void io_fail(slot *s, int err, const char *fmt, ...) PRINTF_LIKE(3, 4);
static void io_fail(slot *s, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->io_msg, sizeof s->io_msg, fmt, ap);
  va_end(ap);
  s->io_err = err;
}

/* Make room for `need` bytes in the slot's buffer. */
static int slot_reserve(atom__trace_par *p, slot *s, size_t need) {
  if (need <= s->buf_cap) return 0;
  size_t cap = s->buf_cap ? s->buf_cap : need;
  while (cap < need) cap *= 2;
  unsigned char *nb = atom__mem_realloc(&p->mem, s->buf, s->buf_cap, cap);
  if (!nb) return ATOM_ENOMEM;
  s->buf = nb;
  s->buf_cap = cap;
  return 0;
}

/* The next chunk of a file into s: the carried bytes, then reads until the chunk size is
 * reached and a line end found (or the end of the file, or an error, which ends the cutting:
 * *end set). Runs without the lock, by the one thread that is cutting (p->cutting): the carry,
 * the counts of bytes read and p->mem are the cutter's alone. */
static void cut_file(atom_trace_reader *r, atom__trace_par *p, slot *s, int *end) {
  size_t len = 0;
  /* Room for the reads past the chunk size too: the buffer does not grow for them. */
  if (slot_reserve(p, s, p->chunk + p->carry_len + READ_PAST + 1)) goto oom;
  if (p->carry_len) memcpy(s->buf, p->carry, p->carry_len); /* carry is NULL before any */
  len = p->carry_len;
  p->carry_len = 0;
  size_t scan = 0; /* bytes already known to hold no '\n' */
  for (;;) {
    if (len >= p->chunk) {
      const unsigned char *nl = memrchr(s->buf + scan, '\n', len - scan);
      if (nl) {
        size_t cut = (size_t)(nl - s->buf) + 1;
        if (ATOM__GROW(&p->mem, p->carry, p->carry_cap, len - cut + 1)) goto oom;
        memcpy(p->carry, nl + 1, len - cut);
        p->carry_len = len - cut;
        len = cut;
        break;
      }
      scan = len;
      if (len > ATOM__TRACE_MAX_LINE + 1) {
        /* No line end in a whole line's worth of bytes: the serial reader's error. */
        len = 0;
        io_fail(s, ATOM_EPARSE, "line too long (more than %zu bytes)", ATOM__TRACE_MAX_LINE);
        *end = 1;
        break;
      }
      if (slot_reserve(p, s, len + READ_PAST + 1)) goto oom;
    }
    /* Up to the chunk size, then READ_PAST bytes at a time: a slot's buffer holds about one
     * chunk, not all the room its growth left (the chunk's bytes and events stay near the
     * caches). */
    size_t want = s->buf_cap - len - 1;
    if (len < p->chunk) want = p->chunk - len;
    else if (want > READ_PAST) want = READ_PAST;
    ssize_t n = read(r->fd, s->buf + len, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      /* The complete lines read so far are parsed first, as the serial reader does. */
      const unsigned char *nl = len ? memrchr(s->buf, '\n', len) : NULL;
      len = nl ? (size_t)(nl - s->buf) + 1 : 0;
      io_fail(s, ATOM_EIO, "read error: %s", strerror(e));
      *end = 1;
      break;
    }
    if (n == 0) {
      *end = 1;
      p->end_off = p->read_total;
      if (p->read_total < r->total) {
        const unsigned char *nl = len ? memrchr(s->buf, '\n', len) : NULL;
        len = nl ? (size_t)(nl - s->buf) + 1 : 0;
        io_fail(s, ATOM_EIO,
                "the file shrank while being read (%" PRIu64 " bytes read of %" PRIu64 ")",
                p->read_total, r->total);
      }
      break;
    }
    p->read_total += (uint64_t)n;
    len += (size_t)n;
  }
  s->data = s->buf;
  s->size = len;
  return;
oom:
  s->data = s->buf;
  s->size = 0;
  io_fail(s, ATOM_ENOMEM, "out of memory");
  *end = 1;
}

/* Claim and cut the next chunk (lock held; a file's reads release it meanwhile). */
static slot *cut_next(atom_trace_reader *r, atom__trace_par *p) {
  slot *s = &p->slots[p->next_cut % p->n_slots];
  s->state = SLOT_BUSY;
  s->seq = p->next_cut++;
  s->first = s->seq == 0;
  s->io_err = 0;
  if (r->src == SRC_MEMORY) {
    const unsigned char *end = r->data + r->size, *at = p->mem_pos;
    size_t left = (size_t)(end - at);
    const unsigned char *nl = left > p->chunk ? memchr(at + p->chunk, '\n', left - p->chunk) : NULL;
    const unsigned char *cut = nl ? nl + 1 : end;
    s->data = at;
    s->size = (size_t)(cut - at);
    p->mem_pos = cut;
    if (cut == end) p->cut_end = 1;
  } else {
    /* The reads take the lock's holder tens of microseconds: the other threads may take and
     * release chunks meanwhile, but not cut. */
    int end = 0;
    p->cutting = 1;
    pthread_mutex_unlock(&p->mu);
    cut_file(r, p, s, &end);
    pthread_mutex_lock(&p->mu);
    p->cutting = 0;
    if (end) p->cut_end = 1;
    pthread_cond_broadcast(&p->work);
    pthread_cond_broadcast(&p->done); /* the consumer may cut now, or learn the end */
  }
  return s;
}

static int can_cut(const atom__trace_par *p) {
  return !p->cut_end && !p->cutting && !p->stop && p->next_cut < p->next_use + p->n_slots;
}

/* ---- parsing (outside the lock) -------------------------------------------------------- */

/* Point the slot's reader at its chunk, as a fresh memory reader; its names are those of its
 * chunks before when s->keep, else none. */
static void worker_reset(slot *s) {
  atom_trace_reader *w = s->w;
  if (!s->keep) atom__trace_names_clear(w);
  for (size_t i = 0; i < w->n_dir; i++) atom__mem_strfree(&w->mem, w->dir[i].text);
  w->n_dir = 0;
  atom__mem_free(&w->mem, w->tail, w->tail_size);
  w->tail = NULL;
  w->tail_size = 0;
  w->err = 0;
  w->lineno = w->line = w->err_line = 0;
  w->unterminated = 0;
  w->started = !s->first;
  w->stage = 0;
  w->data = s->data;
  w->size = s->size;
  const unsigned char *nl = s->size ? memrchr(s->data, '\n', s->size) : NULL;
  w->body_end = nl ? nl + 1 : s->data;
  w->pos = w->lim = w->origin = s->data;
  s->out.n = s->out.n_runs = 0;
}

static void parse_slot(slot *s) {
  worker_reset(s);
  s->rc = atom__trace_parse_chunk(s->w, &s->out);
}

/* Intern the names of slot s (its turn: every chunk before it is mapped) that its reader has no
 * final key for, those the chunk added (the names it kept have their keys since their own
 * chunk's turn), into the shared table, in local key order: s->map, s->gbase, s->newloc. 0, or
 * an error (out of memory, too many names), after which the consumer maps this chunk and the
 * later ones itself. */
static int map_names(atom__trace_par *p, slot *s) {
  atom_trace_reader *g = p->shared;
  for (int i = 0; i < 3; i++) {
    const name_space *t = &s->w->names[i];
    s->gbase[i] = g->names[i].n;
    s->n_new[i] = 0;
    if (t->n + 1 > s->map_cap[i] && ATOM__GROW(&g->mem, s->map[i], s->map_cap[i], t->n + 1))
      return ATOM_ENOMEM;
    s->map[i][0] = 0;
    for (size_t k = t->n_final; k < t->n; k++) {
      uint64_t key;
      int rc = atom__trace_intern(g, i + 1, t->ent[k].s, t->ent[k].len, &key);
      if (rc) return rc;
      s->map[i][k + 1] = (uint32_t)key; /* keys are at most MAX_NAMES */
      if (key >= ATOM__KEY_PROV) s->settle = 0; /* no room in the tags: not kept */
      if (key > s->gbase[i]) { /* new to the input: keys come in order */
        if (s->n_new[i] == s->newloc_cap[i] &&
            ATOM__GROW(&g->mem, s->newloc[i], s->newloc_cap[i], s->n_new[i] + 1))
          return ATOM_ENOMEM;
        s->newloc[i][s->n_new[i]++] = (uint32_t)(k + 1);
      }
    }
  }
  return 0;
}

/* The space of each kind's target (the parser gives kinds it knows only). */
static const unsigned char target_space[ATOM_KIND_MAX_ + 1] = {
    [ATOM_READ] = ATOM_SPACE_VAR,     [ATOM_WRITE] = ATOM_SPACE_VAR,
    [ATOM_COMMIT] = ATOM_SPACE_VAR,   [ATOM_ACQUIRE] = ATOM_SPACE_LOCK,
    [ATOM_RELEASE] = ATOM_SPACE_LOCK, [ATOM_FORK] = ATOM_SPACE_THREAD,
    [ATOM_JOIN] = ATOM_SPACE_THREAD,
};

/* Rewrite the provisional keys of a mapped slot's events to the reader's keys (outside the
 * lock); the other keys are final already. Only chunks that brought the slot's reader names
 * have any. */
static void rewrite_events(slot *s) {
  atom_event *ev = s->out.ev;
  const uint32_t *threads = s->map[0], *by_kind[ATOM_KIND_MAX_ + 1];
  for (int k = 0; k <= ATOM_KIND_MAX_; k++)
    by_kind[k] = target_space[k] ? s->map[target_space[k] - 1] : threads;
  for (size_t i = 0, n = s->out.n; i < n; i++) {
    if (ev[i].thread & ATOM__KEY_PROV) ev[i].thread = threads[ev[i].thread ^ ATOM__KEY_PROV];
    if (ev[i].target & ATOM__KEY_PROV)
      ev[i].target = by_kind[ev[i].kind][ev[i].target ^ ATOM__KEY_PROV];
  }
}

/* The slot's reader forgets its names at its next chunk when it holds more than this many. */
static int over_keep(const atom__trace_par *p, const slot *s) {
  const name_space *t = s->w->names;
  return t[0].n + t[1].n + t[2].n > p->keep_names;
}

/* With p->mu held and can_cut(p): cut the next chunk, parse it without the lock, map its names
 * in its turn, and tell the consumer. Returns with p->mu held. */
static void cut_and_parse(atom_trace_reader *r, atom__trace_par *p) {
  slot *s = cut_next(r, p);
  /* Names are kept only while every chunk's names are mapped in the workers: a kept name's key
   * is final from its chunk's turn on. */
  s->keep = p->eager && p->persist && !over_keep(p, s);
  pthread_mutex_unlock(&p->mu);
  parse_slot(s);
  pthread_mutex_lock(&p->mu);
  while (p->names_turn != s->seq && !p->stop) pthread_cond_wait(&p->turn, &p->mu);
  if (p->stop) return; /* the chunk is abandoned: nobody waits for it */
  s->mapped = 0;
  s->settle = 1;
  if (r->lazy_from && s->seq + 1 >= r->lazy_from) p->eager = 0;
  if (p->eager) {
    /* The shared table is this turn's alone: intern without the lock. */
    pthread_mutex_unlock(&p->mu);
    int rc = map_names(p, s);
    pthread_mutex_lock(&p->mu);
    if (rc) p->eager = 0;
    else s->mapped = 1;
  }
  p->names_turn++;
  pthread_cond_broadcast(&p->turn);
  if (s->mapped) {
    const name_space *t = s->w->names;
    int added = t[0].n > t[0].n_final || t[1].n > t[1].n_final || t[2].n > t[2].n_final;
    int keep = 1;
    pthread_mutex_unlock(&p->mu);
    if (added) {
      rewrite_events(s);
      /* The slot's reader gives the final keys of the chunk's names from now on. */
      keep = s->settle && !atom__trace_names_settle(s->w, s->map);
    }
    pthread_mutex_lock(&p->mu);
    if (!keep) p->persist = 0;
  }
  s->state = SLOT_DONE;
  pthread_cond_broadcast(&p->done);
}

static void *worker_main(void *arg) {
  atom_trace_reader *r = arg;
  atom__trace_par *p = r->par;
  pthread_mutex_lock(&p->mu);
  while (!p->stop) {
    if (!can_cut(p)) {
      pthread_cond_wait(&p->work, &p->mu);
      continue;
    }
    cut_and_parse(r, p);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* ---- starting and stopping ------------------------------------------------------------- */

static void par_release(atom_trace_reader *r, atom__trace_par *p) {
  for (size_t i = 0; i < p->n_slots; i++) {
    slot *s = &p->slots[i];
    for (int k = 0; k < 3 && p->shared; k++) {
      atom__mem_free(&p->shared->mem, s->map[k], s->map_cap[k] * sizeof *s->map[k]);
      atom__mem_free(&p->shared->mem, s->newloc[k], s->newloc_cap[k] * sizeof *s->newloc[k]);
    }
    if (s->w) {
      atom__mem_free(&s->w->mem, s->out.ev, s->out.cap * sizeof *s->out.ev);
      atom__mem_free(&s->w->mem, s->out.runs, s->out.runs_cap * sizeof *s->out.runs);
      atom__mem_free(&s->w->mem, s->out.dir_pos, s->out.dir_cap * sizeof *s->out.dir_pos);
      atom_trace_reader_free(s->w);
    }
    atom__mem_free(&p->mem, s->buf, s->buf_cap);
  }
  atom__mem_free(&r->mem, p->slots, p->n_slots * sizeof *p->slots);
  if (p->shared) atom_trace_reader_free(p->shared);
  atom__mem_free(&p->mem, p->carry, p->carry_cap);
  for (int i = 0; i < 3; i++) atom__mem_free(&r->mem, p->map[i], p->map_cap[i] * sizeof *p->map[i]);
  atom__mem_free(&r->mem, p->th, p->n_th * sizeof *p->th);
  atom__mem_free(&r->mem, p, sizeof *p);
}

void atom__trace_par_free(atom_trace_reader *r) {
  atom__trace_par *p = r->par;
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_broadcast(&p->work);
  pthread_cond_broadcast(&p->turn);
  pthread_mutex_unlock(&p->mu);
  for (size_t i = 0; i < p->n_th; i++) pthread_join(p->th[i], NULL);
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->turn);
  pthread_mutex_destroy(&p->mu);
  r->par = NULL;
  par_release(r, p);
}

int atom__trace_par_start(atom_trace_reader *r) {
  r->par_tried = 1;
  /* Only from the very start of a buffer or of a regular file (a pipe has no size to cut
   * against and is read serially). */
  if (r->lineno || r->started || r->err) return 0;
  if (r->src == SRC_MEMORY ? r->stage != 0 || r->pos != r->data
                           : !r->shrink_check || r->fill || r->eof)
    return 0;
  /* An input of one chunk or less gains nothing from threads. */
  size_t chunk = r->chunk_size ? r->chunk_size : DEFAULT_CHUNK;
  if (r->total <= chunk) return 0;
  atom__trace_par *p = atom__mem_calloc(&r->mem, 1, sizeof *p);
  if (!p) goto oom;
  atom__mem_init(&p->mem, &atom__system_allocator);
  p->chunk = chunk;
  p->end_off = r->end_off;
  p->n_slots = (size_t)r->threads * 2;
  p->mem_pos = r->data;
  p->slots = atom__mem_calloc(&r->mem, p->n_slots, sizeof *p->slots);
  p->th = atom__mem_calloc(&r->mem, r->threads - 1, sizeof *p->th);
  if (!p->slots || !p->th) goto oom_p;
  p->n_th = 0;
  p->eager = 1;
  p->persist = 1;
  /* Kept names cost about 50 bytes each in a slot: at most about 50 MiB in all. */
  p->keep_names = ((size_t)1 << 20) / p->n_slots;
  if (p->keep_names < ((size_t)1 << 14)) p->keep_names = (size_t)1 << 14;
  if (r->keep_names) p->keep_names = r->keep_names - 1; /* tests */
  for (size_t i = 0; i < p->n_slots; i++) {
    if (atom_trace_reader_open_memory(&p->slots[i].w, NULL, 0, r->display)) goto oom_p;
    p->slots[i].w->key_tag = ATOM__KEY_PROV;
  }
  if (atom_trace_reader_open_memory(&p->shared, NULL, 0, r->display)) goto oom_p;
  if (pthread_mutex_init(&p->mu, NULL)) goto oom_p;
  if (pthread_cond_init(&p->work, NULL)) {
    pthread_mutex_destroy(&p->mu);
    goto oom_p;
  }
  if (pthread_cond_init(&p->done, NULL)) {
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    goto oom_p;
  }
  if (pthread_cond_init(&p->turn, NULL)) {
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    goto oom_p;
  }
  r->par = p;
  /* Fewer workers than asked for (no thread could be made) is still correct: the consumer
   * parses what no worker takes. */
  for (unsigned i = 0; i + 1 < r->threads; i++) {
    if (pthread_create(&p->th[p->n_th], NULL, worker_main, r)) break;
    p->n_th++;
  }
  return 0;
oom_p:
  p->n_th = 0;
  par_release(r, p);
oom:
  return atom__error(ATOM_ENOMEM, "%s: out of memory starting the parallel reader", r->display);
}

/* ---- consuming ------------------------------------------------------------------------- */

/* The chunk of sequence p->next_use, parsed; NULL when there is none (the end). */
static slot *next_chunk(atom_trace_reader *r, atom__trace_par *p) {
  pthread_mutex_lock(&p->mu);
  slot *s = &p->slots[p->next_use % p->n_slots];
  for (;;) {
    if (p->next_use < p->next_cut && s->state == SLOT_DONE && s->seq == p->next_use) break;
    if (p->next_use >= p->next_cut && p->cut_end) {
      s = NULL;
      break;
    }
    if (can_cut(p)) { /* help: parse the next chunk here */
      cut_and_parse(r, p);
      continue;
    }
    pthread_cond_wait(&p->done, &p->mu);
  }
  pthread_mutex_unlock(&p->mu);
  return s;
}

static void release_chunk(atom__trace_par *p, slot *s) {
  pthread_mutex_lock(&p->mu);
  s->state = SLOT_FREE;
  p->next_use++;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->mu);
}

/* The reader's key of the slot reader's local key `local` (a provisional key without its tag)
 * in space (1..3). */
static int map_key(atom_trace_reader *r, atom__trace_par *p, int space, uint64_t local,
                   uint64_t *key) {
  uint64_t *m = &p->map[space - 1][local - 1];
  if (LIKELY(*m)) {
    *key = *m;
    return 0;
  }
  const name_ent *e = &p->cur->w->names[space - 1].ent[local - 1];
  int rc = atom__trace_intern(r, space, e->s, e->len, m);
  *key = *m;
  return rc;
}

/* A mapped chunk: intern in the reader's table every name of the chunk up to the reader's key
 * `key` in space (1..3), in key order (the names new to the input are the chunk's newloc). */
COLD static int learn_names(atom_trace_reader *r, const slot *s, int space, uint64_t key) {
  name_space *t = &r->names[space - 1];
  const name_space *local = &s->w->names[space - 1];
  while (t->n < key) {
    size_t j = t->n - (size_t)s->gbase[space - 1];
    if (t->n < s->gbase[space - 1] || j >= s->n_new[space - 1])
      return atom__trace_fail(r, ATOM_EINVAL, "internal error: name keys of the parallel reader disagree");
    const name_ent *e = &local->ent[s->newloc[space - 1][j] - 1];
    uint64_t k;
    int rc = atom__trace_intern(r, space, e->s, e->len, &k);
    if (rc) return rc;
    if (k != t->n)
      return atom__trace_fail(r, ATOM_EINVAL, "internal error: name keys of the parallel reader disagree");
  }
  return 0;
}

/* The line of event i (< out->n) of a chunk, counted from its start. */
static uint64_t event_line(const atom__chunk_events *out, size_t i) {
  size_t lo = 0, hi = out->n_runs; /* the last run that starts at or before i */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (out->runs[mid].ev <= i) lo = mid;
    else hi = mid;
  }
  return out->runs[lo].line + (i - out->runs[lo].ev);
}

/* The lines of the chunk's events [from, to), plus base, into line[]. */
static void event_lines(const atom__chunk_events *out, size_t from, size_t to, uint64_t base,
                        uint64_t *line) {
  size_t lo = 0, hi = out->n_runs;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (out->runs[mid].ev <= from) lo = mid;
    else hi = mid;
  }
  for (size_t k = lo, i = from; i < to; k++) {
    size_t end = k + 1 < out->n_runs && out->runs[k + 1].ev < to ? out->runs[k + 1].ev : to;
    uint64_t first = base + out->runs[k].line + (i - out->runs[k].ev); /* the line of event i */
    size_t n = end - i, j = 0;
#if defined(__SSE2__)
    /* Four lines a step (the compiler's own vectorization of the loop below stores two). */
    __m128i a = _mm_set_epi64x((long long)(first + 1), (long long)first);
    __m128i b = _mm_add_epi64(a, _mm_set1_epi64x(2)), four = _mm_set1_epi64x(4);
    for (; j + 4 <= n; j += 4) {
      _mm_storeu_si128((__m128i *)(void *)(line + j), a);
      _mm_storeu_si128((__m128i *)(void *)(line + j + 2), b);
      a = _mm_add_epi64(a, four);
      b = _mm_add_epi64(b, four);
    }
#endif
    for (; j < n; j++) line[j] = first + j;
    line += n;
    i = end;
  }
}

/* 1 when every name of the mapped chunk s is in the reader's table. */
static int knows_all(const atom_trace_reader *r, const slot *s) {
  for (int i = 0; i < 3; i++)
    if (r->names[i].n < s->gbase[i] + s->n_new[i]) return 0;
  return 1;
}

/* The events [p->ev_i, to) of the mapped chunk s into the batch: copies, the names they
 * introduce learnt first. On an error, the events before the one that failed are in the batch
 * (and p->ev_i after them). */
static int copy_mapped(atom_trace_reader *r, atom__trace_par *p, const slot *s, size_t to,
                       atom__trace_batch *b) {
  size_t from = p->ev_i;
  const atom__chunk_events *out = &s->out;
  atom_event *ev = b->ev + b->count;
  uint64_t *line = b->line + b->count;
  uint64_t base = p->base_line;
  event_lines(out, from, to, base, line);
  if (knows_all(r, s)) { /* the common case: nothing to learn */
    memcpy(ev, out->ev + from, (to - from) * sizeof *ev);
  } else {
    for (size_t i = from; i < to; i++) {
      const atom_event *e = &out->ev[i];
      int sp = e->target ? target_space[e->kind] : 0;
      if (UNLIKELY(e->thread > r->names[0].n || (sp && e->target > r->names[sp - 1].n))) {
        int rc;
        r->lineno = line[i - from]; /* for an error interning the name */
        if ((rc = learn_names(r, s, ATOM_SPACE_THREAD, e->thread)) ||
            (sp && (rc = learn_names(r, s, sp, e->target)))) {
          b->count += i - from;
          p->ev_i = i;
          return rc;
        }
      }
      *ev++ = *e;
    }
  }
  b->count += to - from;
  p->ev_i = to;
  return 0;
}

/* Start consuming slot s: the maps sized for its names, all unmapped. */
static int begin_chunk(atom_trace_reader *r, atom__trace_par *p, slot *s) {
  p->cur = s;
  p->ev_i = p->dir_i = 0;
  if (s->mapped) return 0;
  for (int i = 0; i < 3; i++) {
    size_t n = s->w->names[i].n;
    if (n > p->map_cap[i] && ATOM__GROW(&r->mem, p->map[i], p->map_cap[i], n))
      return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
    if (n) memset(p->map[i], 0, n * sizeof *p->map[i]);
  }
  return 0;
}

/* Raise the chunk's error at its line: the same message as the serial reader's. */
static int chunk_error(atom_trace_reader *r, atom__trace_par *p, slot *s) {
  atom_trace_reader *w = s->w;
  if (s->rc) {
    r->lineno = p->base_line + w->err_line;
    r->unterminated = w->unterminated;
    return atom__trace_fail(r, w->err, "%s", w->detail);
  }
  r->lineno = p->base_line + w->lineno + 1;
  return atom__trace_fail(r, s->io_err, "%s", s->io_msg);
}

/* Move directive i of the current chunk into the reader's list. */
static int move_directive(atom_trace_reader *r, atom__trace_par *p, size_t i) {
  const atom__trace_directive *d = &p->cur->w->dir[i];
  uint64_t key = d->key;
  /* A name's key as the slot's reader gave it: final, or provisional (reader_state.h). */
  if (d->space != ATOM_SPACE_LOC && p->cur->mapped) {
    if (key & ATOM__KEY_PROV) key = p->cur->map[d->space - 1][key ^ ATOM__KEY_PROV];
    int rc = learn_names(r, p->cur, d->space, key);
    if (rc) return rc;
  } else if (d->space != ATOM_SPACE_LOC && (key & ATOM__KEY_PROV)) {
    int rc = map_key(r, p, d->space, key ^ ATOM__KEY_PROV, &key);
    if (rc) return rc;
  }
  if (ATOM__GROW(&r->mem, r->dir, r->dir_cap, r->n_dir + 1))
    return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
  char *text = atom__mem_strdup(&r->mem, d->text);
  if (!text) return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
  r->dir[r->n_dir++] = (atom__trace_directive){d->space, key, text};
  return 0;
}

int atom__trace_par_fill(atom_trace_reader *r, atom__trace_batch *b, size_t n) {
  atom__trace_par *p = r->par;
  int rc;
  if (b->own_ev) { /* the events lent by the last fill were consumed */
    b->ev = b->own_ev;
    b->own_ev = NULL;
  }
  while (b->count < n) {
    slot *s = p->cur;
    if (!s) {
      if (!(s = next_chunk(r, p))) {
        r->end_off = p->end_off; /* written by the cutter before it set cut_end under the lock */
        return 0;
      }
      if ((rc = begin_chunk(r, p, s))) return rc;
    }
    const atom__chunk_events *out = &s->out;
    atom_trace_reader *w = s->w;
    while (p->dir_i < w->n_dir && out->dir_pos[p->dir_i] <= p->ev_i) {
      r->lineno = p->base_line + (p->ev_i < out->n ? event_line(out, p->ev_i) : w->lineno);
      if ((rc = move_directive(r, p, p->dir_i))) return rc;
      p->dir_i++;
    }
    /* The events up to the next directive, the chunk's end or the batch's: most keys are
     * mapped already, a lookup each. */
    size_t stop = out->n;
    if (p->dir_i < w->n_dir && out->dir_pos[p->dir_i] < stop) stop = out->dir_pos[p->dir_i];
    if (stop - p->ev_i > n - b->count) stop = p->ev_i + (n - b->count);
    if (p->ev_i < stop && s->mapped) {
      if (b->count == 0 && knows_all(r, s)) {
        /* The common case: the batch points at the chunk's events (its own array kept in
         * own_ev until the next fill), which stay put until the chunk is released, in a later
         * fill; only the line numbers are written. The batch holds this stretch alone. */
        size_t k = stop - p->ev_i;
        b->own_ev = b->ev;
        b->ev = out->ev + p->ev_i;
        event_lines(out, p->ev_i, stop, p->base_line, b->line);
        b->count = k;
        p->ev_i = stop;
        r->line = b->line[k - 1];
        return 0;
      }
      if ((rc = copy_mapped(r, p, s, stop, b))) return rc;
      r->line = b->line[b->count - 1];
      continue;
    }
    if (p->ev_i < stop) {
      /* Keys as the slot's reader gave them: a final key (a name of an earlier chunk, which the
       * reader knows) stays, a provisional one is mapped here. */
      const uint64_t *threads = p->map[0];
      event_lines(out, p->ev_i, stop, p->base_line, b->line + b->count);
      for (size_t i = p->ev_i; i < stop; i++) {
        const atom_event *e = &out->ev[i];
        atom_event *ev = &b->ev[b->count];
        uint64_t line = b->line[b->count];
        *ev = *e;
        if (e->thread & ATOM__KEY_PROV) {
          uint64_t local = e->thread ^ ATOM__KEY_PROV, t = threads[local - 1];
          if (UNLIKELY(!t)) {
            r->lineno = line; /* for an error interning the name */
            if ((rc = map_key(r, p, ATOM_SPACE_THREAD, local, &t))) return rc;
            threads = p->map[0];
          }
          ev->thread = t;
        }
        if (e->target & ATOM__KEY_PROV) {
          int space = target_space[e->kind];
          uint64_t local = e->target ^ ATOM__KEY_PROV, k = p->map[space - 1][local - 1];
          if (UNLIKELY(!k)) {
            r->lineno = line;
            if ((rc = map_key(r, p, space, local, &k))) return rc;
          }
          ev->target = k;
        }
        b->count++; /* its line written above */
      }
      p->ev_i = stop;
      r->line = b->line[b->count - 1];
      continue;
    }
    if (p->ev_i < out->n) continue; /* a directive is next */
    /* The chunk is consumed. */
    if (s->rc || s->io_err) return chunk_error(r, p, s);
    p->base_line += w->lineno;
    p->base_off += s->size;
    r->lineno = p->base_line;
    r->base = p->base_off;
    p->cur = NULL;
    release_chunk(p, s);
  }
  return 0;
}
