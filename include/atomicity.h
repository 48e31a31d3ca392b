/**
 * @file atomicity.h
 * @brief libatomicity: finds atomicity violations in concurrent executions.
 *
 * The only header users include. See doc/api.md for an overview. Checker authors also include
 * <atomicity/sys/checker.h>, the plugin layer (doc/plugins.md).
 */
#ifndef ATOMICITY_H
#define ATOMICITY_H

#include "atomicity/common.h"
#include "atomicity/version.h"
#include "atomicity/error.h"
#include "atomicity/event.h"
#include "atomicity/report.h"
#include "atomicity/location.h"
#include "atomicity/output.h"
#include "atomicity/session.h"
#include "atomicity/trace.h"

#endif
