/*
 * spec.h — a model's strategy spec, and what changing it does to a table.
 *
 * Every build records how it wrote its table as a spec (annot_strategy_spec:
 * "merge key=id", "history key=id", "partitioned daily column=ts", …, in
 * tarn_model_run.strategy_spec). These pure functions take specs apart and
 * classify a change from one to another; guard.c turns a change that
 * loses rows into a refusal, change.c names it in the run reason.
 */
#ifndef TARN_MATERIALIZE_SPEC_H
#define TARN_MATERIALIZE_SPEC_H

/* A strategy spec taken apart: "merge key=a,b", "partitioned daily
 * column=ts", "append". */
typedef struct {
    char kind[16];
    char key[256];  /* "" without key= */
    char part[256]; /* partitioned: "daily by ts" */
} spec_parts;

/* Takes spec text `spec` apart. */
void spec_split(spec_parts *out, const char *spec);

/* Whether the spec's kind is `kind` ("merge", "history", …). */
int spec_is(const spec_parts *s, const char *kind);

typedef enum {
    SPEC_OK = 0,  /* loses nothing */
    SPEC_REPLACE, /* to replace: the table becomes the query's rows */
    SPEC_HISTORY, /* from history: the versions lose valid_from/valid_to/is_current */
    SPEC_KEY,     /* another key: rows matched otherwise */
    SPEC_GRAIN,   /* other slices: rows of the old ones would be written twice */
    SPEC_SLICES,  /* to partitioned: each slice built replaces the rows kept in it */
    SPEC_APPEND,  /* to append: the query's rows go beside the ones kept */
    SPEC_MERGE,   /* to merge by key: kept rows that share a key collapse */
} spec_change;

/* What going from strategy spec `prev` to `now` (annot_strategy_spec
 * texts) does to a table that has rows. */
spec_change spec_classify(const char *prev, const char *now);

/* "history → replace" (the kinds), or the whole specs when only the key or
 * the partitioning changed ("merge key=id → merge key=email"); caller frees. */
char *spec_describe(const char *prev, const char *now);

#endif
