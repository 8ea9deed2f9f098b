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
#include "lake/ddl.h"
#include "lake/rewrite.h"
#include "lake/session_int.h"
#include "lake/txn.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SHAPE "temp.main.__tarn_shape"

typedef struct {
    int or_replace, temp, if_not_exists, if_exists, cascade;
    size_t i; /* token index after the object keyword and IF [NOT] EXISTS */
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
    if (i < tk->n && (sql_tok_is_kw(&tk->toks[i], "TEMP") ||
                      sql_tok_is_kw(&tk->toks[i], "TEMPORARY"))) {
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

static int drop_table(tarn_session *s, lk_lake *l, const char *schema, const char *name,
                      const ddl_head *h)
{
    int rc = session_write_begin(s, l);
    if (!rc)
        rc = lk_drop_table(l, s->con, schema, name, h->if_exists);
    return session_write_end(s, l, rc);
}

static int table_exists(lk_lake *l, const char *schema, const char *name)
{
    lk_catalog *cat = (lk_catalog *)lk_txn_catalog(l);
    lk_schema *sc = lk_catalog_schema(cat, schema);
    return sc && lk_catalog_table(cat, sc->id, name) != NULL;
}

/* CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name (…) | AS query */
static int create_table(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                        const ddl_head *h, const qname *q, const char *schema, const char *name,
                        const tarn_sink *sink)
{
    int is_ctas = q->end < tk->n && sql_tok_is_kw(&tk->toks[q->end], "AS");
    if (table_exists(l, schema, name) && h->if_not_exists) {
        if (is_ctas && sink && sink->count)
            sink->count(sink->ctx, 0);
        return 0;
    }
    char *rest = session_token_text(tk, sql, is_ctas ? q->end + 1 : q->end, tk->n);
    int rc = 0;
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
    if (!rc && is_ctas)
        rc = lk_insert_query(l, s->con, table_id, body, &count);
    free(body);
    rc = session_write_end(s, l, rc);
    if (!rc && is_ctas && sink && sink->count)
        sink->count(sink->ctx, count);
    return rc;
}

static int unsupported(lk_lake *l, const char *what)
{
    return tarn_error_set(TARN_EUNSUPPORTED,
                          "%s on lake \"%s\" is not supported by tarn yet (DuckLake part 2: "
                          "ALTER, views, comments)",
                          what, l->alias);
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
    if (strcmp(kw, "COMMENT") == 0) {
        /* COMMENT ON TABLE|COLUMN name IS … */
        if (tk->n > 3 && session_qname(tk, 3, &q) &&
            (session_resolve(s, &q, &schema, &name, 0) || session_lake(s, q.parts[0]))) {
            *handled = 1;
            lk_lake *l = session_lake(s, q.parts[0]);
            return unsupported(l ? l : s->lakes, "COMMENT ON");
        }
        return 0;
    }
    if (!session_qname(tk, h.i, &q))
        return 0;
    lk_lake *l = session_resolve(s, &q, &schema, &name, is_schema);
    if (!l)
        return 0;
    *handled = 1;
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
        return drop_table(s, l, schema, name, &h);
    }
    char *what = xasprintf("%s %s", kw, h.object);
    int rc = unsupported(l, what);
    free(what);
    return rc;
}
