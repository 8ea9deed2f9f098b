/*
 * handle.c — what an attached lake knows of its catalog besides the
 * catalog model (see handle.h): the list of the catalog database's tables
 * (ducklake_* and the ducklake_inlined_* tables, which come and go), the
 * catalogs of past snapshots read with AT (…), which snapshots exist, the
 * snapshot of each table's last schema change (ducklake_schema_versions),
 * the data_inlining_row_limit options (ducklake_metadata) and where a
 * table's files live (ducklake_metadata data_path + ducklake_schema.path +
 * ducklake_table.path).
 *
 * Every fact is read on first use and kept until lk_lake_facts_forget();
 * commits keep them up to date through lk_lake_meta_tables_apply,
 * lk_lake_snapshot_live and lk_lake_schema_changed. Nothing here writes the
 * catalog.
 */
#include "lake/handle.h"

#include "duck/duck.h"
#include "lake/settings.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void lk_lake_meta_tables_forget(lk_lake *lake)
{
    for (size_t i = 0; i < lake->nmeta_tables; i++)
        free(lake->meta_tables[i]);
    free(lake->meta_tables);
    lake->meta_tables = NULL;
    lake->nmeta_tables = 0;
    lake->meta_tables_loaded = 0;
}

static void schema_versions_forget(lk_lake *lake)
{
    free(lake->sv_ids);
    free(lake->sv_at);
    lake->sv_ids = lake->sv_at = NULL;
    lake->nsv = 0;
    lake->sv_loaded = 0;
}

static void sv_set(lk_lake *lake, int64_t id, int64_t at)
{
    for (size_t i = 0; i < lake->nsv; i++)
        if (lake->sv_ids[i] == id) {
            lake->sv_at[i] = at;
            return;
        }
    lake->sv_ids = xrealloc(lake->sv_ids, (lake->nsv + 1) * sizeof(int64_t));
    lake->sv_at = xrealloc(lake->sv_at, (lake->nsv + 1) * sizeof(int64_t));
    lake->sv_ids[lake->nsv] = id;
    lake->sv_at[lake->nsv++] = at;
}

int64_t lk_lake_schema_changed_at(lk_lake *lake, duckdb_connection con, int64_t table_id)
{
    if (!lake->sv_loaded) {
        duck_table r;
        int rc =
            lk_catdb_queryf(&r, &lake->db, con,
                            "SELECT table_id, max(begin_snapshot) FROM %s.ducklake_schema_versions "
                            "WHERE table_id IS NOT NULL GROUP BY table_id",
                            lk_catdb_name(&lake->db));
        if (rc) {
            tarn_error_clear();
            return -1;
        }
        for (size_t i = 0; i < r.nrows; i++)
            sv_set(lake, duck_table_int64(&r, i, 0), duck_table_int64(&r, i, 1));
        duck_table_free(&r);
        lake->sv_loaded = 1;
    }
    for (size_t i = 0; i < lake->nsv; i++)
        if (lake->sv_ids[i] == table_id)
            return lake->sv_at[i];
    return -1;
}

void lk_lake_schema_changed(lk_lake *lake, const int64_t *ids, size_t n, int64_t snapshot)
{
    for (size_t i = 0; lake->sv_loaded && i < n; i++)
        sv_set(lake, ids[i], snapshot);
}

int lk_lake_snapshot_exists(lk_lake *lake, duckdb_connection con, int64_t snap)
{
    for (size_t i = 0; i < lake->nlive; i++)
        if (lake->live[i] == snap)
            return 1;
    int64_t n = 0;
    if (lk_catdb_query_int64f(&n, NULL, &lake->db, con,
                              "SELECT count(*) FROM %s.ducklake_snapshot WHERE snapshot_id = %lld",
                              lk_catdb_name(&lake->db), (long long)snap) != 0) {
        tarn_error_clear();
        n = 0;
    }
    if (n > 0)
        lk_lake_snapshot_live(lake, snap);
    return n > 0;
}

int lk_lake_snapshot_at_time(int64_t *out, lk_lake *lake, duckdb_connection con,
                             const char *when_sql, int after)
{
    /* evaluated apart, so the catalog query holds only a literal, whatever
     * database the catalog lives in */
    char *q = xasprintf("SELECT ((%s)::TIMESTAMPTZ)::VARCHAR", when_sql);
    char *when = NULL;
    int rc = duck_query_string(&when, con, q);
    free(q);
    if (!rc && !when)
        rc = TARN_ENOTFOUND;
    if (rc) {
        if (rc == TARN_ENOTFOUND)
            tarn_error_clear();
        return rc;
    }
    tarn_buf b = {0};
    buf_printf(&b, "SELECT snapshot_id FROM %s.ducklake_snapshot WHERE snapshot_time %s ",
               lake->meta, after ? ">=" : "<=");
    quote_literal(&b, when);
    buf_printf(&b, "::TIMESTAMPTZ ORDER BY snapshot_time %s, snapshot_id %s LIMIT 1",
               after ? "ASC" : "DESC", after ? "ASC" : "DESC");
    rc = lk_catdb_query_int64(out, NULL, &lake->db, con, buf_cstr(&b));
    if (rc == TARN_ENOTFOUND)
        tarn_error_clear();
    buf_free(&b);
    free(when);
    return rc;
}

void lk_lake_snapshot_live(lk_lake *lake, int64_t snap)
{
    lake->live = xrealloc(lake->live, (lake->nlive + 1) * sizeof(int64_t));
    lake->live[lake->nlive++] = snap;
}

static void past_forget(lk_lake *lake)
{
    free(lake->live);
    lake->live = NULL;
    lake->nlive = 0;
    for (size_t i = 0; i < lake->npast; i++)
        lk_catalog_free(&lake->past[i]);
    lake->npast = lake->past_next = 0;
}

int lk_lake_catalog_at(const lk_catalog **out, lk_lake *lake, duckdb_connection con, int64_t snap)
{
    for (size_t i = 0; i < lake->npast; i++) {
        if (lake->past[i].snapshot_id == snap) {
            *out = &lake->past[i];
            return 0;
        }
    }
    lk_catalog cat;
    int rc = lk_catalog_load(&cat, &lake->db, con, snap);
    if (rc)
        return rc;
    size_t cap = sizeof(lake->past) / sizeof(lake->past[0]), slot;
    if (lake->npast < cap) {
        slot = lake->npast++;
    } else { /* round robin: the oldest entry goes */
        slot = lake->past_next;
        lake->past_next = (lake->past_next + 1) % cap;
        lk_catalog_free(&lake->past[slot]);
    }
    lake->past[slot] = cat;
    *out = &lake->past[slot];
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void lk_lake_meta_tables_apply(lk_lake *lake, const strlist *ops)
{
    if (!lake->meta_tables_loaded)
        return;
    for (size_t i = 0; i < ops->n; i++) {
        const char *name = ops->items[i] + 1;
        char **hit =
            bsearch(&name, lake->meta_tables, lake->nmeta_tables, sizeof(char *), cmp_name);
        if (ops->items[i][0] == '+' && !hit) {
            lake->meta_tables =
                xrealloc(lake->meta_tables, (lake->nmeta_tables + 1) * sizeof(char *));
            lake->meta_tables[lake->nmeta_tables++] = xstrdup(name);
            qsort(lake->meta_tables, lake->nmeta_tables, sizeof(char *), cmp_name);
        } else if (ops->items[i][0] == '-' && hit) {
            free(*hit);
            size_t at = (size_t)(hit - lake->meta_tables);
            memmove(hit, hit + 1, (lake->nmeta_tables - at - 1) * sizeof(char *));
            lake->nmeta_tables--;
        }
    }
}

int lk_lake_inlined_deletes_from(tarn_buf *b, lk_lake *lake, duckdb_connection con,
                                 int64_t table_id, long long s)
{
    char *idel = xasprintf("ducklake_inlined_delete_%lld", (long long)table_id);
    int have = lk_lake_meta_table_exists(lake, con, idel);
    if (have) {
        buf_printf(b, "FROM %s.", lake->meta);
        quote_ident(b, idel);
        buf_printf(b,
                   " i JOIN %s.ducklake_data_file d ON d.data_file_id = i.file_id WHERE " LK_LIVE(
                       "d") " AND i.begin_snapshot <= %lld",
                   lake->meta, s, s, s);
    }
    free(idel);
    return have;
}

int lk_lake_meta_table_exists(lk_lake *lake, duckdb_connection con, const char *name)
{
    if (!lake->meta_tables_loaded) {
        duck_table r;
        int rc = lk_catdb_tables(&r, &lake->db, con);
        if (rc) { /* answer without the list, as before it existed */
            tarn_error_clear();
            return lk_catdb_table_exists(&lake->db, con, name);
        }
        lake->meta_tables = xcalloc(r.nrows ? r.nrows : 1, sizeof(char *));
        for (size_t i = 0; i < r.nrows; i++)
            lake->meta_tables[lake->nmeta_tables++] = xstrdup(duck_table_get(&r, i, 0));
        duck_table_free(&r);
        qsort(lake->meta_tables, lake->nmeta_tables, sizeof(char *), cmp_name);
        lake->meta_tables_loaded = 1;
    }
    return bsearch(&name, lake->meta_tables, lake->nmeta_tables, sizeof(char *), cmp_name) != NULL;
}

char *lk_lake_table_dir(lk_lake *lake, const lk_catalog *cat, const lk_table *t)
{
    lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, t->schema_id);
    const char *sp = sc && sc->path ? sc->path : "";
    const char *tp = t->path ? t->path : "";
    char *schema_dir = sc && !sc->path_rel ? xstrdup(sp) : xasprintf("%s%s", lake->data_abs, sp);
    char *dir = t->path_rel ? xasprintf("%s%s", schema_dir, tp) : xstrdup(tp);
    free(schema_dir);
    return dir;
}

/* One option row of ducklake_metadata. */
struct lk_option {
    char *key;
    int rank;         /* 0 table scope, 1 schema scope, 2 global */
    int64_t scope_id; /* the table's or schema's id */
    char *value;      /* NULL: SQL NULL */
};

void lk_lake_options_changed(lk_lake *lake)
{
    for (size_t i = 0; i < lake->nopts; i++) {
        free(lake->opts[i].key);
        free(lake->opts[i].value);
    }
    free(lake->opts);
    lake->opts = NULL;
    lake->nopts = 0;
    lake->opts_loaded = 0;
}

static void load_options(lk_lake *lake, duckdb_connection con);

void lk_lake_option_pending(lk_lake *lake, duckdb_connection con, const char *key, int rank,
                            int64_t scope_id, const char *value)
{
    if (!lake->opts_loaded)
        load_options(lake, con);
    for (size_t i = 0; i < lake->nopts; i++) {
        struct lk_option *o = &lake->opts[i];
        if (strcmp(o->key, key) == 0 && o->rank == rank && (rank == 2 || o->scope_id == scope_id)) {
            free(o->value);
            o->value = value ? xstrdup(value) : NULL;
            return;
        }
    }
    lake->opts = xrealloc(lake->opts, (lake->nopts + 1) * sizeof(struct lk_option));
    lake->opts[lake->nopts++] =
        (struct lk_option){xstrdup(key), rank, scope_id, value ? xstrdup(value) : NULL};
}

static void load_options(lk_lake *lake, duckdb_connection con)
{
    duck_table r;
    int rc = lk_catdb_queryf(&r, &lake->db, con,
                             "SELECT \"key\", CASE scope WHEN 'table' THEN 0 WHEN 'schema' THEN 1 "
                             "ELSE 2 END, scope_id, value FROM %s.ducklake_metadata WHERE scope IN "
                             "('table', 'schema') OR scope IS NULL",
                             lk_catdb_name(&lake->db));
    if (rc) { /* as with no option */
        tarn_error_clear();
        return;
    }
    lake->opts = xcalloc(r.nrows ? r.nrows : 1, sizeof(struct lk_option));
    for (size_t i = 0; i < r.nrows; i++) {
        const char *id = duck_table_get(&r, i, 2), *v = duck_table_get(&r, i, 3);
        lake->opts[i].key = xstrdup(duck_table_get(&r, i, 0));
        lake->opts[i].rank = (int)strtol(duck_table_get(&r, i, 1), NULL, 10);
        lake->opts[i].scope_id = id ? strtoll(id, NULL, 10) : -1;
        lake->opts[i].value = v ? xstrdup(v) : NULL;
    }
    lake->nopts = r.nrows;
    duck_table_free(&r);
    lake->opts_loaded = 1;
}

const char *lk_lake_option(lk_lake *lake, duckdb_connection con, const char *key, const lk_table *t)
{
    if (!lake->opts_loaded)
        load_options(lake, con);
    /* the table's option, else its schema's, else the global one */
    const struct lk_option *best = NULL;
    for (size_t i = 0; i < lake->nopts; i++) {
        const struct lk_option *o = &lake->opts[i];
        if (strcmp(o->key, key) != 0)
            continue;
        int applies = o->rank == 2 || (t && o->rank == 0 && o->scope_id == t->id) ||
                      (t && o->rank == 1 && o->scope_id == t->schema_id);
        if (applies && (!best || o->rank < best->rank))
            best = o;
    }
    return best ? best->value : NULL;
}

const char *lk_lake_option_at(lk_lake *lake, duckdb_connection con, const char *key, int rank,
                              int64_t scope_id)
{
    if (!lake->opts_loaded)
        load_options(lake, con);
    for (size_t i = 0; i < lake->nopts; i++) {
        const struct lk_option *o = &lake->opts[i];
        if (strcmp(o->key, key) == 0 && o->rank == rank && (rank == 2 || o->scope_id == scope_id))
            return o->value;
    }
    return NULL;
}

int64_t lk_lake_inline_limit(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    const char *v = lk_lake_option(lake, con, "data_inlining_row_limit", t);
    if (v)
        return strtoll(v, NULL, 10);
    if (lake->inline_limit >= 0)
        return lake->inline_limit;
    if (lake->setting_gen != lk_settings_generation()) { /* once per SET, not per insert */
        lake->setting_limit = lk_setting_default_inline_limit(con);
        lake->setting_gen = lk_settings_generation();
    }
    return lake->setting_limit;
}

void lk_lake_facts_forget(lk_lake *lake)
{
    lk_lake_meta_tables_forget(lake);
    past_forget(lake);
    schema_versions_forget(lake);
    lk_lake_options_changed(lake);
}
