/*
 * test_sched_due.c — unit tests for src/sched/due.c: a new schedule arms
 * and does not fire on the tick that first sees it (nor on a tick that
 * lands on an occurrence); an armed one fires once per occurrence; after
 * downtime exactly one missed occurrence is served (the newest) and the
 * next tick waits for the following one; a build in flight coalesces; the
 * cap per tick lets the longest-waiting fire first and the rest fire
 * later; a freshness rule fires when no good build is recent enough.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sched/due.h"

static int64_t at(const char *text)
{
    struct tm tm = {0};
    assert_non_null(strptime(text, "%Y-%m-%d %H:%M", &tm));
    return (int64_t)timegm(&tm);
}

static sched_entry cron_entry(const char *model, const char *rule)
{
    sched_entry e = {
        .model = model, .schedule = rule, .last_occurrence = -1, .last_good_build = -1};
    return e;
}

/* Decides one entry at `now` (no cap). */
static sched_decision one(const sched_entry *e, const char *now)
{
    sched_decision d;
    assert_int_equal(sched_decide(&d, e, 1, at(now), 0), 0);
    return d;
}

static void test_arms_first(void **state)
{
    (void)state;
    sched_entry e = cron_entry("m", "0 6 * * *");
    /* first seen exactly at an occurrence: arms, waits for tomorrow's */
    sched_decision d = one(&e, "2026-06-01 06:00");
    assert_int_equal(d.action, SCHED_ARM);
    assert_true(d.next == at("2026-06-02 06:00"));
    /* armed at 06:00: the same tick time again is not due */
    e.armed = 1;
    e.armed_at = at("2026-06-01 06:00");
    assert_int_equal(one(&e, "2026-06-01 06:00").action, SCHED_IDLE);
    assert_int_equal(one(&e, "2026-06-02 05:59").action, SCHED_IDLE);
    d = one(&e, "2026-06-02 06:00");
    assert_int_equal(d.action, SCHED_FIRE);
    assert_true(d.occurrence == at("2026-06-02 06:00"));
    assert_true(d.next == at("2026-06-03 06:00"));
    /* served: not due again until the next occurrence */
    e.last_occurrence = d.occurrence;
    assert_int_equal(one(&e, "2026-06-02 06:01").action, SCHED_IDLE);
}

static void test_one_missed_occurrence(void **state)
{
    (void)state;
    sched_entry e = cron_entry("m", "0 * * * *");
    e.armed = 1;
    e.armed_at = at("2026-06-01 00:30");
    e.last_occurrence = at("2026-06-01 01:00");
    /* down from 01:00 to 05:20: four occurrences came, one fire serves 05:00 */
    sched_decision d = one(&e, "2026-06-01 05:20");
    assert_int_equal(d.action, SCHED_FIRE);
    assert_true(d.occurrence == at("2026-06-01 05:00"));
    e.last_occurrence = d.occurrence;
    assert_int_equal(one(&e, "2026-06-01 05:40").action, SCHED_IDLE);
    assert_int_equal(one(&e, "2026-06-01 06:00").action, SCHED_FIRE);
    /* a rule changed in the project is another rule: it arms again */
    e.armed = 0;
    e.schedule = "30 * * * *";
    assert_int_equal(one(&e, "2026-06-01 06:30").action, SCHED_ARM);
}

static void test_coalesce_and_cap(void **state)
{
    (void)state;
    sched_entry e[4] = {cron_entry("d", "*/5 * * * *"), cron_entry("c", "0 6 * * *"),
                        cron_entry("b", "*/10 * * * *"), cron_entry("a", "*/10 * * * *")};
    for (int i = 0; i < 4; i++) {
        e[i].armed = 1;
        e[i].armed_at = at("2026-06-01 05:00");
    }
    e[0].in_flight = 1;
    sched_decision d[4];
    assert_int_equal(sched_decide(d, e, 4, at("2026-06-01 06:00"), 2), 0);
    assert_int_equal(d[0].action, SCHED_COALESCED); /* in flight: not queued twice */
    /* c waited since its 06:00 occurrence, a and b since 06:00 as well: by name, a then b */
    assert_int_equal(d[3].action, SCHED_FIRE);
    assert_int_equal(d[2].action, SCHED_FIRE);
    assert_int_equal(d[1].action, SCHED_CAPPED);
    assert_true(d[1].occurrence == at("2026-06-01 06:00"));
    /* the capped one is still due on the next tick */
    e[2].last_occurrence = e[3].last_occurrence = at("2026-06-01 06:00");
    assert_int_equal(sched_decide(d, e, 4, at("2026-06-01 06:01"), 2), 0);
    assert_int_equal(d[1].action, SCHED_FIRE);
    assert_int_equal(d[2].action, SCHED_IDLE);
    /* the oldest waiting goes first when the cap is 1 */
    e[1].last_occurrence = -1;
    e[2].last_occurrence = at("2026-06-01 06:00");
    e[0].in_flight = 0;
    assert_int_equal(sched_decide(d, e, 4, at("2026-06-01 06:12"), 1), 0);
    assert_int_equal(d[1].action, SCHED_FIRE); /* due since 06:00 */
    assert_int_equal(d[0].action, SCHED_CAPPED);
    assert_int_equal(d[2].action, SCHED_CAPPED);
    assert_int_equal(sched_decide(d, e, 4, at("2026-06-01 06:12"), 0), 0);
    assert_int_equal(d[0].action, SCHED_FIRE); /* no cap: every due one */
}

static void test_freshness(void **state)
{
    (void)state;
    sched_entry e = {
        .model = "m", .freshness_s = 6 * 3600, .last_occurrence = -1, .last_good_build = -1};
    sched_decision d = one(&e, "2026-06-01 06:00");
    assert_int_equal(d.action, SCHED_FIRE); /* never built: stale */
    e.last_good_build = at("2026-06-01 01:00");
    d = one(&e, "2026-06-01 06:59");
    assert_int_equal(d.action, SCHED_IDLE);
    assert_true(d.next == at("2026-06-01 07:00"));
    assert_int_equal(one(&e, "2026-06-01 07:00").action, SCHED_FIRE);
    e.in_flight = 1;
    assert_int_equal(one(&e, "2026-06-01 07:00").action, SCHED_COALESCED);
    assert_string_equal(sched_action_name(SCHED_COALESCED), "coalesced");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arms_first),
        cmocka_unit_test(test_one_missed_occurrence),
        cmocka_unit_test(test_coalesce_and_cap),
        cmocka_unit_test(test_freshness),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
