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

/* 1 when another process holds a shared (read) lock on file `path` and
 * none holds an exclusive one — the file is being read, as DuckDB's
 * READ_ONLY attach locks it; 0 otherwise (no lock, a writer's lock, no
 * such file). fcntl's F_GETLK, which does not see this process's own
 * locks. */
int fs_read_locked(const char *path);

#endif
