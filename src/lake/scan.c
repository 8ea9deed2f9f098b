/*
 * scan.c — building the read SQL of a table at a snapshot (see scan.h).
 *
 * Shape of the generated query, parts left out when empty:
 *
 *   SELECT cols FROM read_parquet([files], schema = MAP{field_id: {name,
 *          type, default}}, filename = true, file_row_number = true) d
 *     ANTI JOIN (deleted (file, pos) pairs) x ON …      -- inlined / pending deletes
 *     WHERE NOT __tarn_deleted('spec', [d.file_index,] d.file_row_number)
 *                                                        -- delete files (delmask.h)
 *       AND __tarn_snap <= S                             -- partial files
 *   UNION ALL SELECT cols FROM <inlined table> WHERE <live at S>
 *   UNION ALL SELECT cols FROM <pending inserts>        -- open transaction
 *
 * Files are matched by Parquet field id (= column id), so renamed and
 * dropped columns read right; the two internal columns DuckLake may embed
 * (_ducklake_internal_row_id / _snapshot_id, field ids 2147483540 / 539)
 * come in under private names when row ids or per-row snapshots matter.
 *
 * What the SQL needs from the catalog (a table's live files, delete files
 * and partition values; an inlined table's column names, ended rows and
 * emptiness) is read through the per-lake cache of scan_cache.c: a commit
 * drops what it changed and records what it added, attaching fills it for
 * every table in a few queries, so a build's views and pinned reads cost
 * no catalog query.
 */
#include "lake/scan.h"

#include "duck/duck.h"
#include "lake/delmask.h"
#include "lake/prune.h"
#include "lake/scan_input.h"
#include "lake/hive.h"
#include "lake/namemap.h"
#include "lake/scan_int.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ROW_ID_FIELD 2147483540LL

#define SNAPSHOT_FIELD 2147483539LL

static int load_committed_files(scan_input *in, lk_lake *lake, duckdb_connection con,
                                const lk_table *t, const lk_catalog *cat, int64_t s)
{
    duck_table r;
    int rc = scan_query_files(&r, lake, con, t->id, s);
    if (rc)
        return rc;
    char *dir = lk_lake_table_dir(lake, cat, t);
    scan_add_file_rows(in, &r, 0, r.nrows, dir);
    free(dir);
    duck_table_free(&r);
    return 0;
}

/* The column as the files of a group wrote it: a nested column is read
 * with the child names of its file-time layout (DuckDB matches struct
 * children by name), then rebuilt by child id (see rebuild()). */
static const lk_column *file_column(const lk_column *c, const lk_column *layout, size_t nlayout)
{
    if (!layout || !lk_type_is_nested(c->type))
        return c;
    for (size_t i = 0; i < nlayout; i++)
        if (layout[i].id == c->id)
            return &layout[i];
    return c;
}

/* The column list of the schema = MAP{…} parameter. */
static void schema_map(tarn_buf *b, const lk_table *t, int with_internal, const lk_column *layout,
                       size_t nlayout)
{
    buf_puts(b, "schema = MAP {");
    for (size_t i = 0; i < t->ncols; i++) {
        const lk_column *c = &t->cols[i];
        if (i)
            buf_puts(b, ", ");
        buf_printf(b, "%lld: {name: ", (long long)c->id);
        quote_literal(b, c->name);
        buf_puts(b, ", type: ");
        tarn_buf ty = {0};
        lk_type_to_sql(&ty, file_column(c, layout, nlayout));
        quote_literal(b, buf_cstr(&ty));
        buf_free(&ty);
        /* defaults go in as text (DuckDB casts them to `type`): the map's
         * values must all have one type */
        buf_puts(b, ", default_value: ");
        if (c->initial_default)
            quote_literal(b, c->initial_default);
        else
            buf_puts(b, "NULL::VARCHAR");
        buf_putc(b, '}');
    }
    if (with_internal)
        buf_printf(b,
                   ", %lld: {name: '__tarn_rid', type: 'BIGINT', default_value: NULL::VARCHAR}"
                   ", %lld: {name: '__tarn_snap', type: 'BIGINT', default_value: NULL::VARCHAR}",
                   ROW_ID_FIELD, SNAPSHOT_FIELD);
    buf_putc(b, '}');
}

static void column_list(tarn_buf *b, const lk_table *t, const char *prefix)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (i)
            buf_puts(b, ", ");
        if (prefix)
            buf_printf(b, "%s.", prefix);
        quote_ident(b, t->cols[i].name);
    }
}

static const lk_column *child_by_id(const lk_column *c, int64_t id)
{
    for (size_t i = 0; c && i < c->nchildren; i++)
        if (c->children[i].id == id)
            return &c->children[i];
    return NULL;
}

/* An expression turning `expr`, a value of file-time layout `src`, into
 * the current layout `dst`, matching nested children by column id: renamed
 * children keep their values, added ones are NULL (or their initial
 * default), dropped ones vanish. */
static void rebuild(tarn_buf *b, const char *expr, const lk_column *dst, const lk_column *src,
                    int depth);

void lk_scan_rebuild(tarn_buf *b, const char *expr, const lk_column *dst, const lk_column *src)
{
    rebuild(b, expr, dst, src, 0);
}

static void rebuild(tarn_buf *b, const char *expr, const lk_column *dst, const lk_column *src,
                    int depth)
{
    if (!src && dst->initial_default && !lk_type_is_nested(dst->type)) {
        /* a field added with a DEFAULT after the row was written */
        buf_puts(b, "CAST(");
        quote_literal(b, dst->initial_default);
        buf_puts(b, " AS ");
        lk_type_to_sql(b, dst);
        buf_putc(b, ')');
        return;
    }
    if (!src) {
        buf_puts(b, "NULL::");
        lk_type_to_sql(b, dst);
        return;
    }
    if (strcmp(dst->type, "struct") == 0 && strcmp(src->type, "struct") == 0) {
        buf_printf(b, "CASE WHEN (%s) IS NULL THEN NULL ELSE struct_pack(", expr);
        for (size_t i = 0; i < dst->nchildren; i++) {
            const lk_column *dc = &dst->children[i];
            const lk_column *sc = child_by_id(src, dc->id);
            tarn_buf sub = {0};
            if (sc) {
                buf_printf(&sub, "(%s).", expr);
                quote_ident(&sub, sc->name);
            }
            if (i)
                buf_puts(b, ", ");
            quote_ident(b, dc->name);
            buf_puts(b, " := ");
            rebuild(b, buf_cstr(&sub), dc, sc, depth + 1);
            buf_free(&sub);
        }
        buf_puts(b, ") END");
        return;
    }
    if (strcmp(dst->type, "list") == 0 && strcmp(src->type, "list") == 0) {
        char *var = xasprintf("__tarn_x%d", depth);
        buf_printf(b, "list_transform(%s, %s -> ", expr, var);
        rebuild(b, var, &dst->children[0], &src->children[0], depth + 1);
        buf_putc(b, ')');
        free(var);
        return;
    }
    if (strcmp(dst->type, "map") == 0 && strcmp(src->type, "map") == 0) {
        char *var = xasprintf("__tarn_e%d", depth);
        char *k = xasprintf("%s.key", var), *v = xasprintf("%s.value", var);
        buf_printf(b, "map_from_entries(list_transform(map_entries(%s), %s -> {'key': ", expr, var);
        rebuild(b, k, &dst->children[0], &src->children[0], depth + 1);
        buf_puts(b, ", 'value': ");
        rebuild(b, v, &dst->children[1], &src->children[1], depth + 1);
        buf_puts(b, "}))");
        free(var);
        free(k);
        free(v);
        return;
    }
    buf_printf(b, "CAST(%s AS ", expr);
    lk_type_to_sql(b, dst);
    buf_putc(b, ')');
}

/* The table's columns read from alias d, nested ones rebuilt from the
 * group's file-time layout when it differs. */
static int constant_of(const scan_file *f, int64_t column_id, const char **value)
{
    for (size_t k = 0; f && k < f->npk; k++) {
        if (f->pk_cols[k] == column_id) {
            *value = f->pk_vals[k];
            return 1;
        }
    }
    return 0;
}

/* `pk` is a file of the group: its identity partition values are the same
 * for every file of the group, and become constants, so that a filter on
 * them folds to false in the other groups and DuckDB skips their files
 * (partition pruning). */
static void projected_columns(tarn_buf *b, const lk_table *t, const lk_column *layout,
                              size_t nlayout, const scan_file *pk)
{
    for (size_t i = 0; i < t->ncols; i++) {
        const lk_column *c = &t->cols[i];
        const lk_column *fc = file_column(c, layout, nlayout);
        const char *value = NULL;
        if (i)
            buf_puts(b, ", ");
        if (constant_of(pk, c->id, &value)) {
            buf_puts(b, "CAST(");
            quote_literal(b, value);
            buf_puts(b, " AS ");
            lk_type_to_sql(b, c);
            buf_puts(b, ") AS ");
            quote_ident(b, c->name);
            continue;
        }
        if (fc == c) {
            buf_puts(b, "d.");
            quote_ident(b, c->name);
            continue;
        }
        tarn_buf e = {0};
        buf_puts(&e, "d.");
        quote_ident(&e, c->name);
        rebuild(b, buf_cstr(&e), c, fc, 0);
        buf_free(&e);
        buf_puts(b, " AS ");
        quote_ident(b, c->name);
    }
}

/* The latest snapshot at which any current column (or nested field) got
 * its present name, type and place: files written at or after it have the
 * table's current layout and can be read by name. */
static int64_t layout_since(const lk_column *cols, size_t n)
{
    int64_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (cols[i].begin > m)
            m = cols[i].begin;
        int64_t c = layout_since(cols[i].children, cols[i].nchildren);
        if (c > m)
            m = c;
    }
    return m;
}

/* Columns read by name, cast to the table's types (HUGEINT is stored as
 * DOUBLE, TIMESTAMP_S as TIMESTAMP; casts to the same type cost nothing). */
static void by_name_columns(tarn_buf *b, const lk_table *t, const scan_file *pk)
{
    for (size_t i = 0; i < t->ncols; i++) {
        const lk_column *c = &t->cols[i];
        const char *value = NULL;
        if (i)
            buf_puts(b, ", ");
        buf_puts(b, "CAST(");
        if (constant_of(pk, c->id, &value)) {
            quote_literal(b, value);
        } else {
            buf_puts(b, "d.");
            quote_ident(b, c->name);
        }
        buf_puts(b, " AS ");
        lk_type_to_sql(b, c);
        buf_puts(b, ") AS ");
        quote_ident(b, c->name);
    }
}

/* (i, p, r, b): file id, path, first row id, begin snapshot of each file;
 * `wide` adds what virtual columns read: s, the snapshot_id a user sees
 * (none yet for pending rows), x, file_index, and l, the first row id a
 * user sees. */
static void file_values(tarn_buf *b, const scan_input *in, int wide)
{
    buf_puts(b, "(VALUES ");
    for (size_t i = 0; i < in->n; i++) {
        const scan_file *f = &in->files[i];
        if (i)
            buf_puts(b, ", ");
        buf_printf(b, "(%lld::BIGINT, ", (long long)f->id);
        quote_literal(b, f->path);
        buf_printf(b, ", %lld::BIGINT, %lld::BIGINT", (long long)f->row_id_start,
                   (long long)f->begin);
        if (wide) {
            if (f->pending)
                buf_puts(b, ", NULL::BIGINT");
            else
                buf_printf(b, ", %lld::BIGINT", (long long)f->begin);
            buf_printf(
                b, ", %lld::UBIGINT, %lld::BIGINT", (long long)f->index,
                (long long)(f->pending && f->local_start >= 0 ? f->local_start : f->row_id_start));
        }
        buf_putc(b, ')');
    }
    buf_puts(b, ")");
}

/* The join of a part's files with their file_values, as alias m. */
static void file_join(tarn_buf *b, const scan_input *in, int flags)
{
    int wide = (flags & (LK_SCAN_VIRTUAL | LK_SCAN_LOCAL_ROWIDS)) != 0;
    buf_puts(b, " JOIN ");
    file_values(b, in, wide);
    buf_puts(b, wide ? " m(i, p, r, b, s, x, l) ON d.filename = m.p"
                     : " m(i, p, r, b) ON d.filename = m.p");
}

/* The filter that drops the rows the files' delete files list at
 * snapshot s: one bit test per row (delmask.h; a delete file may embed
 * each deletion's snapshot while its catalog row has no partial_max, as
 * DuckLake's flush writes them). Nothing when no file has one. */
static void delete_files_filter(tarn_buf *b, const scan_input *in, int64_t s)
{
    tarn_buf spec = {0};
    int any = 0;
    lk_delmask_spec_begin(&spec, s);
    for (size_t i = 0; i < in->n; i++) {
        if (in->files[i].del_path) {
            lk_delmask_spec_file(&spec, i, in->files[i].del_path);
            any = 1;
        }
    }
    if (any) {
        buf_puts(b, "NOT __tarn_deleted(");
        quote_literal(b, buf_cstr(&spec));
        buf_puts(b, in->n == 1 ? ", d.file_row_number)" : ", d.file_index, d.file_row_number)");
    }
    buf_free(&spec);
}

/* The (f, pos) pairs deleted at snapshot s that no delete file holds: the
 * inlined deletion table, and the transaction's pending deletions. */
static int deletes_sql(tarn_buf *b, lk_lake *lake, const lk_table *t, const scan_input *in,
                       const char *snap, int pending)
{
    int parts = 0;
    if (in->has_inline_deletes) {
        buf_puts(b, parts++ ? " UNION ALL " : "");
        buf_puts(b, "SELECT m.p AS f, x.row_id AS pos FROM ");
        buf_printf(b, "%s.\"ducklake_inlined_delete_%lld\" x JOIN ", lake->meta, (long long)t->id);
        file_values(b, in, 0);
        buf_printf(b, " m(i, p, r, b) ON x.file_id = m.i WHERE x.begin_snapshot <= %s", snap);
    }
    if (pending && lake->txn->has_deletes) {
        char *pd = lk_txn_pending_deletes(lake);
        buf_puts(b, parts++ ? " UNION ALL " : "");
        buf_printf(b, "SELECT m.p AS f, x.pos FROM %s x JOIN ", pd);
        file_values(b, in, 0);
        buf_printf(b, " m(i, p, r, b) ON x.file_id = m.i WHERE x.table_id = %lld",
                   (long long)t->id);
        free(pd);
    }
    return parts;
}

static int needs_snapshot_filter(const scan_input *in, int64_t s)
{
    for (size_t i = 0; i < in->n; i++)
        if (in->files[i].partial_max > s)
            return 1;
    return 0;
}

/* The virtual columns asked for in `flags` (LK_SCAN_VIRTUAL), each an
 * expression of the part that reads them. */
static void virtual_columns(tarn_buf *b, int flags, const char *snap, const char *file,
                            const char *row, const char *index)
{
    if (flags & LK_SCAN_SNAPSHOT)
        buf_printf(b, ", %s AS snapshot_id", snap);
    if (flags & LK_SCAN_FILENAME)
        buf_printf(b, ", %s AS filename", file);
    if (flags & LK_SCAN_FILE_ROW)
        buf_printf(b, ", %s AS file_row_number", row);
    if (flags & LK_SCAN_FILE_INDEX)
        buf_printf(b, ", %s AS file_index", index);
}

/* Parts reading files: rowid and the virtual columns from read_parquet's
 * own and the file list m (see file_values). */
static void file_virtuals(tarn_buf *b, int flags, int by_id)
{
    if (flags & (LK_SCAN_ROWID | LK_SCAN_IDENTITY)) {
        const char *start = flags & LK_SCAN_LOCAL_ROWIDS ? "m.l" : "m.r";
        if (by_id)
            buf_printf(b, ", COALESCE(d.__tarn_rid, %s + d.file_row_number) AS rowid", start);
        else
            buf_printf(b, ", %s + d.file_row_number AS rowid", start);
    }
    if (flags & LK_SCAN_IDENTITY)
        buf_printf(b, ", m.i AS __tarn_fid, d.file_row_number AS __tarn_pos, %s AS __tarn_rsnap",
                   by_id ? "COALESCE(d.__tarn_snap, m.b)" : "m.b");
    virtual_columns(b, flags,
                    by_id ? "CASE WHEN m.s IS NULL THEN NULL ELSE COALESCE(d.__tarn_snap, m.s) END"
                          : "m.s",
                    "d.filename", "d.file_row_number", "m.x");
}

static void parquet_part(tarn_buf *b, lk_lake *lake, const lk_table *t, const scan_input *in,
                         int64_t s, const char *snap, int flags, int pending,
                         const lk_column *layout, size_t nlayout)
{
    tarn_buf del = {0};
    int ndel = deletes_sql(&del, lake, t, in, snap, pending);
    int snap_filter = needs_snapshot_filter(in, s);
    int ident = (flags & (LK_SCAN_ROWID | LK_SCAN_IDENTITY | LK_SCAN_VIRTUAL)) != 0;
    /* Mapping columns by field id (schema = MAP{…}) costs DuckDB its
     * Parquet statistics and cardinality estimate (measured: 2x on a full
     * scan); files written under the current layout don't need it. */
    int64_t since = layout_since(t->cols, t->ncols);
    int by_name = !ident && !snap_filter && !layout;
    int64_t rows = 0;
    for (size_t i = 0; i < in->n; i++) {
        if (in->files[i].begin < since)
            by_name = 0;
        rows += in->files[i].record_count;
    }
    buf_puts(b, "SELECT ");
    if (by_name)
        by_name_columns(b, t, in->n ? &in->files[0] : NULL);
    else
        projected_columns(b, t, layout, nlayout, in->n ? &in->files[0] : NULL);
    file_virtuals(b, flags, 1);
    buf_puts(b, " FROM read_parquet([");
    for (size_t i = 0; i < in->n; i++) {
        if (i)
            buf_puts(b, ", ");
        quote_literal(b, in->files[i].path);
    }
    buf_puts(b, "], ");
    if (!by_name) {
        schema_map(b, t, ident || snap_filter, layout, nlayout);
        buf_puts(b, ", ");
    }
    /* the catalog knows the row count: tell the planner (it decides the
     * join order of the delete ANTI JOIN) */
    buf_printf(b, "explicit_cardinality = %lld, filename = true, file_row_number = true) d",
               (long long)rows);
    if (ident) {
        file_join(b, in, flags);
    }
    if (ndel) {
        buf_printf(b, " ANTI JOIN (%s) x ON d.filename = x.f AND d.file_row_number = x.pos",
                   buf_cstr(&del));
    }
    tarn_buf where = {0};
    delete_files_filter(&where, in, s);
    if (snap_filter)
        buf_printf(&where, "%s(d.__tarn_snap IS NULL OR d.__tarn_snap <= %s)",
                   where.len ? " AND " : "", snap);
    if (where.len)
        buf_printf(b, " WHERE %s", buf_cstr(&where));
    buf_free(&where);
    buf_free(&del);
}

/* The names the columns of `t` had in inlined table `inl` (written under an
 * older schema version): old[i] is the name of t->cols[i] there, or NULL
 * when the column did not exist yet. Matched by column id. */
static char **inlined_names_read(lk_lake *lake, duckdb_connection con, const lk_table *t,
                                 const lk_inlined *inl);

static char **inlined_names(lk_lake *lake, duckdb_connection con, const lk_table *t,
                            const lk_inlined *inl)
{
    inlined_info *x = scan_inlined_find(lake, inl->name, 0);
    if (!x || !x->have_names)
        return inlined_names_read(lake, con, t, inl);
    char **old = xcalloc(t->ncols ? t->ncols : 1, sizeof(char *));
    for (size_t i = 0; i < t->ncols; i++)
        for (size_t k = 0; k < x->n; k++)
            if (x->ids[k] == t->cols[i].id) {
                old[i] = xstrdup(x->names[k]);
                break;
            }
    return old;
}

/* inlined_names from the catalog; remembered when the table is committed
 * (the names at a past snapshot never change). */
static char **inlined_names_read(lk_lake *lake, duckdb_connection con, const lk_table *t,
                                 const lk_inlined *inl)
{
    char *sql = xasprintf(
        "SELECT c.column_id, c.column_name FROM %s.ducklake_column c, (SELECT COALESCE((SELECT "
        "max(begin_snapshot) FROM %s.ducklake_schema_versions WHERE table_id = %lld AND "
        "schema_version <= %lld), %lld) AS s) v WHERE c.table_id = %lld AND c.parent_column IS "
        "NULL AND v.s >= c.begin_snapshot AND (v.s < c.end_snapshot OR c.end_snapshot IS NULL)",
        lake->meta, lake->meta, (long long)t->id, (long long)inl->schema_version,
        (long long)t->begin, (long long)t->id);
    duck_table r;
    int ok = duck_table_query(&r, con, sql) == 0 && r.nrows > 0;
    free(sql);
    if (!ok) {
        /* created in this transaction: it has the current columns */
        if (r.ncols)
            duck_table_free(&r);
        tarn_error_clear();
        char **old = xcalloc(t->ncols ? t->ncols : 1, sizeof(char *));
        for (size_t i = 0; i < t->ncols; i++)
            old[i] = xstrdup(t->cols[i].name);
        return old;
    }
    int64_t *ids = xcalloc(r.nrows, sizeof(int64_t));
    char **names = xcalloc(r.nrows, sizeof(char *));
    for (size_t k = 0; k < r.nrows; k++) {
        ids[k] = strtoll(duck_table_get(&r, k, 0), NULL, 10);
        names[k] = (char *)duck_table_get(&r, k, 1);
    }
    scan_inlined_set_names(scan_inlined_find(lake, inl->name, 1), ids, names, r.nrows);
    free(ids);
    free(names);
    duck_table_free(&r);
    return inlined_names(lake, con, t, inl);
}

static void inlined_column(tarn_buf *b, const lk_column *c, const char *old)
{
    buf_puts(b, "CAST(");
    if (old)
        quote_ident(b, old);
    else
        quote_literal(b, c->initial_default);
    buf_puts(b, " AS ");
    lk_type_to_sql(b, c);
    buf_puts(b, ") AS ");
    quote_ident(b, c->name);
}

static int has_nested(const lk_table *t);

static int same_tree(const lk_column *a, const lk_column *b);

/* The table as it was when inlined table `inl` got its layout (for the
 * child names of nested columns); NULL when that cannot be known. */
static const lk_table *inlined_layout(lk_catalog *then, lk_lake *lake, duckdb_connection con,
                                      const lk_table *t, const lk_inlined *inl)
{
    char *q = xasprintf("SELECT max(begin_snapshot) FROM %s.ducklake_schema_versions WHERE "
                        "table_id = %lld AND schema_version <= %lld",
                        lake->meta, (long long)t->id, (long long)inl->schema_version);
    int64_t begin = -1;
    int is_null = 1;
    int rc = duck_query_int64(&begin, &is_null, con, q);
    free(q);
    tarn_error_clear();
    if (rc || is_null || lk_catalog_load(then, &lake->db, con, begin) != 0) {
        tarn_error_clear();
        return NULL;
    }
    return lk_catalog_table_by_id(then, t->id);
}

/* 1 when some row of the inlined table was ended (deleted or updated); a
 * commit that ends one rebuilds the table's view, so this holds until then. */
static int any_ended(lk_lake *lake, duckdb_connection con, const lk_inlined *inl)
{
    inlined_info *x = scan_inlined_find(lake, inl->name, 0);
    if (x && x->have_ended)
        return x->ended;
    tarn_buf b = {0};
    buf_printf(&b, "SELECT count(*) FROM (SELECT 1 FROM %s.", lake->meta);
    quote_ident(&b, inl->name);
    buf_puts(&b, " WHERE end_snapshot IS NOT NULL LIMIT 1)");
    int64_t n = 1;
    if (duck_query_int64(&n, NULL, con, buf_cstr(&b)) != 0) {
        tarn_error_clear();
    } else {
        x = scan_inlined_find(lake, inl->name, 1);
        x->have_ended = 1;
        x->ended = n > 0;
    }
    buf_free(&b);
    return n > 0;
}

static void inlined_part(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                         const lk_inlined *inl, const char *snap, int flags, int pending,
                         int latest, int64_t file_index)
{
    char **old = inlined_names(lake, con, t, inl);
    lk_catalog then = {0};
    const lk_table *tt = has_nested(t) ? inlined_layout(&then, lake, con, t, inl) : NULL;
    buf_puts(b, "SELECT ");
    for (size_t i = 0; i < t->ncols; i++) {
        const lk_column *c = &t->cols[i], *was = NULL;
        for (size_t k = 0; tt && k < tt->ncols; k++)
            if (tt->cols[k].id == c->id)
                was = &tt->cols[k];
        if (i)
            buf_puts(b, ", ");
        if (was && old[i] && lk_type_is_nested(c->type) && !same_tree(c, was)) {
            tarn_buf e = {0};
            quote_ident(&e, old[i]);
            rebuild(b, buf_cstr(&e), c, was, 0);
            buf_free(&e);
            buf_puts(b, " AS ");
            quote_ident(b, c->name);
        } else {
            inlined_column(b, c, old[i]);
        }
        free(old[i]);
    }
    free(old);
    if (then.tables)
        lk_catalog_free(&then);
    if (flags & (LK_SCAN_ROWID | LK_SCAN_IDENTITY))
        buf_puts(b, ", row_id AS rowid");
    if (flags & LK_SCAN_IDENTITY)
        buf_puts(b, ", -1::BIGINT AS __tarn_fid, row_id AS __tarn_pos, begin_snapshot AS "
                    "__tarn_rsnap");
    if (flags & LK_SCAN_VIRTUAL) {
        tarn_buf name = {0}, index = {0};
        quote_literal(&name, inl->name);
        buf_printf(&index, "%lld::UBIGINT", (long long)file_index);
        virtual_columns(b, flags, "begin_snapshot", buf_cstr(&name),
                        "row_number() OVER (ORDER BY row_id) - 1", buf_cstr(&index));
        buf_free(&name);
        buf_free(&index);
    }
    buf_printf(b, " FROM %s.", lake->meta);
    quote_ident(b, inl->name);
    /* At the lake's latest snapshot (the session's own view: one writer,
     * this session) a row is live iff it was never ended — a filter DuckDB
     * can estimate from the column's statistics, which keeps its join
     * order, and so the order of unordered results, the same as DuckLake's. */
    int unended = latest && !any_ended(lake, con, inl);
    if (unended)
        buf_puts(b, " WHERE true"); /* nothing ended yet: no filter, exact estimates */
    else if (latest)
        buf_puts(b, " WHERE end_snapshot IS NULL");
    else
        buf_printf(b, " WHERE %s >= begin_snapshot AND (%s < end_snapshot OR end_snapshot IS NULL)",
                   snap, snap);
    if (pending && lake->txn->has_deletes) {
        char *pid = lk_txn_pending_inline_deletes(lake);
        buf_printf(b, " AND row_id NOT IN (SELECT row_id FROM %s WHERE table_id = %lld)", pid,
                   (long long)t->id);
        free(pid);
    }
    /* DuckLake reads inlined rows in row id order: queries whose result
     * order is scan order (single-threaded) then see the same order. With
     * no row ended, the table holds its rows in that order already (each
     * commit appends its rows, ids rising), and an ORDER BY would only
     * change what DuckDB does above it: a window over ordered input
     * returns its partitions in another order than over a plain scan. */
    if (!unended)
        buf_puts(b, " ORDER BY row_id");
}

/* `local_start`: the transaction-local row id of its first new inlined
 * row (after its new files' rows, as DuckLake counts them). */
static void pending_part(tarn_buf *b, lk_lake *lake, const lk_table *t, int flags,
                         int64_t local_start, int64_t file_index)
{
    char *pi = lk_txn_pending_inserts(lake, t->id);
    buf_puts(b, "SELECT ");
    column_list(b, t, NULL);
    const lk_table_delta *dl = lk_txn_find_delta(lake->txn, t->id);
    long long base = dl ? (long long)dl->base_row_id : 0;
    if ((flags & LK_SCAN_LOCAL_ROWIDS) && !(flags & LK_SCAN_IDENTITY))
        /* new rows (an UPDATE's images keep their ids) */
        buf_printf(b,
                   ", CASE WHEN row_id >= %lld THEN %lld + row_number() OVER (PARTITION BY row_id "
                   ">= %lld ORDER BY row_id) - 1 ELSE row_id END AS rowid",
                   base, (long long)local_start, base);
    else if (flags & (LK_SCAN_ROWID | LK_SCAN_IDENTITY))
        buf_puts(b, ", row_id AS rowid");
    if (flags & LK_SCAN_IDENTITY)
        buf_printf(b,
                   ", -2::BIGINT AS __tarn_fid, row_id AS __tarn_pos, %lld::BIGINT AS "
                   "__tarn_rsnap",
                   (long long)lake->txn->snapshot_id);
    if (flags & LK_SCAN_VIRTUAL) {
        char *index = xasprintf("%lld::UBIGINT", (long long)file_index);
        virtual_columns(b, flags, "NULL::BIGINT", "'__ducklake_inlined_transaction_local_data'",
                        "row_number() OVER (ORDER BY row_id) - 1", index);
        free(index);
    }
    buf_printf(b, " FROM %s", pi);
    free(pi);
}

static void empty_part(tarn_buf *b, const lk_table *t, int flags)
{
    buf_puts(b, "SELECT ");
    for (size_t i = 0; i < t->ncols; i++) {
        if (i)
            buf_puts(b, ", ");
        buf_puts(b, "NULL::");
        lk_type_to_sql(b, &t->cols[i]);
        buf_puts(b, " AS ");
        quote_ident(b, t->cols[i].name);
    }
    if (flags & (LK_SCAN_ROWID | LK_SCAN_IDENTITY))
        buf_puts(b, ", NULL::BIGINT AS rowid");
    if (flags & LK_SCAN_IDENTITY)
        buf_puts(b, ", NULL::BIGINT AS __tarn_fid, NULL::BIGINT AS __tarn_pos, NULL::BIGINT AS "
                    "__tarn_rsnap");
    virtual_columns(b, flags, "NULL::BIGINT", "NULL::VARCHAR", "NULL::BIGINT", "NULL::UBIGINT");
    buf_puts(b, " LIMIT 0");
}

static int pending_inserts_exist(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    return lk_write_pending_exists(lake, con, t->id);
}

static int inlined_table_exists(lk_lake *lake, duckdb_connection con, const char *name)
{
    return lk_lake_meta_table_exists(lake, con, name);
}

static int has_nested(const lk_table *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (lk_type_is_nested(t->cols[i].type))
            return 1;
    return 0;
}

static int same_tree(const lk_column *a, const lk_column *b)
{
    if (a->id != b->id || strcmp(a->name, b->name) != 0 || strcmp(a->type, b->type) != 0 ||
        a->nchildren != b->nchildren)
        return 0;
    for (size_t i = 0; i < a->nchildren; i++)
        if (!same_tree(&a->children[i], &b->children[i]))
            return 0;
    return 1;
}

/* 1 when the nested columns of `t` are laid out in `layout` as they are
 * now (so the files can be read with the current types). */
static int nested_unchanged(const lk_table *t, const lk_table *then)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (!lk_type_is_nested(t->cols[i].type))
            continue;
        for (size_t k = 0; k < then->ncols; k++)
            if (then->cols[k].id == t->cols[i].id && !same_tree(&then->cols[k], &t->cols[i]))
                return 0;
    }
    return 1;
}

/* Reads each committed file's identity partition values (from whichever
 * partition spec it was written under) and builds its group signature. */
static int load_partition_constants(scan_input *in, lk_lake *lake, duckdb_connection con,
                                    const lk_table *t)
{
    duck_table r;
    int rc = scan_query_partition_values(&r, lake, con, t->id);
    if (rc)
        return rc;
    scan_apply_partition_values(in, t, &r);
    duck_table_free(&r);
    return 0;
}

/* ---- files read through a name mapping (namemap.h) ---- */

/* An expression reading file value `expr` (mapped by entry `e`) as column
 * `c`: nested values rebuilt child by child through the mapping's child
 * entries (a child the mapping lacks reads as NULL), leaves cast. */
static void mapped_value(tarn_buf *b, const char *expr, const lk_column *c, const lk_nm_entry *e,
                         int depth)
{
    if (strcmp(c->type, "struct") == 0) {
        buf_printf(b, "CASE WHEN (%s) IS NULL THEN NULL ELSE struct_pack(", expr);
        for (size_t i = 0; i < c->nchildren; i++) {
            const lk_column *cc = &c->children[i];
            const lk_nm_entry *ce = lk_namemap_target(e->children, e->nchildren, cc->id);
            if (i)
                buf_puts(b, ", ");
            quote_ident(b, cc->name);
            buf_puts(b, " := ");
            if (!ce) {
                buf_puts(b, "NULL::");
                lk_type_to_sql(b, cc);
                continue;
            }
            tarn_buf sub = {0};
            buf_printf(&sub, "(%s).", expr);
            quote_ident(&sub, ce->source);
            mapped_value(b, buf_cstr(&sub), cc, ce, depth + 1);
            buf_free(&sub);
        }
        buf_puts(b, ") END");
        return;
    }
    const lk_nm_entry *e0 =
        c->nchildren > 0 ? lk_namemap_target(e->children, e->nchildren, c->children[0].id) : NULL;
    const lk_nm_entry *e1 =
        c->nchildren > 1 ? lk_namemap_target(e->children, e->nchildren, c->children[1].id) : NULL;
    if (strcmp(c->type, "list") == 0 && e0) {
        char *var = xasprintf("__tarn_x%d", depth);
        buf_printf(b, "list_transform(%s, %s -> ", expr, var);
        mapped_value(b, var, &c->children[0], e0, depth + 1);
        buf_putc(b, ')');
        free(var);
        return;
    }
    if (strcmp(c->type, "map") == 0 && e0 && e1) {
        char *var = xasprintf("__tarn_e%d", depth);
        char *k = xasprintf("%s.key", var), *v = xasprintf("%s.value", var);
        buf_printf(b, "map_from_entries(list_transform(map_entries(%s), %s -> {'key': ", expr, var);
        mapped_value(b, k, &c->children[0], e0, depth + 1);
        buf_puts(b, ", 'value': ");
        mapped_value(b, v, &c->children[1], e1, depth + 1);
        buf_puts(b, "}))");
        free(var);
        free(k);
        free(v);
        return;
    }
    buf_printf(b, "CAST(%s AS ", expr);
    lk_type_to_sql(b, c);
    buf_putc(b, ')');
}

/* The table's columns from a group of files of one mapping and one set
 * of hive values (`pk`: a file of the group): each column from the file
 * column its entry names, from the hive path, or (no entry: the file does
 * not have it) its initial default. */
static void mapped_columns(tarn_buf *b, const lk_table *t, const lk_namemap *m, const char *path,
                           const scan_file *pk)
{
    lk_hive h;
    lk_hive_parse(&h, path);
    for (size_t i = 0; i < t->ncols; i++) {
        const lk_column *c = &t->cols[i];
        const lk_nm_entry *e = lk_namemap_target(m->cols, m->ncols, c->id);
        const char *value = NULL;
        if (i)
            buf_puts(b, ", ");
        if (e && e->hive) {
            lk_hive_value_sql(b, lk_hive_get(&h, e->source), c);
        } else if (constant_of(pk, c->id, &value)) {
            buf_puts(b, "CAST(");
            quote_literal(b, value);
            buf_puts(b, " AS ");
            lk_type_to_sql(b, c);
            buf_putc(b, ')');
        } else if (e) {
            tarn_buf src = {0};
            buf_puts(&src, "d.");
            quote_ident(&src, e->source);
            mapped_value(b, buf_cstr(&src), c, e, 0);
            buf_free(&src);
        } else {
            buf_puts(b, "CAST(");
            quote_literal(b, c->initial_default);
            buf_puts(b, " AS ");
            lk_type_to_sql(b, c);
            buf_putc(b, ')');
        }
        buf_puts(b, " AS ");
        quote_ident(b, c->name);
    }
    lk_hive_free(&h);
}

void lk_scan_mapped_columns(tarn_buf *b, const lk_table *t, const lk_namemap *m, const char *path)
{
    mapped_columns(b, t, m, path, NULL);
}

/* The read of a group of name-mapped files: by name (union_by_name: the
 * files of one mapping have its names, not always its types), without
 * DuckDB's own hive columns, minus deleted rows. */
static void mapped_part(tarn_buf *b, lk_lake *lake, const lk_table *t, const scan_input *in,
                        int64_t s, const char *snap, int flags, int pending, const lk_namemap *m)
{
    tarn_buf del = {0};
    int ndel = deletes_sql(&del, lake, t, in, snap, pending);
    int ident = (flags & (LK_SCAN_ROWID | LK_SCAN_IDENTITY | LK_SCAN_VIRTUAL)) != 0;
    int64_t rows = 0;
    for (size_t i = 0; i < in->n; i++)
        rows += in->files[i].record_count;
    buf_puts(b, "SELECT ");
    mapped_columns(b, t, m, in->files[0].path, &in->files[0]);
    file_virtuals(b, flags, 0);
    buf_puts(b, " FROM read_parquet([");
    for (size_t i = 0; i < in->n; i++) {
        if (i)
            buf_puts(b, ", ");
        quote_literal(b, in->files[i].path);
    }
    buf_printf(b,
               "], hive_partitioning = false, union_by_name = true, explicit_cardinality = %lld, "
               "filename = true, file_row_number = true) d",
               (long long)rows);
    if (ident) {
        file_join(b, in, flags);
    }
    if (ndel)
        buf_printf(b, " ANTI JOIN (%s) x ON d.filename = x.f AND d.file_row_number = x.pos",
                   buf_cstr(&del));
    tarn_buf where = {0};
    delete_files_filter(&where, in, s);
    if (where.len)
        buf_printf(b, " WHERE %s", buf_cstr(&where));
    buf_free(&where);
    buf_free(&del);
}

/* Extends the group signatures of name-mapped files with their mapping
 * and the hive values it reads, so that each group reads one mapping and
 * one set of path constants. */
static void mapped_signatures(scan_input *in, const lk_namemap_set *maps)
{
    for (size_t i = 0; i < in->n; i++) {
        scan_file *f = &in->files[i];
        if (f->mapping_id < 0)
            continue;
        const lk_namemap *m = lk_namemap_set_find(maps, f->mapping_id);
        tarn_buf sig = {0};
        buf_printf(&sig, "%smap=%lld;", f->pconst ? f->pconst : "", (long long)f->mapping_id);
        lk_hive h;
        lk_hive_parse(&h, f->path);
        for (size_t k = 0; m && k < m->ncols; k++) {
            if (!m->cols[k].hive)
                continue;
            const char *v = lk_hive_get(&h, m->cols[k].source);
            buf_printf(&sig, "%lld=", (long long)m->cols[k].target);
            quote_literal(&sig, v ? v : "\\N");
            buf_putc(&sig, ';');
        }
        lk_hive_free(&h);
        free(f->pconst);
        f->pconst = buf_detach(&sig);
    }
}

/* The mappings the files of `in` use: the open transaction's, then the
 * catalog's. */
static int mapped_load(lk_namemap_set *out, lk_lake *lake, duckdb_connection con,
                       const scan_input *in)
{
    memset(out, 0, sizeof(*out));
    int64_t *ids = NULL;
    size_t nids = 0;
    for (size_t i = 0; i < in->n; i++) {
        int64_t id = in->files[i].mapping_id;
        const lk_namemap *m = lake->txn ? lk_namemap_set_find(&lake->txn->new_maps, id) : NULL;
        if (id < 0 || lk_namemap_set_find(out, id))
            continue;
        if (m)
            lk_namemap_set_add(out, m);
        else
            lk_ids_add(&ids, &nids, id);
    }
    int rc = 0;
    if (nids) {
        lk_namemap_set got;
        rc = lk_namemap_load(&got, con, lake->meta, -1, ids, nids);
        for (size_t i = 0; !rc && i < got.n; i++)
            lk_namemap_set_add(out, &got.maps[i]);
        if (!rc)
            lk_namemap_set_free(&got);
    }
    free(ids);
    return rc;
}

/* Up to this many files with a delete file are read each on its own: the
 * deleted-row filter of a one-file read takes only the row number, so
 * DuckDB runs it inside the Parquet scan, before the other columns are
 * read (cheaper than the file-index form a read of several files needs). */
#define OWN_READ_DELETE_FILES 8

static int same_group(const scan_file *a, const scan_file *b, int by_begin, int64_t since,
                      int split_deletes)
{
    if (a != b && split_deletes && (a->del_path || b->del_path))
        return 0;
    if (a->mapping_id != b->mapping_id)
        return 0;
    if (by_begin && a->mapping_id < 0 && a->begin != b->begin)
        return 0;
    if ((a->begin >= since) != (b->begin >= since))
        return 0; /* read by name vs by field id */
    return strcmp(a->pconst ? a->pconst : "", b->pconst ? b->pconst : "") == 0;
}

/* Files grouped, one read_parquet per group, by what has to be constant
 * within a read: the layout of nested columns they were written with (the
 * table as of each file's first snapshot; DuckDB matches struct children
 * by name) and their identity partition values (for pruning). */
static int grouped_parts(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                         scan_input *in, int64_t s, const char *snap, int flags, int pending,
                         const lk_namemap_set *maps, int *parts)
{
    int nested = has_nested(t);
    int64_t since = layout_since(t->cols, t->ncols);
    int rc = 0;
    size_t ndel = 0;
    for (size_t i = 0; i < in->n; i++)
        ndel += in->files[i].del_path != NULL;
    int split = ndel <= OWN_READ_DELETE_FILES;
    char *done = xcalloc(in->n, 1);
    for (size_t i = 0; i < in->n && !rc; i++) {
        if (done[i])
            continue;
        lk_catalog then = {0};
        const lk_table *tt = NULL;
        int64_t begin = in->files[i].begin;
        if (nested && in->files[i].mapping_id < 0 && begin <= lake->cat.snapshot_id &&
            lk_catalog_load(&then, &lake->db, con, begin) == 0)
            tt = lk_catalog_table_by_id(&then, t->id);
        tarn_error_clear();
        int current = !tt || nested_unchanged(t, tt);
        scan_input group = {0};
        group.has_inline_deletes = in->has_inline_deletes;
        for (size_t k = i; k < in->n; k++) {
            if (done[k] || !same_group(&in->files[i], &in->files[k], nested, since, split))
                continue;
            done[k] = 1;
            group.files = xrealloc(group.files, (group.n + 1) * sizeof(scan_file));
            group.files[group.n++] = in->files[k];
        }
        if (*parts)
            buf_puts(b, " UNION ALL ");
        const lk_namemap *m = group.files[0].mapping_id >= 0
                                  ? lk_namemap_set_find(maps, group.files[0].mapping_id)
                                  : NULL;
        if (group.files[0].mapping_id >= 0 && !m)
            rc = tarn_error_set(TARN_ERROR,
                                "data file %s of table %s names a column mapping the catalog "
                                "does not have",
                                group.files[0].path, t->name);
        else if (m)
            mapped_part(b, lake, t, &group, s, snap, flags, pending, m);
        else
            parquet_part(b, lake, t, &group, s, snap, flags, pending, current ? NULL : tt->cols,
                         current ? 0 : tt->ncols);
        (*parts)++;
        free(group.files); /* the files themselves belong to `in` */
        if (then.tables)
            lk_catalog_free(&then);
    }
    free(done);
    return rc;
}

/* The table's committed files at snapshot s, with their identity
 * partition values: from the cache, or read (and cached when s is the
 * lake's snapshot). A table the open transaction created has none. */
static int committed_input(scan_input *in, lk_lake *lake, duckdb_connection con, const lk_table *t,
                           const lk_catalog *cat, int64_t s)
{
    if (t->begin > s && !lk_catalog_table_by_id(&lake->cat, t->id))
        return 0; /* (a renamed table's row begins at the rename) */
    if (scan_cache_lookup(in, lake, t->id, s))
        return 0;
    int rc = load_committed_files(in, lake, con, t, cat, s);
    /* partition values only exist for files written under a spec: an
     * unpartitioned table costs no query for them */
    if (!rc && in->any_partitioned)
        rc = load_partition_constants(in, lake, con, t);
    if (!rc && s == lake->cat.snapshot_id)
        scan_cache_store(lake, t->id, s, in);
    return rc;
}

/* DuckLake numbers a transaction's new rows from 10^18 until its commit. */
#define LOCAL_ROW_ID_START 1000000000000000000LL

int lk_scan_virtual_flags(const lk_table *t, int flags)
{
    static const struct {
        int flag;
        const char *name;
    } V[] = {{LK_SCAN_SNAPSHOT, "snapshot_id"},
             {LK_SCAN_FILENAME, "filename"},
             {LK_SCAN_FILE_ROW, "file_row_number"},
             {LK_SCAN_FILE_INDEX, "file_index"}};
    for (size_t k = 0; k < sizeof(V) / sizeof(V[0]); k++)
        for (size_t i = 0; (flags & V[k].flag) && i < t->ncols; i++)
            if (strcasecmp(t->cols[i].name, V[k].name) == 0)
                flags &= ~V[k].flag;
    return flags;
}

int lk_scan_sql(char **out, lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                const lk_table *t, int64_t snapshot, int flags)
{
    return lk_scan_sql_pruned(out, lake, con, cat, t, snapshot, flags, NULL);
}

int lk_scan_sql_pruned(char **out, lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                       const lk_table *t, int64_t snapshot, int flags, const lk_prune *prune)
{
    lk_txn *txn = lake->txn;
    int pending = snapshot < 0 && txn != NULL;
    int64_t s = snapshot >= 0 ? snapshot : (txn ? txn->cat.snapshot_id : lake->cat.snapshot_id);
    scan_input in = {0};
    int rc = committed_input(&in, lake, con, t, cat, s);
    if (rc)
        return rc;
    if (pending && (txn->nmfiles || txn->nreplaced_files))
        scan_apply_maintenance(&in, txn, t->id);
    if (pending)
        scan_add_pending_files(&in, txn, t->id, 0);
    flags = lk_scan_virtual_flags(t, flags);
    /* file_index and the transaction-local row ids, as DuckLake lists the
     * sources: committed files, the transaction's files, inlined tables,
     * the transaction's inlined rows */
    int64_t local = LOCAL_ROW_ID_START;
    for (size_t i = 0; i < in.n; i++) {
        in.files[i].index = (int64_t)i;
        if (in.files[i].pending && in.files[i].local_start >= 0) {
            in.files[i].local_start = local;
            local += in.files[i].record_count;
        }
    }
    /* after the numbering: file_index stays the place in the whole list */
    size_t nfiles = in.n;
    lk_prune_files(&in, lake, con, t, prune);
    char *idel = xasprintf("ducklake_inlined_delete_%lld", (long long)t->id);
    in.has_inline_deletes = in.n > 0 && lk_lake_meta_table_exists(lake, con, idel);
    free(idel);
    /* A literal, never session state: other connections of the database
     * read the views too. The session's view needs no rebuild after a
     * commit that only inlines rows: at the latest snapshot its inlined
     * part has no snapshot filter, and `s` bounds only deletions (which
     * come with a commit that rebuilds it). */
    char *snap = xasprintf("%lld", (long long)s);
    tarn_buf b = {0};
    int parts = 0;
    lk_namemap_set maps = {0};
    if (in.n)
        rc = mapped_load(&maps, lake, con, &in);
    if (!rc && maps.n)
        mapped_signatures(&in, &maps);
    if (in.n && !rc)
        rc = grouped_parts(&b, lake, con, t, &in, s, snap, flags, pending, &maps, &parts);
    lk_namemap_set_free(&maps);
    if (in.n) {
        if (rc) {
            scan_input_free(&in);
            buf_free(&b);
            free(snap);
            return rc;
        }
    }
    for (size_t i = 0; i < t->ninlined; i++) {
        if (!inlined_table_exists(lake, con, t->inlined[i].name))
            continue;
        /* flushed earlier in the transaction: its rows are in new files */
        if (pending && strlist_find(&txn->replaced_inlined, t->inlined[i].name) >= 0)
            continue;
        /* an empty one adds nothing to the session's view; the commit that
         * first inlines rows into it rebuilds the view */
        inlined_info *x = scan_inlined_find(lake, t->inlined[i].name, 0);
        if (x && x->empty && snapshot < 0 && lake->pinned < 0)
            continue;
        if (parts++)
            buf_puts(&b, " UNION ALL ");
        buf_putc(&b, '(');
        inlined_part(&b, lake, con, t, &t->inlined[i], snap, flags, pending,
                     snapshot < 0 && lake->pinned < 0, (int64_t)(nfiles + i));
        buf_putc(&b, ')');
    }
    if (pending && pending_inserts_exist(lake, con, t)) {
        if (parts++)
            buf_puts(&b, " UNION ALL ");
        pending_part(&b, lake, t, flags, local, (int64_t)(nfiles + t->ninlined));
    }
    if (!parts)
        empty_part(&b, t, flags);
    /* One file left by pruning: DuckDB would answer COUNT(*) from its
     * footer once the filter holds for the whole file, and EXPLAIN ANALYZE
     * would show no read at all; beside an empty part the read stays, and
     * its "Total Files Read" shows what pruning left, as in DuckLake. */
    if (parts == 1 && in.n == 1 && nfiles > 1) {
        buf_puts(&b, " UNION ALL (");
        empty_part(&b, t, flags);
        buf_putc(&b, ')');
    }
    scan_input_free(&in);
    free(snap);
    *out = buf_detach(&b);
    return 0;
}
