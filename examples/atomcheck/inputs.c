/* The side files of a run: --locations (what each loc is), --baseline (fingerprints of an
 * earlier run), --suppressions (rules of known violations). Errors are printed as
 * "atomcheck: FILE:LINE: message" (or "atomcheck: FILE: message") and return -1. */
#include "atomcheck.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Most bytes a side file may have: they are written by hand or by an earlier run. */
#define MAX_SIDE_FILE (256u << 20)

/* Read all of path (NUL-terminated, malloc'd, *len without the NUL). @return NULL on error
 * (printed). */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "atomcheck: %s: %s\n", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 >= cap) {
      if (cap >= MAX_SIDE_FILE) {
        fprintf(stderr, "atomcheck: %s: larger than %u MiB\n", path, MAX_SIDE_FILE >> 20);
        free(buf);
        fclose(f);
        return NULL;
      }
      char *grown = realloc(buf, cap * 2);
      if (!grown) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = grown;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - 1 - n, f);
    n += got;
    if (got == 0) break;
  }
  if (!buf || ferror(f)) {
    fprintf(stderr, "atomcheck: %s: %s\n", path, buf ? "read error" : "out of memory");
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* One line "LOC FILE:LINE [FUNCTION]" of a locations map, NUL-terminated in place. */
static int location_line(atom_session *s, char *p, const char *path, size_t lineno) {
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '\0' || *p == '#') return 0;
  char *end;
  errno = 0;
  if (*p < '0' || *p > '9') goto bad;
  unsigned long long loc = strtoull(p, &end, 10);
  if (errno || (*end != ' ' && *end != '\t')) goto bad;
  p = end;
  while (*p == ' ' || *p == '\t') p++;
  char *where = p;
  while (*p && *p != ' ' && *p != '\t') p++;
  char *function = NULL;
  if (*p) {
    *p++ = '\0';
    while (*p == ' ' || *p == '\t') p++;
    if (*p) {
      function = p;
      /* trailing blanks are not part of the name */
      char *e = p + strlen(p);
      while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = '\0';
    }
  }
  char *colon = strrchr(where, ':');
  if (!colon || colon == where || colon[1] < '0' || colon[1] > '9') goto bad;
  unsigned long line = strtoul(colon + 1, &end, 10);
  if (*end == '\r') *end = '\0';
  if (*end != '\0' || line == 0 || line > UINT32_MAX) goto bad;
  *colon = '\0';
  int rc = atom_set_location(s, (uint64_t)loc, function, where, (uint32_t)line);
  if (rc != 0) {
    fprintf(stderr, "atomcheck: %s:%zu: %s\n", path, lineno, atom_strerror(rc));
    return -1;
  }
  return 0;
bad:
  fprintf(stderr, "atomcheck: %s:%zu: expected 'LOC FILE:LINE [FUNCTION]'\n", path, lineno);
  return -1;
}

int atc_load_locations(atom_session *s, const char *path) {
  size_t len = 0;
  char *text = slurp(path, &len);
  if (!text) return -1;
  int rc = 0;
  size_t lineno = 0;
  for (char *p = text; rc == 0 && p < text + len;) {
    char *nl = memchr(p, '\n', (size_t)(text + len - p));
    if (nl) *nl = '\0';
    rc = location_line(s, p, path, ++lineno);
    p = nl ? nl + 1 : text + len;
  }
  free(text);
  return rc;
}

/* Scan for the values of "fingerprint" (our JSON) and "atomicity/v1" (our SARIF) members: 16
 * hex digits in quotes. A tiny scanner, no JSON parser: the keys only occur in these places. */
int atc_load_baseline(const char *path, uint64_t **fps, size_t *n) {
  static const char *const keys[] = {"\"fingerprint\"", "\"atomicity/v1\""};
  size_t len = 0;
  char *text = slurp(path, &len);
  if (!text) return -1;
  uint64_t *list = NULL;
  size_t count = 0, cap = 0;
  for (size_t k = 0; k < 2; k++)
    for (const char *p = text; (p = strstr(p, keys[k])) != NULL;) {
      p += strlen(keys[k]);
      while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
      if (*p != ':') continue;
      p++;
      while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
      if (*p != '"') continue;
      char *end;
      uint64_t v = strtoull(p + 1, &end, 16);
      if (end != p + 17 || *end != '"') continue;
      if (count == cap) {
        size_t ncap = cap ? 2 * cap : 64;
        uint64_t *grown = realloc(list, ncap * sizeof *grown);
        if (!grown) {
          fputs("atomcheck: out of memory\n", stderr);
          free(list);
          free(text);
          return -1;
        }
        list = grown;
        cap = ncap;
      }
      list[count++] = v;
      p = end;
    }
  free(text); /* no fingerprint at all is legal: an earlier run without violations */
  *fps = list;
  *n = count;
  return 0;
}

int atc_load_suppressions(const char *path, atom_suppressions **out) {
  size_t len = 0;
  char *text = slurp(path, &len);
  if (!text) return -1;
  int rc = atom_suppressions_parse(out, text, len);
  free(text);
  if (rc != 0) {
    const char *detail = atom_last_error();
    /* the library says "line N: ..." */
    if (detail && strncmp(detail, "line ", 5) == 0) {
      const char *p = detail + 5;
      size_t k = strspn(p, "0123456789");
      if (k && p[k] == ':') {
        fprintf(stderr, "atomcheck: %s:%.*s:%s\n", path, (int)k, p, p + k + 1);
        return -1;
      }
    }
    fprintf(stderr, "atomcheck: %s: %s\n", path, detail && *detail ? detail : atom_strerror(rc));
    return -1;
  }
  return 0;
}
