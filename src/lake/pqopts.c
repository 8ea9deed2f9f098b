/*
 * pqopts.c — the writer options of a table's data files (see pqopts.h).
 * Reads the ducklake_metadata options through the lake's option cache
 * (handle.c); writes no catalog rows.
 */
#include "lake/pqopts.h"

#include "lake/settings.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

void lk_pqopts_sql(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    /* the values were checked and normalized by set_option (options.c):
     * a codec name, V1/V2, or a number of rows or bytes */
    static const struct {
        const char *option, *copy;
        int literal; /* passed as a string */
    } MAP[] = {
        {"parquet_compression", "COMPRESSION", 1},
        {"parquet_version", "PARQUET_VERSION", 1},
        {"parquet_compression_level", "COMPRESSION_LEVEL", 0},
        {"parquet_row_group_size", "ROW_GROUP_SIZE", 0},
    };
    for (size_t i = 0; i < sizeof(MAP) / sizeof(MAP[0]); i++) {
        const char *v = lk_lake_option(lake, con, MAP[i].option, t);
        if (!v)
            continue;
        buf_printf(b, "%s ", MAP[i].copy);
        if (MAP[i].literal)
            quote_literal(b, v);
        else
            buf_printf(b, "%lld", strtoll(v, NULL, 10));
        buf_puts(b, ", ");
    }
    /* stored in bytes; DuckDB reads the option as a size with a unit */
    const char *bytes = lk_lake_option(lake, con, "parquet_row_group_size_bytes", t);
    if (bytes)
        buf_printf(b, "ROW_GROUP_SIZE_BYTES '%lld bytes', ", strtoll(bytes, NULL, 10));
}

int64_t lk_pqopts_target_file_size(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    int64_t session = lk_setting_target_file_size(con);
    if (session > 0)
        return session;
    const char *v = lk_lake_option(lake, con, "target_file_size", t);
    int64_t n = v ? strtoll(v, NULL, 10) : 0;
    return n > 0 ? n : LK_DEFAULT_TARGET_FILE_SIZE;
}

int lk_pqopts_per_thread(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    const char *v = lk_lake_option(lake, con, "per_thread_output", t);
    return v && strcmp(v, "true") == 0;
}
