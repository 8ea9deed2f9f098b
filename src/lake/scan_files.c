/*
 * scan_files.c — the part of a table's read SQL that reads its data files
 * (see scan.c for the whole query).
 *
 * One read_parquet over a group of files: columns matched by Parquet field
 * id (ducklake_column.column_id), through a schema MAP carrying each
 * column's name, type and initial default, so renamed, dropped and added
 * columns read right; nested columns written under an older layout are
 * rebuilt child by child. Files registered with ducklake_add_data_files
 * carry no field ids: they are read by name through their name mapping
 * (ducklake_column_mapping / ducklake_name_mapping, namemap.c), with hive
 * partition values from the path. Deletes come from the files' delete
 * files (ducklake_delete_file, read as bitmaps by delmask.c), the inlined
 * deletions of ducklake_inlined_delete_<table_id> and the transaction's
 * pending deletes; a file written by an unfinished-snapshot writer is cut
 * at the snapshot by its embedded per-row snapshot ids. Reads no catalog
 * row itself beyond the inlined deletions and name mappings: the files and
 * their statistics come in a scan_input.
 */
#include "lake/scan.h"

#include "duck/duck.h"
#include "lake/delmask.h"
#include "lake/hive.h"
#include "lake/namemap.h"
#include "lake/prune.h"
#include "lake/scan_input.h"
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
                   LK_FIELD_ID_ROW_ID, LK_FIELD_ID_SNAPSHOT);
    buf_putc(b, '}');
}

void lk_scan_column_list(tarn_buf *b, const lk_table *t, const char *prefix)
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

/* Where a value stands in a data file: a field of the file's own layout
 * (a file written when the table's columns were others), or a
 * name-mapping entry (a file registered by ducklake_add_data_files, whose
 * names are the file's own). Both NULL: the file has no such value. */
typedef struct {
    const lk_column *col;
    const lk_nm_entry *nm;
} file_part;

/* Whether p is a nested value of kind `type` the rebuild can open; a
 * mapped entry has the table's layout, so it always is. */
static int part_is(file_part p, const char *type)
{
    return p.nm || (p.col && strcmp(p.col->type, type) == 0);
}

static const char *part_name(file_part p)
{
    return p.col ? p.col->name : p.nm->source;
}

/* The part of p holding child `i` of table column dst: by position in
 * the file's layout (a list's element, a map's key and value keep their
 * place), by column id in a name mapping. */
static file_part part_child(file_part p, const lk_column *dst, size_t i)
{
    file_part c = {NULL, NULL};
    if (p.col && i < p.col->nchildren)
        c.col = &p.col->children[i];
    else if (p.nm && i < dst->nchildren)
        c.nm = lk_namemap_target(p.nm->children, p.nm->nchildren, dst->children[i].id);
    return c;
}

/* The struct child of p that is table column dc (matched by id). */
static file_part part_field(file_part p, const lk_column *dc)
{
    file_part c = {NULL, NULL};
    if (p.col)
        c.col = child_by_id(p.col, dc->id);
    else if (p.nm)
        c.nm = lk_namemap_target(p.nm->children, p.nm->nchildren, dc->id);
    return c;
}

/* CAST('value' AS type of c). */
static void cast_literal(tarn_buf *b, const char *value, const lk_column *c)
{
    buf_puts(b, "CAST(");
    quote_literal(b, value);
    buf_puts(b, " AS ");
    lk_type_to_sql(b, c);
    buf_putc(b, ')');
}

/* An expression turning `expr`, the file's value `src`, into table column
 * dst's current layout, matching nested children by column id: renamed
 * children keep their values, added ones are NULL (or their initial
 * default), dropped ones vanish. */
static void rebuild(tarn_buf *b, const char *expr, const lk_column *dst, file_part src, int depth)
{
    if (!src.col && !src.nm) {
        if (dst->initial_default && !lk_type_is_nested(dst->type)) {
            cast_literal(b, dst->initial_default, dst); /* added with a DEFAULT after the write */
        } else {
            buf_puts(b, "NULL::");
            lk_type_to_sql(b, dst);
        }
        return;
    }
    if (strcmp(dst->type, "struct") == 0 && part_is(src, "struct")) {
        buf_printf(b, "CASE WHEN (%s) IS NULL THEN NULL ELSE struct_pack(", expr);
        for (size_t i = 0; i < dst->nchildren; i++) {
            const lk_column *dc = &dst->children[i];
            file_part sc = part_field(src, dc);
            tarn_buf sub = {0};
            if (sc.col || sc.nm) {
                buf_printf(&sub, "(%s).", expr);
                quote_ident(&sub, part_name(sc));
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
    file_part e0 = part_child(src, dst, 0), e1 = part_child(src, dst, 1);
    if (strcmp(dst->type, "list") == 0 && part_is(src, "list") && (e0.col || e0.nm)) {
        char *var = xasprintf("__tarn_x%d", depth);
        buf_printf(b, "list_transform(%s, %s -> ", expr, var);
        rebuild(b, var, &dst->children[0], e0, depth + 1);
        buf_putc(b, ')');
        free(var);
        return;
    }
    if (strcmp(dst->type, "map") == 0 && part_is(src, "map") && (e0.col || e0.nm) &&
        (e1.col || e1.nm)) {
        char *var = xasprintf("__tarn_e%d", depth);
        char *k = xasprintf("%s.key", var), *v = xasprintf("%s.value", var);
        buf_printf(b, "map_from_entries(list_transform(map_entries(%s), %s -> {'key': ", expr, var);
        rebuild(b, k, &dst->children[0], e0, depth + 1);
        buf_puts(b, ", 'value': ");
        rebuild(b, v, &dst->children[1], e1, depth + 1);
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

void lk_scan_rebuild(tarn_buf *b, const char *expr, const lk_column *dst, const lk_column *src)
{
    file_part p = {src, NULL};
    rebuild(b, expr, dst, p, 0);
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
            cast_literal(b, value, c);
            buf_puts(b, " AS ");
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
        rebuild(b, buf_cstr(&e), c, (file_part){fc, NULL}, 0);
        buf_free(&e);
        buf_puts(b, " AS ");
        quote_ident(b, c->name);
    }
}

static int64_t column_begin(const lk_column *c)
{
    return c->begin;
}

/* The latest snapshot at which any current column (or nested field) got
 * its present name, type and place: files written at or after it have the
 * table's current layout and can be read by name. */
int64_t lk_scan_layout_since(const lk_column *cols, size_t n)
{
    return lk_columns_max(cols, n, column_begin);
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
void lk_scan_virtual_columns(tarn_buf *b, int flags, const char *snap, const char *file,
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
    lk_scan_virtual_columns(
        b, flags,
        by_id ? "CASE WHEN m.s IS NULL THEN NULL ELSE COALESCE(d.__tarn_snap, m.s) END" : "m.s",
        "d.filename", "d.file_row_number", "m.x");
}

/* Up to this many files read by name get column statistics: each costs
 * a footer read at every bind of the view (every query, every rebuild
 * after a commit; measured ~0.1-0.3 ms a file), which beyond a few dozen
 * files costs more than the statistics save. */
#define LK_SCAN_STATS_FILES 32

void lk_scan_parquet_part(tarn_buf *b, lk_lake *lake, const lk_table *t, const scan_input *in,
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
    int64_t since = lk_scan_layout_since(t->cols, t->ncols);
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
    } else if (in->n > 1 && in->n <= LK_SCAN_STATS_FILES) {
        /* DuckDB gives the optimizer column statistics (min/max/null) of
         * a read of several files only when it reads them by name, each
         * file's footer at bind: as DuckLake's scan hands over the
         * catalog's, so that a GROUP BY on a small key range takes the
         * perfect-hash aggregate (output in key order, as DuckLake's). The
         * files of a by-name read have the table's current names. */
        buf_puts(b, "union_by_name = true, hive_partitioning = false, ");
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

/* ---- files read through a name mapping (namemap.h) ---- */

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
            cast_literal(b, value, c);
        } else if (e) {
            tarn_buf src = {0};
            buf_puts(&src, "d.");
            quote_ident(&src, e->source);
            rebuild(b, buf_cstr(&src), c, (file_part){NULL, e}, 0);
            buf_free(&src);
        } else {
            cast_literal(b, c->initial_default, c);
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
void lk_scan_mapped_part(tarn_buf *b, lk_lake *lake, const lk_table *t, const scan_input *in,
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

/* Appends the file columns that entries e[0..n) read (not the hive keys)
 * to a group signature. */
static void mapped_sources(tarn_buf *sig, const lk_nm_entry *e, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (e[k].hive)
            continue;
        buf_printf(sig, "%lld<", (long long)e[k].target);
        quote_literal(sig, e[k].source);
        buf_putc(sig, '(');
        mapped_sources(sig, e[k].children, e[k].nchildren);
        buf_puts(sig, ");");
    }
}

/* Extends the group signatures of name-mapped files with what their
 * mapping reads from the files and the hive values it reads, so that each
 * group reads one way and has one set of path constants: the files of two
 * mappings that differ only in their hive keys' names (a hive column
 * renamed between two registrations) are read together. */
void lk_scan_mapped_signatures(scan_input *in, const lk_namemap_set *maps)
{
    for (size_t i = 0; i < in->n; i++) {
        scan_file *f = &in->files[i];
        if (f->mapping_id < 0)
            continue;
        const lk_namemap *m = lk_namemap_set_find(maps, f->mapping_id);
        tarn_buf sig = {0};
        buf_printf(&sig, "%smap:", f->pconst ? f->pconst : "");
        if (m)
            mapped_sources(&sig, m->cols, m->ncols);
        else /* (reported when the group is read) */
            buf_printf(&sig, "%lld", (long long)f->mapping_id);
        buf_putc(&sig, ';');
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
int lk_scan_mapped_load(lk_namemap_set *out, lk_lake *lake, duckdb_connection con,
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
        rc = lk_namemap_load(&got, &lake->db, con, -1, ids, nids);
        for (size_t i = 0; !rc && i < got.n; i++)
            lk_namemap_set_add(out, &got.maps[i]);
        if (!rc)
            lk_namemap_set_free(&got);
    }
    free(ids);
    return rc;
}