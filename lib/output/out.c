/* The buffered sink of every output format, and the escapes. */
#include "output/out.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "atomicity/error.h"
#include "support/assert.h"

void atom__out_init(atom__out *o, atom_write_fn fn, void *payload) {
  o->fn = fn;
  o->payload = payload;
  o->len = 0;
  o->failed = 0;
}

static void flush(atom__out *o) {
  if (o->len && !o->failed && o->fn(o->buf, o->len, o->payload) != 0) o->failed = 1;
  o->len = 0;
}

void atom__out_write(atom__out *o, const char *data, size_t len) {
  if (o->failed) return;
  if (len > sizeof o->buf - o->len) {
    flush(o);
    if (len >= sizeof o->buf) {
      if (!o->failed && o->fn(data, len, o->payload) != 0) o->failed = 1;
      return;
    }
  }
  ATOM__ASSERT(o->len <= sizeof o->buf && len <= sizeof o->buf - o->len);
  memcpy(o->buf + o->len, data, len);
  o->len += len;
}

void atom__out_puts(atom__out *o, const char *s) { atom__out_write(o, s, strlen(s)); }

void atom__out_printf(atom__out *o, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    atom__out_write(o, tmp, (size_t)n);
    return;
  }
  /* longer than the buffer: this output never formats such text, cut rather than allocate */
  atom__out_write(o, tmp, sizeof tmp - 1);
}

static size_t utf8_len(const unsigned char *p);

void atom__out_json_chars(atom__out *o, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    char esc[8];
    switch (*p) {
    case '"': atom__out_write(o, "\\\"", 2); break;
    case '\\': atom__out_write(o, "\\\\", 2); break;
    case '\n': atom__out_write(o, "\\n", 2); break;
    case '\r': atom__out_write(o, "\\r", 2); break;
    case '\t': atom__out_write(o, "\\t", 2); break;
    default:
      if (*p < 0x20 || *p == 0x7f) {
        snprintf(esc, sizeof esc, "\\u%04x", *p);
        atom__out_write(o, esc, 6);
      } else if (*p < 0x80) {
        atom__out_write(o, (const char *)p, 1);
      } else {
        /* The document must stay valid UTF-8 whatever bytes a name holds: a byte that starts
         * no valid sequence becomes U+FFFD; C1 controls are escaped. */
        size_t n = utf8_len(p);
        if (n) {
          atom__out_write(o, (const char *)p, n);
          p += n;
          continue;
        }
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
          snprintf(esc, sizeof esc, "\\u%04x", p[1]);
          atom__out_write(o, esc, 6);
          p += 2;
          continue;
        }
        atom__out_write(o, "\xef\xbf\xbd", 3);
      }
    }
    p++;
  }
}

void atom__out_html_chars(atom__out *o, const char *s) {
  for (const char *p = s; *p; p++) {
    switch (*p) {
    case '&': atom__out_puts(o, "&amp;"); break;
    case '<': atom__out_puts(o, "&lt;"); break;
    case '>': atom__out_puts(o, "&gt;"); break;
    case '"': atom__out_puts(o, "&quot;"); break;
    case '\'': atom__out_puts(o, "&#39;"); break;
    default: atom__out_write(o, p, 1);
    }
  }
}

/* Length of the valid UTF-8 sequence at p (2..4), 0 if there is none. C1 controls (U+0080 to
 * U+009F) count as invalid here: some terminals act on them. Overlong forms, surrogates
 * (U+D800 to U+DFFF) and code points above U+10FFFF are not UTF-8 (RFC 3629): the second
 * byte's range after E0, ED, F0 and F4 excludes them. */
static size_t utf8_len(const unsigned char *p) {
  if (p[0] >= 0xc2 && p[0] <= 0xdf) {
    if ((p[1] & 0xc0) != 0x80 || (p[0] == 0xc2 && p[1] < 0xa0)) return 0;
    return 2;
  }
  size_t n = p[0] >= 0xe0 && p[0] <= 0xef ? 3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
  unsigned lo = p[0] == 0xe0 ? 0xa0 : p[0] == 0xf0 ? 0x90 : 0x80;
  unsigned hi = p[0] == 0xed ? 0x9f : p[0] == 0xf4 ? 0x8f : 0xbf;
  if (n && (p[1] < lo || p[1] > hi)) return 0;
  for (size_t i = 2; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  return n;
}

void atom__out_text_chars(atom__out *o, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    if (*p >= 0x20 && *p < 0x7f) {
      atom__out_write(o, (const char *)p++, 1);
      continue;
    }
    size_t n = *p >= 0x80 ? utf8_len(p) : 0;
    if (n) {
      atom__out_write(o, (const char *)p, n);
      p += n;
      continue;
    }
    atom__out_printf(o, "\\x%02X", *p++);
  }
}

int atom__out_close(atom__out *o) {
  flush(o);
  return o->failed ? ATOM_EIO : 0;
}
