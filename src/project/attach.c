/*
 * attach.c — attaching a project's lake read-only (see attach.h).
 */
#include "project/attach.h"

#include "project/query.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The lake's ATTACH statement, read-only: READ_ONLY added to its options
 * (caller frees); `sql` itself when it is another ATTACH. */
static char *attach_read_only(const char *sql, const char *alias)
{
    sql_tokens tk;
    if (sql_tokenize(&tk, sql) != 0) {
        tarn_error_clear();
        return xstrdup(sql);
    }
    char *out = NULL;
    for (size_t i = 0; i + 1 < tk.n && !out; i++) {
        if (!sql_tok_is_kw(&tk.toks[i], "AS") || strcasecmp(tk.toks[i + 1].text, alias) != 0)
            continue;
        const sql_token *next = &tk.toks[i + 2];
        if (next->type == SQL_TOK_OP && strcmp(next->text, "(") == 0)
            out =
                xasprintf("%.*sREAD_ONLY, %s", (int)(next->start + 1), sql, sql + next->start + 1);
        else
            out = xasprintf("%.*s (READ_ONLY)%s", (int)(tk.toks[i + 1].start + tk.toks[i + 1].len),
                            sql, sql + tk.toks[i + 1].start + tk.toks[i + 1].len);
    }
    int ducklake = 0;
    for (size_t i = 0; i < tk.n; i++)
        ducklake |=
            tk.toks[i].type == SQL_TOK_STRING && strncmp(tk.toks[i].text, "ducklake:", 9) == 0;
    sql_tokens_free(&tk);
    if (!out || !ducklake) {
        free(out);
        out = xstrdup(sql);
    }
    return out;
}

int project_lake_exists(const tarn_project *p)
{
    const char *path = p->lake_path;
    return !path || strchr(path, ':') || access(path, F_OK) == 0;
}

int project_attach_read_only(tarn_project *p, tarn_session *s)
{
    return project_attach_lake(p, s, 1);
}

int project_attach_lake(tarn_project *p, tarn_session *s, int read_only)
{
    for (size_t i = 0; i < p->nconfig; i++) {
        const config_file *cf = &p->config[i];
        for (size_t j = 0; j < cf->nstmts; j++) {
            char kw[16];
            sql_first_keyword(cf->stmts[j].text, kw, sizeof(kw));
            if (strcmp(kw, "ATTACH") != 0)
                continue;
            char *ro = read_only ? attach_read_only(cf->stmts[j].text, p->lake_alias)
                                 : xstrdup(cf->stmts[j].text);
            int rc = query_exec(s, ro, NULL);
            free(ro);
            if (rc != 0)
                return tarn_error_prefix(rc, "%s:%d", cf->path, cf->stmts[j].line);
        }
    }
    if (!tarn_session_catalog_prefix(s, p->lake_alias))
        return tarn_error_set(TARN_ENOTFOUND, "config/ did not attach lake \"%s\"", p->lake_alias);
    return 0;
}
