/* Rotation of an array in place (internal): how a cycle is told from a chosen edge on. */
#ifndef ATOM_SUPPORT_ROTATE_H
#define ATOM_SUPPORT_ROTATE_H

#include <stddef.h>

/* Rotate the n elements of `size` bytes at base left by k (k may exceed n): element k comes
 * first. Three reversals, no extra memory. */
void atom__rotate(void *base, size_t n, size_t size, size_t k);

#endif
