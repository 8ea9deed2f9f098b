/*
 * test_annotations.c — unit tests for src/project/annot.c: the model
 * annotation grammar, its strictness (every malformed line an error with
 * file:line and a fix) and the conflicts between options.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "project/annot.h"

/* Parses `text` (first statement on line `first`); returns the errors. */
static int parse(model_annot *a, diag_list *d, const char *text, int first)
{
    memset(d, 0, sizeof(*d));
    return annot_parse(a, d, "models/m.sql", text, first);
}

/* Exactly one error, on `line`, whose message contains `msg` and whose
 * fix contains `fix` (when given). */
static void assert_one_error(const char *text, int first, int line, const char *msg,
                             const char *fix)
{
    model_annot a;
    diag_list d;
    int n = parse(&a, &d, text, first);
    if (n != 1 || d.n != 1) {
        char *t = diag_text(&d);
        fail_msg("expected one error for:\n%s\ngot %d:\n%s", text, n, t);
    }
    assert_string_equal(d.items[0].file, "models/m.sql");
    assert_int_equal(d.items[0].line, line);
    if (!strstr(d.items[0].msg, msg))
        fail_msg("message '%s' lacks '%s'", d.items[0].msg, msg);
    if (fix) {
        assert_non_null(d.items[0].fix);
        if (!strstr(d.items[0].fix, fix))
            fail_msg("fix '%s' lacks '%s'", d.items[0].fix, fix);
    }
    annot_free(&a);
    diag_free(&d);
}

static void assert_ok(const char *text, int first, model_annot *a)
{
    diag_list d;
    int n = parse(a, &d, text, first);
    if (n != 0) {
        char *t = diag_text(&d);
        fail_msg("unexpected errors for:\n%s\n%s", text, t);
    }
    diag_free(&d);
}

static void test_no_annotation_is_replace(void **state)
{
    model_annot a;
    assert_ok("-- just a comment\n-- another: with = signs\nSELECT 1\n", 3, &a);
    assert_int_equal(a.strategy, STRAT_REPLACE);
    assert_int_equal(a.materialize_line, 0);
    assert_null(a.target_schema);
    assert_int_equal(a.grain, GRAIN_NONE);
    annot_free(&a);
}

static void test_materialize_target_and_key(void **state)
{
    model_annot a;
    assert_ok("-- materialize marts.dim key=a,b on_schema_change=fail\nSELECT 1\n", 2, &a);
    assert_int_equal(a.strategy, STRAT_MERGE);
    assert_string_equal(a.target_schema, "marts");
    assert_string_equal(a.target_table, "dim");
    assert_int_equal(a.key.n, 2);
    assert_string_equal(a.key.items[0], "a");
    assert_string_equal(a.key.items[1], "b");
    assert_string_equal(a.on_schema_change, "fail");
    assert_int_equal(a.materialize_line, 1);
    annot_free(&a);
}

static void test_strategies(void **state)
{
    model_annot a;
    assert_ok("-- materialize append\nSELECT 1", 2, &a);
    assert_int_equal(a.strategy, STRAT_APPEND);
    annot_free(&a);
    assert_ok("-- materialize key=id history track=x,y deletes=close\nSELECT 1", 2, &a);
    assert_int_equal(a.strategy, STRAT_HISTORY);
    assert_int_equal(a.track.n, 2);
    assert_true(a.deletes_close);
    annot_free(&a);
    assert_ok("-- materialize incremental watermark=updated_at key=id\nSELECT 1", 2, &a);
    assert_int_equal(a.strategy, STRAT_INCREMENTAL);
    assert_string_equal(a.watermark, "updated_at");
    annot_free(&a);
    assert_ok("-- materialize manual s.t\nSELECT 1", 2, &a);
    assert_int_equal(a.strategy, STRAT_MANUAL);
    assert_string_equal(a.target_table, "t");
    annot_free(&a);
}

static void test_partitioned(void **state)
{
    model_annot a;
    assert_ok("-- partitioned daily column=order_ts\nSELECT 1", 2, &a);
    assert_int_equal(a.grain, GRAIN_DAILY);
    assert_string_equal(a.partition_column, "order_ts");
    assert_string_equal(annot_strategy_label(&a), "partitioned");
    annot_free(&a);
    assert_ok("-- partitioned dynamic column=region\nSELECT 1", 2, &a);
    assert_int_equal(a.grain, GRAIN_DYNAMIC);
    annot_free(&a);
    assert_one_error("-- partitioned daly column=ts\nSELECT 1", 2, 1, "not a partition grain",
                     "did you mean 'daily'?");
    assert_one_error("-- partitioned daily\nSELECT 1", 2, 1, "needs column=", NULL);
    assert_one_error("-- partitioned daily column = ts\nSELECT 1", 2, 1, "needs a value",
                     "no spaces");
    assert_one_error("-- partitioned daily column=ts format=x\nSELECT 1", 2, 1,
                     "unknown partitioned option 'format=x'", NULL);
    assert_one_error("-- partitioned daily column=ts\n-- partitioned hourly column=ts\nSELECT 1",
                     3, 2, "second '-- partitioned' line (the first is line 1)", NULL);
}

static void test_data_tests(void **state)
{
    model_annot a;
    assert_ok("-- data_test unique order_id\n"
              "-- data_test unique a,b\n"
              "-- data_test not_null order_id\n"
              "-- data_test accepted_values status = open,paid, 'shipped'\n"
              "-- data_test relationships customer_id -> marts.dim_customer.id\n"
              "-- data_test tests/no_negative.sql\n"
              "SELECT 1",
              7, &a);
    assert_int_equal(a.ntests, 6);
    assert_int_equal(a.tests[0].kind, DT_UNIQUE);
    assert_int_equal(a.tests[1].columns.n, 2);
    assert_int_equal(a.tests[2].kind, DT_NOT_NULL);
    assert_int_equal(a.tests[3].kind, DT_ACCEPTED_VALUES);
    assert_int_equal(a.tests[3].values.n, 3);
    assert_string_equal(a.tests[3].values.items[2], "shipped");
    assert_int_equal(a.tests[4].kind, DT_RELATIONSHIPS);
    assert_string_equal(a.tests[4].ref_table, "dim_customer");
    assert_string_equal(a.tests[4].ref_column, "id");
    assert_int_equal(a.tests[5].kind, DT_CUSTOM);
    assert_string_equal(a.tests[5].path, "tests/no_negative.sql");
    assert_int_equal(a.tests[5].line, 6);
    annot_free(&a);
    assert_one_error("-- data_test uniq id\nSELECT 1", 2, 1, "unknown data test 'uniq'",
                     "did you mean 'unique'?");
    assert_one_error("-- data_test not_null\nSELECT 1", 2, 1, "takes one column", NULL);
    assert_one_error("-- data_test accepted_values status\nSELECT 1", 2, 1,
                     "needs <column> = <values>", NULL);
    assert_one_error("-- data_test relationships a -> t.c\nSELECT 1", 2, 1,
                     "needs <column> -> schema.table.column", NULL);
    assert_one_error("-- data_test ../x.sql\nSELECT 1", 2, 1, "must be a path inside the project",
                     NULL);
}

static void test_data_test_severity(void **state)
{
    model_annot a;
    assert_ok("-- data_test unique id severity=warn\n"
              "-- data_test accepted_values status = open,paid severity=warn\n"
              "-- data_test severity=error not_null id\n"
              "-- data_test tests/x.sql severity=warn\n"
              "-- data_test not_null severity_code\n"
              "SELECT 1",
              6, &a);
    assert_int_equal(a.ntests, 5);
    assert_int_equal(a.tests[0].warn, 1);
    assert_int_equal(a.tests[1].warn, 1);
    /* the values stop before the severity */
    assert_int_equal(a.tests[1].values.n, 2);
    assert_string_equal(a.tests[1].values.items[1], "paid");
    assert_int_equal(a.tests[2].warn, 0);
    assert_int_equal(a.tests[2].kind, DT_NOT_NULL);
    assert_int_equal(a.tests[3].warn, 1);
    assert_string_equal(a.tests[3].path, "tests/x.sql");
    /* a column whose name starts with "severity" is a column */
    assert_int_equal(a.tests[4].warn, 0);
    assert_string_equal(a.tests[4].columns.items[0], "severity_code");
    annot_free(&a);
    assert_one_error("-- data_test unique id severity=fatal\nSELECT 1", 2, 1,
                     "unknown severity 'fatal'", "severity=warn");
    assert_one_error("-- data_test unique id severity\nSELECT 1", 2, 1, "'severity' needs a value",
                     NULL);
}

static void test_partition_start_lookback(void **state)
{
    model_annot a;
    assert_ok("-- partitioned daily column=d start=2024-01-01 lookback=2\nSELECT 1", 2, &a);
    assert_string_equal(a.partition_start, "2024-01-01");
    assert_int_equal(a.lookback, 2);
    annot_free(&a);
    assert_ok("-- partitioned hourly column=ts start=2024-01-01T06\nSELECT 1", 2, &a);
    assert_string_equal(a.partition_start, "2024-01-01T06");
    assert_int_equal(a.lookback, 0);
    annot_free(&a);
    assert_one_error("-- partitioned daily column=d start=soon\nSELECT 1", 2, 1,
                     "'soon' is not a start date for start=", "start=2024-01-01");
    assert_one_error("-- partitioned daily column=d lookback=-1\nSELECT 1", 2, 1,
                     "'-1' is not a number of slices for lookback=", NULL);
    assert_one_error("-- partitioned daily column=d lookback=1001\nSELECT 1", 2, 1,
                     "not a number of slices", "0 to 1000");
    assert_one_error("-- partitioned daily column=d start=2024-01-01 start=2024-02-01\nSELECT 1", 2,
                     1, "start= is given twice", NULL);
    assert_one_error("-- partitioned dynamic column=r lookback=1\nSELECT 1", 2, 1,
                     "'lookback' applies to hourly, daily, weekly and monthly", NULL);
}

/* key= and append inside a partitioned model's slices (Windmill's grammar). */
static void test_partition_slice_strategies(void **state)
{
    model_annot a;
    assert_ok("-- materialize key=id\n-- partitioned daily column=d\nSELECT 1", 3, &a);
    assert_int_equal(a.strategy, STRAT_MERGE);
    char *spec = annot_strategy_spec(&a);
    assert_string_equal(spec, "partitioned daily column=d key=id");
    free(spec);
    annot_free(&a);
    assert_ok("-- materialize append\n-- partitioned monthly column=d\nSELECT 1", 3, &a);
    assert_int_equal(a.strategy, STRAT_APPEND);
    spec = annot_strategy_spec(&a);
    assert_string_equal(spec, "partitioned monthly column=d append");
    free(spec);
    annot_free(&a);
}

/* lookback= of an incremental model: a duration, or a number. */
static void test_incremental_lookback(void **state)
{
    model_annot a;
    assert_ok("-- materialize incremental watermark=ts lookback=2h\nSELECT 1", 2, &a);
    assert_string_equal(a.inc_lookback, "2h");
    assert_int_equal(a.inc_lookback_s, 7200);
    annot_free(&a);
    assert_ok("-- materialize incremental watermark=ts lookback=3d\nSELECT 1", 2, &a);
    assert_int_equal(a.inc_lookback_s, 3 * 86400);
    annot_free(&a);
    assert_ok("-- materialize incremental watermark=id lookback=100\nSELECT 1", 2, &a);
    assert_string_equal(a.inc_lookback, "100");
    assert_int_equal(a.inc_lookback_s, -1);
    annot_free(&a);
    assert_one_error("-- materialize incremental watermark=ts lookback=2w\nSELECT 1", 2, 1,
                     "'2w' is not a lookback for lookback=", "lookback=2h");
    assert_one_error("-- materialize incremental watermark=ts lookback=h\nSELECT 1", 2, 1,
                     "'h' is not a lookback", NULL);
    assert_one_error("-- materialize key=id lookback=2h\nSELECT 1", 2, 1,
                     "lookback= on the materialize line only applies to 'incremental'", NULL);
    assert_one_error("-- materialize incremental watermark=ts lookback=1h lookback=2h\nSELECT 1", 2,
                     1, "lookback= is given twice", NULL);
}

static void test_schedule_and_tags(void **state)
{
    model_annot a;
    assert_ok("-- schedule \"0 6 * * 1-5\"\n-- tags nightly,finance\n-- tags extra\nSELECT 1", 4,
              &a);
    assert_string_equal(a.schedule, "0 6 * * 1-5");
    assert_int_equal(a.tags.n, 3);
    annot_free(&a);
    assert_one_error("-- schedule 0 6 * * *\nSELECT 1", 2, 1, "double quotes", "schedule");
    assert_one_error("-- schedule \"0 6 * *\"\nSELECT 1", 2, 1, "not a valid schedule: too few",
                     "minute 0-59");
    assert_one_error("-- schedule \"99 6 * * *\"\nSELECT 1", 2, 1,
                     "\"99 6 * * *\" is not a valid schedule: minute 99 is out of range (0-59)",
                     "e.g. -- schedule");
    assert_one_error("-- schedule \"0 6 L * *\"\nSELECT 1", 2, 1, "'L' in the day of month field",
                     NULL);
    assert_one_error("-- schedule \"0 6 * * *\"\n-- schedule \"0 7 * * *\"\nSELECT 1", 3, 2,
                     "second '-- schedule' line (the first is line 1)", NULL);
    assert_ok("-- freshness 6h\nSELECT 1", 2, &a);
    assert_int_equal(a.freshness_s, 6 * 3600);
    assert_null(a.schedule);
    annot_free(&a);
    assert_ok("-- freshness 90m\nSELECT 1", 2, &a);
    assert_int_equal(a.freshness_s, 90 * 60);
    annot_free(&a);
    assert_one_error("-- freshness 6 hours\nSELECT 1", 2, 1, "'6 hours' is not a freshness",
                     "e.g. -- freshness 6h");
    assert_one_error("-- freshness 0h\nSELECT 1", 2, 1, "is not a freshness", NULL);
    assert_one_error("-- freshness 400d\nSELECT 1", 2, 1, "is not a freshness", NULL);
    assert_one_error("-- schedule \"0 6 * * *\"\n-- freshness 6h\nSELECT 1", 3, 2,
                     "'-- freshness' and '-- schedule' (line 1) exclude each other",
                     "keep one of the two");
    assert_one_error("-- tags a b\nSELECT 1", 2, 1, "one comma-separated list", NULL);
}

static void test_misspelled_keywords(void **state)
{
    assert_one_error("-- materialise key=id\nSELECT 1", 2, 1, "did you mean 'materialize'?", NULL);
    assert_one_error("-- materialized key=id\nSELECT 1", 2, 1, "did you mean 'materialize'?", NULL);
    assert_one_error("-- Materialize key=id\nSELECT 1", 2, 1,
                     "'Materialize' is not an annotation: keywords are lowercase ('materialize')",
                     "write '-- materialize key=id'");
    /* The keyword itself with a ':' stuck to it: the message names the ':'
     * (suggesting 'materialize' would repeat what was written). */
    assert_one_error("-- materialize: key=id\nSELECT 1", 2, 1,
                     "'materialize:' is not an annotation: write the keyword 'materialize' "
                     "without the ':'",
                     "write '-- materialize key=id'");
    assert_one_error("-- materialize:key=id\nSELECT 1", 2, 1, "without the ':'",
                     "write '-- materialize key=id'");
    assert_one_error("-- materialize:\nSELECT 1", 2, 1, "without the ':'",
                     "write '-- materialize …'");
    assert_one_error("-- @materialize key=id\nSELECT 1", 2, 1, "without the '@'",
                     "write '-- materialize key=id'");
    assert_one_error("-- partition daily column=ts\nSELECT 1", 2, 1, "did you mean 'partitioned'?",
                     NULL);
    assert_one_error("-- datatest unique id\nSELECT 1", 2, 1, "did you mean 'data_test'?", NULL);
    /* Prose that only starts like a keyword is left alone. */
    model_annot a;
    assert_ok("-- Schedule: runs after the nightly load\n-- tag this later\n-- materials list\n"
              "SELECT 1",
              4, &a);
    annot_free(&a);
}

static void test_bad_options(void **state)
{
    assert_one_error("-- materialize apend\nSELECT 1", 2, 1, "unknown materialize option 'apend'",
                     "did you mean 'append'?");
    assert_one_error("-- materialize key=a,,b\nSELECT 1", 2, 1, "empty column name", NULL);
    assert_one_error("-- materialize key=a, b\nSELECT 1", 2, 1, "empty column name", NULL);
    assert_one_error("-- materialize key=a,a\nSELECT 1", 2, 1, "listed twice", NULL);
    assert_one_error("-- materialize key\nSELECT 1", 2, 1, "'key' needs a value", NULL);
    assert_one_error("-- materialize deletes=open key=id history\nSELECT 1", 2, 1,
                     "not a deletes mode", NULL);
    assert_one_error("-- materialize on_schema_change=maybe\nSELECT 1", 2, 1,
                     "not an on_schema_change mode", NULL);
    assert_one_error("-- materialize a.b.c\nSELECT 1", 2, 1, "expected schema.table", NULL);
    assert_one_error("-- materialize s.t other.t\nSELECT 1", 2, 1, "second target", NULL);
    assert_one_error("-- materialize append append\nSELECT 1", 2, 1, "given twice", NULL);
    assert_one_error("-- materialize key=a\n-- materialize append\nSELECT 1", 3, 2,
                     "second '-- materialize' line (the first is line 1)", NULL);
}

static void test_conflicts(void **state)
{
    assert_one_error("-- materialize append key=id\nSELECT 1", 2, 1, "'append' conflicts with 'key='",
                     NULL);
    assert_one_error("-- materialize history\nSELECT 1", 2, 1, "'history' needs key=", NULL);
    assert_one_error("-- materialize key=id history\n-- partitioned daily column=ts\nSELECT 1", 3, 2,
                     "cannot be combined with 'history'", NULL);
    assert_one_error("-- materialize manual key=id\nSELECT 1", 2, 1,
                     "'manual' cannot be combined with 'key='", NULL);
    assert_one_error("-- materialize manual append\nSELECT 1", 2, 1,
                     "'manual' cannot be combined with 'append'", NULL);
    assert_one_error("-- materialize manual\n-- partitioned daily column=ts\nSELECT 1", 3, 2,
                     "cannot be combined with 'manual'", NULL);
    assert_one_error("-- materialize track=a\nSELECT 1", 2, 1, "only apply to 'history'", NULL);
    assert_one_error("-- materialize key=id history track=a,id\nSELECT 1", 2, 1,
                     "track= lists key column 'id'", "drop id from track=");
    assert_one_error("-- materialize key=id,valid_to history\nSELECT 1", 2, 1,
                     "'valid_to' in key= is a column history adds", NULL);
    assert_one_error("-- materialize key=id history track=is_current\nSELECT 1", 2, 1,
                     "'is_current' in track= is a column history adds", NULL);
    assert_one_error("-- materialize incremental\nSELECT 1", 2, 1, "needs watermark=", NULL);
    assert_one_error("-- materialize watermark=t\nSELECT 1", 2, 1, "only applies to 'incremental'",
                     NULL);
    assert_one_error("-- materialize manual\n-- data_test unique id\nSELECT 1", 3, 2,
                     "cannot be used with 'materialize manual'", NULL);
    assert_one_error("-- materialize key=id history\n-- partitioned daily column=ts\nSELECT 1", 3,
                     2, "cannot be combined with 'history'", NULL);
    assert_one_error("-- materialize incremental watermark=ts\n-- partitioned daily column=ts\n"
                     "SELECT 1",
                     3, 2, "cannot be combined with 'incremental'", NULL);
    assert_one_error("-- materialize append\n-- partitioned daily column=ts lookback=2\nSELECT 1",
                     3, 2, "lookback=2 cannot be combined with 'append'", "merge late rows by key");
}

static void test_annotation_below_header(void **state)
{
    assert_one_error("SELECT 1\n-- materialize key=id\n", 1, 2, "below the model's first statement",
                     "move it");
    /* Prose comments in the body are fine. */
    model_annot a;
    assert_ok("SELECT 1 -- materialize key=id\n-- a note\n", 1, &a);
    annot_free(&a);
}

static void test_several_errors_reported(void **state)
{
    model_annot a;
    diag_list d;
    int n = parse(&a, &d, "-- materialize apend\n-- partitioned daly column=x\n-- data_test uniq x\nSELECT 1",
                  4);
    assert_int_equal(n, 3);
    assert_int_equal(d.items[0].line, 1);
    assert_int_equal(d.items[1].line, 2);
    assert_int_equal(d.items[2].line, 3);
    char *t = diag_text(&d);
    assert_non_null(strstr(t, "models/m.sql:2: "));
    assert_non_null(strstr(t, "\n  fix: "));
    free(t);
    annot_free(&a);
    diag_free(&d);
}

static void test_write_signature(void **state)
{
    model_annot a, b;
    assert_ok("-- materialize key=id\nSELECT 1", 2, &a);
    assert_ok("-- materialize key=id\n-- tags x\n-- schedule \"0 1 * * *\"\nSELECT 1", 4, &b);
    char *sa = annot_write_signature(&a), *sb = annot_write_signature(&b);
    assert_string_equal(sa, sb); /* tags and schedules do not change what is written */
    free(sa);
    free(sb);
    annot_free(&a);
    annot_free(&b);
    assert_ok("-- materialize key=id,x\nSELECT 1", 2, &a);
    assert_ok("-- materialize key=id\nSELECT 1", 2, &b);
    sa = annot_write_signature(&a);
    sb = annot_write_signature(&b);
    assert_string_not_equal(sa, sb);
    free(sa);
    free(sb);
    annot_free(&a);
    annot_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_annotation_is_replace),
        cmocka_unit_test(test_materialize_target_and_key),
        cmocka_unit_test(test_strategies),
        cmocka_unit_test(test_partitioned),
        cmocka_unit_test(test_data_tests),
        cmocka_unit_test(test_data_test_severity),
        cmocka_unit_test(test_partition_start_lookback),
        cmocka_unit_test(test_partition_slice_strategies),
        cmocka_unit_test(test_incremental_lookback),
        cmocka_unit_test(test_schedule_and_tags),
        cmocka_unit_test(test_misspelled_keywords),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_annotation_below_header),
        cmocka_unit_test(test_several_errors_reported),
        cmocka_unit_test(test_write_signature),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
