/* The checker environment: what a checker may ask of its session (checker.h). */
#include "core/env.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/session.h"

int atom__env_rc(const atom_env *env, const char *callback, int rc) {
  const char *name = env->vt->name;
  if (rc == 0) return 0;
  if (rc > 0 || atom_error_name(rc) == NULL)
    return atom__error(ATOM_ECHECKER, "checker %s: %s returned %d, which is not an error code",
                       name, callback, rc);
  /* A known code: keep the checker's own message (atom_env_error() prefixes its name); if it
   * set none, the message left is someone else's, so replace it. */
  if (strstr(atom_last_error(), name) == NULL)
    atom__error(rc, "checker %s: %s failed: %s", name, callback, atom_strerror(rc));
  return rc;
}

void atom__env_free(atom_env *env) {
  if (!env) return;
  atom__mem *core = &env->session->mem;
  if (env->reason_size) atom__mem_free(core, env->reason, env->reason_size); /* 0: static */
  if (env->args) atom__mem_free(&env->mem, env->args, strlen(env->args) + 1);
  if (env->spec) atom__mem_free(core, env->spec, strlen(env->spec) + 1);
  atom__mem_free(&env->mem, env->arg_keys, env->args_size * sizeof *env->arg_keys);
  atom__mem_free(&env->mem, env->arg_values, env->args_size * sizeof *env->arg_values);
  atom__mem_free(core, env, sizeof *env);
}

ATOM_API const char *atom_env_arg(atom_env *env, const char *key) {
  if (!env || !key) return NULL;
  for (size_t i = 0; i < env->n_args; i++)
    if (strcmp(env->arg_keys[i], key) == 0) return env->arg_values[i];
  return NULL;
}

ATOM_API int atom_env_error(atom_env *env, int err, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return atom__error(err, "%s: %s", env && env->vt ? env->vt->name : "checker", msg);
}

ATOM_API void *atom_env_realloc(atom_env *env, void *ptr, size_t old_size, size_t new_size) {
  return env ? atom__mem_realloc(&env->mem, ptr, old_size, new_size) : NULL;
}

ATOM_API uint32_t atom_env_count(const atom_env *env, int space) {
  if (!env || space < ATOM_SPACE_THREAD || space > ATOM_SPACE_LOCK) return 0;
  return env->session->ids[space].count;
}

ATOM_API uint64_t atom_env_key(const atom_env *env, int space, uint32_t id) {
  if (!env || space < ATOM_SPACE_THREAD || space > ATOM_SPACE_LOCK) return 0;
  return atom__intern_key(env->session, space, id);
}

ATOM_API const char *atom_env_name(const atom_env *env, int space, uint32_t id) {
  if (!env || space < ATOM_SPACE_THREAD || space > ATOM_SPACE_LOCK ||
      id >= env->session->ids[space].count)
    return NULL;
  return atom__names_get(&env->session->names, space, atom__intern_key(env->session, space, id));
}

ATOM_API int atom_env_label(const atom_env *env, int space, uint32_t id, char *buf, size_t size) {
  const char *name = atom_env_name(env, space, id);
  if (name) return snprintf(buf, size, "%s", name);
  return snprintf(buf, size, "0x%llx", (unsigned long long)atom_env_key(env, space, id));
}

ATOM_API int atom_env_commit_source(const atom_env *env, atom_ev *write) {
  if (!env || !write || !env->session->has_commit_source || !env->session->keep_pending_src ||
      !(env->vt->properties & ATOM_CHECKER_PROP_STORE_BUFFER))
    return ATOM_EINVAL;
  *write = env->session->commit_source;
  return 0;
}

ATOM_API size_t atom_env_pending_writes(const atom_env *env, uint32_t thread, size_t first,
                                        atom_ev *out, size_t max) {
  if (!env || !env->session->keep_pending_src ||
      !(env->vt->properties & ATOM_CHECKER_PROP_STORE_BUFFER) ||
      thread >= env->session->ids[ATOM_SPACE_THREAD].count)
    return 0;
  const atom__thread *th = &env->session->threads[thread];
  for (size_t i = first; i < th->pending_len && i - first < max && out; i++)
    out[i - first] = atom__pending_write(th, thread, i);
  return th->pending_len;
}

ATOM_API int atom_env_var_set(const atom_env *env, uint32_t var, uint64_t *set) {
  if (!env || var >= env->session->ids[ATOM_SPACE_VAR].count) return 0;
  uint32_t at;
  const atom_session *s = env->session;
  if (!atom__u64map_get(&s->sets, atom__intern_key(s, ATOM_SPACE_VAR, var), &at)) return 0;
  if (set) *set = s->set_keys[at];
  return 1;
}

ATOM_API int atom_env_report(atom_env *env, const atom_report_spec *spec) {
  if (!env) return atom__error(ATOM_EINVAL, "atom_env_report: NULL environment");
  return atom__report_add(env->session, env, spec);
}

ATOM_API int atom_env_report_repeat(atom_env *env, const atom_report_spec *spec) {
  if (!env) return atom__error(ATOM_EINVAL, "atom_env_report_repeat: NULL environment");
  return atom__report_repeat(env->session, env, spec);
}

/* ---- incomplete and disabled checkers (atom_checker_status) ---- */

/* Why a status has no reason text: its copy could not be allocated. */
static char no_memory_reason[] = "the reason could not be stored (out of memory)";

/* Replace env's reason with a copy of text (one line: control characters become spaces). */
static void set_reason(atom_env *env, const char *text) {
  atom__mem *core = &env->session->mem;
  if (env->reason_size) atom__mem_free(core, env->reason, env->reason_size); /* 0: static */
  env->reason = NULL;
  env->reason_size = 0;
  size_t n = strlen(text) + 1;
  char *copy = atom__mem_realloc(core, NULL, 0, n);
  if (!copy) {
    env->reason = no_memory_reason; /* reason_size 0: never freed */
    return;
  }
  for (size_t i = 0; i < n; i++) copy[i] = (text[i] > 0 && text[i] < 0x20) ? ' ' : text[i];
  env->reason = copy;
  env->reason_size = n;
}

void atom__env_disable(atom_env *env, uint64_t index, int err) {
  if (env->disabled) return;
  env->disabled = 1;
  env->state = ATOM_CHECKER_DISABLED;
  env->stopped_at = index;
  env->error = err;
  /* atom_env_error() prefixes "name: "; a message without it is not the checker's (stale). */
  const char *msg = atom_last_error();
  size_t len = strlen(env->vt->name);
  char buf[512];
  if (msg && strncmp(msg, env->vt->name, len) == 0 && msg[len] == ':' && msg[len + 1] == ' ' &&
      msg[len + 2])
    snprintf(buf, sizeof buf, "%s", msg + len + 2);
  else if (err == ATOM_ENOMEM)
    snprintf(buf, sizeof buf, "out of memory");
  else
    snprintf(buf, sizeof buf, "%s (%s)", atom_strerror(err), atom_error_name(err));
  set_reason(env, buf);
}

ATOM_API int atom_env_incomplete(atom_env *env, uint64_t event_index, const char *fmt, ...) {
  if (!env || !fmt) return atom__error(ATOM_EINVAL, "atom_env_incomplete: NULL argument");
  /* The first reason is kept; a disabled checker keeps the stronger state. */
  if (env->state == ATOM_CHECKER_INCOMPLETE || env->state == ATOM_CHECKER_DISABLED) return 0;
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  env->state = ATOM_CHECKER_INCOMPLETE;
  env->stopped_at = event_index;
  env->error = 0;
  set_reason(env, msg);
  return 0;
}

/* Forwarded at most every PROGRESS_INTERVAL_NS, and always for the last unit (done == total),
 * so a driver's line ends at 100 %. */
#define PROGRESS_INTERVAL_NS 200000000u

ATOM_API int atom_env_progress(atom_env *env, uint64_t done, uint64_t total) {
  if (!env) return atom__error(ATOM_EINVAL, "atom_env_progress: NULL env");
  atom_session *s = env->session;
  if (!s->opt.on_progress) return 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  if (now - env->progress_ns < PROGRESS_INTERVAL_NS && !(total && done >= total)) return 0;
  env->progress_ns = now;
  s->opt.on_progress(env->index, done, total, s->opt.progress_payload);
  return 0;
}
