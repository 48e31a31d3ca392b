/* Atomic sets for the STD reader (doc/trace-format.md, "Atomic sets"): a sets file read by
 * atom_trace_reader_load_sets() (`variable set` pairs), and the name-prefix policy of
 * atom_trace_reader_sets_by_prefix() (the set of "obj.field" is the one of every "obj.*").
 * atom_trace_feed() declares the set of each variable (atom_declare_set) when it hands the
 * variable's name to the session: sets are decided where names are read, so a checker sees only
 * declared sets and a display name given later (atom_set_name, "#name") never moves a variable
 * to another set. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/error.h"
#include "core/error.h"
#include "trace/std_reader.h"

/* Every table below is allocated from the `mem` in scope where a HASH_ macro is used. */
#define ATOM__HASH_MEM (mem)
#include "support/hashtab.h"

/* A name -> value entry; the name is stored after it (len bytes and a NUL). */
typedef struct name_ent {
  UT_hash_handle hh;
  uint64_t value;
  uint64_t line; /* where it was first given (sets files) */
  size_t len;
  char s[];
} name_ent;

/* Prefix sets get keys with this bit set, so that they never meet the keys 1, 2, ... of the
 * sets of a file. */
#define PREFIX_SET_BIT (UINT64_C(1) << 63)

struct atom__trace_sets {
  name_ent *vars;     /* sets file: variable name -> set key */
  name_ent *sets;     /* sets file: set name -> set key (1, 2, ... in order of first appearance) */
  uint64_t n_sets;
  int loaded;         /* a sets file was loaded */
  int by_prefix;      /* atom_trace_reader_sets_by_prefix() */
  name_ent *prefixes; /* prefix -> set key (PREFIX_SET_BIT | 1, 2, ...) */
  uint64_t n_prefixes;
};

static name_ent *table_find(name_ent *table, const char *s, size_t n) {
  name_ent *e = NULL;
  HASH_FIND(hh, table, s, n, e);
  return e;
}

/* Add a name known to be absent. @return 0 or ATOM_ENOMEM (table unchanged). */
static int table_add(name_ent **table, atom__mem *mem, const char *s, size_t n, uint64_t value,
                     uint64_t line) {
  name_ent *e = atom__mem_alloc(mem, sizeof *e + n + 1);
  if (!e) return ATOM_ENOMEM;
  memset(&e->hh, 0, sizeof e->hh);
  e->value = value;
  e->line = line;
  e->len = n;
  memcpy(e->s, s, n);
  e->s[n] = '\0';
  int rc;
  ATOM__HASH_TRY(rc, HASH_ADD_KEYPTR(hh, *table, e->s, n, e));
  if (rc) atom__mem_free(mem, e, sizeof *e + n + 1);
  return rc;
}

static void table_free(name_ent **table, atom__mem *mem) {
  name_ent *e, *tmp;
  HASH_ITER(hh, *table, e, tmp) {
    HASH_DEL(*table, e);
    atom__mem_free(mem, e, sizeof *e + e->len + 1);
  }
}

void atom__trace_sets_free(atom__trace_sets *t, atom__mem *mem) {
  if (!t) return;
  table_free(&t->vars, mem);
  table_free(&t->sets, mem);
  table_free(&t->prefixes, mem);
  atom__mem_free(mem, t, sizeof *t);
}

int atom__trace_sets_lookup(atom__trace_sets *t, atom__mem *mem, const char *var,
                            uint64_t *set) {
  if (!t || !var) return 0;
  const name_ent *e = table_find(t->vars, var, strlen(var));
  if (e) {
    *set = e->value;
    return 1;
  }
  const char *dot = t->by_prefix ? strrchr(var, '.') : NULL;
  if (!dot || dot == var) return 0; /* no prefix: a set of its own */
  size_t n = (size_t)(dot - var);
  e = table_find(t->prefixes, var, n);
  if (!e) {
    if (t->n_prefixes >= PREFIX_SET_BIT - 1) return ATOM_ELIMIT;
    uint64_t key = PREFIX_SET_BIT | (t->n_prefixes + 1);
    if (table_add(&t->prefixes, mem, var, n, key, 0)) return ATOM_ENOMEM;
    t->n_prefixes++;
    *set = key;
    return 1;
  }
  *set = e->value;
  return 1;
}

/* The reader's table, made when first needed. */
static atom__trace_sets *sets_of(atom_trace_reader *r) {
  atom__trace_sets **slot = atom__trace_reader_sets(r);
  if (!*slot) *slot = atom__mem_calloc(atom__trace_reader_mem(r), 1, sizeof **slot);
  return *slot;
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
    const name_ent *v = table_find(t->vars, tok[0], tlen[0]);
    if (v)
      return atom__error(ATOM_EPARSE, "%s:%llu: variable '%.*s' is already in a set (line %llu)",
                         path, (unsigned long long)lineno, (int)(tlen[0] > 64 ? 64 : tlen[0]),
                         tok[0], (unsigned long long)v->line);
    const name_ent *s = table_find(t->sets, tok[1], tlen[1]);
    uint64_t key = s ? s->value : t->n_sets + 1;
    if (!s) {
      if (table_add(&t->sets, mem, tok[1], tlen[1], key, lineno))
        return atom__error(ATOM_ENOMEM, "%s: out of memory", path);
      t->n_sets++;
    }
    if (table_add(&t->vars, mem, tok[0], tlen[0], key, lineno))
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
  atom__trace_sets *have = *atom__trace_reader_sets(r);
  if (have && have->loaded)
    return atom__error(ATOM_ESTATE, "atom_trace_reader_load_sets: sets were already loaded");
  if (atom__trace_reader_named(r)[ATOM_SPACE_VAR - 1] > 0)
    return atom__error(ATOM_ESTATE, "atom_trace_reader_load_sets: variables were already "
                                    "handed to a session (load the sets before atom_trace_feed)");
  atom__mem *mem = atom__trace_reader_mem(r);
  /* Read into a table of its own, so that on error nothing is loaded. */
  int rc;
  atom__trace_sets *t = atom__mem_calloc(mem, 1, sizeof *t);
  if (!t) rc = atom__error(ATOM_ENOMEM, "%s: out of memory", path);
  else rc = parse_file(t, mem, path);
  if (!rc && !sets_of(r)) rc = atom__error(ATOM_ENOMEM, "%s: out of memory", path);
  if (rc) {
    atom__trace_sets_free(t, mem);
    return rc;
  }
  have = *atom__trace_reader_sets(r);
  have->vars = t->vars;
  have->sets = t->sets;
  have->n_sets = t->n_sets;
  have->loaded = 1;
  atom__mem_free(mem, t, sizeof *t);
  return 0;
}

ATOM_API int atom_trace_reader_sets_by_prefix(atom_trace_reader *r) {
  if (!r) return atom__error(ATOM_EINVAL, "atom_trace_reader_sets_by_prefix: NULL argument");
  if (atom__trace_reader_named(r)[ATOM_SPACE_VAR - 1] > 0)
    return atom__error(ATOM_ESTATE, "atom_trace_reader_sets_by_prefix: variables were already "
                                    "handed to a session (call it before atom_trace_feed)");
  atom__trace_sets *t = sets_of(r);
  if (!t) return atom__error(ATOM_ENOMEM, "atom_trace_reader_sets_by_prefix: out of memory");
  t->by_prefix = 1;
  return 0;
}
