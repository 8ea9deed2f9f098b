/*
 * migrate.c — DuckLake catalog format upgrades (see migrate.h).
 */
#include "lake/migrate.h"

#include "tarn/error.h"

int lk_migrate(duckdb_connection con, const char *meta, const char *from, int dry_run,
               tarn_buf *report)
{
    (void)con;
    (void)meta;
    (void)dry_run;
    (void)report;
    return tarn_error_set(TARN_EUNSUPPORTED, "upgrading a DuckLake %s catalog is not supported yet",
                          from ? from : "(unknown)");
}
