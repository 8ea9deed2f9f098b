/*
 * fs.c — file-system helpers (see fs.h).
 */
#include "util/fs.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_mkdir_p(const char *dir)
{
    /* Usually the parent exists (a table's directory under the lake's):
     * one mkdir, instead of one per path component. */
    if (mkdir(dir, 0777) == 0 || errno == EEXIST)
        return 0;
    char *p = xstrdup(dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            int rc =
                tarn_error_set(TARN_ERROR, "cannot create directory %s: %s", p, strerror(errno));
            free(p);
            return rc;
        }
        *s = '/';
    }
    int rc = 0;
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
        rc = tarn_error_set(TARN_ERROR, "cannot create directory %s: %s", p, strerror(errno));
    free(p);
    return rc;
}

int fs_read_file(char **out, const char *path)
{
    size_t len;
    return fs_read_file_len(out, &len, path);
}

int fs_read_file_len(char **out, size_t *len, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tarn_error_set(errno == ENOENT ? TARN_ENOTFOUND : TARN_ERROR, "cannot read %s: %s",
                              path, strerror(errno));
    tarn_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        buf_append(&b, chunk, n);
    int err = ferror(f);
    fclose(f);
    if (err) {
        buf_free(&b);
        return tarn_error_set(TARN_ERROR, "cannot read %s", path);
    }
    *len = b.len;
    *out = buf_detach(&b);
    return 0;
}

fs_lock fs_lock_held(const char *path)
{
    /* Closing a descriptor drops every lock this process holds on the
     * file: only for a file this process has not opened otherwise (the
     * writer asking has just failed to). */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return FS_LOCK_NONE;
    /* Asking for a write lock reports a conflicting lock, a reader's
     * (F_RDLCK) or a writer's (F_WRLCK); it names one of them, so a reader's
     * answer is checked by asking for a read lock, which only a writer's
     * blocks. */
    fs_lock held = FS_LOCK_NONE;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK) {
        struct flock rd = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        held = fcntl(fd, F_GETLK, &rd) == 0 && rd.l_type == F_UNLCK ? FS_LOCK_READ : FS_LOCK_WRITE;
    }
    close(fd);
    return held;
}
