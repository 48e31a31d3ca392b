/* Building one-line report messages in a fixed buffer (internal). */
#ifndef ATOM_SUPPORT_MSGBUF_H
#define ATOM_SUPPORT_MSGBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Append printf-style text at *off in buf[size]; when it does not fit, end the buffer with
 * "..." and set *off to size (later appends do nothing). size must be at least 4. */
void atom__msg_append(char *buf, size_t size, size_t *off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
void atom__msg_vappend(char *buf, size_t size, size_t *off, const char *fmt, va_list ap);

#endif
