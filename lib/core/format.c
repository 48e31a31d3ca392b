/* The one formatter of reports: every piece of a report (location, event, transaction, cycle)
 * is written here, at render time, from the structured data a checker handed over, so that all
 * checkers and all outputs speak one notation and a name registered after a report is used.
 *
 * Notation: a thread is its registered name, else "T" and its key; a location is "function at
 * file:line" (atom_set_location), else its registered name, else "loc N"; an event is "T2 wrote
 * balance at bank.c:31 (event 17)"; a transaction is "T1's transaction at withdraw at
 * bank.c:30 (event 12)"; a run of transactions "T4's 2931 transactions at withdraw at
 * bank.c:30 (T4@74951 … T4@104189)". The cycle story is shorter: functions instead of full
 * locations for transactions, "at line N" once the file is known, and no event indexes but
 * those of the transactions' begins. Every rendering is one line of at most
 * ATOM__MESSAGE_MAX bytes. */
#include "core/format.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/location.h"
#include "atomicity/session.h"
#include "core/error.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, 3 bytes of UTF-8 */

/* A bounded line: keeps the first `limit` (at most ATOM__MESSAGE_MAX) bytes, notes that more
 * came. Control characters (a newline in a registered name, a template) become spaces: a
 * message is one line whatever the names are. */
typedef struct sink {
  char text[ATOM__MESSAGE_MAX + 1];
  size_t len, limit;
  int cut;
} sink;

static void sink_init(sink *k) {
  k->len = 0;
  k->limit = ATOM__MESSAGE_MAX;
  k->cut = 0;
}

static void put(sink *k, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (k->len >= k->limit) {
      k->cut = 1;
      return;
    }
    unsigned char c = (unsigned char)s[i];
    k->text[k->len++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
  }
}

static void puts_(sink *k, const char *s) { put(k, s, strlen(s)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(sink *k, const char *fmt, ...) {
  char tmp[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) put(k, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A line that was cut ends in "…" within its limit, cut at a UTF-8 character boundary; the
 * limit goes back to the maximum (room kept for a suffix can now be used). */
static void seal(sink *k) {
  if (k->cut) {
    size_t at = k->limit > sizeof ELLIPSIS - 1 ? k->limit - (sizeof ELLIPSIS - 1) : 0;
    if (k->len < at) at = k->len;
    while (at > 0 && ((unsigned char)k->text[at] & 0xc0) == 0x80) at--;
    memcpy(k->text + at, ELLIPSIS, sizeof ELLIPSIS - 1);
    k->len = at + sizeof ELLIPSIS - 1;
    k->cut = 0;
  }
  k->limit = ATOM__MESSAGE_MAX;
}

/* Copy the line out snprintf-style: what fits into buf[size], NUL-terminated if size > 0.
 * @return the length of the whole (bounded) line. */
static int finish(sink *k, char *buf, size_t size) {
  seal(k);
  if (size) {
    size_t n = k->len < size - 1 ? k->len : size - 1;
    memcpy(buf, k->text, n);
    buf[n] = '\0';
  }
  return (int)k->len;
}

/* End k with the text of `suffix` even if k is long: k is first cut (with "…") to leave room
 * for it. Used for what a long story must not lose: its conclusion, the omitted count. */
static void put_suffix(sink *k, sink *suffix) {
  seal(suffix);
  if (k->len + suffix->len > ATOM__MESSAGE_MAX) {
    k->limit = ATOM__MESSAGE_MAX - suffix->len;
    k->cut = 1;
  }
  seal(k);
  put(k, suffix->text, suffix->len);
}

/* ---- pieces ---- */

static void put_key(sink *k, const atom_session *s, int space, uint64_t key) {
  const char *name = atom_get_name(s, space, key);
  if (name) puts_(k, name);
  else if (space == ATOM_SPACE_THREAD) putf(k, "T%" PRIu64, key);
  else putf(k, "0x%" PRIx64, key);
}

/* How much of a location to write. */
enum {
  LOC_FULL,   /* "withdraw at bank.c:30" */
  LOC_SHORT,  /* "withdraw" when the function is known, else as LOC_FULL */
  LOC_ACTION  /* in a story: "line 31" when its file is the story's current file, else
                 "bank.c:31" (which becomes the current file); the function is left out */
};

/* The file named last in a story (LOC_ACTION), NULL at first. */
typedef struct story {
  const char *file;
} story;

static void put_location(sink *k, const atom_session *s, uint64_t loc, int how, story *st) {
  const char *function = NULL, *file = NULL;
  uint32_t line = 0;
  if (atom_get_location(s, loc, &function, &file, &line)) {
    if (how == LOC_SHORT && function) {
      puts_(k, function);
      return;
    }
    if (how == LOC_ACTION && (file || line)) {
      if (file && !(line && st && st->file && strcmp(st->file, file) == 0)) {
        puts_(k, file);
        if (st) st->file = file;
        if (line) putf(k, ":%" PRIu32, line);
      } else
        putf(k, "line %" PRIu32, line);
      return;
    }
    if (function) puts_(k, function);
    if (file) {
      if (function) puts_(k, " at ");
      puts_(k, file);
      if (st) st->file = file;
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

/* "wrote balance (release) at bank.c:31": the verb unless same_verb, the target, the
 * acquire/release mark of a READ/WRITE, the location as `how` says. */
static void put_action(sink *k, const atom_report *r, size_t i, int how, story *st,
                       int same_verb) {
  atom_event ev;
  if (atom_report_event(r, i, &ev, NULL) != 0) return;
  const atom_session *s = atom_report_session(r);
  int space = atom_kind_space(ev.kind);
  if (!same_verb) puts_(k, verb(ev.kind));
  if (space) {
    if (!same_verb) puts_(k, " ");
    put_key(k, s, space, ev.target);
  }
  if (ev.kind == ATOM_READ && (ev.flags & ATOM_FLAG_ACQUIRE)) puts_(k, " (acquire)");
  if (ev.kind == ATOM_WRITE && (ev.flags & ATOM_FLAG_RELEASE)) puts_(k, " (release)");
  puts_(k, " at ");
  put_location(k, s, ev.loc, how, st);
}

/* "T2 wrote balance at bank.c:31 (event 17)" */
static void put_event(sink *k, const atom_report *r, size_t i) {
  atom_event ev;
  uint64_t index = 0;
  if (atom_report_event(r, i, &ev, &index) != 0) return;
  put_key(k, atom_report_session(r), ATOM_SPACE_THREAD, ev.thread);
  puts_(k, " ");
  put_action(k, r, i, LOC_FULL, NULL, 0);
  putf(k, " (event %" PRIu64 ")", index);
}

/* Transaction entry i as a noun phrase: "T1's transaction at withdraw at bank.c:30 (event 12)",
 * "T4's 2931 transactions at withdraw at bank.c:30 (T4@74951 … T4@104189)", "T2's access
 * outside any transaction at bank.c:41 (event 17)". `how` is LOC_FULL or LOC_SHORT; a file
 * it names becomes the current file of story st (may be NULL). */
static void put_txn(sink *k, const atom_report *r, size_t i, int how, story *st) {
  uint64_t thread = 0, index = 0, loc = 0, count = 1, last = 0;
  uint32_t flags = 0;
  if (atom_report_txn(r, i, &thread, &index, &loc) != 0) return;
  atom_report_txn_run(r, i, &flags, &count, &last);
  const atom_session *s = atom_report_session(r);
  put_key(k, s, ATOM_SPACE_THREAD, thread);
  if (flags & ATOM_TXN_UNARY) {
    puts_(k, "'s access outside any transaction at ");
    put_location(k, s, loc, how, st);
    putf(k, " (event %" PRIu64 ")", index);
    return;
  }
  if (count > 1) putf(k, "'s %" PRIu64 " transactions at ", count);
  else puts_(k, "'s transaction at ");
  put_location(k, s, loc, how, st);
  if (count <= 1) {
    putf(k, " (event %" PRIu64 ")", index);
    return;
  }
  puts_(k, " (");
  put_key(k, s, ATOM_SPACE_THREAD, thread);
  putf(k, "@%" PRIu64 " " ELLIPSIS " ", index);
  put_key(k, s, ATOM_SPACE_THREAD, thread);
  putf(k, "@%" PRIu64 ")", last);
}

/* Transaction entry i as a label (atom_report_describe_txn): a run is "T4: 2931 transactions
 * at withdraw at bank.c:30, T4@74951 … T4@104189", anything else as put_txn. */
static void put_txn_label(sink *k, const atom_report *r, size_t i) {
  uint64_t thread = 0, index = 0, loc = 0, count = 1, last = 0;
  uint32_t flags = 0;
  if (atom_report_txn(r, i, &thread, &index, &loc) != 0) return;
  atom_report_txn_run(r, i, &flags, &count, &last);
  if (count <= 1 || (flags & ATOM_TXN_UNARY)) {
    put_txn(k, r, i, LOC_FULL, NULL);
    return;
  }
  const atom_session *s = atom_report_session(r);
  put_key(k, s, ATOM_SPACE_THREAD, thread);
  putf(k, ": %" PRIu64 " transactions at ", count);
  put_location(k, s, loc, LOC_FULL, NULL);
  puts_(k, ", ");
  put_key(k, s, ATOM_SPACE_THREAD, thread);
  putf(k, "@%" PRIu64 " " ELLIPSIS " ", index);
  put_key(k, s, ATOM_SPACE_THREAD, thread);
  putf(k, "@%" PRIu64, last);
}

/* " (… and 36 more runs of transactions)" when runs were left out of the report. */
static void put_omitted(sink *k, const atom_report *r) {
  uint64_t omitted = atom_report_txns_omitted(r);
  if (omitted == 1) puts_(k, " (" ELLIPSIS " and 1 more run of transactions)");
  else if (omitted) putf(k, " (" ELLIPSIS " and %" PRIu64 " more runs of transactions)", omitted);
}

/* ---- templates ---- */

/* Parse "{xN}" at p (p[0] == '{'): the letter and N. @return characters consumed, 0 if bad. */
static size_t placeholder(const char *p, char *letter, size_t *n) {
  if (p[1] == '\0' || !strchr("thev", p[1]) || p[2] < '0' || p[2] > '9') return 0;
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

/* Variable i: its name now, else its name at the time of the report, else its key. */
static void put_var(sink *k, const atom_report *r, size_t i) {
  const char *name = atom_report_var_name(r, i);
  const char *now = atom_get_name(atom_report_session(r), ATOM_SPACE_VAR, atom_report_var(r, i));
  if (now) puts_(k, now);
  else if (name) puts_(k, name);
  else put_key(k, atom_report_session(r), ATOM_SPACE_VAR, atom_report_var(r, i));
}

static void render_template(sink *k, const atom_report *r, const char *tpl) {
  for (const char *p = tpl; *p && !k->cut; p++) {
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
      if (n < atom_report_txn_count(r)) put_txn(k, r, n, LOC_FULL, NULL);
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

/* ---- the cycle story ---- */

/* The witness events of the cycle in story order: from and to of each edge, a position given
 * twice in a row only once. @return how many (at most max). */
static size_t story_events(const atom_report *r, size_t *seq, size_t max) {
  size_t n = 0;
  for (size_t i = 0, edges = atom_report_edge_count(r); i < edges; i++) {
    size_t ends[2];
    atom_report_edge(r, i, &ends[0], &ends[1], NULL);
    for (int j = 0; j < 2; j++)
      if (n < max && (n == 0 || seq[n - 1] != ends[j])) seq[n++] = ends[j];
  }
  return n;
}

/* The cycle in plain words, from its edges: the events grouped by transaction, each
 * transaction introduced once ("T1's transaction at withdraw (event 12) read x at bank.c:31,
 * then T2's transaction at deposit (event 15) wrote x at line 41 and y at line 42, then T1
 * read y at line 33: no serial order of the two transactions gives this"). */
static void render_cycle(sink *k, const atom_report *r) {
  const atom_session *s = atom_report_session(r);
  size_t seq[2 * 128 + 2];
  size_t n = story_events(r, seq, sizeof seq / sizeof seq[0]);
  unsigned char introduced[ATOM_REPORT_MAX_TXNS] = {0};
  story st = {NULL};
  for (size_t i = 0; i < n && !k->cut;) {
    size_t t = atom_report_event_txn(r, seq[i]);
    uint32_t flags = 0;
    if (t != SIZE_MAX) atom_report_txn_run(r, t, &flags, NULL, NULL);
    /* the group: this event and the next ones of the same transaction (an event of no listed
     * transaction stands alone) */
    size_t end = i + 1;
    while (t != SIZE_MAX && end < n && atom_report_event_txn(r, seq[end]) == t) end++;
    if (i) puts_(k, ", then ");
    atom_event ev;
    atom_report_event(r, seq[i], &ev, NULL);
    if (t == SIZE_MAX || t >= ATOM_REPORT_MAX_TXNS || introduced[t] || (flags & ATOM_TXN_UNARY))
      put_key(k, s, ATOM_SPACE_THREAD, ev.thread);
    else {
      put_txn(k, r, t, LOC_SHORT, &st);
      introduced[t] = 1;
    }
    uint32_t prev_kind = 0, prev_flags = 0;
    for (size_t j = i; j < end; j++) {
      atom_event cur;
      atom_report_event(r, seq[j], &cur, NULL);
      int same = j > i && cur.kind == prev_kind && cur.flags == prev_flags &&
                 atom_kind_space(cur.kind);
      puts_(k, j == i ? " " : " and ");
      put_action(k, r, seq[j], LOC_ACTION, &st, same);
      prev_kind = cur.kind;
      prev_flags = cur.flags;
    }
    if (flags & ATOM_TXN_UNARY) puts_(k, " outside any transaction");
    i = end;
  }
  uint64_t total = 0;
  for (size_t i = 0, m = atom_report_txn_count(r); i < m; i++) {
    uint64_t count = 1;
    atom_report_txn_run(r, i, NULL, &count, NULL);
    total += count;
  }
  sink end;
  sink_init(&end);
  put_omitted(&end, r);
  if (total == 2 && !atom_report_txns_omitted(r))
    puts_(&end, ": no serial order of the two transactions gives this");
  else if (total > 2 && !atom_report_txns_omitted(r))
    putf(&end, ": no serial order of these %" PRIu64 " transactions gives this", total);
  else
    puts_(&end, ": no serial order of these transactions gives this");
  put_suffix(k, &end);
}

static void render_default(sink *k, const atom_report *r) {
  if (atom_report_edge_count(r) > 0) {
    render_cycle(k, r);
    return;
  }
  puts_(k, atom_report_kind(r));
  puts_(k, ":");
  for (size_t i = 0, n = atom_report_txn_count(r); i < n && !k->cut; i++) {
    puts_(k, i ? ", " : " ");
    put_txn(k, r, i, LOC_FULL, NULL);
  }
  sink end;
  sink_init(&end);
  put_omitted(&end, r);
  put_suffix(k, &end);
}

int atom__report_render(char *buf, size_t size, const atom_report *r) {
  sink k;
  sink_init(&k);
  const char *tpl = atom__report_template(r);
  if (tpl) render_template(&k, r, tpl);
  else render_default(&k, r);
  return finish(&k, buf, size);
}

/* ---- public ---- */

ATOM_API int atom_report_describe(char *buf, size_t size, const atom_report *r) {
  if (!r || (!buf && size)) return atom__error(ATOM_EINVAL, "atom_report_describe: NULL argument");
  const char *literal = atom__report_literal(r);
  if (literal) {
    /* a version-1 message is shown as it was given */
    size_t len = strlen(literal);
    if (size) {
      size_t n = len < size - 1 ? len : size - 1;
      memcpy(buf, literal, n);
      buf[n] = '\0';
    }
    return len > INT32_MAX ? INT32_MAX : (int)len;
  }
  return atom__report_render(buf, size, r);
}

ATOM_API int atom_report_describe_event(char *buf, size_t size, const atom_report *r, size_t i) {
  if (!r || (!buf && size) || i >= atom_report_event_count(r))
    return atom__error(ATOM_EINVAL, "atom_report_describe_event: no event %zu", i);
  sink k;
  sink_init(&k);
  put_event(&k, r, i);
  return finish(&k, buf, size);
}

ATOM_API int atom_report_describe_txn(char *buf, size_t size, const atom_report *r, size_t i) {
  if (!r || (!buf && size) || i >= atom_report_txn_count(r))
    return atom__error(ATOM_EINVAL, "atom_report_describe_txn: no transaction %zu", i);
  sink k;
  sink_init(&k);
  put_txn_label(&k, r, i);
  return finish(&k, buf, size);
}

ATOM_API int atom_describe_location(char *buf, size_t size, const struct atom_session *s,
                                    uint64_t loc) {
  if (!s || (!buf && size)) return atom__error(ATOM_EINVAL, "atom_describe_location: NULL argument");
  sink k;
  sink_init(&k);
  put_location(&k, s, loc, LOC_FULL, NULL);
  return finish(&k, buf, size);
}
