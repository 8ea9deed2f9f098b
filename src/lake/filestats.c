/*
 * filestats.c — COPY … RETURN_STATS and decoding its result (see
 * filestats.h). COPY cannot be used as a subquery, so the result is read
 * through the C API's data chunks: column_statistics is a MAP(VARCHAR,
 * MAP(VARCHAR, VARCHAR)), i.e. a LIST of STRUCT(key, value) whose value is
 * again a LIST of STRUCT(key, value).
 *
 * Catalog rows: none (it decodes what COPY wrote; write_files.c records
 * the rows).
 */
#include "lake/filestats.h"

#include "duck/duck.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

static char *vec_string(duckdb_vector vec, idx_t row)
{
    uint64_t *valid = duckdb_vector_get_validity(vec);
    if (valid && !duckdb_validity_row_is_valid(valid, row))
        return NULL;
    duckdb_string_t *s = (duckdb_string_t *)duckdb_vector_get_data(vec) + row;
    return xstrndup(duckdb_string_t_data(s), duckdb_string_t_length(*s));
}

static int64_t vec_u64(duckdb_vector vec, idx_t row)
{
    return (int64_t)((uint64_t *)duckdb_vector_get_data(vec))[row];
}

static void set_stat(lk_column_stat *cs, const char *key, char *value)
{
    if (strcmp(key, "min") == 0) {
        cs->min = value;
        return;
    }
    if (strcmp(key, "max") == 0) {
        cs->max = value;
        return;
    }
    if (strcmp(key, "variant_type") == 0) {
        cs->variant_type = value;
        return;
    }
    if (lk_geo_set(&cs->geo, key, value)) {
        cs->has_geo = 1;
    } else if (value) {
        if (strcmp(key, "null_count") == 0)
            cs->null_count = strtoll(value, NULL, 10);
        else if (strcmp(key, "num_values") == 0)
            cs->num_values = strtoll(value, NULL, 10);
        else if (strcmp(key, "column_size_bytes") == 0)
            cs->column_size = strtoll(value, NULL, 10);
        else if (strcmp(key, "has_nan") == 0)
            cs->has_nan = strcmp(value, "true") == 0;
    }
    free(value);
}

static void read_column_map(lk_file_stats *f, duckdb_vector map, idx_t row)
{
    duckdb_list_entry *entries = duckdb_vector_get_data(map);
    duckdb_vector kv = duckdb_list_vector_get_child(map);
    duckdb_vector keys = duckdb_struct_vector_get_child(kv, 0);
    duckdb_vector vals = duckdb_struct_vector_get_child(kv, 1);
    duckdb_list_entry e = entries[row];
    f->cols = xcalloc(e.length ? e.length : 1, sizeof(lk_column_stat));
    f->ncols = e.length;
    for (idx_t i = 0; i < e.length; i++) {
        lk_column_stat *cs = &f->cols[i];
        cs->has_nan = -1;
        lk_geo_init(&cs->geo);
        cs->path = vec_string(keys, e.offset + i);
        duckdb_list_entry *inner = duckdb_vector_get_data(vals);
        duckdb_list_entry ie = inner[e.offset + i];
        duckdb_vector ikv = duckdb_list_vector_get_child(vals);
        duckdb_vector ikeys = duckdb_struct_vector_get_child(ikv, 0);
        duckdb_vector ivals = duckdb_struct_vector_get_child(ikv, 1);
        for (idx_t j = 0; j < ie.length; j++) {
            char *k = vec_string(ikeys, ie.offset + j);
            if (k)
                set_stat(cs, k, vec_string(ivals, ie.offset + j));
            free(k);
        }
    }
}

/* partition_keys MAP(VARCHAR, VARCHAR), present with PARTITION_BY */
static void read_partition_map(lk_file_stats *f, duckdb_vector map, idx_t row)
{
    uint64_t *valid = duckdb_vector_get_validity(map);
    if (valid && !duckdb_validity_row_is_valid(valid, row))
        return;
    duckdb_list_entry e = ((duckdb_list_entry *)duckdb_vector_get_data(map))[row];
    duckdb_vector kv = duckdb_list_vector_get_child(map);
    f->part_keys = xcalloc(e.length ? e.length : 1, sizeof(char *));
    f->part_values = xcalloc(e.length ? e.length : 1, sizeof(char *));
    f->nparts = e.length;
    for (idx_t i = 0; i < e.length; i++) {
        f->part_keys[i] = vec_string(duckdb_struct_vector_get_child(kv, 0), e.offset + i);
        f->part_values[i] = vec_string(duckdb_struct_vector_get_child(kv, 1), e.offset + i);
    }
}

int lk_copy_with_stats(lk_file_stats **out, size_t *n, duckdb_connection con, const char *sql)
{
    duckdb_result res;
    *out = NULL;
    *n = 0;
    if (duckdb_query(con, sql, &res) != DuckDBSuccess) {
        int rc = duck_error_from_result(&res, sql);
        duckdb_destroy_result(&res);
        return rc;
    }
    size_t cap = 0;
    duckdb_data_chunk chunk;
    while ((chunk = duckdb_fetch_chunk(res)) != NULL) {
        idx_t rows = duckdb_data_chunk_get_size(chunk);
        for (idx_t r = 0; r < rows; r++) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 4;
                *out = xrealloc(*out, cap * sizeof(lk_file_stats));
            }
            lk_file_stats *f = &(*out)[(*n)++];
            memset(f, 0, sizeof(*f));
            f->filename = vec_string(duckdb_data_chunk_get_vector(chunk, 0), r);
            f->count = vec_u64(duckdb_data_chunk_get_vector(chunk, 1), r);
            f->file_size = vec_u64(duckdb_data_chunk_get_vector(chunk, 2), r);
            f->footer_size = vec_u64(duckdb_data_chunk_get_vector(chunk, 3), r);
            read_column_map(f, duckdb_data_chunk_get_vector(chunk, 4), r);
            if (duckdb_data_chunk_get_column_count(chunk) > 5)
                read_partition_map(f, duckdb_data_chunk_get_vector(chunk, 5), r);
        }
        duckdb_destroy_data_chunk(&chunk);
    }
    duckdb_destroy_result(&res);
    return 0;
}

void lk_file_stats_free(lk_file_stats *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < files[i].ncols; c++) {
            free(files[i].cols[c].path);
            free(files[i].cols[c].min);
            free(files[i].cols[c].max);
            lk_geo_free(&files[i].cols[c].geo);
            free(files[i].cols[c].variant_type);
        }
        free(files[i].cols);
        for (size_t k = 0; k < files[i].nparts; k++) {
            free(files[i].part_keys[k]);
            free(files[i].part_values[k]);
        }
        free(files[i].part_keys);
        free(files[i].part_values);
        free(files[i].filename);
    }
    free(files);
}

const lk_column_stat *lk_file_stats_column(const lk_file_stats *f, const char *path)
{
    for (size_t i = 0; i < f->ncols; i++)
        if (f->cols[i].path && strcmp(f->cols[i].path, path) == 0)
            return &f->cols[i];
    return NULL;
}
