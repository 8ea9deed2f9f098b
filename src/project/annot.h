/*
 * annot.h — the annotation grammar of a model's header comments (design
 * §4), parsed strictly.
 *
 *   -- materialize [schema.table] [key=a,b] [append] [history [track=c,d] [deletes=close]]
 *   --             [incremental watermark=col [lookback=2h]]
 * [on_schema_change=fail|warn|sync|ignore]
 *   --             [allow_empty]
 *   -- materialize manual [schema.table] [writes=a.b,c.d]
 *   -- partitioned hourly|daily|weekly|monthly column=ts [start=2024-01-01] [lookback=N]
 *   -- partitioned dynamic column=c
 *   -- data_test unique a[,b] | not_null a | accepted_values a = x,y | relationships a -> s.t.c
 *   -- data_test tests/file.sql
 *   -- data_test … severity=warn            (a failure is reported, never fails the build)
 *   -- schedule "0 6 * * *"   |   -- freshness 6h   (one of the two; cron in UTC)
 *   -- tags nightly,finance                  (tarn's addition, for tag:x selectors)
 *
 * Annotations live in the header: the `--` comment lines before the first
 * statement. Each one is a keyword and whitespace-separated words; `=`
 * options take no spaces (key=a,b). Anything malformed — an unknown or
 * misspelled keyword, a bad option, a conflicting combination, a repeated
 * single-valued line, an annotation below the header — is an error with
 * the file, the line and the fix. Ordinary prose comments are left alone.
 */
#ifndef TARN_PROJECT_ANNOT_H
#define TARN_PROJECT_ANNOT_H

#include "project/diag.h"
#include "project/partition.h"
#include "util/strlist.h"

#include <stdint.h>

typedef enum {
    STRAT_REPLACE = 0,
    STRAT_MERGE,
    STRAT_APPEND,
    STRAT_HISTORY,
    STRAT_INCREMENTAL,
    STRAT_MANUAL,
} model_strategy;

/* "replace", "merge", ... */
const char *strategy_name(model_strategy s);

typedef enum {
    DT_UNIQUE,
    DT_NOT_NULL,
    DT_ACCEPTED_VALUES,
    DT_RELATIONSHIPS,
    DT_CUSTOM,
} data_test_kind;

typedef struct {
    data_test_kind kind;
    int line;
    strlist columns;  /* unique: one or more; not_null, accepted_values, relationships: one */
    strlist values;   /* accepted_values */
    char *ref_schema; /* relationships: schema.table.column */
    char *ref_table;
    char *ref_column;
    char *path; /* custom: path relative to the project folder */
    int warn;   /* severity=warn: a failure is reported and does not fail the build */
} data_test;

typedef struct {
    /* -- materialize */
    int materialize_line; /* 0 when absent (a plain replace) */
    char *target_schema;  /* both NULL unless the line names a target */
    char *target_table;
    model_strategy strategy;
    strlist key;
    strlist track;
    strlist writes; /* manual: the other tables it writes (schema.table, lower case) */
    int deletes_close;
    char *watermark;
    char *inc_lookback;     /* incremental lookback=: "2h", "30m", "7d", "90s" or a number
                               ("100", for a numeric watermark), as written; or NULL */
    int64_t inc_lookback_s; /* … in seconds when it has a unit, else -1 */
    char *on_schema_change; /* fail | warn | sync | ignore, or NULL */
    int allow_empty;        /* merge/history: an empty SELECT may meet a table with rows */
    /* -- partitioned */
    int partitioned_line;
    part_grain grain;
    char *partition_column;
    char *partition_start; /* start=: the first slice (a time grain); a first run builds
                              every slice from it to now, one snapshot each; or NULL */
    int lookback;          /* lookback=N: a run also rebuilds the N slices before the
                              current one (late rows) */
    /* -- data_test (any number) */
    data_test *tests;
    size_t ntests;
    /* -- schedule (a cron expression, checked by util/cron.h) */
    int schedule_line;
    char *schedule;
    /* -- freshness (at most one of schedule and freshness) */
    int freshness_line;
    long freshness_s;
    /* -- tags */
    strlist tags;
} model_annot;

/* Parses the annotations of model file `path` (its text `text`). Header
 * lines end at `first_stmt_line` (the line of the first statement, or 0
 * when the file has none). Every problem is added to `d`; returns the
 * number of problems added. `out` is filled as far as it could be parsed
 * and must be freed with annot_free either way. */
int annot_parse(model_annot *out, diag_list *d, const char *path, const char *text,
                int first_stmt_line);
void annot_free(model_annot *a);

/* The write strategy as users name it: the strategy, or "partitioned" for
 * a partitioned replace. */
const char *annot_strategy_label(const model_annot *a);

/* How the table is written, as far as what it keeps is concerned — the
 * strategy, its key= and partitioning ("merge key=id", "history key=id",
 * "partitioned daily column=ts", "append"; lower case) — recorded with every build so
 * that the next one sees a change of strategy (materialize/guard.h). */
char *annot_strategy_spec(const model_annot *a);

/* A canonical one-line text of the write-affecting annotations (target,
 * strategy and its options, partitioning), for the model hash. */
char *annot_write_signature(const model_annot *a);

#endif
