/*
 * scan_legacy.c — reading a data file that has neither field ids nor a
 * name mapping by position, as DuckLake does (see scan_int.h).
 *
 * Every file DuckLake or tarn writes carries field ids, and every file
 * ducklake_add_data_files registers gets a mapping (mapping_id); a file
 * registered before mappings existed (DuckLake 0.3) has neither, and its
 * columns are the table's columns in order. Only a mapping-less committed
 * file not named like a written file (ducklake-<uuid>.parquet) can be one,
 * so only those footers are read (parquet_schema). Reads nothing of the
 * catalog; writes nothing.
 */
#include "lake/scan_int.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* Mapping ids of the positional mappings: above any catalog id. */
#define LEGACY_MAP_BASE (INT64_C(1) << 62)

/* Whether the file's name is that of a file DuckLake or tarn wrote. */
static int written_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    return strncmp(base, "ducklake-", 9) == 0 && n > 17 && strcmp(base + n - 8, ".parquet") == 0;
}

/* The index after the schema element at `i` and its descendants. */
static size_t skip_element(const duck_table *r, size_t i)
{
    const char *nc = duck_table_get(r, i, 2);
    long long n = nc ? strtoll(nc, NULL, 10) : 0;
    size_t j = i + 1;
    for (long long k = 0; k < n && j < r->nrows; k++)
        j = skip_element(r, j);
    return j;
}

/* Entries reading the children of `c` by name (below the top level a
 * positional file keeps the table's names). */
static void name_entries(lk_nm_entry *e, const lk_column *c)
{
    e->target = c->id;
    e->source = xstrdup(c->name);
    e->nchildren = c->nchildren;
    e->children = c->nchildren ? xcalloc(c->nchildren, sizeof(lk_nm_entry)) : NULL;
    for (size_t i = 0; i < c->nchildren; i++)
        name_entries(&e->children[i], &c->children[i]);
}

/* The positional mapping of file `f` into *m when its footer has no field
 * id; 0 when it has (or cannot be read: the read then reports it). */
static int positional_map(lk_namemap *m, duckdb_connection con, const lk_table *t,
                          const scan_file *f)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT name, field_id, num_children FROM parquet_schema(");
    quote_literal(&q, f->path);
    buf_puts(&q, ")");
    duck_table r;
    int rc = duck_table_query(&r, con, buf_cstr(&q));
    buf_free(&q);
    if (rc) {
        tarn_error_clear();
        return 0;
    }
    int ids = r.nrows == 0;
    for (size_t i = 1; i < r.nrows && !ids; i++)
        ids = duck_table_get(&r, i, 1) != NULL;
    if (ids) {
        duck_table_free(&r);
        return 0;
    }
    memset(m, 0, sizeof(*m));
    m->id = LEGACY_MAP_BASE + f->id;
    m->table_id = t->id;
    m->cols = xcalloc(t->ncols ? t->ncols : 1, sizeof(lk_nm_entry));
    for (size_t i = 1; i < r.nrows && m->ncols < t->ncols; i = skip_element(&r, i)) {
        lk_nm_entry *e = &m->cols[m->ncols];
        name_entries(e, &t->cols[m->ncols]);
        free(e->source);
        e->source = xstrdup(duck_table_get(&r, i, 0));
        m->ncols++;
    }
    duck_table_free(&r);
    return 1;
}

void lk_scan_legacy_mappings(lk_namemap_set *maps, duckdb_connection con, const lk_table *t,
                             scan_input *in)
{
    for (size_t i = 0; i < in->n; i++) {
        scan_file *f = &in->files[i];
        if (f->mapping_id >= 0 || f->pending || written_name(f->path))
            continue;
        lk_namemap m;
        if (!positional_map(&m, con, t, f))
            continue;
        f->mapping_id = m.id;
        lk_namemap_set_add(maps, &m);
        lk_namemap_free(&m);
    }
}
