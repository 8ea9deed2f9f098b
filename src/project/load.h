/*
 * load.h — reading a project folder into a tarn_project.
 *
 * project_load() reads config/, models/ and tests/, checks every model
 * (annotations, body, output columns, what config/ may write) and orders
 * the models into a graph; every problem found is reported at once.
 */
#ifndef TARN_PROJECT_LOAD_H
#define TARN_PROJECT_LOAD_H

#include "project/project.h"

/* Loads the project in folder `dir` (paths in messages are relative to
 * it). `s` is a session used only for DuckDB's parser. Project errors are
 * TARN_EINVALID with every problem in the message. */
int project_load(tarn_project **out, const char *dir, tarn_session *s);

/* The same for target `target` (NULL: the default): config/targets/
 * TARGET.sql is run in place of config/catalog.sql (dbt's targets, SQLMesh's
 * environments: another lake, or another schema, for a developer). A
 * target without its file is an error listing the targets there are. */
int project_load_target(tarn_project **out, const char *dir, const char *target, tarn_session *s);

#endif
