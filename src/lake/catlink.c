/*
 * catlink.c — a second connection to a PostgreSQL catalog database, for
 * tarn's shared tables there (see catlink.h). Reads and writes no
 * ducklake_* table: only what its caller sends.
 */
#include "lake/catlink.h"

#include "duck/pgscan.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

struct lk_catlink {
    duck_pg *pg;
    lk_catdb names; /* ops, name and pg_name only: what lk_catdb_backend_sql reads */
};

int lk_catlink_open(lk_catlink **out, const lk_catdb *db)
{
    *out = NULL;
    if (!lk_catdb_is_postgres(db) || !db->conninfo)
        return tarn_error_set(TARN_EINVALID,
                              "the catalog is a DuckDB file, which one process writes at a time");
    lk_catlink *l = xcalloc(1, sizeof(*l));
    int rc = duck_pg_connect(&l->pg, db->conninfo);
    if (rc) {
        free(l);
        return rc;
    }
    l->names.ops = db->ops;
    l->names.name = xstrdup(db->name);
    l->names.pg_name = xstrdup(db->pg_name);
    *out = l;
    return 0;
}

void lk_catlink_close(lk_catlink *l)
{
    if (!l)
        return;
    duck_pg_close(l->pg);
    free(l->names.name);
    free(l->names.pg_name);
    free(l);
}

int lk_catlink_exec(lk_catlink *l, const char *sql, int64_t *changed)
{
    char *q = lk_catdb_backend_sql(&l->names, sql);
    int rc = duck_pg_exec_count(l->pg, q, changed);
    free(q);
    return rc;
}

int lk_catlink_query(duck_table *out, lk_catlink *l, const char *sql)
{
    char *q = lk_catdb_backend_sql(&l->names, sql);
    int rc = duck_pg_query(out, l->pg, q);
    free(q);
    return rc;
}

char *lk_catlink_commit_snapshot_sql(const char *cat, int64_t provisional)
{
    tarn_buf b = {0};
    buf_puts(&b, "COALESCE((SELECT max(snapshot_id) FROM ");
    quote_prefixed(&b, cat, "ducklake_snapshot");
    buf_printf(&b, "), %lld)", (long long)provisional);
    return buf_detach(&b);
}
