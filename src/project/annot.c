/*
 * annot.c — the model annotation grammar (see annot.h).
 *
 * Each header line is read as: `--`, spaces, a keyword, then the keyword's
 * words. A line is an annotation when its first word is one of the five
 * keywords, and a *mistaken* annotation when that word is close to one
 * (a misspelling, wrong case, a trailing ':'): those are errors rather
 * than prose, because a silently ignored `-- materialise key=id` would
 * build the wrong table. Prose whose first word is nothing like a keyword
 * is a plain comment.
 */
#include "project/annot.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/cron.h"
#include "util/strdist.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const strategy_names[] = {"replace", "merge",       "append",
                                             "history", "incremental", "manual"};

const char *strategy_name(model_strategy s)
{
    return strategy_names[s];
}

static const char *const keywords[] = {"materialize", "partitioned", "data_test",
                                       "schedule",    "freshness",   "tags"};
#define NKEYWORDS (sizeof(keywords) / sizeof(keywords[0]))

static const char *const materialize_words[] = {
    "manual",   "append",     "history",           "incremental", "key=",    "track=",
    "deletes=", "watermark=", "on_schema_change=", "allow_empty", "writes=", "lookback="};
#define NMATERIALIZE_WORDS (sizeof(materialize_words) / sizeof(materialize_words[0]))

static const char *const test_kinds[] = {"unique", "not_null", "accepted_values", "relationships"};
#define NTEST_KINDS (sizeof(test_kinds) / sizeof(test_kinds[0]))

/* ---- small text helpers ---------------------------------------------- */

/* The closest of `words` to `w` within distance 2, or NULL. */
static const char *closest(const char *w, const char *const *words, size_t n)
{
    const char *best = NULL;
    int bestd = 3;
    for (size_t i = 0; i < n; i++) {
        char *bare = xstrdup(words[i]);
        size_t l = strlen(bare);
        if (l && bare[l - 1] == '=')
            bare[l - 1] = 0;
        int d = (int)str_distance(w, bare);
        free(bare);
        if (d < bestd) {
            bestd = d;
            best = words[i];
        }
    }
    return best;
}

static int is_ident(const char *s)
{
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (const char *p = s + 1; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return 0;
    return 1;
}

static int is_space_c(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Splits `s` at runs of whitespace. */
static void split_words(strlist *out, const char *s)
{
    while (*s) {
        while (is_space_c(*s))
            s++;
        const char *e = s;
        while (*e && !is_space_c(*e))
            e++;
        if (e > s)
            strlist_push_owned(out, xstrndup(s, (size_t)(e - s)));
        s = e;
    }
}

static char *trim_dup(const char *s, size_t n)
{
    while (n && is_space_c(*s)) {
        s++;
        n--;
    }
    while (n && is_space_c(s[n - 1]))
        n--;
    return xstrndup(s, n);
}

/* ---- the parse state ------------------------------------------------- */

typedef struct {
    model_annot *a;
    diag_list *d;
    const char *path;
    int line;
    int errors;
    /* flags seen on the materialize line, for the conflict checks */
    int f_manual, f_append, f_history, f_incremental, f_allow_empty;
} parser;

#define ERR(P, FIX, ...)                                                                           \
    do {                                                                                           \
        diag_add((P)->d, (P)->path, (P)->line, (FIX), __VA_ARGS__);                                \
        (P)->errors++;                                                                             \
    } while (0)

/* Parses a comma-separated identifier list (`what` names it in messages:
 * "key=", "track="...). */
static int parse_columns(parser *p, strlist *out, const char *what, const char *val)
{
    if (!*val) {
        ERR(p, "write the columns after '=' with commas and no spaces, e.g. key=id or key=a,b",
            "%s needs at least one column", what);
        return -1;
    }
    const char *s = val;
    for (;;) {
        const char *c = strchr(s, ',');
        size_t n = c ? (size_t)(c - s) : strlen(s);
        char *col = xstrndup(s, n);
        if (!*col) {
            ERR(p, "list the columns with commas and no spaces, e.g. key=a,b",
                "%s%s has an empty column name", what, val);
            free(col);
            return -1;
        }
        if (!is_ident(col)) {
            ERR(p, "columns in annotations are plain names: letters, digits and _",
                "'%s' in %s%s is not a column name", col, what, val);
            free(col);
            return -1;
        }
        if (strlist_find(out, col) >= 0) {
            ERR(p, "name each column once", "column '%s' is listed twice in %s%s", col, what, val);
            free(col);
            return -1;
        }
        strlist_push_owned(out, col);
        if (!c)
            return 0;
        s = c + 1;
    }
}

/* writes=a.b,c.d (manual): the other tables a manual script writes, each
 * schema.table, kept lower case. */
static int parse_writes(parser *p, strlist *out, const char *val)
{
    const char *s = val;
    for (;;) {
        const char *c = strchr(s, ',');
        size_t n = c ? (size_t)(c - s) : strlen(s);
        char *name = xstrndup(s, n);
        char *dot = strchr(name, '.');
        int ok = dot != NULL;
        if (ok) {
            *dot = 0;
            ok = is_ident(name) && is_ident(dot + 1);
            *dot = '.';
        }
        if (!ok) {
            ERR(p,
                "list the tables with commas and no spaces, each schema.table, e.g. "
                "writes=ops.audit_log,ops.audit_errors",
                "'%s' in writes=%s is not a table: expected schema.table", name, val);
            free(name);
            return -1;
        }
        for (char *q = name; *q; q++)
            *q = (char)tolower((unsigned char)*q);
        if (strlist_find(out, name) < 0)
            strlist_push(out, name);
        free(name);
        if (!c)
            return 0;
        s = c + 1;
    }
}

/* schema.table → the two parts; an error for anything else. */
static int parse_target(parser *p, const char *tok)
{
    if (p->a->target_schema) {
        ERR(p, "give one target per model", "second target '%s' (already %s.%s)", tok,
            p->a->target_schema, p->a->target_table);
        return -1;
    }
    const char *dot = strchr(tok, '.');
    char *schema = dot ? xstrndup(tok, (size_t)(dot - tok)) : NULL;
    const char *table = dot ? dot + 1 : NULL;
    if (!dot || strchr(table, '.') || !is_ident(schema) || !is_ident(table)) {
        ERR(p,
            "write the target as schema.table (plain names); the lake is the one "
            "config/catalog.sql attaches",
            "'%s' is not a target: expected schema.table", tok);
        free(schema);
        return -1;
    }
    p->a->target_schema = schema;
    p->a->target_table = xstrdup(table);
    return 0;
}

static void unknown_materialize_word(parser *p, const char *tok)
{
    char *name = xstrdup(tok);
    char *eq = strchr(name, '=');
    if (eq)
        *eq = 0;
    const char *near = closest(name, materialize_words, NMATERIALIZE_WORDS);
    char *fix = near ? xasprintf("did you mean '%s'?", near)
                     : xstrdup("options are: schema.table, key=a,b, append, history, track=a,b, "
                               "deletes=close, incremental, watermark=col, lookback=2h, "
                               "on_schema_change=fail|warn|"
                               "sync|ignore, manual");
    ERR(p, fix, "unknown materialize option '%s'", tok);
    free(fix);
    free(name);
}

/* lookback= of an incremental model: how far before the covered-through
 * mark a build re-reads, as a duration (90s, 30m, 2h, 7d) for a date or
 * timestamp watermark, or a plain number for a numeric one (the build
 * checks it against the column's type). */
static void incremental_lookback(parser *p, const char *val)
{
    model_annot *a = p->a;
    char *end = NULL;
    long long n = isdigit((unsigned char)*val) ? strtoll(val, &end, 10) : -1;
    static const struct {
        char unit;
        long long s;
    } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
    long long mult = -1;
    if (n >= 0 && *end && !end[1])
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (*end == units[i].unit)
                mult = units[i].s;
    if (a->inc_lookback)
        ERR(p, "give lookback= once", "lookback= is given twice");
    else if (n < 0 || n > 100000000 || (*end && mult < 0))
        ERR(p,
            "write lookback=2h (s, m, h or d) for a date or timestamp watermark, or "
            "lookback=100 for a numeric one",
            "'%s' is not a lookback for lookback=", val);
    else {
        a->inc_lookback = xstrdup(val);
        a->inc_lookback_s = *end ? n * mult : -1;
    }
}

static void materialize_option(parser *p, const char *tok)
{
    model_annot *a = p->a;
    const char *eq = strchr(tok, '=');
    char *name = xstrndup(tok, (size_t)(eq - tok));
    const char *val = eq + 1;
    if (strcmp(name, "key") == 0) {
        if (a->key.n)
            ERR(p, "list every key column in one key=a,b", "key= is given twice");
        else
            parse_columns(p, &a->key, "key=", val);
    } else if (strcmp(name, "track") == 0) {
        if (a->track.n)
            ERR(p, "list every tracked column in one track=a,b", "track= is given twice");
        else
            parse_columns(p, &a->track, "track=", val);
    } else if (strcmp(name, "deletes") == 0) {
        if (strcmp(val, "close") != 0)
            ERR(p, "the only value is deletes=close", "deletes=%s is not a deletes mode", val);
        else if (a->deletes_close)
            ERR(p, "remove the repeated option", "deletes=close is given twice");
        else
            a->deletes_close = 1;
    } else if (strcmp(name, "watermark") == 0) {
        if (a->watermark)
            ERR(p, "give one watermark column", "watermark= is given twice");
        else if (!is_ident(val))
            ERR(p, "write watermark=<column>, e.g. watermark=updated_at",
                "'%s' is not a column name for watermark=", val);
        else
            a->watermark = xstrdup(val);
    } else if (strcmp(name, "lookback") == 0) {
        incremental_lookback(p, val);
    } else if (strcmp(name, "writes") == 0) {
        if (a->writes.n)
            ERR(p, "list every table in one writes=a.b,c.d", "writes= is given twice");
        else
            parse_writes(p, &a->writes, val);
    } else if (strcmp(name, "on_schema_change") == 0) {
        if (a->on_schema_change)
            ERR(p, "give on_schema_change= once", "on_schema_change= is given twice");
        else if (strcmp(val, "fail") && strcmp(val, "warn") && strcmp(val, "sync") &&
                 strcmp(val, "ignore"))
            ERR(p, "write on_schema_change=fail, warn, sync or ignore",
                "'%s' is not an on_schema_change mode", val);
        else
            a->on_schema_change = xstrdup(val);
    } else if (!*name) {
        ERR(p, "write options as name=value with no spaces around '=', e.g. key=id",
            "'%s' has no option name before '='", tok);
    } else {
        unknown_materialize_word(p, tok);
    }
    free(name);
}

static void materialize_flag(parser *p, int *flag, const char *tok)
{
    if (*flag)
        ERR(p, "remove the repeated word", "'%s' is given twice", tok);
    *flag = 1;
}

/* history: key= and track= are columns of the SELECT, apart from each
 * other, and none is a column history adds itself. */
static void history_columns_check(parser *p)
{
    static const char *const added[] = {"valid_from", "valid_to", "is_current"};
    const model_annot *a = p->a;
    for (size_t i = 0; i < a->track.n; i++)
        for (size_t j = 0; j < a->key.n; j++)
            if (strcasecmp(a->track.items[i], a->key.items[j]) == 0) {
                char *fix = xasprintf("drop %s from track=: the key identifies the row, a "
                                      "changed key is a new row",
                                      a->track.items[i]);
                ERR(p, fix, "track= lists key column '%s'", a->track.items[i]);
                free(fix);
                return;
            }
    for (size_t k = 0; k < 3; k++) {
        int in_key = strlist_find(&a->key, added[k]) >= 0;
        if (in_key || strlist_find(&a->track, added[k]) >= 0) {
            char *fix =
                xasprintf("rename the column in the SELECT and in %s", in_key ? "key=" : "track=");
            ERR(p, fix, "'%s' in %s is a column history adds (valid_from, valid_to, is_current)",
                added[k], in_key ? "key=" : "track=");
            free(fix);
            return;
        }
    }
}

static void parse_materialize(parser *p, const char *rest)
{
    model_annot *a = p->a;
    if (a->materialize_line) {
        ERR(p, "put every option on one '-- materialize' line",
            "second '-- materialize' line (the first is line %d)", a->materialize_line);
        return;
    }
    a->materialize_line = p->line;
    int before = p->errors;
    strlist w = {0};
    split_words(&w, rest);
    /* One error per line: after the first mistake the rest of the line is
     * not worth guessing at. */
    for (size_t i = 0; i < w.n && p->errors == before; i++) {
        const char *tok = w.items[i];
        if (strchr(tok, '='))
            materialize_option(p, tok);
        else if (strcmp(tok, "manual") == 0)
            materialize_flag(p, &p->f_manual, tok);
        else if (strcmp(tok, "append") == 0)
            materialize_flag(p, &p->f_append, tok);
        else if (strcmp(tok, "history") == 0)
            materialize_flag(p, &p->f_history, tok);
        else if (strcmp(tok, "incremental") == 0)
            materialize_flag(p, &p->f_incremental, tok);
        else if (strcmp(tok, "allow_empty") == 0)
            materialize_flag(p, &p->f_allow_empty, tok);
        else if (strcmp(tok, "key") == 0 || strcmp(tok, "track") == 0 ||
                 strcmp(tok, "deletes") == 0 || strcmp(tok, "watermark") == 0 ||
                 strcmp(tok, "on_schema_change") == 0 || strcmp(tok, "lookback") == 0) {
            char *fix = xasprintf("write %s=<value> with no spaces around '='", tok);
            ERR(p, fix, "'%s' needs a value", tok);
            free(fix);
        } else if (strchr(tok, '.') || strstr(tok, "://"))
            parse_target(p, tok);
        else
            unknown_materialize_word(p, tok);
    }
    strlist_free(&w);
    if (p->errors > before)
        return;
    /* Conflicts within the line. */
    if (p->f_manual) {
        const char *other = p->f_append           ? "append"
                            : p->f_history        ? "history"
                            : p->f_incremental    ? "incremental"
                            : a->key.n            ? "key="
                            : a->track.n          ? "track="
                            : a->deletes_close    ? "deletes="
                            : a->watermark        ? "watermark="
                            : a->on_schema_change ? "on_schema_change="
                            : p->f_allow_empty    ? "allow_empty"
                                                  : NULL;
        if (other) {
            char *fix = xasprintf("drop '%s', or drop 'manual' to let tarn write the table", other);
            ERR(p, fix, "'manual' cannot be combined with '%s': a manual model writes its own SQL",
                other);
            free(fix);
        }
        a->strategy = STRAT_MANUAL;
        return;
    }
    if (a->writes.n)
        ERR(p,
            "drop writes=, or make the model '-- materialize manual writes=…': tarn writes "
            "a managed model's table and nothing else",
            "writes= is for manual models");
    if (p->f_append && a->key.n)
        ERR(p, "use key= to merge rows by key, or append to insert every row, not both",
            "'append' conflicts with 'key=': append inserts, key= merges");
    if (p->f_history && !a->key.n)
        ERR(p, "add key=<column> naming the entity's key, e.g. key=customer_id history",
            "'history' needs key=");
    if (p->f_history)
        history_columns_check(p);
    if (p->f_history && p->f_append)
        ERR(p, "drop 'append': history already keeps every version",
            "'history' conflicts with 'append'");
    if ((a->track.n || a->deletes_close) && !p->f_history)
        ERR(p, "add 'history' (with key=), or drop track=/deletes=",
            "track= and deletes= only apply to 'history'");
    if (p->f_incremental && !a->watermark)
        ERR(p, "add watermark=<column>, e.g. incremental watermark=updated_at",
            "'incremental' needs watermark=");
    if (a->watermark && !p->f_incremental)
        ERR(p, "add 'incremental', or drop watermark=", "watermark= only applies to 'incremental'");
    if (a->inc_lookback && !p->f_incremental)
        ERR(p,
            "add 'incremental watermark=col', or drop lookback= (a partitioned model takes "
            "lookback=N on its '-- partitioned' line)",
            "lookback= on the materialize line only applies to 'incremental'");
    if (p->f_incremental && (p->f_append || p->f_history))
        ERR(p, "incremental appends (or merges with key=) by itself; drop append/history",
            "'incremental' conflicts with '%s'", p->f_append ? "append" : "history");
    /* allow_empty lifts the empty-result check, which only merge and
     * history builds make (an empty replace or append is what it says). */
    if (p->f_allow_empty && !a->key.n)
        ERR(p, "drop 'allow_empty': only a merge (key=) or history build refuses an empty SELECT",
            "'allow_empty' only applies to key= and history");
    else if (p->f_allow_empty && p->f_incremental)
        ERR(p, "drop 'allow_empty': an incremental build takes an empty slice as no new rows",
            "'allow_empty' does not apply to 'incremental'");
    a->allow_empty = p->f_allow_empty;
    if (p->f_history)
        a->strategy = STRAT_HISTORY;
    else if (p->f_incremental)
        a->strategy = STRAT_INCREMENTAL;
    else if (a->key.n)
        a->strategy = STRAT_MERGE;
    else if (p->f_append)
        a->strategy = STRAT_APPEND;
    else
        a->strategy = STRAT_REPLACE;
}

/* start=<date or time> (the first slice a first run builds) and
 * lookback=N (the slices before the current one a run rebuilds too), for
 * the time grains. */
static void partition_option(parser *p, model_annot *a, const char *tok)
{
    if (a->grain == GRAIN_DYNAMIC) {
        ERR(p, "a dynamic model's slices are the column's values: drop it",
            "'%.*s' applies to hourly, daily, weekly and monthly partitions",
            (int)strcspn(tok, "="), tok);
        return;
    }
    if (strncmp(tok, "start=", 6) == 0) {
        int64_t t;
        if (a->partition_start)
            ERR(p, "give start= once", "start= is given twice");
        else if (partition_parse_time(&t, tok + 6) != 0) {
            tarn_error_clear();
            ERR(p, "write start=2024-01-01 (a date, or 2024-01-01T06 for an hour), no spaces",
                "'%s' is not a start date for start=", tok + 6);
        } else
            a->partition_start = xstrdup(tok + 6);
        return;
    }
    const char *v = tok + 9;
    char *end = NULL;
    long n = *v ? strtol(v, &end, 10) : -1;
    if (!*v || *end || n < 0 || n > 1000)
        ERR(p, "write lookback=N, N the number of slices before the current one (0 to 1000)",
            "'%s' is not a number of slices for lookback=", v);
    else
        a->lookback = (int)n;
}

static void parse_partitioned(parser *p, const char *rest)
{
    model_annot *a = p->a;
    if (a->partitioned_line) {
        ERR(p, "a model has one partitioning",
            "second '-- partitioned' line (the first is line %d)", a->partitioned_line);
        return;
    }
    a->partitioned_line = p->line;
    int errors_before = p->errors;
    strlist w = {0};
    split_words(&w, rest);
    static const char *const grains[] = {"hourly", "daily", "weekly", "monthly", "dynamic"};
    const char *usage = "write '-- partitioned hourly|daily|weekly|monthly column=<timestamp "
                        "column> [start=2024-01-01] [lookback=N]' or '-- partitioned dynamic "
                        "column=<column>'";
    if (w.n == 0) {
        ERR(p, usage, "'-- partitioned' needs a grain and column=");
    } else if (grain_parse(&a->grain, w.items[0]) != 0) {
        const char *near = closest(w.items[0], grains, 5);
        char *fix = near ? xasprintf("did you mean '%s'?", near) : xstrdup(usage);
        ERR(p, fix, "'%s' is not a partition grain (hourly, daily, weekly, monthly, dynamic)",
            w.items[0]);
        free(fix);
    } else {
        for (size_t i = 1; i < w.n && p->errors == errors_before; i++) {
            const char *tok = w.items[i];
            if (strncmp(tok, "column=", 7) == 0) {
                if (a->partition_column)
                    ERR(p, usage, "column= is given twice");
                else if (!is_ident(tok + 7))
                    ERR(p, usage, "'%s' is not a column name for column=", tok + 7);
                else
                    a->partition_column = xstrdup(tok + 7);
            } else if (strcmp(tok, "column") == 0) {
                ERR(p, "write column=<name> with no spaces around '='", "'column' needs a value");
            } else if (strncmp(tok, "start=", 6) == 0 || strncmp(tok, "lookback=", 9) == 0) {
                partition_option(p, a, tok);
            } else {
                ERR(p, usage, "unknown partitioned option '%s'", tok);
            }
        }
        if (!a->partition_column && p->errors == errors_before)
            ERR(p, usage, "'-- partitioned %s' needs column=<name>", w.items[0]);
    }
    strlist_free(&w);
}

static void test_push(model_annot *a, data_test *t)
{
    a->tests = xrealloc(a->tests, (a->ntests + 1) * sizeof(*a->tests));
    a->tests[a->ntests++] = *t;
}

/* Takes a `severity=warn|error` word out of a data_test line (anywhere
 * on it: accepted_values' values would otherwise take it in). Returns the
 * line without it (caller frees); *warn is set, or an error reported. */
static char *take_severity(parser *p, const char *rest, int *warn)
{
    static const char kw[] = "severity";
    const char *at = rest;
    *warn = 0;
    while ((at = strstr(at, kw)) != NULL) {
        int starts = at == rest || isspace((unsigned char)at[-1]);
        const char *v = at + strlen(kw);
        if (starts && (*v == '=' || isspace((unsigned char)*v) || !*v))
            break;
        at = v;
    }
    if (!at)
        return xstrdup(rest);
    const char *v = at + strlen(kw), *end = v;
    while (*end && !isspace((unsigned char)*end))
        end++;
    const char *fix = "write severity=warn (a failure is reported, the build goes on) or "
                      "severity=error (the default: a failure fails the build), no spaces";
    if (*v != '=')
        ERR(p, fix, "'severity' needs a value");
    else if ((size_t)(end - v - 1) == 4 && strncmp(v + 1, "warn", 4) == 0)
        *warn = 1;
    else if (!((size_t)(end - v - 1) == 5 && strncmp(v + 1, "error", 5) == 0))
        ERR(p, fix, "unknown severity '%.*s'", (int)(end - v - 1), v + 1);
    tarn_buf b = {0};
    buf_append(&b, rest, (size_t)(at - rest));
    buf_puts(&b, end);
    return buf_detach(&b);
}

static void parse_data_test(parser *p, const char *line)
{
    data_test t = {.line = p->line};
    int errors_before = p->errors;
    char *rest = take_severity(p, line, &t.warn);
    strlist w = {0};
    split_words(&w, rest);
    if (p->errors != errors_before) {
        strlist_free(&w);
        free(rest);
        return;
    }
    const char *kind = w.n ? w.items[0] : "";
    const char *usage = "write one of: data_test unique <col>, data_test not_null <col>, "
                        "data_test accepted_values <col> = a,b, data_test relationships <col> -> "
                        "schema.table.col, data_test tests/<file>.sql";
    int ok = 0;
    if (!*kind) {
        ERR(p, usage, "'-- data_test' needs a test");
    } else if (strcmp(kind, "unique") == 0 || strcmp(kind, "not_null") == 0) {
        t.kind = kind[0] == 'u' ? DT_UNIQUE : DT_NOT_NULL;
        if (w.n != 2) {
            char *fix = xasprintf("write '-- data_test %s <column>'", kind);
            ERR(p, fix, "'data_test %s' takes one column%s", kind,
                t.kind == DT_UNIQUE ? " (or a,b for a composite key, no spaces)" : "");
            free(fix);
        } else if (t.kind == DT_NOT_NULL && !is_ident(w.items[1])) {
            ERR(p, "columns in annotations are plain names", "'%s' is not a column name",
                w.items[1]);
        } else {
            char *what = xasprintf("data_test %s ", kind);
            ok = parse_columns(p, &t.columns, what, w.items[1]) == 0;
            free(what);
        }
    } else if (strcmp(kind, "accepted_values") == 0) {
        t.kind = DT_ACCEPTED_VALUES;
        const char *body = strstr(rest, "accepted_values") + strlen("accepted_values");
        const char *eq = strchr(body, '=');
        char *col = eq ? trim_dup(body, (size_t)(eq - body)) : NULL;
        const char *fix = "write '-- data_test accepted_values <column> = a,b,c'";
        if (!eq || !is_ident(col)) {
            ERR(p, fix, "'data_test accepted_values' needs <column> = <values>");
        } else {
            strlist_push(&t.columns, col);
            const char *s = eq + 1;
            ok = 1;
            for (;;) {
                const char *c = strchr(s, ',');
                size_t n = c ? (size_t)(c - s) : strlen(s);
                char *v = trim_dup(s, n);
                size_t l = strlen(v);
                if (l >= 2 && v[0] == '\'' && v[l - 1] == '\'') {
                    memmove(v, v + 1, l - 2);
                    v[l - 2] = 0;
                }
                if (!*v && l == 0) {
                    ERR(p, fix, "accepted_values has an empty value");
                    free(v);
                    ok = 0;
                    break;
                }
                strlist_push_owned(&t.values, v);
                if (!c)
                    break;
                s = c + 1;
            }
        }
        free(col);
    } else if (strcmp(kind, "relationships") == 0) {
        t.kind = DT_RELATIONSHIPS;
        const char *body = strstr(rest, "relationships") + strlen("relationships");
        const char *arrow = strstr(body, "->");
        const char *fix = "write '-- data_test relationships <column> -> schema.table.column'";
        char *col = arrow ? trim_dup(body, (size_t)(arrow - body)) : NULL;
        char *ref = arrow ? trim_dup(arrow + 2, strlen(arrow + 2)) : NULL;
        char *d1 = ref ? strchr(ref, '.') : NULL;
        char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        if (!arrow || !is_ident(col) || !d1 || !d2 || strchr(d2 + 1, '.')) {
            ERR(p, fix, "'data_test relationships' needs <column> -> schema.table.column");
        } else {
            *d1 = *d2 = 0;
            if (!is_ident(ref) || !is_ident(d1 + 1) || !is_ident(d2 + 1)) {
                ERR(p, fix, "'%s.%s.%s' is not schema.table.column", ref, d1 + 1, d2 + 1);
            } else {
                strlist_push(&t.columns, col);
                t.ref_schema = xstrdup(ref);
                t.ref_table = xstrdup(d1 + 1);
                t.ref_column = xstrdup(d2 + 1);
                ok = 1;
            }
        }
        free(col);
        free(ref);
    } else if (strlen(kind) > 4 && strcmp(kind + strlen(kind) - 4, ".sql") == 0) {
        t.kind = DT_CUSTOM;
        if (w.n != 1)
            ERR(p, "write '-- data_test tests/<file>.sql' alone on the line",
                "a custom data test is one file path");
        else if (kind[0] == '/' || strstr(kind, ".."))
            ERR(p, "give the path relative to the project folder, e.g. tests/no_negatives.sql",
                "'%s' must be a path inside the project", kind);
        else {
            t.path = xstrdup(kind);
            ok = 1;
        }
    } else {
        const char *near = closest(kind, test_kinds, NTEST_KINDS);
        char *fix = near ? xasprintf("did you mean '%s'?", near) : xstrdup(usage);
        ERR(p, fix, "unknown data test '%s'", kind);
        free(fix);
    }
    strlist_free(&w);
    free(rest);
    if (ok) {
        test_push(p->a, &t);
    } else {
        strlist_free(&t.columns);
        strlist_free(&t.values);
        free(t.ref_schema);
        free(t.ref_table);
        free(t.ref_column);
        free(t.path);
    }
}

static const char SCHEDULE_FIX[] =
    "write '-- schedule \"<minute> <hour> <day> <month> <weekday>\"' in UTC: minute 0-59, hour "
    "0-23, day 1-31, month 1-12 or JAN-DEC, weekday 0-7 or SUN-SAT (0 and 7 are Sunday); each a "
    "value, a range a-b, '*', a step /n or a list, e.g. -- schedule \"0 6 * * 1-5\"";

/* A model is rebuilt on a cron schedule or when its last good build is
 * older than a freshness, never both: one rule says when it is due. */
static int second_rule(parser *p, const char *kw)
{
    model_annot *a = p->a;
    if (a->schedule_line || a->freshness_line) {
        int first = a->schedule_line ? a->schedule_line : a->freshness_line;
        const char *had = a->schedule_line ? "schedule" : "freshness";
        if (strcmp(had, kw) == 0)
            ERR(p, "a model has one schedule", "second '-- %s' line (the first is line %d)", kw,
                first);
        else
            ERR(p,
                "keep one of the two: a schedule says when to build, a freshness how old the "
                "last build may get",
                "'-- %s' and '-- %s' (line %d) exclude each other", kw, had, first);
        return 1;
    }
    return 0;
}

static void parse_schedule(parser *p, const char *rest)
{
    model_annot *a = p->a;
    if (second_rule(p, "schedule"))
        return;
    char *s = trim_dup(rest, strlen(rest));
    size_t l = strlen(s);
    if (l < 2 || s[0] != '"' || s[l - 1] != '"') {
        ERR(p, SCHEDULE_FIX, "the schedule must be a cron expression in double quotes");
        free(s);
        return;
    }
    char *expr = xstrndup(s + 1, l - 2);
    free(s);
    cron_spec spec;
    char why[200];
    if (cron_parse(&spec, expr, why, sizeof(why)) != 0) {
        ERR(p, SCHEDULE_FIX, "\"%s\" is not a valid schedule: %s", expr, why);
        free(expr);
        return;
    }
    a->schedule_line = p->line;
    a->schedule = expr;
}

/* `-- freshness 6h`: minutes (m), hours (h) or days (d), at least a
 * minute and at most a year. */
static void parse_freshness(parser *p, const char *rest)
{
    model_annot *a = p->a;
    const char *fix = "write '-- freshness <n><unit>' with unit m (minutes), h (hours) or d "
                      "(days), e.g. -- freshness 6h";
    if (second_rule(p, "freshness"))
        return;
    char *s = trim_dup(rest, strlen(rest));
    char *end = NULL;
    long n = strtol(s, &end, 10);
    long unit = !end || end == s        ? 0
                : strcmp(end, "m") == 0 ? 60
                : strcmp(end, "h") == 0 ? 3600
                : strcmp(end, "d") == 0 ? 86400
                                        : 0;
    if (!unit || !isdigit((unsigned char)s[0]) || n <= 0 || n > 366L * 86400 / unit) {
        ERR(p, fix, "'%s' is not a freshness (a number of minutes, hours or days up to a year)", s);
    } else {
        a->freshness_line = p->line;
        a->freshness_s = n * unit;
    }
    free(s);
}

static void parse_tags(parser *p, const char *rest)
{
    strlist w = {0};
    split_words(&w, rest);
    const char *fix = "write '-- tags a,b' (letters, digits, _ and -, commas, no spaces)";
    if (w.n != 1) {
        ERR(p, fix, "'-- tags' takes one comma-separated list");
    } else {
        const char *s = w.items[0];
        for (;;) {
            const char *c = strchr(s, ',');
            size_t n = c ? (size_t)(c - s) : strlen(s);
            char *tag = xstrndup(s, n);
            int ok = n > 0;
            for (size_t i = 0; i < n && ok; i++)
                ok = isalnum((unsigned char)tag[i]) || tag[i] == '_' || tag[i] == '-';
            if (!ok) {
                ERR(p, fix, "'%s' is not a tag", tag);
                free(tag);
                break;
            }
            if (strlist_find(&p->a->tags, tag) < 0)
                strlist_push_owned(&p->a->tags, tag);
            else
                free(tag);
            if (!c)
                break;
            s = c + 1;
        }
    }
    strlist_free(&w);
}

/* ---- lines ----------------------------------------------------------- */

typedef enum {
    LINE_PROSE,    /* an ordinary comment */
    LINE_KEYWORD,  /* a keyword: *kw set, *rest after it */
    LINE_MISTAKEN, /* close to a keyword: *kw is the one meant */
} line_kind;

/* Classifies the comment text after "--". */
static line_kind classify(const char *c, const char **kw, const char **rest)
{
    while (is_space_c(*c))
        c++;
    const char *e = c;
    while (*e && (isalnum((unsigned char)*e) || *e == '_' || *e == '-' || *e == '@'))
        e++;
    size_t n = (size_t)(e - c);
    if (n == 0 || n > 40)
        return LINE_PROSE;
    char word[41];
    memcpy(word, c, n);
    word[n] = 0;
    int ends_clean = *e == 0 || is_space_c(*e);
    for (size_t i = 0; i < NKEYWORDS; i++) {
        if (strcmp(word, keywords[i]) == 0) {
            *kw = keywords[i];
            *rest = e;
            return ends_clean ? LINE_KEYWORD : LINE_MISTAKEN;
        }
    }
    const char *w = word[0] == '@' ? word + 1 : word;
    for (size_t i = 0; i < NKEYWORDS; i++) {
        size_t kl = strlen(keywords[i]);
        /* Wrong case or a leading @ of exactly a keyword; a near spelling
         * of one of the long keywords (short words like "tag" are too
         * common in prose to guess at). */
        int d = (int)str_distance(w, keywords[i]);
        int same_letters = strlen(w) == kl && d == 0;
        int lowercase = 1;
        for (const char *q = w; *q; q++)
            if (isupper((unsigned char)*q))
                lowercase = 0;
        if (same_letters || (kl >= 8 && strlen(w) >= 6 && d <= 2 && lowercase)) {
            /* Wrong case followed by prose ("-- Schedule: nightly") is prose. */
            if (same_letters && !lowercase && !(ends_clean && strchr(e, '=')))
                continue;
            *kw = keywords[i];
            *rest = e;
            return LINE_MISTAKEN;
        }
    }
    return LINE_PROSE;
}

int annot_parse(model_annot *out, diag_list *d, const char *path, const char *text,
                int first_stmt_line)
{
    memset(out, 0, sizeof(*out));
    parser p = {.a = out, .d = d, .path = path};
    const char *s = text;
    for (int line = 1; *s; line++) {
        char *l = xstrline(&s);
        const char *c = l;
        while (is_space_c(*c))
            c++;
        p.line = line;
        if (c[0] == '-' && c[1] == '-') {
            const char *kw = NULL, *rest = NULL;
            line_kind k = classify(c + 2, &kw, &rest);
            int header = first_stmt_line == 0 || line < first_stmt_line;
            if (k != LINE_PROSE && !header) {
                ERR(&p, "move it to the comment lines at the top of the file, before any SQL",
                    "'-- %s' below the model's first statement: annotations belong in the "
                    "header",
                    kw);
            } else if (k == LINE_MISTAKEN) {
                char *fix = xasprintf("write '-- %s …' (lowercase, no ':'), or reword the "
                                      "comment if it is not an annotation",
                                      kw);
                char word[64];
                const char *w = c + 2;
                while (is_space_c(*w))
                    w++;
                size_t wn = (size_t)(rest - w);
                if (wn >= sizeof(word))
                    wn = sizeof(word) - 1;
                memcpy(word, w, wn);
                word[wn] = 0;
                ERR(&p, fix, "'%s' is not an annotation; did you mean '%s'?", word, kw);
                free(fix);
            } else if (k == LINE_KEYWORD) {
                if (strcmp(kw, "materialize") == 0)
                    parse_materialize(&p, rest);
                else if (strcmp(kw, "partitioned") == 0)
                    parse_partitioned(&p, rest);
                else if (strcmp(kw, "data_test") == 0)
                    parse_data_test(&p, rest);
                else if (strcmp(kw, "schedule") == 0)
                    parse_schedule(&p, rest);
                else if (strcmp(kw, "freshness") == 0)
                    parse_freshness(&p, rest);
                else
                    parse_tags(&p, rest);
            }
        }
        free(l);
    }
    /* Conflicts across lines. */
    if (out->partitioned_line && p.errors == 0) {
        p.line = out->partitioned_line;
        /* A partitioned model replaces its slices, or merges by key= or
         * appends inside each (Windmill's grammar); history and
         * incremental keep a table-wide record of their own. */
        const char *what = out->strategy == STRAT_MANUAL        ? "manual"
                           : out->strategy == STRAT_HISTORY     ? "history"
                           : out->strategy == STRAT_INCREMENTAL ? "incremental"
                                                                : NULL;
        if (what) {
            char *fix = xasprintf("drop '-- partitioned', or drop '%s' from line %d", what,
                                  out->materialize_line);
            ERR(&p, fix, "'-- partitioned' cannot be combined with '%s'", what);
            free(fix);
        } else if (out->strategy == STRAT_APPEND && out->lookback > 0) {
            ERR(&p,
                "drop lookback=, or merge late rows by key (key=… in place of append): each run "
                "would append the earlier slices' rows again",
                "lookback=%d cannot be combined with 'append'", out->lookback);
        }
    }
    if (out->strategy == STRAT_MANUAL && out->ntests && p.errors == 0) {
        p.line = out->tests[0].line;
        ERR(&p, "data tests need a managed model: drop 'manual' or the data_test lines",
            "'-- data_test' cannot be used with 'materialize manual'");
    }
    return p.errors;
}

void annot_free(model_annot *a)
{
    free(a->target_schema);
    free(a->target_table);
    strlist_free(&a->key);
    strlist_free(&a->track);
    strlist_free(&a->writes);
    free(a->watermark);
    free(a->inc_lookback);
    free(a->on_schema_change);
    free(a->partition_column);
    free(a->partition_start);
    for (size_t i = 0; i < a->ntests; i++) {
        data_test *t = &a->tests[i];
        strlist_free(&t->columns);
        strlist_free(&t->values);
        free(t->ref_schema);
        free(t->ref_table);
        free(t->ref_column);
        free(t->path);
    }
    free(a->tests);
    free(a->schedule);
    strlist_free(&a->tags);
    memset(a, 0, sizeof(*a));
}

const char *annot_strategy_label(const model_annot *a)
{
    return a->grain ? "partitioned" : strategy_name(a->strategy);
}

char *annot_strategy_spec(const model_annot *a)
{
    tarn_buf b = {0};
    if (a->grain) {
        buf_printf(&b, "partitioned %s column=%s", grain_name(a->grain), a->partition_column);
        /* inside each slice: merged by key, or appended to */
        if (a->strategy == STRAT_MERGE) {
            char *k = strlist_join(&a->key, ",");
            buf_printf(&b, " key=%s", k);
            free(k);
        } else if (a->strategy == STRAT_APPEND)
            buf_puts(&b, " append");
    } else {
        buf_puts(&b, strategy_name(a->strategy));
        if (a->key.n) {
            char *k = strlist_join(&a->key, ",");
            buf_printf(&b, " key=%s", k);
            free(k);
        }
    }
    /* column names are case-insensitive: key=ID is key=id */
    char *s = buf_detach(&b);
    for (char *p = s; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return s;
}

char *annot_write_signature(const model_annot *a)
{
    tarn_buf b = {0};
    buf_printf(&b, "strategy=%s", strategy_name(a->strategy));
    if (a->target_schema)
        buf_printf(&b, " target=%s.%s", a->target_schema, a->target_table);
    char *k = strlist_join(&a->key, ",");
    char *t = strlist_join(&a->track, ",");
    buf_printf(&b, " key=%s track=%s deletes=%s watermark=%s on_schema_change=%s", k, t,
               a->deletes_close ? "close" : "", a->watermark ? a->watermark : "",
               a->on_schema_change ? a->on_schema_change : "");
    free(k);
    free(t);
    if (a->grain)
        buf_printf(&b, " partitioned=%s column=%s", grain_name(a->grain), a->partition_column);
    if (a->writes.n) {
        char *w = strlist_join(&a->writes, ",");
        buf_printf(&b, " writes=%s", w);
        free(w);
    }
    return buf_detach(&b);
}
