/*
 * renumber.c — gives a transaction's new catalog objects DuckLake's ids.
 *
 * tarn numbers a new schema, table, view or partition spec when its
 * statement runs, and writes every catalog row of the transaction with
 * that provisional id. DuckLake numbers them at commit, in the order of
 * its transaction-local maps (idorder.c). When the two orders differ (two
 * objects created in one transaction, or a table created and then altered
 * before a view was created), the commit renumbers: the change tokens are
 * rewritten before changes_made is built, and statements appended to the
 * commit batch move every id column of the rows this transaction wrote,
 * and rename the inlined-data tables whose names carry a table id. The
 * provisional ids are all new in this snapshot, so no older row carries
 * one. The renumbering is skipped when the two sets differ (an object
 * created and dropped in one transaction, which DuckLake never numbers).
 */
#include "lake/renumber.h"

#include "lake/idorder.h"
#include "lake/txn.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every catalog column holding a catalog id (one counter numbers them all,
 * so one map serves every column). */
static const char *const ID_COLUMNS[][2] = {
    {"ducklake_schema", "schema_id"},
    {"ducklake_table", "table_id"},
    {"ducklake_table", "schema_id"},
    {"ducklake_view", "view_id"},
    {"ducklake_view", "schema_id"},
    {"ducklake_column", "table_id"},
    {"ducklake_column_mapping", "table_id"},
    {"ducklake_column_tag", "table_id"},
    {"ducklake_data_file", "table_id"},
    {"ducklake_data_file", "partition_id"},
    {"ducklake_delete_file", "table_id"},
    {"ducklake_file_column_stats", "table_id"},
    {"ducklake_file_partition_value", "table_id"},
    {"ducklake_file_variant_stats", "table_id"},
    {"ducklake_inlined_data_tables", "table_id"},
    {"ducklake_partition_column", "partition_id"},
    {"ducklake_partition_column", "table_id"},
    {"ducklake_partition_info", "partition_id"},
    {"ducklake_partition_info", "table_id"},
    {"ducklake_schema_versions", "table_id"},
    {"ducklake_sort_expression", "table_id"},
    {"ducklake_sort_info", "table_id"},
    {"ducklake_table_column_stats", "table_id"},
    {"ducklake_table_stats", "table_id"},
    {"ducklake_tag", "object_id"},
};

int64_t lk_renumber_id(const lk_txn *txn, int64_t id)
{
    for (size_t i = 0; i < txn->nrenum; i++)
        if (txn->renum_from[i] == id)
            return txn->renum_to[i];
    return id;
}

int lk_renumber_plan(lk_txn *txn)
{
    int64_t *seq = NULL;
    size_t n = lk_idorder_sequence(txn->ids, &seq);
    int64_t base = txn->base_catalog_id, count = txn->cat.next_catalog_id - base;
    int usable = count > 0 && (int64_t)n == count;
    for (size_t i = 0; usable && i < n; i++) {
        usable = seq[i] >= base && seq[i] < base + count;
        for (size_t k = 0; usable && k < i; k++)
            usable = seq[k] != seq[i];
    }
    int moved = 0;
    for (size_t i = 0; usable && i < n; i++)
        moved |= seq[i] != base + (int64_t)i;
    if (!usable || !moved) {
        free(seq);
        return 0;
    }
    txn->renum_from = xmalloc(n * sizeof(int64_t));
    txn->renum_to = xmalloc(n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        txn->renum_from[txn->nrenum] = seq[i];
        txn->renum_to[txn->nrenum++] = base + (int64_t)i;
    }
    free(seq);
    /* "altered_table:3" → "altered_table:4"; name tokens stay */
    for (size_t i = 0; i < txn->nchange_tokens; i++) {
        char *tok = txn->change_tokens[i], *colon = strchr(tok, ':'), *end = NULL;
        if (!colon || colon[1] == '"')
            continue;
        int64_t id = strtoll(colon + 1, &end, 10);
        if (end == colon + 1 || *end)
            continue;
        char *re =
            xasprintf("%.*s:%lld", (int)(colon - tok), tok, (long long)lk_renumber_id(txn, id));
        free(tok);
        txn->change_tokens[i] = re;
    }
    return 1;
}

/* CASE col WHEN 3 THEN 4 … END, and the IN list of the provisional ids. */
static void case_expr(tarn_buf *b, const lk_txn *txn, const char *col)
{
    buf_printf(b, "CASE %s", col);
    for (size_t i = 0; i < txn->nrenum; i++)
        buf_printf(b, " WHEN %lld THEN %lld", (long long)txn->renum_from[i],
                   (long long)txn->renum_to[i]);
    buf_printf(b, " ELSE %s END", col);
}

static void in_list(tarn_buf *b, const lk_txn *txn)
{
    buf_putc(b, '(');
    for (size_t i = 0; i < txn->nrenum; i++)
        buf_printf(b, "%s%lld", i ? ", " : "", (long long)txn->renum_from[i]);
    buf_putc(b, ')');
}

/* Inlined-data tables are named ducklake_inlined_data_<table>_<version>
 * (and ducklake_inlined_delete_<table>): rename through temporary names,
 * as two renumbered tables may trade names. */
static void rename_inlined(lk_txn *txn, const char *meta)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < txn->cat.ntables; i++) {
            const lk_table *t = &txn->cat.tables[i];
            int64_t to = lk_renumber_id(txn, t->id);
            if (to == t->id)
                continue;
            for (size_t k = 0; k <= t->ninlined; k++) {
                int64_t sv = k < t->ninlined ? t->inlined[k].schema_version : -1;
                char *from = sv >= 0 ? xasprintf("ducklake_inlined_data_%lld_%lld",
                                                 (long long)t->id, (long long)sv)
                                     : xasprintf("ducklake_inlined_delete_%lld", (long long)t->id);
                char *tmp = xasprintf("__tarn_renumber_%s", from);
                char *dest = sv >= 0 ? xasprintf("ducklake_inlined_data_%lld_%lld", (long long)to,
                                                 (long long)sv)
                                     : xasprintf("ducklake_inlined_delete_%lld", (long long)to);
                tarn_buf b = {0};
                buf_printf(&b, "ALTER TABLE IF EXISTS %s.", meta);
                quote_ident(&b, pass == 0 ? from : tmp);
                buf_puts(&b, " RENAME TO ");
                quote_ident(&b, pass == 0 ? tmp : dest);
                lk_txn_sql(txn, "%s", buf_cstr(&b));
                if (pass == 1 && sv >= 0) {
                    buf_clear(&b);
                    buf_printf(&b,
                               "UPDATE %s.ducklake_inlined_data_tables SET table_name = ", meta);
                    quote_literal(&b, dest);
                    /* by provisional id: the id columns move after this */
                    buf_printf(&b, " WHERE table_id = %lld AND schema_version = %lld",
                               (long long)t->id, (long long)sv);
                    lk_txn_sql(txn, "%s", buf_cstr(&b));
                }
                buf_free(&b);
                free(from);
                free(tmp);
                free(dest);
            }
        }
    }
}

void lk_renumber_sql(lk_txn *txn, const char *meta)
{
    if (!txn->nrenum)
        return;
    rename_inlined(txn, meta);
    for (size_t i = 0; i < sizeof(ID_COLUMNS) / sizeof(ID_COLUMNS[0]); i++) {
        tarn_buf b = {0};
        buf_printf(&b, "UPDATE %s.%s SET %s = ", meta, ID_COLUMNS[i][0], ID_COLUMNS[i][1]);
        case_expr(&b, txn, ID_COLUMNS[i][1]);
        buf_printf(&b, " WHERE %s IN ", ID_COLUMNS[i][1]);
        in_list(&b, txn);
        lk_txn_sql(txn, "%s", buf_cstr(&b));
        buf_free(&b);
    }
    /* options scoped to a schema or a table (ducklake_set_option) */
    tarn_buf b = {0};
    buf_printf(&b, "UPDATE %s.ducklake_metadata SET scope_id = ", meta);
    case_expr(&b, txn, "scope_id");
    buf_puts(&b, " WHERE scope IN ('schema', 'table') AND scope_id IN ");
    in_list(&b, txn);
    lk_txn_sql(txn, "%s", buf_cstr(&b));
    buf_free(&b);
    for (size_t i = 0; i < txn->ndeltas; i++)
        txn->deltas[i].table_id = lk_renumber_id(txn, txn->deltas[i].table_id);
}
