/*
 * migrate.c — DuckLake catalog format upgrades (see migrate.h).
 *
 * The steps are DuckLake's own (MigrateV01 … MigrateV04 of the v1.5
 * extension, ducklake-format.md §1.3), run statement by statement so
 * that every result is checked:
 *
 *   0.1 → 0.2  path/path_is_relative on schemas and tables, metadata
 *              scope, data_file.mapping_id, the name-mapping tables,
 *              partition columns renumbered from positions to column ids
 *   0.2 → 0.3  name_mapping.is_partition, commit info on snapshot_changes,
 *              ducklake_schema_versions back-filled from the snapshots,
 *              file_column_statistics renamed to file_column_stats,
 *              extra_stats on both stats tables
 *   0.3 → 0.4  macro, sort and variant-stats tables, default_value_type
 *              ('literal') and default_value_dialect, schema versions per
 *              table, partial_file_info replaced by partial_max
 *   0.4 → 1.0  only the version string
 *
 * The dev strings 0.3-dev1 and 0.4-dev1 name catalogs that already have
 * part of the next version's schema; their step runs leniently (IF [NOT]
 * EXISTS, back-fill only when empty), as DuckLake does.
 *
 * Everything happens in one DuckDB transaction on the catalog database.
 * A dry run executes the same statements and rolls back, so its report
 * carries the real counts and proves the upgrade would go through.
 *
 * DuckDB refuses to COMMIT a transaction in which a table was UPDATEd and
 * then ALTERed ("another transaction has altered this table"), so within
 * each table every ALTER comes before any UPDATE — hence the temporary
 * copy of partial_file_info, taken before that column is dropped.
 */
#include "lake/migrate.h"

#include "duck/duck.h"
#include "tarn/error.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* A step in progress: where it runs and what it has done so far. */
typedef struct {
    lk_catdb *db;
    duckdb_connection con;
    const char *meta; /* quoted catalog name (lk_catdb_name) */
    int lenient;      /* dev version: parts may already exist */
    tarn_buf line;    /* this step's report line, being built */
} mig;

typedef int (*step_fn)(mig *m);

/* Expands a statement template: {M} is the catalog, {INE} "IF NOT EXISTS"
 * and {IE} "IF EXISTS" when lenient (else nothing). */
static char *expand(const mig *m, const char *tmpl)
{
    tarn_buf b = {0};
    for (const char *p = tmpl; *p;) {
        if (strncmp(p, "{M}", 3) == 0) {
            buf_puts(&b, m->meta);
            p += 3;
        } else if (strncmp(p, "{INE}", 5) == 0) {
            buf_puts(&b, m->lenient ? "IF NOT EXISTS " : "");
            p += 5;
        } else if (strncmp(p, "{IE}", 4) == 0) {
            buf_puts(&b, m->lenient ? "IF EXISTS " : "");
            p += 4;
        } else {
            buf_putc(&b, *p++);
        }
    }
    return buf_detach(&b);
}

/* Runs one templated statement; *changed (optional) gets the row count. */
static int run(mig *m, const char *tmpl, int64_t *changed)
{
    char *sql = expand(m, tmpl);
    int rc = lk_catdb_exec_count(m->db, m->con, sql, changed);
    if (rc)
        tarn_error_prefix(rc, "%s", sql);
    free(sql);
    return rc;
}

static int run_all(mig *m, const char *const *tmpls, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = run(m, tmpls[i], NULL);
        if (rc)
            return rc;
    }
    return 0;
}

#define RUN_ALL(m, arr) run_all((m), (arr), sizeof(arr) / sizeof((arr)[0]))

static int count(mig *m, const char *tmpl, int64_t *out)
{
    char *sql = expand(m, tmpl);
    int rc = lk_catdb_query_int64(out, NULL, m->db, m->con, sql);
    if (rc)
        tarn_error_prefix(rc, "%s", sql);
    free(sql);
    return rc;
}

/* Appends one clause to the step's report line. */
static void note(mig *m, const char *text)
{
    if (m->line.len)
        buf_puts(&m->line, "; ");
    buf_puts(&m->line, text);
}

/* Same, for a clause with one count in it (`fmt` has one %lld). */
static void note_n(mig *m, const char *fmt, int64_t n)
{
    if (m->line.len)
        buf_puts(&m->line, "; ");
    buf_printf(&m->line, fmt, (long long)n);
}

/* 1 when `table` of the catalog has `column`, read from a zero-row scan's
 * column names (no catalog-name unquoting needed). */
static int has_column(mig *m, const char *table, const char *column)
{
    duck_table t;
    int rc = lk_catdb_queryf(&t, m->db, m->con, "SELECT * FROM %s.%s LIMIT 0", m->meta, table);
    if (rc)
        return rc;
    int found = 0;
    for (size_t c = 0; c < t.ncols; c++)
        found |= strcmp(t.names[c], column) == 0;
    duck_table_free(&t);
    return found;
}

static int set_version(mig *m, const char *to)
{
    tarn_buf b = {0};
    buf_puts(&b, "UPDATE {M}.ducklake_metadata SET \"value\" = ");
    quote_literal(&b, to);
    buf_puts(&b, " WHERE \"key\" = 'version'");
    int rc = run(m, buf_cstr(&b), NULL);
    buf_free(&b);
    if (!rc) {
        if (m->line.len)
            buf_puts(&m->line, "; ");
        buf_printf(&m->line, "version '%s'", to);
    }
    return rc;
}

/* ---- 0.1 → 0.2 ------------------------------------------------------------ */

static const char *const V01_DDL[] = {
    "ALTER TABLE {M}.ducklake_schema ADD COLUMN path VARCHAR DEFAULT ''",
    "ALTER TABLE {M}.ducklake_schema ADD COLUMN path_is_relative BOOLEAN DEFAULT TRUE",
    "ALTER TABLE {M}.ducklake_table ADD COLUMN path VARCHAR DEFAULT ''",
    "ALTER TABLE {M}.ducklake_table ADD COLUMN path_is_relative BOOLEAN DEFAULT TRUE",
    "ALTER TABLE {M}.ducklake_metadata ADD COLUMN \"scope\" VARCHAR",
    "ALTER TABLE {M}.ducklake_metadata ADD COLUMN scope_id BIGINT",
    "ALTER TABLE {M}.ducklake_data_file ADD COLUMN mapping_id BIGINT",
    "CREATE TABLE {M}.ducklake_column_mapping(mapping_id BIGINT, table_id BIGINT, \"type\" "
    "VARCHAR)",
    /* is_partition arrives with 0.3 */
    "CREATE TABLE {M}.ducklake_name_mapping(mapping_id BIGINT, column_id BIGINT, source_name "
    "VARCHAR, target_field_id BIGINT, parent_column BIGINT)",
};

/* 0.1 stored a partition key's column as its position among the table's
 * live top-level columns; 0.2 stores the column id. */
static const char V01_PARTITION[] =
    "UPDATE {M}.ducklake_partition_column SET column_id = (SELECT LIST(column_id ORDER BY "
    "column_order) FROM {M}.ducklake_column WHERE table_id = ducklake_partition_column.table_id "
    "AND parent_column IS NULL AND end_snapshot IS NULL)[ducklake_partition_column.column_id + 1]";

static int step_v01(mig *m)
{
    int rc = RUN_ALL(m, V01_DDL);
    if (rc)
        return rc;
    note(m, "ducklake_schema and ducklake_table gain path (''), path_is_relative (true)");
    note(m, "ducklake_metadata gains scope, scope_id");
    note(m, "ducklake_data_file gains mapping_id");
    note(m, "new tables ducklake_column_mapping, ducklake_name_mapping");
    int64_t n = 0;
    rc = run(m, V01_PARTITION, &n);
    if (rc)
        return rc;
    note_n(m, "%lld partition key column(s) renumbered to column ids", n);
    return set_version(m, "0.2");
}

/* ---- 0.2 → 0.3 ------------------------------------------------------------ */

static const char *const V02_DDL[] = {
    "ALTER TABLE {M}.ducklake_name_mapping ADD COLUMN {INE}is_partition BOOLEAN DEFAULT false",
    "ALTER TABLE {M}.ducklake_snapshot_changes ADD COLUMN {INE}author VARCHAR DEFAULT NULL",
    "ALTER TABLE {M}.ducklake_snapshot_changes ADD COLUMN {INE}commit_message VARCHAR DEFAULT "
    "NULL",
    "ALTER TABLE {M}.ducklake_snapshot_changes ADD COLUMN {INE}commit_extra_info VARCHAR "
    "DEFAULT NULL",
    "CREATE TABLE {INE}{M}.ducklake_schema_versions(begin_snapshot BIGINT, schema_version "
    "BIGINT)",
    "ALTER TABLE {IE}{M}.ducklake_file_column_statistics RENAME TO ducklake_file_column_stats",
    "ALTER TABLE {M}.ducklake_file_column_stats ADD COLUMN {INE}extra_stats VARCHAR DEFAULT NULL",
    "ALTER TABLE {M}.ducklake_table_column_stats ADD COLUMN {INE}extra_stats VARCHAR DEFAULT "
    "NULL",
};

/* One (first snapshot, schema_version) row per schema version ever used;
 * a dev catalog that already tracks them keeps its rows. */
static const char V02_BACKFILL[] =
    "INSERT INTO {M}.ducklake_schema_versions SELECT * FROM (SELECT MIN(snapshot_id), "
    "schema_version FROM {M}.ducklake_snapshot GROUP BY schema_version ORDER BY schema_version) t";
static const char V02_BACKFILL_IF_EMPTY[] =
    " WHERE NOT EXISTS (SELECT 1 FROM {M}.ducklake_schema_versions)";

static int step_v02(mig *m)
{
    int rc = RUN_ALL(m, V02_DDL);
    if (rc)
        return rc;
    note(m, "ducklake_name_mapping gains is_partition (false)");
    note(m, "ducklake_snapshot_changes gains author, commit_message, commit_extra_info");
    note(m, "ducklake_file_column_statistics renamed to ducklake_file_column_stats");
    note(m, "extra_stats on ducklake_file_column_stats and ducklake_table_column_stats");
    char *backfill = xasprintf("%s%s", V02_BACKFILL, m->lenient ? V02_BACKFILL_IF_EMPTY : "");
    int64_t n = 0;
    rc = run(m, backfill, &n);
    free(backfill);
    if (rc)
        return rc;
    note_n(m, "new table ducklake_schema_versions, %lld row(s) back-filled from the snapshots", n);
    return set_version(m, "0.3");
}

/* ---- 0.3 → 0.4 ------------------------------------------------------------ */

static const char *const V03_DDL[] = {
    "CREATE TABLE {INE}{M}.ducklake_macro(schema_id BIGINT, macro_id BIGINT, macro_name "
    "VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT)",
    "CREATE TABLE {INE}{M}.ducklake_macro_impl(macro_id BIGINT, impl_id BIGINT, dialect "
    "VARCHAR, \"sql\" VARCHAR, \"type\" VARCHAR)",
    "CREATE TABLE {INE}{M}.ducklake_macro_parameters(macro_id BIGINT, impl_id BIGINT, column_id "
    "BIGINT, parameter_name VARCHAR, parameter_type VARCHAR, default_value VARCHAR, "
    "default_value_type VARCHAR)",
    "CREATE TABLE {INE}{M}.ducklake_sort_info(sort_id BIGINT, table_id BIGINT, begin_snapshot "
    "BIGINT, end_snapshot BIGINT)",
    "CREATE TABLE {INE}{M}.ducklake_sort_expression(sort_id BIGINT, table_id BIGINT, "
    "sort_key_index BIGINT, expression VARCHAR, dialect VARCHAR, sort_direction VARCHAR, "
    "null_order VARCHAR)",
    "CREATE TABLE {INE}{M}.ducklake_file_variant_stats(data_file_id BIGINT, table_id BIGINT, "
    "column_id BIGINT, variant_path VARCHAR, shredded_type VARCHAR, column_size_bytes BIGINT, "
    "value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan "
    "BOOLEAN, extra_stats VARCHAR)",
    "ALTER TABLE {M}.ducklake_column ADD COLUMN {INE}default_value_type VARCHAR DEFAULT "
    "'literal'",
    "ALTER TABLE {M}.ducklake_column ADD COLUMN {INE}default_value_dialect VARCHAR DEFAULT NULL",
    "ALTER TABLE {M}.ducklake_schema_versions ADD COLUMN {INE}table_id BIGINT",
    "ALTER TABLE {M}.ducklake_data_file ADD COLUMN {INE}partial_max BIGINT",
    "ALTER TABLE {M}.ducklake_delete_file ADD COLUMN {INE}partial_max BIGINT",
};

/* partial_file_info is either `partial_max:<snapshot>` (kept as
 * partial_max) or 0.3's legacy per-snapshot row limits (dropped, as
 * DuckLake drops them). The values are copied out first because the
 * column must be dropped before the table is updated (see the top). */
static const char *const V03_PARTIAL[] = {
    "CREATE TEMP TABLE __tarn_migrate_partial_max AS SELECT data_file_id, "
    "TRY_CAST(regexp_extract(partial_file_info, 'partial_max:(\\d+)', 1) AS BIGINT) AS "
    "partial_max FROM {M}.ducklake_data_file WHERE partial_file_info IS NOT NULL AND "
    "partial_file_info LIKE '%partial_max:%'",
    "ALTER TABLE {M}.ducklake_data_file DROP COLUMN partial_file_info",
};
static const char V03_PARTIAL_SET[] =
    "UPDATE {M}.ducklake_data_file AS df SET partial_max = m.partial_max FROM "
    "__tarn_migrate_partial_max m WHERE df.data_file_id = m.data_file_id";
static const char V03_PARTIAL_DROP[] = "DROP TABLE temp.__tarn_migrate_partial_max";

/* Schema versions become per table: each global row becomes one row per
 * table alive at its snapshot (DuckLake's join, end inclusive; DISTINCT
 * because a renamed table has several ducklake_table rows). */
static const char V03_SV_EXPAND[] =
    "INSERT INTO {M}.ducklake_schema_versions (table_id, begin_snapshot, schema_version) "
    "SELECT DISTINCT t.table_id, sv.begin_snapshot, sv.schema_version FROM "
    "{M}.ducklake_schema_versions sv JOIN {M}.ducklake_table t ON sv.begin_snapshot BETWEEN "
    "t.begin_snapshot AND COALESCE(t.end_snapshot, sv.begin_snapshot) WHERE sv.table_id IS NULL";
static const char V03_SV_GLOBAL_DROP[] =
    "DELETE FROM {M}.ducklake_schema_versions WHERE table_id IS NULL";

static int v03_partial_max(mig *m)
{
    int has = has_column(m, "ducklake_data_file", "partial_file_info");
    if (has < 0)
        return has;
    if (!has) /* a 0.4-dev1 catalog may have dropped it already */
        return 0;
    int rc = RUN_ALL(m, V03_PARTIAL);
    int64_t n = 0;
    if (!rc)
        rc = run(m, V03_PARTIAL_SET, &n);
    if (!rc)
        rc = run(m, V03_PARTIAL_DROP, NULL);
    if (!rc)
        note_n(m, "ducklake_data_file.partial_file_info replaced by partial_max (%lld file(s) set)",
               n);
    return rc;
}

static int v03_schema_versions(mig *m)
{
    int64_t added = 0, removed = 0;
    int rc = run(m, V03_SV_EXPAND, &added);
    if (!rc)
        rc = run(m, V03_SV_GLOBAL_DROP, &removed);
    if (rc)
        return rc;
    note_n(m, "ducklake_schema_versions per table: %lld row(s)", added);
    buf_printf(&m->line, " replace %lld global one(s)", (long long)removed);
    return 0;
}

static int step_v03(mig *m)
{
    int rc = RUN_ALL(m, V03_DDL);
    if (rc)
        return rc;
    note(m, "new tables ducklake_macro, ducklake_macro_impl, ducklake_macro_parameters, "
            "ducklake_sort_info, ducklake_sort_expression, ducklake_file_variant_stats");
    int64_t n = 0;
    rc = count(m, "SELECT count(*) FROM {M}.ducklake_column", &n);
    if (!rc)
        rc = run(m,
                 "UPDATE {M}.ducklake_column SET default_value_type = 'literal' WHERE "
                 "default_value_type IS NULL",
                 NULL);
    if (rc)
        return rc;
    note_n(m,
           "ducklake_column gains default_value_type ('literal' on its %lld row(s)) and "
           "default_value_dialect",
           n);
    note(m, "ducklake_delete_file gains partial_max");
    rc = v03_partial_max(m);
    if (!rc)
        rc = v03_schema_versions(m);
    if (!rc)
        rc = set_version(m, "0.4");
    return rc;
}

/* ---- 0.4 → 1.0: no schema change ------------------------------------------ */

static int step_v04(mig *m)
{
    return set_version(m, "1.0");
}

/* ---- the chain ------------------------------------------------------------ */

static const struct {
    const char *from, *to;
    step_fn run;
    int lenient;
} STEPS[] = {
    {"0.1", "0.2", step_v01, 0}, {"0.2", "0.3", step_v02, 0},      {"0.3-dev1", "0.3", step_v02, 1},
    {"0.3", "0.4", step_v03, 0}, {"0.4-dev1", "0.4", step_v03, 1}, {"0.4", "1.0", step_v04, 0},
};

#define NSTEPS (sizeof(STEPS) / sizeof(STEPS[0]))
#define KNOWN_VERSIONS "0.1, 0.2, 0.3-dev1, 0.3, 0.4-dev1, 0.4, 1.0"

static int find_step(const char *from)
{
    for (size_t i = 0; i < NSTEPS; i++)
        if (strcmp(STEPS[i].from, from) == 0)
            return (int)i;
    return -1;
}

static int known_version(const char *v)
{
    return strcmp(v, "1.0") == 0 || find_step(v) >= 0;
}

/* The version stored in the catalog, read inside the transaction so that
 * a concurrent upgrade is noticed. 0.1 has no scope column, hence no
 * scope filter: a scoped `version` row is not something DuckLake writes. */
static int stored_version(lk_catdb *db, duckdb_connection con, char **out)
{
    return lk_catdb_query_stringf(
        out, db, con,
        "SELECT \"value\" FROM %s.ducklake_metadata WHERE \"key\" = 'version' LIMIT 1",
        lk_catdb_name(db));
}

/* Runs every step from `from` up to 1.0, one report line each. */
static int run_chain(lk_catdb *db, duckdb_connection con, const char *from, tarn_buf *report)
{
    const char *v = from;
    while (strcmp(v, "1.0") != 0) {
        int i = find_step(v);
        mig m = {.db = db, .con = con, .meta = lk_catdb_name(db), .lenient = STEPS[i].lenient};
        int rc = STEPS[i].run(&m);
        if (rc) {
            buf_free(&m.line);
            return tarn_error_prefix(rc, "upgrading DuckLake %s to %s", STEPS[i].from, STEPS[i].to);
        }
        if (report)
            buf_printf(report, "%s -> %s: %s%s\n", STEPS[i].from, STEPS[i].to,
                       m.lenient ? "(dev catalog: what is already in place is kept) " : "",
                       buf_cstr(&m.line));
        buf_free(&m.line);
        v = STEPS[i].to;
    }
    return 0;
}

/* Checks the stored version is `from` before and 1.0 after the chain. */
static int migrate_in_txn(lk_catdb *db, duckdb_connection con, const char *from, tarn_buf *report)
{
    char *v = NULL;
    int rc = stored_version(db, con, &v);
    if (!rc && (!v || strcmp(v, from) != 0))
        rc = tarn_error_set(TARN_ECONFLICT,
                            "the catalog's version is %s, not %s (changed by another process?)",
                            v ? v : "(null)", from);
    free(v);
    v = NULL;
    if (!rc)
        rc = run_chain(db, con, from, report);
    if (!rc)
        rc = stored_version(db, con, &v);
    if (!rc && (!v || strcmp(v, "1.0") != 0))
        rc = tarn_error_set(TARN_ERROR, "after the upgrade the catalog's version is %s, not 1.0",
                            v ? v : "(null)");
    free(v);
    return rc;
}

/* 1 when the connection is inside an explicit transaction: there every
 * statement shares one transaction id, in auto-commit each has its own.
 * (The C API has no such query, and a BEGIN there would abort the
 * caller's transaction.) */
static int in_open_transaction(duckdb_connection con)
{
    int64_t a = 0, b = 0;
    int rc = duck_query_int64(&a, NULL, con, "SELECT txid_current()");
    if (!rc)
        rc = duck_query_int64(&b, NULL, con, "SELECT txid_current()");
    return rc ? rc : a == b;
}

int lk_migrate(lk_catdb *db, duckdb_connection con, const char *from, int dry_run, tarn_buf *report)
{
    if (!from || !known_version(from))
        return tarn_error_set(
            TARN_EUNSUPPORTED,
            "DuckLake catalog version %s is not supported: only versions " KNOWN_VERSIONS
            " can be upgraded",
            from ? from : "(none)");
    if (strcmp(from, "1.0") == 0)
        return 0;
    int rc = in_open_transaction(con);
    if (rc > 0)
        return tarn_error_set(TARN_EUNSUPPORTED,
                              "the DuckLake %s catalog cannot be upgraded inside an open "
                              "transaction (the upgrade is a transaction of its own): attach it "
                              "before BEGIN, or run `tarn lake upgrade`",
                              from);
    if (!rc)
        rc = lk_catdb_begin(db, con);
    if (rc)
        return tarn_error_prefix(rc, "upgrading the DuckLake catalog");
    tarn_buf lines = {0};
    rc = migrate_in_txn(db, con, from, &lines);
    if (rc || dry_run) {
        /* keep the first error: a failed ROLLBACK adds nothing useful */
        char *msg = rc ? xstrdup(tarn_error_last()) : NULL;
        int rb = lk_catdb_rollback(db, con);
        if (rc)
            tarn_error_set(rc, "%s", msg);
        else
            rc = rb;
        free(msg);
    } else {
        rc = lk_catdb_commit(db, con);
        if (rc)
            tarn_error_prefix(rc, "committing the DuckLake %s -> 1.0 upgrade", from);
    }
    if (!rc && report)
        buf_puts(report, buf_cstr(&lines));
    buf_free(&lines);
    return rc;
}
