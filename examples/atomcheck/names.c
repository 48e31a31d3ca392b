/* Readable names of threads, variables, locks and event kinds; small string helpers. */
#include "atomcheck.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>

const char *atc_name(const atc_run *run, int space, uint64_t key, char *buf, size_t size) {
  if (space == ATOM_SPACE_LOC) return atc_loc_name(run, key);
  const char *name = NULL;
  if (run->session) name = atom_get_name(run->session, space, key);
  if (!name && run->reader) name = atom_trace_reader_name(run->reader, space, key);
  if (name) return name;
  snprintf(buf, size, "0x%" PRIx64, key);
  return buf;
}

const char *atc_loc_name(const atc_run *run, uint64_t loc) {
  return run->session ? atom_get_name(run->session, ATOM_SPACE_LOC, loc) : NULL;
}

const char *atc_plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms, no surrogates, at most
 * U+10FFFF), or 0 if the bytes there are not one. */
static size_t utf8_len(const unsigned char *s) {
  unsigned char c = s[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else
    return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return n;
}

void atc_put_text(FILE *out, const char *text) {
  const unsigned char *s = (const unsigned char *)text, *run = s;
  while (*s) {
    size_t n = 1;
    int escape;
    if (*s < 0x80) {
      escape = *s < 0x20 || *s == 0x7f;
    } else {
      n = utf8_len(s);
      /* C1 controls are U+0080-U+009F: 0xC2 followed by 0x80-0x9F */
      escape = n == 0 || (n == 2 && s[0] == 0xC2 && s[1] <= 0x9F);
      if (n == 0) n = 1;
    }
    if (!escape) {
      s += n;
      continue;
    }
    fwrite(run, 1, (size_t)(s - run), out);
    for (size_t i = 0; i < n; i++) fprintf(out, "\\x%02x", s[i]);
    s += n;
    run = s;
  }
  fwrite(run, 1, (size_t)(s - run), out);
}

char *atc_strdup_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}
