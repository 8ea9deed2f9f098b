/*
 * body.h — a model's statements: what each one is, where its query part
 * is, and where {partition} appears.
 *
 * A managed model is setup statements (SET, PRAGMA, LOAD, CREATE TEMP …,
 * CREATE MACRO/FUNCTION) followed by exactly one trailing query (SELECT,
 * WITH, FROM or VALUES) whose rows tarn writes. Anything else — a write,
 * DDL on the lake, a transaction, a second query — is rejected at load
 * with an error that points at `-- materialize manual`, where the script
 * runs its own statements inside tarn's transaction (manual scripts may
 * not open or close transactions or attach databases themselves).
 */
#ifndef TARN_PROJECT_BODY_H
#define TARN_PROJECT_BODY_H

#include "project/diag.h"
#include "project/refs.h"

#include <stddef.h>

/* The placeholders and the same-length literal they are parsed as, so
 * that DuckDB's offsets stay valid for the original text. {partition} is
 * a partitioned model's slice identity, {watermark} an incremental
 * model's covered-through mark (both replaced by literals at build time). */
#define BODY_PARTITION_TOKEN "{partition}"
#define BODY_WATERMARK_TOKEN "{watermark}"
#define BODY_PARTITION_DUMMY "'_________'"
#define BODY_PARTITION_LEN 11

typedef struct {
    char *text;        /* the statement, without ';' */
    int line;          /* where it starts in the file */
    char kw[24];       /* first keyword, upper case */
    int is_query;      /* the trailing query of a managed model */
    size_t query_off;  /* start of the query part in text, or REF_NO_OFFSET */
    ref_list refs;     /* table references; offsets relative to text */
    size_t *part_offs; /* offsets of {partition} in text */
    size_t npart;
    size_t *wm_offs; /* offsets of {watermark} in text */
    size_t nwm;
} model_stmt;

typedef struct {
    model_stmt *items;
    size_t n;
} model_body;

/* Splits and classifies the statements of model `path`. Problems go to
 * `d`; returns how many were added. */
int body_parse(model_body *out, diag_list *d, const char *path, const char *text, int manual);

/* The line in the file of byte `off` of statement `st`. */
int body_line_of(const model_stmt *st, size_t off);

/* The statement's query part with every {partition} and {watermark}
 * replaced by the dummy literal (caller frees); NULL when it has no query part. */
char *body_query_for_parse(const model_stmt *st);

void body_free(model_body *b);

#endif
