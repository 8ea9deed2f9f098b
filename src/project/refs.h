/*
 * refs.h — the table references of a query, found with DuckDB's own parser.
 *
 * `SELECT json_serialize_sql('<query>')` returns the parse tree as JSON;
 * every BASE_TABLE node in it is a table reference, with the byte offset
 * where the name starts in the query text (query_location). CTE names are
 * excluded by scope: a one-part name that a WITH clause around it defines
 * is the CTE, not a table. The offsets are what lets a build rewrite a
 * reference in place (qualify it with the lake, pin it AT a snapshot)
 * without re-printing the user's SQL.
 */
#ifndef TARN_PROJECT_REFS_H
#define TARN_PROJECT_REFS_H

#include "tarn/session.h"
#include "util/strlist.h"

#include <stddef.h>

#define REF_NO_OFFSET ((size_t)-1)

typedef struct {
    char *catalog; /* NULL when not written */
    char *schema;  /* NULL when not written */
    char *table;
    size_t offset; /* where the name starts in the analysed text, or REF_NO_OFFSET */
    size_t len;    /* bytes of the name as written (0 when unknown) */
    int has_at;    /* the query gives its own AT (...) clause */
    int is_file;   /* FROM 'file.csv': a replacement scan, not a table */
} table_ref;

typedef struct {
    table_ref *items;
    size_t n;
    /* The names of the query's output columns, when the parse tree tells
     * them (columns_known): every item of the (first) SELECT list is a
     * column or has an alias. A star, an unnamed expression or VALUES
     * leave them to DuckDB's binder (columns_known 0). */
    strlist columns;
    int columns_known;
} ref_list;

/* Lists the references of the SELECT-like statement `sql` (one statement).
 * A parse error is TARN_EINVALID with DuckDB's message; *err_offset then
 * gets the byte offset DuckDB points at (or REF_NO_OFFSET). */
int refs_extract(ref_list *out, size_t *err_offset, tarn_session *s, const char *sql);

/* The pure half of refs_extract: reads json_serialize_sql's output for
 * `sql`. Exposed for the unit tests. */
int refs_from_json(ref_list *out, size_t *err_offset, const char *json, const char *sql);

void refs_free(ref_list *r);

#endif
