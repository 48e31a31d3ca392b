/* Setting the thread-local last-error message (internal). */
#ifndef ATOM_CORE_ERROR_H
#define ATOM_CORE_ERROR_H

#include <stdarg.h>

#include "atomicity/error.h"

/* Set atom_last_error() to the formatted message and return err. */
int atom__error(int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int atom__verror(int err, const char *fmt, va_list ap);

#endif
