/*
 * feed.c — the change feed between two snapshots (see feed.h).
 *
 * Catalog rows read: ducklake_snapshot_changes, to find the snapshots of
 * the range that changed the table; ducklake_data_file, ducklake_delete_file
 * and ducklake_inlined_delete_<table_id>, for the files each of them
 * touched. The rows themselves come from the table's identity scans just
 * before and at each such snapshot (scan.h), of those files and the
 * inlined rows, so the feed needs no rows of its own and writes none.
 */
#include "lake/feed.h"

#include "duck/duck.h"
#include "lake/catdb.h"
#include "lake/scan.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* The catalogs a feed reads its snapshots with, one per schema version:
 * snapshots of one schema version have the same tables and columns (and
 * inlined-data tables), so each version's catalog is loaded once. */
typedef struct {
    duck_table versions; /* (snapshot_id, schema_version) of the range */
    int64_t *sv;         /* per loaded catalog: its schema version */
    lk_catalog *cats;
    size_t n;
} feed_catalogs;

static int catalogs_init(feed_catalogs *fc, duckdb_connection con, lk_lake *l, int64_t from,
                         int64_t to)
{
    memset(fc, 0, sizeof(*fc));
    return lk_catdb_queryf(&fc->versions, &l->db, con,
                           "SELECT snapshot_id, schema_version FROM %s.ducklake_snapshot WHERE "
                           "snapshot_id BETWEEN %lld AND %lld",
                           l->meta, (long long)from - 1, (long long)to);
}

static void catalogs_free(feed_catalogs *fc)
{
    for (size_t i = 0; i < fc->n; i++)
        lk_catalog_free(&fc->cats[i]);
    free(fc->cats);
    free(fc->sv);
    duck_table_free(&fc->versions);
}

/* The catalog at snapshot s (borrowed from fc), or NULL when s does not
 * exist or cannot be loaded. */
static const lk_catalog *catalog_at(feed_catalogs *fc, duckdb_connection con, lk_lake *l, int64_t s)
{
    int64_t sv = -1;
    for (size_t r = 0; r < fc->versions.nrows && sv < 0; r++)
        if (duck_table_int64(&fc->versions, r, 0) == s)
            sv = duck_table_int64(&fc->versions, r, 1);
    if (sv < 0)
        return NULL;
    for (size_t i = 0; i < fc->n; i++)
        if (fc->sv[i] == sv)
            return &fc->cats[i];
    lk_catalog cat;
    if (lk_catalog_load(&cat, &l->db, con, s) != 0) {
        tarn_error_clear();
        return NULL;
    }
    fc->cats = xrealloc(fc->cats, (fc->n + 1) * sizeof(*fc->cats));
    fc->sv = xrealloc(fc->sv, (fc->n + 1) * sizeof(*fc->sv));
    fc->cats[fc->n] = cat;
    fc->sv[fc->n] = sv;
    return &fc->cats[fc->n++];
}

/* The identity scan of table `tid` at snapshot `s`, reading only the data
 * files `only` names (see touched_files), or an empty relation with the
 * same columns when the table did not exist then. */
static int scan_at(char **out, duckdb_connection con, lk_lake *l, const lk_table *shape,
                   int64_t tid, int64_t s, const lk_prune *only, feed_catalogs *fc)
{
    const lk_catalog *cat = s < 0 ? NULL : catalog_at(fc, con, l, s);
    if (!cat) {
        tarn_buf b = {0};
        buf_puts(&b, "SELECT * FROM (");
        char *sc = NULL;
        lk_prune none = {.only_set = 1};
        int rc = lk_scan_sql_pruned(&sc, l, con, &l->cat, shape, 0, LK_SCAN_IDENTITY, &none);
        if (rc)
            return rc;
        buf_puts(&b, sc);
        free(sc);
        buf_puts(&b, ") WHERE false");
        *out = buf_detach(&b);
        return 0;
    }
    const lk_table *t = lk_catalog_table_by_id((lk_catalog *)cat, tid);
    int rc;
    if (t) {
        /* project the columns of `shape` (the table at the end of the
         * range), matched by column id: the feed speaks one schema */
        char *inner = NULL;
        rc = lk_scan_sql_pruned(&inner, l, con, cat, t, s, LK_SCAN_IDENTITY, only);
        if (!rc) {
            tarn_buf b = {0};
            buf_puts(&b, "SELECT ");
            for (size_t i = 0; i < shape->ncols; i++) {
                const lk_column *want = &shape->cols[i];
                const lk_column *have = NULL;
                for (size_t k = 0; k < t->ncols; k++)
                    if (t->cols[k].id == want->id)
                        have = &t->cols[k];
                tarn_buf e = {0};
                if (have)
                    quote_ident(&e, have->name);
                else
                    quote_literal(&e, want->initial_default); /* added later */
                if (have && lk_type_is_nested(want->type)) {
                    lk_scan_rebuild(&b, buf_cstr(&e), want, have);
                } else {
                    buf_printf(&b, "CAST(%s AS ", buf_cstr(&e));
                    lk_type_to_sql(&b, want);
                    buf_putc(&b, ')');
                }
                buf_free(&e);
                buf_puts(&b, " AS ");
                quote_ident(&b, want->name);
                buf_puts(&b, ", ");
            }
            buf_printf(&b, "rowid, __tarn_fid, __tarn_pos, __tarn_rsnap FROM (%s)", inner);
            *out = buf_detach(&b);
        }
        free(inner);
    } else {
        return scan_at(out, con, l, shape, tid, -1, only, fc);
    }
    return rc;
}

static void columns(tarn_buf *b, const lk_table *t, const char *prefix)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (i)
            buf_puts(b, ", ");
        buf_printf(b, "%s.", prefix);
        quote_ident(b, t->cols[i].name);
    }
}

static int changed_snapshots(duck_table *out, duckdb_connection con, lk_lake *l, int64_t tid,
                             int64_t from, int64_t to)
{
    /* a token between commas, with LIKE: plain SQL any catalog database runs */
    static const char *const KINDS[] = {"inserted_into_table", "deleted_from_table",
                                        "inlined_insert", "inlined_delete"};
    tarn_buf b = {0};
    buf_printf(&b,
               "SELECT snapshot_id FROM %s.ducklake_snapshot_changes WHERE snapshot_id BETWEEN "
               "%lld AND %lld AND (",
               l->meta, (long long)from, (long long)to);
    for (size_t i = 0; i < 4; i++)
        buf_printf(&b, "%s',' || changes_made || ',' LIKE '%%,%s:%lld,%%'", i ? " OR " : "",
                   KINDS[i], (long long)tid);
    buf_puts(&b, ") ORDER BY snapshot_id");
    char *q = buf_detach(&b);
    int rc = lk_catdb_query(out, &l->db, con, q);
    free(q);
    return rc;
}

/* Appends to `b` the condition that a catalog row (alias `a`) of a data
 * file changed what snapshot s.sn reads: the file begins or ends there, or
 * holds rows of several snapshots (partial_max), that one among them. A
 * delete file counts for every snapshot it is live at or ends at: one
 * written by a flush of inlined deletions holds the deletions of several
 * snapshots from its begin_snapshot on, with no partial_max to tell. */
static void touched_at(tarn_buf *b, const char *a, int is_delete)
{
    if (is_delete)
        buf_printf(
            b,
            "(%s.begin_snapshot <= s.sn AND (%s.end_snapshot IS NULL OR %s.end_snapshot >= s.sn))",
            a, a, a);
    else
        buf_printf(b,
                   "(%s.begin_snapshot = s.sn OR %s.end_snapshot = s.sn OR (%s.partial_max IS NOT "
                   "NULL AND %s.begin_snapshot < s.sn AND s.sn <= %s.partial_max))",
                   a, a, a, a, a);
}

/* The data files each snapshot of `snaps` touched in table `tid`, as rows
 * (snapshot, data_file_id) ordered by snapshot: the files a snapshot's
 * rows were written to or that it ended, those with deletions then
 * (touched_at), and those whose rows it deleted through the
 * inlined-deletion table. A file it did not touch
 * reads the same just before it and at it, so the snapshot's diff reads
 * only these (a feed over many snapshots of a table of many files would
 * otherwise read every file twice per snapshot). */
static int touched_files(duck_table *out, duckdb_connection con, lk_lake *l, int64_t tid,
                         const duck_table *snaps)
{
    tarn_buf b = {0};
    buf_puts(&b, "WITH s(sn) AS (VALUES ");
    for (size_t r = 0; r < snaps->nrows; r++)
        buf_printf(&b, "%s(%lld)", r ? ", " : "", (long long)duck_table_int64(snaps, r, 0));
    buf_printf(&b,
               ") SELECT s.sn, d.data_file_id FROM s JOIN %s.ducklake_data_file d ON d.table_id = "
               "%lld AND ",
               l->meta, (long long)tid);
    touched_at(&b, "d", 0);
    buf_printf(&b,
               " UNION SELECT s.sn, x.data_file_id FROM s JOIN %s.ducklake_delete_file x ON "
               "x.table_id = %lld AND ",
               l->meta, (long long)tid);
    touched_at(&b, "x", 1);
    char *idel = xasprintf("ducklake_inlined_delete_%lld", (long long)tid);
    if (lk_lake_meta_table_exists(l, con, idel))
        buf_printf(&b,
                   " UNION SELECT s.sn, i.file_id FROM s JOIN %s.%s i ON i.begin_snapshot = s.sn",
                   l->meta, idel);
    free(idel);
    buf_puts(&b, " ORDER BY 1, 2");
    int rc = lk_catdb_query(out, &l->db, con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

/* The virtual columns `virt` asks for, of the rows of alias `a`. */
static void virtual_columns(tarn_buf *b, const char *a, int virt, int64_t sn)
{
    if (virt & LK_FEED_ROWID)
        buf_printf(b, ", %s.rowid", a);
    if (virt & LK_FEED_SNAPSHOT)
        buf_printf(b, ", %lld::BIGINT AS snapshot_id", (long long)sn);
}

/* One side of a snapshot's changes: the rows of `from` (ins or del) as
 * alias `a`; in the change feed, with the snapshot, rowid and change type
 * — `both` when the row's rowid is also on the `other` side (an update),
 * else `alone`. */
static void feed_side(tarn_buf *b, const lk_table *t, int kind, int virt, int64_t sn, const char *a,
                      const char *from, const char *other, const char *both, const char *alone)
{
    buf_puts(b, "SELECT ");
    if (kind == LK_FEED_CHANGES)
        buf_printf(b,
                   "%lld::BIGINT AS snapshot_id, %s.rowid, CASE WHEN %s.rowid IN (SELECT rowid "
                   "FROM %s) THEN '%s' ELSE '%s' END AS change_type, ",
                   (long long)sn, a, a, other, both, alone);
    columns(b, t, a);
    if (kind != LK_FEED_CHANGES)
        virtual_columns(b, a, virt, sn);
    buf_printf(b, " FROM %s %s", from, a);
}

static int one_snapshot(tarn_buf *b, duckdb_connection con, lk_lake *l, const lk_table *t,
                        int64_t sn, int kind, int virt, const lk_prune *only, feed_catalogs *fc)
{
    char *now = NULL, *before = NULL;
    int rc = scan_at(&now, con, l, t, t->id, sn, only, fc);
    if (!rc)
        rc = scan_at(&before, con, l, t, t->id, sn - 1, only, fc);
    if (rc) {
        free(now);
        return rc;
    }
    const char *key = "ON x.__tarn_fid = y.__tarn_fid AND x.__tarn_pos = y.__tarn_pos AND "
                      "x.__tarn_rsnap = y.__tarn_rsnap";
    buf_printf(b,
               "SELECT * FROM (WITH a AS (%s), p AS (%s), ins AS (SELECT x.* FROM a x ANTI JOIN "
               "p y %s), del AS (SELECT x.* FROM p x ANTI JOIN a y %s) ",
               now, before, key, key);
    /* the insertions/deletions functions give only the table's columns */
    if (kind != LK_FEED_DELETIONS)
        feed_side(b, t, kind, virt, sn, "i", "ins", "del", "update_postimage", "insert");
    if (kind == LK_FEED_CHANGES)
        buf_puts(b, " UNION ALL ");
    if (kind != LK_FEED_INSERTIONS)
        feed_side(b, t, kind, virt, sn, "d", "del", "ins", "update_preimage", "delete");
    buf_puts(b, ")");
    free(now);
    free(before);
    return 0;
}

int lk_feed_sql(char **out, duckdb_connection con, lk_lake *l, const char *schema,
                const char *table, int64_t from, int64_t to, int kind)
{
    int virt = kind & (LK_FEED_ROWID | LK_FEED_SNAPSHOT);
    kind &= ~(LK_FEED_ROWID | LK_FEED_SNAPSHOT);
    lk_catalog end;
    int rc = lk_catalog_load(&end, &l->db, con, to);
    if (rc)
        return rc;
    const lk_table *t = lk_catalog_table_named(&end, schema ? schema : "main", table);
    if (!t) {
        lk_catalog_free(&end);
        return tarn_error_set(TARN_ENOTFOUND, "Table with name %s does not exist at snapshot %lld",
                              table, (long long)to);
    }
    duck_table snaps, files = {0};
    feed_catalogs fc;
    rc = changed_snapshots(&snaps, con, l, t->id, from, to);
    if (!rc && snaps.nrows)
        rc = touched_files(&files, con, l, t->id, &snaps);
    if (!rc)
        rc = catalogs_init(&fc, con, l, from, to);
    else
        memset(&fc, 0, sizeof(fc));
    tarn_buf b = {0};
    size_t parts = 0, f = 0;
    int64_t *ids = xcalloc(files.nrows + 1, sizeof(int64_t));
    for (size_t r = 0; !rc && r < snaps.nrows; r++) {
        int64_t sn = duck_table_int64(&snaps, r, 0);
        lk_prune only = {.only_files = ids, .only_set = 1};
        for (; f < files.nrows && duck_table_int64(&files, f, 0) <= sn; f++)
            if (duck_table_int64(&files, f, 0) == sn)
                ids[only.nonly++] = duck_table_int64(&files, f, 1);
        if (parts++)
            buf_puts(&b, " UNION ALL ");
        rc = one_snapshot(&b, con, l, t, sn, kind, virt, &only, &fc);
    }
    catalogs_free(&fc);
    free(ids);
    duck_table_free(&files);
    if (!rc) {
        duck_table_free(&snaps);
        if (!parts) {
            /* no change in range: an empty relation of the right shape */
            buf_printf(&b, "SELECT %s",
                       kind == LK_FEED_CHANGES ? "NULL::BIGINT AS snapshot_id, NULL::BIGINT AS "
                                                 "rowid, NULL::VARCHAR AS change_type, "
                                               : "");
            char *sc2 = NULL;
            rc = lk_scan_sql(&sc2, l, con, &end, t, to, 0);
            if (!rc) {
                for (size_t i = 0; i < t->ncols; i++) {
                    if (i)
                        buf_puts(&b, ", ");
                    quote_ident(&b, t->cols[i].name);
                }
                if (kind != LK_FEED_CHANGES && (virt & LK_FEED_ROWID))
                    buf_puts(&b, ", NULL::BIGINT AS rowid");
                if (kind != LK_FEED_CHANGES && (virt & LK_FEED_SNAPSHOT))
                    buf_puts(&b, ", NULL::BIGINT AS snapshot_id");
                buf_printf(&b, " FROM (%s) WHERE false", sc2);
            }
            free(sc2);
        }
    }
    lk_catalog_free(&end);
    if (rc) {
        buf_free(&b);
        return rc;
    }
    *out = buf_detach(&b);
    return 0;
}
