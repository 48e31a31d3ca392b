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
