/*
 * ddl.h — schema and table DDL on a lake, inside the open transaction.
 *
 * Each function edits the transaction's working catalog model and appends
 * the catalog rows DuckLake writes for the same change (ids from the
 * snapshot counters, paths from the names, change tokens). Validation
 * happens before anything is recorded, so a failed call changes nothing.
 */
#ifndef TARN_LAKE_DDL_H
#define TARN_LAKE_DDL_H

#include "lake/lake.h"

int lk_create_schema(lk_lake *lake, duckdb_connection con, const char *name, int if_not_exists);
int lk_drop_schema(lk_lake *lake, duckdb_connection con, const char *name, int if_exists,
                   int cascade);

/* Creates table schema.name with the columns of DuckDB table `shape`
 * (a TEMP table whose column types, defaults and NOT NULL flags become the
 * lake table's). *table_id gets the new id. */
int lk_create_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                    const char *shape, int64_t *table_id);
int lk_drop_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                  int if_exists);

#endif
