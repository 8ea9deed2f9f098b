/*
 * session_catstmt.c — statements on a lake's catalog database that are not
 * DuckLake's: tarn keeps its own tables there (run records, the
 * schedule), written by the layers above as plain SQL on the catalog's
 * name (tarn_session_catalog_name). A DuckDB-file catalog is attached in
 * the session's DuckDB, which runs them as they are; a PostgreSQL catalog
 * is not, so a CREATE / ALTER / DROP TABLE, INSERT, UPDATE or DELETE whose
 * target is in it goes to the lake (lk_lake_catalog_stmt), and reads of
 * those tables go through the views the catalog keeps in DuckDB.
 */
#include "lake/lake.h"
#include "session/session_int.h"

#include <string.h>
#include <strings.h>

/* Token i is keyword kw: step over it. */
static int take(const sql_tokens *tk, size_t *i, const char *kw)
{
    if (*i < tk->n && sql_tok_is_kw(&tk->toks[*i], kw)) {
        (*i)++;
        return 1;
    }
    return 0;
}

/* The index of the token naming the table the statement writes, or -1. */
static long target_token(const sql_tokens *tk, const char *kw)
{
    size_t i = 1;
    if (strcmp(kw, "CREATE") == 0) {
        if (take(tk, &i, "OR") && !take(tk, &i, "REPLACE"))
            return -1;
        if (!take(tk, &i, "TABLE"))
            return -1; /* TEMP tables, views, schemas: DuckDB's */
        if (take(tk, &i, "IF") && !(take(tk, &i, "NOT") && take(tk, &i, "EXISTS")))
            return -1;
    } else if (strcmp(kw, "ALTER") == 0 || strcmp(kw, "DROP") == 0) {
        if (!take(tk, &i, "TABLE"))
            return -1;
        if (take(tk, &i, "IF") && !take(tk, &i, "EXISTS"))
            return -1;
    } else if (strcmp(kw, "INSERT") == 0) {
        if (!take(tk, &i, "INTO"))
            return -1;
    } else if (strcmp(kw, "DELETE") == 0) {
        if (!take(tk, &i, "FROM"))
            return -1;
    } else if (strcmp(kw, "UPDATE") != 0) {
        return -1;
    }
    return i + 1 < tk->n && sql_tok_is_op(&tk->toks[i + 1], ".") ? (long)i : -1;
}

int session_catalog_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                         int *handled)
{
    *handled = 0;
    long t = target_token(tk, kw);
    if (t < 0)
        return 0;
    for (lk_lake *l = s->lakes; l; l = l->next)
        if (strcasecmp(tk->toks[t].text, l->meta_name) == 0)
            return lk_lake_catalog_stmt(l, s->con, sql, handled);
    return 0;
}
