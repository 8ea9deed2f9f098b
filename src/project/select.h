/*
 * select.h — dbt-style model selectors.
 *
 *   name        a model by schema.table, by its table name when that is
 *               unambiguous, or by its file path (models/x/y.sql)
 *   +name       the model and everything upstream of it
 *   name+       the model and everything downstream of it
 *   +name+      both
 *   tag:x       models with '-- tags x'
 *   path:dir    models whose file is under dir (with or without models/)
 *
 * Several selectors select the union. None selects every model.
 */
#ifndef TARN_PROJECT_SELECT_H
#define TARN_PROJECT_SELECT_H

#include "project/project.h"

/* *out gets one byte per model (1 = selected; caller frees). A selector
 * that matches nothing is TARN_EINVALID naming it. */
int select_models(unsigned char **out, const tarn_project *p, char *const *args, size_t nargs);

#endif
