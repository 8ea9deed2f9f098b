/*
 * maintain_cleanup.c — deleting files (DuckLake §6.2):
 * ducklake_cleanup_old_files deletes the files scheduled for deletion
 * (older than a threshold, or all) and their rows;
 * ducklake_delete_orphaned_files deletes Parquet files under the data path
 * that no catalog row knows (left by a writer that died before
 * committing). Both only ever delete regular files that resolve to inside
 * the lake's data path, and with dry_run only list what they would delete.
 */
#include "duck/duck.h"
#include "lake/catdb.h"
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

/* ---- deleting files ---- */

/* The time before which files may go: older_than, everything
 * (cleanup_all), or now minus the delete_older_than option (2 days). */
static int threshold_sql(const mt_call *c, char **out)
{
    int rc = mt_non_null(c, "older_than");
    if (rc)
        return rc;
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

/* The arguments both cleanups take (cleanup_all, older_than, dry_run),
 * checked; refused in a transaction or on a read-only lake (they change
 * the catalog without a snapshot); *before: the SQL of the age threshold
 * (threshold_sql). */
static int cleanup_args(const mt_call *c, char **before)
{
    static const char *const NAMED[] = {"cleanup_all", "older_than", "dry_run", NULL};
    int rc = mt_check_named(c, NAMED);
    if (!rc)
        rc = mt_no_open_txn(c);
    if (!rc)
        rc = threshold_sql(c, before);
    return rc;
}

static const char *const PATH_NAMES[] = {"path"};
static const char *const PATH_TYPES[] = {"VARCHAR"};

int mt_cleanup_old_files(char **out, const mt_call *c)
{
    char *before = NULL;
    int rc = cleanup_args(c, &before);
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
    rc = lk_catdb_query(&r, &c->lake->db, c->con, buf_cstr(&q));
    buf_free(&q);
    free(before);
    if (rc)
        return rc;
    int dry = mt_bool(c, "dry_run", 0);
    mt_result res = {1, PATH_NAMES, PATH_TYPES, {0}, 0};
    tarn_buf ids = {0};
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
        buf_printf(&ids, "%s%s", ids.len ? ", " : "", duck_table_get(&r, i, 0));
    }
    duck_table_free(&r);
    /* the rows of the files deleted go even when a later one failed */
    int rc2 = 0;
    if (!dry && ids.len) {
        char *del = xasprintf("DELETE FROM %s.ducklake_files_scheduled_for_deletion WHERE "
                              "data_file_id IN (%s)",
                              m, buf_cstr(&ids));
        rc2 = lk_catdb_exec(&c->lake->db, c->con, del);
        free(del);
    }
    buf_free(&ids);
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
    int rc = lk_catdb_query(&r, &c->lake->db, c->con, buf_cstr(&q));
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
    if (out->n) /* qsort of no array is undefined, even of 0 elements */
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
    char *before = NULL;
    int rc = cleanup_args(c, &before);
    if (rc)
        return rc;
    char *q = xasprintf("SELECT CASE WHEN isinf(%s) THEN 1e300 ELSE epoch(%s) END", before, before);
    char *epoch = NULL;
    rc = duck_query_string(&epoch, c->con, q);
    free(q);
    free(before);
    path_set known = {0}, found = {0};
    char root[PATH_MAX];
    mt_result res = {1, PATH_NAMES, PATH_TYPES, {0}, 0};
    if (!rc)
        rc = known_files(c, &known);
    int have_root = !rc && realpath(c->lake->data_abs, root) != NULL;
    /* a data path at the file-system root would make every Parquet file
     * of the machine a candidate */
    if (have_root && strcmp(root, "/") == 0)
        rc = tarn_error_set(TARN_EINVALID, "refusing to look for orphaned files under /");
    if (!rc && have_root) {
        walk(root, &found);
        if (found.n)
            qsort(found.v, found.n, sizeof(char *), cmp_str);
        rc = orphans(c, &found, &known, epoch ? strtod(epoch, NULL) : 0, &res);
    }
    free(epoch);
    set_free(&known);
    set_free(&found);
    *out = mt_result_sql(&res);
    return rc;
}
