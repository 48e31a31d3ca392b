/* Suppression rules in the shape of ThreadSanitizer's suppression files (atomicity/output.h):
 * one `TYPE:PATTERN` per line. Parsed once into globs whose only operator is `*`; a pattern
 * that is not anchored with ^ / $ gets a `*` at that end, so it matches as a substring.
 *
 * Ownership: the rules are malloc'ed here (there is no session, hence no session allocator)
 * and freed by atom_suppressions_free(), which is the only way to free them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "atomicity/location.h"
#include "atomicity/output.h"
#include "atomicity/session.h"
#include "core/error.h"

enum { RULE_ATOMIC = 1, RULE_FN, RULE_FILE, RULE_CHECKER, RULE_KIND };

static const struct {
  const char *name;
  int type;
} types[] = {{"atomic", RULE_ATOMIC},
             {"fn", RULE_FN},
             {"file", RULE_FILE},
             {"checker", RULE_CHECKER},
             {"kind", RULE_KIND}};

typedef struct rule {
  int type;
  char *glob; /* NUL-terminated; '*' matches any run of characters, the rest literally */
} rule;

struct atom_suppressions {
  rule *rules;
  size_t n;
};

/* Does text match glob (anchored at both ends)? Iterative with one backtrack point: the
 * last '*' seen can always absorb one more character, so O(len(glob) * len(text)). */
static int glob_match(const char *glob, const char *text) {
  const char *star = NULL, *resume = NULL;
  while (*text) {
    if (*glob == '*') {
      star = glob++;
      resume = text;
    } else if (*glob == *text) {
      glob++;
      text++;
    } else if (star) {
      glob = star + 1;
      text = ++resume;
    } else
      return 0;
  }
  while (*glob == '*') glob++;
  return *glob == '\0';
}

ATOM_API void atom_suppressions_free(atom_suppressions *sp) {
  if (!sp) return;
  for (size_t i = 0; i < sp->n; i++) free(sp->rules[i].glob);
  free(sp->rules);
  free(sp);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* The glob of a pattern [p, p + n) for a rule type: checker and kind name one thing and match
 * it whole (so kind:pattern-1 does not silence pattern-11); the others match a substring
 * unless anchored. NULL if out of memory. */
static char *make_glob(int type, const char *p, size_t n) {
  int whole = type == RULE_CHECKER || type == RULE_KIND;
  size_t head = n && p[0] == '^', tail = n > head && p[n - 1] == '$';
  p += head;
  n -= head + tail;
  char *g = malloc(n + 3), *w = g;
  if (!g) return NULL;
  if (!head && !whole) *w++ = '*';
  memcpy(w, p, n);
  w += n;
  if (!tail && !whole) *w++ = '*';
  *w = '\0';
  return g;
}

/* Parse line number `no` [p, p + n) (no newline) into sp. @return 0, or an ATOM_E* code
 * with the error message set. */
static int parse_line(atom_suppressions *sp, size_t *cap, const char *p, size_t n, size_t no) {
  while (n && is_space(*p)) p++, n--;
  while (n && is_space(p[n - 1])) n--;
  if (n == 0 || p[0] == '#') return 0;
  if (memchr(p, '\0', n))
    return atom__error(ATOM_EINVAL, "line %zu: a NUL character in a suppression", no);
  const char *colon = memchr(p, ':', n);
  int shown = n > 60 ? 60 : (int)n;
  if (!colon)
    return atom__error(ATOM_EINVAL, "line %zu: expected TYPE:PATTERN, got \"%.*s\"", no,
                       shown, p);
  size_t tn = (size_t)(colon - p);
  while (tn && is_space(p[tn - 1])) tn--;
  int type = 0;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strlen(types[i].name) == tn && memcmp(types[i].name, p, tn) == 0) type = types[i].type;
  if (!type)
    return atom__error(ATOM_EINVAL,
                       "line %zu: unknown suppression type \"%.*s\" (expected atomic, fn, "
                       "file, checker or kind)", no, tn > 40 ? 40 : (int)tn, p);
  const char *pat = colon + 1;
  size_t pn = n - (size_t)(pat - p);
  while (pn && is_space(*pat)) pat++, pn--;
  size_t head = pn && pat[0] == '^', tail = pn > head && pat[pn - 1] == '$';
  if (pn == head + tail) /* nothing, or only anchors */
    return atom__error(ATOM_EINVAL, "line %zu: empty pattern after \"%.*s:\"", no, (int)tn, p);
  if (sp->n == *cap) {
    size_t ncap = *cap ? 2 * *cap : 8;
    rule *grown = realloc(sp->rules, ncap * sizeof *grown);
    if (!grown) return atom__error(ATOM_ENOMEM, "line %zu: out of memory", no);
    sp->rules = grown;
    *cap = ncap;
  }
  char *g = make_glob(type, pat, pn);
  if (!g) return atom__error(ATOM_ENOMEM, "line %zu: out of memory", no);
  sp->rules[sp->n++] = (rule){type, g};
  return 0;
}

ATOM_API int atom_suppressions_parse(atom_suppressions **out, const char *text, size_t len) {
  if (out) *out = NULL;
  if (!out || (!text && len))
    return atom__error(ATOM_EINVAL, "atom_suppressions_parse: NULL argument");
  atom_suppressions *sp = calloc(1, sizeof *sp);
  if (!sp) return atom__error(ATOM_ENOMEM, "atom_suppressions_parse: out of memory");
  size_t cap = 0, no = 1;
  for (size_t at = 0; at < len; no++) {
    const char *nl = memchr(text + at, '\n', len - at);
    size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
    int err = parse_line(sp, &cap, text + at, n, no);
    if (err) {
      atom_suppressions_free(sp);
      return err;
    }
    at += n + 1;
  }
  *out = sp;
  return 0;
}

/* ---- matching ---- */

/* The function of a location: as described, else the location's registered name. */
static const char *function_of(const atom_session *s, uint64_t loc) {
  const char *function = NULL;
  atom_get_location(s, loc, &function, NULL, NULL);
  return function ? function : atom_get_name(s, ATOM_SPACE_LOC, loc);
}

static const char *file_of(const atom_session *s, uint64_t loc) {
  const char *file = NULL;
  atom_get_location(s, loc, NULL, &file, NULL);
  return file;
}

static int text_matches(const rule *ru, const char *text) {
  return text && glob_match(ru->glob, text);
}

/* Does rule ru (fn or file) match loc or any frame of its stack? */
static int location_matches(const rule *ru, const atom_session *s, uint64_t loc) {
  const char *(*get)(const atom_session *, uint64_t) = ru->type == RULE_FN ? function_of : file_of;
  if (text_matches(ru, get(s, loc))) return 1;
  const uint64_t *frames;
  size_t n = atom_get_stack(s, loc, &frames);
  for (size_t i = 0; i < n; i++)
    if (text_matches(ru, get(s, frames[i]))) return 1;
  return 0;
}

/* atomic: the function of a (non-unary) transaction's begin, or the headline frame of its
 * stack (a runtime may describe the begin's pc as the call site and give the stack). */
static int atomic_matches(const rule *ru, const atom_report *r) {
  const atom_session *s = atom_report_session(r);
  for (size_t i = 0, n = atom_report_txn_count(r); i < n; i++) {
    uint64_t loc = 0;
    uint32_t flags = 0;
    atom_report_txn(r, i, NULL, NULL, &loc);
    atom_report_txn_run(r, i, &flags, NULL, NULL);
    if (flags & ATOM_TXN_UNARY) continue;
    if (text_matches(ru, function_of(s, loc))) return 1;
    const uint64_t *frames;
    if (atom_get_stack(s, loc, &frames) && text_matches(ru, function_of(s, frames[0]))) return 1;
  }
  return 0;
}

/* fn / file: every location of the report (transactions' begins, witness events) with all the
 * frames of their stacks. */
static int any_location_matches(const rule *ru, const atom_report *r) {
  const atom_session *s = atom_report_session(r);
  for (size_t i = 0, n = atom_report_txn_count(r); i < n; i++) {
    uint64_t loc = 0;
    atom_report_txn(r, i, NULL, NULL, &loc);
    if (location_matches(ru, s, loc)) return 1;
  }
  for (size_t i = 0, n = atom_report_event_count(r); i < n; i++) {
    atom_event ev;
    atom_report_event(r, i, &ev, NULL);
    if (location_matches(ru, s, ev.loc)) return 1;
  }
  return 0;
}

ATOM_API int atom_suppressions_match(const atom_suppressions *sp, const atom_report *r) {
  if (!sp || !r) return 0;
  for (size_t i = 0; i < sp->n; i++) {
    const rule *ru = &sp->rules[i];
    int hit = 0;
    switch (ru->type) {
    case RULE_CHECKER: hit = text_matches(ru, atom_report_checker(r)); break;
    case RULE_KIND: hit = text_matches(ru, atom_report_kind(r)); break;
    case RULE_ATOMIC: hit = atomic_matches(ru, r); break;
    default: hit = any_location_matches(ru, r);
    }
    if (hit) return 1;
  }
  return 0;
}
