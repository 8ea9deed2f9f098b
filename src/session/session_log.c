/*
 * session_log.c — DuckLake's DuckLakeMetadata log: the catalog queries a
 * lake runs, with the lake's name and how long each took.
 *
 * DuckLake registers the log type DuckLakeMetadata with DuckDB's log
 * manager and writes an entry (catalog, query, elapsed_ms) for every
 * query it sends its catalog. DuckDB's C API can neither register a log
 * type nor write a typed entry, so the session keeps the entries itself
 * while the type is enabled and answers for DuckDB where they are read:
 *   CALL enable_logging('DuckLakeMetadata' | [..., 'DuckLakeMetadata', ...]
 *        | level := 'debug' / 'trace' with no types)   turns it on (the
 *        other types go to DuckDB's enable_logging as given); a list of
 *        types without it, or a level above debug, turns it off, as
 *        DuckDB's own call replaces the enabled types
 *   CALL disable_logging()       off;   CALL truncate_duckdb_logs()  empties it
 *   duckdb_logs_parsed('DuckLakeMetadata')   its entries, in DuckDB's columns
 *   duckdb_logs / duckdb_logs()              DuckDB's entries and these
 * Each lake's catalog calls the hook (lake/catdb.h) while the log is on.
 */
#include "session/session_log.h"

#include "lake/catdb.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LOG_TYPE SESSION_LOG_TYPE

typedef struct {
    int64_t epoch_us;
    char *catalog;
    char *query;
    int64_t elapsed_ms;
} log_entry;

struct session_log {
    int on;
    log_entry *entries;
    size_t n, cap;
};

static void record(void *ctx, const lk_catdb *db, const char *sql, double elapsed_ms)
{
    tarn_session *s = ctx;
    session_log *g = s->log;
    const char *alias = NULL;
    for (lk_lake *l = s->lakes; l && !alias; l = l->next)
        if (&l->db == db)
            alias = l->alias;
    if (!g || !g->on || !alias)
        return;
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->entries = xrealloc(g->entries, g->cap * sizeof(log_entry));
    }
    log_entry *e = &g->entries[g->n++];
    e->epoch_us = (int64_t)llround(clock_epoch_s() * 1e6);
    e->catalog = xstrdup(alias);
    e->query = xstrdup(sql);
    e->elapsed_ms = (int64_t)elapsed_ms;
}

void session_log_lake(tarn_session *s, lk_lake *l)
{
    int on = s->log && s->log->on;
    l->db.log = on ? record : NULL;
    l->db.log_ctx = on ? s : NULL;
}

static void set_on(tarn_session *s, int on)
{
    if (!s->log)
        s->log = xcalloc(1, sizeof(session_log));
    s->log->on = on;
    for (lk_lake *l = s->lakes; l; l = l->next)
        session_log_lake(s, l);
}

static void truncate_log(session_log *g)
{
    for (size_t i = 0; g && i < g->n; i++) {
        free(g->entries[i].catalog);
        free(g->entries[i].query);
    }
    if (g)
        g->n = 0;
}

void session_log_free(tarn_session *s)
{
    truncate_log(s->log);
    if (s->log)
        free(s->log->entries);
    free(s->log);
    s->log = NULL;
}

/* The log types argument: a string or a list of strings (NULLs ignored). */
static int type_list(strlist *out, tarn_session *s, const char *sql)
{
    int had_null = 0;
    return session_eval_strings(out, &had_null, s, sql);
}

/* The arguments of CALL fn(…): the SQL of the first positional one (or
 * NULL) and the named ones (`name := value` or `name => value`), as text. */
typedef struct {
    char *types;
    strlist names, values;
} call_args;

static void call_args_free(call_args *a)
{
    free(a->types);
    strlist_free(&a->names);
    strlist_free(&a->values);
}

static void call_arg(call_args *a, const sql_tokens *tk, const char *sql, size_t from, size_t to)
{
    if (from >= to)
        return;
    if (to - from > 2 && tk->toks[from].type == SQL_TOK_IDENT &&
        (sql_tok_is_op(&tk->toks[from + 1], ":=") || sql_tok_is_op(&tk->toks[from + 1], "=>"))) {
        strlist_push(&a->names, tk->toks[from].text);
        strlist_push_owned(&a->values, session_token_text(tk, sql, from + 2, to));
    } else if (!a->types) {
        a->types = session_token_text(tk, sql, from, to);
    }
}

/* Splits the tokens between the parentheses at tokens 2 and the last
 * at the commas outside any bracket. */
static void call_args_parse(call_args *a, const sql_tokens *tk, const char *sql)
{
    memset(a, 0, sizeof(*a));
    size_t close = tk->n - 1;
    while (close > 2 && !sql_tok_is_op(&tk->toks[close], ")"))
        close--;
    int depth = 0;
    size_t from = 3;
    for (size_t i = 3; i < close; i++) {
        const sql_token *t = &tk->toks[i];
        if (sql_tok_is_op(t, "(") || sql_tok_is_op(t, "[") || sql_tok_is_op(t, "{"))
            depth++;
        else if (sql_tok_is_op(t, ")") || sql_tok_is_op(t, "]") || sql_tok_is_op(t, "}"))
            depth--;
        else if (depth == 0 && sql_tok_is_op(t, ",")) {
            call_arg(a, tk, sql, from, i);
            from = i + 1;
        }
    }
    call_arg(a, tk, sql, from, close);
}

/* CALL enable_logging(types, name := value, …) with DuckLakeMetadata:
 * DuckDB's call for the other types, when there are any. */
static int enable_others(tarn_session *s, const strlist *types, const call_args *a)
{
    tarn_buf b = {0};
    buf_puts(&b, "CALL enable_logging([");
    size_t n = 0;
    for (size_t i = 0; i < types->n; i++) {
        if (strcasecmp(types->items[i], LOG_TYPE) == 0)
            continue;
        buf_puts(&b, n++ ? ", " : "");
        quote_literal(&b, types->items[i]);
    }
    buf_puts(&b, "]");
    for (size_t i = 0; i < a->names.n; i++)
        buf_printf(&b, ", %s := %s", a->names.items[i], a->values.items[i]);
    buf_puts(&b, ")");
    int rc = n ? duck_exec(s->con, buf_cstr(&b)) : 0;
    buf_free(&b);
    return rc;
}

/* With no types, DuckDB enables every type of the level: DuckLake's is a
 * debug one. */
static int level_includes_debug(const call_args *a)
{
    long k = strlist_find_nocase(&a->names, "level");
    char *level = NULL;
    if (k < 0 || !quote_unliteral(&level, a->values.items[k]))
        return 0;
    int debug = strcasecmp(level, "debug") == 0 || strcasecmp(level, "trace") == 0;
    free(level);
    return debug;
}

static int enable_logging(tarn_session *s, const sql_tokens *tk, const char *sql)
{
    call_args a;
    call_args_parse(&a, tk, sql);
    strlist types = {0};
    int rc = a.types ? type_list(&types, s, a.types) : 0;
    int mine = strlist_find_nocase(&types, LOG_TYPE) >= 0;
    if (!rc)
        rc = mine ? enable_others(s, &types, &a) : duck_exec(s->con, sql);
    if (!rc && !mine && types.n == 0)
        mine = level_includes_debug(&a);
    if (!rc)
        set_on(s, mine);
    strlist_free(&types);
    call_args_free(&a);
    return rc;
}

int session_log_call(tarn_session *s, const sql_tokens *tk, const char *sql, int *handled)
{
    if (tk->n < 4 || tk->toks[1].type != SQL_TOK_IDENT || !sql_tok_is_op(&tk->toks[2], "("))
        return 0;
    const char *fn = tk->toks[1].text;
    int rc = 0;
    if (strcasecmp(fn, "enable_logging") == 0) {
        rc = enable_logging(s, tk, sql);
    } else if (strcasecmp(fn, "disable_logging") == 0) {
        rc = duck_exec(s->con, sql);
        if (!rc)
            set_on(s, 0);
    } else if (strcasecmp(fn, "truncate_duckdb_logs") == 0) {
        rc = duck_exec(s->con, sql);
        if (!rc)
            truncate_log(s->log);
    } else {
        return 0;
    }
    *handled = 1;
    return rc;
}

/* The entries as rows of (epoch_us, catalog, query, elapsed_ms). */
static void entry_rows(tarn_buf *b, const session_log *g)
{
    if (!g || g->n == 0) {
        buf_puts(b,
                 "(SELECT NULL::BIGINT, NULL::VARCHAR, NULL::VARCHAR, NULL::BIGINT WHERE false)");
        return;
    }
    buf_puts(b, "(VALUES ");
    for (size_t i = 0; i < g->n; i++) {
        const log_entry *e = &g->entries[i];
        buf_printf(b, "%s(%lld::BIGINT, ", i ? ", " : "", (long long)e->epoch_us);
        quote_literal(b, e->catalog);
        buf_puts(b, ", ");
        quote_literal(b, e->query);
        buf_printf(b, ", %lld::BIGINT)", (long long)e->elapsed_ms);
    }
    buf_puts(b, ")");
}

/* DuckDB's columns of a log entry written for the database (DuckLake
 * logs with the database as its context), before the message. */
static const char *const HEAD =
    "NULL::UBIGINT AS context_id, 'DATABASE' AS scope, NULL::UBIGINT AS "
    "connection_id, NULL::UBIGINT AS transaction_id, NULL::UBIGINT AS "
    "query_id, NULL::UBIGINT AS thread_id, make_timestamp(__us)::"
    "TIMESTAMPTZ AS \"timestamp\", '" LOG_TYPE "' AS \"type\", "
    "'DEBUG' AS log_level";

int session_log_has_entries(const tarn_session *s)
{
    return s->log && s->log->n > 0;
}

void session_log_parsed_sql(tarn_buf *b, const tarn_session *s)
{
    buf_printf(b, "(SELECT %s, __catalog AS catalog, __query AS query, __ms AS elapsed_ms FROM ",
               HEAD);
    entry_rows(b, s->log);
    buf_puts(b, " AS __tarn_log(__us, __catalog, __query, __ms))");
}

void session_log_logs_sql(tarn_buf *b, const tarn_session *s)
{
    /* the message as DuckLake writes it: the entry's STRUCT as text */
    buf_printf(b,
               "(SELECT * FROM duckdb_logs UNION ALL BY NAME SELECT %s, '{''catalog'': ' || "
               "__catalog || ', ''query'': ' || __query || ', ''elapsed_ms'': ' || __ms || '}' "
               "AS message FROM ",
               HEAD);
    entry_rows(b, s->log);
    buf_puts(b, " AS __tarn_log(__us, __catalog, __query, __ms))");
}
