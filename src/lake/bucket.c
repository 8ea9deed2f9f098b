/*
 * bucket.c — DuckLake's bucket(N) partition transform (DuckLake format
 * §4.12): the key of a row is (murmur3_32(value) & 2147483647) % N, an
 * INTEGER from 0 to N - 1, stored in ducklake_file_partition_value as text
 * and written under hive directories `bucket=<k>`.
 *
 * murmur3_32(x) is the scalar function DuckLake registers; tarn registers
 * its own (a C function over murmur3.c) on each DuckDB connection it
 * opens, so write key expressions, flushes and users' queries compute the
 * same values as DuckLake. Which bytes a value is hashed by follows
 * DuckLake, which follows the physical type of the value: integers,
 * booleans, dates, times, timestamps and DECIMALs of up to 18 digits as a
 * 64-bit integer; FLOAT/DOUBLE as double bits; VARCHAR/JSON/BLOB as their
 * bytes (all as in Iceberg); every other type (HUGEINT, unsigned integers,
 * UUID, INTERVAL, wider DECIMALs, STRUCT/LIST/MAP) by the bytes of its text
 * form, CAST(x AS VARCHAR) — key expressions spell out that cast, and the
 * function refuses those types rather than guess DuckDB's text form.
 */
#include "lake/bucket.h"

#include "lake/murmur3.h"
#include "tarn/error.h"
#include "util/quote.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

lk_hash_form lk_bucket_form(const char *lake_type)
{
    static const char *const LONGS[] = {
        "boolean", "int8",      "int16",       "int32",        "int64",        "date",       "time",
        "timetz",  "timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns", "timestamptz"};
    for (size_t i = 0; i < sizeof(LONGS) / sizeof(LONGS[0]); i++)
        if (strcasecmp(lake_type, LONGS[i]) == 0)
            return LK_HASH_LONG;
    if (strcasecmp(lake_type, "float32") == 0 || strcasecmp(lake_type, "float64") == 0)
        return LK_HASH_DOUBLE;
    if (strcasecmp(lake_type, "varchar") == 0 || strcasecmp(lake_type, "json") == 0 ||
        strcasecmp(lake_type, "blob") == 0)
        return LK_HASH_BYTES;
    unsigned width = 0, scale = 0;
    if (strncasecmp(lake_type, "decimal(", 8) == 0 &&
        sscanf(lake_type + 8, "%u,%u", &width, &scale) == 2 && width <= 18)
        return LK_HASH_LONG;
    return LK_HASH_TEXT;
}

/* A positive decimal integer of at most INT32_MAX, the whole of `s`. */
static int parse_count(const char *s, int32_t *n)
{
    if (*s < '0' || *s > '9')
        return 0;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < 1 || v > INT32_MAX)
        return 0;
    *n = (int32_t)v;
    return 1;
}

int lk_bucket_parse(const char *transform, int32_t *n)
{
    size_t len = strlen(transform);
    if (strncmp(transform, "bucket(", 7) != 0 || len < 9 || transform[len - 1] != ')')
        return 0;
    char digits[24];
    size_t nd = len - 8;
    if (nd >= sizeof(digits))
        return 0;
    memcpy(digits, transform + 7, nd);
    digits[nd] = '\0';
    return parse_count(digits, n);
}

int lk_bucket_check_count(const char *text, int32_t *n)
{
    const char *p = text[0] == '+' ? text + 1 : text;
    int digits = *p != '\0';
    for (const char *q = p; *q; q++)
        digits = digits && *q >= '0' && *q <= '9';
    int negative = text[0] == '-' && text[1] >= '0' && text[1] <= '9';
    if (!digits && !negative)
        return tarn_error_set(TARN_EINVALID, "Bucket count must be an integer");
    if (negative || strspn(p, "0") == strlen(p))
        return tarn_error_set(TARN_EINVALID, "Bucket count must be positive");
    if (!parse_count(p, n))
        return tarn_error_set(TARN_EINVALID, "Bucket count cannot exceed %d", INT32_MAX);
    return 0;
}

void lk_bucket_key_expr(tarn_buf *b, const char *column, const char *lake_type, int32_t n)
{
    int text = lk_bucket_form(lake_type) == LK_HASH_TEXT;
    buf_puts(b, text ? "(murmur3_32(CAST(" : "(murmur3_32(");
    quote_ident(b, column);
    buf_printf(b, "%s) & 2147483647) %% %d", text ? " AS VARCHAR)" : "", (int)n);
}

/* ---- murmur3_32(x), a DuckDB scalar function ---- */

/* The DuckDB type a value of `t` is hashed by (a DECIMAL by its storage
 * type), or DUCKDB_TYPE_INVALID when DuckLake hashes its text form. */
static duckdb_type hashed_type(duckdb_logical_type t)
{
    duckdb_type id = duckdb_get_type_id(t);
    if (id == DUCKDB_TYPE_DECIMAL) {
        id = duckdb_decimal_internal_type(t);
        return id == DUCKDB_TYPE_HUGEINT ? DUCKDB_TYPE_INVALID : id;
    }
    switch (id) {
    case DUCKDB_TYPE_BOOLEAN:
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_DATE:
    case DUCKDB_TYPE_TIME:
    case DUCKDB_TYPE_TIME_NS:
    case DUCKDB_TYPE_TIME_TZ:
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_S:
    case DUCKDB_TYPE_TIMESTAMP_MS:
    case DUCKDB_TYPE_TIMESTAMP_NS:
    case DUCKDB_TYPE_TIMESTAMP_TZ:
    case DUCKDB_TYPE_FLOAT:
    case DUCKDB_TYPE_DOUBLE:
    case DUCKDB_TYPE_VARCHAR:
    case DUCKDB_TYPE_BLOB:
    case DUCKDB_TYPE_SQLNULL:
        return id;
    default:
        return DUCKDB_TYPE_INVALID;
    }
}

static void murmur3_bind(duckdb_bind_info info)
{
    duckdb_expression arg = duckdb_scalar_function_bind_get_argument(info, 0);
    duckdb_logical_type t = duckdb_expression_return_type(arg);
    if (hashed_type(t) == DUCKDB_TYPE_INVALID)
        duckdb_scalar_function_bind_set_error(
            info, "murmur3_32: DuckLake hashes a value of this type by its text form; "
                  "write murmur3_32(CAST(x AS VARCHAR))");
    duckdb_destroy_logical_type(&t);
    duckdb_destroy_expression(&arg);
}

static int32_t hash_row(duckdb_type type, const void *data, idx_t i)
{
    switch (type) {
    case DUCKDB_TYPE_BOOLEAN:
        return lk_murmur3_long(((const bool *)data)[i] ? 1 : 0);
    case DUCKDB_TYPE_TINYINT:
        return lk_murmur3_long(((const int8_t *)data)[i]);
    case DUCKDB_TYPE_SMALLINT:
        return lk_murmur3_long(((const int16_t *)data)[i]);
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_DATE:
        return lk_murmur3_long(((const int32_t *)data)[i]);
    case DUCKDB_TYPE_FLOAT:
        return lk_murmur3_double(((const float *)data)[i]);
    case DUCKDB_TYPE_DOUBLE:
        return lk_murmur3_double(((const double *)data)[i]);
    case DUCKDB_TYPE_VARCHAR:
    case DUCKDB_TYPE_BLOB: {
        duckdb_string_t s = ((const duckdb_string_t *)data)[i];
        return lk_murmur3_32(duckdb_string_t_data(&s), duckdb_string_t_length(s), 0);
    }
    default: /* every other hashed type is stored in 8 bytes */
        return lk_murmur3_long(((const int64_t *)data)[i]);
    }
}

static void murmur3_exec(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output)
{
    idx_t n = duckdb_data_chunk_get_size(input);
    duckdb_vector v = duckdb_data_chunk_get_vector(input, 0);
    duckdb_logical_type t = duckdb_vector_get_column_type(v);
    duckdb_type type = hashed_type(t);
    duckdb_destroy_logical_type(&t);
    if (type == DUCKDB_TYPE_INVALID) {
        duckdb_scalar_function_set_error(info, "murmur3_32: unsupported argument type");
        return;
    }
    const void *data = duckdb_vector_get_data(v);
    uint64_t *valid = duckdb_vector_get_validity(v);
    int32_t *out = duckdb_vector_get_data(output);
    duckdb_vector_ensure_validity_writable(output);
    uint64_t *out_valid = duckdb_vector_get_validity(output);
    for (idx_t i = 0; i < n; i++) {
        if (type == DUCKDB_TYPE_SQLNULL || (valid && !duckdb_validity_row_is_valid(valid, i))) {
            duckdb_validity_set_row_invalid(out_valid, i);
            out[i] = 0;
            continue;
        }
        out[i] = hash_row(type, data, i);
    }
}

int lk_bucket_register(duckdb_connection con)
{
    duckdb_scalar_function f = duckdb_create_scalar_function();
    duckdb_scalar_function_set_name(f, "murmur3_32");
    duckdb_logical_type any = duckdb_create_logical_type(DUCKDB_TYPE_ANY);
    duckdb_logical_type int32 = duckdb_create_logical_type(DUCKDB_TYPE_INTEGER);
    duckdb_scalar_function_add_parameter(f, any);
    duckdb_scalar_function_set_return_type(f, int32);
    duckdb_scalar_function_set_bind(f, murmur3_bind);
    duckdb_scalar_function_set_function(f, murmur3_exec);
    duckdb_state st = duckdb_register_scalar_function(con, f);
    duckdb_destroy_logical_type(&any);
    duckdb_destroy_logical_type(&int32);
    duckdb_destroy_scalar_function(&f);
    return st == DuckDBSuccess ? 0
                               : tarn_error_set(TARN_ERROR, "cannot register murmur3_32 in DuckDB");
}
