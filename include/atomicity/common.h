/**
 * @file atomicity/common.h
 * @brief Export macro shared by every public header.
 *
 * Stability: stable.
 */
#ifndef ATOMICITY_COMMON_H
#define ATOMICITY_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(ATOM_BUILDING_LIBRARY) && defined(__GNUC__)
#define ATOM_API __attribute__((visibility("default")))
#else
#define ATOM_API
#endif

#endif
