/*
 * dvec_fn.c — the __tarn_dv_positions(path) table function (see dvec.h):
 * the positions of a deletion vector as rows (pos BIGINT), so the SQL that
 * merges a table's delete files (new deletes, compaction, flushes) reads
 * one of DuckLake's deletion vectors where it reads a Parquet delete file.
 * No catalog rows.
 */
#include "lake/dvec.h"

#include "duck/duck.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t *pos;
    size_t n, cap;
} positions;

typedef struct {
    size_t next;
} cursor;

static void add(void *ctx, int64_t pos)
{
    positions *p = ctx;
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 1024;
        p->pos = xrealloc(p->pos, p->cap * sizeof(int64_t));
    }
    p->pos[p->n++] = pos;
}

static void positions_free(void *ptr)
{
    positions *p = ptr;
    free(p->pos);
    free(p);
}

static void dv_bind(duckdb_bind_info info)
{
    duckdb_value v = duckdb_bind_get_parameter(info, 0);
    char *path = duckdb_get_varchar(v);
    duckdb_destroy_value(&v);
    positions *p = xcalloc(1, sizeof(positions));
    int is_dv = 0;
    int rc = path ? lk_dvec_read_file(path, &is_dv, add, p) : TARN_EINVALID;
    if (!rc && !is_dv)
        rc = tarn_error_set(TARN_EINVALID, "%s is not a deletion vector", path ? path : "NULL");
    duckdb_free(path);
    if (rc) {
        duckdb_bind_set_error(info, tarn_error_last());
        positions_free(p);
        return;
    }
    duckdb_logical_type t = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    duckdb_bind_add_result_column(info, "pos", t);
    duckdb_destroy_logical_type(&t);
    duckdb_bind_set_cardinality(info, p->n, true);
    duckdb_bind_set_bind_data(info, p, positions_free);
}

static void dv_init(duckdb_init_info info)
{
    duckdb_init_set_init_data(info, xcalloc(1, sizeof(cursor)), free);
}

static void dv_run(duckdb_function_info info, duckdb_data_chunk output)
{
    const positions *p = duckdb_function_get_bind_data(info);
    cursor *c = duckdb_function_get_init_data(info);
    size_t n = p->n - c->next;
    if (n > duckdb_vector_size())
        n = duckdb_vector_size();
    int64_t *out = duckdb_vector_get_data(duckdb_data_chunk_get_vector(output, 0));
    memcpy(out, p->pos + c->next, n * sizeof(int64_t));
    c->next += n;
    duckdb_data_chunk_set_size(output, n);
}

int lk_dvec_register(duckdb_connection con)
{
    return duck_table_function_register(con, "__tarn_dv_positions", 1, dv_bind, dv_init, dv_run);
}

int lk_dvec_file_is(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned char head[8];
    size_t got = fread(head, 1, sizeof(head), f);
    fclose(f);
    return got == sizeof(head) && memcmp(head, "PAR1", 4) != 0 && lk_dvec_is(head, got);
}

void lk_dvec_source_sql(tarn_buf *b, const char *path, const char *snap_column)
{
    buf_puts(b, "(SELECT pos");
    if (snap_column)
        buf_printf(b, ", NULL::BIGINT AS %s", snap_column);
    buf_puts(b, " FROM __tarn_dv_positions(");
    quote_literal(b, path);
    buf_puts(b, "))");
}
