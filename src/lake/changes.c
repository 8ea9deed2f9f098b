/*
 * changes.c — the changes_made lists of ducklake_snapshot_changes, read
 * and split into their entries. Each snapshot's row holds one list, the
 * entries separated by commas outside double quotes:
 *
 *   created_table:"s"."t",inserted_into_table:4,altered_table:4
 *
 * created_, dropped_ and altered_ entries change the catalog (a view to
 * make or drop, a table's shape); inserted_into_, deleted_from_ and the
 * maintenance entries change only rows. A catch-up (catchup.c) follows
 * every entry of the snapshots other processes committed; a commit's
 * views (lake.c) follow the catalog entries of the snapshots its session
 * had not seen. Reads ducklake_snapshot_changes only; writes nothing.
 */
#include "lake/changes.h"

#include "util/buf.h"

#include <string.h>

/* One change of a changes_made list: every one, or (catalog_only) only
 * the created_, dropped_ and altered_ entries. */
static void push_change(strlist *out, tarn_buf *b, int catalog_only)
{
    const char *t = buf_cstr(b);
    if (b->len && (!catalog_only || strncmp(t, "created_", 8) == 0 ||
                   strncmp(t, "dropped_", 8) == 0 || strncmp(t, "altered_", 8) == 0))
        strlist_push(out, t);
}

void lk_changes_split(strlist *out, const char *list, int catalog_only)
{
    tarn_buf b = {0};
    int quoted = 0;
    for (const char *p = list; p && *p; p++) {
        if (*p == '"')
            quoted = !quoted;
        if (*p == ',' && !quoted) {
            push_change(out, &b, catalog_only);
            buf_clear(&b);
            continue;
        }
        buf_putc(&b, *p);
    }
    push_change(out, &b, catalog_only);
    buf_free(&b);
}

int lk_changes_made(strlist *out, lk_catdb *db, const char *meta, duckdb_connection con,
                    int64_t after, int64_t upto, int catalog_only)
{
    duck_table t;
    int rc = lk_catdb_queryf(&t, db, con,
                             "SELECT changes_made FROM %s.ducklake_snapshot_changes WHERE "
                             "snapshot_id > %lld AND snapshot_id <= %lld ORDER BY snapshot_id",
                             meta, (long long)after, (long long)upto);
    if (rc)
        return rc;
    for (size_t i = 0; i < t.nrows; i++)
        lk_changes_split(out, duck_table_get(&t, i, 0), catalog_only);
    duck_table_free(&t);
    return 0;
}
