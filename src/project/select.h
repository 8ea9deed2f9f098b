/*
 * select.h — dbt's model selector grammar.
 *
 * A selector is a union of its space-separated parts (several arguments,
 * or one quoted "a b"); a part is an intersection of its comma-separated
 * atoms (`tag:nightly,marts.orders+`); an atom is a method with graph
 * operators around it:
 *
 *   name        a model by schema.table, by its table name when that is
 *               unambiguous, or by its file path (models/x/y.sql); * and ?
 *               match as in a shell (`marts.*`)
 *   tag:x       models with '-- tags x'
 *   path:dir    models whose file is under dir (with or without models/),
 *               or that file
 *   strategy:s  models built by strategy s (replace, merge, append,
 *               history, incremental, partitioned, manual)
 *   +atom       and everything upstream of it; N+atom: N levels up
 *   atom+       and everything downstream of it; atom+N: N levels down
 *   @atom       its models, everything downstream of them, and everything
 *               upstream of those (what a rebuild of it needs)
 *
 * Exclusions (--exclude) take the same grammar and are removed from the
 * selection. No selector selects every model.
 */
#ifndef TARN_PROJECT_SELECT_H
#define TARN_PROJECT_SELECT_H

#include "project/project.h"

/* *out gets one byte per model (1 = selected; caller frees). An atom that
 * matches nothing is TARN_EINVALID naming it and the closest model (or
 * the tags, strategies there are); so is a selection that is empty. */
int select_models(unsigned char **out, const tarn_project *p, char *const *args, size_t nargs);

/* The same, minus the models `excl` selects (nexcl may be 0). */
int select_models_excluding(unsigned char **out, const tarn_project *p, char *const *args,
                            size_t nargs, char *const *excl, size_t nexcl);

#endif
