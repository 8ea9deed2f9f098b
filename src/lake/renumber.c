/*
 * renumber.c — gives a transaction's new catalog objects DuckLake's ids.
 *
 * tarn numbers a new schema, table, view, partition spec or sort order when its
 * statement runs, and writes every catalog row of the transaction with
 * that provisional id. DuckLake numbers them at commit, in the order of
 * its transaction-local maps (idorder.c). When the two orders differ (two
 * objects created in one transaction, or a table created and then altered
 * before a view was created), the commit renumbers: the change tokens are
 * rewritten before changes_made is built, and statements appended to the
 * commit batch move every id column of the rows this transaction wrote,
 * and rename the inlined-data tables whose names carry a table id. The
 * provisional ids are all new in this snapshot, so no older row carries
 * one. A table created and dropped in one transaction DuckLake never
 * numbers: its ids (txn.h: forgotten) are left out, and next_catalog_id
 * goes back by as many. The renumbering is skipped when the two sets
 * differ otherwise (the statement-time ids stand).
 *
 * On a catalog several processes write (PostgreSQL) the statement-time
 * ids are a provisional range of the transaction's own (txn.h), so the
 * commit always renumbers, onto next_catalog_id as the transaction found
 * it, or, when other writers made catalog objects meanwhile, past theirs
 * (the shift rebase.c computes under the commit lock): two writers may
 * create different tables at once, as DuckLake allows.
 */
#include "lake/renumber.h"

#include "lake/idorder.h"
#include "lake/rebase.h"
#include "lake/txn.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

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
    {"ducklake_macro", "schema_id"},
    {"ducklake_macro", "macro_id"},
    {"ducklake_macro_impl", "macro_id"},
    {"ducklake_macro_parameters", "macro_id"},
    {"ducklake_partition_column", "partition_id"},
    {"ducklake_partition_column", "table_id"},
    {"ducklake_partition_info", "partition_id"},
    {"ducklake_partition_info", "table_id"},
    {"ducklake_schema_versions", "table_id"},
    {"ducklake_sort_expression", "sort_id"},
    {"ducklake_sort_expression", "table_id"},
    {"ducklake_sort_info", "sort_id"},
    {"ducklake_sort_info", "table_id"},
    {"ducklake_table_column_stats", "table_id"},
    {"ducklake_table_stats", "table_id"},
    {"ducklake_tag", "object_id"},
};

static void map_add(lk_idmap *m, int64_t from, int64_t to)
{
    m->from = xrealloc(m->from, (m->n + 1) * sizeof(int64_t));
    m->to = xrealloc(m->to, (m->n + 1) * sizeof(int64_t));
    m->from[m->n] = from;
    m->to[m->n++] = to;
}

int64_t lk_renumber_id(const lk_txn *txn, int64_t id)
{
    for (size_t i = 0; i < txn->renum.n; i++)
        if (txn->renum.from[i] == id)
            return txn->renum.to[i];
    return id;
}

/* Rewrites the id change tokens ("altered_table:3" → "altered_table:4");
 * name tokens stay. */
static void rewrite_tokens(lk_txn *txn)
{
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
}

int lk_renumber_plan(lk_txn *txn)
{
    int64_t *seq = NULL;
    size_t n = lk_idorder_sequence(txn->ids, &seq);
    int64_t base = txn->base_catalog_id, next = txn->cat.next_catalog_id;
    int64_t final = txn->final_catalog_id; /* base, or a provisional range's end (txn.h) */
    int64_t count = next - base - (int64_t)txn->nforgotten;
    int usable = (count > 0 || (count == 0 && txn->nforgotten)) && (int64_t)n == count;
    for (size_t i = 0; usable && i < txn->nforgotten; i++)
        usable = txn->forgotten[i] >= base && txn->forgotten[i] < next;
    for (size_t i = 0; usable && i < n; i++) {
        usable = seq[i] >= base && seq[i] < next;
        for (size_t k = 0; usable && k < i; k++)
            usable = seq[k] != seq[i];
        for (size_t k = 0; usable && k < txn->nforgotten; k++)
            usable = txn->forgotten[k] != seq[i];
    }
    int moved = final != base;
    for (size_t i = 0; usable && i < n; i++)
        moved |= seq[i] != final + (int64_t)i;
    /* next_catalog_id as committed: without the ids DuckLake never took */
    txn->cat.next_catalog_id = final + (usable && txn->nforgotten ? count : next - base);
    txn->base_catalog_id = final;
    if (moved && usable)
        for (size_t i = 0; i < n; i++)
            map_add(&txn->renum, seq[i], final + (int64_t)i);
    else if (moved) /* provisional ids out of DuckLake's order: kept in theirs */
        for (int64_t id = base; id < next; id++)
            map_add(&txn->renum, id, final + (id - base));
    free(seq);
    if (!txn->renum.n)
        return 0;
    rewrite_tokens(txn);
    return 1;
}

/* Appends UPDATE meta.table SET col = CASE col WHEN 3 THEN 4 … END WHERE
 * [where AND] col IN (the provisional ids): the id column moves by `m`. */
static void update_ids(lk_txn *txn, const char *meta, const char *table, const char *col,
                       const char *where, const lk_idmap *m)
{
    tarn_buf b = {0};
    buf_printf(&b, "UPDATE %s.%s SET %s = CASE %s", meta, table, col, col);
    for (size_t i = 0; i < m->n; i++)
        buf_printf(&b, " WHEN %lld THEN %lld", (long long)m->from[i], (long long)m->to[i]);
    buf_printf(&b, " ELSE %s END WHERE %s%s%s IN (", col, where ? where : "", where ? " AND " : "",
               col);
    for (size_t i = 0; i < m->n; i++)
        buf_printf(&b, "%s%lld", i ? ", " : "", (long long)m->from[i]);
    buf_putc(&b, ')');
    lk_txn_sql(txn, "%s", buf_cstr(&b));
    buf_free(&b);
}

char *lk_renumber_inlined_name(const lk_txn *txn, const lk_table *t, size_t k, int64_t shift,
                               int64_t sv_shift)
{
    int64_t to = lk_renumber_id(txn, t->id);
    if (to != t->id)
        to += shift;
    if (k == t->ninlined)
        return xasprintf("ducklake_inlined_delete_%lld", (long long)to);
    int64_t sv = t->inlined[k].schema_version;
    if (to != t->id && sv > txn->cat.schema_version)
        sv += sv_shift;
    return xasprintf("ducklake_inlined_data_%lld_%lld", (long long)to, (long long)sv);
}

/* Inlined-data tables are named ducklake_inlined_data_<table>_<version>
 * (and ducklake_inlined_delete_<table>): rename through temporary names,
 * as two renumbered tables may trade names. */
static void rename_inlined(strlist *out, const lk_txn *txn, const char *meta, int64_t shift,
                           int64_t sv_shift)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < txn->cat.ntables; i++) {
            const lk_table *t = &txn->cat.tables[i];
            if (lk_renumber_id(txn, t->id) == t->id)
                continue;
            for (size_t k = 0; k <= t->ninlined; k++) {
                char *from = k < t->ninlined
                                 ? xstrdup(t->inlined[k].name)
                                 : xasprintf("ducklake_inlined_delete_%lld", (long long)t->id);
                char *tmp = xasprintf("__tarn_renumber_%s", from);
                char *dest = lk_renumber_inlined_name(txn, t, k, shift, sv_shift);
                tarn_buf b = {0};
                buf_printf(&b, "ALTER TABLE IF EXISTS %s.", meta);
                quote_ident(&b, pass == 0 ? from : tmp);
                buf_puts(&b, " RENAME TO ");
                quote_ident(&b, pass == 0 ? tmp : dest);
                strlist_push(out, buf_cstr(&b));
                /* the listing row goes through the temporary name too: two
                 * tables trading names must not both match the second */
                if (k < t->ninlined) {
                    buf_clear(&b);
                    buf_printf(&b,
                               "UPDATE %s.ducklake_inlined_data_tables SET table_name = ", meta);
                    quote_literal(&b, pass == 0 ? tmp : dest);
                    if (pass == 1)
                        buf_printf(&b, ", schema_version = %s", strrchr(dest, '_') + 1);
                    buf_puts(&b, " WHERE table_name = ");
                    quote_literal(&b, pass == 0 ? from : tmp);
                    strlist_push(out, buf_cstr(&b));
                }
                buf_free(&b);
                free(from);
                free(tmp);
                free(dest);
            }
        }
    }
}

void lk_renumber_sql(lk_txn *txn, const char *meta, int64_t shift)
{
    if (!txn->renum.n)
        return;
    lk_idmap m = {0};
    for (size_t i = 0; i < txn->renum.n; i++)
        map_add(&m, txn->renum.from[i], txn->renum.to[i] + shift);
    for (size_t i = 0; i < sizeof(ID_COLUMNS) / sizeof(ID_COLUMNS[0]); i++)
        update_ids(txn, meta, ID_COLUMNS[i][0], ID_COLUMNS[i][1], NULL, &m);
    /* options scoped to a schema or a table (ducklake_set_option) */
    update_ids(txn, meta, "ducklake_metadata", "scope_id", "scope IN ('schema', 'table')", &m);
    for (size_t i = 0; i < txn->ndeltas; i++) {
        int64_t id = txn->deltas[i].table_id, to = lk_renumber_id(txn, id);
        txn->deltas[i].table_id = to == id ? id : to + shift;
    }
    free(m.from);
    free(m.to);
}

void lk_renumber_names_sql(strlist *out, const lk_txn *txn, const char *meta, int64_t shift,
                           int64_t sv_shift)
{
    if (txn->renum.n)
        rename_inlined(out, txn, meta, shift, sv_shift);
}

/* ---- data and delete files ---- */

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void add_file_move(lk_txn *txn, int64_t from, int64_t to)
{
    if (from != to)
        map_add(&txn->file_renum, from, to);
}

/* A table's new files take row ids from its base, in the order written,
 * before its new inlined rows (only when none carries its own row ids). */
static void plan_rows(lk_txn *txn, lk_table_delta *d)
{
    int64_t next = d->base_row_id;
    for (size_t i = 0; i < txn->nfiles; i++) {
        const lk_pending_file *p = &txn->files[i];
        if (p->table_id == d->table_id && p->rowids_embedded)
            return;
    }
    for (size_t i = 0; i < txn->nfiles; i++) {
        lk_pending_file *p = &txn->files[i];
        if (p->table_id != d->table_id)
            continue;
        p->row_id_start = next; /* lk_renumber_files_sql writes it */
        next += p->record_count;
    }
    d->reorder_rows = 1;
    d->inline_start = next;
}

void lk_renumber_files_plan(lk_txn *txn)
{
    /* only files this plan knows of (maintenance numbers its own) */
    if (txn->cat.next_file_id - txn->base_file_id != (int64_t)(txn->nfiles + txn->ndel_file_ids))
        return;
    int64_t *tables = xmalloc((txn->ndeltas + txn->nfiles + 1) * sizeof(int64_t));
    size_t nt = 0;
    for (size_t i = 0; i < txn->ndeltas; i++)
        tables[nt++] = txn->deltas[i].table_id;
    for (size_t i = 0; i < txn->nfiles; i++)
        tables[nt++] = txn->files[i].table_id;
    /* DuckLake walks a map keyed by table id (new tables after committed
     * ones, in creation order: the order of their provisional ids) */
    qsort(tables, nt, sizeof(int64_t), cmp_id);
    int64_t slot = txn->base_file_id + (int64_t)txn->new_maps.n; /* name maps come first */
    for (size_t i = 0; i < nt; i++) {
        if (i && tables[i] == tables[i - 1])
            continue;
        lk_table_delta *d = lk_txn_find_delta(txn, tables[i]);
        int files = 0;
        for (size_t k = 0; k < txn->nfiles; k++)
            if (txn->files[k].table_id == tables[i]) {
                add_file_move(txn, txn->files[k].file_id, slot++);
                files = 1;
            }
        if (!files && d && d->inlined)
            slot++; /* DuckLake's marker increment for inlined-only data */
        if (files && d && d->inlined)
            plan_rows(txn, d);
    }
    free(tables);
    for (size_t i = 0; i < txn->ndel_file_ids; i++)
        add_file_move(txn, txn->del_file_ids[i], slot++);
}

void lk_renumber_files_sql(lk_txn *txn, const char *meta, const struct lk_rebase_s *rb)
{
    /* a rebased commit writes its files under their final ids already
     * (rebase.c moves the keys in the rows and the references after) */
    int moved = rb && rb->active && rb->file_shift;
    for (size_t i = 0; i < txn->ndeltas; i++) {
        if (!txn->deltas[i].reorder_rows)
            continue;
        for (size_t k = 0; k < txn->nfiles; k++)
            if (txn->files[k].table_id == txn->deltas[i].table_id)
                lk_txn_sql(txn,
                           "UPDATE %s.ducklake_data_file SET row_id_start = %lld WHERE "
                           "data_file_id = %lld",
                           meta, (long long)txn->files[k].row_id_start,
                           (long long)(moved ? lk_rebase_file_id(rb, txn, txn->files[k].file_id)
                                             : txn->files[k].file_id));
    }
    static const char *const FILE_COLUMNS[][2] = {
        {"ducklake_data_file", "data_file_id"},
        {"ducklake_file_column_stats", "data_file_id"},
        {"ducklake_file_partition_value", "data_file_id"},
        {"ducklake_file_variant_stats", "data_file_id"},
        {"ducklake_delete_file", "delete_file_id"},
        {"ducklake_delete_file", "data_file_id"},
    };
    for (size_t i = 0;
         !moved && txn->file_renum.n && i < sizeof(FILE_COLUMNS) / sizeof(FILE_COLUMNS[0]); i++)
        update_ids(txn, meta, FILE_COLUMNS[i][0], FILE_COLUMNS[i][1], NULL, &txn->file_renum);
}
