/* The one formatter of reports: every piece of a report (location, event, transaction, cycle)
 * is written here, at render time, from the structured data a checker handed over, so that all
 * checkers and all outputs speak one notation and a name registered after a report is used.
 *
 * Notation: a thread is its registered name, else "T" and its key; a location is "function at
 * file:line" (atom_set_location), else its registered name, else "loc N"; an event is "T2 wrote
 * balance at bank.c:31"; a transaction is "T1's transaction at withdraw (event 12)". */
#include "core/format.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/location.h"
#include "atomicity/session.h"
#include "core/error.h"
#include "core/kinds.h"

/* snprintf-style sink: writes what fits, counts everything. */
typedef struct sink {
  char *buf;
  size_t size, len;
} sink;

static void put(sink *k, const char *s, size_t n) {
  if (k->len < k->size) {
    size_t room = k->size - k->len - 1;
    memcpy(k->buf + k->len, s, n < room ? n : room);
  }
  k->len += n;
  if (k->size) k->buf[k->len < k->size ? k->len : k->size - 1] = '\0';
}

static void puts_(sink *k, const char *s) { put(k, s, strlen(s)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(sink *k, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) put(k, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static int finish(sink *k) {
  if (k->size && k->len == 0) k->buf[0] = '\0';
  return k->len > INT32_MAX ? INT32_MAX : (int)k->len;
}

/* ---- pieces ---- */

static void put_key(sink *k, const atom_session *s, int space, uint64_t key) {
  const char *name = atom_get_name(s, space, key);
  if (name) puts_(k, name);
  else if (space == ATOM_SPACE_THREAD) putf(k, "T%" PRIu64, key);
  else putf(k, "0x%" PRIx64, key);
}

static void put_location(sink *k, const atom_session *s, uint64_t loc) {
  const char *function = NULL, *file = NULL;
  uint32_t line = 0;
  if (atom_get_location(s, loc, &function, &file, &line)) {
    if (function) puts_(k, function);
    if (file) {
      if (function) puts_(k, " at ");
      puts_(k, file);
      if (line) putf(k, ":%" PRIu32, line);
    } else if (line)
      putf(k, "%sline %" PRIu32, function ? " at " : "", line);
    return;
  }
  const char *name = atom_get_name(s, ATOM_SPACE_LOC, loc);
  if (name) puts_(k, name);
  else putf(k, "loc %" PRIu64, loc);
}

/* The past-tense verb of an event kind ("read", "wrote"). */
static const char *verb(uint32_t kind) {
  switch (kind) {
  case ATOM_READ: return "read";
  case ATOM_WRITE: return "wrote";
  case ATOM_ACQUIRE: return "acquired";
  case ATOM_RELEASE: return "released";
  case ATOM_FORK: return "forked";
  case ATOM_JOIN: return "joined";
  case ATOM_BEGIN: return "began a transaction";
  case ATOM_END: return "ended a transaction";
  case ATOM_FENCE: return "fenced";
  case ATOM_COMMIT: return "committed";
  default: return "did something";
  }
}

/* "wrote balance at bank.c:31" (no thread). */
static void put_action(sink *k, const atom_report *r, size_t i) {
  atom_event ev;
  uint64_t index = 0;
  if (atom_report_event(r, i, &ev, &index) != 0) return;
  const atom_session *s = atom_report_session(r);
  puts_(k, verb(ev.kind));
  int space = atom__kind_space(ev.kind);
  if (space) {
    puts_(k, " ");
    put_key(k, s, space, ev.target);
  }
  if (ev.kind == ATOM_READ && (ev.flags & ATOM_FLAG_ACQUIRE)) puts_(k, " (acquire)");
  if (ev.kind == ATOM_WRITE && (ev.flags & ATOM_FLAG_RELEASE)) puts_(k, " (release)");
  puts_(k, " at ");
  put_location(k, s, ev.loc);
  putf(k, " (event %" PRIu64 ")", index);
}

static void put_event(sink *k, const atom_report *r, size_t i) {
  atom_event ev;
  if (atom_report_event(r, i, &ev, NULL) != 0) return;
  put_key(k, atom_report_session(r), ATOM_SPACE_THREAD, ev.thread);
  puts_(k, " ");
  put_action(k, r, i);
}

static void put_txn(sink *k, const atom_report *r, size_t i) {
  uint64_t thread = 0, index = 0, loc = 0, count = 1, last = 0;
  uint32_t flags = 0;
  if (atom_report_txn(r, i, &thread, &index, &loc) != 0) return;
  atom_report_txn_run(r, i, &flags, &count, &last);
  const atom_session *s = atom_report_session(r);
  put_key(k, s, ATOM_SPACE_THREAD, thread);
  if (count > 1) {
    putf(k, ": %" PRIu64 " transactions at ", count);
    put_location(k, s, loc);
    putf(k, ", events %" PRIu64 " \xe2\x80\xa6 %" PRIu64, index, last);
    return;
  }
  if (flags & ATOM_TXN_UNARY) {
    putf(k, "'s access outside any transaction (event %" PRIu64 ")", index);
    return;
  }
  puts_(k, "'s transaction at ");
  put_location(k, s, loc);
  putf(k, " (event %" PRIu64 ")", index);
}

/* ---- templates ---- */

/* Parse "{xN}" at p (p[0] == '{'): the letter and N. @return characters consumed, 0 if bad. */
static size_t placeholder(const char *p, char *letter, size_t *n) {
  if (!strchr("thev", p[1]) || p[1] == '\0' || p[2] < '0' || p[2] > '9') return 0;
  size_t v = 0, i = 2;
  for (; p[i] >= '0' && p[i] <= '9'; i++) {
    if (v > 100000) return 0;
    v = v * 10 + (size_t)(p[i] - '0');
  }
  if (p[i] != '}') return 0;
  *letter = p[1];
  *n = v;
  return i + 1;
}

int atom__template_valid(const char *tpl) {
  for (const char *p = tpl; *p; p++) {
    if (p[0] == '{' && p[1] == '{') p++;
    else if (p[0] == '}' && p[1] == '}') p++;
    else if (*p == '{') {
      char letter;
      size_t n, used = placeholder(p, &letter, &n);
      if (!used) return 0;
      p += used - 1;
    } else if (*p == '}')
      return 0;
  }
  return 1;
}

static void put_var(sink *k, const atom_report *r, size_t i) {
  const char *name = atom_report_var_name(r, i);
  const char *now = atom_get_name(atom_report_session(r), ATOM_SPACE_VAR, atom_report_var(r, i));
  if (now) puts_(k, now);
  else if (name) puts_(k, name);
  else put_key(k, atom_report_session(r), ATOM_SPACE_VAR, atom_report_var(r, i));
}

static void render_template(sink *k, const atom_report *r, const char *tpl) {
  for (const char *p = tpl; *p; p++) {
    if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
      put(k, p, 1);
      p++;
      continue;
    }
    char letter;
    size_t n, used;
    if (*p != '{' || !(used = placeholder(p, &letter, &n))) {
      put(k, p, 1);
      continue;
    }
    p += used - 1;
    switch (letter) {
    case 't':
      if (n < atom_report_txn_count(r)) put_txn(k, r, n);
      else puts_(k, "(a transaction not kept)");
      break;
    case 'h': {
      uint64_t thread = 0;
      if (atom_report_txn(r, n, &thread, NULL, NULL) == 0)
        put_key(k, atom_report_session(r), ATOM_SPACE_THREAD, thread);
      else puts_(k, "(a thread)");
      break;
    }
    case 'e':
      if (n < atom_report_event_count(r)) put_event(k, r, n);
      else puts_(k, "(an event not kept)");
      break;
    default:
      if (n < atom_report_var_count(r)) put_var(k, r, n);
      else puts_(k, "(a variable)");
    }
  }
}

/* ---- defaults ---- */

/* The cycle in plain words: "T1's transaction at loc 0 (event 0) wrote x at loc 2 (event 2),
 * then T2's transaction ... read x ... and wrote y ..., then T1 read y ...: no serial order of
 * the two transactions gives this". */
static void render_cycle(sink *k, const atom_report *r) {
  size_t n = atom_report_edge_count(r), prev_txn = SIZE_MAX, prev_to = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    size_t from, to;
    atom_report_edge(r, i, &from, &to, NULL);
    size_t ft = atom_report_event_txn(r, from), tt = atom_report_event_txn(r, to);
    if (i == 0) {
      if (ft != SIZE_MAX) put_txn(k, r, ft);
      else put_event(k, r, from);
      puts_(k, " ");
      put_action(k, r, from);
    } else if (from == prev_to) {
      /* the edge leaves from the event the previous one reached: already told */
    } else if (ft == prev_txn) {
      puts_(k, " and ");
      put_action(k, r, from);
    } else {
      puts_(k, ", then ");
      put_event(k, r, from);
    }
    puts_(k, ", then ");
    if (i + 1 == n || tt == SIZE_MAX) put_event(k, r, to);
    else {
      put_txn(k, r, tt);
      puts_(k, " ");
      put_action(k, r, to);
    }
    prev_txn = tt;
    prev_to = to;
  }
  size_t txns = atom_report_txn_count(r);
  if (txns == 2) puts_(k, ": no serial order of the two transactions gives this");
  else putf(k, ": no serial order of these %zu transactions gives this", txns);
}

static void render_default(sink *k, const atom_report *r) {
  if (atom_report_edge_count(r) > 0) {
    render_cycle(k, r);
    return;
  }
  puts_(k, atom_report_kind(r));
  puts_(k, ":");
  for (size_t i = 0, n = atom_report_txn_count(r); i < n; i++) {
    puts_(k, i ? ", " : " ");
    put_txn(k, r, i);
  }
}

int atom__report_render(char *buf, size_t size, const atom_report *r) {
  sink k = {buf, size, 0};
  const char *tpl = atom__report_template(r);
  if (tpl) render_template(&k, r, tpl);
  else render_default(&k, r);
  return finish(&k);
}

/* ---- public ---- */

ATOM_API int atom_report_describe(char *buf, size_t size, const atom_report *r) {
  if (!r || (!buf && size)) return atom__error(ATOM_EINVAL, "atom_report_describe: NULL argument");
  return atom__report_render(buf, size, r);
}

ATOM_API int atom_report_describe_event(char *buf, size_t size, const atom_report *r, size_t i) {
  if (!r || (!buf && size) || i >= atom_report_event_count(r))
    return atom__error(ATOM_EINVAL, "atom_report_describe_event: no event %zu", i);
  sink k = {buf, size, 0};
  put_event(&k, r, i);
  return finish(&k);
}

ATOM_API int atom_report_describe_txn(char *buf, size_t size, const atom_report *r, size_t i) {
  if (!r || (!buf && size) || i >= atom_report_txn_count(r))
    return atom__error(ATOM_EINVAL, "atom_report_describe_txn: no transaction %zu", i);
  sink k = {buf, size, 0};
  put_txn(&k, r, i);
  return finish(&k);
}

ATOM_API int atom_describe_location(char *buf, size_t size, const struct atom_session *s,
                                    uint64_t loc) {
  if (!s || (!buf && size)) return atom__error(ATOM_EINVAL, "atom_describe_location: NULL argument");
  sink k = {buf, size, 0};
  put_location(&k, s, loc);
  return finish(&k);
}
