/* Compiled as C99 and C++ with -pedantic -Werror: the public headers must stay clean. */
#include <atomicity.h>
#include <atomicity/checker.h> /* the compatibility header next to the one it forwards to */
#include <atomicity/sys/checker.h>

int atom_abi_header_probe(void);
int atom_abi_header_probe(void) {
  atom_event ev = {ATOM_READ, 0, 1, 2, 3};
  return (int)ev.kind + (int)sizeof(atom_options) + (int)sizeof(atom_checker);
}
