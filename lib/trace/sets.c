/* Atomic-sets files for the STD reader (doc/trace-format.md, "Atomic sets"):
 * atom_trace_reader_load_sets() reads `variable set` pairs, and atom_trace_feed() declares the
 * set of each variable (atom_declare_set) when it hands the variable's name to the session. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/error.h"
#include "core/error.h"
#include "support/u64map.h"
#include "trace/std_reader.h"

/* A name -> value table: entries in order of insertion, found through an open-addressing index
 * of entry numbers + 1. */
typedef struct strtab_ent {
  char *s;
  size_t len;
  uint64_t value;
  uint64_t line; /* where it was first given */
} strtab_ent;

typedef struct strtab {
  strtab_ent *ent;
  size_t n, cap;
  uint32_t *slot;
  size_t nslot; /* power of two, or 0 */
} strtab;

struct atom__trace_sets {
  strtab vars; /* variable name -> set key */
  strtab sets; /* set name -> set key (1, 2, ... in order of first appearance) */
};

static uint64_t str_hash(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
  return atom__hash64(h);
}

static const strtab_ent *strtab_find(const strtab *t, const char *s, size_t n) {
  if (!t->nslot) return NULL;
  size_t mask = t->nslot - 1;
  for (size_t i = (size_t)str_hash(s, n) & mask; t->slot[i]; i = (i + 1) & mask) {
    const strtab_ent *e = &t->ent[t->slot[i] - 1];
    if (e->len == n && memcmp(e->s, s, n) == 0) return e;
  }
  return NULL;
}

/* Add a name known to be absent. @return 0 or ATOM_ENOMEM (table unchanged). */
static int strtab_add(strtab *t, atom__mem *mem, const char *s, size_t n, uint64_t value,
                      uint64_t line) {
  if (t->n >= UINT32_MAX - 1) return ATOM_ENOMEM;
  if ((t->n + 1) * 2 > t->nslot) {
    size_t nslot = t->nslot ? t->nslot * 2 : 64;
    uint32_t *slot = atom__mem_calloc(mem, nslot, sizeof *slot);
    if (!slot) return ATOM_ENOMEM;
    for (size_t k = 0; k < t->n; k++) {
      size_t i = (size_t)str_hash(t->ent[k].s, t->ent[k].len) & (nslot - 1);
      while (slot[i]) i = (i + 1) & (nslot - 1);
      slot[i] = (uint32_t)k + 1;
    }
    atom__mem_free(mem, t->slot, t->nslot * sizeof *t->slot);
    t->slot = slot;
    t->nslot = nslot;
  }
  if (ATOM__GROW(mem, t->ent, t->cap, t->n + 1)) return ATOM_ENOMEM;
  char *copy = atom__mem_alloc(mem, n + 1);
  if (!copy) return ATOM_ENOMEM;
  memcpy(copy, s, n);
  copy[n] = '\0';
  t->ent[t->n] = (strtab_ent){copy, n, value, line};
  size_t i = (size_t)str_hash(s, n) & (t->nslot - 1);
  while (t->slot[i]) i = (i + 1) & (t->nslot - 1);
  t->slot[i] = (uint32_t)++t->n;
  return 0;
}

static void strtab_free(strtab *t, atom__mem *mem) {
  for (size_t k = 0; k < t->n; k++) atom__mem_free(mem, t->ent[k].s, t->ent[k].len + 1);
  atom__mem_free(mem, t->ent, t->cap * sizeof *t->ent);
  atom__mem_free(mem, t->slot, t->nslot * sizeof *t->slot);
}

void atom__trace_sets_free(atom__trace_sets *t, atom__mem *mem) {
  if (!t) return;
  strtab_free(&t->vars, mem);
  strtab_free(&t->sets, mem);
  atom__mem_free(mem, t, sizeof *t);
}

int atom__trace_sets_lookup(const atom__trace_sets *t, const char *var, uint64_t *set) {
  if (!t || !var) return 0;
  const strtab_ent *e = strtab_find(&t->vars, var, strlen(var));
  if (!e) return 0;
  *set = e->value;
  return 1;
}

#define IS_BLANK(c) ((c) == ' ' || (c) == '\t')

/* Parse line `lineno` (without its LF) into t; on error the message is set ("path:line: ...")
 * and t may be partly filled (the caller drops it). */
static int parse_line(atom__trace_sets *t, atom__mem *mem, const char *path, const char *line,
                      size_t len, uint64_t lineno) {
  {
    if (len && line[len - 1] == '\r') len--;
    /* Two names separated by blanks; blank lines and '#' comments are skipped. */
    const char *tok[3];
    size_t tlen[3], ntok = 0;
    for (size_t i = 0; i < len;) {
      if (IS_BLANK(line[i])) {
        i++;
        continue;
      }
      if (ntok == 0 && line[i] == '#') break;
      size_t j = i;
      while (j < len && !IS_BLANK(line[j])) j++;
      if (ntok < 3) {
        tok[ntok] = line + i;
        tlen[ntok] = j - i;
      }
      ntok++;
      i = j;
    }
    if (ntok == 0) return 0;
    if (ntok != 2)
      return atom__error(ATOM_EPARSE, "%s:%llu: expected 'variable set', found %zu word%s",
                         path, (unsigned long long)lineno, ntok, ntok == 1 ? "" : "s");
    for (int k = 0; k < 2; k++) {
      const char *why = atom__trace_name_problem(tok[k], tlen[k]);
      if (why)
        return atom__error(ATOM_EPARSE, "%s:%llu: bad %s name '%.*s': %s", path,
                           (unsigned long long)lineno, k ? "set" : "variable",
                           (int)(tlen[k] > 64 ? 64 : tlen[k]), tok[k], why);
    }
    const strtab_ent *v = strtab_find(&t->vars, tok[0], tlen[0]);
    if (v)
      return atom__error(ATOM_EPARSE, "%s:%llu: variable '%.*s' is already in a set (line %llu)",
                         path, (unsigned long long)lineno, (int)(tlen[0] > 64 ? 64 : tlen[0]),
                         tok[0], (unsigned long long)v->line);
    const strtab_ent *s = strtab_find(&t->sets, tok[1], tlen[1]);
    uint64_t key = s ? s->value : (uint64_t)t->sets.n + 1;
    if ((!s && strtab_add(&t->sets, mem, tok[1], tlen[1], key, lineno)) ||
        strtab_add(&t->vars, mem, tok[0], tlen[0], key, lineno))
      return atom__error(ATOM_ENOMEM, "%s: out of memory", path);
  }
  return 0;
}

/* Bytes read from the file at a time. */
#define SETS_CHUNK 65536u

/* Read the file line by line into t. Memory is bounded by one chunk, one line of at most
 * ATOM__TRACE_MAX_LINE bytes (as for traces) and the table itself: a file that is not a sets
 * file (a NUL byte, a line too long, /dev/zero, a binary) fails at its first bad line instead
 * of being read whole. */
static int parse_file(atom__trace_sets *t, atom__mem *mem, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return atom__error(ATOM_EIO, "%s: cannot open: %s", path, strerror(errno));
  int rc = 0;
  uint64_t lineno = 1;
  size_t lcap = 0, llen = 0; /* the line being assembled, when it spans chunks */
  char *line = NULL, *chunk = atom__mem_alloc(mem, SETS_CHUNK);
  if (!chunk) rc = atom__error(ATOM_ENOMEM, "%s: out of memory", path);
  while (!rc) {
    size_t got = fread(chunk, 1, SETS_CHUNK, f);
    if (got == 0) {
      if (ferror(f)) rc = atom__error(ATOM_EIO, "%s: cannot read: %s", path, strerror(errno));
      else if (llen) rc = parse_line(t, mem, path, line, llen, lineno); /* no final LF */
      break;
    }
    for (size_t at = 0; at < got && !rc;) {
      const char *nl = memchr(chunk + at, '\n', got - at);
      size_t seg = nl ? (size_t)(nl - (chunk + at)) : got - at;
      if (memchr(chunk + at, '\0', seg)) {
        rc = atom__error(ATOM_EPARSE, "%s:%llu: NUL byte (not a sets file?)", path,
                         (unsigned long long)lineno);
        break;
      }
      if (llen + seg > ATOM__TRACE_MAX_LINE) {
        rc = atom__error(ATOM_EPARSE, "%s:%llu: line too long (more than %zu bytes)", path,
                         (unsigned long long)lineno, (size_t)ATOM__TRACE_MAX_LINE);
        break;
      }
      if (nl && llen == 0) { /* the whole line is in the chunk: no copy */
        rc = parse_line(t, mem, path, chunk + at, seg, lineno++);
      } else {
        if (llen + seg > lcap) {
          size_t ncap = lcap ? lcap : 256;
          while (ncap < llen + seg) ncap *= 2;
          char *grown = atom__mem_realloc(mem, line, lcap, ncap);
          if (!grown) {
            rc = atom__error(ATOM_ENOMEM, "%s: out of memory", path);
            break;
          }
          line = grown;
          lcap = ncap;
        }
        memcpy(line + llen, chunk + at, seg);
        llen += seg;
        if (nl) {
          rc = parse_line(t, mem, path, line, llen, lineno++);
          llen = 0;
        }
      }
      at += seg + (nl ? 1 : 0);
    }
  }
  atom__mem_free(mem, chunk, SETS_CHUNK);
  atom__mem_free(mem, line, lcap);
  fclose(f);
  return rc;
}

ATOM_API int atom_trace_reader_load_sets(atom_trace_reader *r, const char *path) {
  if (!r || !path) return atom__error(ATOM_EINVAL, "atom_trace_reader_load_sets: NULL argument");
  atom__trace_sets **slot = atom__trace_reader_sets(r);
  if (*slot)
    return atom__error(ATOM_ESTATE, "atom_trace_reader_load_sets: sets were already loaded");
  if (atom__trace_reader_named(r)[ATOM_SPACE_VAR - 1] > 0)
    return atom__error(ATOM_ESTATE, "atom_trace_reader_load_sets: variables were already "
                                    "handed to a session (load the sets before atom_trace_feed)");
  atom__mem *mem = atom__trace_reader_mem(r);
  int rc;
  atom__trace_sets *t = atom__mem_calloc(mem, 1, sizeof *t);
  if (!t) rc = atom__error(ATOM_ENOMEM, "%s: out of memory", path);
  else rc = parse_file(t, mem, path);
  if (rc) {
    atom__trace_sets_free(t, mem);
    return rc;
  }
  *slot = t;
  return 0;
}
