/*
 * geostats.c — GEOMETRY column statistics as DuckLake records them (see
 * geostats.h). Writes no rows itself: colstats.c and write.c put the text
 * into ducklake_file_column_stats / ducklake_table_column_stats.
 */
#include "lake/geostats.h"

#include "util/quote.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char DIMS[] = "xyzm";

void lk_geo_init(lk_geo_stats *g)
{
    memset(g, 0, sizeof(*g));
    for (int i = 0; i < 4; i++) {
        g->lo[i] = INFINITY;
        g->hi[i] = -INFINITY;
    }
}

void lk_geo_free(lk_geo_stats *g)
{
    for (size_t i = 0; i < g->ntypes; i++)
        free(g->types[i]);
    free(g->types);
    g->types = NULL;
    g->ntypes = 0;
}

static void add_type(lk_geo_stats *g, const char *name, size_t len)
{
    char *t = xstrndup(name, len);
    size_t at = 0;
    while (at < g->ntypes && strcmp(g->types[at], t) < 0)
        at++;
    if (at < g->ntypes && strcmp(g->types[at], t) == 0) {
        free(t);
        return;
    }
    g->types = xrealloc(g->types, (g->ntypes + 1) * sizeof(char *));
    memmove(&g->types[at + 1], &g->types[at], (g->ntypes - at) * sizeof(char *));
    g->types[at] = t;
    g->ntypes++;
}

void lk_geo_copy(lk_geo_stats *dst, const lk_geo_stats *src)
{
    lk_geo_init(dst);
    memcpy(dst->lo, src->lo, sizeof(dst->lo));
    memcpy(dst->hi, src->hi, sizeof(dst->hi));
    for (size_t i = 0; i < src->ntypes; i++)
        add_type(dst, src->types[i], strlen(src->types[i]));
}

/* "[point, linestring_z]" → its names */
static void add_type_list(lk_geo_stats *g, const char *list)
{
    const char *p = list;
    while (*p) {
        while (*p == '[' || *p == ']' || *p == ',' || *p == ' ')
            p++;
        size_t n = strcspn(p, ",]");
        while (n > 0 && p[n - 1] == ' ')
            n--;
        if (n > 0)
            add_type(g, p, n);
        p += n;
    }
}

int lk_geo_set(lk_geo_stats *g, const char *key, const char *value)
{
    if (strcmp(key, "geo_types") == 0) {
        if (value)
            add_type_list(g, value);
        return 1;
    }
    if (strncmp(key, "bbox_", 5) != 0 || strlen(key) != 9)
        return 0;
    const char *d = strchr(DIMS, key[5]);
    int is_min = strcmp(key + 6, "min") == 0, is_max = strcmp(key + 6, "max") == 0;
    if (!d || !*d || (!is_min && !is_max))
        return 0;
    if (value) {
        double v = strtod(value, NULL);
        if (is_min)
            g->lo[d - DIMS] = v;
        else
            g->hi[d - DIMS] = v;
    }
    return 1;
}

void lk_geo_merge(lk_geo_stats *g, const lk_geo_stats *add)
{
    for (int i = 0; i < 4; i++) {
        if (add->lo[i] < g->lo[i])
            g->lo[i] = add->lo[i];
        if (add->hi[i] > g->hi[i])
            g->hi[i] = add->hi[i];
    }
    for (size_t i = 0; i < add->ntypes; i++)
        add_type(g, add->types[i], strlen(add->types[i]));
}

static void put_number(tarn_buf *b, double v)
{
    if (isinf(v))
        buf_puts(b, "null");
    else
        buf_printf(b, "%f", v);
}

void lk_geo_json(tarn_buf *b, const lk_geo_stats *g)
{
    buf_puts(b, "{\"bbox\": {");
    for (int i = 0; i < 4; i++) {
        buf_printf(b, "%s\"%cmin\": ", i ? ", " : "", DIMS[i]);
        put_number(b, g->lo[i]);
        buf_printf(b, ", \"%cmax\": ", DIMS[i]);
        put_number(b, g->hi[i]);
    }
    buf_puts(b, "}, \"types\": [");
    for (size_t i = 0; i < g->ntypes; i++)
        buf_printf(b, "%s\"%s\"", i ? ", " : "", g->types[i]);
    buf_puts(b, "]}");
}

/* COALESCE(printf('%f', least(stored, new)), 'null'): DuckDB's least and
 * greatest skip NULLs, as the box skips a dimension no value had. */
static void bound_sql(tarn_buf *b, const char *col, char dim, int is_min, double v)
{
    buf_printf(b, "COALESCE(printf('%%f', %s(TRY_CAST(json_extract(%s, '$.bbox.%c%s') AS DOUBLE), ",
               is_min ? "least" : "greatest", col, dim, is_min ? "min" : "max");
    if (isinf(v))
        buf_puts(b, "NULL");
    else
        buf_printf(b, "%.17g", v);
    buf_puts(b, "::DOUBLE)), 'null')");
}

void lk_geo_merge_sql(tarn_buf *b, const char *col, const lk_geo_stats *g)
{
    buf_printf(b, "CASE WHEN %s IS NULL THEN ", col);
    tarn_buf j = {0};
    lk_geo_json(&j, g);
    quote_literal(b, buf_cstr(&j));
    buf_free(&j);
    buf_puts(b, " ELSE '{\"bbox\": {' || ");
    for (int i = 0; i < 4; i++) {
        buf_printf(b, "'%s\"%cmin\": ' || ", i ? ", " : "", DIMS[i]);
        bound_sql(b, col, DIMS[i], 1, g->lo[i]);
        buf_printf(b, " || ', \"%cmax\": ' || ", DIMS[i]);
        bound_sql(b, col, DIMS[i], 0, g->hi[i]);
        buf_puts(b, " || ");
    }
    buf_puts(b, "'}, \"types\": [' || COALESCE(array_to_string(list_transform(list_sort("
                "list_distinct(list_concat(COALESCE(json_extract_string(");
    buf_puts(b, col);
    buf_puts(b, ", '$.types[*]'), []), [");
    for (size_t i = 0; i < g->ntypes; i++) {
        if (i)
            buf_puts(b, ", ");
        quote_literal(b, g->types[i]);
    }
    buf_puts(b, "]::VARCHAR[]))), x -> '\"' || x || '\"'), ', '), '') || ']}' END");
}
