/*
 * session_fnform.h — DuckLake's functions reached through a lake's
 * catalog instead of by their ducklake_ name: `lake.snapshots()`,
 * `lake.s.table_changes('t', 1, 2)`, `CALL lake.set_option(…)`, and,
 * after `USE lake`, plain `snapshots()` or `CALL merge_adjacent_files()`.
 * DuckLake defines them as table macros in every schema of a lake (each
 * one `FROM ducklake_x('lake', …)`, the change feed also with the
 * schema), so the names and arguments here are DuckLake's.
 */
#ifndef TARN_SESSION_SESSION_FNFORM_H
#define TARN_SESSION_SESSION_FNFORM_H

#include "session/functions.h"
#include "session/session_int.h"

typedef struct {
    lk_lake *lake;
    const char *schema; /* the schema the form names (or the USE schema, or main) */
    const char *fn;     /* the ducklake_ function it stands for */
    int takes_schema;   /* that function takes the schema after the lake */
    size_t open;        /* token index of the form's '(' */
} session_fnform;

/* Whether tokens from i are a catalog form of a DuckLake function followed
 * by '(' (and *f describes it). A name preceded by '.' is never one. */
int session_fnform_at(session_fnform *f, tarn_session *s, const sql_tokens *tk, size_t i);

/* Turns the form's own arguments into the ducklake_ function's: the
 * lake's name first, then the schema when the function takes one. */
void session_fnform_args(const session_fnform *f, lk_args *a);

#endif
