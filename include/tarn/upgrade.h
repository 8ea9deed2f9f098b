/*
 * tarn/upgrade.h — reading and upgrading the format version of a DuckLake
 * catalog file (`tarn lake upgrade`).
 *
 * A lake is opened through the session only when its catalog is DuckLake
 * 1.0; these calls work on the catalog file directly, in a private DuckDB
 * of their own, so that an older catalog (0.1 … 0.4) can be read and
 * migrated. The migration itself is lake/migrate.c's.
 */
#ifndef TARN_UPGRADE_H
#define TARN_UPGRADE_H

/* *out gets the `version` of the DuckLake catalog file at `path` ("1.0",
 * "0.3", …; malloc'd). Fails (TARN_EINVALID) when the file is no DuckLake
 * catalog or has no version. */
int tarn_upgrade_version(char **out, const char *path);

/* Migrates the catalog file at `path`, of format `from`, to DuckLake 1.0
 * in one transaction; with apply 0 the transaction is rolled back and
 * nothing changes. Either way *steps gets one line per step (what is, or
 * would be, done; malloc'd). */
int tarn_upgrade_run(char **steps, const char *path, const char *from, int apply);

#endif
