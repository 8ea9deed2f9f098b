/*
 * options.c — DuckLake's lake options (see options.h). Reads no catalog
 * rows: the session writes the ducklake_metadata row with the value made
 * here.
 */
#include "lake/options.h"

#include "duck/duck.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum {
    OPT_CODEC,      /* one of the Parquet codecs */
    OPT_PQ_VERSION, /* 1 or 2, stored as V1 / V2 */
    OPT_UINT,       /* an unsigned integer */
    OPT_UINT_POS,   /* an unsigned integer other than 0 */
    OPT_SIZE,       /* a size with a unit, stored in bytes */
    OPT_SIZE_POS,   /* the same, other than 0 */
    OPT_BOOL,       /* true / false */
    OPT_BOOL_SET,   /* the same, never NULL */
    OPT_FRACTION,   /* a number from 0 to 1 */
    OPT_INTERVAL,   /* an interval ('2 days'), or empty */
    OPT_FIXED,      /* written by DuckLake itself (version, data_path) */
} opt_kind;

static const struct {
    const char *name;
    opt_kind kind;
    const char *description;
} OPTIONS[] = {
    {"data_inlining_row_limit", OPT_UINT,
     "Inserts of at most this many rows are kept in the catalog instead of a Parquet file"},
    {"parquet_compression", OPT_CODEC,
     "Codec of the Parquet files written (uncompressed, snappy, gzip, zstd, brotli, lz4, lz4_raw)"},
    {"parquet_version", OPT_PQ_VERSION, "Parquet format version of the files written (1 or 2)"},
    {"parquet_compression_level", OPT_UINT, "Compression level of the Parquet files written"},
    {"parquet_row_group_size", OPT_UINT_POS, "Rows per row group of the Parquet files written"},
    {"parquet_row_group_size_bytes", OPT_SIZE_POS,
     "Bytes per row group of the Parquet files written"},
    {"hive_file_pattern", OPT_BOOL, "Whether partitioned files go in hive-style key=value folders"},
    {"target_file_size", OPT_SIZE, "The size data files are cut at by inserts and compaction"},
    {"version", OPT_FIXED, "Version of the DuckLake format of the catalog"},
    {"created_by", OPT_FIXED, "The program that created the lake"},
    {"data_path", OPT_FIXED, "Where the lake's data files are"},
    {"require_commit_message", OPT_BOOL,
     "Whether every snapshot needs a commit message set with set_commit_message"},
    {"rewrite_delete_threshold", OPT_FRACTION,
     "The share of a file's rows (0 to 1) that must be deleted before ducklake_rewrite_data_files "
     "rewrites it"},
    {"delete_older_than", OPT_INTERVAL,
     "The age at which unused files are removed by ducklake_cleanup_old_files and "
     "ducklake_delete_orphaned_files"},
    {"expire_older_than", OPT_INTERVAL,
     "The age at which ducklake_expire_snapshots expires snapshots by default"},
    {"auto_compact", OPT_BOOL_SET,
     "Whether the maintenance functions (flush, merge, rewrite, orphan removal) include this "
     "schema or table when called for the whole lake"},
    {"encrypted", OPT_FIXED, "Whether the Parquet files written are encrypted"},
    {"per_thread_output", OPT_BOOL, "Whether parallel inserts write one file per thread"},
    {"write_deletion_vectors", OPT_BOOL,
     "(experimental) Whether deletes are written as Iceberg v3 deletion vectors instead of "
     "Parquet delete files"},
    {"sort_on_insert", OPT_BOOL,
     "Whether inserts sort rows by the table's SET SORTED BY order (default true)"},
};

static int option_index(const char *name)
{
    for (size_t k = 0; k < sizeof(OPTIONS) / sizeof(OPTIONS[0]); k++)
        if (strcasecmp(OPTIONS[k].name, name) == 0)
            return (int)k;
    return -1;
}

const char *lk_option_description(const char *name)
{
    int k = option_index(name);
    return k < 0 ? NULL : OPTIONS[k].description;
}

/* `value` cast to `type` by DuckDB, as text (DuckDB's message on failure). */
static int cast_text(char **out, duckdb_connection con, const char *value, const char *type)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT CAST(");
    quote_literal(&b, value);
    buf_printf(&b, " AS %s)::VARCHAR", type);
    int rc = duck_query_string(out, con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static int codec_value(char **out, const char *value)
{
    static const char *const CODECS[] = {"uncompressed", "snappy", "gzip",   "zstd",
                                         "brotli",       "lz4",    "lz4_raw"};
    for (size_t i = 0; i < sizeof(CODECS) / sizeof(CODECS[0]); i++)
        if (strcasecmp(CODECS[i], value) == 0) {
            *out = xstrdup(CODECS[i]);
            return 0;
        }
    return tarn_error_set(TARN_EUNSUPPORTED,
                          "Unsupported codec \"%s\" for parquet, supported options are "
                          "uncompressed, snappy, gzip, zstd, brotli, lz4, lz4_raw",
                          value);
}

static int uint_value(char **out, duckdb_connection con, const char *value, int nonzero,
                      const char *zero_msg)
{
    int rc = cast_text(out, con, value, "UBIGINT");
    if (!rc && nonzero && strcmp(*out, "0") == 0) {
        free(*out);
        *out = NULL;
        rc = tarn_error_set(TARN_EUNSUPPORTED, "%s", zero_msg);
    }
    return rc;
}

static int size_value(char **out, const char *value, int nonzero)
{
    int64_t n = 0;
    int rc = lk_size_parse(&n, value);
    if (rc)
        return rc;
    if (nonzero && n == 0)
        return tarn_error_set(TARN_EUNSUPPORTED, "Row group size bytes cannot be 0");
    *out = xasprintf("%lld", (long long)n);
    return 0;
}

static int bool_value(char **out, duckdb_connection con, const char *value)
{
    char *v = NULL;
    int rc = cast_text(&v, con, value, "BOOLEAN");
    if (!rc)
        *out = xstrdup(v && strcmp(v, "true") == 0 ? "true" : "false");
    free(v);
    return rc;
}

static int fraction_value(char **out, duckdb_connection con, const char *value)
{
    char *v = NULL;
    int rc = cast_text(&v, con, value, "DOUBLE");
    if (rc)
        return rc;
    double d = strtod(v, NULL);
    free(v);
    if (!(d >= 0 && d <= 1))
        return tarn_error_set(TARN_EINVALID,
                              "The rewrite_delete_threshold must be between 0 and 1");
    *out = xasprintf("%f", d); /* DuckLake stores std::to_string's six decimals */
    return 0;
}

static int interval_value(char **out, duckdb_connection con, const char *key, const char *value)
{
    if (*value) {
        tarn_buf b = {0};
        buf_puts(&b, "SELECT TRY_CAST(");
        quote_literal(&b, value);
        buf_puts(&b, " AS INTERVAL) IS NOT NULL");
        char *ok = NULL;
        int rc = duck_query_string(&ok, con, buf_cstr(&b));
        buf_free(&b);
        int valid = !rc && ok && strcmp(ok, "true") == 0;
        free(ok);
        if (!valid)
            return tarn_error_set(TARN_EINVALID, "%s is not a valid interval value.", key);
    }
    *out = xstrdup(value);
    return 0;
}

static int kind_value(char **out, duckdb_connection con, int k, const char *value)
{
    const char *key = OPTIONS[k].name;
    switch (OPTIONS[k].kind) {
    case OPT_CODEC:
        return codec_value(out, value);
    case OPT_PQ_VERSION: {
        char *v = NULL;
        int rc = cast_text(&v, con, value, "UBIGINT");
        if (!rc && strcmp(v, "1") != 0 && strcmp(v, "2") != 0)
            rc = tarn_error_set(TARN_EUNSUPPORTED, "Only Parquet version 1 and 2 are supported");
        if (!rc)
            *out = xasprintf("V%s", v);
        free(v);
        return rc;
    }
    case OPT_UINT:
        return uint_value(out, con, value, 0, NULL);
    case OPT_UINT_POS:
        return uint_value(out, con, value, 1, "Row group size cannot be 0");
    case OPT_SIZE:
    case OPT_SIZE_POS:
        return size_value(out, value, OPTIONS[k].kind == OPT_SIZE_POS);
    case OPT_BOOL:
    case OPT_BOOL_SET:
        return bool_value(out, con, value);
    case OPT_FRACTION:
        return fraction_value(out, con, value);
    case OPT_INTERVAL:
        return interval_value(out, con, key, value);
    default:
        return tarn_error_set(TARN_EUNSUPPORTED, "Unsupported option %s", key);
    }
}

int lk_option_value(char **key, char **out, duckdb_connection con, const char *name,
                    const char *value)
{
    *key = NULL;
    *out = NULL;
    int k = option_index(name);
    if (k < 0 || OPTIONS[k].kind == OPT_FIXED)
        return tarn_error_set(TARN_EUNSUPPORTED, "Unsupported option %s", name);
    if (!value)
        return tarn_error_set(TARN_EINVALID, "The %s option can't be null.", OPTIONS[k].name);
    int rc = kind_value(out, con, k, value);
    if (!rc)
        *key = xstrdup(OPTIONS[k].name);
    return rc;
}

/* ---- sizes ---- */

static const struct {
    const char *unit;
    double mult;
} UNITS[] = {
    {"b", 1},
    {"byte", 1},
    {"bytes", 1},
    {"k", 1e3},
    {"kb", 1e3},
    {"kilobyte", 1e3},
    {"kilobytes", 1e3},
    {"m", 1e6},
    {"mb", 1e6},
    {"megabyte", 1e6},
    {"megabytes", 1e6},
    {"g", 1e9},
    {"gb", 1e9},
    {"gigabyte", 1e9},
    {"gigabytes", 1e9},
    {"t", 1e12},
    {"tb", 1e12},
    {"terabyte", 1e12},
    {"terabytes", 1e12},
    {"kib", 1024.0},
    {"mib", 1048576.0},
    {"gib", 1073741824.0},
    {"tib", 1099511627776.0},
};

int lk_size_parse(int64_t *out, const char *text)
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    const char *num = p;
    while (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E')
        p++;
    if (p == num)
        return tarn_error_set(TARN_EINVALID,
                              "Memory limit must have a number (e.g. SET memory_limit=1GB): '%s'",
                              text);
    char *numtext = xasprintf("%.*s", (int)(p - num), num);
    char *end = NULL;
    double n = strtod(numtext, &end);
    int bad = !end || *end;
    free(numtext);
    while (isspace((unsigned char)*p))
        p++;
    size_t len = strlen(p);
    while (len && isspace((unsigned char)p[len - 1]))
        len--;
    for (size_t i = 0; !bad && i < sizeof(UNITS) / sizeof(UNITS[0]); i++)
        if (strlen(UNITS[i].unit) == len && strncasecmp(UNITS[i].unit, p, len) == 0) {
            *out = (int64_t)(n * UNITS[i].mult);
            return 0;
        }
    return tarn_error_set(TARN_EINVALID,
                          "Unknown unit for memory_limit: '%.*s' (expected: KB, MB, GB, TB for "
                          "1000^i units or KiB, MiB, GiB, TiB for 1024^i units)",
                          (int)len, p);
}
