/*
 * maintain_expire.c — giving storage back (DuckLake §6.1, §6.2):
 *
 * ducklake_expire_snapshots deletes snapshots (never the newest) and then
 * every catalog row no remaining snapshot can see: files that ended before
 * any remaining snapshot began (scheduled for deletion, not deleted),
 * tables dropped for good with everything they own, ended schema, view,
 * tag and macro rows. No snapshot is created.
 *
 * ducklake_cleanup_old_files deletes the scheduled files (older than a
 * threshold, or all) and their rows; ducklake_delete_orphaned_files
 * deletes Parquet files under the data path that no catalog row knows
 * (left by a writer that died before committing). Both only ever delete
 * regular files that resolve to inside the lake's data path, and with
 * dry_run only list what they would delete.
 */
#include "duck/duck.h"
#include "lake/maintain_int.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Runs catalog statements in one catalog transaction. */
static int run_all(const mt_call *c, char **stmts, size_t n)
{
    int rc = duck_exec(c->s->con, "BEGIN TRANSACTION");
    for (size_t i = 0; !rc && i < n; i++)
        rc = duck_exec(c->s->con, stmts[i]);
    if (!rc)
        rc = duck_exec(c->s->con, "COMMIT");
    else
        duck_exec(c->s->con, "ROLLBACK");
    return rc;
}

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

static int no_open_txn(const mt_call *c)
{
    if (c->lake->txn || c->s->explicit_txn)
        return tarn_error_set(TARN_EUNSUPPORTED,
                              "cannot run inside BEGIN … COMMIT in tarn: run it on its own");
    if (c->lake->read_only)
        return tarn_error_set(TARN_EINVALID, "lake \"%s\" is attached read-only",
                              c->lake->alias);
    return 0;
}

/* "[2, 4]" (DuckDB's text of the list) → "2, 4", validated as integers. */
static int version_list(const mt_call *c, const char *text, char **out)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT COALESCE(string_agg(v::VARCHAR, ', '), '') FROM (SELECT unnest(CAST(");
    quote_literal(&q, text);
    buf_puts(&q, " AS UBIGINT[])) AS v) WHERE v IS NOT NULL");
    int rc = duck_query_string(out, c->s->con, buf_cstr(&q));
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
    char *q = xasprintf("SELECT COALESCE(string_agg(DISTINCT table_id::VARCHAR, ', '), '') FROM "
                        "%s.ducklake_table t WHERE NOT EXISTS (SELECT 1 FROM %s.ducklake_table t2 "
                        "WHERE t2.table_id = t.table_id AND (t2.end_snapshot IS NULL OR EXISTS "
                        "(SELECT 1 FROM %s.ducklake_snapshot sn WHERE sn.snapshot_id >= "
                        "t2.begin_snapshot AND sn.snapshot_id < t2.end_snapshot)))",
                        m, m, m);
    int rc = duck_query_string(out, c->s->con, q);
    free(q);
    return rc;
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
    int rc = duck_table_query(&r, c->s->con, buf_cstr(&q));
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
    char *unreach = xasprintf("(f.end_snapshot IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
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
            add(l, xasprintf("DELETE FROM %s.%s WHERE data_file_id IN (%s)", m, TABLES[i],
                             data_ids));
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
    char *q = xasprintf("SELECT table_name FROM %s.ducklake_inlined_data_tables WHERE table_id IN "
                        "(%s) UNION ALL SELECT 'ducklake_inlined_delete_' || table_id::VARCHAR FROM "
                        "(SELECT DISTINCT table_id FROM %s.ducklake_table WHERE table_id IN (%s))",
                        m, dead, m, dead);
    duck_table r;
    int rc = duck_table_query(&r, c->s->con, q);
    free(q);
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
    int rc = duck_exec(c->s->con, "BEGIN TRANSACTION");
    char *sql = xasprintf("DELETE FROM %s.ducklake_snapshot_changes WHERE snapshot_id IN (SELECT "
                          "snapshot_id FROM %s.ducklake_snapshot WHERE %s)",
                          m, m, filter);
    if (!rc)
        rc = duck_exec(c->s->con, sql);
    free(sql);
    sql = xasprintf("DELETE FROM %s.ducklake_snapshot WHERE %s", m, filter);
    if (!rc)
        rc = duck_exec(c->s->con, sql);
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
        rc = duck_exec(c->s->con, l.v[i]);
    if (!rc)
        rc = duck_exec(c->s->con, "COMMIT");
    else
        duck_exec(c->s->con, "ROLLBACK");
    free(dead);
    stmts_free(&l);
    return rc;
}

/* The expired snapshots as ducklake_snapshots() shows them, kept in a
 * TEMP table: they are gone by the time the statement reads them. */
static int snapshot_rows(const mt_call *c, const char *filter, char **out)
{
    lk_args a = {0};
    char *alias = c->lake->alias;
    a.pos = &alias;
    a.npos = 1;
    char *sub = NULL;
    int rc = lk_function_sql(&sub, c->s, "ducklake_snapshots", &a);
    if (rc)
        return rc;
    tarn_buf name = {0}, b = {0};
    char *raw = xasprintf("__tarn_expired_%s", c->lake->alias);
    buf_puts(&name, "temp.main.");
    quote_ident(&name, raw);
    free(raw);
    buf_printf(&b, "CREATE OR REPLACE TEMP TABLE %s AS SELECT * FROM (%s) WHERE snapshot_id IN "
                   "(SELECT snapshot_id FROM %s.ducklake_snapshot WHERE %s) ORDER BY snapshot_id",
               buf_cstr(&name) + strlen("temp.main."), sub, c->lake->meta,
               filter ? filter : "false");
    rc = duck_exec(c->s->con, buf_cstr(&b));
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
        rc = no_open_txn(c);
    char *filter = NULL;
    if (!rc)
        rc = expire_filter(c, &filter);
    if (!rc)
        rc = snapshot_rows(c, filter, out);
    if (!rc && filter && !mt_bool(c, "dry_run", 0))
        rc = expire_now(c, filter);
    if (!rc && filter)
        rc = lk_lake_reload(c->lake, c->s->con);
    free(filter);
    return rc;
}

/* ---- deleting files ---- */

/* The time before which files may go: older_than, everything
 * (cleanup_all), or now minus the delete_older_than option (2 days). */
static int threshold_sql(const mt_call *c, char **out)
{
    const char *older = lk_args_named(c->a, "older_than");
    int all = mt_bool(c, "cleanup_all", 0);
    if (older && all)
        return tarn_error_set(TARN_EINVALID, "either cleanup_all OR older_than must be specified");
    tarn_buf b = {0};
    if (all) {
        buf_puts(&b, "'infinity'::TIMESTAMPTZ");
    } else if (older) {
        buf_puts(&b, "CAST(");
        quote_literal(&b, older);
        buf_puts(&b, " AS TIMESTAMPTZ)");
    } else {
        char *dflt = mt_option(c, "delete_older_than", -1, -1);
        buf_puts(&b, "now() - CAST(");
        quote_literal(&b, dflt ? dflt : "2 days");
        buf_puts(&b, " AS INTERVAL)");
        free(dflt);
    }
    *out = buf_detach(&b);
    return 0;
}

static int remove_file(const mt_call *c, const char *path, int dry_run)
{
    if (!mt_inside_data_path(c->lake, path))
        return tarn_error_set(TARN_EINVALID,
                              "refusing to delete %s: it is not inside the lake's data path %s",
                              path, c->lake->data_abs);
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return tarn_error_set(TARN_EINVALID, "refusing to delete %s: not a regular file", path);
    if (dry_run || unlink(path) == 0 || errno == ENOENT)
        return 0;
    return tarn_error_set(TARN_ERROR, "cannot delete %s: %s", path, strerror(errno));
}

static void path_row(mt_result *res, const char *path)
{
    char *cell = mt_lit(path);
    mt_result_row(res, (const char *const *)&cell);
    free(cell);
}

static const char *const PATH_NAMES[] = {"path"};
static const char *const PATH_TYPES[] = {"VARCHAR"};

int mt_cleanup_old_files(char **out, const mt_call *c)
{
    static const char *const NAMED[] = {"cleanup_all", "older_than", "dry_run", NULL};
    int rc = mt_check_named(c, NAMED);
    if (!rc)
        rc = no_open_txn(c);
    char *before = NULL;
    if (!rc)
        rc = threshold_sql(c, &before);
    if (rc)
        return rc;
    const char *m = c->lake->meta;
    tarn_buf q = {0};
    buf_printf(&q, "SELECT data_file_id, CASE WHEN path_is_relative THEN ");
    quote_literal(&q, c->lake->data_abs);
    buf_printf(&q, " || path ELSE path END FROM %s.ducklake_files_scheduled_for_deletion WHERE "
                   "schedule_start < %s ORDER BY data_file_id",
               m, before);
    duck_table r;
    rc = duck_table_query(&r, c->s->con, buf_cstr(&q));
    buf_free(&q);
    free(before);
    if (rc)
        return rc;
    int dry = mt_bool(c, "dry_run", 0);
    mt_result res = {1, PATH_NAMES, PATH_TYPES, {0}, 0};
    stmt_list l = {0};
    for (size_t i = 0; !rc && i < r.nrows; i++) {
        const char *path = duck_table_get(&r, i, 1);
        /* a file recorded outside the data path is never touched: its row
         * stays, for a person to look at */
        if (!mt_inside_data_path(c->lake, path))
            continue;
        rc = remove_file(c, path, dry);
        if (rc)
            break;
        path_row(&res, path);
        add(&l, xasprintf("DELETE FROM %s.ducklake_files_scheduled_for_deletion WHERE "
                          "data_file_id = %s",
                          m, duck_table_get(&r, i, 0)));
    }
    duck_table_free(&r);
    /* the rows of the files deleted go even when a later one failed */
    int rc2 = dry || l.n == 0 ? 0 : run_all(c, l.v, l.n);
    stmts_free(&l);
    *out = mt_result_sql(&res);
    return rc ? rc : rc2;
}

/* ---- orphaned files ---- */

typedef struct {
    char **v;
    size_t n, cap;
} path_set;

static void set_add(path_set *s, char *p)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->v = xrealloc(s->v, s->cap * sizeof(char *));
    }
    s->v[s->n++] = p;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void set_free(path_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

/* Every file the catalog knows (any snapshot, scheduled ones too) and
 * every file this session's open transaction wrote, by real path. */
static int known_files(const mt_call *c, path_set *out)
{
    const char *m = c->lake->meta;
    tarn_buf q = {0};
    buf_puts(&q, "SELECT ");
    mt_file_path_sql(&q, c->lake, "f");
    buf_printf(&q, " FROM %s.ducklake_data_file f", m);
    mt_file_path_joins(&q, c->lake, "f");
    buf_puts(&q, " UNION ALL SELECT ");
    mt_file_path_sql(&q, c->lake, "f");
    buf_printf(&q, " FROM %s.ducklake_delete_file f", m);
    mt_file_path_joins(&q, c->lake, "f");
    buf_puts(&q, " UNION ALL SELECT CASE WHEN path_is_relative THEN ");
    quote_literal(&q, c->lake->data_abs);
    buf_printf(&q, " || path ELSE path END FROM %s.ducklake_files_scheduled_for_deletion", m);
    duck_table r;
    int rc = duck_table_query(&r, c->s->con, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    for (size_t i = 0; i <= r.nrows; i++) {
        const char *p = i < r.nrows ? duck_table_get(&r, i, 0) : NULL;
        char real[PATH_MAX];
        if (p && realpath(p, real))
            set_add(out, xstrdup(real));
    }
    duck_table_free(&r);
    for (size_t i = 0; c->lake->txn && i < c->lake->txn->nwritten; i++) {
        char real[PATH_MAX];
        if (realpath(c->lake->txn->written[i], real))
            set_add(out, xstrdup(real));
    }
    qsort(out->v, out->n, sizeof(char *), cmp_str);
    return 0;
}

/* Regular *.parquet files under `dir`, symbolic links never followed. */
static void walk(const char *dir, path_set *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) != 0 || S_ISLNK(st.st_mode)) {
            free(p);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            walk(p, out);
            free(p);
            continue;
        }
        size_t n = strlen(p);
        if (S_ISREG(st.st_mode) && n > 8 && strcmp(p + n - 8, ".parquet") == 0)
            set_add(out, p);
        else
            free(p);
    }
    closedir(d);
}

static int older_than(const char *path, double before)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    double t = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
    return t < before;
}

static int orphans(const mt_call *c, path_set *found, path_set *known, double before,
                   mt_result *res)
{
    int dry = mt_bool(c, "dry_run", 0);
    for (size_t i = 0; i < found->n; i++) {
        const char *p = found->v[i];
        if (bsearch(&p, known->v, known->n, sizeof(char *), cmp_str) || !older_than(p, before))
            continue;
        int rc = remove_file(c, p, dry);
        if (rc)
            return rc;
        path_row(res, p);
    }
    return 0;
}

int mt_delete_orphans(char **out, const mt_call *c)
{
    static const char *const NAMED[] = {"cleanup_all", "older_than", "dry_run", NULL};
    int rc = mt_check_named(c, NAMED);
    if (!rc && c->s->explicit_txn)
        rc = no_open_txn(c);
    char *before = NULL;
    if (!rc)
        rc = threshold_sql(c, &before);
    if (rc)
        return rc;
    char *q = xasprintf("SELECT CASE WHEN isinf(%s) THEN 1e300 ELSE epoch(%s) END", before, before);
    char *epoch = NULL;
    rc = duck_query_string(&epoch, c->s->con, q);
    free(q);
    free(before);
    path_set known = {0}, found = {0};
    char root[PATH_MAX];
    mt_result res = {1, PATH_NAMES, PATH_TYPES, {0}, 0};
    if (!rc)
        rc = known_files(c, &known);
    if (!rc && realpath(c->lake->data_abs, root)) {
        walk(root, &found);
        qsort(found.v, found.n, sizeof(char *), cmp_str);
        rc = orphans(c, &found, &known, epoch ? strtod(epoch, NULL) : 0, &res);
    }
    free(epoch);
    set_free(&known);
    set_free(&found);
    *out = mt_result_sql(&res);
    return rc;
}
