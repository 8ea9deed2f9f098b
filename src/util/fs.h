/*
 * fs.h — the few file-system operations tarn needs.
 */
#ifndef TARN_FS_H
#define TARN_FS_H

/* Creates `dir` and its missing parents (like mkdir -p). */
int fs_mkdir_p(const char *dir);

#endif
