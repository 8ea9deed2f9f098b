/*
 * maintain_expire.c — ducklake_expire_snapshots (DuckLake §6.1): deletes
 * snapshots (never the newest), then every catalog row no remaining
 * snapshot can see: files that ended before any remaining snapshot began
 * (scheduled for deletion; maintain_cleanup.c deletes them), tables
 * dropped for good with everything they own, ended schema, view, tag and
 * macro rows. No snapshot is created.
 */
#include "duck/duck.h"
#include "lake/catdb.h"
#include "lake/lake.h"
#include "lake/maintain_int.h"
#include "lake/snapshots.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    char **v;
    size_t n;
} stmt_list;

static void add(stmt_list *l, char *sql)
{
    l->v = xrealloc(l->v, (l->n + 1) * sizeof(char *));
    l->v[l->n++] = sql;
}

static void stmts_free(stmt_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* "[2, 4]" (DuckDB's text of the list) → "2, 4", validated as integers. */
static int version_list(const mt_call *c, const char *text, char **out)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT COALESCE(string_agg(v::VARCHAR, ', '), '') FROM (SELECT unnest(CAST(");
    quote_literal(&q, text);
    buf_puts(&q, " AS UBIGINT[])) AS v) WHERE v IS NOT NULL");
    int rc = duck_query_string(out, c->con, buf_cstr(&q));
    buf_free(&q);
    return rc;
}

/* The WHERE clause choosing the snapshots to expire, or NULL (none). */
static int expire_filter(const mt_call *c, char **out)
{
    const char *versions = lk_args_named(c->a, "versions");
    const char *older = lk_args_named(c->a, "older_than");
    *out = NULL;
    if (versions && older)
        return tarn_error_set(TARN_EINVALID,
                              "cannot specify both 'versions' and 'older_than' parameters at the "
                              "same time. Please use only one criterion.");
    tarn_buf b = {0};
    buf_printf(&b, "snapshot_id <> (SELECT max(snapshot_id) FROM %s.ducklake_snapshot) AND ",
               c->lake->meta);
    if (versions) {
        char *list = NULL;
        int rc = version_list(c, versions, &list);
        if (rc || !list || !*list) {
            free(list);
            buf_free(&b);
            return rc;
        }
        buf_printf(&b, "snapshot_id IN (%s)", list);
        free(list);
    } else if (older) {
        buf_puts(&b, "snapshot_time < CAST(");
        quote_literal(&b, older);
        buf_puts(&b, " AS TIMESTAMPTZ)");
    } else {
        char *dflt = mt_option(c, "expire_older_than", -1, -1);
        if (!dflt) {
            buf_free(&b);
            return 0;
        }
        buf_puts(&b, "snapshot_time < now() - CAST(");
        quote_literal(&b, dflt);
        buf_puts(&b, " AS INTERVAL)");
        free(dflt);
    }
    *out = buf_detach(&b);
    return 0;
}

/* "no remaining snapshot lies in [begin_snapshot, end_snapshot)" */
static char *unreachable(const char *meta)
{
    return xasprintf("end_snapshot IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
                     "%s.ducklake_snapshot sn WHERE sn.snapshot_id >= begin_snapshot AND "
                     "sn.snapshot_id < end_snapshot)",
                     meta);
}

/* Tables whose every row is unreachable: dropped for good. */
static int dead_tables(const mt_call *c, char **out)
{
    const char *m = c->lake->meta;
    return lk_catdb_query_stringf(
        out, &c->lake->db, c->con,
        "SELECT COALESCE(string_agg(DISTINCT table_id::VARCHAR, ', '), '') FROM "
        "%s.ducklake_table t WHERE NOT EXISTS (SELECT 1 FROM %s.ducklake_table t2 "
        "WHERE t2.table_id = t.table_id AND (t2.end_snapshot IS NULL OR EXISTS "
        "(SELECT 1 FROM %s.ducklake_snapshot sn WHERE sn.snapshot_id >= "
        "t2.begin_snapshot AND sn.snapshot_id < t2.end_snapshot)))",
        m, m, m);
}

/* Schedules the files `where` selects from `table` (data or delete files)
 * and removes their rows from `also` tables keyed by `key`. */
static int drop_files(const mt_call *c, stmt_list *l, const char *table, const char *id_col,
                      const char *where, char **ids_out)
{
    const char *m = c->lake->meta;
    tarn_buf q = {0};
    buf_printf(&q, "SELECT f.%s, ", id_col);
    mt_file_path_sql(&q, c->lake, "f");
    buf_printf(&q, " FROM %s.%s f", m, table);
    mt_file_path_joins(&q, c->lake, "f");
    buf_printf(&q, " WHERE %s ORDER BY 1", where);
    duck_table r;
    int rc = lk_catdb_query(&r, &c->lake->db, c->con, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    tarn_buf ids = {0};
    for (size_t i = 0; i < r.nrows; i++) {
        int rel = 0;
        char *p = mt_data_relative(c->lake, duck_table_get(&r, i, 1), &rel);
        tarn_buf b = {0};
        buf_printf(&b, "INSERT INTO %s.ducklake_files_scheduled_for_deletion VALUES (%s, ", m,
                   duck_table_get(&r, i, 0));
        quote_literal(&b, p);
        buf_printf(&b, ", %s, now())", rel ? "true" : "false");
        add(l, buf_detach(&b));
        free(p);
        buf_printf(&ids, "%s%s", i ? ", " : "", duck_table_get(&r, i, 0));
    }
    duck_table_free(&r);
    *ids_out = buf_detach(&ids);
    return 0;
}

static int expire_files(const mt_call *c, stmt_list *l, const char *dead)
{
    const char *m = c->lake->meta;
    char *unreach =
        xasprintf("(f.end_snapshot IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
                  "%s.ducklake_snapshot sn WHERE sn.snapshot_id >= f.begin_snapshot AND "
                  "sn.snapshot_id < f.end_snapshot))",
                  m);
    char *where = *dead ? xasprintf("f.table_id IN (%s) OR %s", dead, unreach) : xstrdup(unreach);
    char *data_ids = NULL, *del_ids = NULL;
    int rc = drop_files(c, l, "ducklake_data_file", "data_file_id", where, &data_ids);
    free(where);
    if (!rc && *data_ids) {
        static const char *const TABLES[] = {"ducklake_data_file", "ducklake_file_column_stats",
                                             "ducklake_file_variant_stats",
                                             "ducklake_file_partition_value"};
        for (size_t i = 0; i < 4; i++)
            add(l,
                xasprintf("DELETE FROM %s.%s WHERE data_file_id IN (%s)", m, TABLES[i], data_ids));
    }
    if (!rc) {
        tarn_buf w = {0};
        if (*dead)
            buf_printf(&w, "f.table_id IN (%s) OR ", dead);
        if (*data_ids)
            buf_printf(&w, "f.data_file_id IN (%s) OR ", data_ids);
        buf_puts(&w, unreach);
        rc = drop_files(c, l, "ducklake_delete_file", "delete_file_id", buf_cstr(&w), &del_ids);
        buf_free(&w);
    }
    if (!rc && *del_ids)
        add(l, xasprintf("DELETE FROM %s.ducklake_delete_file WHERE delete_file_id IN (%s)", m,
                         del_ids));
    free(unreach);
    free(data_ids);
    free(del_ids);
    return rc;
}

static int expire_tables(const mt_call *c, stmt_list *l, const char *dead)
{
    const char *m = c->lake->meta;
    if (!*dead)
        return 0;
    duck_table r;
    int rc = lk_catdb_queryf(
        &r, &c->lake->db, c->con,
        "SELECT table_name FROM %s.ducklake_inlined_data_tables WHERE table_id IN "
        "(%s) UNION ALL SELECT 'ducklake_inlined_delete_' || table_id::VARCHAR FROM "
        "(SELECT DISTINCT table_id FROM %s.ducklake_table WHERE table_id IN (%s)) d",
        m, dead, m, dead);
    if (rc)
        return rc;
    static const char *const TABLES[] = {
        "ducklake_table",           "ducklake_table_stats",         "ducklake_table_column_stats",
        "ducklake_partition_info",  "ducklake_partition_column",    "ducklake_column",
        "ducklake_column_tag",      "ducklake_sort_info",           "ducklake_sort_expression",
        "ducklake_schema_versions", "ducklake_inlined_data_tables", "ducklake_column_mapping"};
    for (size_t i = 0; i < sizeof(TABLES) / sizeof(TABLES[0]); i++)
        add(l, xasprintf("DELETE FROM %s.%s WHERE table_id IN (%s)", m, TABLES[i], dead));
    for (size_t i = 0; i < r.nrows; i++) {
        tarn_buf b = {0};
        buf_printf(&b, "DROP TABLE IF EXISTS %s.", m);
        quote_ident(&b, duck_table_get(&r, i, 0));
        add(l, buf_detach(&b));
    }
    duck_table_free(&r);
    return 0;
}

static void expire_rest(const mt_call *c, stmt_list *l)
{
    const char *m = c->lake->meta;
    static const char *const TABLES[] = {"ducklake_schema", "ducklake_view", "ducklake_tag",
                                         "ducklake_macro"};
    char *unreach = unreachable(m);
    for (size_t i = 0; i < 4; i++)
        add(l, xasprintf("DELETE FROM %s.%s WHERE %s", m, TABLES[i], unreach));
    free(unreach);
    add(l, xasprintf("DELETE FROM %s.ducklake_macro_impl x WHERE NOT EXISTS (SELECT 1 FROM "
                     "%s.ducklake_macro y WHERE y.macro_id = x.macro_id)",
                     m, m));
    add(l, xasprintf("DELETE FROM %s.ducklake_macro_parameters x WHERE NOT EXISTS (SELECT 1 FROM "
                     "%s.ducklake_macro y WHERE y.macro_id = x.macro_id)",
                     m, m));
    add(l, xasprintf("DELETE FROM %s.ducklake_name_mapping x WHERE NOT EXISTS (SELECT 1 FROM "
                     "%s.ducklake_column_mapping y WHERE y.mapping_id = x.mapping_id)",
                     m, m));
}

/* The catalog statements of the expiry, decided after the snapshot rows
 * are gone (inside the catalog transaction, so the queries see it). */
static int expire_now(const mt_call *c, const char *filter)
{
    const char *m = c->lake->meta;
    int rc = lk_catdb_begin(&c->lake->db, c->con);
    char *sql = xasprintf("DELETE FROM %s.ducklake_snapshot_changes WHERE snapshot_id IN (SELECT "
                          "snapshot_id FROM %s.ducklake_snapshot WHERE %s)",
                          m, m, filter);
    if (!rc)
        rc = lk_catdb_exec(&c->lake->db, c->con, sql);
    free(sql);
    sql = xasprintf("DELETE FROM %s.ducklake_snapshot WHERE %s", m, filter);
    if (!rc)
        rc = lk_catdb_exec(&c->lake->db, c->con, sql);
    free(sql);
    stmt_list l = {0};
    char *dead = NULL;
    if (!rc)
        rc = dead_tables(c, &dead);
    if (!rc)
        rc = expire_files(c, &l, dead);
    if (!rc)
        rc = expire_tables(c, &l, dead);
    if (!rc)
        expire_rest(c, &l);
    for (size_t i = 0; !rc && i < l.n; i++)
        rc = lk_catdb_exec(&c->lake->db, c->con, l.v[i]);
    if (!rc)
        rc = lk_catdb_commit(&c->lake->db, c->con);
    else
        lk_catdb_rollback(&c->lake->db, c->con);
    free(dead);
    stmts_free(&l);
    return rc;
}

/* The expired snapshots as ducklake_snapshots() shows them, kept in a
 * TEMP table: they are gone by the time the statement reads them. */
static int snapshot_rows(const mt_call *c, const char *filter, char **out)
{
    char *sub = NULL;
    int rc = lk_snapshots_sql(&sub, c->lake, c->con);
    if (rc)
        return rc;
    tarn_buf name = {0}, b = {0};
    char *raw = xasprintf("__tarn_expired_%s", c->lake->alias);
    buf_puts(&name, "temp.main.");
    quote_ident(&name, raw);
    free(raw);
    buf_printf(&b,
               "CREATE OR REPLACE TEMP TABLE %s AS SELECT * FROM (%s) WHERE snapshot_id IN "
               "(SELECT snapshot_id FROM %s.ducklake_snapshot WHERE %s) ORDER BY snapshot_id",
               buf_cstr(&name) + strlen("temp.main."), sub, c->lake->meta,
               filter ? filter : "false");
    rc = lk_catdb_mixed_exec(&c->lake->db, c->con, buf_cstr(&b));
    free(sub);
    *out = rc ? NULL : xasprintf("SELECT * FROM %s", buf_cstr(&name));
    buf_free(&name);
    buf_free(&b);
    return rc;
}

int mt_expire_snapshots(char **out, const mt_call *c)
{
    static const char *const NAMED[] = {"versions", "older_than", "dry_run", NULL};
    int rc = mt_check_named(c, NAMED);
    if (!rc)
        rc = mt_non_null(c, "older_than");
    if (!rc)
        rc = mt_non_null(c, "dry_run");
    if (!rc)
        rc = mt_no_open_txn(c);
    char *filter = NULL;
    if (!rc)
        rc = expire_filter(c, &filter);
    if (!rc)
        rc = snapshot_rows(c, filter, out);
    if (!rc && filter && !mt_bool(c, "dry_run", 0))
        rc = expire_now(c, filter);
    if (!rc && filter)
        rc = lk_lake_reload(c->lake, c->con);
    free(filter);
    return rc;
}
