/**
 * @file atomicity/version.h
 * @brief Library version, as macros (compile time) and functions (run time).
 *
 * Stability: stable API and ABI.
 */
#ifndef ATOMICITY_VERSION_H
#define ATOMICITY_VERSION_H

#include "atomicity/common.h"

#define ATOM_VERSION_MAJOR 0
#define ATOM_VERSION_MINOR 1
#define ATOM_VERSION_PATCH 0
#define ATOM_VERSION_STRING "0.1.0"
/** Version as one number: major * 10000 + minor * 100 + patch. */
#define ATOM_VERSION_NUMBER \
  (ATOM_VERSION_MAJOR * 10000 + ATOM_VERSION_MINOR * 100 + ATOM_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @return the version string of the library actually loaded ("0.1.0"); static storage.
 * @since 0.1
 */
ATOM_API const char *atom_version(void);

/**
 * @return ATOM_VERSION_NUMBER of the library actually loaded.
 * @since 0.1
 */
ATOM_API unsigned atom_version_number(void);

#ifdef __cplusplus
}
#endif
#endif
