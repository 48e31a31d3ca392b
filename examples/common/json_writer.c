/* A small streaming JSON writer (see json_writer.h). */
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void atc_json_init(atc_json *j, FILE *out, int pretty) {
  j->out = out;
  j->pretty = pretty;
  j->depth = 0;
  j->error = 0;
  j->after_key = 0;
  for (int i = 0; i < ATC_JSON_MAX_DEPTH; i++) j->has_items[i] = 0;
}

static void newline_indent(atc_json *j) {
  if (!j->pretty) return;
  fputc('\n', j->out);
  for (int i = 0; i < j->depth; i++) fputs("  ", j->out);
}

/* Before any value or key: the comma and line break that separate it from the previous item. */
static void before_item(atc_json *j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->depth == 0) return;
  if (j->depth > ATC_JSON_MAX_DEPTH) {
    j->error = 1;
    return;
  }
  if (j->has_items[j->depth - 1]) fputc(',', j->out);
  j->has_items[j->depth - 1] = 1;
  newline_indent(j);
}

static void open_container(atc_json *j, int c) {
  before_item(j);
  fputc(c, j->out);
  j->depth++;
  if (j->depth <= ATC_JSON_MAX_DEPTH)
    j->has_items[j->depth - 1] = 0;
  else
    j->error = 1;
}

static void close_container(atc_json *j, int c) {
  if (j->depth == 0 || j->after_key) {
    j->error = 1;
    return;
  }
  int had_items = j->depth <= ATC_JSON_MAX_DEPTH && j->has_items[j->depth - 1];
  j->depth--;
  if (had_items) newline_indent(j);
  fputc(c, j->out);
}

void atc_json_object_begin(atc_json *j) { open_container(j, '{'); }
void atc_json_object_end(atc_json *j) { close_container(j, '}'); }
void atc_json_array_begin(atc_json *j) { open_container(j, '['); }
void atc_json_array_end(atc_json *j) { close_container(j, ']'); }

/* Length of the valid UTF-8 sequence starting at s[0] (at most n bytes), or 0 if invalid:
 * no overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629). */
static size_t utf8_sequence(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t len;
  unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;      /* overlong */
    if (c == 0xED) hi = 0x9F;      /* surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;      /* overlong */
    if (c == 0xF4) hi = 0x8F;      /* above U+10FFFF */
  } else {
    return 0;
  }
  if (n < len) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

static void write_escaped(FILE *out, const unsigned char *s, size_t n) {
  fputc('"', out);
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    if (c >= 0x80) {
      size_t len = utf8_sequence(s + i, n - i);
      if (len) {
        fwrite(s + i, 1, len, out);
        i += len;
      } else {
        fputs("\\ufffd", out); /* one replacement character per invalid byte */
        i++;
      }
      continue;
    }
    switch (c) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\b': fputs("\\b", out); break;
    case '\f': fputs("\\f", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
      if (c < 0x20 || c == 0x7F)
        fprintf(out, "\\u%04x", c);
      else
        fputc((int)c, out);
    }
    i++;
  }
  fputc('"', out);
}

void atc_json_key(atc_json *j, const char *key) {
  if (j->depth == 0 || j->after_key) j->error = 1;
  before_item(j);
  write_escaped(j->out, (const unsigned char *)key, strlen(key));
  fputs(j->pretty ? ": " : ":", j->out);
  j->after_key = 1;
}

void atc_json_string_n(atc_json *j, const char *s, size_t n) {
  before_item(j);
  write_escaped(j->out, (const unsigned char *)s, n);
}

void atc_json_string(atc_json *j, const char *s) {
  if (!s) {
    atc_json_null(j);
    return;
  }
  atc_json_string_n(j, s, strlen(s));
}

void atc_json_uint(atc_json *j, uint64_t v) {
  before_item(j);
  fprintf(j->out, "%" PRIu64, v);
}

void atc_json_int(atc_json *j, int64_t v) {
  before_item(j);
  fprintf(j->out, "%" PRId64, v);
}

void atc_json_double(atc_json *j, double v) {
  if (!isfinite(v)) {
    atc_json_null(j);
    return;
  }
  before_item(j);
  /* %.17g round-trips but prints noise; 9 significant digits are plenty for timings. A value
   * printed without '.' or exponent is still a valid JSON number. */
  fprintf(j->out, "%.9g", v);
}

void atc_json_bool(atc_json *j, int v) {
  before_item(j);
  fputs(v ? "true" : "false", j->out);
}

void atc_json_null(atc_json *j) {
  before_item(j);
  fputs("null", j->out);
}

void atc_json_member_string(atc_json *j, const char *key, const char *s) {
  atc_json_key(j, key);
  atc_json_string(j, s);
}

void atc_json_member_uint(atc_json *j, const char *key, uint64_t v) {
  atc_json_key(j, key);
  atc_json_uint(j, v);
}

int atc_json_finish(atc_json *j) {
  if (j->depth != 0 || j->after_key) j->error = 1;
  fputc('\n', j->out);
  if (fflush(j->out) != 0 || ferror(j->out)) return -1;
  return j->error ? -1 : 0;
}
