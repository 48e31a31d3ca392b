/* ATOMICITY_OPTIONS: key=value pairs separated by ':' or white space, as in TSAN_OPTIONS.
 * A value may be quoted with '...' or "..." (to contain ':' or spaces); "::" inside a value
 * (a C++ name) is not a separator. Errors are returned as
 * one line of text; the caller then runs the program unchecked. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

#define MAX_LINE 4096

static int fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, size, fmt, ap);
  va_end(ap);
  return -1;
}

static int push_str(char ***v, size_t *n, const char *s, size_t len) {
  char **nv = realloc(*v, (*n + 1) * sizeof **v);
  if (!nv) return -1;
  *v = nv;
  char *copy = malloc(len + 1);
  if (!copy) return -1;
  memcpy(copy, s, len);
  copy[len] = '\0';
  nv[(*n)++] = copy;
  return 0;
}

static void free_strs(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* "NAME" or "FILE:N" or "FILE:N-M" (a line of atomic_file). */
static int add_atomic_entry(rt_options *o, const char *s, size_t len) {
  const char *colon = NULL;
  for (size_t i = 0; i < len; i++)
    if (s[i] == ':') colon = s + i;
  if (colon && colon > s && colon + 1 < s + len && isdigit((unsigned char)colon[1])) {
    char *end;
    unsigned long first = strtoul(colon + 1, &end, 10), last = first;
    if (end < s + len && *end == '-') last = strtoul(end + 1, &end, 10);
    if (end == s + len && first > 0 && last >= first && last <= 0xffffffffUL) {
      struct rt_range *nr = realloc(o->ranges, (o->n_ranges + 1) * sizeof *nr);
      if (!nr) return -1;
      o->ranges = nr;
      size_t flen = (size_t)(colon - s);
      char *file = malloc(flen + 1);
      if (!file) return -1;
      memcpy(file, s, flen);
      file[flen] = '\0';
      nr[o->n_ranges++] = (struct rt_range){file, (unsigned)first, (unsigned)last};
      return 0;
    }
  }
  return push_str(&o->atomic, &o->n_atomic, s, len);
}

static int add_atomic_list(rt_options *o, const char *v) {
  while (*v) {
    size_t n = strcspn(v, ",");
    if (n && add_atomic_entry(o, v, n) != 0) return -1;
    v += n;
    if (*v == ',') v++;
  }
  return 0;
}

static int read_atomic_file(rt_options *o, const char *path, char *err, size_t size) {
  FILE *f = fopen(path, "r");
  if (!f) return fail(err, size, "atomic_file=%s: %s", path, strerror(errno));
  char line[MAX_LINE];
  unsigned lineno = 0;
  int rc = 0;
  while (rc == 0 && fgets(line, sizeof line, f)) {
    lineno++;
    size_t n = strlen(line);
    if (n == sizeof line - 1 && line[n - 1] != '\n') {
      rc = fail(err, size, "atomic_file=%s:%u: line too long", path, lineno);
      break;
    }
    char *s = line;
    while (isspace((unsigned char)*s)) s++;
    n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (!n || *s == '#') continue;
    if (add_atomic_entry(o, s, n) != 0) rc = fail(err, size, "out of memory");
  }
  if (rc == 0 && ferror(f)) rc = fail(err, size, "atomic_file=%s: read error", path);
  fclose(f);
  return rc;
}

/* checkers=a,b:k=v,k2=v2,c: a piece with '=' but no ':' continues the previous spec. */
static int set_checkers(rt_options *o, const char *v, char *err, size_t size) {
  free_strs(o->checkers, o->n_checkers);
  o->checkers = NULL;
  o->n_checkers = 0;
  while (*v) {
    size_t n = strcspn(v, ",");
    if (n) {
      int cont = o->n_checkers && memchr(v, '=', n) && !memchr(v, ':', n);
      if (cont) {
        char *prev = o->checkers[o->n_checkers - 1];
        size_t plen = strlen(prev);
        char *joined = realloc(prev, plen + 1 + n + 1);
        if (!joined) return fail(err, size, "out of memory");
        joined[plen] = ',';
        memcpy(joined + plen + 1, v, n);
        joined[plen + 1 + n] = '\0';
        o->checkers[o->n_checkers - 1] = joined;
      } else if (push_str(&o->checkers, &o->n_checkers, v, n) != 0) {
        return fail(err, size, "out of memory");
      }
    }
    v += n;
    if (*v == ',') v++;
  }
  if (!o->n_checkers) return fail(err, size, "checkers= is empty");
  return 0;
}

static int parse_long(const char *v, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (!*v || *end || errno || x < lo || x > hi) return -1;
  *out = x;
  return 0;
}

static int set_string(char **dst, const char *v, char *err, size_t size, const char *key) {
  if (!*v) return fail(err, size, "%s= needs a value", key);
  char *c = strdup(v);
  if (!c) return fail(err, size, "out of memory");
  free(*dst);
  *dst = c;
  return 0;
}

static const char *const known_keys =
    "atomic, atomic_file, checkers, record, report, format, max_reports, exitcode, eager, "
    "crash_timeout, verbosity, schedule, seed, perturb_wait, perturb_budget, lock_blocks, "
    "stack_depth, suppressions, owned, skip_idle";

static int is_known(const char *key) {
  static const char *const keys[] = {"atomic", "atomic_file", "checkers", "record", "report",
                                     "format", "max_reports", "exitcode", "eager",
                                     "crash_timeout", "verbosity", "schedule", "seed",
                                     "perturb_wait", "perturb_budget", "lock_blocks",
                                     "stack_depth", "suppressions", "owned", "skip_idle"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (!strcmp(keys[i], key)) return 1;
  return 0;
}

static int apply(rt_options *o, const char *key, const char *v, char *err, size_t size) {
  long x;
  if (!strcmp(key, "atomic")) {
    if (add_atomic_list(o, v) != 0) return fail(err, size, "out of memory");
  } else if (!strcmp(key, "atomic_file")) {
    if (!*v) return fail(err, size, "atomic_file= needs a path");
    return read_atomic_file(o, v, err, size);
  } else if (!strcmp(key, "checkers")) {
    return set_checkers(o, v, err, size);
  } else if (!strcmp(key, "record")) {
    return set_string(&o->record, v, err, size, key);
  } else if (!strcmp(key, "report")) {
    if (!strcmp(v, "stderr")) {
      free(o->report);
      o->report = NULL;
      return 0;
    }
    return set_string(&o->report, v, err, size, key);
  } else if (!strcmp(key, "format")) {
    if (!strcmp(v, "text")) o->format = RT_FORMAT_TEXT;
    else if (!strcmp(v, "json")) o->format = RT_FORMAT_JSON;
    else if (!strcmp(v, "sarif")) o->format = RT_FORMAT_SARIF;
    else if (!strcmp(v, "html")) o->format = RT_FORMAT_HTML;
    else return fail(err, size, "format=%s: expected text, json, sarif or html", v);
  } else if (!strcmp(key, "max_reports")) {
    if (parse_long(v, 0, 1000000000L, &x) != 0)
      return fail(err, size, "max_reports=%s: expected a number >= 0", v);
    o->max_reports = x;
  } else if (!strcmp(key, "exitcode")) {
    if (parse_long(v, 0, 255, &x) != 0) return fail(err, size, "exitcode=%s: expected 0..255", v);
    o->exitcode = (int)x;
  } else if (!strcmp(key, "eager")) {
    /* Kept for compatibility: text reports are always written as they are found. */
    if (parse_long(v, 0, 1, &x) != 0) return fail(err, size, "eager=%s: expected 0 or 1", v);
    o->eager = (int)x;
  } else if (!strcmp(key, "crash_timeout")) {
    if (parse_long(v, 1, 3600, &x) != 0)
      return fail(err, size, "crash_timeout=%s: expected 1..3600 (seconds)", v);
    o->crash_timeout = (int)x;
  } else if (!strcmp(key, "lock_blocks")) {
    if (!strcmp(v, "yes")) o->lock_blocks = 1;
    else if (!strcmp(v, "no")) o->lock_blocks = 0;
    else return fail(err, size, "lock_blocks=%s: expected yes or no", v);
  } else if (!strcmp(key, "owned")) {
    if (!strcmp(v, "yes")) o->owned = 1;
    else if (!strcmp(v, "no")) o->owned = 0;
    else return fail(err, size, "owned=%s: expected yes or no", v);
  } else if (!strcmp(key, "skip_idle")) {
    if (!strcmp(v, "yes")) o->skip_idle = 1;
    else if (!strcmp(v, "no")) o->skip_idle = 0;
    else return fail(err, size, "skip_idle=%s: expected yes or no", v);
  } else if (!strcmp(key, "stack_depth")) {
    if (parse_long(v, 1, RT_FRAMES, &x) != 0)
      return fail(err, size, "stack_depth=%s: expected 1..%d (frames)", v, RT_FRAMES);
    o->stack_depth = (int)x;
  } else if (!strcmp(key, "suppressions")) {
    return set_string(&o->suppressions, v, err, size, key);
  } else if (!strcmp(key, "verbosity")) {
    if (parse_long(v, 0, 2, &x) != 0) return fail(err, size, "verbosity=%s: expected 0, 1 or 2", v);
    o->verbosity = (int)x;
  } else if (!strcmp(key, "schedule")) {
    if (!strcmp(v, "natural")) o->schedule = RT_SCHEDULE_NATURAL;
    else if (!strcmp(v, "perturb")) o->schedule = RT_SCHEDULE_PERTURB;
    else return fail(err, size, "schedule=%s: expected natural or perturb", v);
  } else if (!strcmp(key, "seed")) {
    char *end;
    errno = 0;
    unsigned long long s = strtoull(v, &end, 10);
    if (!isdigit((unsigned char)*v) || *end || errno)
      return fail(err, size, "seed=%s: expected a number 0..18446744073709551615", v);
    o->seed = (uint64_t)s;
    o->have_seed = 1;
  } else if (!strcmp(key, "perturb_wait")) {
    if (parse_long(v, 1, 10000, &x) != 0)
      return fail(err, size, "perturb_wait=%s: expected milliseconds, 1..10000", v);
    o->perturb_wait_ms = x;
  } else if (!strcmp(key, "perturb_budget")) {
    if (parse_long(v, 0, 3600000L, &x) != 0)
      return fail(err, size, "perturb_budget=%s: expected milliseconds, 0..3600000", v);
    o->perturb_budget_ms = x;
  } else {
    return fail(err, size, "unknown option '%s' (known: %s)", key, known_keys);
  }
  return 0;
}

static int is_sep(char c) { return c == ':' || isspace((unsigned char)c); }

int rt_options_parse(rt_options *o, const char *text, char *err, size_t size) {
  memset(o, 0, sizeof *o);
  o->max_reports = -1;
  o->exitcode = 66; /* as ThreadSanitizer: a run with a violation fails */
  o->crash_timeout = 10;
  o->verbosity = 1;
  o->perturb_wait_ms = 10;
  o->perturb_budget_ms = 250;
  o->stack_depth = 8;
  o->owned = 1;
  o->skip_idle = 1;
  if (set_checkers(o, "aerodrome", err, size) != 0) return -1;
  if (!text) return 0;

  char key[64], *val = NULL, *prev_checkers = NULL;
  const char *p = text;
  int rc = 0, last_was_checkers = 0;
  while (rc == 0) {
    while (*p && is_sep(*p)) p++;
    if (!*p) break;
    const char *k = p;
    while (*p && *p != '=' && !is_sep(*p)) p++;
    size_t klen = (size_t)(p - k);
    if (*p != '=' || !klen) {
      size_t n = strcspn(k, ": \t\n");
      rc = fail(err, size, "expected key=value, got '%.*s'", (int)(n > 60 ? 60 : n), k);
      break;
    }
    if (klen >= sizeof key) {
      rc = fail(err, size, "unknown option '%.*s'", 60, k);
      break;
    }
    memcpy(key, k, klen);
    key[klen] = '\0';
    p++; /* '=' */
    const char *v = p;
    size_t vlen;
    if (*p == '\'' || *p == '"') {
      char q = *p++;
      v = p;
      while (*p && *p != q) p++;
      if (!*p) {
        rc = fail(err, size, "%s=: unterminated quote", key);
        break;
      }
      vlen = (size_t)(p - v);
      p++;
    } else {
      /* "::" (C++ names: atomic=Account::deposit) does not separate options. */
      while (*p && (!is_sep(*p) || (p[0] == ':' && p[1] == ':'))) p += p[0] == ':' ? 2 : 1;
      vlen = (size_t)(p - v);
    }
    free(val);
    val = malloc(vlen + 1);
    if (!val) {
      rc = fail(err, size, "out of memory");
      break;
    }
    memcpy(val, v, vlen);
    val[vlen] = '\0';

    /* checkers=aerodrome:variant=basic without quotes: the ':' split the checker's arguments
     * off; an unknown key right after checkers= is taken as the rest of its value, and so is
     * lock_blocks= when its value is not just yes or no (checkers=commit-node:lock_blocks=yes,
     * block: a checker argument followed by more checkers). */
    if (last_was_checkers &&
        (!is_known(key) || (!strcmp(key, "lock_blocks") && strcmp(val, "yes") && strcmp(val, "no")))) {
      size_t plen = strlen(prev_checkers);
      char *joined = malloc(plen + 1 + klen + 1 + vlen + 1);
      if (!joined) {
        rc = fail(err, size, "out of memory");
        break;
      }
      snprintf(joined, plen + klen + vlen + 3, "%s:%s=%s", prev_checkers, key, val);
      free(prev_checkers);
      prev_checkers = joined;
      rc = set_checkers(o, joined, err, size);
      continue;
    }
    last_was_checkers = !strcmp(key, "checkers");
    if (last_was_checkers) {
      free(prev_checkers);
      prev_checkers = strdup(val);
      if (!prev_checkers) {
        rc = fail(err, size, "out of memory");
        break;
      }
    }
    rc = apply(o, key, val, err, size);
  }
  free(val);
  free(prev_checkers);
  return rc;
}

/* The checkers that would treat a lock block outside transactions as a unit. */
static int takes_lock_blocks(const char *spec) {
  static const char *const names[] = {"commit-node", "block"};
  size_t len = strcspn(spec, ":");
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i]) == len && !strncmp(spec, names[i], len)) return 1;
  return 0;
}

int rt_options_attach_spec(const rt_options *o, size_t i, char *buf, size_t size) {
  const char *spec = o->checkers[i];
  int n;
  if (!takes_lock_blocks(spec) || strstr(spec, "lock_blocks"))
    n = snprintf(buf, size, "%s", spec); /* the user's own lock_blocks= wins */
  else
    n = snprintf(buf, size, "%s%slock_blocks=%s", spec, strchr(spec, ':') ? "," : ":",
                 o->lock_blocks ? "yes" : "no");
  return n < 0 || (size_t)n >= size ? -1 : 0;
}

void rt_options_free(rt_options *o) {
  free_strs(o->atomic, o->n_atomic);
  for (size_t i = 0; i < o->n_ranges; i++) free(o->ranges[i].file);
  free(o->ranges);
  free_strs(o->checkers, o->n_checkers);
  free(o->record);
  free(o->report);
  free(o->suppressions);
  memset(o, 0, sizeof *o);
}
