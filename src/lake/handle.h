/*
 * handle.h — one attached DuckLake lake: its names, paths and options, the
 * committed catalog model at the session's snapshot, the open transaction,
 * and what it knows of the catalog besides the model (handle.c).
 *
 * Attaching a lake 'ducklake:PATH' AS alias brings two DuckDB databases
 * into the session's DuckDB instance:
 *   - the catalog file PATH, attached under an internal name
 *     (__ducklake_metadata_<alias>), holding the 28 ducklake_* tables and the
 *     inlined-data tables; tarn is the only code that reads or writes it;
 *   - an in-memory database named `alias`, holding one schema per lake
 *     schema and one view per lake table (views.h).
 *
 * This header is the bottom of the lake layer above the catalog model:
 * transactions, writes and scans use the handle; attaching, committing
 * with views and detaching are lake.h's.
 */
#ifndef TARN_LAKE_HANDLE_H
#define TARN_LAKE_HANDLE_H

#include "lake/catdb.h"
#include "lake/model.h"
#include "util/buf.h"
#include "util/strlist.h"

#include <duckdb.h>

typedef struct lk_txn lk_txn;
struct lk_lake;

/* Turns the query of a lake view of `schema` (its catalog tag already the
 * lake's name) into SQL a DuckDB view can hold: *out NULL when it needs
 * nothing. Set by the layer that knows DuckLake's read syntax (an
 * `AT (VERSION => n)` inside a view), which the lake does not parse. */
typedef int (*lk_view_rewriter)(void *ctx, char **out, struct lk_lake *lake, const char *schema,
                                const char *sql);

typedef struct lk_lake {
    char *alias;     /* the user's name for the lake */
    char *meta_name; /* name of the attached catalog database */
    int meta_hidden; /* not named by METADATA_CATALOG: listings leave it out, as in DuckLake */
    const char *meta; /* lk_catdb_name(&db): what qualifies a catalog table in SQL
                         ("catalog"[."METADATA_SCHEMA"]), owned by db */
    lk_catdb db;     /* the catalog database: every catalog statement goes through it */
    char *meta_path; /* catalog file path as given */
    char *data_path; /* data path as stored in ducklake_metadata ("data/") */
    char *data_abs;  /* data path resolved against the working directory */
    int read_only;
    int64_t pinned;       /* SNAPSHOT_VERSION / SNAPSHOT_TIME: fixed snapshot, or -1 */
    int64_t inline_limit; /* DATA_INLINING_ROW_LIMIT given at attach, or -1 */
    int write_dvs;        /* WRITE_DELETION_VECTORS given at attach (dvec.h) */
    lk_catalog cat;       /* the committed catalog at the session's snapshot */
    lk_txn *txn;          /* the open transaction, or NULL */
    int64_t *row_ids;     /* cached ducklake_table_stats.next_row_id per table id */
    int64_t *row_vals;    /* (as of lake->cat.snapshot_id) */
    size_t nrow_ids;
    struct lk_option *opts; /* the catalog's ducklake_metadata options (every */
    size_t nopts;           /* scope), read once (until options change) */
    int opts_loaded;
    int64_t setting_limit; /* ducklake_default_data_inlining_row_limit, */
    unsigned setting_gen;  /* as of this lk_settings_generation() */
    char **meta_tables;  /* sorted names of the catalog database's tables; */
    size_t nmeta_tables; /* loaded on first use, forgotten after each commit */
    int meta_tables_loaded;
    lk_catalog past[8];      /* catalogs at past snapshots read with AT (…), */
    size_t npast, past_next; /* kept until maintenance may rewrite history */
    int64_t *live;           /* snapshots known to exist (not expired) */
    size_t nlive;
    int64_t *sv_ids, *sv_at; /* per table: the snapshot of its last schema change */
    size_t nsv;
    int sv_loaded;
    struct lk_scan_cache *scans; /* tables' committed files, inlined tables (scan_cache.c) */
    int64_t *made_ids;           /* per table id: the statement that last built its view */
    char **made_sql;             /* (and its comments), to skip rebuilding it unchanged */
    size_t nmade;
    int64_t *broken_ids; /* tables whose view is the failing one of views.c (a data */
    size_t nbroken;      /* file could not be read): a pruned read must not skip it */
    int alias_macros;    /* views.c made DuckDB macros in the alias database (else a
                          * refresh need not look for any to drop: duckdb_functions()
                          * scans every function, 30-100 ms) */
    lk_view_rewriter view_rewrite; /* (NULL: views hold their queries as stored) */
    void *view_ctx;
    struct lk_lake *next;
} lk_lake;

/* Whether the catalog database has a table `name` (inlined-data and
 * inlined-deletion tables come and go): answered from a list read once
 * per commit, not a query per view. Tables a transaction creates appear
 * after its commit. */
int lk_lake_meta_table_exists(lk_lake *lake, duckdb_connection con, const char *name);

/* SQL: catalog row `a` (an alias) is live at a snapshot, given twice as
 * %lld: begin_snapshot <= S < end_snapshot (or end_snapshot NULL). */
#define LK_LIVE(a)                                                                                 \
    a ".begin_snapshot <= %lld AND (" a ".end_snapshot IS NULL OR " a ".end_snapshot > %lld)"

/* Appends "FROM <the inlined deletions of table_id> i JOIN <its data
 * files> d … WHERE d is live at s AND i.begin_snapshot <= s": the
 * deletions stored in the catalog that fall on live data files at
 * snapshot s. Appends nothing and returns 0 when the table has no
 * inlined-deletion table; 1 when it appended. */
int lk_lake_inlined_deletes_from(tarn_buf *b, lk_lake *lake, duckdb_connection con,
                                 int64_t table_id, long long s);

/* Applies a committed transaction's "+name" / "-name" operations to the
 * list (when it is loaded). */
void lk_lake_meta_tables_apply(lk_lake *lake, const strlist *ops);
/* Forgets the list of catalog tables (read again on next use): after a
 * statement that may have made or dropped one. */
void lk_lake_meta_tables_forget(lk_lake *lake);

/* The catalog as of committed snapshot `snap` (borrowed from the lake's
 * small cache of past catalogs: a snapshot's catalog never changes, and
 * builds read the same pinned snapshots statement after statement). */
int lk_lake_catalog_at(const lk_catalog **out, lk_lake *lake, duckdb_connection con, int64_t snap);

/* Whether snapshot `snap` exists (was not expired); remembered until
 * maintenance runs. */
int lk_lake_snapshot_exists(lk_lake *lake, duckdb_connection con, int64_t snap);

/* The snapshot in effect at time `when_sql` (an SQL expression of a
 * TIMESTAMPTZ, evaluated by the session's DuckDB first): the newest at or
 * before it, or with `after` the oldest at or after it (ties: by id).
 * TARN_ENOTFOUND when there is none (no error message set). */
int lk_lake_snapshot_at_time(int64_t *out, lk_lake *lake, duckdb_connection con,
                             const char *when_sql, int after);

/* Snapshot `snap` exists (this session just committed it). */
void lk_lake_snapshot_live(lk_lake *lake, int64_t snap);

/* The snapshot of table `table_id`'s last schema change (from
 * ducklake_schema_versions, read once and kept up to date by commits), or
 * -1 when unknown. */
int64_t lk_lake_schema_changed_at(lk_lake *lake, duckdb_connection con, int64_t table_id);

/* A commit at `snapshot` changed the schemas of tables `ids`. */
void lk_lake_schema_changed(lk_lake *lake, const int64_t *ids, size_t n, int64_t snapshot);

/* Forgets cached catalog options (after ducklake_set_option). */
void lk_lake_options_changed(lk_lake *lake);

/* Option `key` of scope `rank` (0 table, 1 schema, 2 global) and
 * `scope_id` is `value` in the open transaction: readers of the cached
 * options (the inlining limit) see it before the commit writes it. */
void lk_lake_option_pending(lk_lake *lake, duckdb_connection con, const char *key, int rank,
                            int64_t scope_id, const char *value);

/* The inlining row limit that applies to table `t` (the table, schema
 * or global ducklake_metadata option, else the attach option, else the
 * ducklake_default_data_inlining_row_limit setting, 10 by default). */
int64_t lk_lake_inline_limit(lk_lake *lake, duckdb_connection con, const lk_table *t);

/* The value of lake option `key` (ducklake_metadata) that applies to table
 * `t` (NULL: the global one): the table's, else its schema's, else the
 * global row. NULL when none is set; borrowed until options change. */
const char *lk_lake_option(lk_lake *lake, duckdb_connection con, const char *key,
                           const lk_table *t);

/* The value of option `key` set at exactly scope `rank` (0 table, 1
 * schema, 2 global) and `scope_id`; NULL when none is set there. */
const char *lk_lake_option_at(lk_lake *lake, duckdb_connection con, const char *key, int rank,
                              int64_t scope_id);

/* Absolute directory of a table's files (with trailing '/'). */
char *lk_lake_table_dir(lk_lake *lake, const lk_catalog *cat, const lk_table *t);

/* Forgets every fact above (read again when next needed). */
void lk_lake_facts_forget(lk_lake *lake);

#endif
