/*
 * write_part.c — writes into a partitioned table: the partition key
 * expressions, the hive directories (key=value/) and one COPY … PARTITION_BY
 * (or one COPY per partition where a single COPY cannot write the spec).
 *
 * Each file written belongs to one partition of the table's current spec
 * (ducklake_partition_info): its ducklake_data_file row carries the spec's
 * partition_id and its ducklake_file_partition_value rows the value of
 * every key as text (write_files.c records both). Invariants: a file holds
 * the rows of exactly one partition; directories are named as DuckLake
 * names them (a transform's name, bucket(N) → bucket, a clash with an
 * earlier key → <name>_<column>), with values percent-encoded so that no
 * value makes a '/' or "..", and NULL as __HIVE_DEFAULT_PARTITION__.
 */
#include "lake/write.h"
#include "lake/write_int.h"

#include "duck/duck.h"
#include "lake/bucket.h"
#include "lake/filestats.h"
#include "lake/txn.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int lk_write_key_expr(tarn_buf *b, const lk_table *t, const lk_partkey *k)
{
    const lk_column *c = lk_table_column(t, k->column_id);
    if (!c)
        return tarn_error_set(TARN_ERROR, "partition key column %lld is gone",
                              (long long)k->column_id);
    if (strcmp(k->transform, "identity") == 0) {
        quote_ident(b, c->name);
        return 0;
    }
    static const char *const TEMPORAL[] = {"year", "month", "day", "hour"};
    for (size_t i = 0; i < 4; i++) {
        if (strcmp(k->transform, TEMPORAL[i]) == 0) {
            buf_printf(b, "%s(", TEMPORAL[i]);
            quote_ident(b, c->name);
            buf_putc(b, ')');
            return 0;
        }
    }
    int32_t n = 0;
    if (lk_bucket_parse(k->transform, &n)) {
        lk_bucket_key_expr(b, c->name, c->type, n);
        return 0;
    }
    return tarn_error_set(TARN_EUNSUPPORTED,
                          "writing to a table partitioned by %s is not supported by tarn yet",
                          k->transform);
}

void lk_write_hive_value(tarn_buf *b, const char *v)
{
    if (!v) {
        buf_puts(b, "__HIVE_DEFAULT_PARTITION__");
        return;
    }
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || (*p == '.' && p != (const unsigned char *)v))
            buf_putc(b, (char)*p);
        else
            buf_printf(b, "%%%02X", *p);
    }
}

/* The hive key of partition key k: the column name for identity, else the
 * transform's name (bucket(N) → bucket); a name an earlier key took
 * (case-insensitively) becomes <name>_<column>, as DuckLake names them. */
static char *hive_key_name(const lk_table *t, size_t k)
{
    char **names = xcalloc(k + 1, sizeof(char *));
    for (size_t i = 0; i <= k; i++) {
        const lk_partkey *pk = &t->keys[i];
        const lk_column *c = lk_table_column(t, pk->column_id);
        const char *col = c ? c->name : "";
        const char *base = strcmp(pk->transform, "identity") == 0 ? col : pk->transform;
        size_t len = strcspn(base, "(");
        names[i] = xasprintf("%.*s", (int)len, base);
        for (size_t j = 0; j < i; j++) {
            if (strcasecmp(names[j], names[i]) == 0) {
                char *longer = xasprintf("%s_%s", names[i], col);
                free(names[i]);
                names[i] = longer;
                break;
            }
        }
    }
    for (size_t i = 0; i < k; i++)
        free(names[i]);
    char *name = names[k];
    free(names);
    return name;
}

/* The hive_file_pattern option (true unless set): partitioned files go in
 * key=value directories, else straight into the table's directory. */
static int hive_pattern(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    const char *v = lk_lake_option(lake, con, "hive_file_pattern", t);
    return !v || strcasecmp(v, "true") == 0;
}

void lk_write_hive_dir(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                       const char *const *values)
{
    if (!hive_pattern(lake, con, t))
        return;
    for (size_t k = 0; k < t->nkeys; k++) {
        char *key = hive_key_name(t, k);
        lk_write_hive_value(b, key);
        free(key);
        buf_putc(b, '=');
        lk_write_hive_value(b, values[k]);
        buf_putc(b, '/');
    }
}

/* One COPY per partition value, over a TEMP copy of the rows, files in
 * order of each partition's first row: for the specs one COPY … PARTITION_BY
 * cannot write (see copy_partitioned). */
static int insert_per_partition(lk_lake *lake, duckdb_connection con, const lk_table *t,
                                lk_table_delta *d, int with_rowid, const char *source)
{
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE TEMP TABLE __tarn_psrc AS ");
    if (source)
        lk_write_source_sql(&b, t, with_rowid, source);
    else
        lk_write_stage_rows(&b, t, with_rowid);
    int rc = duck_exec(con, buf_cstr(&b));
    tarn_buf keys = {0};
    for (size_t k = 0; !rc && k < t->nkeys; k++) {
        buf_puts(&keys, k ? ", " : "");
        buf_puts(&keys, "(");
        rc = lk_write_key_expr(&keys, t, &t->keys[k]);
        buf_printf(&keys, ")::VARCHAR AS k%zu", k);
    }
    duck_table parts = {0};
    if (!rc) {
        buf_clear(&b);
        buf_printf(&b,
                   "SELECT * EXCLUDE (f) FROM (SELECT %s, min(rowid) AS f FROM "
                   "temp.main.__tarn_psrc GROUP BY ALL) ORDER BY f",
                   buf_cstr(&keys));
        rc = duck_table_query(&parts, con, buf_cstr(&b));
    }
    lk_file_partition fp = {t->partition_id, NULL, t->nkeys};
    for (size_t r = 0; !rc && r < parts.nrows; r++) {
        tarn_buf where = {0}, src = {0}, dir = {0};
        for (size_t k = 0; k < t->nkeys; k++) {
            buf_puts(&where, k ? " AND (" : "(");
            lk_write_key_expr(&where, t, &t->keys[k]);
            buf_puts(&where, ")::VARCHAR IS NOT DISTINCT FROM ");
            quote_literal(&where, duck_table_get(&parts, r, k));
        }
        buf_puts(&src, "SELECT ");
        lk_write_columns(&src, t);
        if (with_rowid)
            buf_puts(&src, ", __tarn_rowid AS _ducklake_internal_row_id");
        buf_printf(&src, " FROM temp.main.__tarn_psrc WHERE %s ORDER BY rowid", buf_cstr(&where));
        fp.values = parts.cells + r * parts.ncols;
        lk_write_hive_dir(&dir, lake, con, t, (const char *const *)fp.values);
        rc = lk_write_files(lake, con, t, d, with_rowid, buf_cstr(&src), buf_cstr(&dir), &fp);
        buf_free(&where);
        buf_free(&src);
        buf_free(&dir);
    }
    if (parts.ncols)
        duck_table_free(&parts);
    buf_free(&keys);
    buf_free(&b);
    duck_exec(con, "DROP TABLE IF EXISTS temp.main.__tarn_psrc");
    return rc;
}

static int spec_all_identity(const lk_table *t)
{
    for (size_t k = 0; k < t->nkeys; k++)
        if (strcmp(t->keys[k].transform, "identity") != 0)
            return 0;
    return 1;
}

/* 1 when one COPY … PARTITION_BY writes the table's spec as DuckLake does:
 * all keys identity (the columns themselves), or computed keys whose hive
 * names are no column's name (an identity key next to a transform is
 * computed under its column's name, which one SELECT cannot hold twice). */
static int spec_one_copy(const lk_table *t)
{
    if (spec_all_identity(t))
        return 1;
    for (size_t k = 0; k < t->nkeys; k++) {
        char *name = hive_key_name(t, k);
        int clash = 0;
        for (size_t i = 0; i < t->ncols && !clash; i++)
            clash = strcasecmp(t->cols[i].name, name) == 0 ||
                    strcasecmp(name, "_ducklake_internal_row_id") == 0;
        free(name);
        if (clash)
            return 0;
    }
    return 1;
}

/* COPY (rows [+ computed keys]) TO dir (…, PARTITION_BY (…), …), as
 * DuckLake builds it: identity keys partition on the columns, which the
 * files keep; otherwise every key is computed as an extra column named as
 * its hive directory and not written. */
static int copy_partitioned(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                            int with_rowid, const char *source, const char *dir)
{
    int identity = spec_all_identity(t);
    tarn_buf names = {0};
    buf_puts(b, "COPY (SELECT *");
    int rc = 0;
    for (size_t k = 0; k < t->nkeys; k++) {
        char *name = hive_key_name(t, k);
        if (!identity) {
            buf_puts(b, ", ");
            rc = rc ? rc : lk_write_key_expr(b, t, &t->keys[k]);
            buf_puts(b, " AS ");
            quote_ident(b, name);
        }
        buf_puts(&names, k ? ", " : "");
        quote_ident(&names, name);
        free(name);
    }
    buf_puts(b, " FROM (");
    lk_write_source_sql(b, t, with_rowid, source);
    buf_puts(b, ")) TO ");
    quote_literal(b, dir);
    buf_printf(b,
               " (FORMAT parquet, PARTITION_BY (%s), %sFILENAME_PATTERN 'ducklake-{uuidv7}', "
               "OVERWRITE_OR_IGNORE, ",
               buf_cstr(&names), identity ? "WRITE_PARTITION_COLUMNS, " : "");
    lk_write_copy_options(b, lake, con, t, with_rowid);
    buf_free(&names);
    return rc;
}

/* Registers the files of one partitioned COPY in the order DuckDB
 * returned them (DuckLake's order: it numbers them and gives them row ids
 * in that order), with the partition values it reported. */
static int register_partitioned(lk_lake *lake, duckdb_connection con, const lk_table *t,
                                lk_table_delta *d, int with_rowid, const char *dir,
                                const lk_file_stats *files, size_t nfiles)
{
    size_t dlen = strlen(dir);
    lk_file_partition fp = {t->partition_id, xcalloc(t->nkeys, sizeof(char *)), t->nkeys};
    int rc = 0;
    for (size_t i = 0; !rc && i < nfiles; i++) {
        const lk_file_stats *f = &files[i];
        if (strncmp(f->filename, dir, dlen) != 0 || f->filename[dlen] != '/') {
            rc = tarn_error_set(TARN_ERROR, "partitioned write returned %s, outside %s",
                                f->filename, dir);
            break;
        }
        lk_txn_wrote(lake->txn, f->filename);
        for (size_t k = 0; k < t->nkeys; k++) {
            char *name = hive_key_name(t, k);
            fp.values[k] = NULL;
            for (size_t j = 0; j < f->nparts; j++)
                if (f->part_keys[j] && strcmp(f->part_keys[j], name) == 0)
                    fp.values[k] = f->part_values[j];
            free(name);
        }
        rc = lk_write_file_register(lake, con, t, d, with_rowid, f->filename + dlen + 1,
                                    f->filename, f, &fp);
    }
    free(fp.values);
    return rc;
}

/* One COPY … PARTITION_BY writing a file per partition into hive
 * directories under the table's directory. */
int lk_write_partitioned(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_table_delta *d,
                         int with_rowid, const char *source)
{
    /* DuckDB's COPY … PARTITION_BY reports no partition values without
     * hive folders: flat files are written one partition at a time */
    if (!spec_one_copy(t) || !hive_pattern(lake, con, t))
        return insert_per_partition(lake, con, t, d, with_rowid, source);
    char *dir = lk_lake_table_dir(lake, &lake->txn->cat, t);
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        dir[--len] = 0;
    tarn_buf made = {0}, b = {0};
    lk_write_dirs_missing(&made, dir);
    int rc = fs_mkdir_p(dir);
    if (!rc)
        rc = copy_partitioned(&b, lake, con, t, with_rowid, source, dir);
    lk_file_stats *files = NULL;
    size_t nfiles = 0;
    if (!rc)
        rc = lk_copy_with_stats(&files, &nfiles, con, buf_cstr(&b));
    if (!rc)
        rc = register_partitioned(lake, con, t, d, with_rowid, dir, files, nfiles);
    if (!rc && nfiles == 0)
        lk_write_dirs_remove(buf_cstr(&made));
    lk_file_stats_free(files, nfiles);
    buf_free(&b);
    buf_free(&made);
    free(dir);
    return rc;
}
