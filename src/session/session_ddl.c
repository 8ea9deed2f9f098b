/*
 * session_ddl.c — CREATE/DROP SCHEMA and TABLE statements on a lake, and
 * the refusal of lake DDL tarn does not implement yet.
 *
 * CREATE TABLE t (…) lets DuckDB parse the column list by creating a TEMP
 * table of the same shape (types, defaults, NOT NULL), which ddl.c then
 * turns into DuckLake columns. CREATE TABLE t AS query materializes the
 * query into the insert stage once: its columns give the table's shape and
 * its rows are the table's first insert, in the same snapshot.
 */
#include "duck/duck.h"
#include "lake/bucket.h"
#include "lake/ddl.h"
#include "session/rewrite.h"
#include "session/session_int.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "util/quote.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SHAPE "temp.main.__tarn_shape"

typedef struct {
    int or_replace, temp, if_not_exists, if_exists, cascade;
    size_t i;           /* token index after the object keyword and IF [NOT] EXISTS */
    const char *object; /* TABLE, SCHEMA, VIEW, … (token text) */
} ddl_head;

static void read_head(const sql_tokens *tk, ddl_head *h)
{
    memset(h, 0, sizeof(*h));
    size_t i = 1;
    if (i + 1 < tk->n && sql_tok_is_kw(&tk->toks[i], "OR") &&
        sql_tok_is_kw(&tk->toks[i + 1], "REPLACE")) {
        h->or_replace = 1;
        i += 2;
    }
    if (i < tk->n &&
        (sql_tok_is_kw(&tk->toks[i], "TEMP") || sql_tok_is_kw(&tk->toks[i], "TEMPORARY"))) {
        h->temp = 1;
        i++;
    }
    if (i < tk->n)
        h->object = tk->toks[i++].text;
    if (i + 2 < tk->n && sql_tok_is_kw(&tk->toks[i], "IF") &&
        sql_tok_is_kw(&tk->toks[i + 1], "NOT") && sql_tok_is_kw(&tk->toks[i + 2], "EXISTS")) {
        h->if_not_exists = 1;
        i += 3;
    } else if (i + 1 < tk->n && sql_tok_is_kw(&tk->toks[i], "IF") &&
               sql_tok_is_kw(&tk->toks[i + 1], "EXISTS")) {
        h->if_exists = 1;
        i += 2;
    }
    h->i = i;
}

static int kw_at(const sql_tokens *tk, size_t i, const char *kw)
{
    return i < tk->n && sql_tok_is_kw(&tk->toks[i], kw);
}

static int has_kw_after(const sql_tokens *tk, size_t i, const char *kw)
{
    for (; i < tk->n; i++)
        if (sql_tok_is_kw(&tk->toks[i], kw))
            return 1;
    return 0;
}

static int create_schema(tarn_session *s, lk_lake *l, const char *schema, const ddl_head *h)
{
    int rc = session_write_begin(s, l);
    if (!rc)
        rc = lk_create_schema(l, s->con, schema, h->if_not_exists);
    return session_write_end(s, l, rc);
}

static int drop_schema(tarn_session *s, lk_lake *l, const char *schema, const ddl_head *h,
                       int cascade)
{
    int rc = session_write_begin(s, l);
    if (!rc)
        rc = lk_drop_schema(l, s->con, schema, h->if_exists, cascade);
    return session_write_end(s, l, rc);
}

/* DROP TABLE / DROP VIEW (is_view): refused when the name is the other
 * kind of entry, else one write. */
static int drop_entry(tarn_session *s, lk_lake *l, const char *schema, const char *name,
                      const ddl_head *h, int is_view)
{
    int rc = lk_entry_conflict(l, schema, name, is_view, "drop");
    if (rc)
        return rc;
    rc = session_write_begin(s, l);
    if (!rc)
        rc = is_view ? lk_drop_view(l, schema, name, h->if_exists)
                     : lk_drop_table(l, s->con, schema, name, h->if_exists);
    return session_write_end(s, l, rc);
}

static int table_exists(lk_lake *l, const char *schema, const char *name)
{
    lk_catalog *cat = (lk_catalog *)lk_txn_catalog(l);
    return lk_catalog_table_named(cat, schema, name) != NULL;
}

static int view_exists(lk_lake *l, const char *schema, const char *name)
{
    lk_catalog *cat = (lk_catalog *)lk_txn_catalog(l);
    lk_schema *sc = lk_catalog_schema(cat, schema);
    return sc && lk_catalog_view(cat, sc->id, name) != NULL;
}

/* ALTER VIEW [IF EXISTS] name RENAME TO new_name */
static int alter_view(tarn_session *s, lk_lake *l, const sql_tokens *tk, const ddl_head *h,
                      const qname *q, const char *schema, const char *name)
{
    size_t i = q->end;
    if (!kw_at(tk, i, "RENAME") || !kw_at(tk, i + 1, "TO") || i + 2 >= tk->n)
        return tarn_error_set(TARN_EUNSUPPORTED,
                              "ALTER VIEW on lake \"%s\": only RENAME TO is supported", l->alias);
    if (h->if_exists && !view_exists(l, schema, name))
        return 0;
    int rc = session_write_begin(s, l);
    if (!rc)
        rc = lk_rename_view(l, schema, name, tk->toks[i + 2].text);
    return session_write_end(s, l, rc);
}

/* CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name (…) | AS query */
/* A column list's `USING COMPRESSION codec` (tokens from..to): DuckDB keeps
 * it out of the table's SQL, and DuckLake refuses it, its data files being
 * written with the lake's parquet_compression option instead. */
static int refuse_column_compression(const sql_tokens *tk, size_t from, size_t to)
{
    for (size_t i = from; i + 1 < to; i++)
        if (sql_tok_is_kw(&tk->toks[i], "USING") && sql_tok_is_kw(&tk->toks[i + 1], "COMPRESSION"))
            return tarn_error_set(TARN_EUNSUPPORTED,
                                  "Not implemented Error: Defining a compression type for a "
                                  "column is not supported in DuckLake");
    return 0;
}

static int create_table(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                        const ddl_head *h, const qname *q, const char *schema, const char *name,
                        const tarn_sink *sink)
{
    int is_ctas = q->end < tk->n && sql_tok_is_kw(&tk->toks[q->end], "AS");
    if ((table_exists(l, schema, name) || view_exists(l, schema, name)) && h->if_not_exists) {
        if (is_ctas && sink && sink->count)
            sink->count(sink->ctx, 0);
        return 0;
    }
    /* CREATE TABLE … AS query WITH [NO] DATA: the clause ends the
     * statement; WITH NO DATA creates the table without its rows */
    size_t end = tk->n;
    int no_data = 0;
    if (is_ctas && end >= 3 && sql_tok_is_kw(&tk->toks[end - 1], "DATA") &&
        sql_tok_is_kw(&tk->toks[end - 2], "NO") && sql_tok_is_kw(&tk->toks[end - 3], "WITH")) {
        no_data = 1;
        end -= 3;
    } else if (is_ctas && end >= 2 && sql_tok_is_kw(&tk->toks[end - 1], "DATA") &&
               sql_tok_is_kw(&tk->toks[end - 2], "WITH")) {
        end -= 2;
    }
    int rc = h->or_replace ? lk_entry_conflict(l, schema, name, 0, "replace with") : 0;
    if (!rc && !is_ctas)
        rc = refuse_column_compression(tk, q->end, end);
    if (rc)
        return rc;
    char *rest = session_token_text(tk, sql, is_ctas ? q->end + 1 : q->end, end);
    char *body = NULL;
    if (is_ctas) {
        /* the query's columns give the shape; LIMIT 0 binds it without
         * running it */
        rc = rewrite_reads(&body, s, rest);
        if (!rc) {
            char *ddl = xasprintf("CREATE OR REPLACE TEMP TABLE __tarn_shape AS SELECT * FROM "
                                  "(%s) LIMIT 0",
                                  body);
            rc = duck_exec(s->con, ddl);
            free(ddl);
        }
    } else {
        char *ddl = xasprintf("CREATE OR REPLACE TEMP TABLE __tarn_shape %s", rest);
        rc = duck_exec(s->con, ddl);
        free(ddl);
    }
    free(rest);
    if (rc) {
        free(body);
        return rc;
    }
    rc = session_write_begin(s, l);
    if (!rc && h->or_replace && table_exists(l, schema, name))
        rc = lk_drop_table(l, s->con, schema, name, 0);
    int64_t table_id = -1, count = 0;
    if (!rc)
        rc = lk_create_table(l, s->con, schema, name, SHAPE, &table_id);
    if (!rc && is_ctas && !no_data)
        rc = lk_insert_query(l, s->con, table_id, body, &count);
    free(body);
    rc = session_write_end(s, l, rc);
    if (!rc && is_ctas && sink && sink->count)
        sink->count(sink->ctx, count);
    return rc;
}

static int make_shape(tarn_session *s, const char *coldef)
{
    char *ddl = xasprintf("CREATE OR REPLACE TEMP TABLE __tarn_shape (%s)", coldef);
    int rc = duck_exec(s->con, ddl);
    free(ddl);
    return rc;
}

/* An added column's definition: its shape, refusing constraints (NOT NULL,
 * UNIQUE, CHECK, …) as DuckDB and DuckLake do: the rows already in the
 * table would break them at once (a NOT NULL column of NULLs). */
static int make_added_shape(tarn_session *s, const char *coldef)
{
    int rc = make_shape(s, coldef);
    int64_t n = 0;
    if (!rc)
        rc = duck_query_int64(&n, NULL, s->con,
                              "SELECT count(*) FROM duckdb_constraints() WHERE database_name = "
                              "'temp' AND table_name = '__tarn_shape'");
    if (!rc && n > 0)
        rc = tarn_error_set(TARN_EUNSUPPORTED,
                            "Parser Error: Adding columns with constraints not yet supported");
    return rc;
}

/* SET DEFAULT needs the column's current type to parse the default. */
static int default_shape(tarn_session *s, lk_lake *l, const char *schema, const char *name,
                         const char *column, const char *expr)
{
    lk_catalog *cat = (lk_catalog *)lk_txn_catalog(l);
    const lk_table *t = lk_catalog_table_named(cat, schema, name);
    const lk_column *c = NULL;
    for (size_t i = 0; t && i < t->ncols; i++)
        if (strcasecmp(t->cols[i].name, column) == 0)
            c = &t->cols[i];
    if (!c)
        return tarn_error_set(TARN_EINVALID,
                              "Binder Error: Table \"%s\" does not have a column "
                              "with name \"%s\"",
                              name, column);
    tarn_buf b = {0};
    quote_ident(&b, c->name);
    buf_putc(&b, ' ');
    lk_type_to_sql(&b, c);
    buf_printf(&b, " DEFAULT %s", expr);
    int rc = make_shape(s, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

/* ALTER [COLUMN] c <action> starting at token i (after the column). */
static int parse_alter_column(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                              size_t i, const char *schema, const char *name, lk_alter *op)
{
    if (kw_at(tk, i, "SET") && kw_at(tk, i + 1, "DATA") && kw_at(tk, i + 2, "TYPE"))
        i += 3;
    else if (kw_at(tk, i, "SET") && kw_at(tk, i + 1, "TYPE")) /* DuckDB's other spelling */
        i += 2;
    else if (kw_at(tk, i, "TYPE"))
        i += 1;
    else if (kw_at(tk, i, "SET") && kw_at(tk, i + 1, "DEFAULT")) {
        op->kind = LK_ALTER_SET_DEFAULT;
        op->shape = SHAPE;
        char *expr = session_token_text(tk, sql, i + 2, tk->n);
        int rc = default_shape(s, l, schema, name, op->column, expr);
        free(expr);
        return rc;
    } else if (kw_at(tk, i, "DROP") && kw_at(tk, i + 1, "DEFAULT")) {
        op->kind = LK_ALTER_DROP_DEFAULT;
        return 0;
    } else if (kw_at(tk, i, "SET") && kw_at(tk, i + 1, "NOT") && kw_at(tk, i + 2, "NULL")) {
        op->kind = LK_ALTER_SET_NOT_NULL;
        return 0;
    } else if (kw_at(tk, i, "DROP") && kw_at(tk, i + 1, "NOT") && kw_at(tk, i + 2, "NULL")) {
        op->kind = LK_ALTER_DROP_NOT_NULL;
        return 0;
    } else {
        return tarn_error_set(TARN_EUNSUPPORTED, "ALTER COLUMN: unsupported action");
    }
    for (size_t k = i; k < tk->n; k++)
        if (sql_tok_is_kw(&tk->toks[k], "USING"))
            return tarn_error_set(TARN_EUNSUPPORTED,
                                  "ALTER COLUMN … TYPE … USING is not supported on a lake: "
                                  "DuckLake only widens types in place");
    op->kind = LK_ALTER_SET_TYPE;
    op->shape = SHAPE;
    char *type = session_token_text(tk, sql, i, tk->n);
    char *def = xasprintf("x %s", type);
    int rc = make_shape(s, def);
    free(def);
    free(type);
    return rc;
}

/* bucket(N, col) at *i (the name): the column and "bucket(N)", *i moved
 * past the closing parenthesis. The errors are DuckLake's. */
static int parse_bucket_key(const sql_tokens *tk, size_t *i, char **col, char **transform)
{
    static const char EXPECTED[] = "Expected bucket(bucket_count, column)";
    size_t j = *i + 2, close = j;
    int depth = 0, args = 1;
    for (; close < tk->n && !(depth == 0 && sql_tokens_is_op(tk, close, ")")); close++) {
        depth += sql_tokens_is_op(tk, close, "(") - sql_tokens_is_op(tk, close, ")");
        args += depth == 0 && sql_tokens_is_op(tk, close, ",");
    }
    if (close >= tk->n || args != 2)
        return tarn_error_set(TARN_EINVALID, "%s", EXPECTED);
    /* the count: one token, or a sign and a number */
    char count[64];
    size_t c = j + (sql_tokens_is_op(tk, j, "-") || sql_tokens_is_op(tk, j, "+"));
    const sql_token *num = &tk->toks[c];
    int constant = num->type == SQL_TOK_NUMBER || (num->type == SQL_TOK_STRING && c == j);
    if (!constant || !sql_tokens_is_op(tk, c + 1, ","))
        return tarn_error_set(TARN_EINVALID, "Bucket count must be a constant integer");
    snprintf(count, sizeof(count), "%s%s", c != j ? tk->toks[j].text : "", num->text);
    const sql_token *name = &tk->toks[c + 2];
    if (c + 3 != close || (name->type != SQL_TOK_IDENT && name->type != SQL_TOK_QIDENT))
        return tarn_error_set(TARN_EINVALID, "%s", EXPECTED);
    int32_t buckets = 0;
    int rc = lk_bucket_check_count(count, &buckets);
    if (rc)
        return rc;
    *transform = xasprintf("bucket(%d)", (int)buckets);
    *col = xstrdup(name->text);
    *i = close + 1;
    return 0;
}

/* Keys of SET PARTITIONED BY (k, …): col, year(col), month(col), day(col),
 * hour(col) or bucket(N, col). The strings live in static storage until
 * the next call (one ALTER at a time). */
static int parse_partition_keys(const sql_tokens *tk, size_t i, lk_alter *op)
{
    static char *cols[32], *transforms[32];
    for (size_t k = 0; k < 32; k++) {
        free(cols[k]);
        free(transforms[k]);
        cols[k] = transforms[k] = NULL;
    }
    op->kind = LK_ALTER_SET_PARTITION;
    op->key_columns = (const char *const *)cols;
    op->key_transforms = (const char *const *)transforms;
    if (i >= tk->n || tk->toks[i].type != SQL_TOK_OP || strcmp(tk->toks[i].text, "(") != 0)
        return tarn_error_set(TARN_EINVALID, "SET PARTITIONED BY: expected (key, …)");
    i++;
    size_t n = 0;
    while (i < tk->n && n < 32) {
        const sql_token *t = &tk->toks[i];
        if (t->type == SQL_TOK_OP && strcmp(t->text, ")") == 0)
            break;
        if (t->type == SQL_TOK_OP && strcmp(t->text, ",") == 0) {
            i++;
            continue;
        }
        int call = i + 1 < tk->n && tk->toks[i + 1].type == SQL_TOK_OP &&
                   strcmp(tk->toks[i + 1].text, "(") == 0;
        if (!call) {
            cols[n] = xstrdup(t->text);
            transforms[n++] = xstrdup("identity");
            i++;
            continue;
        }
        const char *fn = t->text;
        if (strcasecmp(fn, "bucket") == 0) {
            int rc = parse_bucket_key(tk, &i, &cols[n], &transforms[n]);
            if (rc)
                return rc;
            n++;
        } else if ((strcasecmp(fn, "year") == 0 || strcasecmp(fn, "month") == 0 ||
                    strcasecmp(fn, "day") == 0 || strcasecmp(fn, "hour") == 0) &&
                   i + 3 < tk->n) {
            transforms[n] = xstrdup(fn);
            for (char *p = transforms[n]; *p; p++)
                *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
            cols[n++] = xstrdup(tk->toks[i + 2].text);
            i += 4;
        } else {
            return tarn_error_set(TARN_EINVALID,
                                  "SET PARTITIONED BY: unsupported key %s(…); use a column, "
                                  "year/month/day/hour(column) or bucket(N, column)",
                                  fn);
        }
    }
    op->nkeys = n;
    return 0;
}

/* One key of SET SORTED BY, tokens [from, to): the expression, then
 * [ASC | DESC] [NULLS FIRST | NULLS LAST]. */
static int parse_sort_key(const sql_tokens *tk, const char *sql, size_t from, size_t to,
                          lk_sortkey *k)
{
    k->nulls_first = -1;
    if (to >= from + 3 && kw_at(tk, to - 2, "NULLS") &&
        (kw_at(tk, to - 1, "FIRST") || kw_at(tk, to - 1, "LAST"))) {
        k->nulls_first = kw_at(tk, to - 1, "FIRST");
        to -= 2;
    }
    if (to >= from + 2 && (kw_at(tk, to - 1, "ASC") || kw_at(tk, to - 1, "DESC"))) {
        k->desc = kw_at(tk, to - 1, "DESC");
        to--;
    }
    if (to <= from)
        return tarn_error_set(TARN_EINVALID, "SET SORTED BY: expected an expression");
    k->expr = session_token_text(tk, sql, from, to);
    return 0;
}

/* Keys of SET SORTED BY (key, …), split at top-level commas. The keys
 * live in static storage until the next call (one ALTER at a time). */
static int parse_sort_keys(const sql_tokens *tk, const char *sql, size_t i, lk_alter *op)
{
    static lk_sortkey keys[64];
    static size_t nkeys;
    for (size_t k = 0; k < nkeys; k++)
        free(keys[k].expr);
    memset(keys, 0, sizeof(keys));
    nkeys = 0;
    op->kind = LK_ALTER_SET_SORT;
    op->sort_keys = keys;
    if (!sql_tokens_is_op(tk, i, "("))
        return tarn_error_set(TARN_EINVALID, "SET SORTED BY: expected (expression, …)");
    size_t start = ++i;
    int depth = 0;
    for (; i < tk->n; i++) {
        int close = sql_tokens_is_op(tk, i, ")") || sql_tokens_is_op(tk, i, "]");
        if (close && depth == 0) {
            break;
        } else if (sql_tokens_is_op(tk, i, "(") || sql_tokens_is_op(tk, i, "[")) {
            depth++;
        } else if (close) {
            depth--;
        } else if (depth == 0 && sql_tokens_is_op(tk, i, ",")) {
            if (nkeys == 64)
                return tarn_error_set(TARN_EINVALID, "SET SORTED BY: more than 64 keys");
            int rc = parse_sort_key(tk, sql, start, i, &keys[nkeys]);
            if (rc)
                return rc;
            nkeys++;
            start = i + 1;
        }
    }
    if (i >= tk->n || nkeys == 64)
        return tarn_error_set(TARN_EINVALID, "SET SORTED BY: expected (expression, …)");
    int rc = parse_sort_key(tk, sql, start, i, &keys[nkeys]);
    if (!rc)
        nkeys++;
    op->nsort_keys = nkeys;
    return rc;
}

/* A dotted field path a.b[.c] at token i (a nested STRUCT field): fills
 * op->path and returns 1; 0 for a plain column name. The strings live in
 * static storage until the next call (one ALTER at a time). */
static int nested_path(const sql_tokens *tk, size_t i, lk_alter *op)
{
    static const char *parts[8];
    size_t n = 0;
    while (i < tk->n && n < 8 &&
           (tk->toks[i].type == SQL_TOK_IDENT || tk->toks[i].type == SQL_TOK_QIDENT)) {
        parts[n++] = tk->toks[i].text;
        if (i + 1 < tk->n && tk->toks[i + 1].type == SQL_TOK_OP &&
            strcmp(tk->toks[i + 1].text, ".") == 0)
            i += 2;
        else
            break;
    }
    if (n < 2)
        return 0;
    op->path = parts;
    op->npath = n;
    op->column = parts[0];
    return 1;
}

/* ADD [COLUMN] [IF NOT EXISTS] name TYPE …, or a nested field s.f TYPE;
 * i is past ADD. */
static int parse_add_column(tarn_session *s, const sql_tokens *tk, const char *sql, size_t i,
                            lk_alter *op)
{
    if (kw_at(tk, i, "COLUMN"))
        i++;
    if (kw_at(tk, i, "IF") && kw_at(tk, i + 1, "NOT") && kw_at(tk, i + 2, "EXISTS")) {
        op->if_not_exists = 1;
        i += 3;
    }
    op->kind = LK_ALTER_ADD_COLUMN;
    int bad = refuse_column_compression(tk, i, tk->n);
    if (bad)
        return bad;
    if (nested_path(tk, i, op)) {
        /* ADD COLUMN s.f TYPE: the shape is "f TYPE" */
        size_t after = i + 2 * op->npath - 1;
        char *type = session_token_text(tk, sql, after, tk->n);
        tarn_buf def = {0};
        quote_ident(&def, op->path[op->npath - 1]);
        buf_printf(&def, " %s", type);
        free(type);
        op->shape = SHAPE;
        int rc = make_added_shape(s, buf_cstr(&def));
        buf_free(&def);
        return rc;
    }
    op->column = i < tk->n ? tk->toks[i].text : "";
    op->shape = SHAPE;
    char *def = session_token_text(tk, sql, i, tk->n);
    int rc = make_added_shape(s, def);
    free(def);
    return rc;
}

/* DROP [COLUMN] [IF EXISTS] name (or s.f); i is past DROP. */
static int parse_drop_column(const sql_tokens *tk, size_t i, lk_alter *op)
{
    if (kw_at(tk, i, "COLUMN"))
        i++;
    if (kw_at(tk, i, "IF") && kw_at(tk, i + 1, "EXISTS")) {
        op->if_exists = 1;
        i += 2;
    }
    op->kind = LK_ALTER_DROP_COLUMN;
    nested_path(tk, i, op);
    op->column = i < tk->n ? tk->toks[i].text : "";
    return 0;
}

/* RENAME TO t, or RENAME [COLUMN] a TO b (a may be s.f); i is past RENAME. */
static int parse_rename(const sql_tokens *tk, size_t i, lk_alter *op)
{
    if (kw_at(tk, i, "TO") && i + 1 < tk->n) {
        op->kind = LK_ALTER_RENAME_TABLE;
        op->new_name = tk->toks[i + 1].text;
        return 0;
    }
    if (kw_at(tk, i, "COLUMN"))
        i++;
    if (nested_path(tk, i, op) && kw_at(tk, i + 2 * op->npath - 1, "TO") &&
        i + 2 * op->npath < tk->n) {
        op->kind = LK_ALTER_RENAME_COLUMN;
        op->new_name = tk->toks[i + 2 * op->npath].text;
        return 0;
    }
    if (i + 2 < tk->n && kw_at(tk, i + 1, "TO")) {
        op->kind = LK_ALTER_RENAME_COLUMN;
        op->column = tk->toks[i].text;
        op->new_name = tk->toks[i + 2].text;
        return 0;
    }
    return tarn_error_set(TARN_EINVALID, "ALTER TABLE … RENAME: expected [COLUMN] a TO b");
}

/* SET/RESET PARTITIONED BY and SET/RESET SORTED BY at token i; 1 when
 * the action is none of these (op untouched). */
static int parse_table_layout(const sql_tokens *tk, const char *sql, size_t i, lk_alter *op,
                              int *rc)
{
    int set = kw_at(tk, i, "SET"), reset = kw_at(tk, i, "RESET");
    if (!(set || reset) || !kw_at(tk, i + 2, "BY"))
        return 1;
    if (kw_at(tk, i + 1, "PARTITIONED")) {
        if (set) {
            *rc = parse_partition_keys(tk, i + 3, op);
        } else {
            op->kind = LK_ALTER_SET_PARTITION;
            *rc = 0;
        }
        return 0;
    }
    if (kw_at(tk, i + 1, "SORTED")) {
        if (set) {
            *rc = parse_sort_keys(tk, sql, i + 3, op);
        } else {
            op->kind = LK_ALTER_SET_SORT;
            *rc = 0;
        }
        return 0;
    }
    return 1;
}

static int parse_alter(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql, size_t i,
                       const char *schema, const char *name, lk_alter *op)
{
    memset(op, 0, sizeof(*op));
    if (kw_at(tk, i, "ADD"))
        return parse_add_column(s, tk, sql, i + 1, op);
    if (kw_at(tk, i, "DROP"))
        return parse_drop_column(tk, i + 1, op);
    if (kw_at(tk, i, "RENAME"))
        return parse_rename(tk, i + 1, op);
    if (kw_at(tk, i, "ALTER")) {
        i++;
        if (kw_at(tk, i, "COLUMN"))
            i++;
        if (i >= tk->n)
            return tarn_error_set(TARN_EINVALID, "ALTER COLUMN: expected a column name");
        op->column = tk->toks[i].text;
        return parse_alter_column(s, l, tk, sql, i + 1, schema, name, op);
    }
    int rc = 0;
    if (parse_table_layout(tk, sql, i, op, &rc) == 0)
        return rc;
    return tarn_error_set(TARN_EUNSUPPORTED,
                          "this ALTER TABLE action is not supported on lake \"%s\"", l->alias);
}

static int alter_table(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                       const ddl_head *h, const qname *q, const char *schema, const char *name)
{
    lk_alter op;
    if (!table_exists(l, schema, name)) {
        if (view_exists(l, schema, name))
            return tarn_error_set(TARN_EINVALID,
                                  "Binder Error: Cannot use ALTER TABLE on entry %s - it is not a "
                                  "table",
                                  name);
        if (h->if_exists)
            return 0;
        return tarn_error_set(TARN_ENOTFOUND,
                              "Catalog Error: Table with name %s does not exist in lake \"%s\"",
                              name, l->alias);
    }
    int rc = parse_alter(s, l, tk, sql, q->end, schema, name, &op);
    if (rc)
        return rc;
    rc = session_write_begin(s, l);
    if (!rc)
        rc = lk_alter_table(l, s->con, schema, name, &op);
    return session_write_end(s, l, rc);
}

/* The view's query as DuckLake stores it: DuckDB's own rendering of the
 * parsed query, with references to the lake written {DUCKLAKE_CATALOG} so
 * the view survives the lake being attached under another name. */
static int normalize_view_sql(char **out, tarn_session *s, lk_lake *l, const char *query)
{
    /* In the parse tree, lake.t is schema "lake" with no catalog, and
     * lake.s.t is catalog "lake": both become the placeholder. */
    tarn_buf b = {0};
    buf_puts(&b, "SELECT replace(json_deserialize_sql(regexp_replace(replace(json_serialize_sql(");
    quote_literal(&b, query);
    buf_puts(&b, ")::VARCHAR, ");
    char *from = xasprintf("\"catalog_name\":\"%s\"", l->alias);
    quote_literal(&b, from);
    free(from);
    buf_puts(&b, ", '\"catalog_name\":\"__tarn_lake__\"'), ");
    tarn_buf re = {0};
    buf_puts(&re, "\"schema_name\":\"");
    for (const char *p = l->alias; *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_'))
            buf_putc(&re, '\\');
        buf_putc(&re, *p);
    }
    buf_puts(&re, "\"(,\"table_name\":\"(?:[^\"\\\\]|\\\\.)*\",\"column_name_alias\":\\[[^\\]]*\\],"
                  "\"catalog_name\":\"\")");
    quote_literal(&b, buf_cstr(&re));
    buf_free(&re);
    buf_puts(&b, ", '\"schema_name\":\"__tarn_lake__\"\\1', 'g')::JSON), '__tarn_lake__', "
                 "'{DUCKLAKE_CATALOG}')");
    int rc = duck_query_string(out, s->con, buf_cstr(&b));
    buf_free(&b);
    if (!rc && !*out)
        rc = tarn_error_set(TARN_EINVALID, "CREATE VIEW: the query could not be parsed");
    return rc;
}

/* (a, b) after the view name → the stored form "a","b". */
static char *view_aliases(const sql_tokens *tk, size_t *i)
{
    tarn_buf b = {0};
    if (*i < tk->n && tk->toks[*i].type == SQL_TOK_OP && strcmp(tk->toks[*i].text, "(") == 0) {
        (*i)++;
        int n = 0;
        while (*i < tk->n &&
               !(tk->toks[*i].type == SQL_TOK_OP && strcmp(tk->toks[*i].text, ")") == 0)) {
            if (tk->toks[*i].type == SQL_TOK_IDENT || tk->toks[*i].type == SQL_TOK_QIDENT) {
                if (n++)
                    buf_putc(&b, ',');
                quote_ident(&b, tk->toks[*i].text);
            }
            (*i)++;
        }
        (*i)++;
    }
    return buf_detach(&b);
}

static int create_view(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                       const ddl_head *h, const qname *q, const char *schema, const char *name)
{
    size_t i = q->end;
    int rc = h->or_replace ? lk_entry_conflict(l, schema, name, 1, "replace with") : 0;
    if (rc)
        return rc;
    char *aliases = view_aliases(tk, &i);
    if (!kw_at(tk, i, "AS")) {
        free(aliases);
        return tarn_error_set(TARN_EINVALID, "CREATE VIEW: expected AS <query>");
    }
    char *query = session_token_text(tk, sql, i + 1, tk->n);
    char *norm = NULL;
    rc = normalize_view_sql(&norm, s, l, query);
    free(query);
    if (!rc)
        rc = session_write_begin(s, l);
    if (!rc)
        rc =
            lk_create_view(l, s->con, schema, name, norm, aliases, h->or_replace, h->if_not_exists);
    free(norm);
    free(aliases);
    return session_write_end(s, l, rc);
}

static int unsupported(lk_lake *l, const char *what)
{
    return tarn_error_set(TARN_EUNSUPPORTED,
                          "%s on lake \"%s\" is not supported by tarn yet (DuckLake part 2: "
                          "ALTER, views, comments)",
                          what, l->alias);
}

/* COMMENT ON TABLE lake.t IS '…' / COMMENT ON COLUMN lake.t.c IS '…' */
static int comment_on(tarn_session *s, const sql_tokens *tk, const char *sql, int *handled)
{
    (void)sql;
    if (tk->n < 5 || !kw_at(tk, 1, "ON"))
        return 0;
    int is_column = kw_at(tk, 2, "COLUMN"), is_view = kw_at(tk, 2, "VIEW");
    if (!is_column && !is_view && !kw_at(tk, 2, "TABLE"))
        return 0;
    qname q;
    if (!session_qname(tk, 3, &q))
        return 0;
    const char *schema = NULL, *name = NULL, *column = NULL;
    qname tq = q;
    if (is_column) {
        if (q.n < 2)
            return 0;
        column = q.parts[q.n - 1];
        tq.n--;
    }
    lk_lake *l = session_resolve(s, &tq, &schema, &name, 0);
    if (!l)
        return 0;
    *handled = 1;
    size_t i = q.end;
    if (!kw_at(tk, i, "IS") || i + 1 >= tk->n)
        return tarn_error_set(TARN_EINVALID, "COMMENT ON: expected IS '<text>' or IS NULL");
    const char *text = tk->toks[i + 1].type == SQL_TOK_STRING ? tk->toks[i + 1].text : NULL;
    if (!is_view && !is_column && view_exists(l, schema, name))
        return tarn_error_set(TARN_EINVALID,
                              "Binder Error: Cannot use ALTER TABLE on entry %s - it is not a "
                              "table",
                              name);
    int rc = session_write_begin(s, l);
    if (!rc)
        rc = is_view ? lk_comment_view(l, schema, name, text)
                     : lk_comment(l, schema, name, column, text);
    return session_write_end(s, l, rc);
}

int session_ddl_targets_lake(tarn_session *s, const sql_tokens *tk, const char *kw)
{
    ddl_head h;
    read_head(tk, &h);
    if (h.temp || !h.object)
        return 0;
    if (strcmp(kw, "COMMENT") == 0)
        return 1; /* COMMENT ON names its object later: treat it as the lake's */
    qname q;
    const char *schema = NULL, *name = NULL;
    if (strcasecmp(h.object, "MACRO") == 0 && kw_at(tk, h.i, "TABLE")) /* DROP MACRO TABLE */
        h.i += kw_at(tk, h.i + 1, "IF") ? 3 : 1;
    if (!session_qname(tk, h.i, &q))
        return 0;
    return session_resolve(s, &q, &schema, &name, strcasecmp(h.object, "SCHEMA") == 0) != NULL;
}

/* CREATE [UNIQUE] INDEX … ON lake.t (…): DuckLake tables have no indexes. */
static int create_index(tarn_session *s, const sql_tokens *tk, int *handled)
{
    size_t i = 1;
    while (i < tk->n && !sql_tok_is_kw(&tk->toks[i], "ON"))
        i++;
    qname q;
    const char *schema = NULL, *name = NULL;
    if (i + 1 >= tk->n || !session_qname(tk, i + 1, &q))
        return 0;
    lk_lake *l = session_resolve(s, &q, &schema, &name, 0);
    if (!l)
        return 0;
    *handled = 1;
    return tarn_error_set(TARN_EUNSUPPORTED,
                          "CREATE INDEX on %s.%s.%s: tarn does not support indexes on a lake "
                          "table (DuckLake tables have none)",
                          l->alias, schema, name);
}

int session_ddl_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                     const tarn_sink *sink, int *handled)
{
    ddl_head h;
    read_head(tk, &h);
    if (h.temp || !h.object)
        return 0;
    qname q;
    const char *schema = NULL, *name = NULL;
    int is_schema = strcasecmp(h.object, "SCHEMA") == 0;
    if (strcmp(kw, "COMMENT") == 0)
        return comment_on(s, tk, sql, handled);
    if (strcasecmp(h.object, "MACRO") == 0 || strcasecmp(h.object, "FUNCTION") == 0)
        return session_macro_stmt(s, tk, sql, kw, h.i, h.or_replace, h.if_not_exists, h.if_exists,
                                  handled);
    if (strcmp(kw, "CREATE") == 0 &&
        (strcasecmp(h.object, "INDEX") == 0 || strcasecmp(h.object, "UNIQUE") == 0))
        return create_index(s, tk, handled);
    if (!session_qname(tk, h.i, &q))
        return 0;
    lk_lake *l = session_resolve(s, &q, &schema, &name, is_schema);
    if (!l)
        return 0;
    *handled = 1;
    if (strcmp(kw, "ALTER") == 0 && strcasecmp(h.object, "TABLE") == 0)
        return alter_table(s, l, tk, sql, &h, &q, schema, name);
    if (strcmp(kw, "ALTER") == 0 && strcasecmp(h.object, "VIEW") == 0)
        return alter_view(s, l, tk, &h, &q, schema, name);
    if (strcmp(kw, "ALTER") == 0)
        return unsupported(l, "ALTER");
    if (is_schema) {
        if (strcmp(kw, "CREATE") == 0)
            return create_schema(s, l, schema, &h);
        return drop_schema(s, l, schema, &h, has_kw_after(tk, q.end, "CASCADE"));
    }
    if (strcasecmp(h.object, "TABLE") == 0) {
        if (strcmp(kw, "CREATE") == 0)
            return create_table(s, l, tk, sql, &h, &q, schema, name, sink);
        return drop_entry(s, l, schema, name, &h, 0);
    }
    if (strcasecmp(h.object, "VIEW") == 0 && strcmp(kw, "CREATE") == 0)
        return create_view(s, l, tk, sql, &h, &q, schema, name);
    if (strcasecmp(h.object, "VIEW") == 0 && strcmp(kw, "DROP") == 0)
        return drop_entry(s, l, schema, name, &h, 1);
    char *what = xasprintf("%s %s", kw, h.object);
    int rc = unsupported(l, what);
    free(what);
    return rc;
}
