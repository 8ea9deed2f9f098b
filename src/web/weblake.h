/*
 * weblake.h — the web view's read of the project and its lake, opened per
 * request and closed after it: a fresh session, the project loaded from
 * the folder `tarn serve` runs in (so an edited model shows at the next
 * request), and the lake attached READ_ONLY (project/attach.h). Holding the
 * catalog only for a request's length lets `tarn run` build while the view
 * is served (a writer that meets such a read waits for it: lake/catdb.c);
 * while a build holds the catalog the open answers "busy".
 *
 * Reads go through the session API only: the lake's tables with AT
 * (VERSION => n), ducklake_snapshots() and ducklake_table_changes(), and
 * the run records materialize/records.h keeps beside the catalog tables.
 */
#ifndef TARN_WEB_WEBLAKE_H
#define TARN_WEB_WEBLAKE_H

#include "project/project.h"
#include "tarn/session.h"
#include "web/reply.h"

#include <jansson.h>

typedef struct {
    tarn_session *s;
    tarn_project *p;
    const char *cat; /* the catalog database (run records), NULL: no lake yet */
    int has_runs;    /* the catalog has tarn_run and tarn_model_run */
} web_lake;

/* Opens the project and its lake. Returns 0, or -1 with `r` set to the
 * reply (503 busy while a build holds the catalog, 500 for a project that
 * does not load, with its error). A lake not built yet opens with cat NULL. */
int web_lake_open(web_lake *l, web_reply *r);
void web_lake_close(web_lake *l);

/* The rows of query `sql` as a JSON array of objects keyed by column
 * name; `types` has one letter per column: s text, i integer, f number,
 * j JSON text (parsed; left as text when it does not parse), and a NULL
 * cell is null. Returns 0, or < 0 with the error in tarn_error_last(). */
int web_rows(json_t **out, tarn_session *s, const char *sql, const char *types);

/* The same for a query of one row: the object, or NULL when no row. */
int web_row(json_t **out, tarn_session *s, const char *sql, const char *types);

/* A run-record table `table` of the catalog, quoted, appended to `b`. */
void web_records_table(char **out, const web_lake *l, const char *table);

/* The project's model named `name` (schema.table), NULL when none. */
const tarn_model *web_model(const web_lake *l, const char *name);

/* The lake's latest snapshot id into *out: 0, or TARN_ENOTFOUND. */
int web_latest_snapshot(web_lake *l, int64_t *out);

/* 1 when `msg` is DuckDB's error for a catalog file another process
 * holds. */
int web_is_lock_error(const char *msg);

#endif
