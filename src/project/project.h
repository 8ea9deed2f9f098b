/*
 * project.h — a loaded tarn project (design §4): its config statements,
 * its models with their annotations, statements, references and hashes,
 * and the DAG between them.
 *
 *   config/      DuckDB SQL run at the start of every build session, in the
 *                order catalog.sql, settings.sql, macros.sql, sources.sql,
 *                then the other files by name; ${VAR} expanded (env.h)
 *   models/      one model per .sql file; models/<schema>/…/<table>.sql
 *                builds <schema>.<table>, models/<table>.sql main.<table>,
 *                unless '-- materialize schema.table' names the target
 *   tests/       custom data tests (one query of violating rows each)
 *
 * Loading checks everything it can without touching the lake: the
 * annotation grammar, the shape of each model, that its query parses
 * (DuckDB's parser), that targets are unique and the DAG has no cycle.
 * Every problem is reported, each with file:line and a fix.
 */
#ifndef TARN_PROJECT_PROJECT_H
#define TARN_PROJECT_PROJECT_H

#include "project/annot.h"
#include "project/body.h"
#include "project/env.h"
#include "sql/lexer.h"
#include "tarn/session.h"
#include "util/strlist.h"

#include <stddef.h>

/* An upstream edge: the model read, and the line of the first reference. */
typedef struct {
    size_t model;
    int line;
} model_edge;

typedef struct {
    char *name; /* schema.table — the model's name and its target in the lake */
    char *schema;
    char *table;
    char *path; /* models/…/x.sql, relative to the project folder */
    char *text;
    model_annot annot;
    model_body body;
    char hash[65];  /* model hash (hash.h) */
    model_edge *up; /* models this one reads (no self-references) */
    size_t nup;
    size_t *down; /* models that read this one */
    size_t ndown;
    strlist sources; /* other tables it reads, as written (for plan/lineage) */
} tarn_model;

typedef struct {
    char *path;      /* config/x.sql */
    sql_stmt *stmts; /* after ${VAR} expansion */
    size_t nstmts;
} config_file;

typedef struct {
    char *dir;
    char *target; /* --target NAME (config/targets/NAME.sql in place of
                     config/catalog.sql), or NULL */
    config_file *config;
    size_t nconfig;
    char *lake_alias;   /* AS name of the ducklake ATTACH in config/ */
    char *lake_path;    /* what follows 'ducklake:' in that ATTACH */
    tarn_model *models; /* sorted by path */
    size_t nmodels;
    size_t *order; /* a topological order: upstream before downstream */
    strlist tests; /* tests/…sql */
    env_vars env;
} tarn_project;

void project_free(tarn_project *p);

/* The model building schema.table (case-insensitive), or -1. */
long project_find_model(const tarn_project *p, const char *schema, const char *table);

/* The model a table reference reads, or -1 (a source). */
long project_ref_model(const tarn_project *p, const table_ref *r);

/* The history model whose view <table>_current reference `r` reads, or
 * -1. Such a read is an edge of the DAG like a read of the table. */
long project_ref_current_view(const tarn_project *p, const table_ref *r);

#endif
