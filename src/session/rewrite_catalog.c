/*
 * rewrite_catalog.c — DuckDB's catalog views and functions as a user of a
 * lake expects them (see rewrite_int.h): a lake table is a DuckDB view
 * underneath, but information_schema, duckdb_tables(), duckdb_views(),
 * duckdb_columns(), duckdb_databases(), SHOW ALL TABLES and
 * pragma_database_size() list it as the table it is, with its defaults,
 * nullability and row count from the catalog, and leave out the catalog
 * databases DuckLake hides; duckdb_logs reads DuckLake's metadata log.
 * Each rewriter replaces the view or call with a parenthesized subquery
 * over DuckDB's own, joined with VALUES rows built from the lake handles.
 */
#include "session/rewrite_int.h"

#include "duck/duck.h"
#include "lake/info.h"
#include "lake/txn.h"
#include "lake/views.h"
#include "session/session_log.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* How DuckDB shows a DuckLake column default: 'NULL' when none, a quoted
 * literal, or the expression text. */
static void default_text(tarn_buf *b, const lk_column *c)
{
    if (!c->default_value || strcmp(c->default_value, "NULL") == 0) {
        quote_literal(b, "NULL");
        return;
    }
    tarn_buf v = {0};
    if (c->default_value_type && strcmp(c->default_value_type, "expression") == 0)
        buf_puts(&v, c->default_value);
    else
        quote_literal(&v, c->default_value);
    quote_literal(b, buf_cstr(&v));
    buf_free(&v);
}

/* Opens one VALUES row of a facts list with its lake, schema and table
 * names: `('l', 's', 't'`, after ", " unless it is the first row; the
 * caller adds the other values and the ')'. */
static void table_row(tarn_buf *b, size_t *rows, const lk_lake *l, const lk_schema *sc,
                      const lk_table *t)
{
    buf_puts(b, (*rows)++ ? ", (" : "(");
    quote_literal(b, l->alias);
    buf_puts(b, ", ");
    quote_literal(b, sc->name);
    buf_puts(b, ", ");
    quote_literal(b, t->name);
}

/* VALUES rows (catalog, schema, table, column, default, nullable) for every
 * top-level column of every lake table: what the views cannot carry. */
int rewrite_column_facts(tarn_buf *b, tarn_session *s)
{
    size_t rows = 0;
    buf_puts(b, "(VALUES ");
    for (lk_lake *l = s->lakes; l; l = l->next) {
        const lk_catalog *cat = lk_txn_catalog(l);
        for (size_t i = 0; i < cat->ntables; i++) {
            const lk_table *t = &cat->tables[i];
            lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, t->schema_id);
            if (!sc)
                continue;
            for (size_t c = 0; c < t->ncols; c++) {
                table_row(b, &rows, l, sc, t);
                buf_puts(b, ", ");
                quote_literal(b, t->cols[c].name);
                buf_puts(b, ", ");
                default_text(b, &t->cols[c]);
                buf_printf(b, ", '%s')", t->cols[c].nulls_allowed ? "YES" : "NO");
            }
        }
    }
    if (!rows)
        buf_puts(b, "(NULL, NULL, NULL, NULL, NULL, NULL)");
    buf_puts(b, ") __tarn_o(cat, sch, tbl, col, dflt, nul)");
    return rows;
}

/* Whether tokens from i name information_schema.<view> (in *q), also as
 * system.information_schema.<view> (its catalog, as the DuckDB UI names
 * it); never from the middle of a longer name. */
static int is_info_schema(const sql_tokens *tk, size_t i, qname *q, const char *view)
{
    if ((i > 0 && sql_tok_is_op(&tk->toks[i - 1], ".")) || !session_qname(tk, i, q))
        return 0;
    int k = q->n == 3 && strcasecmp(q->parts[0], "system") == 0;
    return q->n == 2 + k && strcasecmp(q->parts[k], "information_schema") == 0 &&
           strcasecmp(q->parts[k + 1], view) == 0;
}

/* Ends the rewrite of a catalog view or call whose tokens end before
 * `end`: the subquery takes its name as alias unless the query gives one,
 * so that qualified column references still resolve. */
static void rewrite_alias(size_t *next, tarn_buf *b, const sql_tokens *tk, size_t end,
                          const char *name)
{
    if (!session_alias_follows(tk, end))
        buf_printf(b, " AS %s", name);
    *next = end;
}

/* information_schema.columns, with the defaults and nullability of lake
 * columns filled in from the catalog. */
static int rewrite_info_columns(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk,
                                size_t i)
{
    qname q;
    *next = i;
    if (!is_info_schema(tk, i, &q, "columns"))
        return 0;
    buf_puts(b, "(SELECT __tarn_c.* REPLACE (COALESCE(__tarn_o.dflt, __tarn_c.column_default) AS "
                "column_default, COALESCE(__tarn_o.nul, __tarn_c.is_nullable) AS is_nullable) "
                "FROM information_schema.columns __tarn_c LEFT JOIN ");
    rewrite_column_facts(b, s);
    buf_puts(b, " ON __tarn_c.table_catalog = __tarn_o.cat AND __tarn_c.table_schema = "
                "__tarn_o.sch AND __tarn_c.table_name = __tarn_o.tbl AND __tarn_c.column_name = "
                "__tarn_o.col WHERE __tarn_c.column_name <> '" LK_UNBOUND_COLUMN "')");
    rewrite_alias(next, b, tk, q.end, "columns");
    return 0;
}

/* " AND col NOT IN ('__ducklake_metadata_l', …)": the catalog databases
 * DuckLake hides from listings (those not named with METADATA_CATALOG). */
static void hidden_catalogs(tarn_buf *b, tarn_session *s, const char *col)
{
    int n = 0;
    for (lk_lake *l = s->lakes; l; l = l->next) {
        if (!l->meta_hidden)
            continue;
        buf_printf(b, n++ ? ", " : " AND %s NOT IN (", col);
        quote_literal(b, l->meta_name);
    }
    if (n)
        buf_putc(b, ')');
}

/* information_schema.tables: lake tables are DuckDB views underneath, but
 * they are tables to the user. */
static int rewrite_info_tables(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk,
                               size_t i)
{
    qname q;
    *next = i;
    if (!is_info_schema(tk, i, &q, "tables"))
        return 0;
    buf_puts(b,
             "(SELECT __tarn_t.* REPLACE (CASE WHEN __tarn_o.cat IS NULL THEN "
             "__tarn_t.table_type ELSE 'BASE TABLE' END AS table_type) FROM "
             "information_schema.tables __tarn_t LEFT JOIN (SELECT DISTINCT cat, sch, tbl FROM ");
    rewrite_column_facts(b, s);
    buf_puts(b, ") __tarn_o ON __tarn_t.table_catalog = __tarn_o.cat AND __tarn_t.table_schema = "
                "__tarn_o.sch AND __tarn_t.table_name = __tarn_o.tbl WHERE true");
    hidden_catalogs(b, s, "__tarn_t.table_catalog");
    buf_putc(b, ')');
    rewrite_alias(next, b, tk, q.end, "tables");
    return 0;
}

/* VALUES rows (catalog, schema, table, estimated size) for every lake
 * table: the size is the table's record_count in ducklake_table_stats, as
 * DuckLake gives it to duckdb_tables(). */
static int table_facts(tarn_buf *b, tarn_session *s)
{
    size_t rows = 0;
    buf_puts(b, "(VALUES ");
    for (lk_lake *l = s->lakes; l; l = l->next) {
        const lk_catalog *cat = lk_txn_catalog(l);
        duck_table st = {0};
        int rc = lk_info_record_counts(&st, l, s->con);
        if (rc)
            return rc;
        for (size_t i = 0; i < cat->ntables; i++) {
            const lk_table *t = &cat->tables[i];
            lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, t->schema_id);
            if (!sc)
                continue;
            const char *count = NULL;
            for (size_t r = 0; r < st.nrows && !count; r++)
                if (duck_table_int64(&st, r, 0) == t->id)
                    count = duck_table_get(&st, r, 1);
            table_row(b, &rows, l, sc, t);
            buf_printf(b, ", %s::BIGINT)", count ? count : "0");
        }
        duck_table_free(&st);
    }
    if (!rows)
        buf_puts(b, "(NULL, NULL, NULL, NULL)");
    buf_puts(b, ") __tarn_l(cat, sch, tbl, est)");
    return 0;
}

/* information_schema.views: a lake table's DuckDB view is tarn's, not a
 * view of the user's; only the lake's own views are listed. */
static int rewrite_info_views(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk,
                              size_t i)
{
    qname q;
    *next = i;
    if (!is_info_schema(tk, i, &q, "views"))
        return 0;
    buf_puts(b, "(SELECT __tarn_v.* FROM information_schema.views __tarn_v ANTI JOIN ");
    int rc = table_facts(b, s);
    buf_puts(b, " ON __tarn_v.table_catalog = __tarn_l.cat AND __tarn_v.table_schema = "
                "__tarn_l.sch AND __tarn_v.table_name = __tarn_l.tbl WHERE true");
    hidden_catalogs(b, s, "__tarn_v.table_catalog");
    buf_putc(b, ')');
    rewrite_alias(next, b, tk, q.end, "views");
    return rc;
}

/* Whether token i is a call `name()` of a DuckDB table function (not
 * qualified). */
static int bare_call(const sql_tokens *tk, size_t i, const char *name)
{
    return tk->toks[i].type == SQL_TOK_IDENT && strcasecmp(tk->toks[i].text, name) == 0 &&
           i + 2 < tk->n && sql_tok_is_op(&tk->toks[i + 1], "(") &&
           sql_tok_is_op(&tk->toks[i + 2], ")") && !(i > 0 && sql_tok_is_op(&tk->toks[i - 1], "."));
}

/* The SQL of an identifier held by SQL expression `expr` as DuckDB writes
 * it in a CREATE statement: bare when it is a plain word that is no
 * keyword, else double-quoted. */
static void optionally_quoted(tarn_buf *b, const char *expr)
{
    buf_printf(b,
               "CASE WHEN regexp_full_match(%s, '[A-Za-z_][A-Za-z0-9_]*') AND NOT EXISTS "
               "(SELECT 1 FROM duckdb_keywords() k WHERE k.keyword_name = lower(%s)) THEN %s "
               "ELSE '\"' || replace(%s, '\"', '\"\"') || '\"' END",
               expr, expr, expr, expr);
}

/* The CREATE TABLE statement DuckDB gives a table in duckdb_tables().sql,
 * for the lake table whose DuckDB view is row v (tarn's view SQL is its
 * own business): its columns' types from the view, defaults and NOT NULL
 * from the catalog. */
static void table_ddl(tarn_buf *b, tarn_session *s)
{
    buf_puts(b, "(SELECT 'CREATE TABLE ' || CASE WHEN v.schema_name = 'main' THEN '' ELSE ");
    optionally_quoted(b, "v.schema_name");
    buf_puts(b, " || '.' END || ");
    optionally_quoted(b, "v.view_name");
    buf_puts(b, " || '(' || string_agg(");
    optionally_quoted(b, "c.column_name");
    buf_puts(b, " || ' ' || c.data_type || CASE WHEN __tarn_o.dflt IS NULL OR __tarn_o.dflt = "
                "'NULL' THEN '' ELSE ' DEFAULT(' || __tarn_o.dflt || ')' END || "
                "CASE WHEN __tarn_o.nul = 'NO' THEN ' NOT NULL' ELSE '' END, ', ' ORDER BY "
                "c.column_index) || ');' FROM duckdb_columns() c LEFT JOIN ");
    rewrite_column_facts(b, s);
    buf_puts(b, " ON __tarn_o.cat = c.database_name AND __tarn_o.sch = c.schema_name AND "
                "__tarn_o.tbl = c.table_name AND __tarn_o.col = c.column_name WHERE "
                "c.database_name = v.database_name AND c.schema_name = v.schema_name AND "
                "c.table_name = v.view_name AND c.column_name <> '" LK_UNBOUND_COLUMN "')");
}

/* The joined side after "duckdb_views() v JOIN" (or ANTI JOIN): the lake
 * tables' facts, matched to the DuckDB view that is each lake table, and
 * the closing parenthesis of the subquery. */
static int views_of_lake_tables(tarn_buf *b, tarn_session *s)
{
    int rc = table_facts(b, s);
    buf_puts(b, " ON v.database_name = __tarn_l.cat AND v.schema_name = __tarn_l.sch "
                "AND v.view_name = __tarn_l.tbl)");
    return rc;
}

/* duckdb_tables(): lake tables are DuckDB views underneath; list them as
 * the tables they are, with their row counts as estimated_size. */
static int duckdb_tables_sql(tarn_buf *b, tarn_session *s)
{
    buf_puts(b, "(SELECT * FROM duckdb_tables() WHERE true");
    hidden_catalogs(b, s, "database_name");
    buf_puts(b, " UNION ALL BY NAME SELECT v.database_name, "
                "v.database_oid, v.schema_name, v.schema_oid, v.view_name AS table_name, "
                "v.view_oid AS table_oid, v.comment, v.tags, v.internal, v.temporary, false AS "
                "has_primary_key, __tarn_l.est AS estimated_size, v.column_count, 0::BIGINT AS "
                "index_count, 0::BIGINT AS check_constraint_count, ");
    table_ddl(b, s);
    buf_puts(b, " AS sql FROM duckdb_views() v JOIN ");
    return views_of_lake_tables(b, s);
}

/* duckdb_views(): only the lake's own views, not the views that read its
 * tables. */
static int duckdb_views_sql(tarn_buf *b, tarn_session *s)
{
    buf_puts(b, "(SELECT v.* FROM duckdb_views() v ANTI JOIN ");
    return views_of_lake_tables(b, s);
}

/* duckdb_columns(): a lake view that does not bind has no columns, as in
 * DuckLake (its DuckDB view holds only the error it fails with). */
static int duckdb_columns_sql(tarn_buf *b, tarn_session *s)
{
    buf_puts(b, "(SELECT * FROM duckdb_columns() WHERE column_name <> '" LK_UNBOUND_COLUMN "')");
    return 0;
}

/* Opens "(SELECT d.* REPLACE (CASE WHEN d.database_name = <lake> THEN
 * <then(lake)> …" over the session's lakes; the caller adds the ELSE. */
static void replace_per_lake(tarn_buf *b, tarn_session *s, void (*then)(tarn_buf *b, lk_lake *l))
{
    buf_puts(b, "(SELECT d.* REPLACE (CASE ");
    for (lk_lake *l = s->lakes; l; l = l->next) {
        buf_puts(b, "WHEN d.database_name = ");
        quote_literal(b, l->alias);
        buf_puts(b, " THEN ");
        then(b, l);
        buf_putc(b, ' ');
    }
}

static void data_path_tags(tarn_buf *b, lk_lake *l)
{
    buf_puts(b, "map_concat(d.tags, MAP {'data_path': ");
    quote_literal(b, l->data_abs);
    buf_puts(b, "})");
}

static void lake_size(tarn_buf *b, lk_lake *l)
{
    buf_puts(b, "format_bytes(");
    lk_info_size_sql(b, l);
    buf_puts(b, "::BIGINT)");
}

/* duckdb_databases(): a lake carries its data path as tag data_path, and
 * the catalog databases DuckLake hides are not listed. */
static int duckdb_databases_sql(tarn_buf *b, tarn_session *s)
{
    replace_per_lake(b, s, data_path_tags);
    buf_puts(b, "ELSE d.tags END AS tags) FROM duckdb_databases() d WHERE true");
    hidden_catalogs(b, s, "d.database_name");
    buf_putc(b, ')');
    return 0;
}

/* SHOW ALL TABLES, without the catalog databases DuckLake hides. */
static int rewrite_show_all_tables(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk,
                                   size_t i)
{
    *next = i;
    if (i + 2 >= tk->n || !sql_tok_is_kw(&tk->toks[i], "SHOW") ||
        !sql_tok_is_kw(&tk->toks[i + 1], "ALL") || !sql_tok_is_kw(&tk->toks[i + 2], "TABLES"))
        return 0;
    tarn_buf w = {0};
    hidden_catalogs(&w, s, "\"database\"");
    if (w.len)
        buf_printf(b, "SELECT * FROM (SHOW ALL TABLES) WHERE true%s", buf_cstr(&w));
    buf_free(&w);
    if (b->len)
        *next = i + 3;
    return 0;
}

/* pragma_database_size(): a lake's size is that of its live data and
 * delete files, as DuckLake reports it. */
static int database_size_sql(tarn_buf *b, tarn_session *s)
{
    replace_per_lake(b, s, lake_size);
    buf_puts(b, "ELSE d.database_size END AS database_size) FROM pragma_database_size() d)");
    return 0;
}

/* DuckLake's DuckLakeMetadata log, which the session keeps
 * (session_log.c): duckdb_logs_parsed('DuckLakeMetadata') reads its
 * entries, duckdb_logs (or duckdb_logs()) DuckDB's and them. */
static int rewrite_duckdb_logs(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk,
                               size_t i)
{
    *next = i;
    const sql_token *t = &tk->toks[i];
    if (t->type != SQL_TOK_IDENT || (i > 0 && sql_tok_is_op(&tk->toks[i - 1], ".")))
        return 0;
    if (strcasecmp(t->text, "duckdb_logs_parsed") == 0 && i + 3 < tk->n &&
        sql_tok_is_op(&tk->toks[i + 1], "(") && tk->toks[i + 2].type == SQL_TOK_STRING &&
        strcasecmp(tk->toks[i + 2].text, SESSION_LOG_TYPE) == 0 &&
        sql_tok_is_op(&tk->toks[i + 3], ")")) {
        session_log_parsed_sql(b, s);
        rewrite_alias(next, b, tk, i + 4, "duckdb_logs_parsed");
        return 0;
    }
    if (strcasecmp(t->text, "duckdb_logs") != 0 || !session_log_has_entries(s))
        return 0;
    size_t end = i + 1;
    if (end + 1 < tk->n && sql_tok_is_op(&tk->toks[end], "(")) {
        if (!sql_tok_is_op(&tk->toks[end + 1], ")"))
            return 0; /* DuckDB's named arguments: its own entries only */
        end += 2;
    }
    session_log_logs_sql(b, s);
    rewrite_alias(next, b, tk, end, "duckdb_logs");
    return 0;
}

/* DuckDB's catalog functions called bare (`name()`), each replaced by a
 * subquery over the lake's facts, under the function's name as alias. */
static const struct {
    const char *name;
    int (*sql)(tarn_buf *b, tarn_session *s);
} BARE_CALLS[] = {
    {"duckdb_tables", duckdb_tables_sql},       {"duckdb_views", duckdb_views_sql},
    {"duckdb_columns", duckdb_columns_sql},     {"pragma_database_size", database_size_sql},
    {"duckdb_databases", duckdb_databases_sql},
};

static int rewrite_bare_call(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk,
                             size_t i)
{
    *next = i;
    for (size_t k = 0; k < sizeof(BARE_CALLS) / sizeof(BARE_CALLS[0]); k++) {
        if (!bare_call(tk, i, BARE_CALLS[k].name))
            continue;
        int rc = BARE_CALLS[k].sql(b, s);
        rewrite_alias(next, b, tk, i + 3, BARE_CALLS[k].name);
        return rc;
    }
    return 0;
}

/* The rewriters of DuckDB's catalog views and functions over the lake's
 * tables, tried in this order at each token. */
typedef int (*catalog_rewriter)(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk,
                                size_t i);
static const catalog_rewriter CATALOG_REWRITERS[] = {
    rewrite_info_columns, rewrite_info_tables,     rewrite_info_views,
    rewrite_bare_call,    rewrite_show_all_tables, rewrite_duckdb_logs,
};

int rewrite_catalog(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk, size_t i)
{
    int rc = 0;
    *next = i;
    size_t n = sizeof(CATALOG_REWRITERS) / sizeof(CATALOG_REWRITERS[0]);
    for (size_t k = 0; k < n && !rc && *next == i; k++)
        rc = CATALOG_REWRITERS[k](next, b, s, tk, i);
    return rc;
}
