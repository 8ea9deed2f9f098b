/*
 * test_fs_lock.c — unit tests for fs_lock_held (src/util/fs.c): a writer
 * waiting for its catalog file (lake/catdb.c) waits while other processes
 * only read it, tries again at once when none holds it, and gives up when
 * one writes it. A child process holds each kind of lock, as tarn serve's
 * read-only ATTACH or another writer's would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/fs.h"

static char path[] = "/tmp/tarn-test-fs-lock-XXXXXX";

/* Forks a child that locks the file (F_RDLCK or F_WRLCK), tells the parent
 * through a pipe, and holds the lock until it is killed. */
static pid_t hold(short type)
{
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(path, O_RDWR);
        struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        if (fd < 0 || fcntl(fd, F_SETLKW, &fl) != 0)
            _exit(1);
        (void)!write(ready[1], "x", 1);
        pause();
        _exit(0);
    }
    char c;
    close(ready[1]);
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    return pid;
}

static void let_go(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void test_none(void **state)
{
    (void)state;
    assert_int_equal(fs_lock_held(path), FS_LOCK_NONE);
    assert_int_equal(fs_lock_held("/tmp/tarn-test-fs-lock-no-such-file"), FS_LOCK_NONE);
}

static void test_readers(void **state)
{
    (void)state;
    pid_t a = hold(F_RDLCK), b = hold(F_RDLCK);
    assert_int_equal(fs_lock_held(path), FS_LOCK_READ);
    let_go(a);
    assert_int_equal(fs_lock_held(path), FS_LOCK_READ);
    let_go(b);
    assert_int_equal(fs_lock_held(path), FS_LOCK_NONE);
}

static void test_writer(void **state)
{
    (void)state;
    pid_t w = hold(F_WRLCK);
    assert_int_equal(fs_lock_held(path), FS_LOCK_WRITE);
    let_go(w);
    assert_int_equal(fs_lock_held(path), FS_LOCK_NONE);
}

/* This process's own lock is not another's: the writer asking has just
 * failed to take the file, so any lock seen is someone else's. */
static void test_own_lock_unseen(void **state)
{
    (void)state;
    int fd = open(path, O_RDWR);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
    assert_int_equal(fs_lock_held(path), FS_LOCK_NONE);
    close(fd);
}

int main(void)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_readers),
        cmocka_unit_test(test_writer),
        cmocka_unit_test(test_own_lock_unseen),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    return failed;
}
