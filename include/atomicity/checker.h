/**
 * @file atomicity/checker.h
 * @brief Compatibility header: the plugin interface now lives in <atomicity/sys/checker.h>.
 *
 * Kept so that checkers written against 0.3 and earlier still build; new code includes
 * <atomicity/sys/checker.h> directly.
 */
#include "atomicity/sys/checker.h"
