/*
 * catchup.c — an attached lake brought up to date with the commits other
 * processes made since it read its catalog (lake.h, lk_lake_catch_up):
 * the catalog model reloaded, and only the views those commits' changes
 * call for rebuilt, as after a commit of the session's own — a full
 * reload rebuilds every table's view, which costs a statement per table
 * per catch-up. Reads ducklake_snapshot and ducklake_snapshot_changes
 * (the changes_made of the snapshots in between), then every catalog
 * table at the last of them (lk_catalog_load). The changes_made lists
 * are read and split by changes.c.
 */
#include "lake/catdb.h"
#include "lake/changes.h"
#include "lake/info.h"
#include "lake/lake.h"
#include "lake/model.h"
#include "lake/views.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/strlist.h"

#include <stdlib.h>
#include <string.h>

int lk_lake_catch_up(lk_lake *lake, duckdb_connection con)
{
    if (lake->txn)
        return tarn_error_set(TARN_EINVALID, "lake \"%s\" has an open transaction", lake->alias);
    if (lake->pinned >= 0)
        return 0; /* it reads one snapshot */
    char *q = lk_info_last_snapshot_sql(lake);
    int64_t last = -1;
    int rc = lk_catdb_query_int64(&last, NULL, &lake->db, con, q);
    free(q);
    if (rc || last == lake->cat.snapshot_id)
        return rc;
    /* their commits may have made catalog tables (inlined data) */
    rc = lk_catdb_refresh(&lake->db, con);
    if (rc)
        return rc;
    strlist tokens = {0};
    rc = lk_changes_made(&tokens, &lake->db, lake->meta, con, lake->cat.snapshot_id, last, 0);
    if (rc) {
        strlist_free(&tokens);
        return rc;
    }
    /* at `last`, not the latest: a commit landing after `last` was read
     * would be in the catalog without its changes above, and its tables
     * would never get views (the next catch-up starts after it) */
    lk_catalog fresh;
    rc = lk_catalog_load(&fresh, &lake->db, con, last);
    if (rc) {
        strlist_free(&tokens);
        return rc;
    }
    lk_lake_caches_forget(lake);
    lk_lake_meta_tables_forget(lake); /* their inlined-data tables */
    lk_catalog old = lake->cat;
    lake->cat = fresh;
    lake->nrow_ids = 0; /* row ids moved */
    rc = lk_lake_sync_views(lake, con, &old, tokens.items, tokens.n, NULL, 0);
    lk_catalog_free(&old);
    strlist_free(&tokens);
    return rc;
}
