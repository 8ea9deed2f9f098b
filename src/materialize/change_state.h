/*
 * change_state.h — what change detection knows for one run (change_ctx,
 * filled by change.c and inputs.c): the records of each model's last
 * successful build, its config hash and file fingerprints, and the lake's
 * table versions (change_state.c). Internal to materialize/; the rest of
 * it uses change.h.
 */
#ifndef TARN_MATERIALIZE_CHANGE_STATE_H
#define TARN_MATERIALIZE_CHANGE_STATE_H

#include "materialize/build.h"

#include <jansson.h>

/* What the last successful build of a model recorded. */
typedef struct {
    int found;
    char *model_hash, *config_hash;
    int64_t target_version; /* -1 when not recorded */
    json_t *upstream;       /* [{table, version}, …] or NULL */
    json_t *files;          /* {literal: fingerprint} or NULL */
} change_prev;

/* The last successful build of a model, whatever its reason (a
 * partitioned model's too): how it wrote the table, and with which SQL. */
typedef struct {
    int found;
    char *spec;  /* annot_strategy_spec, or NULL (recorded by an older tarn) */
    char *label; /* annot_strategy_label */
    char *model_hash;
} change_last;

/* Change detection's state for one run: per model what its inputs and its
 * last builds say, and the lake's table versions. */
typedef struct {
    tarn_project *p;
    tarn_session *s;
    const char *lake, *cat;
    char (*config_hash)[65]; /* per model */
    char **files_json;       /* per model: {literal: fingerprint} (JSON text) */
    char **always;           /* per model: why it always runs, or NULL */
    change_prev *prev;       /* per model */
    change_last *last;       /* per model */
    strlist *stale;          /* per partitioned model: slices last built by other SQL */
    strlist *built;          /* per partitioned model: every slice built (a snapshot) */
    const char **vol;        /* per model: the non-deterministic call it makes, or NULL */
    strlist ver_keys;        /* "schema.table", lower case */
    int64_t *ver_vals;       /* the version of each */
    strlist fp_keys;         /* fingerprinted literals (a cache) */
    strlist fp_vals;         /* their fingerprint, or "" when not a file */
    strlist retired_keys;    /* "schema.table" of a model the project has no more, table kept */
    strlist retired_notes;   /* for each: "last built by run N from models/….sql" */
} change_ctx;

/* The first half of a config hash covers the config statements, the
 * second the model's data tests. */
#define CONFIG_HALF 32

/* "schema.table" in lower case: how change detection and the runner key a
 * lake table (caller frees). */
char *change_table_key(const char *schema, const char *table);

/* The schema of a "schema.table" name as run records write it (caller
 * frees), *table pointing at the rest; NULL when the name has no dot. */
char *change_name_split(const char *name, const char **table);

/* Whether table reference r may name a table of the run's lake: it names
 * no catalog, or that lake's alias. */
int change_ref_in_lake(const change_ctx *cc, const table_ref *r);

/* The current version of lake table schema.table, or -1 when missing. */
int64_t change_version(const change_ctx *cc, const char *schema, const char *table);
void change_set_version(change_ctx *cc, const char *schema, const char *table, int64_t v);

#endif
