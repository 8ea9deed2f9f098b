/*
 * output.h — how a statement's result is shaped: a row set, a changed-row
 * count, or nothing at all. Decided from the statement's text by the
 * lexer (sql_output_kind in src/sql/lexer.h) and used by the session and
 * the CLI's renderers; a header of its own because the lexer sits below
 * the session and must not include its API.
 */
#ifndef TARN_OUTPUT_H
#define TARN_OUTPUT_H

typedef enum {
    TARN_OUTPUT_NONE = 0,
    TARN_OUTPUT_ROWS = 1,
    TARN_OUTPUT_COUNT = 2,
} tarn_output_kind;

#endif
