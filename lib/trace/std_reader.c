/* STD trace reader (doc/trace-format.md).
 *
 * The input is consumed in regions that always end with '\n' (a memory-mapped file or buffer
 * up to its last line end, then a private copy of an unterminated last line with '\n' added;
 * or, for pipes and standard input, a read buffer up to its last line end). Every scanning
 * loop of the parser stops at '\n', so the hot path needs no bounds checks.
 *
 * Names are interned per space into keys 1, 2, 3, ...: a name shorter than 8 bytes is its
 * own 64-bit key in a support/u64map, a longer one is found through a support/idindex keyed
 * by a word-at-a-time hash and checked against its string (reader_state.h); the strings live in an arena that never moves, so the pointers that
 * atom_trace_reader_name() returns stay valid until the reader is freed.
 *
 * This file is the hot path: byte classes, interning and the line parser. Opening, the input
 * regions, errors and the accessors are in reader_input.c; the state both use in
 * reader_state.h. */
#include "trace/std_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "atomicity/error.h"
#include "core/error.h"
#include "support/byteorder.h"
#include "support/mem.h"
#include "trace/atb_format.h"
#include "trace/reader_state.h"

/* ---- byte classes ---------------------------------------------------------------------- */

enum { C_NAME = 0, C_BAR, C_LPAR, C_RPAR, C_BLANK, C_LF, C_CR, C_BAD };

/* clang-format off */
#define B_ C_BAD
/* Name bytes are everything but '|', '(', ')', white space and control bytes. */
static const unsigned char cls[256] = {
    /* 0x00 */ B_, B_, B_, B_, B_, B_, B_, B_, B_, C_BLANK, C_LF, B_, B_, C_CR, B_, B_,
    /* 0x10 */ B_, B_, B_, B_, B_, B_, B_, B_, B_, B_, B_, B_, B_, B_, B_, B_,
    /* 0x20 */ C_BLANK, 0, 0, 0, 0, 0, 0, 0, C_LPAR, C_RPAR, 0, 0, 0, 0, 0, 0,
    /* 0x30 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x40 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x60 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x70 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, C_BAR, 0, 0, B_,
    /* 0x80-0xff: bytes of UTF-8 sequences are name bytes */
};
#undef B_
/* clang-format on */

#define IS_BLANK(c) ((c) == ' ' || (c) == '\t')

const char *atom__trace_name_problem(const char *s, size_t n) {
  if (n > ATOM__TRACE_MAX_NAME) return "name too long";
  return atom__trace_name_chars_problem(s, n);
}

const char *atom__trace_text_problem(const char *s, size_t n) {
  if (n == 0) return "empty name";
  if (n > ATOM__TRACE_MAX_NAME) return "name too long";
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
      return "control byte in a name";
  if (IS_BLANK(s[0]) || IS_BLANK(s[n - 1])) return "name starts or ends with a blank";
  return NULL;
}

const char *atom__trace_name_chars_problem(const char *s, size_t n) {
  if (n == 0) return "empty name";
  if (s[0] == '#') return "name starts with '#'";
  for (size_t i = 0; i < n; i++) {
    switch (cls[(unsigned char)s[i]]) {
      case C_NAME: break;
      case C_BAR: return "name contains '|'";
      case C_LPAR:
      case C_RPAR: return "name contains a parenthesis";
      case C_BLANK:
      case C_LF:
      case C_CR: return "name contains white space";
      default: return "name contains a control byte";
    }
  }
  return NULL;
}

/* ---- errors ---------------------------------------------------------------------------- */

/* A short printable rendering of input bytes for messages. */
static const char *show(char *out, size_t cap, const unsigned char *s, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (o + 8 >= cap) {
      memcpy(out + o, "...", 4);
      return out;
    }
    unsigned c = s[i];
    if (c >= 0x20 && c < 0x7f)
      out[o++] = (char)c;
    else
      o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
  }
  out[o] = '\0';
  return out;
}

/* What stands at p, for "expected X, found Y" messages. */
static const char *found(char *out, size_t cap, const unsigned char *p) {
  unsigned c = *p;
  if (c == '\n' || (c == '\r' && p[1] == '\n')) return "end of line";
  if (c >= 0x20 && c < 0x7f)
    snprintf(out, cap, "'%c'", (char)c);
  else
    snprintf(out, cap, "byte 0x%02x", c);
  return out;
}

/* ---- interning ------------------------------------------------------------------------- */


/* The first min(n, 8) bytes of s as a little-endian word, zero-padded. Reads only s[0..n):
 * two overlapping loads put every byte at its own position (overlapping bytes agree). */
static inline uint64_t name_head(const unsigned char *s, size_t n) {
  if (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    return ATOM__LE64(w);
  }
  if (n >= 4) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    return (uint64_t)ATOM__LE32(a) | ((uint64_t)ATOM__LE32(b) << ((n - 4) * 8));
  }
  if (n >= 2) {
    uint16_t a, b;
    memcpy(&a, s, 2);
    memcpy(&b, s + n - 2, 2);
    return (uint64_t)ATOM__LE16(a) | ((uint64_t)ATOM__LE16(b) << ((n - 2) * 8));
  }
  return n ? s[0] : 0;
}

/* Multiply-xorshift over the head, then over further 8-byte words of long names. */
static inline uint64_t name_hash(uint64_t head, const unsigned char *s, size_t n) {
  uint64_t h = head ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL);
  for (size_t i = 8; i < n; i += 8) {
    h = (h ^ (h >> 29)) * 0xff51afd7ed558ccdULL;
    h ^= name_head(s + i, n - i < 8 ? n - i : 8);
  }
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 32;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 29;
  return h;
}

/* The cache slot of a name (reader_state.h). An empty slot (all zero) matches no name: names
 * are never empty. */
static inline size_t cache_slot(uint64_t head, size_t len) {
  /* A name shorter than 8 bytes is its head (reader_state.h): its length adds nothing, so it
   * is left out (len & ~7 is 0) and the fast path hashes the head alone (short_slot()). */
  return (size_t)(((head + (len & ~(size_t)7)) * 0x9e3779b97f4a7c15ULL) >> (64 - NAME_CACHE_BITS));
}

/* cache_slot() of a name shorter than 8 bytes. */
static inline size_t short_slot(uint64_t head) {
  return (size_t)((head * 0x9e3779b97f4a7c15ULL) >> (64 - NAME_CACHE_BITS));
}

static char *arena_copy(atom_trace_reader *r, const unsigned char *s, size_t n) {
  arena_block *b = r->arena;
  if (!b || b->size - r->arena_used < n + 1) {
    size_t size = n + 1 > ARENA_BLOCK / 4 ? n + 1 : ARENA_BLOCK;
    arena_block *nb = atom__mem_alloc(&r->mem, sizeof *nb + size);
    if (!nb) return NULL;
    nb->size = size;
    if (b && size != ARENA_BLOCK) {
      /* A big name gets a block of its own behind the head, whose free space stays in use. */
      nb->next = b->next;
      b->next = nb;
      memcpy(nb->data, s, n);
      nb->data[n] = '\0';
      return nb->data;
    }
    nb->next = b;
    r->arena = nb;
    r->arena_used = 0;
    b = nb;
  }
  char *d = b->data + r->arena_used;
  memcpy(d, s, n);
  d[n] = '\0';
  r->arena_used += n + 1;
  return d;
}

/* The key of the name ent[at] of t (reader_state.h): final, or provisional in a worker reader. */
static inline uint32_t key_of(const atom_trace_reader *r, const name_space *t, size_t at) {
  return at < t->n_final ? t->gkey[at] : (r->key_tag | (uint32_t)(at + 1));
}

/* What the name cache holds of ent[at]: its key; for a name of more than 8 bytes, whose tail
 * a hit compares with its string, its index + 1 with the reader's tag (its key in a reader of
 * its own), which key_of() turns into the key. */
static inline uint32_t cached_key(const atom_trace_reader *r, const name_space *t, size_t at,
                                  size_t len) {
  return len > 8 ? r->key_tag | (uint32_t)(at + 1) : key_of(r, t, at);
}

/* The key of the name s[0..len) (head: its name_head), interning it if it is new. */
static int intern_slow(atom_trace_reader *r, name_space *t, const unsigned char *s, size_t len,
                       uint64_t head, uint64_t *key) {
  uint32_t at;
  atom__idindex_probe p = {0, 0};
  int is_short = !(head >> 56); /* shorter than 8 bytes: the head is the name (reader_state.h) */
  if (is_short) {
    if (atom__u64map_get(&t->short_names, head, &at)) goto found;
  } else {
    atom__idindex_start(&t->long_names, name_hash(head, s, len), &p);
    while ((at = atom__idindex_next(&t->long_names, &p)) != ATOM__IDINDEX_END)
      if (t->ent[at].len == len && !memcmp(t->ent[at].s, s, len)) goto found;
  }
  /* A new name. */
  if (t->n >= (r->key_tag ? (size_t)r->key_tag - 1 : MAX_NAMES))
    return atom__trace_fail(r, ATOM_ELIMIT, "more than %lu distinct names in one space",
                (unsigned long)MAX_NAMES);
  if (ATOM__GROW(&r->mem, t->ent, t->cap, t->n + 1))
    return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
  char *copy = arena_copy(r, s, len);
  at = (uint32_t)t->n;
  /* A copy that the index could not take stays in the arena, freed with the reader. */
  if (!copy || (is_short ? atom__u64map_put(&t->short_names, &r->mem, head, at)
                         : atom__idindex_add(&t->long_names, &r->mem, &p, at)))
    return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
  t->ent[at] = (name_ent){copy, len};
  t->n++;
found:
  *key = key_of(r, t, at);
  t->cache[cache_slot(head, len)] = (struct name_cache){head, (uint32_t)len, cached_key(r, t, at, len)};
  return 0;
}

static inline int intern(atom_trace_reader *r, name_space *t, const unsigned char *s, size_t len,
                         uint64_t *key) {
  uint64_t head = name_head(s, len);
  const struct name_cache *c = &t->cache[cache_slot(head, len)];
  if (LIKELY(c->head == head && c->len == len)) {
    if (len <= 8) {
      *key = c->key;
      return 0;
    }
    size_t at = (c->key & ~r->key_tag) - 1; /* cached_key() */
    if (!memcmp(t->ent[at].s + 8, s + 8, len - 8)) {
      *key = key_of(r, t, at);
      return 0;
    }
  }
  return intern_slow(r, t, s, len, head, key);
}

/* intern() for a name shorter than 8 bytes whose head the caller already has. */
static inline int intern_short(atom_trace_reader *r, name_space *t, const unsigned char *s,
                               size_t len, uint64_t head, uint64_t *key) {
  const struct name_cache *c = &t->cache[cache_slot(head, len)];
  if (LIKELY(c->head == head && c->len == len)) {
    *key = c->key;
    return 0;
  }
  return intern_slow(r, t, s, len, head, key);
}

/* ---- the parser ------------------------------------------------------------------------ */

/* Is the line [start, lf) longer than the limit (its CR before LF not counted)? */
COLD static int too_long(atom_trace_reader *r, const unsigned char *start,
                         const unsigned char *lf) {
  size_t n = (size_t)(lf - start);
  if (n && lf[-1] == '\r') n--;
  if (n <= ATOM__TRACE_MAX_LINE) return 0;
  atom__trace_fail(r, ATOM_EPARSE, "line too long (more than %zu bytes)", ATOM__TRACE_MAX_LINE);
  return 1;
}

/* clang-format off */
static const char *const op_names[] = {
    "",
#define OP_NAME_(name, value, text, op) [value] = op,
    ATOM_KIND_MAP(OP_NAME_)
#undef OP_NAME_
};
/* clang-format on */

static inline uint32_t op_kind(const unsigned char *o, size_t n) {
  switch (n) {
    case 1:
      if (o[0] == 'r') return ATOM_READ;
      if (o[0] == 'w') return ATOM_WRITE;
      return 0;
    case 3:
      if (!memcmp(o, "acq", 3)) return ATOM_ACQUIRE;
      if (!memcmp(o, "rel", 3)) return ATOM_RELEASE;
      if (!memcmp(o, "end", 3)) return ATOM_END;
      return 0;
    case 4:
      if (!memcmp(o, "fork", 4)) return ATOM_FORK;
      if (!memcmp(o, "join", 4)) return ATOM_JOIN;
      return 0;
    case 5:
      if (!memcmp(o, "begin", 5)) return ATOM_BEGIN;
      if (!memcmp(o, "fence", 5)) return ATOM_FENCE;
      return 0;
    case 6:
      if (!memcmp(o, "commit", 6)) return ATOM_COMMIT;
      return 0;
    default: return 0;
  }
}

static const unsigned char *skip_blanks(const unsigned char *p) {
  while (IS_BLANK(*p)) p++;
  return p;
}

/* The end of a name-like token (for messages). */
static const unsigned char *token_end(const unsigned char *p) {
  while (cls[*p] == C_NAME) p++;
  return p;
}

/* Diagnose what follows a name (at p, blanks already skipped) when it is not the expected
 * delimiter. */
COLD static int after_name_error(atom_trace_reader *r, const char *what, const unsigned char *name,
                                 size_t len, const unsigned char *p, int skipped) {
  char a[64], b[24];
  unsigned c = *p;
  if (cls[c] == C_BAD)
    return atom__trace_fail(r, ATOM_EPARSE, "invalid byte 0x%02x in or after %s '%s'", c, what,
                show(a, sizeof a, name, len));
  if (cls[c] == C_NAME && skipped)
    return atom__trace_fail(r, ATOM_EPARSE, "white space inside %s '%s'", what,
                            show(a, sizeof a, name, len));
  return atom__trace_fail(r, ATOM_EPARSE, "unexpected %s after %s '%s'", found(b, sizeof b, p),
                          what, show(a, sizeof a, name, len));
}

COLD static int thread_error(atom_trace_reader *r, const unsigned char *t0, size_t tlen,
                             const unsigned char *p, int skipped) {
  char b[24];
  if (tlen == 0) {
    if (*p == '|') return atom__trace_fail(r, ATOM_EPARSE, "empty thread name");
    if (cls[*p] == C_BAD) return atom__trace_fail(r, ATOM_EPARSE, "invalid byte 0x%02x", *p);
    return atom__trace_fail(r, ATOM_EPARSE, "expected a thread name, found %s",
                            found(b, sizeof b, p));
  }
  if (cls[*p] == C_LF || cls[*p] == C_CR)
    return atom__trace_fail(r, ATOM_EPARSE, "missing fields: expected <thread>|<op>|<loc>");
  return after_name_error(r, "thread name", t0, tlen, p, skipped);
}

COLD static int op_error(atom_trace_reader *r, const unsigned char *o0, const unsigned char *p) {
  char a[64], b[24];
  const unsigned char *e = token_end(p);
  if (e == o0) {
    if (*e == '|' || cls[*e] == C_LF || cls[*e] == C_CR)
      return atom__trace_fail(r, ATOM_EPARSE, "missing operation");
    if (cls[*e] == C_BAD)
      return atom__trace_fail(r, ATOM_EPARSE, "invalid byte 0x%02x in operation", *e);
    return atom__trace_fail(r, ATOM_EPARSE, "expected an operation, found %s",
                            found(b, sizeof b, e));
  }
  return atom__trace_fail(r, ATOM_EPARSE, "unknown operation '%s'",
                          show(a, sizeof a, o0, (size_t)(e - o0)));
}

/* The operation as written: "r", or "r.acq" / "w.rel" for a flagged access. */
static const char *op_text(uint32_t kind, uint32_t flags) {
  if (flags) return kind == ATOM_READ ? "r.acq" : "w.rel";
  return op_names[kind];
}

COLD static int arg_error(atom_trace_reader *r, uint32_t kind, uint32_t flags,
                          const unsigned char *n0, size_t nlen, const unsigned char *p,
                          int skipped) {
  char a[64], b[24];
  const char *op = op_text(kind, flags);
  unsigned c = *p;
  if (nlen == 0) {
    if (c == ')') return atom__trace_fail(r, ATOM_EPARSE, "empty name in '%s()'", op);
    if (cls[c] == C_LF || cls[c] == C_CR)
      return atom__trace_fail(r, ATOM_EPARSE, "missing name and ')' after '%s('", op);
    if (cls[c] == C_BAD)
      return atom__trace_fail(r, ATOM_EPARSE, "invalid byte 0x%02x in '%s(...)'", c, op);
    return atom__trace_fail(r, ATOM_EPARSE, "expected a name after '%s(', found %s", op,
                            found(b, sizeof b, p));
  }
  show(a, sizeof a, n0, nlen);
  if (c == ')') /* the only other reason to be here */
    return atom__trace_fail(r, ATOM_EPARSE, "name '%s' starts with '#'", a);
  if (cls[c] == C_LF || cls[c] == C_CR || c == '|')
    return atom__trace_fail(r, ATOM_EPARSE, "missing ')' after '%s(%s'", op, a);
  if (c == '(') return atom__trace_fail(r, ATOM_EPARSE, "unbalanced '(' in '%s(%s('", op, a);
  return after_name_error(r, "name", n0, nlen, p, skipped);
}

/* At p, where '(' should open the argument of `kind`, or where '(' stands after an operation
 * that takes none. */
COLD static int open_error(atom_trace_reader *r, uint32_t kind, uint32_t flags,
                           const unsigned char *p) {
  const char *op = op_text(kind, flags);
  if (*p == '(') return atom__trace_fail(r, ATOM_EPARSE, "operation '%s' takes no argument", op);
  if (*p == ')') return atom__trace_fail(r, ATOM_EPARSE, "unbalanced ')' after '%s'", op);
  return atom__trace_fail(r, ATOM_EPARSE, "operation '%s' needs an argument: %s(NAME)", op, op);
}

COLD static int after_op_error(atom_trace_reader *r, const unsigned char *p) {
  char b[24];
  if (cls[*p] == C_LF || cls[*p] == C_CR)
    return atom__trace_fail(r, ATOM_EPARSE, "missing fields: no location after the operation");
  if (*p == ')') return atom__trace_fail(r, ATOM_EPARSE, "unbalanced ')' after the operation");
  if (*p == '(') return atom__trace_fail(r, ATOM_EPARSE, "unbalanced '(' after the operation");
  return atom__trace_fail(r, ATOM_EPARSE, "unexpected %s after the operation",
                          found(b, sizeof b, p));
}

COLD static int range_error(atom_trace_reader *r) {
  return atom__trace_fail(r, ATOM_EPARSE, "location out of range (more than %" PRIu64 ")",
                          UINT64_MAX);
}

COLD static int loc_error(atom_trace_reader *r, const unsigned char *d0, const unsigned char *p) {
  char a[64];
  if (p == d0 && (cls[*p] == C_LF || cls[*p] == C_CR || *p == '|'))
    return atom__trace_fail(r, ATOM_EPARSE, "missing location");
  if (p != d0 && *skip_blanks(p) == '|') return atom__trace_fail(r, ATOM_EPARSE, "too many fields");
  const unsigned char *e = p;
  while (*e != '\n' && *e != '|' && e - d0 < 40) e++;
  return atom__trace_fail(r, ATOM_EPARSE, "location is not a non-negative decimal integer: '%s'",
              show(a, sizeof a, d0, (size_t)(e - d0)));
}

/* The fields of a well-formed event line. */
typedef struct line_fields {
  const unsigned char *t0, *n0; /* thread name; target name or NULL */
  size_t tlen, nlen;
  uint32_t kind;
  uint32_t flags; /* ATOM_FLAG_ACQUIRE for r.acq, ATOM_FLAG_RELEASE for w.rel, else 0 */
  uint64_t loc;
} line_fields;

/* The name table (index) of each kind's target: lock, thread (FORK, JOIN) or variable. */
static const unsigned char target_space[ATOM_KIND_MAX_ + 1] = {
    [ATOM_READ] = 1, [ATOM_WRITE] = 1, [ATOM_COMMIT] = 1, [ATOM_ACQUIRE] = 2, [ATOM_RELEASE] = 2,
};

/* Parse the event line starting at p (not a comment or blank line; `start` is the line's
 * first byte, before any blanks): fill *f and return the start of the next line, or NULL
 * after setting the error. */
static HOT_INLINE const unsigned char *parse_line(atom_trace_reader *r, const unsigned char *start,
                                                  const unsigned char *p, line_fields *f) {
  /* <thread> */
  const unsigned char *t0 = p;
  while (cls[*p] == C_NAME) p++;
  size_t tlen = (size_t)(p - t0);
  int skipped = 0;
  if (UNLIKELY(IS_BLANK(*p))) {
    p = skip_blanks(p);
    skipped = 1;
  }
  if (UNLIKELY(*p != '|' || tlen == 0)) return thread_error(r, t0, tlen, p, skipped), NULL;
  p++;

  /* <op> */
  if (UNLIKELY(IS_BLANK(*p))) p = skip_blanks(p);
  const unsigned char *o0 = p;
  uint32_t kind;
  if (LIKELY((*p == 'r' || *p == 'w') && p[1] == '(')) {
    /* Most lines are reads and writes: no scan of the operation word (p[0] is not the line's
     * '\n', so p[1] is in the line). */
    kind = *p == 'r' ? ATOM_READ : ATOM_WRITE;
    p++;
  } else {
    while ((unsigned)(*p - 'a') < 26u) p++;
    kind = op_kind(o0, (size_t)(p - o0));
  }
  uint32_t flags = 0;
  /* r.acq / w.rel: a flagged access (doc/trace-format.md). The byte comparisons stop at the
   * first mismatch, so they never read past the line's '\n'. */
  if (UNLIKELY(*p == '.') && (kind == ATOM_READ || kind == ATOM_WRITE)) {
    if (kind == ATOM_READ && p[1] == 'a' && p[2] == 'c' && p[3] == 'q') {
      flags = ATOM_FLAG_ACQUIRE;
      p += 4;
    } else if (kind == ATOM_WRITE && p[1] == 'r' && p[2] == 'e' && p[3] == 'l') {
      flags = ATOM_FLAG_RELEASE;
      p += 4;
    }
  }
  if (UNLIKELY(kind == 0 || cls[*p] == C_NAME)) return op_error(r, o0, p), NULL;
  if (UNLIKELY(IS_BLANK(*p))) p = skip_blanks(p);

  const unsigned char *n0 = NULL;
  size_t nlen = 0;
  if (kind != ATOM_BEGIN && kind != ATOM_END && kind != ATOM_FENCE) {
    if (UNLIKELY(*p != '(')) return open_error(r, kind, flags, p), NULL;
    p++;
    if (UNLIKELY(IS_BLANK(*p))) p = skip_blanks(p);
    n0 = p;
    while (cls[*p] == C_NAME) p++;
    nlen = (size_t)(p - n0);
    skipped = 0;
    if (UNLIKELY(IS_BLANK(*p))) {
      p = skip_blanks(p);
      skipped = 1;
    }
    if (UNLIKELY(*p != ')' || nlen == 0 || *n0 == '#'))
      return arg_error(r, kind, flags, n0, nlen, p, skipped), NULL;
    p++;
    if (UNLIKELY(IS_BLANK(*p))) p = skip_blanks(p);
  } else if (UNLIKELY(*p == '(')) {
    return open_error(r, kind, flags, p), NULL;
  }
  if (UNLIKELY(*p != '|')) return after_op_error(r, p), NULL;
  p++;

  /* <loc> */
  if (UNLIKELY(IS_BLANK(*p))) p = skip_blanks(p);
  const unsigned char *d0 = p;
  uint64_t loc = 0;
  for (unsigned d; (d = (unsigned)*p - '0') < 10u; p++) {
    if (UNLIKELY(loc >= UINT64_MAX / 10) && (loc > UINT64_MAX / 10 || d > UINT64_MAX % 10))
      return range_error(r), NULL;
    loc = loc * 10 + d;
  }
  const unsigned char *e = p;
  if (UNLIKELY(IS_BLANK(*p))) p = skip_blanks(p);
  if (UNLIKELY(*p != '\n')) {
    if (*p == '\r' && p[1] == '\n' && e != d0)
      p++;
    else
      return loc_error(r, d0, e), NULL;
  }
  if (UNLIKELY(e == d0)) return loc_error(r, d0, e), NULL;
  if (UNLIKELY((size_t)(p - start) > ATOM__TRACE_MAX_LINE) && too_long(r, start, p)) return NULL;
  f->t0 = t0;
  f->tlen = tlen;
  f->kind = kind;
  f->flags = flags;
  f->n0 = n0;
  f->nlen = nlen;
  f->loc = loc;
  return p + 1;
}

/* ---- the fast path for common lines ----------------------------------------------------- */

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Bit 7 of each byte of the little-endian word w that is below 0x2A or above 0x7B: every byte
 * between is a name byte (digits, letters and "*+,-./:;<=>?@[\\]^_`{"), and every delimiter of
 * a line ('|', '(', ')', white space, control bytes) is outside. Names with other bytes ('#',
 * '!', '}', UTF-8, ...) are valid but rare: the general parser reads them. The tests are the
 * usual "byte below n" and "byte from n up", whose borrow or carry can only flag bytes above a
 * byte that really matches, so the lowest set bit is exact (bits above it are not used). */
static inline uint64_t odd_bytes(uint64_t w) {
  return (((w - ONES * 0x2A) & ~w) | ((w + ONES * (0x80 - 0x7C)) | w)) & HIGHS;
}

/* The name at p when it is 1 to 7 plain bytes followed by `delim`: its length and its head
 * (the name zero-padded, as name_head); 0 for anything else (the general parser's case).
 * p[0..8) must be readable. */
static inline size_t short_name(const unsigned char *p, unsigned delim, uint64_t *head) {
  uint64_t w = atom__load_le64(p);
  uint64_t m = odd_bytes(w);
  if (!m) return 0; /* 8 plain bytes or more */
  size_t len = (size_t)__builtin_ctzll(m) >> 3;
  if (p[len] != delim) return 0;
  *head = w & ((1ULL << (len * 8)) - 1); /* len < 8: the shift is defined */
  return len;
}

/* Little-endian words of bytes, to compare with loaded words. */
#define W2(a, b) ((uint64_t)(a) | (uint64_t)(b) << 8)
#define W4(a, b, c, d) (W2(a, b) | W2(c, d) << 16)

/* The value of the decimal digits in the top bytes of v (each byte 0..9, the most significant
 * digit in the lowest of them, zero bytes below them): pairs, then quads, then the eight. */
static inline uint64_t digits_value(uint64_t v) {
  v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFULL;
  v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFULL;
  return (v * 10000 + (v >> 32)) & 0xFFFFFFFFULL;
}

/* The operations of the common lines, once for both tables below: the first two bytes, the
 * operation and the byte after it as a little-endian word with the mask of its bytes, the kind,
 * the operation's length, whether '(' follows, and the target's name table. */
#define STD_OPS(X)                                                                             \
  X('r', '(', W2('r', '('), 0xFFFF, ATOM_READ, 1, 1, 1)                                        \
  X('w', '(', W2('w', '('), 0xFFFF, ATOM_WRITE, 1, 1, 1)                                       \
  X('a', 'c', W4('a', 'c', 'q', '('), 0xFFFFFFFF, ATOM_ACQUIRE, 3, 1, 2)                       \
  X('r', 'e', W4('r', 'e', 'l', '('), 0xFFFFFFFF, ATOM_RELEASE, 3, 1, 2)                       \
  X('b', 'e', W4('b', 'e', 'g', 'i') | W2('n', '|') << 32, 0xFFFFFFFFFFFF, ATOM_BEGIN, 5, 0, 0) \
  X('e', 'n', W4('e', 'n', 'd', '|'), 0xFFFFFFFF, ATOM_END, 3, 0, 0)                           \
  X('f', 'o', W4('f', 'o', 'r', 'k') | (uint64_t)'(' << 32, 0xFFFFFFFFFF, ATOM_FORK, 4, 1, 0)   \
  X('f', 'e', W4('f', 'e', 'n', 'c') | W2('e', '|') << 32, 0xFFFFFFFFFFFF, ATOM_FENCE, 5, 0, 0) \
  X('j', 'o', W4('j', 'o', 'i', 'n') | (uint64_t)'(' << 32, 0xFFFFFFFFFF, ATOM_JOIN, 4, 1, 0)   \
  X('c', 'o', W4('c', 'o', 'm', 'm') | W4('i', 't', '(', 0) << 32, 0xFFFFFFFFFFFFFF,            \
    ATOM_COMMIT, 6, 1, 1)

/* The operations as the word-at-a-time parser sees them: the operation and the byte after it
 * ('(' or '|'), at index (byte 0 + byte 1) mod 32, where no two of them meet (two at one
 * index would be a -Woverride-init warning, an error in the build); the other slots are empty
 * (kind 0). */
struct op_pattern {
  uint64_t word, mask;
  uint32_t kind;
  uint8_t len;   /* of the operation's name */
  uint8_t arg;   /* 1: '(' follows (an operation with a target), 0: '|' */
  uint8_t space; /* the target's name table (index into names[]) */
};
#define OP_(a, b, w, m, k, n, arg, sp) [((a) + (b)) & 31] = {w, m, k, n, arg, sp},
static const struct op_pattern op_patterns[32] = {STD_OPS(OP_)};
#undef OP_

/* The common line "T|op(NAME)|LOC" or "T|op|LOC" with both names of 1 to 7 plain bytes, no
 * blanks, no flag and a location of at most 18 digits, parsed a word at a time: 1 and *ev
 * filled (the line consumed), 0 when the line has any other shape (nothing consumed, the
 * general parser reads it and gives its exact message if it is wrong), or an interning error.
 * p is the line's first byte; at least FAST_NEED bytes of the region follow it, which covers
 * every word load (the thread name at p, the operation at most 8 bytes later, the target name
 * at most 7 + 1 + 4 + 1 bytes later, the location at most 7 + 2 + 1 bytes after that). */
#define FAST_NEED 40
static HOT_INLINE int fast_line(atom_trace_reader *r, const unsigned char *p, atom_event *ev) {
  uint64_t th, nh = 0;
  size_t tlen = short_name(p, '|', &th);
  if (UNLIKELY(!tlen)) return 0;
  const unsigned char *t0 = p;
  p += tlen + 1;
  /* The operation and the byte after it, compared as one word with the pattern its first two
   * bytes select: no branch on which operation it is (a coin toss for a branch predictor). */
  uint64_t ow = atom__load_le64(p);
  const struct op_pattern *op = &op_patterns[(ow + (ow >> 8)) & 31];
  if (UNLIKELY((ow & op->mask) != op->word || !op->kind)) return 0; /* flags, blanks, ... */
  uint32_t kind = op->kind;
  p += op->len;
  const unsigned char *n0 = NULL;
  size_t nlen = 0;
  if (*p == '(') { /* the cases above leave '(' only after an operation that takes it */
    n0 = p + 1;
    nlen = short_name(n0, ')', &nh); /* '#' is not a plain byte: no name here starts with it */
    if (UNLIKELY(!nlen)) return 0;
    p = n0 + nlen + 1;
    if (UNLIKELY(*p != '|')) return 0;
  }
  p++;
  /* The location: up to 7 digits from one word, else digit by digit. */
  uint64_t w = atom__load_le64(p);
  uint64_t nd = ((w + ONES * 0x46) | (w - ONES * 0x30) | w) & HIGHS; /* non-digit bytes */
  uint64_t loc;
  if (LIKELY(nd)) {
    size_t n = (size_t)__builtin_ctzll(nd) >> 3;
    if (UNLIKELY(n == 0)) return 0;
    p += n;
    loc = digits_value((w - ONES * 0x30) << (64 - 8 * n));
  } else {
    const unsigned char *d0 = p;
    loc = 0;
    for (unsigned d; (d = (unsigned)*p - '0') < 10u; p++) loc = loc * 10 + d;
    /* 18 digits cannot overflow; longer locations take the general path's range check. */
    if (UNLIKELY(p - d0 > 18)) return 0;
  }
  if (UNLIKELY(*p != '\n')) {
    if (*p != '\r' || p[1] != '\n') return 0;
    p++;
  }
  uint64_t thread, target = 0;
  int rc = intern_short(r, &r->names[0], t0, tlen, th, &thread);
  if (LIKELY(rc == 0) && n0)
    rc = intern_short(r, &r->names[target_space[kind]], n0, nlen, nh, &target);
  if (UNLIKELY(rc)) return rc;
  ev->kind = kind;
  ev->flags = 0;
  ev->thread = thread;
  ev->target = target;
  ev->loc = loc;
  r->pos = p + 1;
  r->line = r->lineno;
  return 1;
}

/* ---- runs of common lines, split with SSE2 bitmasks ------------------------------------- */

#if defined(__SSE2__)
#define SIMD_LINES 1

/* The position of the lowest set bit of x (not 0) as a 64-bit value. __builtin_ctzll() gives an
 * int, which the compiler sign-extends after every scan; `tzcnt` writes all 64 bits (a CPU
 * without it runs the same bytes as `bsf`, equal for x not 0). */
static inline size_t low_bit(uint64_t x) {
#if defined(__x86_64__) && defined(__GNUC__)
  uint64_t r;
  __asm__("tzcnt %1, %0" : "=r"(r) : "r"(x) : "cc");
  return (size_t)r;
#else
  return (size_t)__builtin_ctzll(x);
#endif
}

static inline uint16_t load_le16(const unsigned char *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return ATOM__LE16(v);
}

/* The operations for simd_run(), as op_patterns but at the slot OP_SLOT() of their first two
 * bytes (a multiply and a shift; no two of them meet, see op_patterns) and matched as
 * (word | nmask) == want, where nmask has the bits the pattern ignores, so an empty slot (all
 * 0) matches only a word of eight 0 bytes, whose slot is empty; its len and arg of 0 then put
 * the location at the operation's second byte, 0 too, which is no digit, so the line is never
 * taken. `off` is the byte offset of the target's
 * name table from names[0]. */
struct op_run {
  uint64_t want, nmask;
  uint32_t kind, off;
  uint8_t len, arg;
};
#define OP_SLOT(two) ((uint32_t)((uint32_t)(two) * 0x2265B1F5u) >> 27)
#define OPR_(a, b, w, m, k, n, arg, sp)                                                          \
  [OP_SLOT(W2(a, b))] = {(w) | ~(uint64_t)(m), ~(uint64_t)(m), k, (sp) * sizeof(name_space), n, \
                         arg},
static const struct op_run op_runs[32] = {STD_OPS(OPR_)};
#undef OPR_

/* The low n bytes of a word: a name of n bytes from a word loaded at its start. */
static const uint64_t low_bytes[8] = {
    0,          0xFF,           0xFFFF,           0xFFFFFF,
    0xFFFFFFFF, 0xFFFFFFFFFFULL, 0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL,
};

/* The low n + 1 bytes of a word for n < 8, all of it from 8 on: the head of a line whose
 * operation ends at byte n (struct line_head). n is the second set bit of simd_run()'s mask,
 * whose bits 16 up are set: at most 17. */
static const uint64_t head_bytes[18] = {
    0xFF,  0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFULL, 0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL,
    ~0ULL, ~0ULL,  ~0ULL,    ~0ULL,      ~0ULL,           ~0ULL,             ~0ULL,
    ~0ULL, ~0ULL,  ~0ULL,    ~0ULL,
};

/* A head's kind, flags and thread are the event's first 16 bytes, copied as one. */
_Static_assert(offsetof(atom_event, thread) == 8 && sizeof(uint32_t) * 2 == 8,
               "atom_event starts with kind, flags, thread");

static inline size_t head_slot(uint64_t word) {
  return (size_t)((word * 0x9e3779b97f4a7c15ULL) >> (64 - HEAD_CACHE_BITS));
}

/* intern_slow() out of the loop below: the key, or 0 after an error (r->err set). */
COLD static uint64_t intern_miss(atom_trace_reader *r, name_space *t, const unsigned char *s,
                                 size_t len, uint64_t head) {
  uint64_t key;
  return intern_slow(r, t, s, len, head, &key) ? 0 : key;
}

/* A line that simd_run() takes and whose names or head are not all in its caches: the names
 * that missed interned, the thread first, and a head of at most 8 bytes cached (tc: the
 * target's name cache, or NULL). The loop only knows that something missed: the line is known
 * to be common, so its fields are found again from their delimiters and probed again here,
 * out of the loop, which keeps fewer values. 0, or r's error. */
COLD static int line_miss(atom_trace_reader *r, const unsigned char *p, atom_event *ev,
                          struct name_cache *tc) {
  size_t tlen = 1; /* the thread name is 1 to 7 bytes (a loop: shorter than a call) */
  while (p[tlen] != '|') tlen++;
  const unsigned char *bar = p + tlen;
  uint64_t th = name_head(p, tlen);
  /* Keys are taken again from the caches: interning the thread may have filled the slot the
   * target probed (a fork or join of a thread by the same name, or the same slot). A thread
   * whose key came from the line's head may have left the name cache: interning it again finds
   * the same key. */
  const struct name_cache *c = &r->names[0].cache[short_slot(th)];
  if (c->head == th)
    ev->thread = c->key;
  else if (!(ev->thread = intern_miss(r, &r->names[0], p, tlen, th)))
    return r->err;
  const unsigned char *d = bar + 1; /* the operation, up to '(' or '|' */
  while (*d != '(' && *d != '|') d++;
  if (tc) {
    const unsigned char *n0 = d + 1;
    size_t nlen = 1;
    while (n0[nlen] != ')') nlen++;
    uint64_t nh = name_head(n0, nlen);
    name_space *t = (name_space *)(void *)((char *)tc - offsetof(name_space, cache));
    c = &tc[short_slot(nh)];
    if (c->head == nh)
      ev->target = c->key;
    else if (!(ev->target = intern_miss(r, t, n0, nlen, nh)))
      return r->err;
  }
  if (d - p < 8) { /* the head is at most 8 bytes */
    uint64_t hw = name_head(p, (size_t)(d - p) + 1);
    struct line_head *h = &r->heads[head_slot(hw)];
    if (h->word != hw) {
      h->word = hw;
      memcpy(&h->ev, ev, sizeof h->ev);
      h->target = tc;
    }
  }
  return 0;
}

/* Parse the common lines from r->pos on, as many as follow one another (at most `cap`) into
 * ev[] and their line numbers into line64[] (NULL: not written; a chunk keeps its lines as runs,
 * atom__chunk_events, and these are consecutive): the lines fast_line()
 * takes, "T|op(NAME)|LOC" and "T|op|LOC" with names of 1 to 7 plain bytes, no blanks, no flag
 * and a location of 1 to 7 digits, but found from one 16-byte load per line. Two masks of it:
 * `odd`, the bytes that are not plain name bytes (the delimiters '|', '(', ')' and the line end
 * among them), whose lowest set bits end the thread and target names, and `nondig`, the bytes
 * that are not digits, whose first set bit after the last '|' ends the location (the line end
 * when the line ends inside the load; else the location is read from a word). Stops at the
 * first line of any other shape, or when fewer than FAST_NEED bytes of the region are left (the
 * loads below read at most 33 bytes from the line's start), with r->pos at that line and
 * r->lineno at the line before: read_event() parses it as it would have. Returns how many
 * events were written; *rc is 0, or an interning error (r->lineno at its line). */
static HOT_INLINE size_t simd_run(atom_trace_reader *r, atom_event *ev, uint64_t *line64,
                                  size_t cap, int *rc) {
  const unsigned char *p = r->pos;
  const uint64_t lineno = r->lineno; /* every line of a run is an event: line lineno + i + 1 */
  atom_event *const ev0 = ev, *const ev_end = ev + cap;
  *rc = 0;
  /* A byte b is outside [lo, hi] when b + (0x80 - lo), wrapped, is above -128 + (hi - lo) as a
   * signed byte: one add and one compare a range (the sum the compare's destination, so no
   * constant is copied first). */
  const __m128i to_plain = _mm_set1_epi8((char)(0x80 - 0x2A)),
                last_plain = _mm_set1_epi8((char)(-128 + (0x7B - 0x2A)));
  const __m128i to_digit = _mm_set1_epi8((char)(0x80 - '0')),
                last_digit = _mm_set1_epi8((char)(-128 + 9));
  const uint64_t past = ~(uint64_t)0xFFFF; /* the bits past the load */
  for (;;) {
    /* A line taken is at most FAST_NEED bytes long, so `stop` lines from p all start with
     * FAST_NEED bytes of the region left: one bound for the loop below. */
    if (r->lim - p < FAST_NEED || ev == ev_end) break;
    size_t room = (size_t)(r->lim - p - FAST_NEED) / FAST_NEED + 1;
    atom_event *const stop = (size_t)(ev_end - ev) < room ? ev_end : ev + room;
    do {
      /* Bit i set: p[i] is not a plain name byte (bytes 0x2A to 0x7B, as odd_bytes()), or not a
       * digit; bits 16 to 63 set (`past`), as if the line went on with
       * such bytes. 64-bit masks: their bit scans need no extension to a position. */
      __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
      uint64_t odd =
          (uint32_t)_mm_movemask_epi8(_mm_cmpgt_epi8(_mm_add_epi8(x, to_plain), last_plain)) | past;
      uint64_t nondig =
          (uint32_t)_mm_movemask_epi8(_mm_cmpgt_epi8(_mm_add_epi8(x, to_digit), last_digit)) | past;
      /* The line's head, up to the second byte that is not plain (the byte after the operation
       * in a common line): when it is at most 8 bytes and in the cache, the thread's key, the
       * kind and the target's table come from there (struct line_head). A word of more than 8
       * bytes (the mask keeps all 8) matches no entry: byte 7 of an entry is its second byte that
       * is not plain, with one more before it, which the word's 8 bytes do not both have. */
      uint64_t w0 = atom__load_le64(p);
      size_t q = low_bit(odd & (odd - 1)); /* odd has bits 16 up: q <= 17 */
      uint64_t hw = w0 & head_bytes[q];
      const struct line_head *h = &r->heads[head_slot(hw)];
      uint64_t miss; /* not 0: a name or the head missed its cache (line_miss()) */
      struct name_cache *tc; /* the target's name cache, NULL: no target */
      if (LIKELY(h->word == hw)) {
        memcpy(ev, &h->ev, sizeof h->ev); /* kind, flags (0) and thread */
        tc = h->target;
        miss = 0;
      } else {
        /* <thread>|: a name of 1 to 7 bytes, all inside the load, then '|' (tested as a byte:
         * it may be the first byte after the load). */
        size_t tlen = low_bit(odd);
        if (UNLIKELY(tlen - 1 >= 7 || p[tlen] != '|')) goto out;
        uint64_t th = w0 & low_bytes[tlen];
        /* The names' keys are looked up in the cache as soon as the names are known (a short
         * name's head is the name itself, so equal heads are equal names, and no long name or
         * empty slot has a short name's head); a miss is interned only once the whole line is
         * known to be taken, the thread first, as read_event() does. The event's fields are
         * stored as soon as they are known (fewer values to keep in registers); a line not
         * taken leaves them in the slot *ev, which is not counted. */
        const struct name_cache *c = &r->names[0].cache[short_slot(th)];
        ev->thread = c->key;
        miss = (c->head ^ th) | (q < 8); /* q < 8: the head is cached */
        /* <op> and the byte after it, compared as one word with the pattern its first two
         * bytes select (fast_line()); it puts the byte after the operation at q. */
        uint64_t ow = atom__load_le64(p + tlen + 1);
        const struct op_run *op = &op_runs[OP_SLOT((uint16_t)ow)];
        if (UNLIKELY((ow | op->nmask) != op->want)) goto out;
        ev->kind = op->kind;
        ev->flags = 0;
        tc = op->arg ? ((name_space *)(void *)((char *)r->names + op->off))->cache : NULL;
      }
      /* q at '(' or '|': q <= 14 */
      size_t s = q + 1; /* s: where the location starts */
      if (!tc) {
        ev->target = 0;
      } else {
        /* (<name>)|: the next byte that is not plain must be ')' right after 1 to 7 bytes, then
         * '|'. odd >> (q + 1) keeps a set bit from the padding bits 16 up. */
        size_t nlen = low_bit(odd >> (q + 1));
        if (UNLIKELY(nlen - 1 >= 7 || load_le16(p + q + 1 + nlen) != W2(')', '|'))) goto out;
        uint64_t nh = atom__load_le64(p + q + 1) & low_bytes[nlen];
        s = q + 3 + nlen; /* s <= 24 */
        const struct name_cache *c = &tc[short_slot(nh)];
        ev->target = c->key;
        miss |= c->head ^ nh;
      }
      /* <loc>: 1 to 7 digits, then LF (or CR LF); one or two digits most of the time. */
      size_t k = low_bit(nondig >> s);
      const unsigned char *e = p + s + k;
      uint64_t loc;
      if (LIKELY(k - 1 < 2 && *e == '\n')) {
        /* The two bytes before the line end: two digits, or the '|' before the location and
         * one digit. hi + 10 lo - 528 is the value of two digits; for '|' (124) and one digit
         * it is 760 too much. */
        unsigned v = load_le16(e - 2);
        loc = (v >> 8) + (v & 0xFF) * 10 + 760 * k - 2048;
      } else {
        /* Longer, past the load or CR LF: from one word at the location (s <= 24, so it ends
         * by byte 32). */
        uint64_t w = atom__load_le64(p + s);
        uint64_t nd = ((w + ONES * 0x46) | (w - ONES * 0x30) | w) & HIGHS; /* non-digit bytes */
        k = (unsigned)(__builtin_ctzll(nd | (1ULL << 63)) >> 3);
        e = p + s + k;
        if (UNLIKELY(k - 1 >= 7 || *e != '\n')) {
          if (k - 1 >= 7 || *e != '\r' || e[1] != '\n') goto out;
          e++;
        }
        loc = digits_value((w - ONES * 0x30) << (64 - 8 * k));
      }
      if (UNLIKELY(miss)) {
        /* Interning: the slow path, which also fills the caches; the reader's position and line
         * where an error needs them. A key found above stays valid: keys never change. */
        r->lineno = lineno + (size_t)(ev - ev0) + 1;
        r->pos = p;
        if (line_miss(r, p, ev, tc)) goto out;
      }
      ev->loc = loc;
      ev++;
      p = e + 1;
    } while (ev < stop);
  }
out:;
  /* The line numbers, in a pass of their own (a loop the compiler can vectorize). */
  size_t n = (size_t)(ev - ev0);
  if (line64)
    for (size_t i = 0; i < n; i++) line64[i] = lineno + i + 1;
  if (UNLIKELY(r->err)) { /* an interning error: r->pos and r->lineno at its line */
    *rc = r->err;
    return n;
  }
  r->pos = p;
  r->lineno = lineno + n;
  if (n) r->line = lineno + n;
  return n;
}

/* simd_run() for the chunk (no lines written) and batch (64-bit lines) callers, each a function
 * of its own: the loop keeps its values in registers, apart from the callers' code. */
__attribute__((noinline)) static size_t simd_run_chunk(atom_trace_reader *r, atom_event *ev,
                                                       size_t cap, int *rc) {
  return simd_run(r, ev, NULL, cap, rc);
}
__attribute__((noinline)) static size_t simd_run64(atom_trace_reader *r, atom_event *ev,
                                                   uint64_t *line, size_t cap, int *rc) {
  return simd_run(r, ev, line, cap, rc);
}
#endif

/* A "#name SPACE KEY TEXT" directive in [p, lf) (p at '#'): KEY is a name token of the event
 * lines for thread, var and lock, a decimal loc for loc; TEXT runs to the end of the line
 * (trailing blanks and CR dropped). Kept for atom_trace_feed(), which registers TEXT. */
COLD static int directive(atom_trace_reader *r, const unsigned char *p, const unsigned char *lf) {
  static const char *const words[] = {"", "thread", "var", "lock", "loc"};
  const unsigned char *q = skip_blanks(p + 5), *w = q;
  while (q < lf && !IS_BLANK(*q) && *q != '\r' && *q != '\n') q++;
  int space = 0;
  for (int i = 1; i <= 4; i++)
    if ((size_t)(q - w) == strlen(words[i]) && !memcmp(w, words[i], (size_t)(q - w))) space = i;
  if (!space) return atom__trace_fail(r, ATOM_EPARSE, "#name: expected thread, var, lock or loc");
  const unsigned char *k = skip_blanks(q);
  q = k;
  while (q < lf && !IS_BLANK(*q) && *q != '\r' && *q != '\n') q++;
  if (q == k) return atom__trace_fail(r, ATOM_EPARSE, "#name %s: expected a key", words[space]);
  uint64_t key = 0;
  if (space == ATOM_SPACE_LOC) {
    for (const unsigned char *d = k; d < q; d++) {
      if (*d < '0' || *d > '9' || key > (UINT64_MAX - (uint64_t)(*d - '0')) / 10)
        return atom__trace_fail(r, ATOM_EPARSE,
                                "#name loc: the location must be a decimal integer");
      key = key * 10 + (uint64_t)(*d - '0');
    }
  } else {
    const char *why = atom__trace_name_problem((const char *)k, (size_t)(q - k));
    if (why) return atom__trace_fail(r, ATOM_EPARSE, "#name %s: %s", words[space], why);
    int rc = intern(r, &r->names[space - 1], k, (size_t)(q - k), &key);
    if (rc) return rc;
  }
  const unsigned char *t = skip_blanks(q), *e = lf;
  while (e > t && (IS_BLANK(e[-1]) || e[-1] == '\r')) e--;
  if (e == t)
    return atom__trace_fail(r, ATOM_EPARSE, "#name %s: expected a name after the key",
                            words[space]);
  const char *why = atom__trace_text_problem((const char *)t, (size_t)(e - t));
  if (why) return atom__trace_fail(r, ATOM_EPARSE, "#name %s: %s", words[space], why);
  if (ATOM__GROW(&r->mem, r->dir, r->dir_cap, r->n_dir + 1))
    return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
  char *text = atom__mem_alloc(&r->mem, (size_t)(e - t) + 1);
  if (!text) return atom__trace_fail(r, ATOM_ENOMEM, "out of memory");
  memcpy(text, t, (size_t)(e - t));
  text[e - t] = '\0';
  r->dir[r->n_dir++] = (atom__trace_directive){space, key, text};
  return 0;
}

/* Parse the next event. 1 = *ev filled, 0 = end of input, < 0 = error (sticky). */
static HOT_INLINE int read_event(atom_trace_reader *r, atom_event *ev) {
  const unsigned char *p = r->pos;
  line_fields f;
  for (;;) {
    if (UNLIKELY(p >= r->lim)) {
      r->pos = p;
      int rc = atom__trace_refill(r);
      if (rc <= 0) return rc;
      p = r->pos;
      if (UNLIKELY(!r->started)) {
        /* A UTF-8 byte order mark, as some editors on Windows write, is not part of the
         * trace: skip it at the very start of the input (a region holds the whole first
         * line, so the three bytes are in it when they are there). */
        r->started = 1;
        if (r->lim - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) p += 3;
      }
      continue;
    }
    r->lineno++;
    if (LIKELY(r->lim - p >= FAST_NEED) && *p != '#') {
      int rc = fast_line(r, p, ev);
      if (LIKELY(rc)) return rc;
    }
    const unsigned char *start = p;
    unsigned c = *p;
    if (UNLIKELY(cls[c] != C_NAME || c == '#')) {
      p = skip_blanks(p);
      c = *p;
      const unsigned char *lf = NULL;
      if (c == '#')
        lf = memchr(p, '\n', (size_t)(r->lim - p));
      else if (c == '\n')
        lf = p;
      else if (c == '\r' && p[1] == '\n')
        lf = p + 1;
      if (lf) { /* comment, directive or blank line */
        if (UNLIKELY(too_long(r, start, lf))) return r->err;
        if (c == '#' && lf - p > 5 && !memcmp(p, "#name", 5) && IS_BLANK(p[5]) &&
            directive(r, p, lf))
          return r->err;
        p = lf + 1;
        continue;
      }
    }
    const unsigned char *next = parse_line(r, start, p, &f);
    if (UNLIKELY(!next)) return r->err;

    /* Intern after the whole line is known to be well formed. */
    uint64_t thread, target = 0;
    int rc = intern(r, &r->names[0], f.t0, f.tlen, &thread);
    if (LIKELY(rc == 0) && f.n0)
      rc = intern(r, &r->names[target_space[f.kind]], f.n0, f.nlen, &target);
    if (UNLIKELY(rc)) return rc;
    ev->kind = f.kind;
    ev->flags = f.flags;
    ev->thread = thread;
    ev->target = target;
    ev->loc = f.loc;
    r->pos = next;
    r->line = r->lineno;
    return 1;
  }
}

/* ---- reading --------------------------------------------------------------------------- */

ATOM_API int atom_trace_reader_next(atom_trace_reader *r, atom_event *ev) {
  if (!r || !ev) return atom__error(ATOM_EINVAL, "atom_trace_reader_next: NULL argument");
  atom__trace_batch *b = r->batch;
  if (b && b->head < b->count) {
    *ev = b->ev[b->head];
    r->line = b->line[b->head++];
    return 1;
  }
  if (UNLIKELY(r->sniff) && !r->err && atom__trace_sniff(r)) return r->err;
  if (r->atb) return atom__atb_next(r, ev); /* binary input: atb_reader.c */
  if (r->err) return atom__trace_reraise(r);
  if (r->threads > 1) {
    /* Reading in parallel (or asked for and not yet decided): through the batch. */
    if (!(b = atom__trace_reader_batch(r))) return ATOM_ENOMEM;
    int rc = atom__trace_reader_fill(r, 0);
    if (b->head < b->count) {
      *ev = b->ev[b->head];
      r->line = b->line[b->head++];
      return 1;
    }
    return rc;
  }
  return read_event(r, ev);
}

int atom__trace_intern(atom_trace_reader *r, int space, const char *s, size_t len,
                       uint64_t *key) {
  return intern(r, &r->names[space - 1], (const unsigned char *)s, len, key);
}

void atom__trace_heads_clear(atom_trace_reader *r) {
  memset(r->heads, 0xFF, sizeof r->heads);
}

void atom__trace_names_clear(atom_trace_reader *r) {
  atom__trace_heads_clear(r); /* their thread keys go with the names */
  for (int i = 0; i < 3; i++) {
    name_space *t = &r->names[i];
    atom__u64map_free(&t->short_names, &r->mem);
    atom__idindex_free(&t->long_names, &r->mem);
    /* Every slot in use holds one of the names: emptying theirs empties the cache, for a
     * chunk with few names much faster than clearing all of it. */
    for (size_t k = 0; k < t->n; k++) {
      const unsigned char *s = (const unsigned char *)t->ent[k].s;
      t->cache[cache_slot(name_head(s, t->ent[k].len), t->ent[k].len)] =
          (struct name_cache){0, 0, 0};
    }
    t->n = t->n_final = 0;
  }
  /* Keep the newest arena block for the next chunk's names, free the others. */
  arena_block *keep = r->arena;
  if (keep) {
    for (arena_block *b = keep->next, *next; b; b = next) {
      next = b->next;
      atom__mem_free(&r->mem, b, sizeof *b + b->size);
    }
    keep->next = NULL;
  }
  r->arena_used = 0;
}

int atom__trace_names_settle(atom_trace_reader *r, uint32_t *const map[3]) {
  for (int i = 0; i < 3; i++) {
    name_space *t = &r->names[i];
    if (t->n > t->gkey_cap && ATOM__GROW(&r->mem, t->gkey, t->gkey_cap, t->n)) return ATOM_ENOMEM;
  }
  for (int i = 0; i < 3; i++) {
    name_space *t = &r->names[i];
    for (size_t at = t->n_final; at < t->n; at++) {
      uint32_t g = map[i][at + 1];
      t->gkey[at] = g;
      /* The name's cache slot, when it holds the name, has its provisional key; a name of more
       * than 8 bytes keeps its index there (cached_key()). */
      const name_ent *e = &t->ent[at];
      if (e->len > 8) continue;
      struct name_cache *c =
          &t->cache[cache_slot(name_head((const unsigned char *)e->s, e->len), e->len)];
      if (c->key == (r->key_tag | (uint32_t)(at + 1))) c->key = g;
    }
    t->n_final = t->n;
  }
  /* Line heads hold the thread's key (a head's target is its name cache, settled above). */
  for (size_t i = 0; i < (size_t)1 << HEAD_CACHE_BITS; i++) {
    struct line_head *h = &r->heads[i];
    if (h->word != ~(uint64_t)0 && (h->ev.thread & r->key_tag))
      h->ev.thread = map[0][h->ev.thread ^ r->key_tag];
  }
  return 0;
}

/* Event `at` of the chunk is on line `line`: a new run unless it follows the last one's. */
static int chunk_line(atom_trace_reader *w, atom__chunk_events *out, size_t at, uint64_t line) {
  if (out->n_runs) {
    const struct atom__line_run *last = &out->runs[out->n_runs - 1];
    if (last->line + (at - last->ev) == line) return 0;
  }
  if (ATOM__GROW(&w->mem, out->runs, out->runs_cap, out->n_runs + 1))
    return atom__trace_fail(w, ATOM_ENOMEM, "out of memory");
  out->runs[out->n_runs++] = (struct atom__line_run){(uint32_t)at, (uint32_t)line};
  return 0;
}

int atom__trace_parse_chunk(atom_trace_reader *w, atom__chunk_events *out) {
  for (;;) {
    if (out->n == out->cap && ATOM__GROW(&w->mem, out->ev, out->cap, out->n + 1))
      return atom__trace_fail(w, ATOM_ENOMEM, "out of memory");
#if defined(SIMD_LINES)
    size_t room = out->cap - out->n;
    uint64_t before = w->lineno;
    int rc;
    size_t got = simd_run_chunk(w, out->ev + out->n, room, &rc);
    /* A run's lines are consecutive: its first event's line places them all. */
    if (got && chunk_line(w, out, out->n, before + 1)) return w->err;
    out->n += got;
    if (UNLIKELY(rc)) return rc;
    if (got == room) continue; /* full: grow */
#endif
    size_t nd = w->n_dir;
    int rc1 = read_event(w, &out->ev[out->n]);
    if (UNLIKELY(w->n_dir != nd)) {
      if (ATOM__GROW(&w->mem, out->dir_pos, out->dir_cap, w->n_dir))
        return atom__trace_fail(w, ATOM_ENOMEM, "out of memory");
      for (; nd < w->n_dir; nd++) out->dir_pos[nd] = out->n;
    }
    if (rc1 != 1) return rc1;
    if (chunk_line(w, out, out->n, w->lineno)) return w->err;
    out->n++;
  }
}

atom__trace_batch *atom__trace_reader_batch(atom_trace_reader *r) {
  if (r->batch) return r->batch;
  atom__trace_batch *b = atom__mem_calloc(&r->mem, 1, sizeof *b);
  if (!b) goto oom;
  b->ev = atom__mem_alloc(&r->mem, BATCH_CAP * sizeof *b->ev);
  b->line = atom__mem_alloc(&r->mem, BATCH_CAP * sizeof *b->line);
  if (!b->ev || !b->line) {
    atom__mem_free(&r->mem, b->ev, BATCH_CAP * sizeof *b->ev);
    atom__mem_free(&r->mem, b->line, BATCH_CAP * sizeof *b->line);
    atom__mem_free(&r->mem, b, sizeof *b);
    goto oom;
  }
  b->cap = BATCH_CAP;
  r->batch = b;
  return b;
oom:
  atom__error(ATOM_ENOMEM, "atom_trace_feed: out of memory");
  return NULL;
}

int atom__trace_reader_fill(atom_trace_reader *r, size_t max) {
  atom__trace_batch *b = r->batch;
  b->head = b->count = 0;
  if (r->err) return atom__trace_reraise(r);
  size_t n = max && max < b->cap ? max : b->cap;
  if (UNLIKELY(r->sniff) && atom__trace_sniff(r)) return r->err;
  if (r->atb) return atom__atb_fill(r, n); /* binary input: atb_reader.c */
  if (UNLIKELY(r->threads > 1)) {
    if (!r->par_tried) {
      int rc = atom__trace_par_start(r);
      if (rc) return rc;
    }
    if (r->par) return atom__trace_par_fill(r, b, n);
  }
  while (b->count < n) {
#if defined(SIMD_LINES)
    int src;
    b->count += simd_run64(r, b->ev + b->count, b->line + b->count, n - b->count, &src);
    if (UNLIKELY(src)) return src;
    if (b->count == n) break;
#endif
    int rc = read_event(r, &b->ev[b->count]);
    if (rc != 1) return rc;
    b->line[b->count++] = r->line;
  }
  return 0;
}
