/*
 * settings.h — DuckLake's DuckDB settings (ducklake_default_data_inlining_row_limit,
 * ducklake_target_file_size, ducklake_max_retry_count, …): registered with
 * the session's DuckDB so that SET, RESET and current_setting() know them,
 * and read where DuckLake reads them (a session's target file size comes
 * before the lake's option; the default inlining limit after the lake's
 * options).
 */
#ifndef TARN_LAKE_SETTINGS_H
#define TARN_LAKE_SETTINGS_H

#include <duckdb.h>
#include <stdint.h>

/* Registers the settings on the database of `con` (once per database). */
int lk_settings_register(duckdb_connection con);

/* Checks `SET name = value` as DuckLake does before DuckDB stores it
 * (ducklake_target_file_size must be a size with a unit, not 0); 0 for
 * every other setting. `value` is the text of the value, NULL when it is
 * not a constant. */
int lk_setting_check(const char *name, const char *value);

/* A SET or RESET ran: values cached before are stale. */
void lk_settings_changed(void);
/* Changes with every lk_settings_changed (for caches of the values). */
unsigned lk_settings_generation(void);

/* ducklake_target_file_size in bytes, or -1 when it is not set. */
int64_t lk_setting_target_file_size(duckdb_connection con);
/* ducklake_default_data_inlining_row_limit (10 unless set). */
int64_t lk_setting_default_inline_limit(duckdb_connection con);

/* ducklake_max_retry_count, ducklake_retry_wait_ms, ducklake_retry_backoff:
 * how a commit that another writer's commit made fail is retried
 * (commit.c). */
typedef struct {
    int64_t max_retry_count, retry_wait_ms;
    double retry_backoff;
} lk_retry_settings;
void lk_setting_retry(lk_retry_settings *out, duckdb_connection con);

#endif
