/*
 * session_dml.c — INSERT, DELETE and UPDATE on lake tables, and the CALL
 * procedures of DuckLake (ducklake_set_commit_message, ducklake_set_option).
 *
 * INSERT runs the user's own statement with its target replaced by the
 * insert stage, so every INSERT form DuckDB knows works unchanged. DELETE
 * and UPDATE select the affected rows from the table's identity scan with
 * the user's WHERE (and FROM/USING) clause; UPDATE computes the new images
 * from its SET list in the same query, then re-inserts them with their row
 * ids, as DuckLake does.
 */
#include "duck/duck.h"
#include "session/rewrite.h"
#include "lake/scan.h"
#include "session/session_int.h"
#include "lake/txn.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const lk_table *find_table(lk_lake *l, const char *schema, const char *name)
{
    lk_catalog *cat = (lk_catalog *)lk_txn_catalog(l);
    const lk_table *t = lk_catalog_table_named(cat, schema, name);
    if (!t)
        tarn_error_set(TARN_ENOTFOUND,
                       "Catalog Error: Table with name %s does not exist in schema \"%s\" of "
                       "lake \"%s\"",
                       name, schema, l->alias);
    return t;
}

/* Ends the statement's write (rc: how it went); when it committed, the
 * sink hears how many rows it changed. */
static int dml_write_end(tarn_session *s, lk_lake *l, int rc, const tarn_sink *sink, int64_t n)
{
    rc = session_write_end(s, l, rc);
    if (!rc && sink && sink->count)
        sink->count(sink->ctx, n);
    return rc;
}

static int starts_query(const sql_token *t)
{
    return sql_tok_is_kw(t, "SELECT") || sql_tok_is_kw(t, "FROM") || sql_tok_is_kw(t, "WITH");
}

/* INSERT INTO t <query> (no column list, BY NAME or VALUES) into a table
 * without NOT NULL columns can stream from the query (lk_insert_query). */
static int plain_query_insert(const sql_tokens *tk, const qname *q, const lk_table *t)
{
    size_t i = q->end;
    if (i >= tk->n)
        return 0;
    if (!(starts_query(&tk->toks[i]) ||
          (sql_tok_is_op(&tk->toks[i], "(") && i + 1 < tk->n && starts_query(&tk->toks[i + 1]))))
        return 0;
    for (size_t c = 0; c < t->ncols; c++)
        if (!t->cols[c].nulls_allowed)
            return 0;
    for (size_t k = i; k < tk->n; k++)
        if (sql_tok_is_kw(&tk->toks[k], "RETURNING"))
            return 0;
    return 1;
}

static int do_insert_query(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                           const qname *q, const lk_table *t, const tarn_sink *sink)
{
    int64_t table_id = t->id;
    char *query = session_token_text(tk, sql, q->end, tk->n);
    char *rewritten = NULL;
    int rc = rewrite_reads_now(&rewritten, s, query);
    free(query);
    if (rc)
        return rc;
    int64_t n = 0;
    rc = session_write_begin(s, l);
    if (!rc)
        rc = lk_insert_query(l, s->con, table_id, rewritten, &n);
    free(rewritten);
    return dml_write_end(s, l, rc, sink, n);
}

/* INSERT INTO t [(columns)] VALUES (…): one row, and nothing after it. */
static int one_values_row(const sql_tokens *tk, const qname *q)
{
    size_t i = q->end;
    if (i < tk->n && sql_tok_is_op(&tk->toks[i], "("))
        i = sql_tokens_close_paren(tk, i) + 1;
    if (i + 1 >= tk->n || !sql_tok_is_kw(&tk->toks[i], "VALUES") ||
        !sql_tok_is_op(&tk->toks[i + 1], "("))
        return 0;
    return sql_tokens_close_paren(tk, i + 1) + 1 == tk->n;
}

/* Runs the stage INSERT `sql`. One VALUES row returns its own column
 * statistics (lk_insert_returning: one DuckDB statement fewer per
 * autocommit INSERT); else DuckDB counts the rows a plain INSERT adds (a
 * RETURNING clause of the user's makes it a query: then the stage is
 * counted). */
static int insert_into_stage(tarn_session *s, lk_lake *l, const sql_tokens *tk, const qname *q,
                             int64_t table_id, const char *sql, int64_t *n)
{
    char *list = one_values_row(tk, q) ? lk_insert_returning(l, table_id) : NULL;
    int rc;
    if (list) {
        char *stmt = xasprintf("%s RETURNING %s", sql, list);
        duck_table r;
        rc = duck_table_query_stmt(&r, s->con, stmt);
        free(stmt);
        if (!rc) {
            rc = lk_insert_stage_returned(l, s->con, table_id, &r, n);
            duck_table_free(&r);
        }
        free(list);
        return rc;
    }
    int64_t added = -1;
    int returning = 0;
    for (size_t i = q->end; i < tk->n; i++)
        returning |= sql_tok_is_kw(&tk->toks[i], "RETURNING");
    rc = duck_exec_count(s->con, sql, returning ? NULL : &added);
    return rc ? rc : lk_insert_stage_known(l, s->con, table_id, added, n);
}

/* INSERT [OR …] INTO target … */
static int do_insert(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                     const qname *q, const lk_table *t, const tarn_sink *sink)
{
    int64_t table_id = t->id;
    tarn_buf b = {0};
    buf_append(&b, sql, tk->toks[q->start].start);
    buf_puts(&b, lk_stage_name());
    const sql_token *last = &tk->toks[q->end - 1], *end = &tk->toks[tk->n - 1];
    /* up to the last token: a RETURNING list may follow */
    buf_append(&b, sql + last->start + last->len,
               (size_t)(end->start + end->len - (last->start + last->len)));
    char *rewritten = NULL;
    int rc = rewrite_reads(&rewritten, s, buf_cstr(&b));
    buf_free(&b);
    if (rc)
        return rc;
    rc = session_write_begin(s, l);
    if (!rc) {
        t = lk_catalog_table_by_id(&l->txn->cat, table_id);
        rc = lk_stage_create(l, s->con, t, 0);
    }
    int64_t n = 0;
    if (!rc) {
        rc = insert_into_stage(s, l, tk, q, table_id, rewritten, &n);
        if (rc) {
            /* DuckDB's message speaks of the stage; the user wrote the table */
            char *name = session_token_text(tk, sql, q->start, q->end);
            tarn_error_replace("temp.main.__tarn_stage", name);
            tarn_error_replace("__tarn_stage", name);
            free(name);
        }
    }
    free(rewritten);
    return dml_write_end(s, l, rc, sink, n);
}

/* The alias after the target, if any: [AS] name. Advances *i past it. */
static const char *read_alias(const sql_tokens *tk, size_t *i)
{
    static const char *const STOP[] = {"WHERE", "SET", "USING", "FROM", "RETURNING"};
    if (*i < tk->n && sql_tok_is_kw(&tk->toks[*i], "AS") && *i + 1 < tk->n) {
        *i += 2;
        return tk->toks[*i - 1].text;
    }
    if (*i < tk->n && (tk->toks[*i].type == SQL_TOK_IDENT || tk->toks[*i].type == SQL_TOK_QIDENT)) {
        for (size_t k = 0; k < sizeof(STOP) / sizeof(STOP[0]); k++)
            if (sql_tok_is_kw(&tk->toks[*i], STOP[k]))
                return NULL;
        (*i)++;
        return tk->toks[*i - 1].text;
    }
    return NULL;
}

/* FROM (identity scan) AS alias, rewritten from the rest of the statement
 * (USING becomes a comma: DELETE … USING x is a join with x). */
/* alias.__tarn_fid, alias.__tarn_pos: the row's place, qualified so that
 * the tables of a FROM / USING list cannot make it ambiguous. */
static void qualified_identity(tarn_buf *m, const char *alias)
{
    quote_ident(m, alias);
    buf_puts(m, ".__tarn_fid, ");
    quote_ident(m, alias);
    buf_puts(m, ".__tarn_pos");
}

static int match_from(tarn_buf *b, tarn_session *s, lk_lake *l, const lk_table *t,
                      const char *alias, const char *rest)
{
    char *scan = NULL;
    int rc = lk_scan_sql(&scan, l, s->con, lk_txn_catalog(l), t, -1, LK_SCAN_IDENTITY);
    if (rc)
        return rc;
    buf_printf(b, " FROM (%s) AS ", scan);
    quote_ident(b, alias);
    free(scan);
    char *rw = NULL;
    rc = rewrite_reads(&rw, s, rest);
    if (rc)
        return rc;
    buf_putc(b, ' ');
    buf_puts(b, rw);
    free(rw);
    return 0;
}

static int do_delete(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                     const qname *q, const lk_table *t, const tarn_sink *sink)
{
    size_t i = q->end;
    const char *alias = read_alias(tk, &i);
    int64_t table_id = t->id;
    tarn_buf rest = {0};
    if (i < tk->n && sql_tok_is_kw(&tk->toks[i], "USING")) {
        buf_puts(&rest, ", ");
        i++;
    }
    char *tail = session_token_text(tk, sql, i, tk->n);
    buf_puts(&rest, tail);
    free(tail);
    if (strstr(buf_cstr(&rest), "RETURNING") || strstr(buf_cstr(&rest), "returning")) {
        buf_free(&rest);
        return tarn_error_set(TARN_EUNSUPPORTED, "DELETE … RETURNING on a lake table is not "
                                                 "supported yet");
    }
    int rc = session_write_begin(s, l);
    tarn_buf m = {0};
    if (!rc) {
        t = lk_catalog_table_by_id(&l->txn->cat, table_id);
        /* USING may match a row several times: it is deleted once */
        const char *al = alias ? alias : t->name;
        buf_puts(&m, "SELECT DISTINCT ");
        qualified_identity(&m, al);
        rc = match_from(&m, s, l, t, al, buf_cstr(&rest));
    }
    int64_t n = 0;
    if (!rc)
        rc = lk_delete_matching(l, s->con, table_id, buf_cstr(&m), &n);
    buf_free(&m);
    buf_free(&rest);
    return dml_write_end(s, l, rc, sink, n);
}

typedef struct {
    char *column;
    char *expr;
} assignment;

/* Parses "col = expr, …" from token i up to FROM / WHERE / end. */
static int read_assignments(const sql_tokens *tk, const char *sql, size_t *i, assignment **out,
                            size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t k = *i;
    while (k < tk->n) {
        if (tk->toks[k].type != SQL_TOK_IDENT && tk->toks[k].type != SQL_TOK_QIDENT)
            return tarn_error_set(TARN_EINVALID, "UPDATE: expected a column name after SET");
        const char *col = tk->toks[k].text;
        k++;
        if (k >= tk->n || !sql_tok_is_op(&tk->toks[k], "="))
            return tarn_error_set(TARN_EINVALID, "UPDATE: expected '=' after SET %s", col);
        size_t from = ++k;
        int depth = 0;
        while (k < tk->n) {
            const sql_token *t = &tk->toks[k];
            if (sql_tok_is_op(t, "(") || sql_tok_is_op(t, "[") || sql_tok_is_op(t, "{"))
                depth++;
            else if (sql_tok_is_op(t, ")") || sql_tok_is_op(t, "]") || sql_tok_is_op(t, "}"))
                depth--;
            else if (depth == 0 && (sql_tok_is_op(t, ",") || sql_tok_is_kw(t, "FROM") ||
                                    sql_tok_is_kw(t, "WHERE") || sql_tok_is_kw(t, "RETURNING")))
                break;
            k++;
        }
        *out = xrealloc(*out, (*n + 1) * sizeof(assignment));
        (*out)[*n].column = xstrdup(col);
        (*out)[*n].expr = session_token_text(tk, sql, from, k);
        (*n)++;
        if (k < tk->n && sql_tok_is_op(&tk->toks[k], ",")) {
            k++;
            continue;
        }
        break;
    }
    *i = k;
    return 0;
}

static void free_assignments(assignment *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(a[i].column);
        free(a[i].expr);
    }
    free(a);
}

static int build_update_select(tarn_buf *m, const lk_table *t, const char *alias,
                               const assignment *a, size_t na)
{
    for (size_t k = 0; k < na; k++) {
        size_t c = 0;
        while (c < t->ncols && strcasecmp(t->cols[c].name, a[k].column) != 0)
            c++;
        if (c == t->ncols)
            return tarn_error_set(TARN_EINVALID,
                                  "Binder Error: Referenced update column %s not found in table",
                                  a[k].column);
    }
    /* a row a FROM list matches several times is updated once (DuckDB
     * takes one of the matches too) */
    buf_puts(m, "SELECT DISTINCT ON (");
    qualified_identity(m, alias);
    buf_puts(m, ") ");
    qualified_identity(m, alias);
    buf_puts(m, ", ");
    quote_ident(m, alias);
    buf_puts(m, ".rowid AS __tarn_rowid");
    for (size_t c = 0; c < t->ncols; c++) {
        buf_puts(m, ", ");
        const char *expr = NULL;
        for (size_t k = 0; k < na; k++)
            if (strcasecmp(t->cols[c].name, a[k].column) == 0)
                expr = a[k].expr;
        if (expr) {
            buf_printf(m, "(%s)", expr);
        } else {
            quote_ident(m, alias);
            buf_putc(m, '.');
            quote_ident(m, t->cols[c].name);
        }
        buf_puts(m, " AS ");
        quote_ident(m, t->cols[c].name);
    }
    return 0;
}

static int stage_from_match(duckdb_connection con, const lk_table *t)
{
    tarn_buf b = {0};
    buf_printf(&b, "INSERT INTO %s SELECT ", lk_stage_name());
    for (size_t c = 0; c < t->ncols; c++) {
        quote_ident(&b, t->cols[c].name);
        buf_puts(&b, ", ");
    }
    buf_puts(&b, "__tarn_rowid FROM temp.main.__tarn_match ORDER BY __tarn_rowid");
    int rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static int do_update(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                     const qname *q, const lk_table *t, const tarn_sink *sink)
{
    size_t i = q->end;
    const char *alias = read_alias(tk, &i);
    if (i >= tk->n || !sql_tok_is_kw(&tk->toks[i], "SET"))
        return tarn_error_set(TARN_EINVALID, "UPDATE: expected SET");
    i++;
    assignment *a = NULL;
    size_t na = 0;
    int rc = read_assignments(tk, sql, &i, &a, &na);
    int64_t table_id = t->id;
    char *tail = session_token_text(tk, sql, i, tk->n);
    tarn_buf rest = {0};
    if (i < tk->n && sql_tok_is_kw(&tk->toks[i], "FROM"))
        buf_printf(&rest, ", %s", tail + 4);
    else
        buf_puts(&rest, tail);
    free(tail);
    if (!rc)
        rc = session_write_begin(s, l);
    tarn_buf m = {0};
    if (!rc) {
        t = lk_catalog_table_by_id(&l->txn->cat, table_id);
        rc = build_update_select(&m, t, alias ? alias : t->name, a, na);
    }
    if (!rc)
        rc = match_from(&m, s, l, t, alias ? alias : t->name, buf_cstr(&rest));
    int64_t n = 0, inserted = 0;
    if (!rc)
        rc = lk_delete_matching(l, s->con, table_id, buf_cstr(&m), &n);
    if (!rc && n > 0) {
        rc = lk_stage_create(l, s->con, t, 1);
        if (!rc)
            rc = stage_from_match(s->con, t);
        if (!rc)
            rc = lk_insert_stage(l, s->con, table_id, &inserted);
    }
    free_assignments(a, na);
    buf_free(&m);
    buf_free(&rest);
    return dml_write_end(s, l, rc, sink, n);
}

/* COPY q [(columns)] FROM …: whether this COPY loads into q. */
static int copy_from(const sql_tokens *tk, const qname *q)
{
    size_t i = q->end;
    if (i < tk->n && sql_tok_is_op(&tk->toks[i], "("))
        i = sql_tokens_close_paren(tk, i) + 1;
    return i < tk->n && sql_tok_is_kw(&tk->toks[i], "FROM");
}

int session_dml_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                     const tarn_sink *sink, int *handled)
{
    size_t i = 1;
    if (strcmp(kw, "INSERT") == 0) {
        while (i < tk->n && !sql_tok_is_kw(&tk->toks[i], "INTO"))
            i++;
        i++;
    } else if (strcmp(kw, "DELETE") == 0) {
        if (i < tk->n && sql_tok_is_kw(&tk->toks[i], "FROM"))
            i++;
    } else if (strcmp(kw, "TRUNCATE") == 0) {
        if (i < tk->n && sql_tok_is_kw(&tk->toks[i], "TABLE"))
            i++;
    } else if (strcmp(kw, "MERGE") == 0) {
        if (i < tk->n && sql_tok_is_kw(&tk->toks[i], "INTO"))
            i++;
    }
    qname q;
    const char *schema = NULL, *name = NULL;
    if (i >= tk->n || !session_qname(tk, i, &q))
        return 0;
    lk_lake *l = session_resolve(s, &q, &schema, &name, 0);
    if (!l)
        return 0;
    if (strcmp(kw, "COPY") == 0 && !copy_from(tk, &q))
        return 0; /* COPY lake.t TO …: a read */
    *handled = 1;
    const lk_table *t = find_table(l, schema, name);
    if (!t)
        return TARN_ENOTFOUND;
    if (l->read_only)
        return tarn_error_set(TARN_EINVALID,
                              "lake \"%s\" is attached read-only (READ_ONLY or a pinned "
                              "SNAPSHOT_VERSION): it cannot be written",
                              l->alias);
    if (strcmp(kw, "MERGE") == 0)
        return session_merge_stmt(s, l, tk, sql, &q, t, sink);
    if (strcmp(kw, "INSERT") == 0 && plain_query_insert(tk, &q, t))
        return do_insert_query(s, l, tk, sql, &q, t, sink);
    /* COPY lake.t FROM …: DuckDB loads the file into the stage, as for an
     * INSERT */
    if (strcmp(kw, "INSERT") == 0 || strcmp(kw, "COPY") == 0)
        return do_insert(s, l, tk, sql, &q, t, sink);
    if (strcmp(kw, "TRUNCATE") == 0 && q.end < tk->n)
        return tarn_error_set(TARN_EINVALID, "TRUNCATE takes one table name and nothing else");
    if (strcmp(kw, "DELETE") == 0 || strcmp(kw, "TRUNCATE") == 0)
        return do_delete(s, l, tk, sql, &q, t, sink);
    return do_update(s, l, tk, sql, &q, t, sink);
}
