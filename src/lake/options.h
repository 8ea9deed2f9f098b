/*
 * options.h — DuckLake's lake options: the keys of ducklake_metadata that
 * set_option writes (global, or scoped to a schema or table). For each:
 * what it is for (shown by ducklake_options), and the form DuckLake stores
 * a given value in, refusing the values DuckLake refuses. Also sizes
 * written with a unit ('512MB', '1KiB'), as DuckDB reads memory limits.
 */
#ifndef TARN_LAKE_OPTIONS_H
#define TARN_LAKE_OPTIONS_H

#include <duckdb.h>
#include <stdint.h>

/* What option `name` is for; NULL for a key DuckLake does not know. */
const char *lk_option_description(const char *name);

/* *out (malloc'd) gets the value to store for option `name` (any case)
 * given `value` (text, NULL for SQL NULL), and *key the option's stored
 * name (lower case, malloc'd). Casts run in `con` (DuckDB's own rules and
 * messages). An unknown option or a refused value is TARN_EINVALID /
 * TARN_EUNSUPPORTED naming the option. */
int lk_option_value(char **key, char **out, duckdb_connection con, const char *name,
                    const char *value);

/* Bytes in `text`: a number and a unit (B, KB, MB, GB, TB for powers of
 * 1000, KiB … TiB for powers of 1024; the unit is required, as DuckDB's
 * memory_limit requires it). */
int lk_size_parse(int64_t *out, const char *text);

#endif
