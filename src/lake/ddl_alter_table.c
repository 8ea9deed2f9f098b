/*
 * ddl_alter_table.c — the ALTER TABLE changes of the table itself rather
 * than of a column (see ddl.h; lk_alter_table in ddl_alter.c routes them
 * here): RENAME TO ends the ducklake_table row and writes one with the new
 * name (a created_table token for the new name); SET / RESET PARTITIONED BY
 * ends the live ducklake_partition_info row and writes the new spec with
 * its ducklake_partition_column rows (files keep the spec they were
 * written under); SET / RESET SORTED BY changes the working model only,
 * its ducklake_sort_info rows written at commit (lk_sort_commit).
 */
#include "lake/ddl_alter_int.h"
#include "lake/ddl_int.h"
#include "lake/idorder.h"
#include "lake/sort.h"

#include "lake/bucket.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

int ddl_rename_table(lk_lake *lake, lk_table *t, const char *new_name)
{
    lk_txn *txn = lake->txn;
    const lk_table *other = lk_catalog_table(&txn->cat, t->schema_id, new_name);
    if (other && other->id != t->id) /* (itself: a change of case only) */
        return tarn_error_set(TARN_EINVALID, "Table with name \"%s\" already exists", new_name);
    ddl_end_rows(lake, "ducklake_table", "table_id", t->id);
    free(t->name);
    t->name = xstrdup(new_name);
    t->begin = txn->snapshot_id;
    ddl_path_object_row(txn, "ducklake_table", t->id, t->uuid, t->schema_id, new_name, t->path,
                        t->path_rel);
    lk_schema *sc = lk_catalog_schema_by_id(&txn->cat, t->schema_id);
    ddl_token_name(txn, "created_table", sc ? sc->name : "main", new_name);
    ddl_layout_changed(lake, t, 1);
    return 0;
}

static int same_spec(const lk_table *t, const int64_t *ids, const lk_alter *op)
{
    if (t->nkeys != op->nkeys)
        return 0;
    for (size_t i = 0; i < t->nkeys; i++)
        if (t->keys[i].column_id != ids[i] || strcmp(t->keys[i].transform, op->key_transforms[i]))
            return 0;
    return 1;
}

/* SET PARTITIONED BY / RESET PARTITIONED BY: the live spec ends and a new
 * one begins (RESET writes a spec with no keys). Files keep the spec they
 * were written under. */
int ddl_set_partition(lk_lake *lake, lk_table *t, const lk_alter *op)
{
    lk_txn *txn = lake->txn;
    int64_t *ids = xcalloc(op->nkeys ? op->nkeys : 1, sizeof(int64_t));
    for (size_t i = 0; i < op->nkeys; i++) {
        lk_column *c = ddl_top_column(t, op->key_columns[i], NULL);
        int32_t buckets = 0; /* bucket(N) hashes a nested value by its text, as DuckLake does */
        if (!c ||
            (lk_type_is_nested(c->type) && !lk_bucket_parse(op->key_transforms[i], &buckets))) {
            free(ids);
            return tarn_error_set(TARN_EINVALID,
                                  "cannot partition by \"%s\": not a top-level column of a "
                                  "primitive type in table %s",
                                  op->key_columns[i], t->name);
        }
        ids[i] = c->id;
    }
    if (same_spec(t, ids, op)) {
        free(ids);
        return 1; /* identical spec: nothing changes */
    }
    lk_txn_sql(txn,
               "UPDATE %s.ducklake_partition_info SET end_snapshot = %lld WHERE table_id = %lld "
               "AND end_snapshot IS NULL",
               lake->meta, (long long)txn->snapshot_id, (long long)t->id);
    int64_t pid = lk_txn_new_catalog_id(txn);
    lk_schema *sc = lk_catalog_schema_by_id(&txn->cat, t->schema_id);
    lk_idorder_entry_id(txn->ids, sc ? sc->name : "main", t->name, pid);
    lk_txn_row(txn, "ducklake_partition_info", "(%lld, %lld, %lld, NULL)", (long long)pid,
               (long long)t->id, (long long)txn->snapshot_id);
    for (size_t i = 0; i < t->nkeys; i++)
        free(t->keys[i].transform);
    free(t->keys);
    t->keys = op->nkeys ? xcalloc(op->nkeys, sizeof(lk_partkey)) : NULL;
    t->nkeys = op->nkeys;
    t->partition_id = op->nkeys ? pid : -1;
    for (size_t i = 0; i < op->nkeys; i++) {
        t->keys[i].column_id = ids[i];
        t->keys[i].transform = xstrdup(op->key_transforms[i]);
        tarn_buf b = {0};
        buf_printf(&b, "(%lld, %lld, %zu, %lld, ", (long long)pid, (long long)t->id, i,
                   (long long)ids[i]);
        quote_literal(&b, op->key_transforms[i]);
        buf_putc(&b, ')');
        lk_txn_row(txn, "ducklake_partition_column", "%s", buf_cstr(&b));
        buf_free(&b);
    }
    free(ids);
    return 0;
}

/* SET SORTED BY / RESET SORTED BY: the working model takes the new order
 * (keys rendered as DuckDB does, every column checked); the catalog rows
 * are written at commit from the final order (lk_sort_commit), as DuckLake
 * writes only a transaction's last order of a table. Each SET takes a
 * sort id, as DuckLake's does at commit. */
int ddl_set_sort(lk_lake *lake, lk_table *t, const lk_alter *op)
{
    lk_txn *txn = lake->txn;
    size_t n = op->nsort_keys;
    lk_sortkey *keys = xcalloc(n ? n : 1, sizeof(lk_sortkey));
    for (size_t i = 0; i < n; i++) {
        keys[i] = op->sort_keys[i];
        keys[i].expr = xstrdup(op->sort_keys[i].expr);
        keys[i].dialect = (char *)"duckdb";
    }
    int rc = lk_sort_normalize(keys, n, t);
    if (!rc) {
        int64_t id = -1;
        if (n) {
            id = lk_txn_new_catalog_id(txn);
            lk_schema *sc = lk_catalog_schema_by_id(&txn->cat, t->schema_id);
            lk_idorder_entry_id(txn->ids, sc ? sc->name : "main", t->name, id);
        }
        lk_table_set_sorts(t, id, keys, n);
        lk_ids_add(&txn->sort_changed, &txn->nsort_changed, t->id);
    }
    for (size_t i = 0; i < n; i++)
        free(keys[i].expr);
    free(keys);
    return rc;
}
