/*
 * idorder.h — the order in which DuckLake numbers what a transaction creates.
 *
 * tarn takes catalog ids (schemas, tables, views, partition specs) from
 * next_catalog_id when a statement runs; DuckLake takes them at COMMIT, by
 * walking its transaction-local catalog sets, which are hash maps. The log
 * below records the operations DuckLake performs on those maps, in
 * statement order, and replays them at commit to tell which provisional id
 * DuckLake would have given first, second, … (see idorder.c).
 */
#ifndef TARN_LAKE_IDORDER_H
#define TARN_LAKE_IDORDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct lk_idorder lk_idorder;

lk_idorder *lk_idorder_new(void);
void lk_idorder_free(lk_idorder *o);

/* CREATE SCHEMA `schema`, which took provisional id `id`. */
void lk_idorder_schema_created(lk_idorder *o, const char *schema, int64_t id);
/* DROP SCHEMA of a schema (only matters when it was created here). */
void lk_idorder_schema_dropped(lk_idorder *o, const char *schema);

/* The entry `schema.name` (touched before) was created here, not altered. */
void lk_idorder_entry_created(lk_idorder *o, const char *schema, const char *name);

/* The order DuckLake lists schemas in changes_made: with tables 0, the
 * schemas created here (created_schema); with tables 1, the schemas of
 * the tables and views created here (created_table / created_view are
 * grouped by schema in this order). Names are borrowed; *out is owned by
 * the caller. */
size_t lk_idorder_change_schemas(const lk_idorder *o, int tables, const char ***out);

/* A table or view of `schema` was created or altered (CREATE, ALTER,
 * COMMENT, SET PARTITIONED BY): DuckLake puts an entry under its name. */
void lk_idorder_entry_touched(lk_idorder *o, const char *schema, const char *name);
/* The entry `schema.name` (touched before) took provisional id `id`. */
void lk_idorder_entry_id(lk_idorder *o, const char *schema, const char *name, int64_t id);
/* RENAME: the entry moves from `old_name` to `new_name`. */
void lk_idorder_entry_renamed(lk_idorder *o, const char *schema, const char *old_name,
                              const char *new_name);
/* DROP of a table or view. */
void lk_idorder_entry_dropped(lk_idorder *o, const char *schema, const char *name);

/* The provisional ids in the order DuckLake allocates them at commit
 * (schemas first, then the entries, each entry's ids in statement order).
 * *out is owned by the caller; returns the count. */
size_t lk_idorder_sequence(const lk_idorder *o, int64_t **out);

/* Macros. DuckLake numbers a transaction's new macros at commit after
 * everything else: the scalar macros, then the table macros, each by the
 * iteration order of its map of schema name -> map of macro names. */
void lk_idorder_macro_created(lk_idorder *o, int is_table, const char *schema, const char *name);
/* DROP of a macro created in this transaction (others are not in the maps). */
void lk_idorder_macro_dropped(lk_idorder *o, int is_table, const char *schema, const char *name);
/* The new macros of one kind in numbering order, as (schema, name) pairs
 * borrowed from `o`; the arrays are owned by the caller. */
size_t lk_idorder_macro_order(const lk_idorder *o, int is_table, const char ***schemas,
                              const char ***names);
/* The order DuckLake lists the schemas of created_scalar_macro /
 * created_table_macro changes in (a fresh map filled in iteration order). */
size_t lk_idorder_macro_change_schemas(const lk_idorder *o, int is_table, const char ***out);

/* DuckDB's case-insensitive string hash (exposed for the unit test). */
uint64_t lk_idorder_hash(const char *s);

/* The keys of a simulated map after inserting `keys` in order, as the
 * iteration would list them (for the unit test); *out borrows from keys. */
void lk_idorder_simulate(const char *const *keys, size_t n, const char ***out);

#endif
