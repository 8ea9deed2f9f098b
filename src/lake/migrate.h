/*
 * migrate.h — upgrading a DuckLake catalog written by an older DuckLake
 * (format 0.1 … 0.4) to the 1.0 format tarn reads and writes.
 *
 * The upgrade is one-way and runs in one catalog transaction: it either
 * completes or leaves the catalog as it was.
 */
#ifndef TARN_LAKE_MIGRATE_H
#define TARN_LAKE_MIGRATE_H

#include "lake/catdb.h"
#include "util/buf.h"

#include <duckdb.h>

/* Migrates catalog database `db` from format
 * `from` to 1.0. With dry_run nothing changes; either way `report` gets
 * one line per step (what is, or would be, done). Fails for versions it
 * does not know, naming them. */
int lk_migrate(lk_catdb *db, duckdb_connection con, const char *from, int dry_run,
               tarn_buf *report);

#endif
