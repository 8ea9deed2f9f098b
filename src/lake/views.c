/*
 * views.c — the alias database of an attached lake: one DuckDB schema per
 * lake schema and one view per lake table (the table's scan at the
 * session's snapshot, see scan.h) or lake view (its SQL), with the lake's
 * comments (see views.h).
 *
 * The views follow the catalog model: after a commit only the views of the
 * tables it changed are rebuilt (lk_lake_sync_views), inside BEGIN … COMMIT
 * the views of the tables a statement changed (lk_lake_sync_statement_views),
 * after a rollback those the transaction had changed (lk_lake_restore_views).
 * A view's statement is remembered per table so an unchanged one is not
 * rebuilt. Views hold no session state (the snapshot is a literal), so
 * other connections of the same database read them too.
 *
 * Catalog rows: none. The views are made from the catalog model (model.h)
 * that load.c reads, in the session's DuckDB, never in the catalog.
 */
#include "lake/views.h"

#include "duck/duck.h"
#include "lake/scan.h"
#include "lake/macro.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- views ---- */

static int drop_alias_objects(lk_lake *lake, duckdb_connection con)
{
    lk_lake_views_forget(lake);
    tarn_buf b = {0};
    buf_puts(&b, "SELECT schema_name FROM duckdb_schemas() WHERE database_name = ");
    quote_literal(&b, lake->alias);
    buf_puts(&b, " AND NOT internal");
    duck_table t;
    int rc = duck_table_query(&t, con, buf_cstr(&b));
    buf_clear(&b);
    for (size_t r = 0; r < t.nrows && !rc; r++) {
        buf_clear(&b);
        buf_puts(&b, "DROP SCHEMA ");
        quote_qualified(&b, lake->alias, NULL, duck_table_get(&t, r, 0));
        buf_puts(&b, " CASCADE");
        rc = duck_exec(con, buf_cstr(&b));
    }
    duck_table_free(&t);
    if (!rc) {
        buf_clear(&b);
        buf_puts(&b, "SELECT view_name FROM duckdb_views() WHERE database_name = ");
        quote_literal(&b, lake->alias);
        buf_puts(&b, " AND schema_name = 'main' AND NOT internal");
        rc = duck_table_query(&t, con, buf_cstr(&b));
        for (size_t r = 0; r < t.nrows && !rc; r++) {
            buf_clear(&b);
            buf_puts(&b, "DROP VIEW ");
            quote_qualified(&b, lake->alias, "main", duck_table_get(&t, r, 0));
            rc = duck_exec(con, buf_cstr(&b));
        }
        duck_table_free(&t);
    }
    if (!rc && lake->alias_macros) { /* the lake's macros in main (other schemas went with
                                       * CASCADE); only create_macros makes them */
        buf_clear(&b);
        buf_puts(&b, "SELECT DISTINCT function_name, function_type = 'table_macro' FROM "
                     "duckdb_functions() WHERE database_name = ");
        quote_literal(&b, lake->alias);
        buf_puts(&b, " AND schema_name = 'main' AND function_type IN ('macro', 'table_macro') "
                     "AND NOT internal");
        rc = duck_table_query(&t, con, buf_cstr(&b));
        for (size_t r = 0; r < t.nrows && !rc; r++) {
            buf_clear(&b);
            buf_puts(&b, strcmp(duck_table_get(&t, r, 1), "true") == 0 ? "DROP MACRO TABLE "
                                                                       : "DROP MACRO ");
            quote_qualified(&b, lake->alias, "main", duck_table_get(&t, r, 0));
            rc = duck_exec(con, buf_cstr(&b));
        }
        duck_table_free(&t);
    }
    buf_free(&b);
    return rc;
}

/* The lake's macros become DuckDB macros in the alias database. DuckDB
 * binds a table macro's query when it is created, resolving names with
 * the search path: the macro's own schema, as where it was first made
 * (the user's statement ran under USE lake). One that no longer binds
 * (its table was dropped) is left out, as views are. */
static int create_macros(lk_lake *lake, duckdb_connection con, const lk_catalog *cat)
{
    if (!cat->nmacros)
        return 0;
    lake->alias_macros = 1;
    char *saved = NULL;
    int rc = duck_query_string(&saved, con, "SELECT current_setting('search_path')");
    for (size_t i = 0; i < cat->nmacros && !rc; i++) {
        const lk_macro *m = &cat->macros[i];
        lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, m->schema_id);
        if (!sc)
            continue;
        tarn_buf path = {0}, b = {0};
        quote_qualified(&path, NULL, lake->alias, sc->name);
        buf_puts(&b, "SET search_path = ");
        quote_literal(&b, buf_cstr(&path));
        rc = duck_exec(con, buf_cstr(&b));
        buf_clear(&b);
        lk_macro_duckdb_sql(&b, lake->alias, sc->name, m);
        if (!rc && duck_exec(con, buf_cstr(&b)) != 0)
            tarn_error_clear();
        buf_free(&b);
        buf_free(&path);
    }
    tarn_buf b = {0};
    buf_puts(&b, "SET search_path = ");
    quote_literal(&b, saved ? saved : "");
    if (!rc)
        rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    free(saved);
    return rc;
}

/* Table and column comments ride on the table's DuckDB view, so that
 * duckdb_columns() and DESCRIBE show them. */
static int comment_view(lk_lake *lake, duckdb_connection con, const char *schema, const lk_table *t)
{
    int rc = 0;
    tarn_buf b = {0};
    if (t->comment) {
        buf_puts(&b, "COMMENT ON VIEW ");
        quote_qualified(&b, lake->alias, schema, t->name);
        buf_puts(&b, " IS ");
        quote_literal(&b, t->comment);
        rc = duck_exec(con, buf_cstr(&b));
    }
    for (size_t i = 0; i < t->ncols && !rc; i++) {
        if (!t->cols[i].comment)
            continue;
        buf_clear(&b);
        buf_puts(&b, "COMMENT ON COLUMN ");
        quote_qualified(&b, lake->alias, schema, t->name);
        buf_putc(&b, '.');
        quote_ident(&b, t->cols[i].name);
        buf_puts(&b, " IS ");
        quote_literal(&b, t->cols[i].comment);
        rc = duck_exec(con, buf_cstr(&b));
    }
    buf_free(&b);
    return rc;
}

/* The query of lake view `v` of schema `sc` as its DuckDB view holds it:
 * the catalog tag replaced by the lake's name, then the rewriter's form
 * when it has one. *out NULL: the view cannot be made (not an error). */
static void lake_view_query(char **out, int *rewritten, lk_lake *lake, const lk_schema *sc,
                            const lk_view *v)
{
    tarn_buf name = {0}, b = {0};
    quote_ident(&name, lake->alias);
    const char *p = v->sql;
    const char *tag = "{DUCKLAKE_CATALOG}";
    const char *hit;
    while ((hit = strstr(p, tag)) != NULL) {
        buf_append(&b, p, (size_t)(hit - p));
        buf_puts(&b, buf_cstr(&name));
        p = hit + strlen(tag);
    }
    buf_puts(&b, p);
    buf_free(&name);
    *rewritten = 0;
    *out = buf_detach(&b);
    char *rw = NULL;
    if (!lake->view_rewrite)
        return;
    if (lake->view_rewrite(lake->view_ctx, &rw, lake, sc->name, *out) != 0) {
        /* it does not read: the caller makes it a view that does not bind */
        free(*out);
        *out = NULL;
    } else if (rw) {
        free(*out);
        *out = rw;
        *rewritten = 1;
    }
}

/* The first line of the current error (cleared), as a view that does not
 * bind fails with it. */
static char *take_error_line(void)
{
    const char *m = tarn_error_last();
    const char *nl = strchr(m, '\n');
    char *line = nl ? xstrndup(m, (size_t)(nl - m)) : xstrdup(m);
    tarn_error_clear();
    return line;
}

/* A DuckLake view becomes a DuckDB view in the alias database. One that
 * does not bind (a view it reads was dropped) is 0, *why its error. */
static int create_lake_view(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                            const lk_view *v, char **why)
{
    *why = NULL;
    lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, v->schema_id);
    if (!sc)
        return 1; /* (its schema is gone: nothing to make) */
    char *query = NULL;
    int rewritten = 0;
    lake_view_query(&query, &rewritten, lake, sc, v);
    if (!query) {
        *why = take_error_line();
        return 0;
    }
    int made = 0;
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE VIEW ");
    quote_qualified(&b, lake->alias, sc->name, v->name);
    if (v->aliases && *v->aliases)
        buf_printf(&b, " (%s)", v->aliases);
    buf_puts(&b, " AS ");
    buf_puts(&b, query);
    free(query);
    if (duck_exec(con, buf_cstr(&b)) != 0) {
        *why = take_error_line();
    } else if ((made = 1) && v->comment) {
        buf_clear(&b);
        buf_puts(&b, "COMMENT ON VIEW ");
        quote_qualified(&b, lake->alias, sc->name, v->name);
        buf_puts(&b, " IS ");
        quote_literal(&b, v->comment);
        if (duck_exec(con, buf_cstr(&b)) != 0)
            tarn_error_clear();
    }
    buf_free(&b);
    return made;
}

/* The DuckDB view of a lake view that does not bind: it is there (listed,
 * as DuckLake lists it) and reading it fails with `why`, the binding's
 * error; its one column, LK_UNBOUND_COLUMN, is left out of column
 * listings, as DuckLake shows such a view without columns. */
static void unbound_view(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                         const lk_view *v, const char *why)
{
    lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, v->schema_id);
    if (!sc)
        return;
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE VIEW ");
    quote_qualified(&b, lake->alias, sc->name, v->name);
    buf_puts(&b, " AS SELECT e AS " LK_UNBOUND_COLUMN " FROM (SELECT error(");
    quote_literal(&b, why);
    buf_puts(&b, ") AS e)"); /* error() is volatile: it runs when read */
    if (duck_exec(con, buf_cstr(&b)) != 0)
        tarn_error_clear();
    buf_free(&b);
}

/* Every lake view of `cat`. A view may read one made after it: the views
 * that did not bind are tried again while a pass makes any; those that
 * never bind fail when read. */
static void create_lake_views(lk_lake *lake, duckdb_connection con, const lk_catalog *cat)
{
    size_t n = cat->nviews;
    char *done = xcalloc(n ? n : 1, 1);
    char **why = xcalloc(n ? n : 1, sizeof(char *));
    for (int progress = 1; progress;) {
        progress = 0;
        for (size_t i = 0; i < n; i++) {
            if (done[i])
                continue;
            free(why[i]);
            if (create_lake_view(lake, con, cat, &cat->views[i], &why[i])) {
                done[i] = 1;
                progress = 1;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!done[i])
            unbound_view(lake, con, cat, &cat->views[i], why[i] ? why[i] : "");
        free(why[i]);
    }
    free(why);
    free(done);
}

void lk_lake_set_view_rewriter(lk_lake *lake, duckdb_connection con, lk_view_rewriter fn, void *ctx)
{
    lake->view_rewrite = fn;
    lake->view_ctx = ctx;
    const lk_catalog *cat = lk_txn_catalog(lake);
    int again = 0;
    for (size_t i = 0; i < cat->nviews && !again; i++) {
        lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, cat->views[i].schema_id);
        char *query = NULL;
        int rewritten = 0;
        if (sc)
            lake_view_query(&query, &rewritten, lake, sc, &cat->views[i]);
        free(query);
        again = rewritten;
    }
    if (again)
        create_lake_views(lake, con, cat);
}

void lk_lake_views_forget(lk_lake *lake)
{
    for (size_t i = 0; i < lake->nmade; i++)
        free(lake->made_sql[i]);
    free(lake->made_ids);
    free(lake->made_sql);
    lake->made_ids = NULL;
    lake->made_sql = NULL;
    lake->nmade = 0;
}

/* The slot remembering table `id`'s view statement (made when absent). */
static char **made_slot(lk_lake *lake, int64_t id)
{
    for (size_t i = 0; i < lake->nmade; i++)
        if (lake->made_ids[i] == id)
            return &lake->made_sql[i];
    lake->made_ids = xrealloc(lake->made_ids, (lake->nmade + 1) * sizeof(int64_t));
    lake->made_sql = xrealloc(lake->made_sql, (lake->nmade + 1) * sizeof(char *));
    lake->made_ids[lake->nmade] = id;
    lake->made_sql[lake->nmade] = NULL;
    return &lake->made_sql[lake->nmade++];
}

/* What the view of `t` is made of besides its statement: its comments. */
static void comments_key(tarn_buf *b, const lk_table *t)
{
    buf_putc(b, '\n');
    quote_literal(b, t->comment);
    for (size_t i = 0; i < t->ncols; i++) {
        buf_putc(b, ',');
        quote_literal(b, t->cols[i].comment);
    }
}

int lk_lake_view_broken(const lk_lake *lake, int64_t table_id)
{
    for (size_t i = 0; i < lake->nbroken; i++)
        if (lake->broken_ids[i] == table_id)
            return 1;
    return 0;
}

/* Remembers (broken) or forgets that table `id`'s view is the failing one. */
static void mark_broken(lk_lake *lake, int64_t id, int broken)
{
    for (size_t i = 0; i < lake->nbroken; i++) {
        if (lake->broken_ids[i] == id) {
            if (!broken)
                lake->broken_ids[i] = lake->broken_ids[--lake->nbroken];
            return;
        }
    }
    if (!broken)
        return;
    lake->broken_ids = xrealloc(lake->broken_ids, (lake->nbroken + 1) * sizeof(int64_t));
    lake->broken_ids[lake->nbroken++] = id;
}

/* The view of a table whose files cannot be read (one missing, or not
 * Parquet): it has the table's columns, so the lake attaches, DESCRIBE
 * works and the table can be dropped or rebuilt, but reading a row fails
 * with `why` (DuckDB's message, which names the file). One broken file
 * breaks one table, not the lake. */
static int failing_view(lk_lake *lake, duckdb_connection con, const char *schema, const lk_table *t,
                        const char *msg);

static int broken_view(lk_lake *lake, duckdb_connection con, const char *schema, const lk_table *t,
                       const char *why)
{
    const char *kind = strstr(why, " Error: "); /* the read says "… Error:" itself */
    if (kind && kind - why < 24)
        why = kind + strlen(" Error: ");
    char *msg = xasprintf("table %s.%s cannot be read: %s", schema, t->name, why);
    int rc = failing_view(lake, con, schema, t, msg);
    free(msg);
    return rc;
}

/* A view with t's columns whose reading fails with `msg` (DuckDB's
 * error(): an Invalid Input Error). */
static int failing_view(lk_lake *lake, duckdb_connection con, const char *schema, const lk_table *t,
                        const char *msg)
{
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE VIEW ");
    quote_qualified(&b, lake->alias, schema, t->name);
    buf_puts(&b, " AS SELECT ");
    for (size_t i = 0; i < t->ncols; i++) {
        buf_puts(&b, i ? ", CAST(e AS " : "CAST(e AS "); /* a filter on it cannot fold away */
        lk_type_to_sql(&b, &t->cols[i]);
        buf_puts(&b, ") AS ");
        quote_ident(&b, t->cols[i].name);
    }
    buf_puts(&b, " FROM (SELECT error(");
    quote_literal(&b, msg);
    buf_puts(&b, ") AS e) WHERE e IS NULL"); /* error() is volatile: it runs when read */
    int rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

/* Whether the current error is about reading a table's data files. */
static int file_error(void)
{
    const char *m = tarn_error_last();
    return strstr(m, "IO Error") || strstr(m, "No magic bytes") || strstr(m, "parquet") ||
           strstr(m, "Parquet");
}

/* CREATE OR REPLACE VIEW alias.schema.table AS <its scan>; nothing when
 * the view already is that (a commit's view of a table written inside
 * BEGIN … COMMIT often reads the same files as the statement's). */
static int table_view(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                      const lk_table *t)
{
    lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, t->schema_id);
    if (!sc)
        return 0;
    if (lk_table_check_types(t) != 0) {
        /* a catalog row names a type DuckLake does not know: this table
         * fails when read, with DuckLake's error; the lake attaches */
        const char *kind = strstr(tarn_error_last(), " Error: ");
        char *msg = xstrdup(kind ? kind + strlen(" Error: ") : tarn_error_last());
        tarn_error_clear();
        char **made = made_slot(lake, t->id);
        free(*made);
        *made = NULL;
        int rc = failing_view(lake, con, sc->name, t, msg);
        free(msg);
        return rc;
    }
    char *scan = NULL;
    int rc = lk_scan_sql(&scan, lake, con, cat, t, -1, 0);
    if (rc)
        return rc;
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE VIEW ");
    quote_qualified(&b, lake->alias, sc->name, t->name);
    buf_puts(&b, " AS ");
    buf_puts(&b, scan);
    free(scan);
    size_t stmt_len = b.len;
    comments_key(&b, t);
    char **made = made_slot(lake, t->id);
    if (*made && strcmp(*made, buf_cstr(&b)) == 0) {
        buf_free(&b);
        return 0;
    }
    free(*made);
    *made = NULL;
    char *key = xstrdup(buf_cstr(&b));
    b.ptr[stmt_len] = '\0';
    rc = duck_exec(con, b.ptr);
    buf_free(&b);
    if (rc && t->ncols > 0 && file_error()) {
        char *why = xstrdup(tarn_error_last());
        tarn_error_clear();
        rc = broken_view(lake, con, sc->name, t, why);
        free(why);
        if (!rc) { /* not remembered as made: the next change rebuilds it for real */
            mark_broken(lake, t->id, 1);
            free(key);
            return comment_view(lake, con, sc->name, t);
        }
    }
    if (!rc) {
        mark_broken(lake, t->id, 0);
        rc = comment_view(lake, con, sc->name, t);
    }
    if (rc) {
        free(key);
        return tarn_error_prefix(rc, "building the view of %s.%s", sc->name, t->name);
    }
    *made_slot(lake, t->id) = key;
    return 0;
}

int lk_lake_refresh_table_view(lk_lake *lake, duckdb_connection con, int64_t table_id)
{
    const lk_catalog *cat = lk_txn_catalog(lake);
    const lk_table *t = lk_catalog_table_by_id(cat, table_id);
    return t ? table_view(lake, con, cat, t) : 0;
}

/* DROP VIEW IF EXISTS alias.schema.name (a table's view in the alias
 * database). */
static int drop_view_named(lk_lake *lake, duckdb_connection con, const char *schema,
                           const char *name)
{
    lk_lake_views_forget(lake);
    tarn_buf b = {0};
    buf_puts(&b, "DROP VIEW IF EXISTS ");
    quote_qualified(&b, lake->alias, schema, name);
    int rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static void drop_table_view(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                            const lk_table *t)
{
    lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, t->schema_id);
    if (sc && drop_view_named(lake, con, sc->name, t->name) != 0)
        tarn_error_clear();
}

/* CREATE SCHEMA IF NOT EXISTS alias.s for each schema of `cat` that `old`
 * does not have (a new lake schema has no tables yet, and so no views).
 * Matched by id: a schema dropped and made again in one transaction has
 * the old one's name but a new id, and its DuckDB schema went with the
 * drop. */
static int create_new_schemas(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                              const lk_catalog *old)
{
    int rc = 0;
    for (size_t i = 0; i < cat->nschemas && !rc; i++) {
        if (lk_catalog_schema_by_id((lk_catalog *)old, cat->schemas[i].id))
            continue;
        tarn_buf b = {0};
        buf_puts(&b, "CREATE SCHEMA IF NOT EXISTS ");
        quote_qualified(&b, lake->alias, NULL, cat->schemas[i].name);
        rc = duck_exec(con, buf_cstr(&b));
        buf_free(&b);
    }
    return rc;
}

int lk_lake_sync_statement_views(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    int rc = 0;
    if (txn->schemas_created && !txn->views_all)
        rc = create_new_schemas(lake, con, &txn->cat, &lake->cat);
    txn->schemas_created = 0;
    if (!rc && txn->views_all) {
        rc = lk_lake_refresh_views(lake, con);
    } else if (!rc) {
        const lk_catalog *cat = &txn->cat;
        for (size_t i = 0; i < txn->ndropped && !rc; i++) {
            const char *schema = txn->dropped[i], *name = schema + strlen(schema) + 1;
            lk_schema *sc = lk_catalog_schema((lk_catalog *)cat, schema);
            if (sc && lk_catalog_table(cat, sc->id, name))
                continue; /* replaced: its new view is built below */
            rc = drop_view_named(lake, con, schema, name);
        }
        for (size_t i = 0; i < txn->ndirty && !rc; i++)
            rc = lk_lake_refresh_table_view(lake, con, txn->dirty[i]);
    }
    for (size_t i = 0; i < txn->ndropped; i++)
        free(txn->dropped[i]);
    txn->ndropped = 0;
    txn->ndirty = 0;
    txn->views_all = 0;
    return rc;
}

int lk_lake_refresh_views(lk_lake *lake, duckdb_connection con)
{
    const lk_catalog *cat = lk_txn_catalog(lake);
    int rc = lk_scan_prefill(lake, con, cat);
    if (!rc)
        rc = drop_alias_objects(lake, con);
    tarn_buf b = {0};
    for (size_t i = 0; i < cat->nschemas && !rc; i++) {
        if (strcmp(cat->schemas[i].name, "main") == 0)
            continue;
        buf_clear(&b);
        buf_puts(&b, "CREATE SCHEMA ");
        quote_qualified(&b, lake->alias, NULL, cat->schemas[i].name);
        rc = duck_exec(con, buf_cstr(&b));
    }
    for (size_t i = 0; i < cat->ntables && !rc; i++)
        rc = table_view(lake, con, cat, &cat->tables[i]);
    if (!rc)
        create_lake_views(lake, con, cat);
    if (!rc)
        rc = create_macros(lake, con, cat);
    buf_free(&b);
    return rc;
}

static int64_t token_table_id(const lk_catalog *cat, const char *token)
{
    const char *colon = strchr(token, ':');
    if (!colon)
        return -1;
    if (colon[1] != '"')
        return strtoll(colon + 1, NULL, 10);
    /* created_table:"schema"."table" — names as written by quote_ident */
    for (size_t i = 0; i < cat->ntables; i++) {
        const lk_table *t = &cat->tables[i];
        lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, t->schema_id);
        if (!sc)
            continue;
        tarn_buf b = {0};
        quote_ident(&b, sc->name);
        buf_putc(&b, '.');
        quote_ident(&b, t->name);
        int same = strcmp(buf_cstr(&b), colon + 1) == 0;
        buf_free(&b);
        if (same)
            return t->id;
    }
    return -1;
}

int lk_lake_restore_views(lk_lake *lake, duckdb_connection con, const lk_catalog *working,
                          const int64_t *touched, size_t ntouched)
{
    const lk_catalog *cat = &lake->cat;
    int rc = 0;
    /* views of tables the transaction created (or took under a new name) */
    for (size_t i = 0; i < working->ntables; i++) {
        const lk_table *w = &working->tables[i];
        const lk_table *c = lk_catalog_table_by_id(cat, w->id);
        if (!c || strcmp(c->name, w->name) != 0 || c->schema_id != w->schema_id)
            drop_table_view(lake, con, working, w);
    }
    /* the committed tables it dropped, renamed, or showed pending rows of */
    for (size_t i = 0; i < cat->ntables && !rc; i++) {
        const lk_table *c = &cat->tables[i];
        const lk_table *w = lk_catalog_table_by_id(working, c->id);
        int redo = !w || strcmp(c->name, w->name) != 0 || c->schema_id != w->schema_id;
        for (size_t k = 0; k < ntouched && !redo; k++)
            redo = touched[k] == c->id;
        if (redo)
            rc = table_view(lake, con, cat, c);
    }
    return rc;
}

int lk_lake_sync_views(lk_lake *lake, duckdb_connection con, const lk_catalog *old,
                       char *const *tokens, size_t n, const int64_t *touched, size_t ntouched)
{
    static const char *const WHOLE[] = {
        "dropped_schema:",       "created_view:",         "altered_view:",
        "dropped_view:",         "created_scalar_macro:", "created_table_macro:",
        "dropped_scalar_macro:", "dropped_table_macro:"};
    const lk_catalog *cat = &lake->cat;
    int ddl = 0, new_schemas = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < sizeof(WHOLE) / sizeof(WHOLE[0]); k++)
            if (strncmp(tokens[i], WHOLE[k], strlen(WHOLE[k])) == 0)
                return lk_lake_refresh_views(lake, con);
        new_schemas |= strncmp(tokens[i], "created_schema:", 15) == 0;
        ddl |= strncmp(tokens[i], "created_table:", 14) == 0 ||
               strncmp(tokens[i], "dropped_table:", 14) == 0 ||
               strncmp(tokens[i], "altered_table:", 14) == 0;
    }
    if (new_schemas) {
        int rc = create_new_schemas(lake, con, cat, old);
        if (rc)
            return rc;
    }
    /* (a dropped lake view rebuilds them all: the views that read it stay,
     * as DuckLake keeps them, failing when read until it is back) */
    /* drops first: CREATE OR REPLACE TABLE ends one id and makes another
     * under the same name (whose view then replaces the dropped one) */
    int64_t *ids = NULL;
    size_t nids = 0;
    for (size_t i = 0; i < n; i++) {
        /* a rename is created_table with the new name: find its id there */
        int64_t id = token_table_id(old, tokens[i]);
        if (id < 0)
            id = token_table_id(cat, tokens[i]);
        const lk_table *was = id >= 0 ? lk_catalog_table_by_id(old, id) : NULL;
        const lk_table *now = id >= 0 ? lk_catalog_table_by_id(cat, id) : NULL;
        lk_schema *sc = was ? lk_catalog_schema_by_id((lk_catalog *)cat, was->schema_id) : NULL;
        int replaced = sc && !now && lk_catalog_table(cat, sc->id, was->name);
        if (was && !replaced && lk_ids_add(&ids, &nids, id) &&
            (!now || strcmp(was->name, now->name) != 0 || was->schema_id != now->schema_id))
            drop_table_view(lake, con, old, was);
    }
    nids = 0;
    /* then each changed table's view once: the tables named by the
     * changes and those whose views showed this transaction's pending
     * state (a view that reads the same as before costs no statement:
     * inlined inserts usually show through, as at the latest snapshot a
     * view reads every live inlined row) */
    for (size_t i = 0; i < n; i++) {
        int64_t id = token_table_id(cat, tokens[i]);
        if (id >= 0 && lk_catalog_table_by_id(cat, id))
            lk_ids_add(&ids, &nids, id);
    }
    for (size_t i = 0; i < ntouched; i++)
        if (lk_catalog_table_by_id(cat, touched[i]))
            lk_ids_add(&ids, &nids, touched[i]);
    int rc = 0;
    for (size_t i = 0; i < nids && !rc; i++)
        rc = table_view(lake, con, cat, lk_catalog_table_by_id(cat, ids[i]));
    free(ids);
    /* lake views bind to the tables' views: remake them after table DDL */
    if (ddl && !rc)
        create_lake_views(lake, con, cat);
    return rc;
}
