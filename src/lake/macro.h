/*
 * macro.h — CREATE MACRO / DROP MACRO on a lake, inside the open transaction.
 *
 * DuckLake keeps macros in its catalog (ducklake_macro, ducklake_macro_impl,
 * ducklake_macro_parameters), so they survive a re-attach and follow time
 * travel (SNAPSHOT_VERSION). tarn keeps them in the catalog model and
 * creates each as a DuckDB macro in the lake's alias database, where
 * queries find it.
 */
#ifndef TARN_LAKE_MACRO_H
#define TARN_LAKE_MACRO_H

#include "lake/handle.h"
#include "util/buf.h"

/* Creates macro `def` (name, kind, implementations; copied) in `schema`.
 * Its id is taken at commit, after every other new object's, as DuckLake
 * numbers new macros. */
int lk_create_macro(lk_lake *lake, const char *schema, const lk_macro *def, int or_replace,
                    int if_not_exists);
/* DROP MACRO [TABLE] schema.name. */
int lk_drop_macro(lk_lake *lake, const char *schema, const char *name, int is_table, int if_exists);
/* DROP SCHEMA … CASCADE: the schema's macros go with it. */
int lk_drop_schema_macros(lk_lake *lake, int64_t schema_id, const char *schema);

/* At commit: numbers the transaction's new macros and records their rows
 * and change tokens. */
void lk_macro_commit(lk_txn *txn);

/* Appends CREATE OR REPLACE MACRO alias.schema.name … for DuckDB, from the
 * stored form (parameter types and defaults as DuckLake reads them back). */
void lk_macro_duckdb_sql(tarn_buf *b, const char *alias, const char *schema, const lk_macro *m);

#endif
