/*
 * datatest.h — a model's data tests (`-- data_test …`), run inside the
 * build's transaction against the table as the build left it, before the
 * commit: a failing test fails the build, which is then rolled back, so
 * the previous snapshot stays current (design §5).
 *
 *   unique a[,b]                 no non-NULL key appears twice
 *   not_null a                   no NULL
 *   accepted_values a = x,y      every non-NULL value is one of these (as text)
 *   relationships a -> s.t.c     every non-NULL value exists in s.t.c
 *   tests/file.sql               the query returns no row (its rows are the violations)
 *
 * On a partitioned model the tests look at the slices the build wrote
 * (`tarn test`, c->o->test_only: the whole table); on a history model the
 * built-in kinds look at its current rows, and tarn adds two checks of the
 * table itself (one current row per key; valid_from < valid_to, valid_to
 * NULL exactly on the current row). `severity=warn` tests that fail are
 * reported (r->warning) and do not fail the build.
 *
 * Each test reports its count of violations and, when it fails, up to five
 * example values and a sample of its violating rows: at most 20, as JSON
 * objects, at most 50 KB (rows dropped, never cut).
 */
#ifndef TARN_MATERIALIZE_DATATEST_H
#define TARN_MATERIALIZE_DATATEST_H

#include "materialize/run_int.h"

/* Runs every data test of model `mi` on `target` (quoted name, possibly
 * with AT). Results go to r->tests_json (a JSON array of {test, line,
 * severity, status pass|fail|warn, [builtin], violations, examples, and for
 * a failure sample, sample_rows, sample_dropped[, sample_error]}). Returns
 * 0 when no error-severity test failed, TARN_EINVALID naming each failure
 * (file:line of its annotation), or another error when a test could not
 * run. */
int datatest_run(run_ctx *c, size_t mi, const char *target, model_result *r);

/* `tarn compile`: each data test's query counting its violations, as the
 * build runs it, appended to `out` with a comment naming it. */
void datatest_sql(tarn_buf *out, run_ctx *c, size_t mi, const char *target, model_result *r);

#endif
