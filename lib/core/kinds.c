/* Facts about event kinds, from the one kind table of atomicity/event.h. */
#include "atomicity/event.h"

ATOM_API const char *atom_kind_name(int kind) {
  switch (kind) {
#define ATOM_KIND_TEXT_(name, value, text, op) \
  case value: return text;
    ATOM_KIND_MAP(ATOM_KIND_TEXT_)
#undef ATOM_KIND_TEXT_
    default: return NULL;
  }
}

ATOM_API int atom_kind_space(uint32_t kind) {
  switch (kind) {
    case ATOM_READ: case ATOM_WRITE: case ATOM_COMMIT: return ATOM_SPACE_VAR;
    case ATOM_ACQUIRE: case ATOM_RELEASE: return ATOM_SPACE_LOCK;
    case ATOM_FORK: case ATOM_JOIN: return ATOM_SPACE_THREAD;
    default: return 0;
  }
}
