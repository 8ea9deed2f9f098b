/*
 * annot_partition.c — the `-- partitioned` line (see annot.h): the grain
 * (hourly, daily, weekly, monthly, dynamic), column=, and for the time
 * grains start= and lookback=. Part of the annotation grammar
 * (annot_int.h); the grains themselves are project/partition's.
 */
#include "project/annot_int.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

/* start=<date or time> (the first slice a first run builds) and
 * lookback=N (the slices before the current one a run rebuilds too), for
 * the time grains. */
static void partition_option(annot_parser *p, model_annot *a, const char *tok)
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

void annot_parse_partitioned(annot_parser *p, const char *rest)
{
    model_annot *a = p->a;
    if (annot_first_line(p, &a->partitioned_line, "partitioned", "a model has one partitioning"))
        return;
    int errors_before = p->errors;
    strlist w = {0};
    annot_split_words(&w, rest);
    static const char *const grains[] = {"hourly", "daily", "weekly", "monthly", "dynamic"};
    const char *usage = "write '-- partitioned hourly|daily|weekly|monthly column=<timestamp "
                        "column> [start=2024-01-01] [lookback=N]' or '-- partitioned dynamic "
                        "column=<column>'";
    if (w.n == 0) {
        ERR(p, usage, "'-- partitioned' needs a grain and column=");
    } else if (grain_parse(&a->grain, w.items[0]) != 0) {
        const char *near = annot_closest(w.items[0], grains, 5);
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
                else if (!annot_is_ident(tok + 7))
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
