/*
 * settings.c — DuckLake's DuckDB settings (see settings.h). Reads no
 * catalog rows: only the session's current_setting() values.
 */
#include "lake/settings.h"

#include "duck/duck.h"
#include "lake/options.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    duckdb_type type;
    const char *dflt;
    const char *description;
} SETTINGS[] = {
    {"ducklake_max_retry_count", DUCKDB_TYPE_UBIGINT, "10",
     "How many times a DuckLake commit that conflicts with another is retried"},
    {"ducklake_retry_wait_ms", DUCKDB_TYPE_UBIGINT, "100", "Milliseconds between retries"},
    {"ducklake_retry_backoff", DUCKDB_TYPE_DOUBLE, "1.5",
     "Factor by which the wait grows from one retry to the next"},
    {"ducklake_default_data_inlining_row_limit", DUCKDB_TYPE_UBIGINT, "10",
     "Inlining row limit of lakes whose catalog sets none (0: no inlining)"},
    {"ducklake_target_file_size", DUCKDB_TYPE_VARCHAR, NULL,
     "Target data file size of inserts and compaction, before the lake's own option"},
    {"ducklake_write_deletion_vectors", DUCKDB_TYPE_BOOLEAN, "false",
     "(experimental) Write deletes as Iceberg v3 deletion vectors"},
};

/* Bumped by every SET or RESET: values cached before are stale. */
static _Atomic unsigned generation = 1;

int lk_settings_register(duckdb_connection con)
{
    for (size_t i = 0; i < sizeof(SETTINGS) / sizeof(SETTINGS[0]); i++) {
        int rc = duck_register_setting(con, SETTINGS[i].name, SETTINGS[i].description,
                                       SETTINGS[i].type, SETTINGS[i].dflt);
        if (rc)
            return rc;
    }
    return 0;
}

int lk_setting_check(const char *name, const char *value)
{
    if (strcasecmp(name, "ducklake_target_file_size") != 0 || !value || !*value)
        return 0;
    int64_t n = 0;
    int rc = lk_size_parse(&n, value);
    if (!rc && n == 0)
        rc = tarn_error_set(TARN_EINVALID, "ducklake_target_file_size cannot be 0");
    return rc;
}

void lk_settings_changed(void)
{
    generation++;
}

unsigned lk_settings_generation(void)
{
    return generation;
}

static char *current(duckdb_connection con, const char *name)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT current_setting(");
    quote_literal(&b, name);
    buf_puts(&b, ")::VARCHAR");
    char *v = NULL;
    if (duck_query_string(&v, con, buf_cstr(&b)) != 0) {
        tarn_error_clear();
        v = NULL;
    }
    buf_free(&b);
    return v;
}

int64_t lk_setting_target_file_size(duckdb_connection con)
{
    char *v = current(con, "ducklake_target_file_size");
    int64_t n = -1;
    if (v && *v && lk_size_parse(&n, v) != 0) {
        tarn_error_clear();
        n = -1;
    }
    free(v);
    return n;
}

int64_t lk_setting_default_inline_limit(duckdb_connection con)
{
    char *v = current(con, "ducklake_default_data_inlining_row_limit");
    int64_t n = v ? strtoll(v, NULL, 10) : 10;
    free(v);
    return n;
}

void lk_setting_retry(lk_retry_settings *out, duckdb_connection con)
{
    out->max_retry_count = 10;
    out->retry_wait_ms = 100;
    out->retry_backoff = 1.5;
    duck_table t = {0};
    if (duck_table_query(&t, con,
                         "SELECT current_setting('ducklake_max_retry_count')::VARCHAR, "
                         "current_setting('ducklake_retry_wait_ms')::VARCHAR, "
                         "current_setting('ducklake_retry_backoff')::VARCHAR") != 0) {
        tarn_error_clear();
        return;
    }
    if (t.nrows == 1 && t.ncols == 3) {
        const char *v;
        if ((v = duck_table_get(&t, 0, 0)) != NULL)
            out->max_retry_count = strtoll(v, NULL, 10);
        if ((v = duck_table_get(&t, 0, 1)) != NULL)
            out->retry_wait_ms = strtoll(v, NULL, 10);
        if ((v = duck_table_get(&t, 0, 2)) != NULL)
            out->retry_backoff = strtod(v, NULL);
    }
    duck_table_free(&t);
}
