/*
 * catlink.h — a connection of its own to a lake's catalog database, for
 * tarn's own tables that several processes share there (the job queue of
 * `tarn worker`, materialize/queue.h): its statements run at once, each in
 * its own transaction (autocommit), beside the lake's catalog
 * transaction, on another connection — so a worker's heartbeat thread can
 * renew its lease while the worker's session builds, and `SELECT … FOR
 * UPDATE SKIP LOCKED` takes its row locks in PostgreSQL itself.
 *
 * Only a catalog that several processes write at once has one: PostgreSQL
 * (a DuckDB-file catalog has one writer process). SQL is written as the
 * lake layer writes catalog SQL, qualified by lk_catdb_name(); the link
 * turns that prefix into the PostgreSQL schema. Reads ducklake_snapshot only
 * (lk_catlink_commit_snapshot_sql).
 */
#ifndef TARN_LAKE_CATLINK_H
#define TARN_LAKE_CATLINK_H

#include "duck/duck.h"
#include "lake/catdb.h"

#include <stdint.h>

typedef struct lk_catlink lk_catlink;

/* Connects to the database of catalog `db` (a PostgreSQL catalog: else
 * TARN_EINVALID). The link keeps copies of what it needs: it outlives the
 * lake. */
int lk_catlink_open(lk_catlink **out, const lk_catdb *db);
void lk_catlink_close(lk_catlink *l);
/* Runs one statement / a query (rows as text, as duck_table_query). Safe
 * from one thread at a time. */
int lk_catlink_exec(lk_catlink *l, const char *sql, int64_t *changed);
int lk_catlink_query(duck_table *out, lk_catlink *l, const char *sql);

/* An SQL expression for the snapshot the catalog transaction it runs in
 * commits (the newest snapshot row: a commit writes its own first, under
 * the commit lock), `provisional` when there is none; tables qualified
 * by prefix `cat` (quote_prefixed). A statement a commit carries for its
 * caller names its snapshot with it: a commit moved onto other writers'
 * snapshots (rebase.c) gets another id than it was given. Malloc'd. */
char *lk_catlink_commit_snapshot_sql(const char *cat, int64_t provisional);

#endif
