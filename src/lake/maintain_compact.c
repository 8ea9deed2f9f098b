/*
 * maintain_compact.c — what DuckLake's two compactions share (see
 * maintain_merge.c and maintain_rewrite.c): the live files of a table with
 * what decides whether they may be compacted, and writing the one new file
 * of a compaction from its source files, in their order, with each row's
 * row id and snapshot.
 *
 * Catalog rows read: ducklake_data_file and ducklake_delete_file (live
 * files, their row id ranges and delete files), ducklake_inlined_delete_<t>
 * (deletions stored in the catalog), ducklake_file_partition_value (files
 * of one partition compact together), ducklake_schema_versions (files
 * written under one schema compact together). The rows of the new file
 * and the ended sources are written by the calling compaction, inside the
 * frame of mt_compact_tables.
 */
#include "duck/duck.h"
#include "lake/dvec.h"
#include "lake/catdb.h"
#include "lake/maintain_int.h"
#include "lake/namemap.h"
#include "lake/scan.h"
#include "lake/sort.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

void mt_cands_free(cand_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].group);
        free(l->v[i].path);
        free(l->v[i].subdir);
        free(l->v[i].del_path);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

int mt_groups_load(mt_groups *it, const mt_call *c, const lk_table *t, const char *size_filter)
{
    memset(it, 0, sizeof(*it));
    int rc = mt_load_cands(c, t, size_filter, &it->l);
    it->g = xcalloc(it->l.n ? it->l.n : 1, sizeof(cand *));
    it->done = xcalloc(it->l.n ? it->l.n : 1, 1);
    return rc;
}

int mt_groups_next(mt_groups *it, size_t *ng, mt_keep_fn keep, const void *arg)
{
    const cand_list *l = &it->l;
    while (it->next < l->n && it->done[it->next])
        it->next++;
    if (it->next >= l->n)
        return 0;
    const char *group = l->v[it->next].group;
    *ng = 0;
    for (size_t k = it->next; k < l->n; k++) {
        cand *f = &l->v[k];
        if (it->done[k] || strcmp(f->group, group) != 0)
            continue;
        it->done[k] = 1;
        if (keep(f, arg))
            it->g[(*ng)++] = f;
    }
    return 1;
}

void mt_groups_free(mt_groups *it)
{
    free(it->done);
    free(it->g);
    mt_cands_free(&it->l);
}

static int64_t opt_i64(const char *v)
{
    return v ? strtoll(v, NULL, 10) : -1;
}

static int inline_deletes_exist(const mt_call *c, int64_t table_id)
{
    char *name = xasprintf("ducklake_inlined_delete_%lld", (long long)table_id);
    int exists = lk_catdb_table_exists(&c->lake->db, c->con, name);
    free(name);
    return exists;
}

static char *resolve(const char *dir, const char *path, const char *rel)
{
    if (rel && strcmp(rel, "false") == 0)
        return xstrdup(path);
    return xasprintf("%s%s", dir, path);
}

static char *dir_of(const char *path, const char *rel)
{
    const char *slash = strrchr(path, '/');
    if ((rel && strcmp(rel, "false") == 0) || !slash)
        return xstrdup("");
    return xstrndup(path, (size_t)(slash - path + 1));
}

/* The table's live files with what compaction needs to know, in the order
 * DuckLake considers them. The group (files that may merge: one schema
 * version, one partition) is compared as text only: string_agg, which
 * PostgreSQL has too. */
int mt_load_cands(const mt_call *c, const lk_table *t, const char *size_filter, cand_list *out)
{
    const char *m = c->lake->meta;
    long long tid = (long long)t->id, s = (long long)c->lake->txn->cat.snapshot_id;
    tarn_buf q = {0};
    buf_printf(
        &q,
        "WITH sr AS (SELECT begin_snapshot, COALESCE(lead(begin_snapshot) OVER (ORDER BY "
        "begin_snapshot), 9223372036854775807) AS end_snapshot, schema_version FROM "
        "%s.ducklake_schema_versions WHERE table_id = %lld) SELECT d.data_file_id, "
        "d.record_count, d.row_id_start, d.begin_snapshot, d.partial_max, "
        "d.file_size_bytes, concat_ws('|', sr.schema_version, d.partition_id, (SELECT "
        "string_agg(COALESCE('=' || partition_value, 'null'), ',' ORDER BY partition_key_index) "
        "FROM "
        "%s.ducklake_file_partition_value p WHERE p.data_file_id = d.data_file_id)), "
        "d.path, d.path_is_relative, (SELECT count(*) FROM %s.ducklake_delete_file e WHERE "
        "e.data_file_id = d.data_file_id), x.delete_file_id, x.delete_count, x.path, "
        "x.path_is_relative, ",
        m, tid, m, m);
    if (inline_deletes_exist(c, t->id))
        buf_printf(&q,
                   "(SELECT count(*) FROM %s.ducklake_inlined_delete_%lld i WHERE i.file_id = "
                   "d.data_file_id AND i.begin_snapshot <= %lld)",
                   m, tid, s);
    else
        buf_puts(&q, "0");
    buf_printf(&q,
               ", d.mapping_id FROM %s.ducklake_data_file d LEFT JOIN sr ON d.begin_snapshot >= "
               "sr.begin_snapshot "
               "AND d.begin_snapshot < sr.end_snapshot LEFT JOIN (SELECT * FROM "
               "%s.ducklake_delete_file WHERE table_id = %lld AND %lld >= begin_snapshot AND (%lld "
               "< end_snapshot OR end_snapshot IS NULL)) x ON x.data_file_id = d.data_file_id "
               "WHERE d.table_id = %lld AND d.end_snapshot IS NULL %s ORDER BY d.begin_snapshot, "
               "d.row_id_start, d.data_file_id",
               m, m, tid, s, s, tid, size_filter);
    duck_table r;
    int rc = lk_catdb_query(&r, &c->lake->db, c->con, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    char *dir = lk_lake_table_dir(c->lake, &c->lake->txn->cat, t);
    out->v = xcalloc(r.nrows ? r.nrows : 1, sizeof(cand));
    out->n = r.nrows;
    for (size_t i = 0; i < r.nrows; i++) {
        cand *f = &out->v[i];
        const char *const *row = (const char *const *)r.cells + i * r.ncols;
        f->id = opt_i64(row[0]);
        f->record_count = opt_i64(row[1]);
        f->row_id_start = opt_i64(row[2]);
        f->begin = opt_i64(row[3]);
        f->partial_max = opt_i64(row[4]);
        f->size = opt_i64(row[5]);
        f->group = xstrdup(row[6] ? row[6] : "");
        f->path = resolve(dir, row[7], row[8]);
        f->subdir = dir_of(row[7], row[8]);
        f->ever_deleted = opt_i64(row[9]) > 0;
        f->del_id = opt_i64(row[10]);
        f->del_count = row[11] ? opt_i64(row[11]) : 0;
        f->del_path = row[12] ? resolve(dir, row[12], row[13]) : NULL;
        f->inlined_deleted = opt_i64(row[14]);
        f->mapping_id = opt_i64(row[15]);
    }
    free(dir);
    duck_table_free(&r);
    return 0;
}

/* read_parquet's schema = MAP {…}: the layout's columns by field id, and
 * DuckLake's internal columns when a file has them. */
static void schema_map(tarn_buf *b, const lk_table *t)
{
    buf_puts(b, "schema = MAP {");
    for (size_t i = 0; i < t->ncols; i++) {
        const lk_column *col = &t->cols[i];
        buf_printf(b, "%s%lld: {name: ", i ? ", " : "", (long long)col->id);
        quote_literal(b, col->name);
        buf_puts(b, ", type: ");
        tarn_buf ty = {0};
        lk_type_to_sql(&ty, col);
        quote_literal(b, buf_cstr(&ty));
        buf_free(&ty);
        buf_puts(b, ", default_value: ");
        if (col->initial_default)
            quote_literal(b, col->initial_default);
        else
            buf_puts(b, "NULL::VARCHAR");
        buf_putc(b, '}');
    }
    buf_printf(b,
               ", %lld: {name: '__tarn_rid', type: 'BIGINT', default_value: NULL::VARCHAR}, "
               "%lld: {name: '__tarn_snap', type: 'BIGINT', default_value: NULL::VARCHAR}}",
               LK_FIELD_ID_ROW_ID, LK_FIELD_ID_SNAPSHOT);
}

/* (order, path, row_id_start, begin_snapshot, file id) of the sources. */
static void file_values(tarn_buf *b, cand *const *src, size_t n)
{
    buf_puts(b, "(VALUES ");
    for (size_t i = 0; i < n; i++) {
        buf_printf(b, "%s(%zu, ", i ? ", " : "", i);
        quote_literal(b, src[i]->path);
        if (src[i]->row_id_start < 0)
            buf_puts(b, ", NULL::BIGINT");
        else
            buf_printf(b, ", %lld::BIGINT", (long long)src[i]->row_id_start);
        buf_printf(b, ", %lld::BIGINT, %lld::BIGINT)", (long long)src[i]->begin,
                   (long long)src[i]->id);
    }
    buf_puts(b, ") m(o, p, r, b, i)");
}

/* The table's columns read from alias d, each followed by ", ". */
static void d_columns(tarn_buf *b, const lk_table *tv)
{
    for (size_t i = 0; i < tv->ncols; i++) {
        buf_puts(b, "d.");
        quote_ident(b, tv->cols[i].name);
        buf_puts(b, ", ");
    }
}

/* The sources' paths as a comma-separated list of literals. */
static void file_paths(tarn_buf *b, cand *const *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        buf_puts(b, i ? ", " : "");
        quote_literal(b, src[i]->path);
    }
}

/* The rows of registered (name-mapped) sources, or (m NULL) of the
 * others, in file order: each mapped file is read on its own (its hive
 * values are its own), the others by field id. */
static void mapped_sources(tarn_buf *b, const lk_table *tv, cand *const *src, size_t n,
                           const lk_namemap_set *maps)
{
    int parts = 0;
    for (size_t i = 0; i < n; i++) {
        const lk_namemap *m = lk_namemap_set_find(maps, src[i]->mapping_id);
        if (!m)
            continue;
        buf_puts(b, parts++ ? " UNION ALL SELECT " : "SELECT ");
        lk_scan_mapped_columns(b, tv, m, src[i]->path);
        buf_printf(b,
                   ", %lld::BIGINT + d.file_row_number AS __rid, %lld::BIGINT AS __snap, %zu AS "
                   "__o, d.file_row_number AS __n, d.filename AS __f FROM read_parquet(",
                   (long long)src[i]->row_id_start, (long long)src[i]->begin, i);
        quote_literal(b, src[i]->path);
        buf_puts(b, ", hive_partitioning = false, filename = true, file_row_number = true) d");
    }
    cand **rest = xcalloc(n + 1, sizeof(cand *));
    size_t nrest = 0;
    for (size_t i = 0; i < n; i++)
        if (!lk_namemap_set_find(maps, src[i]->mapping_id))
            rest[nrest++] = src[i];
    if (nrest) {
        buf_puts(b, parts++ ? " UNION ALL SELECT " : "SELECT ");
        d_columns(b, tv);
        /* __o: the file's place among all sources */
        buf_puts(b, "COALESCE(d.__tarn_rid, m.r + d.file_row_number) AS __rid, "
                    "COALESCE(d.__tarn_snap, m.b) AS __snap, m.x AS __o, d.file_row_number AS "
                    "__n, d.filename AS __f FROM read_parquet([");
        file_paths(b, rest, nrest);
        buf_puts(b, "], ");
        schema_map(b, tv);
        buf_puts(b, ", filename = true, file_row_number = true) d JOIN (VALUES ");
        for (size_t i = 0, k = 0; i < n; i++) {
            if (lk_namemap_set_find(maps, src[i]->mapping_id))
                continue;
            buf_printf(b, "%s(%zu, ", k++ ? ", " : "", i);
            quote_literal(b, src[i]->path);
            if (src[i]->row_id_start < 0)
                buf_puts(b, ", NULL::BIGINT");
            else
                buf_printf(b, ", %lld::BIGINT", (long long)src[i]->row_id_start);
            buf_printf(b, ", %lld::BIGINT)", (long long)src[i]->begin);
        }
        buf_puts(b, ") m(x, p, r, b) ON d.filename = m.p");
    }
    free(rest);
}

/* The rows of the sources in file order, with their row id and snapshot;
 * deleted rows left out when `deletes`. */
static void source_sql(tarn_buf *b, const mt_call *c, const lk_table *tv, int64_t table_id,
                       cand *const *src, size_t n, int deletes, const lk_namemap_set *maps)
{
    if (maps->n) {
        /* registered files among the sources: a union of reads, filtered
         * as one (__f is the file) */
        buf_puts(b, "SELECT ");
        d_columns(b, tv);
        buf_puts(b, "d.__rid, d.__snap, d.__o, d.__n FROM (SELECT *, __f AS filename, __n AS "
                    "file_row_number FROM (");
        mapped_sources(b, tv, src, n, maps);
        buf_puts(b, ")) d");
    } else {
        buf_puts(b, "SELECT ");
        d_columns(b, tv);
        buf_puts(b, "COALESCE(d.__tarn_rid, m.r + d.file_row_number) AS __rid, "
                    "COALESCE(d.__tarn_snap, m.b) AS __snap, m.o AS __o, d.file_row_number AS "
                    "__n FROM read_parquet([");
        file_paths(b, src, n);
        buf_puts(b, "], ");
        schema_map(b, tv);
        buf_puts(b, ", filename = true, file_row_number = true) d JOIN ");
        file_values(b, src, n);
        buf_puts(b, " ON d.filename = m.p");
    }
    if (!deletes)
        return;
    tarn_buf del = {0};
    int parts = 0;
    for (size_t i = 0; i < n; i++) {
        if (!src[i]->del_path)
            continue;
        buf_puts(&del, parts++ ? " UNION ALL SELECT " : "SELECT ");
        quote_literal(&del, src[i]->path);
        buf_puts(&del, " AS f, pos FROM ");
        if (lk_dvec_file_is(src[i]->del_path)) { /* DuckLake's deletion vector */
            lk_dvec_source_sql(&del, src[i]->del_path, NULL);
        } else {
            buf_puts(&del, "read_parquet(");
            quote_literal(&del, src[i]->del_path);
            buf_putc(&del, ')');
        }
    }
    if (inline_deletes_exist(c, table_id)) {
        buf_puts(&del, parts++ ? " UNION ALL " : "");
        buf_printf(&del,
                   "SELECT m.p AS f, x.row_id AS pos FROM %s.ducklake_inlined_delete_%lld x "
                   "JOIN ",
                   c->lake->meta, (long long)table_id);
        file_values(&del, src, n);
        buf_printf(&del, " ON x.file_id = m.i WHERE x.begin_snapshot <= %lld",
                   (long long)c->lake->txn->cat.snapshot_id);
    }
    if (parts)
        buf_printf(b, " ANTI JOIN (%s) x ON d.filename = x.f AND d.file_row_number = x.pos",
                   buf_cstr(&del));
    buf_free(&del);
}

/* The layout the sources were written with: the table at the first
 * source's snapshot (all sources share its schema version), or, when that
 * snapshot was expired, at the first one left after it. */
static int layout_at(const mt_call *c, int64_t table_id, int64_t snap, lk_catalog *cat,
                     const lk_table **tv)
{
    int rc = mt_catalog_load(cat, c, snap);
    if (rc)
        return rc;
    *tv = lk_catalog_table_by_id(cat, table_id);
    if (*tv)
        return 0;
    lk_catalog_free(cat);
    return tarn_error_set(TARN_ERROR, "table %lld not found at snapshot %lld", (long long)table_id,
                          (long long)snap);
}

static int partition_values(const mt_call *c, int64_t file_id, duck_table *out)
{
    int rc = lk_catdb_queryf(out, &c->lake->db, c->con,
                             "SELECT partition_value FROM %s.ducklake_file_partition_value WHERE "
                             "data_file_id = %lld ORDER BY partition_key_index",
                             c->lake->meta, (long long)file_id);
    return rc;
}

void mt_compact_result(mt_result *res, const mt_call *c, const lk_table *t, size_t processed,
                       int created)
{
    lk_schema *sc = lk_catalog_schema_by_id(&c->lake->txn->cat, t->schema_id);
    char *cells[4] = {mt_lit(sc ? sc->name : ""), mt_lit(t->name), mt_int((int64_t)processed),
                      mt_int(created)};
    mt_result_row(res, (const char *const *)cells);
    for (size_t k = 0; k < 4; k++)
        free(cells[k]);
}

void mt_change(const mt_call *c, const char *kind, int64_t table_id)
{
    char *tok = xasprintf("%s:%lld", kind, (long long)table_id);
    lk_txn_change(c->lake->txn, tok);
    free(tok);
}

/* Writes the new file of one compaction (rewrite: without deleted rows)
 * and registers it; *created tells whether any row was left to write. */
int mt_write_compacted(const mt_call *c, const lk_table *t, cand *const *src, size_t n, int rewrite,
                       int *created)
{
    /* A merged file keeps the snapshots of its rows, so it keeps their
     * layout too; a rewritten file is data of the commit's snapshot and
     * gets the table's layout now (readers take files that begin after
     * the last layout change as having it). */
    lk_catalog vcat = {0};
    const lk_table *tv = t;
    int rc = rewrite ? 0 : layout_at(c, t->id, src[0]->begin, &vcat, &tv);
    if (rc)
        return rc;
    int adjacent = 1;
    int64_t partial = -1;
    for (size_t i = 0; i < n; i++) {
        if (src[i]->row_id_start < 0 ||
            (i && src[i]->row_id_start != src[i - 1]->row_id_start + src[i - 1]->record_count))
            adjacent = 0;
        int64_t top = src[i]->partial_max >= 0 ? src[i]->partial_max : src[i]->begin;
        if (top > partial)
            partial = top;
    }
    duck_table parts = {0};
    rc = partition_values(c, src[0]->id, &parts);
    tarn_buf s = {0}, order = {0};
    lk_namemap_set maps = {0};
    int64_t *ids = NULL;
    size_t nids = 0;
    for (size_t i = 0; i < n; i++)
        if (src[i]->mapping_id >= 0)
            lk_ids_add(&ids, &nids, src[i]->mapping_id);
    if (!rc && nids)
        rc = lk_namemap_load(&maps, &c->lake->db, c->con, -1, ids, nids);
    free(ids);
    source_sql(&s, c, tv, t->id, src, n, rewrite, &maps);
    lk_namemap_set_free(&maps);
    /* the table's sort order now (SET SORTED BY) goes first, as DuckLake
     * sorts a compaction's rows by it */
    if (lk_sort_order_by(&order, t, tv))
        buf_puts(&order, ", ");
    buf_puts(&order, "__o, __n");
    mt_file_spec sp = {.t = tv,
                       .cur = t,
                       .source = buf_cstr(&s),
                       .order_by = buf_cstr(&order),
                       .with_rid = rewrite || !adjacent,
                       .with_snap = !rewrite,
                       .subdir = src[0]->subdir,
                       .partition_id = -1,
                       .part_values = parts.cells,
                       .nparts = parts.nrows,
                       .begin_snapshot = rewrite ? c->lake->txn->snapshot_id : src[0]->begin,
                       .partial_max = rewrite ? -1 : partial,
                       .row_id_start = rewrite || !adjacent ? -1 : src[0]->row_id_start};
    /* a merge keeps the sources' partition spec (the table may have a
     * newer one) */
    int is_null = 1;
    if (!rc)
        rc = lk_catdb_query_int64f(
            &sp.partition_id, &is_null, &c->lake->db, c->con,
            "SELECT partition_id FROM %s.ducklake_data_file WHERE data_file_id = %lld",
            c->lake->meta, (long long)src[0]->id);
    if (is_null)
        sp.partition_id = -1;
    mt_written w = {0};
    if (!rc)
        rc = mt_write_data_file(c, &sp, &w);
    *created = !rc && w.file_id >= 0;
    mt_written_free(&w);
    buf_free(&s);
    buf_free(&order);
    if (parts.ncols)
        duck_table_free(&parts);
    if (!rewrite)
        lk_catalog_free(&vcat);
    return rc;
}

const char *mt_table_arg(const mt_call *c)
{
    return c->a->npos >= 2 ? c->a->pos[1] : NULL;
}

const char *const MT_COMPACT_NAMES[4] = {"schema_name", "table_name", "files_processed",
                                         "files_created"};
const char *const MT_COMPACT_TYPES[4] = {"VARCHAR", "VARCHAR", "BIGINT", "BIGINT"};

int mt_compact_tables(char **out, const mt_call *c, const mt_compaction *k)
{
    int rc = mt_write_begin(c);
    if (rc)
        return rc;
    mt_result res = {4, MT_COMPACT_NAMES, MT_COMPACT_TYPES, {0}, 0};
    const lk_table **tables = NULL;
    size_t n = 0;
    rc = mt_tables(c, lk_args_named(c->a, "schema"), mt_table_arg(c), &tables, &n);
    for (size_t i = 0; !rc && i < n; i++) {
        if (!mt_auto_compact(c, tables[i]) || mt_checkpoint_skips(c, tables[i], 0))
            continue;
        size_t mark = 0;
        if (k->options)
            rc = k->options(c, tables[i], k->st);
        if (!rc)
            rc = mt_table_begin(c, tables[i], &mark);
        if (!rc)
            rc = k->table(c, tables[i], k->st, &res);
        mt_table_end(c, tables[i], mark);
    }
    free(tables);
    rc = mt_write_end(c, rc);
    *out = mt_result_sql(&res);
    return rc;
}
