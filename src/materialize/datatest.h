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
 * On a partitioned model the tests look at the slices the build wrote.
 * Each test reports its count of violations and, when it fails, up to five
 * example values.
 */
#ifndef TARN_MATERIALIZE_DATATEST_H
#define TARN_MATERIALIZE_DATATEST_H

#include "materialize/run_int.h"

/* Runs every data test of model `mi` on `target` (quoted name). Results go
 * to r->tests_json (a JSON array of {test, line, violations, examples}).
 * Returns 0 when all pass, TARN_EINVALID naming each failure (file:line of
 * its annotation), or another error when a test could not run. */
int datatest_run(run_ctx *c, size_t mi, const char *target, model_result *r);

#endif
