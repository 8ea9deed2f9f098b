/*
 * annot.c — what a model's parsed annotations say, for the layers above:
 * the strategy's name and label, the spec that change detection compares
 * (annot_strategy_spec), the signature of what a build writes, and
 * annot_free. The grammar that fills a model_annot is annot_parse.c's.
 */
#include "project/annot.h"

#include "util/buf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const strategy_names[] = {"replace", "merge",       "append",
                                             "history", "incremental", "manual"};

const char *strategy_name(model_strategy s)
{
    return strategy_names[s];
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
