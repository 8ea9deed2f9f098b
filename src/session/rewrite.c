/*
 * rewrite.c — read rewrites for lake queries (see rewrite.h).
 *
 * The statement is walked token by token; a rewritten construct is
 * replaced by a parenthesized subquery and every other byte of the text is
 * copied unchanged, so DuckDB still sees the user's own SQL.
 */
#include "session/rewrite.h"
#include "session/rewrite_int.h"

#include "duck/duck.h"
#include "lake/info.h"
#include "lake/feed.h"
#include "session/fold.h"
#include "session/functions.h"
#include "session/prune_terms.h"
#include "lake/scan.h"
#include "session/session_fnform.h"
#include "session/session_log.h"
#include "session/session_int.h"
#include "lake/txn.h"
#include "lake/views.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* DuckLake's virtual columns of a table, and the scan flags that add them. */
static const struct {
    const char *name;
    int flag;
} VIRTUAL[] = {{"rowid", LK_SCAN_ROWID},
               {"snapshot_id", LK_SCAN_SNAPSHOT},
               {"filename", LK_SCAN_FILENAME},
               {"file_row_number", LK_SCAN_FILE_ROW},
               {"file_index", LK_SCAN_FILE_INDEX}};

/* What a statement's virtual columns come to while it is rewritten: the
 * scan flags for the ones it names, those its lake tables and feeds added,
 * and those that are real columns of a source (a `*` shows those). */
typedef struct {
    int virt, added, real;
    int prune; /* the statement runs now: a filtered table may skip files */
} virt_state;

/* The scan flags for the virtual columns statement `tk` names (0: none):
 * lake tables it reads get them, and its bare `*`s leave them out. A
 * named argument (filename = true) is no column. */
static int mentions_virtual(const sql_tokens *tk)
{
    int flags = 0;
    for (size_t i = 0; i < tk->n; i++) {
        if (tk->toks[i].type != SQL_TOK_IDENT)
            continue;
        const sql_token *nx = &tk->toks[i + 1]; /* (the EOF token ends the array) */
        if (i + 1 < tk->n &&
            (sql_tok_is_op(nx, "=>") || sql_tok_is_op(nx, ":=") ||
             (sql_tok_is_op(nx, "=") && i > 0 &&
              (sql_tok_is_op(&tk->toks[i - 1], ",") || sql_tok_is_op(&tk->toks[i - 1], "(")))))
            continue;
        for (size_t k = 0; k < sizeof(VIRTUAL) / sizeof(VIRTUAL[0]); k++)
            if (strcasecmp(tk->toks[i].text, VIRTUAL[k].name) == 0)
                flags |= VIRTUAL[k].flag;
    }
    /* the virtual columns come with rowid; a user sees the open
     * transaction's new rows under DuckLake's transaction-local ids */
    return flags ? flags | LK_SCAN_ROWID | LK_SCAN_LOCAL_ROWIDS : 0;
}

/* COLUMNS(c -> c NOT IN (…)): a `*` without the virtual columns in `flags`. */
static void star_without(tarn_buf *b, int flags)
{
    flags &= LK_SCAN_ROWID | LK_SCAN_VIRTUAL;
    buf_puts(b, "COLUMNS(c -> c NOT IN (");
    int n = 0;
    for (size_t k = 0; k < sizeof(VIRTUAL) / sizeof(VIRTUAL[0]); k++)
        if (flags & VIRTUAL[k].flag)
            buf_printf(b, "%s'%s'", n++ ? ", " : "", VIRTUAL[k].name);
    buf_puts(b, "))");
}

static int in_from_position(const sql_tokens *tk, size_t i)
{
    if (i == 0)
        return 0;
    const sql_token *p = &tk->toks[i - 1];
    return sql_tok_is_kw(p, "FROM") || sql_tok_is_kw(p, "JOIN") || sql_tok_is_op(p, ",");
}

/* Whether `text` is a plain decimal integer (digits only) that fits. */
static int plain_int64(int64_t *out, const char *text)
{
    if (!*text || strspn(text, "0123456789") != strlen(text) || strlen(text) > 18)
        return 0;
    *out = strtoll(text, NULL, 10);
    return 1;
}

/* The snapshot named by AT (VERSION => e | TIMESTAMP => e). */
static int at_snapshot(int64_t *out, tarn_session *s, lk_lake *l, const sql_tokens *tk,
                       const char *sql, size_t open, size_t close)
{
    if (open + 3 > close || !sql_tok_is_op(&tk->toks[open + 2], "=>"))
        return tarn_error_set(TARN_EINVALID, "AT clause: expected AT (VERSION => n) or AT "
                                             "(TIMESTAMP => t)");
    const sql_token *unit = &tk->toks[open + 1];
    char *expr = session_token_text(tk, sql, open + 3, close);
    int rc;
    if (sql_tok_is_kw(unit, "VERSION") && close == open + 4 &&
        tk->toks[open + 3].type == SQL_TOK_NUMBER && plain_int64(out, expr)) {
        rc = 0; /* a number, as builds write it: no query */
    } else if (sql_tok_is_kw(unit, "VERSION")) {
        char *q = xasprintf("SELECT (%s)::BIGINT", expr);
        rc = duck_query_int64(out, NULL, s->con, q);
        free(q);
    } else if (sql_tok_is_kw(unit, "TIMESTAMP")) {
        rc = lk_lake_snapshot_at_time(out, l, s->con, expr, 0);
        if (rc == TARN_ENOTFOUND) /* invalid input, as DuckLake says: it aborts a transaction */
            rc = tarn_error_set(TARN_EINVALID, "No snapshot found at or before timestamp %s", expr);
    } else {
        rc = tarn_error_set(TARN_EINVALID, "AT clause: unit must be VERSION or TIMESTAMP");
    }
    /* snapshot ids start at 0; a negative one (-1 means "now" inside
     * tarn) names no snapshot */
    if (!rc && *out < 0)
        rc = tarn_error_set(TARN_EINVALID, "No snapshot found at version %s", expr);
    free(expr);
    return rc;
}

/* Whether schema.name reads at `snap` as the committed catalog has it
 * now: the table existed under this name since before `snap` and its
 * schema has not changed since (ducklake_schema_versions). Then *cat is
 * that catalog, and a time-travel read costs no catalog load (builds read
 * every upstream at a pinned snapshot). */
static int unchanged_since(const lk_catalog **cat, tarn_session *s, lk_lake *l, const char *schema,
                           const char *name, int64_t snap)
{
    lk_catalog *now = &l->cat;
    if (snap > now->snapshot_id)
        return 0;
    lk_schema *sc = lk_catalog_schema(now, schema);
    const lk_table *t = sc ? lk_catalog_table(now, sc->id, name) : NULL;
    if (!t || t->begin > snap || sc->begin > snap)
        return 0;
    int64_t changed = lk_lake_schema_changed_at(l, s->con, t->id);
    if (changed < 0 || changed > snap || !lk_lake_snapshot_exists(l, s->con, snap))
        return 0; /* an expired snapshot: the full load says so */
    *cat = now;
    return 1;
}

/* While a lake view's query is rewritten to read at a past snapshot: the
 * snapshot its lake tables are read at (unless the query says AT itself). */
static int64_t view_snapshot_at = -1;

/* Lake view `v` of `schema` as it was at snapshot `snap`: its stored query
 * (the lake's name for {DUCKLAKE_CATALOG}) with every lake table it reads
 * read at `snap`, its unqualified names resolved in the view's schema, as
 * DuckDB binds a view. */
static int view_at(char **out, tarn_session *s, lk_lake *l, const char *schema, const lk_view *v,
                   int64_t snap)
{
    tarn_buf q = {0}, alias = {0};
    quote_ident(&alias, l->alias);
    const char *tag = "{DUCKLAKE_CATALOG}", *p = v->sql, *hit;
    buf_puts(&q, "SELECT * FROM (");
    while ((hit = strstr(p, tag)) != NULL) {
        buf_append(&q, p, (size_t)(hit - p));
        buf_puts(&q, buf_cstr(&alias));
        p = hit + strlen(tag);
    }
    buf_puts(&q, p);
    buf_puts(&q, ") __tarn_view");
    if (v->aliases && *v->aliases)
        buf_printf(&q, "(%s)", v->aliases);
    char *use_lake = s->use_lake, *use_schema = s->use_schema;
    int64_t outer = view_snapshot_at;
    s->use_lake = l->alias;
    s->use_schema = (char *)schema;
    view_snapshot_at = snap;
    int rc = rewrite_reads(out, s, buf_cstr(&q));
    view_snapshot_at = outer;
    s->use_lake = use_lake;
    s->use_schema = use_schema;
    buf_free(&q);
    buf_free(&alias);
    return rc;
}

/* Whether tokens hold an AT ( … ) clause. */
static int has_at_clause(const sql_tokens *tk)
{
    for (size_t i = 0; i + 1 < tk->n; i++)
        if (sql_tok_is_kw(&tk->toks[i], "AT") && sql_tok_is_op(&tk->toks[i + 1], "("))
            return 1;
    return 0;
}

int session_view_rewrite(void *ctx, char **out, lk_lake *l, const char *schema, const char *sql)
{
    tarn_session *s = ctx;
    *out = NULL;
    sql_tokens tk;
    int rc = sql_tokenize(&tk, sql);
    if (rc)
        return rc;
    int at = has_at_clause(&tk);
    sql_tokens_free(&tk);
    if (!at)
        return 0; /* a view without AT reads the tables' views, which follow commits */
    /* an AT clause names a fixed snapshot: its scan never changes */
    char *use_lake = s->use_lake, *use_schema = s->use_schema;
    int64_t outer = view_snapshot_at;
    s->use_lake = l->alias;
    s->use_schema = (char *)schema;
    view_snapshot_at = -1;
    rc = rewrite_reads(out, s, sql);
    view_snapshot_at = outer;
    s->use_lake = use_lake;
    s->use_schema = use_schema;
    return rc;
}

/* The scan of schema.name at snapshot `snap` (-1: the session's view). */
/* (*added, when given, gets the virtual columns the scan adds.) */
static int table_scan(char **out, tarn_session *s, lk_lake *l, const char *schema, const char *name,
                      int64_t snap, int flags, int *added, const lk_prune *prune)
{
    const lk_catalog *cat = lk_txn_catalog(l);
    if (snap >= 0 && !unchanged_since(&cat, s, l, schema, name, snap)) {
        int rc = lk_lake_catalog_at(&cat, l, s->con, snap);
        if (rc)
            return rc;
    }
    lk_schema *sc = lk_catalog_schema((lk_catalog *)cat, schema);
    const lk_table *t = sc ? lk_catalog_table(cat, sc->id, name) : NULL;
    const lk_view *v =
        sc && !t && snap >= 0 ? lk_catalog_view((lk_catalog *)cat, sc->id, name) : NULL;
    int rc;
    if (v)
        rc = view_at(out, s, l, sc->name, v, snap);
    else if (!t)
        rc = snap >= 0 ? tarn_error_set(TARN_ENOTFOUND,
                                        "Catalog Error: Table with name %s does not exist at "
                                        "version %lld of lake \"%s\"",
                                        name, (long long)snap, l->alias)
                       : TARN_ENOTFOUND;
    else
        rc = lk_scan_sql_pruned(out, l, s->con, cat, t, snap, flags, prune);
    if (!rc && added)
        *added |= lk_scan_virtual_flags(t, flags);
    return rc;
}

static void emit_subquery(tarn_buf *b, const char *scan, const char *name, int aliased)
{
    buf_printf(b, "(%s)", scan);
    if (!aliased) {
        buf_puts(b, " AS ");
        quote_ident(b, name);
    }
}

/* Whether t is a reserved word that cannot name a table unquoted: in
 * `FROM t AT (…)` FROM is not a table aliased t. */
static int reserved_word(const sql_token *t)
{
    static const char *const WORDS[] = {
        "FROM", "JOIN", "SELECT", "WHERE", "ON",       "USING",   "INTO",   "WITH",  "AS",
        "AND",  "OR",   "NOT",    "IN",    "BY",       "CASE",    "WHEN",   "THEN",  "ELSE",
        "END",  "ALL",  "UNION",  "TABLE", "DISTINCT", "LATERAL", "UPDATE", "DELETE"};
    if (t->type != SQL_TOK_IDENT)
        return 0;
    for (size_t k = 0; k < sizeof(WORDS) / sizeof(WORDS[0]); k++)
        if (sql_tok_is_kw(t, WORDS[k]))
            return 1;
    return 0;
}

/* Whether the statement names a column through the table's name with
 * more than one part (lake.t.c, s.t.c): such a reference reads the view,
 * and stops reading once the table is a subquery. */
static int qualified_through(const sql_tokens *tk, const qname *q, const char *name)
{
    for (size_t k = 1; k + 1 < tk->n; k++)
        if ((k < q->start || k >= q->end) && sql_tok_is_op(&tk->toks[k - 1], ".") &&
            sql_tok_is_op(&tk->toks[k + 1], ".") && strcasecmp(tk->toks[k].text, name) == 0)
            return 1;
    return 0;
}

/* The pruning terms (prune_terms.h) of the WHERE clause right after the
 * table reference at q (its alias, when it has one, at [alias_at,
 * alias_end) before an AT clause, or at `after`): none unless the table is
 * the FROM clause's only source and its columns keep their names; with
 * `order`, the block's top-N order too. */
static void where_terms(lk_prune *out, const sql_tokens *tk, const qname *q, const char *name,
                        size_t alias_at, size_t alias_end, size_t after, int order)
{
    const char *qualifier = name;
    size_t w = after;
    if (alias_end != alias_at) {
        qualifier =
            tk->toks[sql_tok_is_kw(&tk->toks[alias_at], "AS") ? alias_at + 1 : alias_at].text;
    } else if (session_alias_follows(tk, after)) {
        int as = sql_tok_is_kw(&tk->toks[after], "AS");
        qualifier = tk->toks[after + as].text;
        w = after + as + 1;
    }
    if (qualified_through(tk, q, name))
        return;
    if (w < tk->n && sql_tok_is_kw(&tk->toks[w], "WHERE")) {
        session_prune_terms(out, tk, w, qualifier);
        session_prune_limit(out, tk, w);
    }
    if (order) /* (file_index and the like keep the files' order) */
        session_prune_order(out, tk, w, qualifier);
}

/* Whether the session's view of lake table schema.name is the one that
 * fails when read (views.h): a filtered read keeps reading that view, so
 * it fails with the same error naming the table and the file. */
static int broken_now(lk_lake *l, const char *schema, const char *name)
{
    const lk_catalog *cat = lk_txn_catalog(l);
    lk_schema *sc = lk_catalog_schema((lk_catalog *)cat, schema);
    const lk_table *t = sc ? lk_catalog_table(cat, sc->id, name) : NULL;
    return t && lk_lake_view_broken(l, t->id);
}

/* Tries the table rewrites at token i; returns the token index after the
 * rewritten construct, or i when nothing was rewritten. */
static int rewrite_table(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk,
                         const char *sql, size_t i, virt_state *v)
{
    qname q;
    *next = i;
    if (reserved_word(&tk->toks[i]) || !session_qname(tk, i, &q))
        return 0;
    size_t e = q.end;
    /* the alias may come before the AT clause: lake.t AS o AT (…) */
    size_t alias_at = e, alias_end = e;
    if (e + 1 < tk->n && sql_tok_is_kw(&tk->toks[e], "AS") &&
        (tk->toks[e + 1].type == SQL_TOK_IDENT || tk->toks[e + 1].type == SQL_TOK_QIDENT))
        alias_end = e + 2;
    else if (e < tk->n && session_alias_follows(tk, e) && !sql_tok_is_kw(&tk->toks[e], "AT"))
        alias_end = e + 1;
    if (alias_end != e && alias_end + 1 < tk->n && sql_tok_is_kw(&tk->toks[alias_end], "AT") &&
        sql_tok_is_op(&tk->toks[alias_end + 1], "("))
        e = alias_end;
    else
        alias_end = alias_at;
    int has_at =
        e + 1 < tk->n && sql_tok_is_kw(&tk->toks[e], "AT") && sql_tok_is_op(&tk->toks[e + 1], "(");
    int in_view = view_snapshot_at >= 0;
    int may_prune = v->prune && !in_view && i > 0 && sql_tok_is_kw(&tk->toks[i - 1], "FROM");
    /* a table is named after FROM, JOIN or ','; elsewhere (SELECT count(*)
     * FROM t AT (…): the keyword FROM itself) it is not a table */
    if (!in_from_position(tk, i) || (!has_at && !in_view && !v->virt && !may_prune))
        return 0;
    const char *schema = NULL, *name = NULL;
    lk_lake *l = session_resolve(s, &q, &schema, &name, 0);
    if (!l)
        return 0;
    int64_t snap = !has_at && in_view ? view_snapshot_at : -1;
    size_t after = e;
    if (has_at) {
        size_t close = sql_tokens_close_paren(tk, e + 1);
        int rc = at_snapshot(&snap, s, l, tk, sql, e + 1, close);
        if (rc)
            return rc;
        after = close + 1;
    }
    lk_prune prune = {0};
    if (may_prune && !broken_now(l, schema, name))
        where_terms(&prune, tk, &q, name, alias_at, alias_end, after, !v->virt);
    if (!has_at && !in_view && !v->virt && !prune.n && !prune.order_column) {
        lk_prune_free(&prune); /* (alternatives dropped again leave the array) */
        return 0;
    }
    char *scan = NULL;
    int rc = table_scan(&scan, s, l, schema, name, snap, v->virt, &v->added, &prune);
    lk_prune_free(&prune);
    if (rc == TARN_ENOTFOUND && !has_at) {
        tarn_error_clear();
        return 0; /* not a lake table (a CTE in a view): let DuckDB resolve it */
    }
    if (rc)
        return rc;
    if (alias_end != alias_at) {
        char *alias = session_token_text(tk, sql, alias_at, alias_end);
        buf_printf(b, "(%s) %s", scan, alias);
        free(alias);
    } else {
        emit_subquery(b, scan, name, session_alias_follows(tk, after));
    }
    free(scan);
    *next = after;
    return 0;
}

static int rewrite_function(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk,
                            const char *sql, size_t i, virt_state *v)
{
    *next = i;
    const sql_token *t = &tk->toks[i];
    session_fnform form;
    const char *fn = t->text;
    size_t open = i + 1;
    if (session_fnform_at(&form, s, tk, i)) {
        fn = form.fn;
        open = form.open;
    } else if (t->type != SQL_TOK_IDENT || strncasecmp(t->text, "ducklake_", 9) != 0 ||
               i + 1 >= tk->n || !sql_tok_is_op(&tk->toks[i + 1], "(") ||
               (i > 0 && sql_tok_is_op(&tk->toks[i - 1], "."))) {
        /* (db.ducklake_metadata (key, value) is a table, not a call) */
        return 0;
    }
    size_t close = sql_tokens_close_paren(tk, open);
    if (close >= tk->n)
        return 0;
    lk_args args;
    int rc = session_args_parse(&args, s, tk, sql, open + 1, close);
    if (rc)
        return rc;
    if (form.lake)
        session_fnform_args(&form, &args);
    char *sub = NULL;
    rc = session_function_sql(&sub, s, fn, &args, v->virt);
    lk_args_free(&args);
    if (rc == TARN_ENOTFOUND && !sub && !tarn_error_last()[0])
        return 0; /* not one of ours */
    if (rc)
        return rc;
    /* the columns of its result named like virtual ones: the feeds of
     * insertions and deletions add them, the others have them for real */
    if (strcasecmp(t->text, "ducklake_table_insertions") == 0 ||
        strcasecmp(t->text, "ducklake_table_deletions") == 0)
        v->added |= v->virt & (LK_SCAN_ROWID | LK_SCAN_SNAPSHOT);
    else if (strcasecmp(t->text, "ducklake_table_changes") == 0)
        v->real |= LK_SCAN_ROWID | LK_SCAN_SNAPSHOT;
    else if (strcasecmp(t->text, "ducklake_snapshots") == 0)
        v->real |= LK_SCAN_SNAPSHOT;
    buf_printf(b, "(%s)", sub);
    free(sub);
    *next = close + 1;
    return 0;
}

/* DESCRIBE lake.table: DuckDB's description of the view, with the
 * table's own defaults and NOT NULL flags. */
static int rewrite_describe(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk,
                            const char *sql, size_t i)
{
    qname q;
    *next = i;
    if (!sql_tok_is_kw(&tk->toks[i], "DESCRIBE") || !session_qname(tk, i + 1, &q))
        return 0;
    if (q.end < tk->n && !sql_tok_is_op(&tk->toks[q.end], ")") &&
        !sql_tok_is_op(&tk->toks[q.end], ";"))
        return 0;
    const char *schema = NULL, *name = NULL;
    lk_lake *l = session_resolve(s, &q, &schema, &name, 0);
    if (!l)
        return 0;
    char *target = session_token_text(tk, sql, q.start, q.end);
    buf_printf(b,
               "SELECT d.column_name, d.column_type, COALESCE(__tarn_o.nul, d.\"null\") AS "
               "\"null\", d.\"key\", COALESCE(__tarn_o.dflt, d.\"default\") AS \"default\", "
               "d.extra FROM (SELECT *, row_number() OVER () AS __tarn_n FROM (DESCRIBE %s)) d "
               "LEFT JOIN ",
               target);
    free(target);
    rewrite_column_facts(b, s);
    buf_puts(b, " ON __tarn_o.cat = ");
    quote_literal(b, l->alias);
    buf_puts(b, " AND __tarn_o.sch = ");
    quote_literal(b, schema);
    buf_puts(b, " AND __tarn_o.tbl = ");
    quote_literal(b, name);
    buf_puts(b, " AND __tarn_o.col = d.column_name ORDER BY d.__tarn_n");
    *next = q.end;
    return 0;
}

/* A bare `*` of a select list. With a rowid scan in the statement it would
 * also show the scan's rowid column, which DuckDB's * never shows. */
static int star_in_select_list(const sql_tokens *tk, size_t i)
{
    if (i == 0 || !sql_tok_is_op(&tk->toks[i], "*"))
        return 0;
    const sql_token *p = &tk->toks[i - 1];
    if (!sql_tok_is_kw(p, "SELECT") && !sql_tok_is_kw(p, "DISTINCT") && !sql_tok_is_op(p, ","))
        return 0;
    return i + 1 == tk->n || sql_tok_is_kw(&tk->toks[i + 1], "FROM") ||
           sql_tok_is_op(&tk->toks[i + 1], ",");
}

/* The rewrite of what starts at token i into *piece, *next past it; *next
 * stays i when nothing there is rewritten. */
static int rewrite_piece(size_t *next, tarn_buf *piece, tarn_session *s, const sql_tokens *tk,
                         const char *sql, size_t i, virt_state *v)
{
    int rc = rewrite_function(next, piece, s, tk, sql, i, v);
    if (!rc && *next == i)
        rc = rewrite_describe(next, piece, s, tk, sql, i);
    if (!rc && *next == i)
        rc = rewrite_catalog(next, piece, s, tk, i);
    if (!rc && *next == i)
        rc = rewrite_table(next, piece, s, tk, sql, i, v);
    return rc;
}

/* Rewrites `sql` (tokens `tk`) into *out. A bare `*` of a select list is
 * emitted as is and its place remembered in stars[] (*nstars): whether it
 * must leave virtual columns out is known only after the FROM that follows
 * it. */
static int rewrite_pass(char **out, tarn_session *s, const sql_tokens *tk, const char *sql,
                        virt_state *v, size_t **stars, size_t *nstars)
{
    int rc = 0;
    tarn_buf b = {0};
    size_t copied = 0; /* bytes of sql already emitted */
    for (size_t i = 0; i < tk->n && !rc;) {
        tarn_buf piece = {0};
        size_t next = i;
        rc = rewrite_piece(&next, &piece, s, tk, sql, i, v);
        if (!rc && next == i && v->virt && star_in_select_list(tk, i)) {
            buf_append(&b, sql + copied, tk->toks[i].start - copied);
            *stars = xrealloc(*stars, (*nstars + 1) * sizeof(size_t));
            (*stars)[(*nstars)++] = b.len;
            buf_putc(&b, '*');
            copied = tk->toks[i].start + tk->toks[i].len;
            i++;
        } else if (!rc && next != i) {
            buf_append(&b, sql + copied, tk->toks[i].start - copied);
            buf_append(&b, piece.ptr ? piece.ptr : "", piece.len);
            const sql_token *last = &tk->toks[next - 1];
            copied = last->start + last->len;
            i = next;
        } else {
            i++;
        }
        buf_free(&piece);
    }
    if (rc) {
        buf_free(&b);
        return rc;
    }
    buf_puts(&b, sql + copied);
    *out = buf_detach(&b);
    return 0;
}

/* `sql` with the `*` at each offset stars[] replaced by one that leaves
 * out the virtual columns `flags`. */
static char *replace_stars(const char *sql, const size_t *stars, size_t n, int flags)
{
    tarn_buf b = {0};
    size_t from = 0;
    for (size_t k = 0; k < n; k++) {
        buf_append(&b, sql + from, stars[k] - from);
        star_without(&b, flags);
        from = stars[k] + 1;
    }
    buf_puts(&b, sql + from);
    return buf_detach(&b);
}

static int rewrite_reads_as(char **out, tarn_session *s, const char *sql, int now);

int rewrite_reads(char **out, tarn_session *s, const char *sql)
{
    return rewrite_reads_as(out, s, sql, 0);
}

int rewrite_reads_now(char **out, tarn_session *s, const char *sql)
{
    return rewrite_reads_as(out, s, sql, 1);
}

static int rewrite_reads_as(char **out, tarn_session *s, const char *sql, int now)
{
    *out = NULL;
    /* with no lake attached only DuckLake's log answers for DuckDB */
    if (!s->lakes && !strcasestr(sql, "duckdb_logs")) {
        *out = xstrdup(sql);
        return 0;
    }
    sql_tokens tk;
    int rc = sql_tokenize(&tk, sql);
    if (rc)
        return rc;
    virt_state v = {.virt = mentions_virtual(&tk), .prune = now};
    if (now && !v.virt && session_fold_aggregates(out, s, &tk, sql)) {
        sql_tokens_free(&tk);
        return 0;
    }
    size_t *stars = NULL, nstars = 0;
    rc = rewrite_pass(out, s, &tk, sql, &v, &stars, &nstars);
    /* the `*`s leave out the virtual columns the statement's lake tables
     * and feeds added, unless another source has them for real */
    int star = v.added & ~v.real & (LK_SCAN_ROWID | LK_SCAN_VIRTUAL);
    if (!rc && star && nstars) {
        char *with = replace_stars(*out, stars, nstars, star);
        free(*out);
        *out = with;
    }
    free(stars);
    sql_tokens_free(&tk);
    return rc;
}

/* ---- the arguments of a DuckLake function call ---- */

static void push(char ***arr, size_t *n, char *v)
{
    *arr = xrealloc(*arr, (*n + 1) * sizeof(char *));
    (*arr)[(*n)++] = v;
}

static int eval_text(char **out, tarn_session *s, const char *expr)
{
    if (quote_unliteral(out, expr))
        return 0; /* a plain string: no query */
    char *q = xasprintf("SELECT (%s)::VARCHAR", expr);
    int rc = duck_query_string(out, s->con, q);
    free(q);
    return rc;
}

int session_args_parse(lk_args *a, tarn_session *s, const sql_tokens *tk, const char *sql,
                       size_t from, size_t to)
{
    memset(a, 0, sizeof(*a));
    size_t i = from;
    while (i < to) {
        size_t start = i;
        i = sql_tokens_item_end(tk, i, to);
        const char *name = NULL;
        size_t vstart = start;
        /* name => value, and DuckDB's other spellings name := value, name = value */
        if (i - start >= 3 &&
            (sql_tok_is_op(&tk->toks[start + 1], "=>") ||
             sql_tok_is_op(&tk->toks[start + 1], ":=") ||
             sql_tok_is_op(&tk->toks[start + 1], "=")) &&
            (tk->toks[start].type == SQL_TOK_IDENT || tk->toks[start].type == SQL_TOK_QIDENT)) {
            name = tk->toks[start].text;
            vstart = start + 2;
        }
        char *expr = session_token_text(tk, sql, vstart, i);
        char *rewritten = NULL, *val = NULL;
        /* an argument may itself read the lake: (SELECT max(snapshot_id)
         * FROM ducklake_snapshots('lake')) */
        int rc = rewrite_reads(&rewritten, s, expr);
        if (!rc)
            rc = eval_text(&val, s, rewritten);
        free(expr);
        if (rc) {
            free(rewritten);
            lk_args_free(a);
            return rc;
        }
        if (!name) {
            a->pos_sql = xrealloc(a->pos_sql, (a->npos + 1) * sizeof(char *));
            a->pos_sql[a->npos] = rewritten;
            rewritten = NULL;
        }
        free(rewritten);
        if (name) {
            push(&a->names, &a->nnamed, xstrdup(name));
            a->values = xrealloc(a->values, a->nnamed * sizeof(char *));
            a->values[a->nnamed - 1] = val;
        } else {
            push(&a->pos, &a->npos, val);
        }
        if (i < to)
            i++; /* the comma */
    }
    return 0;
}
