/*
 * write_source.c — the SQL of the rows a write takes, for write.c,
 * write_files.c and write_part.c (declared in write_int.h): the table's
 * columns, the stage's rows in write order, or a query's rows in the
 * table's sort order.
 *
 * Reads and writes no catalog rows: it only builds SELECTs over the stage
 * (LK_STAGE) or the statement's own query. The order is the one DuckLake
 * writes in: the table's sort order (SET SORTED BY) first, then the order
 * the rows came in (the stage's rowid); UPDATE images keep the order they
 * come in. It sits below the files that write and calls none of them.
 */
#include "lake/write_int.h"

#include "lake/sort.h"
#include "util/buf.h"
#include "util/quote.h"

void lk_write_columns(tarn_buf *b, const lk_table *t)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (i)
            buf_puts(b, ", ");
        quote_ident(b, t->cols[i].name);
    }
}

void lk_write_stage_order(tarn_buf *b, const lk_table *t, int with_rowid, int sorted)
{
    buf_puts(b, " ORDER BY ");
    if (sorted && !with_rowid && lk_sort_order_by(b, t, NULL))
        buf_puts(b, ", ");
    buf_puts(b, "rowid");
}

/* SELECT the stage's columns (and __tarn_rowid, as `rowid_name`) in write order. */
static void stage_select(tarn_buf *b, const lk_table *t, int with_rowid, const char *rowid_name)
{
    buf_puts(b, "SELECT ");
    lk_write_columns(b, t);
    if (with_rowid)
        buf_printf(b, ", __tarn_rowid AS %s", rowid_name);
    buf_puts(b, " FROM " LK_STAGE);
    lk_write_stage_order(b, t, with_rowid, 1);
}

void lk_write_stage_rows(tarn_buf *b, const lk_table *t, int with_rowid)
{
    stage_select(b, t, with_rowid, "__tarn_rowid");
}

/* The rows a write takes: `source` (in the table's sort order, if any),
 * or the stage's rows in order. */
void lk_write_source_sql(tarn_buf *b, const lk_table *t, int with_rowid, const char *source)
{
    if (source && (with_rowid || t->nsorts == 0)) {
        buf_puts(b, source);
        return;
    }
    if (source) {
        buf_printf(b, "SELECT * FROM (%s) AS __tarn_sorted ORDER BY ", source);
        lk_sort_order_by(b, t, NULL);
        return;
    }
    stage_select(b, t, with_rowid, "_ducklake_internal_row_id");
}
