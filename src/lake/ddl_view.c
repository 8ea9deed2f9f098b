/*
 * ddl_view.c — views and comments as DuckLake catalog rows (see ddl.h).
 *
 * CREATE [OR REPLACE] VIEW writes a ducklake_view row (its SQL, dialect and
 * column_aliases); DROP, RENAME and a replace end the live row (and its
 * ducklake_tag rows) at the transaction's snapshot. COMMENT ON TABLE /
 * VIEW / COLUMN ends the live 'comment' tag in ducklake_tag or
 * ducklake_column_tag and writes the new one. A name is either a table or
 * a view of its schema, never both (lk_entry_conflict).
 */
#include "lake/ddl.h"
#include "lake/ddl_int.h"
#include "lake/idorder.h"
#include "lake/macro.h"
#include "lake/sort.h"

#include "duck/duck.h"
#include "lake/bucket.h"
#include "lake/colstats.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/uuid.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- views ---- */

int lk_drop_view(lk_lake *lake, const char *schema, const char *name, int if_exists)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    lk_view *v = s ? lk_catalog_view(&txn->cat, s->id, name) : NULL;
    if (!v) {
        if (if_exists)
            return 0;
        return tarn_error_set(TARN_ENOTFOUND,
                              "Catalog Error: View with name %s does not exist in lake \"%s\"",
                              name, lake->alias);
    }
    ddl_drop_view_rows(lake, v);
    lk_idorder_entry_dropped(txn->ids, schema, name);
    lk_txn_view_dropped(txn, schema, name); /* alone: views reading it stay */
    lk_catalog_remove_view(&txn->cat, (size_t)(v - txn->cat.views));
    return 0;
}

/* Records the ducklake_view row of view v's new version, named `name`. */
static void view_row(lk_txn *txn, const lk_view *v, const char *name)
{
    tarn_buf b = {0};
    ddl_object_row(&b, v->id, v->uuid, txn->snapshot_id, v->schema_id, name);
    buf_puts(&b, ", 'duckdb', ");
    quote_literal(&b, v->sql);
    buf_puts(&b, ", ");
    quote_literal(&b, v->aliases);
    buf_putc(&b, ')');
    lk_txn_row(txn, "ducklake_view", "%s", buf_cstr(&b));
    buf_free(&b);
}

int lk_create_view(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                   const char *sql, const char *aliases, int or_replace, int if_not_exists)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = ddl_schema_to_create_in(lake, schema);
    if (!s)
        return tarn_error_code();
    if (lk_catalog_table(&txn->cat, s->id, name))
        return tarn_error_set(TARN_EINVALID,
                              "Catalog Error: a table named \"%s\" already exists in lake \"%s\"",
                              name, lake->alias);
    lk_view *old = lk_catalog_view(&txn->cat, s->id, name);
    if (old && if_not_exists)
        return 0;
    if (old && !or_replace)
        return tarn_error_set(TARN_EINVALID, "Catalog Error: View with name \"%s\" already exists",
                              name);
    if (old) {
        ddl_drop_view_rows(lake, old);
        lk_idorder_entry_dropped(txn->ids, schema, name);
        lk_catalog_remove_view(&txn->cat, (size_t)(old - txn->cat.views));
    }
    lk_view *v = lk_catalog_add_view(&txn->cat);
    v->id = lk_txn_new_catalog_id(txn);
    lk_idorder_entry_touched(txn->ids, schema, name);
    lk_idorder_entry_id(txn->ids, schema, name, v->id);
    lk_idorder_entry_created(txn->ids, schema, name);
    lk_txn_views_all(txn);
    v->begin = txn->snapshot_id;
    v->schema_id = s->id;
    v->uuid = uuid_v7();
    v->name = xstrdup(name);
    v->sql = xstrdup(sql);
    v->aliases = xstrdup(aliases);
    view_row(txn, v, name);
    ddl_token_name(txn, "created_view", schema, name);
    txn->catalog_changed = 1;
    return 0;
}

/* ---- comments ---- */

int lk_comment(lk_lake *lake, const char *schema, const char *name, const char *column,
               const char *text)
{
    lk_txn *txn = lake->txn;
    lk_table *t = lk_catalog_table_edit(&txn->cat, lk_catalog_table_named(&txn->cat, schema, name));
    if (!t)
        return tarn_error_set(TARN_ENOTFOUND,
                              "Catalog Error: Table with name %s does not exist in lake \"%s\"",
                              name, lake->alias);
    lk_column *c = column ? ddl_top_column(t, column, NULL) : NULL;
    if (column && !c)
        return tarn_error_set(TARN_EINVALID,
                              "Binder Error: Table \"%s\" does not have a column with name \"%s\"",
                              name, column);
    tarn_buf b = {0};
    if (c) {
        lk_txn_sql(txn,
                   "UPDATE %s.ducklake_column_tag SET end_snapshot = %lld WHERE table_id = %lld "
                   "AND column_id = %lld AND \"key\" = 'comment' AND end_snapshot IS NULL",
                   lake->meta, (long long)txn->snapshot_id, (long long)t->id, (long long)c->id);
        buf_printf(&b, "(%lld, %lld, %lld, NULL, 'comment', ", (long long)t->id, (long long)c->id,
                   (long long)txn->snapshot_id);
    } else {
        lk_txn_sql(txn,
                   "UPDATE %s.ducklake_tag SET end_snapshot = %lld WHERE object_id = %lld AND "
                   "\"key\" = 'comment' AND end_snapshot IS NULL",
                   lake->meta, (long long)txn->snapshot_id, (long long)t->id);
        buf_printf(&b, "(%lld, %lld, NULL, 'comment', ", (long long)t->id,
                   (long long)txn->snapshot_id);
    }
    quote_literal(&b, text);
    buf_putc(&b, ')');
    if (text)
        lk_txn_row(txn, c ? "ducklake_column_tag" : "ducklake_tag", "%s", buf_cstr(&b));
    buf_free(&b);
    lk_idorder_entry_touched(txn->ids, schema, name);
    lk_txn_view_dirty(txn, t->id);
    char **slot = c ? &c->comment : &t->comment;
    free(*slot);
    *slot = text ? xstrdup(text) : NULL;
    ddl_altered(lake, t);
    return 0;
}

/* ---- ALTER VIEW / COMMENT ON VIEW ---- */

static lk_view *find_view(lk_lake *lake, const char *schema, const char *name, const char *verb)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    lk_view *v = s ? lk_catalog_view(&txn->cat, s->id, name) : NULL;
    if (v)
        return v;
    if (s && lk_catalog_table(&txn->cat, s->id, name))
        tarn_error_set(TARN_EINVALID, "Binder Error: Cannot use %s on entry %s - it is not a view",
                       verb, name);
    else
        tarn_error_set(TARN_ENOTFOUND, "Catalog Error: View with name %s does not exist!", name);
    return NULL;
}

/* Replaces change token `from` by `to` (a rename of an object this
 * transaction created: DuckLake names it once, by its final name). */
static void retoken(lk_txn *txn, const char *from, const char *to)
{
    for (size_t i = 0; i < txn->nchange_tokens; i++)
        if (strcmp(txn->change_tokens[i], from) == 0) {
            free(txn->change_tokens[i]);
            txn->change_tokens[i] = xstrdup(to);
        }
}

int lk_rename_view(lk_lake *lake, const char *schema, const char *name, const char *new_name)
{
    lk_txn *txn = lake->txn;
    lk_view *v = find_view(lake, schema, name, "ALTER VIEW");
    if (!v)
        return tarn_error_code();
    if (strcasecmp(name, new_name) != 0 && (lk_catalog_view(&txn->cat, v->schema_id, new_name) ||
                                            lk_catalog_table(&txn->cat, v->schema_id, new_name)))
        return tarn_error_set(TARN_EINVALID,
                              "Catalog Error: Could not rename view \"%s\" to \"%s\": another "
                              "entry with this name already exists!",
                              name, new_name);
    if (v->begin == txn->snapshot_id) {
        /* its live row is this transaction's: DuckLake writes it once,
         * under the final name */
        tarn_buf b = {0};
        buf_printf(&b, "UPDATE %s.ducklake_view SET view_name = ", lake->meta);
        quote_literal(&b, new_name);
        buf_printf(&b, " WHERE view_id = %lld AND begin_snapshot = %lld", (long long)v->id,
                   (long long)txn->snapshot_id);
        lk_txn_sql(txn, "%s", buf_cstr(&b));
        buf_free(&b);
        char *from = ddl_name_token("created_view", schema, v->name);
        char *to = ddl_name_token("created_view", schema, new_name);
        retoken(txn, from, to);
        free(from);
        free(to);
    } else {
        ddl_end_rows(lake, "ducklake_view", "view_id", v->id);
        view_row(txn, v, new_name);
        ddl_token_name(txn, "created_view", schema, new_name);
        v->begin = txn->snapshot_id;
    }
    lk_idorder_entry_renamed(txn->ids, schema, v->name, new_name);
    free(v->name);
    v->name = xstrdup(new_name);
    txn->catalog_changed = 1;
    lk_txn_views_all(txn);
    return 0;
}

int lk_comment_view(lk_lake *lake, const char *schema, const char *name, const char *text)
{
    lk_txn *txn = lake->txn;
    lk_view *v = find_view(lake, schema, name, "ALTER VIEW");
    if (!v)
        return tarn_error_code();
    lk_txn_sql(txn,
               "UPDATE %s.ducklake_tag SET end_snapshot = %lld WHERE object_id = %lld AND "
               "\"key\" = 'comment' AND end_snapshot IS NULL",
               lake->meta, (long long)txn->snapshot_id, (long long)v->id);
    if (text) {
        tarn_buf b = {0};
        buf_printf(&b, "(%lld, %lld, NULL, 'comment', ", (long long)v->id,
                   (long long)txn->snapshot_id);
        quote_literal(&b, text);
        buf_putc(&b, ')');
        lk_txn_row(txn, "ducklake_tag", "%s", buf_cstr(&b));
        buf_free(&b);
    }
    free(v->comment);
    v->comment = text ? xstrdup(text) : NULL;
    lk_idorder_entry_touched(txn->ids, schema, name);
    if (v->begin != txn->snapshot_id) { /* a new view is reported as created only */
        char *tok = xasprintf("altered_view:%lld", (long long)v->id);
        lk_txn_change(txn, tok);
        free(tok);
    }
    /* DuckLake keeps views with the tables: a commented view is a new
     * catalog entry, so the global schema_version moves (a table's
     * comment moves it too, but writes no ducklake_schema_versions row) */
    txn->catalog_changed = 1;
    lk_txn_views_all(txn);
    return 0;
}

int lk_entry_conflict(lk_lake *lake, const char *schema, const char *name, int want_view,
                      const char *action)
{
    const lk_catalog *cat = lk_txn_catalog(lake);
    lk_schema *s = lk_catalog_schema((lk_catalog *)cat, schema);
    if (!s)
        return 0;
    int is_view = lk_catalog_view((lk_catalog *)cat, s->id, name) != NULL;
    int is_table = lk_catalog_table(cat, s->id, name) != NULL;
    if ((want_view && !is_table) || (!want_view && !is_view))
        return 0;
    return tarn_error_set(TARN_EINVALID,
                          "Catalog Error: Existing object %s is of type %s, trying to %s type %s",
                          name, want_view ? "Table" : "View", action, want_view ? "View" : "Table");
}
