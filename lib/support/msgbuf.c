#include "support/msgbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void atom__msg_append(char *buf, size_t size, size_t *off, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  atom__msg_vappend(buf, size, off, fmt, ap);
  va_end(ap);
}

void atom__msg_vappend(char *buf, size_t size, size_t *off, const char *fmt, va_list ap) {
  if (*off >= size) return;
  int n = vsnprintf(buf + *off, size - *off, fmt, ap);
  if (n < 0 || (size_t)n >= size - *off) {
    memcpy(buf + size - 4, "...", 4);
    *off = size;
  } else {
    *off += (size_t)n;
  }
}
