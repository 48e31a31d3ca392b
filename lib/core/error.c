#include "core/error.h"

#include <stdio.h>

#include "atomicity/event.h"

/* The detail of the last failure on this thread (STYLE practice 6). */
static _Thread_local char last_error[512];

int atom__verror(int err, const char *fmt, va_list ap) {
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  return err;
}

int atom__error(int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  atom__verror(err, fmt, ap);
  va_end(ap);
  return err;
}

ATOM_API const char *atom_last_error(void) { return last_error; }

ATOM_API const char *atom_strerror(int err) {
  switch (err) {
    case 0: return "success";
#define ATOM_ERROR_TEXT_(name, value, text) \
  case value: return text;
    ATOM_ERROR_MAP(ATOM_ERROR_TEXT_)
#undef ATOM_ERROR_TEXT_
    default: return "unknown error";
  }
}

ATOM_API const char *atom_error_name(int err) {
  switch (err) {
    case 0: return "ATOM_OK";
#define ATOM_ERROR_NAME_(name, value, text) \
  case value: return "ATOM_" #name;
    ATOM_ERROR_MAP(ATOM_ERROR_NAME_)
#undef ATOM_ERROR_NAME_
    default: return NULL;
  }
}
