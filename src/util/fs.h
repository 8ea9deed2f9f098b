/*
 * fs.h — the few file-system operations tarn needs.
 */
#ifndef TARN_FS_H
#define TARN_FS_H

#include <stddef.h>

/* Creates `dir` and its missing parents (like mkdir -p). */
int fs_mkdir_p(const char *dir);
/* Reads the whole file at `path` into *out (NUL-terminated; the caller
 * frees). A missing file is TARN_ENOTFOUND, with the reason in the error. */
int fs_read_file(char **out, const char *path);
/* The same, with the file's length (the text may hold NUL bytes). */
int fs_read_file_len(char **out, size_t *len, const char *path);

/* The lock other processes hold on file `path`: FS_LOCK_READ when they
 * hold shared (read) locks only — the file is being read, as DuckDB's
 * READ_ONLY attach locks it; FS_LOCK_WRITE when one holds an exclusive
 * lock; FS_LOCK_NONE when none holds any (or there is no such file).
 * fcntl's F_GETLK, which does not see this process's own locks. */
typedef enum { FS_LOCK_NONE, FS_LOCK_READ, FS_LOCK_WRITE } fs_lock;
fs_lock fs_lock_held(const char *path);

#endif
