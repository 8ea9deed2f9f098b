/*
 * fs.c — file-system helpers (see fs.h).
 */
#include "util/fs.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int fs_mkdir_p(const char *dir)
{
    char *p = xstrdup(dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            int rc = tarn_error_set(TARN_ERROR, "cannot create directory %s: %s", p,
                                    strerror(errno));
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
