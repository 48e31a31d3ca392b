/* Sessions: creation, checkers, names, atomic sets, finish, statistics. Pushing events and
 * their normalization live in push.c. */
#include "core/session.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/args.h"
#include "core/env.h"
#include "core/error.h"
#include "core/registry.h"
#include "support/assert.h"

/* ---- re-entrancy ----
 * One byte per thread whose address names the thread: a callback finds its own marker in
 * busy_owner exactly when it runs inside a call on the same session (the thread cannot be in
 * two places), whatever other threads are doing. */
static _Thread_local char thread_marker;

static uintptr_t self_marker(void) { return (uintptr_t)&thread_marker; }

uintptr_t atom__self_marker(void) { return self_marker(); }

int atom__reentered(const atom_session *s) {
  return atomic_load_explicit(&s->busy_owner, memory_order_relaxed) == self_marker();
}

int atom__reentrant_error(const char *fn) {
  return atom__error(ATOM_EREENTRANT,
                     "%s: called from inside a callback of the same session (on_report or a "
                     "checker); nothing was changed",
                     fn);
}

int atom__freed_error(const char *fn) {
  return atom__error(ATOM_ESTATE, "%s: a callback freed the session during the call", fn);
}

void atom__call_begin(atom_session *s) {
  ATOM__ASSERT(!atom__reentered(s)); /* re-entry is refused before a call begins */
  atomic_store_explicit(&s->busy_owner, self_marker(), memory_order_relaxed);
}

static void session_destroy(atom_session *s);

int atom__call_end(atom_session *s, int unlock) {
  atomic_store_explicit(&s->busy_owner, 0, memory_order_relaxed);
  int deferred_free = s->free_pending;
  if (unlock) pthread_mutex_unlock(&s->lock);
  if (!deferred_free) return 0;
  session_destroy(s);
  return 1;
}

/* Size of atom_options in each version it had: a caller built against an older header has a
 * shorter struct, so only that prefix may be read or written. 0 for an unknown version. */
static size_t options_size(unsigned version) {
  switch (version) {
  case 1: return offsetof(atom_options, max_reports_per_checker);
  case 2: return offsetof(atom_options, on_progress);
  case 3: return sizeof(atom_options);
  default: return 0;
  }
}

ATOM_API int atom_options_init(atom_options *opt, unsigned version) {
  if (!opt) return atom__error(ATOM_EINVAL, "atom_options_init: NULL options");
  size_t size = options_size(version);
  if (!size)
    return atom__error(ATOM_EINVAL, "atom_options_init: unknown options version %u", version);
  memset(opt, 0, size);
  opt->version = version;
  return 0;
}

ATOM_API int atom_session_new(atom_session **out, const atom_options *opt) {
  if (!out) return atom__error(ATOM_EINVAL, "atom_session_new: NULL output pointer");
  *out = NULL;
  atom_options o;
  atom_options_init(&o, ATOM_OPTIONS_VERSION);
  if (opt) {
    size_t size = options_size(opt->version);
    if (!size)
      return atom__error(ATOM_EINVAL, "atom_session_new: unknown options version %u",
                         (unsigned)opt->version);
    memcpy(&o, opt, size); /* fields of later versions keep their defaults */
  }
  if (o.flags & ~(ATOM_THREADSAFE | ATOM_PROFILE))
    return atom__error(ATOM_EINVAL, "atom_session_new: unknown flags 0x%x", (unsigned)o.flags);
  int n_alloc = !!o.malloc_fn + !!o.realloc_fn + !!o.free_fn;
  if (n_alloc != 0 && n_alloc != 3)
    return atom__error(ATOM_EINVAL,
                       "atom_session_new: give all three allocator functions or none");
  atom__allocator alloc = atom__system_allocator;
  if (n_alloc == 3) {
    alloc.malloc_fn = o.malloc_fn;
    alloc.realloc_fn = o.realloc_fn;
    alloc.free_fn = o.free_fn;
    alloc.payload = o.alloc_payload;
  }
  atom_session *s = alloc.malloc_fn(sizeof *s, alloc.payload);
  if (!s) return atom__error(ATOM_ENOMEM, "atom_session_new: out of memory");
  memset(s, 0, sizeof *s);
  s->opt = o;
  s->alloc = alloc;
  s->id_limit = ATOM__MAX_IDS;
  atom__mem_init(&s->mem, &s->alloc);
  if (pthread_mutex_init(&s->lock, NULL) != 0) {
    alloc.free_fn(s, alloc.payload);
    return atom__error(ATOM_ENOMEM, "atom_session_new: cannot create a mutex");
  }
  *out = s;
  return 0;
}

static void intern_free(atom__intern *in, atom__mem *mem) {
  atom__mem_free(mem, in->direct, in->direct_cap * sizeof *in->direct);
  atom__mem_free(mem, in->keys, in->keys_cap * sizeof *in->keys);
  atom__u64map_free(&in->map, mem);
}

ATOM_API void atom_session_free(atom_session *s) {
  if (!s) return;
  if (atom__reentered(s)) {
    /* From a callback: the call that runs it still uses s, so it frees s when it returns
     * (atom__call_end) and calls no more callbacks. A second free while freeing is a no-op. */
    s->free_pending = 1;
    return;
  }
  /* Marked busy so that a checker's destroy cannot call back into the session it is leaving. */
  atom__call_begin(s);
  session_destroy(s);
}

static void session_destroy(atom_session *s) {
  for (size_t i = 0; i < s->n_envs; i++) {
    atom_env *env = s->envs[i];
    env->vt->destroy(env->self);
    atom__env_free(env);
  }
  atom__mem *mem = &s->mem;
  atom__mem_free(mem, s->envs, s->envs_cap * sizeof *s->envs);
  for (int k = 0; k <= ATOM_KIND_MAX_; k++)
    atom__mem_free(mem, s->subs[k], s->n_subs[k] * sizeof *s->subs[k]);
  for (size_t t = 0; t < s->threads_cap; t++) {
    atom__thread *th = &s->threads[t];
    atom__mem_free(mem, th->pending_var, th->pending_cap * sizeof *th->pending_var);
    atom__mem_free(mem, th->pending_src, th->pending_cap * sizeof *th->pending_src);
  }
  atom__mem_free(mem, s->threads, s->threads_cap * sizeof *s->threads);
  atom__mem_free(mem, s->thread_live, s->thread_live_cap * sizeof *s->thread_live);
  atom__mem_free(mem, s->locks, s->locks_cap * sizeof *s->locks);
  for (int i = 0; i < 4; i++) intern_free(&s->ids[i], mem);
  atom__names_free(&s->names, mem);
  atom__locations_free(&s->locations, mem);
  atom__u64map_free(&s->sets, mem);
  atom__mem_free(mem, s->set_keys, s->set_keys_cap * sizeof *s->set_keys);
  atom__reports_free(&s->reports, mem);
  pthread_mutex_destroy(&s->lock);
  s->alloc.free_fn(s, s->alloc.payload);
}

/* Subscribe env to every kind of its mask. On failure nothing stays subscribed. */
static int subscribe(atom_session *s, atom_env *env) {
  uint32_t mask = env->vt->event_mask;
  int k;
  for (k = 1; k <= ATOM_KIND_MAX_; k++) {
    if (!(mask & ATOM_KIND_BIT(k))) continue;
    size_t n = s->n_subs[k];
    atom__sub *grown = atom__mem_realloc(&s->mem, s->subs[k], n * sizeof *grown,
                                         (n + 1) * sizeof *grown);
    if (!grown) goto undo;
    grown[n].on_event = env->vt->on_event;
    grown[n].self = env->self;
    grown[n].env = env;
    grown[n].batched = env->vt->on_events != NULL;
    s->subs[k] = grown;
    s->n_subs[k] = n + 1;
  }
  if (env->vt->on_events)
    s->any_batched = 1;
  else
    s->loop_kinds |= mask;
  if (mask & ATOM_KIND_BIT(ATOM_COMMIT)) {
    s->track_pending = 1;
    if (env->vt->properties & ATOM_CHECKER_PROP_STORE_BUFFER) s->keep_pending_src = 1;
  }
  return 0;
undo:
  for (int j = 1; j < k; j++) {
    if (!(mask & ATOM_KIND_BIT(j))) continue;
    size_t n = s->n_subs[j];
    atom__sub *shrunk = atom__mem_realloc(&s->mem, s->subs[j], n * sizeof *shrunk,
                                          (n - 1) * sizeof *shrunk);
    s->subs[j] = n - 1 ? shrunk : NULL;
    s->n_subs[j] = n - 1;
  }
  return ATOM_ENOMEM;
}

static int attach_checker(atom_session *s, const atom_checker *vt, const char *args);

ATOM_API int atom_session_attach_checker(atom_session *s, const atom_checker *vt,
                                         const char *args) {
  if (!s || !vt) return atom__error(ATOM_EINVAL, "atom_session_attach_checker: NULL argument");
  /* Only abi_version is read before it is known to be a version the core knows: the other
   * members sit where that version put them (a future version may move nothing, but the
   * core cannot know that). */
  if (!atom__checker_size(vt->abi_version))
    return atom__error(ATOM_EINVAL,
                       "atom_session_attach_checker: unknown checker vtable version %u (this "
                       "library knows 1 to %d; was the plugin built against a newer "
                       "<atomicity/sys/checker.h>?)",
                       (unsigned)vt->abi_version, ATOM_CHECKER_ABI_VERSION);
  if (!vt->name || !vt->create || !vt->on_event || !vt->destroy)
    return atom__error(ATOM_EINVAL, "checker %s: a required member is NULL (name, create, "
                       "on_event and destroy are required)",
                       vt->name ? vt->name : "(unnamed)");
  if (vt->event_mask & ~0x7feu)
    return atom__error(ATOM_EINVAL, "checker %s: event mask 0x%x has unknown kinds", vt->name,
                       (unsigned)vt->event_mask);
  if (atom__reentered(s)) return atom__reentrant_error("atom_session_attach_checker");
  if (s->next_index > 0 || s->finished)
    return atom__error(ATOM_ESTATE, "checker %s: attach checkers before the first event",
                       vt->name);
  atom__call_begin(s); /* create may be a plugin's code */
  int err = attach_checker(s, vt, args);
  if (atom__call_end(s, 0)) err = atom__freed_error("atom_session_attach_checker");
  return err;
}

/* The attach proper, with the session marked busy. */
static int attach_checker(atom_session *s, const atom_checker *vt, const char *args) {
  if (ATOM__GROW(&s->mem, s->envs, s->envs_cap, s->n_envs + 1))
    return atom__error(ATOM_ENOMEM, "checker %s: out of memory", vt->name);
  atom_env *env = atom__mem_calloc(&s->mem, 1, sizeof *env);
  if (!env) return atom__error(ATOM_ENOMEM, "checker %s: out of memory", vt->name);
  env->session = s;
  /* The caller's vtable is only as long as its version says (checked by the caller). */
  memcpy(&env->vt_copy, vt, atom__checker_size(vt->abi_version));
  env->vt = &env->vt_copy;
  vt = env->vt;
  env->index = s->n_envs;
  atom__mem_init(&env->mem, &s->alloc);
  int err = atom__args_parse(env, args);
  if (!err) {
    err = vt->create(&env->self, env);
    if (err) {
      /* create failed (a positive value too): destroy is not called (checker.h lifecycle) */
      err = atom__env_rc(env, "create", err);
    } else if ((err = subscribe(s, env)) != 0) {
      vt->destroy(env->self);
      atom__error(err, "checker %s: out of memory", vt->name);
    }
  }
  if (err) {
    atom__env_free(env);
    return err;
  }
  s->envs[s->n_envs++] = env;
  return 0;
}

ATOM_API int atom_session_attach(atom_session *s, const char *spec) {
  if (!s || !spec) return atom__error(ATOM_EINVAL, "atom_session_attach: NULL argument");
  const char *colon = strchr(spec, ':');
  size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
  const atom_checker *vt = atom__registry_find(spec, len);
  if (!vt)
    return atom__error(ATOM_ENOTFOUND, "no checker named \"%.*s\"", (int)len, spec);
  int err = atom_session_attach_checker(s, vt, colon ? colon + 1 : NULL);
  if (err) return err;
  /* Remember the spec for output labels; without memory for it the name serves. */
  atom_env *env = s->envs[s->n_envs - 1];
  size_t n = strlen(spec) + 1;
  env->spec = atom__mem_alloc(&s->mem, n);
  if (env->spec) memcpy(env->spec, spec, n);
  return 0;
}

const char *atom__checker_label(const atom_session *s, size_t i) {
  if (!s || i >= s->n_envs) return NULL;
  const atom_env *env = s->envs[i];
  return env->spec ? env->spec : env->vt->name;
}

ATOM_API int atom_set_name(atom_session *s, int what, uint64_t key, const char *name) {
  if (!s || !name || what < ATOM_SPACE_THREAD || what > ATOM_SPACE_LOC)
    return atom__error(ATOM_EINVAL, "atom_set_name: bad space %d or NULL argument", what);
  /* Refused from a callback: a checker may hold a name it looked up while it reports. */
  if (atom__reentered(s)) return atom__reentrant_error("atom_set_name");
  if (atom__names_set(&s->names, &s->mem, what, key, name))
    return atom__error(ATOM_ENOMEM, "atom_set_name: out of memory");
  return 0;
}

ATOM_API const char *atom_get_name(const atom_session *s, int what, uint64_t key) {
  return s ? atom__names_get(&s->names, what, key) : NULL;
}

ATOM_API int atom_declare_set(atom_session *s, uint64_t var, uint64_t set) {
  if (!s) return atom__error(ATOM_EINVAL, "atom_declare_set: NULL session");
  if (atom__reentered(s)) return atom__reentrant_error("atom_declare_set");
  if (s->n_set_keys >= UINT32_MAX - 1 ||
      ATOM__GROW(&s->mem, s->set_keys, s->set_keys_cap, s->n_set_keys + 1))
    return atom__error(ATOM_ENOMEM, "atom_declare_set: out of memory");
  if (atom__u64map_put(&s->sets, &s->mem, var, (uint32_t)s->n_set_keys))
    return atom__error(ATOM_ENOMEM, "atom_declare_set: out of memory");
  s->set_keys[s->n_set_keys++] = set;
  return 0;
}

ATOM_API int atom_finish(atom_session *s) {
  if (!s) return atom__error(ATOM_EINVAL, "atom_finish: NULL session");
  /* Refused from a callback: finishing in the middle of a push or of another finish would
   * judge half-processed events and lose the reports still to come. */
  if (atom__reentered(s)) return atom__reentrant_error("atom_finish");
  int threadsafe = s->opt.flags & ATOM_THREADSAFE;
  if (threadsafe) pthread_mutex_lock(&s->lock);
  atom__call_begin(s);
  if (!s->finished) {
    int err = 0;
    /* Close open transactions in thread order so every checker decides on complete ones. A
     * checker that runs out of memory on the way is disabled (push.c). */
    for (uint32_t t = 0; t < s->ids[ATOM_SPACE_THREAD].count; t++)
      if (s->threads[t].depth) {
        int e = atom__close_transaction(s, t, s->next_index++);
        if (e && !err) err = e;
      }
    for (size_t i = 0; i < s->n_envs && !s->free_pending; i++) {
      atom_env *env = s->envs[i];
      if (!env->vt->finish || env->disabled) continue;
      struct timespec a, b;
      if (s->opt.flags & ATOM_PROFILE) clock_gettime(CLOCK_MONOTONIC, &a);
      int e = env->vt->finish(env->self);
      if (e) e = atom__env_rc(env, "finish", e);
      if (s->opt.flags & ATOM_PROFILE) {
        clock_gettime(CLOCK_MONOTONIC, &b);
        env->time_ns += (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec -
                        (uint64_t)a.tv_nsec;
      }
      if (e == ATOM_ENOMEM || e == ATOM_ELIMIT) {
        /* at finish the checker "stopped at" the end of the events */
        atom__env_disable(env, s->next_index, e);
      } else if (e && !err) {
        err = e;
      }
    }
    for (size_t i = 0; i < s->n_envs && !err; i++) {
      const atom_env *env = s->envs[i];
      if (!env->disabled) continue;
      if (env->error == ATOM_ENOMEM)
        err = atom__error(ATOM_ENOMEM,
                          "checker %s ran out of memory at event %llu and stopped checking: its "
                          "reports are incomplete",
                          env->vt->name, (unsigned long long)env->stopped_at);
      else
        err = atom__error(env->error,
                          "checker %s stopped checking at event %llu: %s; its reports are "
                          "incomplete",
                          env->vt->name, (unsigned long long)env->stopped_at, env->reason);
    }
    s->finished = 1;
    s->finish_status = err;
  }
  int err = s->finish_status;
  if (atom__call_end(s, threadsafe)) err = atom__freed_error("atom_finish");
  return err;
}

ATOM_API int atom_session_stats_get(const atom_session *s, atom_session_stats *out) {
  if (!s || !out || out->version != ATOM_SESSION_STATS_VERSION)
    return atom__error(ATOM_EINVAL, "atom_session_stats_get: NULL argument or bad version");
  out->events = s->next_index;
  out->rejected = s->rejected;
  out->threads = s->ids[ATOM_SPACE_THREAD].count;
  out->vars = s->ids[ATOM_SPACE_VAR].count;
  out->locks = s->ids[ATOM_SPACE_LOCK].count;
  out->bytes = s->mem.bytes;
  return 0;
}

ATOM_API size_t atom_checker_count(const atom_session *s) { return s ? s->n_envs : 0; }

ATOM_API const char *atom_checker_name(const atom_session *s, size_t i) {
  return s && i < s->n_envs ? s->envs[i]->vt->name : NULL;
}

ATOM_API int atom_checker_stats_get(const atom_session *s, size_t i, atom_checker_stats *out) {
  if (!s || !out || i >= s->n_envs || out->version != ATOM_CHECKER_STATS_VERSION)
    return atom__error(ATOM_EINVAL, "atom_checker_stats_get: bad argument");
  const atom_env *env = s->envs[i];
  out->bytes = env->mem.bytes;
  out->peak_bytes = env->mem.peak;
  out->time_ns = env->time_ns;
  out->reports = env->reports;
  out->occurrences = env->occurrences;
  out->disabled = (uint64_t)env->disabled;
  out->nodes = out->edges = out->clocks = 0;
  if (env->vt->stats) {
    atom_checker_counters c = {0, 0, 0};
    if (env->vt->stats(env->self, &c) == 0) {
      out->nodes = c.nodes;
      out->edges = c.edges;
      out->clocks = c.clocks;
    }
  }
  return 0;
}

ATOM_API int atom_checker_status_get(const atom_session *s, size_t i, atom_checker_status *out) {
  if (!s || !out || i >= s->n_envs || out->version != ATOM_CHECKER_STATUS_VERSION)
    return atom__error(ATOM_EINVAL, "atom_checker_status_get: bad argument");
  const atom_env *env = s->envs[i];
  out->state = env->state ? env->state : ATOM_CHECKER_COMPLETE;
  out->stopped_at = env->state ? env->stopped_at : 0;
  out->reason = env->state ? env->reason : NULL;
  out->error = env->state == ATOM_CHECKER_DISABLED ? env->error : 0;
  out->reserved = 0;
  return 0;
}
