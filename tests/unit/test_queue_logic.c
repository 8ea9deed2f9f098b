/*
 * test_queue_logic.c — unit tests for src/materialize/queue_logic.c, the
 * job queue's decisions without SQL: a job waits while a model it reads is
 * unfinished, goes once all are done, and is blocked by one that failed,
 * was skipped or cancelled; a lease is held until it expires, then another
 * worker may claim the job, until every attempt is used; a worker renews
 * three times per lease and counts as gone after a lease without a beat;
 * job states round-trip through their names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "materialize/queue.h"

static void test_upstream(void **state)
{
    (void)state;
    assert_int_equal(queue_upstream(NULL, 0), UPSTREAM_DONE); /* reads nothing of the run */
    job_state all_done[] = {JOB_DONE, JOB_DONE};
    assert_int_equal(queue_upstream(all_done, 2), UPSTREAM_DONE);
    job_state one_running[] = {JOB_DONE, JOB_RUNNING};
    assert_int_equal(queue_upstream(one_running, 2), UPSTREAM_WAIT);
    job_state waiting[] = {JOB_WAITING, JOB_READY};
    assert_int_equal(queue_upstream(waiting, 2), UPSTREAM_WAIT);
    /* a failure blocks even while another upstream still runs */
    job_state failed[] = {JOB_RUNNING, JOB_FAILED};
    assert_int_equal(queue_upstream(failed, 2), UPSTREAM_BLOCKED);
    job_state skipped[] = {JOB_SKIPPED, JOB_DONE};
    assert_int_equal(queue_upstream(skipped, 2), UPSTREAM_BLOCKED);
    job_state cancelled[] = {JOB_CANCELLED};
    assert_int_equal(queue_upstream(cancelled, 1), UPSTREAM_BLOCKED);
}

static void test_lease(void **state)
{
    (void)state;
    /* held up to and at its expiry */
    assert_int_equal(queue_lease(100.0, 130.0, 1, 3), LEASE_HELD);
    assert_int_equal(queue_lease(130.0, 130.0, 1, 3), LEASE_HELD);
    /* expired: another worker may take it while attempts are left */
    assert_int_equal(queue_lease(130.5, 130.0, 1, 3), LEASE_EXPIRED);
    assert_int_equal(queue_lease(200.0, 130.0, 2, 3), LEASE_EXPIRED);
    /* every attempt used: the run gives up on it */
    assert_int_equal(queue_lease(200.0, 130.0, 3, 3), LEASE_GIVE_UP);
    /* a held lease is never given up, whatever the attempts */
    assert_int_equal(queue_lease(100.0, 130.0, 3, 3), LEASE_HELD);
}

static void test_heartbeat(void **state)
{
    (void)state;
    assert_true(queue_renew_every(30) > 9.99 && queue_renew_every(30) < 10.01);
    assert_true(queue_renew_every(0.01) >= 0.05); /* never a busy loop */
    assert_true(queue_worker_alive(100.0, 80.0, 30));
    assert_true(queue_worker_alive(110.0, 80.0, 30));
    assert_false(queue_worker_alive(110.5, 80.0, 30));
}

static void test_state_names(void **state)
{
    (void)state;
    for (int s = JOB_WAITING; s <= JOB_CANCELLED; s++) {
        job_state back;
        assert_int_equal(job_state_parse(&back, job_state_name((job_state)s)), 0);
        assert_int_equal(back, s);
    }
    job_state x;
    assert_int_equal(job_state_parse(&x, "bogus"), -1);
    assert_int_equal(job_state_parse(&x, NULL), -1);
    assert_string_equal(job_state_name(JOB_RUNNING), "running");
}

static void test_model_index(void **state)
{
    (void)state;
    tarn_model models[2] = {{.name = "raw.a"}, {.name = "mart.b"}};
    tarn_project p = {.models = models, .nmodels = 2};
    assert_int_equal(queue_model_index(&p, "mart.b"), 1);
    assert_int_equal(queue_model_index(&p, "raw.a"), 0);
    assert_int_equal(queue_model_index(&p, "mart.c"), -1);
    assert_int_equal(queue_model_index(&p, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upstream),    cmocka_unit_test(test_lease),
        cmocka_unit_test(test_heartbeat),   cmocka_unit_test(test_state_names),
        cmocka_unit_test(test_model_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
