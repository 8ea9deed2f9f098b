/*
 * cfgwrite.h — the rules config/ is held to at load (design §4: config/
 * prepares the session; models write the lake):
 *
 *   - no statement in config/ writes a lake: creating, altering, dropping,
 *     commenting on or writing rows of a lake object (by its lake-qualified
 *     name, or after a USE of the lake), or calling a ducklake_* function
 *     that writes (maintenance, options). Each is an error at its
 *     file:line, with the remedy (a model, or a manual model);
 *   - no model builds a name config/ defines (a view or table outside the
 *     lake, such as raw.customers): reads of that name would find one or
 *     the other.
 */
#ifndef TARN_PROJECT_CFGWRITE_H
#define TARN_PROJECT_CFGWRITE_H

#include "project/diag.h"
#include "project/project.h"

void cfgwrite_check_lake_writes(const tarn_project *p, diag_list *d);
void cfgwrite_check_targets(const tarn_project *p, diag_list *d);

#endif
