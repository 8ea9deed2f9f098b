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
 * UUID, INTERVAL, wider DECIMALs, ENUM, STRUCT/LIST/MAP) by the bytes of its
 * text form, CAST(x AS VARCHAR). Key expressions spell out that cast; the
 * function writes the same text itself for the scalar ones (the unit test
 * compares it with DuckDB's cast) and refuses nested values with a hint.
 */
#include "lake/bucket.h"

#include "lake/murmur3.h"
#include "tarn/error.h"
#include "util/quote.h"

#include <errno.h>
#include <inttypes.h>
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

void lk_bucket_key_of(tarn_buf *b, const char *expr, const char *lake_type, int32_t n)
{
    int text = lk_bucket_form(lake_type) == LK_HASH_TEXT;
    buf_puts(b, text ? "(murmur3_32(CAST(" : "(murmur3_32(");
    buf_puts(b, expr);
    buf_printf(b, "%s) & 2147483647) %% %d", text ? " AS VARCHAR)" : "", (int)n);
}

void lk_bucket_key_expr(tarn_buf *b, const char *column, const char *lake_type, int32_t n)
{
    tarn_buf col = {0};
    quote_ident(&col, column);
    lk_bucket_key_of(b, buf_cstr(&col), lake_type, n);
    buf_free(&col);
}

/* ---- text forms: DuckDB's CAST(x AS VARCHAR) of the scalar types DuckLake
 * hashes by their text (unsigned and 128-bit integers, UUID, wide DECIMAL,
 * INTERVAL, ENUM). tests/unit/test_murmur3.c checks each against the cast. */

typedef unsigned __int128 u128;

/* Writes v in decimal at the end of buf[0..64) and returns its start. */
static char *fmt_u128(char *end, u128 v)
{
    do {
        *--end = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    return end;
}

static size_t fmt_signed128(char *out, u128 magnitude, int negative, unsigned scale)
{
    char tmp[64];
    char *end = tmp + sizeof(tmp), *p = fmt_u128(end, magnitude);
    size_t n = 0;
    if (negative)
        out[n++] = '-';
    size_t digits = (size_t)(end - p);
    if (scale == 0) {
        memcpy(out + n, p, digits);
        return n + digits;
    }
    if (digits <= scale) { /* 0.0…0ddd */
        out[n++] = '0';
        out[n++] = '.';
        memset(out + n, '0', scale - digits);
        n += scale - digits;
        memcpy(out + n, p, digits);
        return n + digits;
    }
    memcpy(out + n, p, digits - scale);
    n += digits - scale;
    out[n++] = '.';
    memcpy(out + n, p + digits - scale, scale);
    return n + scale;
}

static size_t fmt_hugeint(char *out, duckdb_hugeint h, unsigned scale)
{
    u128 v = ((u128)(uint64_t)h.upper << 64) | h.lower;
    int negative = h.upper < 0;
    return fmt_signed128(out, negative ? ~v + 1 : v, negative, scale);
}

/* DuckDB keeps a UUID as a HUGEINT whose top bit is flipped. */
static size_t fmt_uuid(char *out, duckdb_hugeint h)
{
    uint64_t hi = (uint64_t)h.upper ^ (UINT64_C(1) << 63), lo = h.lower;
    char hex[33];
    snprintf(hex, sizeof(hex), "%016" PRIx64 "%016" PRIx64, hi, lo);
    return (size_t)snprintf(out, 64, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
                            hex + 20);
}

/* "N unit[s]" for a non-zero part, space-separated. */
static size_t fmt_interval_part(char *out, size_t n, int32_t v, const char *unit)
{
    if (v == 0)
        return n;
    return n + (size_t)sprintf(out + n, "%s%d %s%s", n ? " " : "", (int)v, unit,
                               v == 1 || v == -1 ? "" : "s");
}

static size_t fmt_interval(char *out, duckdb_interval iv)
{
    size_t n = 0;
    n = fmt_interval_part(out, n, iv.months / 12, "year");
    n = fmt_interval_part(out, n, iv.months % 12, "month");
    n = fmt_interval_part(out, n, iv.days, "day");
    if (iv.micros == 0) {
        if (n == 0)
            n = (size_t)sprintf(out, "00:00:00");
        return n;
    }
    uint64_t us = iv.micros < 0 ? -(uint64_t)iv.micros : (uint64_t)iv.micros;
    uint64_t h = us / 3600000000u, m = us / 60000000u % 60, sec = us / 1000000u % 60,
             frac = us % 1000000u;
    n += (size_t)sprintf(out + n, "%s%s%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, n ? " " : "",
                         iv.micros < 0 ? "-" : "", h, m, sec);
    if (frac) {
        n += (size_t)sprintf(out + n, ".%06" PRIu64, frac);
        while (out[n - 1] == '0')
            n--;
    }
    return n;
}

/* ---- murmur3_32(x), a DuckDB scalar function ---- */

typedef enum { HASH_NONE, HASH_DIRECT, HASH_TEXT } hash_path;

/* Whether a value of `t` is hashed directly (by its stored bytes), by the
 * text form above, or not at all here (nested types: DuckLake hashes
 * their text too, which a key expression gets with a CAST). */
static hash_path hash_path_of(duckdb_logical_type t)
{
    switch (duckdb_get_type_id(t)) {
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
        return HASH_DIRECT;
    case DUCKDB_TYPE_DECIMAL:
        return duckdb_decimal_internal_type(t) == DUCKDB_TYPE_HUGEINT ? HASH_TEXT : HASH_DIRECT;
    case DUCKDB_TYPE_UTINYINT:
    case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER:
    case DUCKDB_TYPE_UBIGINT:
    case DUCKDB_TYPE_HUGEINT:
    case DUCKDB_TYPE_UHUGEINT:
    case DUCKDB_TYPE_UUID:
    case DUCKDB_TYPE_INTERVAL:
    case DUCKDB_TYPE_ENUM:
        return HASH_TEXT;
    default:
        return HASH_NONE;
    }
}

static void murmur3_bind(duckdb_bind_info info)
{
    duckdb_expression arg = duckdb_scalar_function_bind_get_argument(info, 0);
    duckdb_logical_type t = duckdb_expression_return_type(arg);
    if (hash_path_of(t) == HASH_NONE)
        duckdb_scalar_function_bind_set_error(
            info, "murmur3_32: DuckLake hashes a nested value by its text form; "
                  "write murmur3_32(CAST(x AS VARCHAR))");
    duckdb_destroy_logical_type(&t);
    duckdb_destroy_expression(&arg);
}

static int64_t enum_index(duckdb_type storage, const void *data, idx_t i)
{
    if (storage == DUCKDB_TYPE_UTINYINT)
        return ((const uint8_t *)data)[i];
    if (storage == DUCKDB_TYPE_USMALLINT)
        return ((const uint16_t *)data)[i];
    return ((const uint32_t *)data)[i];
}

/* The text form of row i of a HASH_TEXT vector of type t, hashed. */
static int32_t hash_text_row(duckdb_logical_type t, const void *data, idx_t i)
{
    char buf[128];
    size_t n = 0;
    switch (duckdb_get_type_id(t)) {
    case DUCKDB_TYPE_UTINYINT:
        n = (size_t)sprintf(buf, "%u", (unsigned)((const uint8_t *)data)[i]);
        break;
    case DUCKDB_TYPE_USMALLINT:
        n = (size_t)sprintf(buf, "%u", (unsigned)((const uint16_t *)data)[i]);
        break;
    case DUCKDB_TYPE_UINTEGER:
        n = (size_t)sprintf(buf, "%" PRIu32, ((const uint32_t *)data)[i]);
        break;
    case DUCKDB_TYPE_UBIGINT:
        n = (size_t)sprintf(buf, "%" PRIu64, ((const uint64_t *)data)[i]);
        break;
    case DUCKDB_TYPE_HUGEINT:
        n = fmt_hugeint(buf, ((const duckdb_hugeint *)data)[i], 0);
        break;
    case DUCKDB_TYPE_DECIMAL:
        n = fmt_hugeint(buf, ((const duckdb_hugeint *)data)[i], duckdb_decimal_scale(t));
        break;
    case DUCKDB_TYPE_UHUGEINT: {
        duckdb_uhugeint u = ((const duckdb_uhugeint *)data)[i];
        n = fmt_signed128(buf, ((u128)u.upper << 64) | u.lower, 0, 0);
        break;
    }
    case DUCKDB_TYPE_UUID:
        n = fmt_uuid(buf, ((const duckdb_hugeint *)data)[i]);
        break;
    case DUCKDB_TYPE_INTERVAL:
        n = fmt_interval(buf, ((const duckdb_interval *)data)[i]);
        break;
    case DUCKDB_TYPE_ENUM: {
        char *label = duckdb_enum_dictionary_value(
            t, (idx_t)enum_index(duckdb_enum_internal_type(t), data, i));
        int32_t h = lk_murmur3_32(label, label ? strlen(label) : 0, 0);
        duckdb_free(label);
        return h;
    }
    default:
        break;
    }
    return lk_murmur3_32(buf, n, 0);
}

/* Row i of a HASH_DIRECT vector whose storage type is `type`, hashed. */
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
    default: /* every other directly hashed type is stored in 8 bytes */
        return lk_murmur3_long(((const int64_t *)data)[i]);
    }
}

static void murmur3_exec(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output)
{
    idx_t n = duckdb_data_chunk_get_size(input);
    duckdb_vector v = duckdb_data_chunk_get_vector(input, 0);
    duckdb_logical_type t = duckdb_vector_get_column_type(v);
    hash_path path = hash_path_of(t);
    duckdb_type type = duckdb_get_type_id(t);
    if (type == DUCKDB_TYPE_DECIMAL && path == HASH_DIRECT)
        type = duckdb_decimal_internal_type(t);
    const void *data = duckdb_vector_get_data(v);
    uint64_t *valid = duckdb_vector_get_validity(v);
    int32_t *out = duckdb_vector_get_data(output);
    duckdb_vector_ensure_validity_writable(output);
    uint64_t *out_valid = duckdb_vector_get_validity(output);
    if (path == HASH_NONE)
        duckdb_scalar_function_set_error(info, "murmur3_32: unsupported argument type");
    for (idx_t i = 0; path != HASH_NONE && i < n; i++) {
        if (type == DUCKDB_TYPE_SQLNULL || (valid && !duckdb_validity_row_is_valid(valid, i))) {
            duckdb_validity_set_row_invalid(out_valid, i);
            out[i] = 0;
        } else {
            out[i] = path == HASH_TEXT ? hash_text_row(t, data, i) : hash_row(type, data, i);
        }
    }
    duckdb_destroy_logical_type(&t);
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
