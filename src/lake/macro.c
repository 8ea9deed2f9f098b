/*
 * macro.c — macros in a lake (see macro.h).
 *
 * Catalog rows: ducklake_macro (schema_id, macro_id, macro_name,
 * begin_snapshot, end_snapshot), one ducklake_macro_impl row per
 * implementation (impl_id from 0, dialect 'duckdb', DuckDB's rendering of
 * the body, 'scalar' or 'table'), one ducklake_macro_parameters row per
 * parameter (column_id from 0 within the implementation). A drop ends the
 * ducklake_macro row; the other two have no snapshot range. Changes:
 * created_scalar_macro:"s"."m", created_table_macro:…, and
 * dropped_scalar_macro:<id> / dropped_table_macro:<id>.
 */
#include "lake/macro.h"

#include "lake/idorder.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *kind_name(int is_table)
{
    return is_table ? "Table Macro Function" : "Macro Function";
}

int lk_create_macro(lk_lake *lake, const char *schema, const lk_macro *def, int or_replace,
                    int if_not_exists)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    if (!s)
        return tarn_error_set(TARN_ENOTFOUND, "Catalog Error: Schema with name %s does not exist!",
                              schema);
    if (lk_catalog_macro(&txn->cat, s->id, def->name, def->is_table)) {
        if (if_not_exists)
            return 0;
        if (!or_replace)
            return tarn_error_set(TARN_EINVALID,
                                  "Catalog Error: %s with name \"%s\" already exists!",
                                  kind_name(def->is_table), def->name);
        int rc = lk_drop_macro(lake, schema, def->name, def->is_table, 0);
        if (rc)
            return rc;
        s = lk_catalog_schema(&txn->cat, schema);
    }
    lk_macro *m = lk_catalog_add_macro(&txn->cat);
    lk_macro_copy(m, def);
    m->id = -1;
    m->begin = txn->snapshot_id;
    m->schema_id = s->id;
    lk_idorder_macro_created(txn->ids, def->is_table, schema, def->name);
    lk_txn_views_all(txn);
    return 0;
}

int lk_drop_macro(lk_lake *lake, const char *schema, const char *name, int is_table, int if_exists)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    lk_macro *m = s ? lk_catalog_macro(&txn->cat, s->id, name, is_table) : NULL;
    if (!m) {
        if (if_exists)
            return 0;
        return tarn_error_set(TARN_ENOTFOUND, "Catalog Error: %s with name %s does not exist!",
                              kind_name(is_table), name);
    }
    if (m->id < 0) { /* created in this transaction: it leaves no row */
        lk_idorder_macro_dropped(txn->ids, is_table, schema, m->name);
    } else {
        lk_txn_sql(txn,
                   "UPDATE %s.ducklake_macro SET end_snapshot = %lld WHERE end_snapshot IS NULL "
                   "AND macro_id = %lld",
                   lake->meta, (long long)txn->snapshot_id, (long long)m->id);
        char *tok =
            xasprintf("dropped_%s_macro:%lld", is_table ? "table" : "scalar", (long long)m->id);
        lk_txn_change(txn, tok);
        free(tok);
        txn->catalog_changed = 1;
    }
    lk_catalog_remove_macro(&txn->cat, (size_t)(m - txn->cat.macros));
    lk_txn_views_all(txn);
    return 0;
}

int lk_drop_schema_macros(lk_lake *lake, int64_t schema_id, const char *schema)
{
    lk_txn *txn = lake->txn;
    for (size_t i = txn->cat.nmacros; i-- > 0;) {
        lk_macro *m = &txn->cat.macros[i];
        if (m->schema_id != schema_id)
            continue;
        char *name = xstrdup(m->name);
        int rc = lk_drop_macro(lake, schema, name, m->is_table, 0);
        free(name);
        if (rc)
            return rc;
    }
    return 0;
}

static void macro_rows(lk_txn *txn, const lk_macro *m)
{
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, %lld, ", (long long)m->schema_id, (long long)m->id);
    quote_literal(&b, m->name);
    buf_printf(&b, ", %lld, NULL)", (long long)txn->snapshot_id);
    lk_txn_row(txn, "ducklake_macro", "%s", buf_cstr(&b));
    for (size_t i = 0; i < m->nimpls; i++) {
        const lk_macro_impl *im = &m->impls[i];
        buf_clear(&b);
        buf_printf(&b, "(%lld, %zu, 'duckdb', ", (long long)m->id, i);
        quote_literal(&b, im->sql);
        buf_puts(&b, ", ");
        quote_literal(&b, im->type);
        buf_putc(&b, ')');
        lk_txn_row(txn, "ducklake_macro_impl", "%s", buf_cstr(&b));
        for (size_t k = 0; k < im->nparams; k++) {
            const lk_macro_param *p = &im->params[k];
            buf_clear(&b);
            buf_printf(&b, "(%lld, %zu, %zu, ", (long long)m->id, i, k);
            quote_literal(&b, p->name);
            buf_puts(&b, ", ");
            quote_literal(&b, p->type);
            buf_puts(&b, ", ");
            quote_literal(&b, p->default_value);
            buf_puts(&b, ", ");
            quote_literal(&b, p->default_type);
            buf_putc(&b, ')');
            lk_txn_row(txn, "ducklake_macro_parameters", "%s", buf_cstr(&b));
        }
    }
    buf_free(&b);
}

/* The pending (unnumbered) macro schema.name of one kind. */
static lk_macro *pending(lk_txn *txn, const char *schema, const char *name, int is_table)
{
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    lk_macro *m = s ? lk_catalog_macro(&txn->cat, s->id, name, is_table) : NULL;
    return m && m->id < 0 ? m : NULL;
}

static void created_tokens(lk_txn *txn, int is_table, const char **schemas, const char **names,
                           size_t n)
{
    const char **order = NULL;
    size_t norder = lk_idorder_macro_change_schemas(txn->ids, is_table, &order);
    for (size_t i = 0; i < norder; i++) {
        for (size_t k = 0; k < n; k++) {
            if (strcasecmp(schemas[k], order[i]) != 0)
                continue;
            tarn_buf b = {0};
            buf_printf(&b, "created_%s_macro:", is_table ? "table" : "scalar");
            quote_ident(&b, schemas[k]);
            buf_putc(&b, '.');
            quote_ident(&b, names[k]);
            lk_txn_change(txn, buf_cstr(&b));
            buf_free(&b);
        }
    }
    free(order);
}

void lk_macro_commit(lk_txn *txn)
{
    for (int is_table = 0; is_table <= 1; is_table++) {
        const char **schemas = NULL, **names = NULL;
        size_t n = lk_idorder_macro_order(txn->ids, is_table, &schemas, &names);
        for (size_t i = 0; i < n; i++) {
            lk_macro *m = pending(txn, schemas[i], names[i], is_table);
            if (!m)
                continue;
            m->id = lk_txn_new_catalog_id(txn);
            macro_rows(txn, m);
            txn->catalog_changed = 1;
        }
        created_tokens(txn, is_table, schemas, names, n);
        free(schemas);
        free(names);
    }
}

/* A DuckLake type name as DuckDB SQL ("int32" → INTEGER). */
static void type_sql(tarn_buf *b, const char *type)
{
    lk_column c = {0};
    c.type = (char *)type;
    lk_type_to_sql(b, &c);
}

static void params_sql(tarn_buf *b, const lk_macro_impl *im)
{
    buf_putc(b, '(');
    for (size_t k = 0; k < im->nparams; k++) {
        const lk_macro_param *p = &im->params[k];
        if (k)
            buf_puts(b, ", ");
        quote_ident(b, p->name);
        if (strcmp(p->type, "unknown") != 0) {
            buf_putc(b, ' ');
            type_sql(b, p->type);
        }
        /* DuckLake reads the default back as the stored text cast to the
         * stored type */
        if (strcmp(p->default_type, "unknown") != 0) {
            buf_puts(b, " := CAST(");
            quote_literal(b, p->default_value);
            buf_puts(b, " AS ");
            type_sql(b, p->default_type);
            buf_putc(b, ')');
        }
    }
    buf_putc(b, ')');
}

void lk_macro_duckdb_sql(tarn_buf *b, const char *alias, const char *schema, const lk_macro *m)
{
    buf_puts(b, "CREATE OR REPLACE MACRO ");
    quote_qualified(b, alias, schema, m->name);
    for (size_t i = 0; i < m->nimpls; i++) {
        const lk_macro_impl *im = &m->impls[i];
        if (i)
            buf_puts(b, ", ");
        params_sql(b, im);
        /* parenthesized: a query's own commas must not end it */
        buf_puts(b, strcmp(im->type, "table") == 0 ? " AS TABLE (" : " AS (");
        buf_puts(b, im->sql);
        buf_putc(b, ')');
    }
}
