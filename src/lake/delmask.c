/*
 * delmask.c — the __tarn_deleted scalar function (see delmask.h): delete
 * files (ducklake_delete_file's Parquet files: pos, and the snapshot of each
 * deletion when embedded; or DuckLake's deletion vectors, dvec.h) read once
 * into bitmaps, one bit test per row.
 *
 * The bitmaps live in a process-wide cache keyed by (delete file path,
 * snapshot). A query's bind step takes references to the bitmaps its spec
 * names (loading the missing ones, through a private connection to an
 * in-memory database so the user's query and transaction are not
 * touched), its execution reads them without locks, and its end drops the
 * references. Unreferenced bitmaps stay cached up to a budget, oldest use
 * evicted first.
 */
#include "lake/delmask.h"

#include "duck/duck.h"
#include "lake/dvec.h"
#include "tarn/error.h"
#include "util/quote.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_BUDGET ((size_t)256 << 20) /* bytes of unreferenced bitmaps kept */

typedef struct mask {
    char *path;
    int64_t snapshot;
    uint64_t *bits;
    int64_t nbits; /* positions [0, nbits) have a bit */
    size_t refs;   /* bind data holding it */
    uint64_t used; /* cache clock at the last bind */
} mask;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static mask **cache;
static size_t ncache;
static uint64_t clock_now;
static duckdb_connection loader; /* to duck_parser_db, under cache_lock */

/* ---- loading ---- */

static void set_bit(mask *m, int64_t pos)
{
    if (pos < 0)
        return;
    if (pos >= m->nbits) {
        int64_t words = (m->nbits + 63) / 64, need = pos / 64 + 1, grow = words ? words : 16;
        while (grow < need)
            grow *= 2;
        m->bits = xrealloc(m->bits, (size_t)grow * sizeof(uint64_t));
        memset(m->bits + words, 0, (size_t)(grow - words) * sizeof(uint64_t));
        m->nbits = grow * 64;
    }
    m->bits[pos / 64] |= (uint64_t)1 << (pos % 64);
}

/* Sets the bits of the positions in `res`; *nulls counts the NULL ones. */
static void fill(mask *m, duckdb_result *res, int64_t *nulls)
{
    for (;;) {
        duckdb_data_chunk chunk = duckdb_fetch_chunk(*res);
        if (!chunk)
            return;
        idx_t n = duckdb_data_chunk_get_size(chunk);
        duckdb_vector v = duckdb_data_chunk_get_vector(chunk, 0);
        const int64_t *pos = duckdb_vector_get_data(v);
        uint64_t *valid = duckdb_vector_get_validity(v);
        for (idx_t i = 0; i < n; i++)
            if (!valid || duckdb_validity_row_is_valid(valid, i))
                set_bit(m, pos[i]);
            else
                (*nulls)++;
        duckdb_destroy_data_chunk(&chunk);
    }
}

static int read_positions(mask *m, const char *sql, int64_t *nulls)
{
    duckdb_result res;
    int rc = 0;
    if (duckdb_query(loader, sql, &res) != DuckDBSuccess)
        rc = tarn_error_set(TARN_ERROR, "cannot read delete file %s: %s", m->path,
                            duckdb_result_error(&res));
    else
        fill(m, &res, nulls);
    duckdb_destroy_result(&res);
    return rc;
}

void lk_delmask_release(void)
{
    pthread_mutex_lock(&cache_lock);
    if (loader)
        duckdb_disconnect(&loader);
    pthread_mutex_unlock(&cache_lock);
}

static void add_position(void *ctx, int64_t pos)
{
    set_bit(ctx, pos);
}

/* Reads the positions deleted at `snapshot` (those without an embedded
 * snapshot, and those embedded at or before it) of delete file `path`. A
 * deletion vector embeds no snapshots: all its positions. */
static int load(mask *m)
{
    int is_dv = 0;
    int dv_rc = lk_dvec_read_file(m->path, &is_dv, add_position, m);
    if (is_dv)
        return dv_rc;
    if (!loader) {
        duckdb_database db = duck_parser_db();
        if (!db || duckdb_connect(db, &loader) != DuckDBSuccess) {
            loader = NULL;
            return tarn_error_set(TARN_ERROR, "cannot open a connection to read delete files");
        }
    }
    tarn_buf q = {0};
    buf_puts(&q, "SELECT pos FROM read_parquet(");
    quote_literal(&q, m->path);
    buf_printf(&q,
               ", schema = MAP {2147483645: {name: 'pos', type: 'BIGINT', default_value: "
               "NULL::VARCHAR}, 2147483539: {name: 's', type: 'BIGINT', default_value: "
               "NULL::VARCHAR}}) WHERE s IS NULL OR s <= %lld",
               (long long)m->snapshot);
    int64_t nulls = 0;
    int rc = read_positions(m, buf_cstr(&q), &nulls);
    if (!rc && nulls > 0) {
        /* a delete file without field ids (older DuckLake, other
         * writers): its columns are known by name only, and it embeds no
         * snapshots */
        buf_clear(&q);
        buf_puts(&q, "SELECT pos FROM read_parquet(");
        quote_literal(&q, m->path);
        buf_putc(&q, ')');
        rc = read_positions(m, buf_cstr(&q), &nulls);
    }
    buf_free(&q);
    return rc;
}

/* ---- the cache (under cache_lock) ---- */

static void mask_free(mask *m)
{
    free(m->path);
    free(m->bits);
    free(m);
}

static void evict(void)
{
    size_t idle = 0;
    for (size_t i = 0; i < ncache; i++)
        if (!cache[i]->refs)
            idle += (size_t)(cache[i]->nbits / 8);
    while (idle > CACHE_BUDGET) {
        size_t oldest = ncache;
        for (size_t i = 0; i < ncache; i++)
            if (!cache[i]->refs && (oldest == ncache || cache[i]->used < cache[oldest]->used))
                oldest = i;
        if (oldest == ncache)
            return;
        idle -= (size_t)(cache[oldest]->nbits / 8);
        mask_free(cache[oldest]);
        cache[oldest] = cache[--ncache];
    }
}

/* The bitmap of (path, snapshot), with a reference taken; NULL with the
 * error set when the delete file cannot be read. */
static mask *acquire(const char *path, size_t len, int64_t snapshot)
{
    for (size_t i = 0; i < ncache; i++) {
        mask *m = cache[i];
        if (m->snapshot == snapshot && strlen(m->path) == len && memcmp(m->path, path, len) == 0) {
            m->refs++;
            m->used = ++clock_now;
            return m;
        }
    }
    mask *m = xcalloc(1, sizeof(mask));
    m->path = xstrndup(path, len);
    m->snapshot = snapshot;
    if (load(m)) {
        mask_free(m);
        return NULL;
    }
    m->refs = 1;
    m->used = ++clock_now;
    cache = xrealloc(cache, (ncache + 1) * sizeof(mask *));
    cache[ncache++] = m;
    evict();
    return m;
}

/* ---- bind data: the bitmap of each file index (NULL: no deletes) ---- */

typedef struct {
    size_t n;
    mask **maps;
} masks;

static void masks_release(void *p)
{
    masks *ms = p;
    pthread_mutex_lock(&cache_lock);
    for (size_t i = 0; i < ms->n; i++)
        if (ms->maps[i])
            ms->maps[i]->refs--;
    evict();
    pthread_mutex_unlock(&cache_lock);
    free(ms->maps);
    free(ms);
}

static void *masks_copy(void *p)
{
    const masks *ms = p;
    masks *c = xcalloc(1, sizeof(masks));
    c->n = ms->n;
    c->maps = xcalloc(ms->n ? ms->n : 1, sizeof(mask *));
    pthread_mutex_lock(&cache_lock);
    for (size_t i = 0; i < ms->n; i++) {
        c->maps[i] = ms->maps[i];
        if (c->maps[i])
            c->maps[i]->refs++;
    }
    pthread_mutex_unlock(&cache_lock);
    return c;
}

/* "S;fi:len:path;…" (lk_delmask_spec_*) into bitmaps, under cache_lock. */
static int parse_spec(masks *ms, const char *spec)
{
    char *end;
    int64_t snapshot = strtoll(spec, &end, 10);
    const char *p = end;
    while (*p == ';') {
        size_t fi = strtoull(p + 1, &end, 10);
        if (*end != ':')
            break;
        size_t len = strtoull(end + 1, &end, 10);
        if (*end != ':' || strlen(end + 1) < len)
            break;
        if (fi >= ms->n) {
            size_t n = fi + 1;
            ms->maps = xrealloc(ms->maps, n * sizeof(mask *));
            memset(ms->maps + ms->n, 0, (n - ms->n) * sizeof(mask *));
            ms->n = n;
        }
        mask *m = acquire(end + 1, len, snapshot);
        if (!m)
            return TARN_ERROR;
        if (ms->maps[fi]) /* the same index twice: keep one reference */
            ms->maps[fi]->refs--;
        ms->maps[fi] = m;
        p = end + 1 + len;
    }
    if (*p)
        return tarn_error_set(TARN_EINVALID, "__tarn_deleted: malformed spec");
    return 0;
}

static void deleted_bind(duckdb_bind_info info)
{
    duckdb_client_context ctx = NULL;
    duckdb_scalar_function_get_client_context(info, &ctx);
    duckdb_expression arg = duckdb_scalar_function_bind_get_argument(info, 0);
    duckdb_value v = NULL;
    const char *err = NULL;
    if (!duckdb_expression_is_foldable(arg)) {
        err = "__tarn_deleted: the spec must be a constant";
    } else {
        duckdb_error_data e = duckdb_expression_fold(ctx, arg, &v);
        if (duckdb_error_data_has_error(e))
            err = "__tarn_deleted: the spec must be a constant";
        duckdb_destroy_error_data(&e);
    }
    masks *ms = xcalloc(1, sizeof(masks));
    if (!err) {
        char *spec = duckdb_get_varchar(v);
        pthread_mutex_lock(&cache_lock);
        int rc = parse_spec(ms, spec ? spec : "");
        pthread_mutex_unlock(&cache_lock);
        duckdb_free(spec);
        if (rc)
            err = tarn_error_last();
    }
    if (err) {
        duckdb_scalar_function_bind_set_error(info, err);
        masks_release(ms);
    } else {
        duckdb_scalar_function_set_bind_data(info, ms, masks_release);
        duckdb_scalar_function_set_bind_data_copy(info, masks_copy);
    }
    if (v)
        duckdb_destroy_value(&v);
    duckdb_destroy_expression(&arg);
    duckdb_destroy_client_context(&ctx);
}

/* __tarn_deleted(spec, pos): the one file of a read (file index 0). */
static void deleted_run1(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output)
{
    const masks *ms = duckdb_scalar_function_get_bind_data(info);
    idx_t n = duckdb_data_chunk_get_size(input);
    duckdb_vector vp = duckdb_data_chunk_get_vector(input, 1);
    const int64_t *pos = duckdb_vector_get_data(vp);
    uint64_t *vpv = duckdb_vector_get_validity(vp);
    bool *out = duckdb_vector_get_data(output);
    const mask *m = ms->n ? ms->maps[0] : NULL;
    if (!m) {
        memset(out, 0, n * sizeof(bool));
        return;
    }
    for (idx_t i = 0; i < n; i++) {
        int64_t p = pos[i];
        out[i] = p >= 0 && p < m->nbits && (m->bits[p / 64] >> (p % 64) & 1);
    }
    if (vpv)
        for (idx_t i = 0; i < n; i++)
            if (!duckdb_validity_row_is_valid(vpv, i))
                out[i] = false;
}

static void deleted_run(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output)
{
    const masks *ms = duckdb_scalar_function_get_bind_data(info);
    idx_t n = duckdb_data_chunk_get_size(input);
    duckdb_vector vf = duckdb_data_chunk_get_vector(input, 1);
    duckdb_vector vp = duckdb_data_chunk_get_vector(input, 2);
    const uint64_t *fi = duckdb_vector_get_data(vf);
    const int64_t *pos = duckdb_vector_get_data(vp);
    uint64_t *vfv = duckdb_vector_get_validity(vf), *vpv = duckdb_vector_get_validity(vp);
    bool *out = duckdb_vector_get_data(output);
    for (idx_t i = 0; i < n; i++) {
        const mask *m = fi[i] < ms->n ? ms->maps[fi[i]] : NULL;
        int64_t p = pos[i];
        out[i] = m && p >= 0 && p < m->nbits && (m->bits[p / 64] >> (p % 64) & 1);
    }
    if (vfv || vpv)
        for (idx_t i = 0; i < n; i++)
            if ((vfv && !duckdb_validity_row_is_valid(vfv, i)) ||
                (vpv && !duckdb_validity_row_is_valid(vpv, i)))
                out[i] = false;
}

static duckdb_scalar_function make_function(size_t nargs)
{
    duckdb_scalar_function f = duckdb_create_scalar_function();
    duckdb_scalar_function_set_name(f, "__tarn_deleted");
    duckdb_type types[3] = {DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_UBIGINT, DUCKDB_TYPE_BIGINT};
    for (size_t i = 0; i < 3; i++) {
        if (nargs == 2 && i == 1)
            continue;
        duckdb_logical_type t = duckdb_create_logical_type(types[i]);
        duckdb_scalar_function_add_parameter(f, t);
        duckdb_destroy_logical_type(&t);
    }
    duckdb_logical_type b = duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
    duckdb_scalar_function_set_return_type(f, b);
    duckdb_destroy_logical_type(&b);
    duckdb_scalar_function_set_bind(f, deleted_bind);
    duckdb_scalar_function_set_function(f, nargs == 2 ? deleted_run1 : deleted_run);
    return f;
}

int lk_delmask_register(duckdb_connection con)
{
    /* registered on every attach: see duck_fn.c */
    int rc = 0;
    duckdb_scalar_function_set set = duckdb_create_scalar_function_set("__tarn_deleted");
    for (size_t nargs = 2; nargs <= 3; nargs++) {
        duckdb_scalar_function f = make_function(nargs);
        duckdb_add_scalar_function_to_set(set, f);
        duckdb_destroy_scalar_function(&f);
    }
    if (duckdb_register_scalar_function_set(con, set) != DuckDBSuccess)
        rc = tarn_error_set(TARN_ERROR, "cannot register the function __tarn_deleted");
    duckdb_destroy_scalar_function_set(&set);
    return rc;
}

void lk_delmask_spec_begin(tarn_buf *spec, int64_t snapshot)
{
    buf_printf(spec, "%lld", (long long)snapshot);
}

void lk_delmask_spec_file(tarn_buf *spec, size_t file_index, const char *delete_path)
{
    buf_printf(spec, ";%zu:%zu:%s", file_index, strlen(delete_path), delete_path);
}
