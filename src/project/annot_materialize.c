/*
 * annot_materialize.c — the `-- materialize` line (see annot.h): the
 * strategy words (append, history, incremental, manual, allow_empty), the
 * target schema.table, the name=value options (key=, track=, deletes=,
 * watermark=, lookback=, writes=, on_schema_change=) and the conflicts
 * between them on the line. Part of the annotation grammar (annot_int.h).
 */
#include "project/annot_int.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const materialize_words[] = {
    "manual",   "append",     "history",           "incremental", "key=",    "track=",
    "deletes=", "watermark=", "on_schema_change=", "allow_empty", "writes=", "lookback="};
#define NMATERIALIZE_WORDS (sizeof(materialize_words) / sizeof(materialize_words[0]))

/* writes=a.b,c.d (manual): the other tables a manual script writes, each
 * schema.table, kept lower case. */
static int parse_writes(annot_parser *p, strlist *out, const char *val)
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
            ok = annot_is_ident(name) && annot_is_ident(dot + 1);
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
static int parse_target(annot_parser *p, const char *tok)
{
    if (p->a->target_schema) {
        ERR(p, "give one target per model", "second target '%s' (already %s.%s)", tok,
            p->a->target_schema, p->a->target_table);
        return -1;
    }
    const char *dot = strchr(tok, '.');
    char *schema = dot ? xstrndup(tok, (size_t)(dot - tok)) : NULL;
    const char *table = dot ? dot + 1 : NULL;
    if (!dot || strchr(table, '.') || !annot_is_ident(schema) || !annot_is_ident(table)) {
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

static void unknown_materialize_word(annot_parser *p, const char *tok)
{
    char *name = xstrdup(tok);
    char *eq = strchr(name, '=');
    if (eq)
        *eq = 0;
    const char *near = annot_closest(name, materialize_words, NMATERIALIZE_WORDS);
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
static void incremental_lookback(annot_parser *p, const char *val)
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

static void materialize_option(annot_parser *p, const char *tok)
{
    model_annot *a = p->a;
    const char *eq = strchr(tok, '=');
    char *name = xstrndup(tok, (size_t)(eq - tok));
    const char *val = eq + 1;
    if (strcmp(name, "key") == 0) {
        if (a->key.n)
            ERR(p, "list every key column in one key=a,b", "key= is given twice");
        else
            annot_parse_columns(p, &a->key, "key=", val);
    } else if (strcmp(name, "track") == 0) {
        if (a->track.n)
            ERR(p, "list every tracked column in one track=a,b", "track= is given twice");
        else
            annot_parse_columns(p, &a->track, "track=", val);
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
        else if (!annot_is_ident(val))
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

static void materialize_flag(annot_parser *p, int *flag, const char *tok)
{
    if (*flag)
        ERR(p, "remove the repeated word", "'%s' is given twice", tok);
    *flag = 1;
}

/* history: key= and track= are columns of the SELECT, apart from each
 * other, and none is a column history adds itself. */
static void history_columns_check(annot_parser *p)
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

/* One word of the line: an option, a strategy flag or the target. */
static void materialize_word(annot_parser *p, const char *tok)
{
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
    else if (strcmp(tok, "key") == 0 || strcmp(tok, "track") == 0 || strcmp(tok, "deletes") == 0 ||
             strcmp(tok, "watermark") == 0 || strcmp(tok, "on_schema_change") == 0 ||
             strcmp(tok, "lookback") == 0) {
        char *fix = xasprintf("write %s=<value> with no spaces around '='", tok);
        ERR(p, fix, "'%s' needs a value", tok);
        free(fix);
    } else if (strchr(tok, '.') || strstr(tok, "://"))
        parse_target(p, tok);
    else
        unknown_materialize_word(p, tok);
}

/* manual: tarn writes nothing of its own, so no option of a managed
 * strategy goes with it. */
static void manual_conflicts(annot_parser *p)
{
    const model_annot *a = p->a;
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
}

/* history's and incremental's options, and what each excludes. */
static void strategy_conflicts(annot_parser *p)
{
    const model_annot *a = p->a;
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
}

/* A managed model's line: the conflicts, then its strategy. */
static void managed_strategy(annot_parser *p)
{
    model_annot *a = p->a;
    if (a->writes.n)
        ERR(p,
            "drop writes=, or make the model '-- materialize manual writes=…': tarn writes "
            "a managed model's table and nothing else",
            "writes= is for manual models");
    strategy_conflicts(p);
    /* allow_empty lifts the empty-result check, which replace, merge and
     * history builds make (an empty append writes nothing). */
    if (p->f_allow_empty && p->f_append)
        ERR(p, "drop 'allow_empty': an append build of no rows writes nothing",
            "'allow_empty' does not apply to 'append'");
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

void annot_parse_materialize(annot_parser *p, const char *rest)
{
    model_annot *a = p->a;
    if (annot_first_line(p, &a->materialize_line, "materialize",
                         "put every option on one '-- materialize' line"))
        return;
    int before = p->errors;
    strlist w = {0};
    annot_split_words(&w, rest);
    /* One error per line: after the first mistake the rest of the line is
     * not worth guessing at. */
    for (size_t i = 0; i < w.n && p->errors == before; i++)
        materialize_word(p, w.items[i]);
    strlist_free(&w);
    if (p->errors > before)
        return;
    if (p->f_manual) {
        manual_conflicts(p);
        a->strategy = STRAT_MANUAL;
        return;
    }
    managed_strategy(p);
}
