#include "atomicity/version.h"

ATOM_API const char *atom_version(void) { return ATOM_VERSION_STRING; }

ATOM_API unsigned atom_version_number(void) { return ATOM_VERSION_NUMBER; }
