/*
 * variantstats.c — VARIANT column statistics as DuckLake records them (see
 * variantstats.h; DuckLake's PartialVariantStats and
 * DuckLakeColumnVariantStats). Writes no rows itself: write.c and
 * colstats.c put them into ducklake_file_variant_stats and the
 * extra_stats columns.
 */
#include "lake/variantstats.h"

#include "lake/types.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void field_free(lk_variant_field *f)
{
    free(f->path);
    free(f->type);
    free(f->sql_type);
    free(f->min);
    free(f->max);
}

void lk_variant_free(lk_variant_stats *v)
{
    for (size_t i = 0; i < v->n; i++)
        field_free(&v->fields[i]);
    free(v->fields);
    v->fields = NULL;
    v->n = 0;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static void field_copy(lk_variant_field *dst, const lk_variant_field *src)
{
    *dst = *src;
    dst->path = xstrdup(src->path);
    dst->type = xstrdup(src->type);
    dst->sql_type = xstrdup(src->sql_type);
    dst->min = dup_or_null(src->min);
    dst->max = dup_or_null(src->max);
}

void lk_variant_copy(lk_variant_stats *dst, const lk_variant_stats *src)
{
    dst->n = src->n;
    dst->fields = src->n ? xcalloc(src->n, sizeof(lk_variant_field)) : NULL;
    for (size_t i = 0; i < src->n; i++)
        field_copy(&dst->fields[i], &src->fields[i]);
}

/* ---- DuckDB's dotted stats paths and type strings ---- */

/* The name at p, before e, into *b: a double-quoted one ("" is a quote)
 * or one up to `stop`; returns where it ended. */
static const char *read_name(tarn_buf *b, const char *p, const char *e, char stop)
{
    if (*p != '"') {
        while (p < e && *p != stop)
            buf_putc(b, *p++);
        return p;
    }
    for (p++; p < e; p++) {
        if (*p == '"' && p[1] == '"') {
            buf_putc(b, '"');
            p++;
        } else if (*p == '"') {
            return p + 1;
        } else {
            buf_putc(b, *p);
        }
    }
    return p;
}

/* Splits a stats path ("v"."typed_value"."a b") into its names. */
static size_t split_path(char ***out, const char *path)
{
    size_t n = 0;
    char **parts = NULL;
    const char *p = path;
    while (*p) {
        tarn_buf b = {0};
        p = read_name(&b, p, p + strlen(p), '.');
        parts = xrealloc(parts, (n + 1) * sizeof(char *));
        parts[n++] = buf_detach(&b);
        if (*p == '.')
            p++;
    }
    *out = parts;
    return n;
}

static void free_parts(char **parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(parts[i]);
    free(parts);
}

/* The end of the type starting at p (nested parentheses, quoted names and
 * [] suffixes included), stopping at a ',' or ')' of the enclosing type. */
static const char *type_end(const char *p)
{
    int depth = 0;
    for (; *p; p++) {
        if (*p == '"') {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++)
                if (*p == '"')
                    p++;
            if (!*p)
                return p;
        } else if (*p == '(' || *p == '[') {
            depth++;
        } else if (*p == ')' || *p == ']') {
            if (depth == 0)
                return p;
            depth--;
        } else if (*p == ',' && depth == 0) {
            return p;
        }
    }
    return p;
}

/* The type of field `name` of the STRUCT type [s, e), as [*fs, *fe); 0
 * when it has none. */
static int struct_field(const char *s, const char *e, const char *name, const char **fs,
                        const char **fe)
{
    if ((size_t)(e - s) < 8 || strncasecmp(s, "STRUCT(", 7) != 0 || e[-1] != ')')
        return 0;
    const char *p = s + 7;
    while (p < e - 1) {
        while (*p == ' ' || *p == ',')
            p++;
        tarn_buf n = {0};
        p = read_name(&n, p, e, ' ');
        while (*p == ' ')
            p++;
        const char *te = type_end(p);
        int match = strcmp(buf_cstr(&n), name) == 0;
        buf_free(&n);
        if (match) {
            *fs = p;
            *fe = te;
            return 1;
        }
        p = te;
    }
    return 0;
}

/* DuckLake's ExtractVariantType: the type of the typed_value reached by
 * the field names (list elements are "element"), and the field's path
 * (root, "a", element, …). 0 when the type has no such leaf. */
static int shredded_type(char **type, char **path, const char *variant_type, char **names, size_t n)
{
    const char *s = variant_type, *e = variant_type + strlen(variant_type);
    tarn_buf p = {0};
    if (n == 0)
        buf_puts(&p, "root");
    for (size_t i = 0;; i++) {
        const char *ts, *te;
        if (!struct_field(s, e, "typed_value", &ts, &te))
            break;
        if (i == n) {
            *type = xstrndup(ts, (size_t)(te - ts));
            *path = buf_detach(&p);
            return 1;
        }
        if (p.len)
            buf_putc(&p, '.');
        if (te - ts > 2 && te[-1] == ']' && te[-2] == '[') {
            if (strcmp(names[i], "element") != 0)
                break;
            buf_puts(&p, "element");
            s = ts;
            e = te - 2;
        } else {
            if (!struct_field(ts, te, names[i], &s, &e))
                break;
            quote_ident(&p, names[i]);
        }
    }
    buf_free(&p);
    return 0;
}

/* ---- from a written file ---- */

static int cmp_field(const void *a, const void *b)
{
    return strcmp(((const lk_variant_field *)a)->path, ((const lk_variant_field *)b)->path);
}

/* The field names of a typed_value/value leaf: the names after each
 * typed_value of the path (DuckLake's ExtractVariantFieldNames). */
static size_t field_names(char ***out, char **parts, size_t n)
{
    size_t k = 0;
    char **names = xcalloc(n + 1, sizeof(char *));
    for (size_t i = 1; i + 2 < n + 1 && i + 1 < n; i += 2)
        names[k++] = parts[i + 1];
    *out = names;
    return k;
}

static int same_names(char **a, size_t na, char **b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return 0;
    return 1;
}

/* 1 when the untyped leaf of the same field names (the value leaf beside
 * the typed one) holds only NULLs: the field is fully shredded. */
static int fully_shredded(const lk_file_stats *fs, const char *col, char **names, size_t nn)
{
    for (size_t i = 0; i < fs->ncols; i++) {
        const lk_column_stat *cs = &fs->cols[i];
        char **parts;
        size_t n = split_path(&parts, cs->path);
        int hit = 0;
        if (n >= 2 && strcmp(parts[0], col) == 0 && strcmp(parts[n - 1], "value") == 0) {
            char **fn;
            size_t k = field_names(&fn, parts, n);
            hit = same_names(fn, k, names, nn);
            free(fn);
        }
        free_parts(parts, n);
        if (!hit)
            continue;
        return cs->null_count == cs->num_values ||
               (cs->min && cs->max && strcmp(cs->min, "00") == 0 && strcmp(cs->max, "00") == 0);
    }
    return 0;
}

void lk_variant_from_file(lk_variant_stats *out, int64_t *null_count, int64_t *num_values,
                          int64_t *size, const lk_file_stats *fs, const char *path)
{
    memset(out, 0, sizeof(*out));
    *null_count = *num_values = *size = 0;
    char **cp;
    size_t cn = split_path(&cp, path);
    const char *col = cn ? cp[0] : "";
    char *variant_type = NULL;
    for (size_t i = 0; i < fs->ncols; i++) {
        const lk_column_stat *cs = &fs->cols[i];
        char **parts;
        size_t n = split_path(&parts, cs->path);
        if (n >= 2 && strcmp(parts[0], col) == 0) {
            *size += cs->column_size;
            if (n == 2 && strcmp(parts[1], "metadata") == 0) {
                *null_count = cs->null_count;
                *num_values = cs->num_values;
                free(variant_type);
                variant_type = dup_or_null(cs->variant_type);
            }
        }
        free_parts(parts, n);
    }
    for (size_t i = 0; variant_type && i < fs->ncols; i++) {
        const lk_column_stat *cs = &fs->cols[i];
        char **parts;
        size_t n = split_path(&parts, cs->path);
        char **names = NULL, *type = NULL, *fpath = NULL;
        size_t nn = 0;
        if (n >= 2 && strcmp(parts[0], col) == 0 && strcmp(parts[n - 1], "typed_value") == 0) {
            nn = field_names(&names, parts, n);
            if (fully_shredded(fs, col, names, nn) &&
                shredded_type(&type, &fpath, variant_type, names, nn)) {
                out->fields = xrealloc(out->fields, (out->n + 1) * sizeof(lk_variant_field));
                lk_variant_field *f = &out->fields[out->n++];
                memset(f, 0, sizeof(*f));
                f->path = fpath;
                f->sql_type = type;
                f->type = lk_type_lake_name(type);
                f->has_counts = 1;
                f->null_count = cs->null_count;
                f->num_values = cs->num_values;
                f->column_size = cs->column_size;
                f->min = dup_or_null(cs->min);
                f->max = dup_or_null(cs->max);
                f->contains_nan = cs->has_nan;
            }
        }
        free(names);
        free_parts(parts, n);
    }
    free(variant_type);
    free_parts(cp, cn);
    if (out->n > 1)
        qsort(out->fields, out->n, sizeof(lk_variant_field), cmp_field);
}

/* ---- merging ---- */

static int numeric(const char *lake_type)
{
    return strncmp(lake_type, "int", 3) == 0 || strncmp(lake_type, "uint", 4) == 0 ||
           strncmp(lake_type, "float", 5) == 0 || strncmp(lake_type, "decimal", 7) == 0;
}

/* -1, 0, 1 as a < b in the field's type (numbers by value, the rest as
 * text: dates and timestamps in ISO form order the same way) */
static int bound_cmp(const lk_variant_field *f, const char *a, const char *b)
{
    if (numeric(f->type)) {
        double x = strtod(a, NULL), y = strtod(b, NULL);
        return x < y ? -1 : x > y;
    }
    return strcmp(a, b);
}

static int has_values(const lk_variant_field *f)
{
    return !f->has_counts || f->num_values > f->null_count;
}

/* DuckLakeColumnStats::MergeStats on one field's stats */
static void field_merge(lk_variant_field *a, const lk_variant_field *b)
{
    int a_values = has_values(a), b_values = has_values(b);
    if (a->has_counts && b->has_counts) {
        a->null_count += b->null_count;
        a->num_values += b->num_values;
    } else {
        a->has_counts = 0;
    }
    a->column_size += b->column_size;
    if (b->contains_nan < 0)
        a->contains_nan = -1;
    else if (a->contains_nan >= 0)
        a->contains_nan = a->contains_nan || b->contains_nan;
    if (!b_values)
        return;
    if (!a_values) {
        free(a->min);
        free(a->max);
        a->min = dup_or_null(b->min);
        a->max = dup_or_null(b->max);
        return;
    }
    if (!b->min) {
        free(a->min);
        a->min = NULL;
    } else if (a->min && bound_cmp(a, b->min, a->min) < 0) {
        free(a->min);
        a->min = xstrdup(b->min);
    }
    if (!b->max) {
        free(a->max);
        a->max = NULL;
    } else if (a->max && bound_cmp(a, b->max, a->max) > 0) {
        free(a->max);
        a->max = xstrdup(b->max);
    }
}

void lk_variant_merge(lk_variant_stats *acc, const lk_variant_stats *add)
{
    size_t kept = 0;
    for (size_t i = 0; i < acc->n; i++) {
        const lk_variant_field *other = NULL;
        for (size_t k = 0; k < add->n; k++)
            if (strcmp(add->fields[k].path, acc->fields[i].path) == 0)
                other = &add->fields[k];
        if (!other || strcmp(other->type, acc->fields[i].type) != 0) {
            field_free(&acc->fields[i]);
            continue;
        }
        field_merge(&acc->fields[i], other);
        acc->fields[kept++] = acc->fields[i];
    }
    acc->n = kept;
}

/* ---- JSON ---- */

/* a JSON string as yyjson writes it: quotes, backslashes and control
 * characters escaped, everything else (UTF-8 included) as is */
static void json_string(tarn_buf *b, const char *s)
{
    buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            buf_printf(b, "\\%c", *p);
        else if (*p == '\n')
            buf_puts(b, "\\n");
        else if (*p == '\t')
            buf_puts(b, "\\t");
        else if (*p == '\r')
            buf_puts(b, "\\r");
        else if (*p == '\b')
            buf_puts(b, "\\b");
        else if (*p == '\f')
            buf_puts(b, "\\f");
        else if (*p < 0x20)
            buf_printf(b, "\\u%04x", *p);
        else
            buf_putc(b, (char)*p);
    }
    buf_putc(b, '"');
}

static void field_json(tarn_buf *b, const lk_variant_field *f)
{
    buf_puts(b, "{\"field_name\":");
    json_string(b, f->path);
    buf_puts(b, ",\"shredded_type\":");
    json_string(b, f->type);
    if (f->has_counts)
        buf_printf(b, ",\"null_count\":%lld", (long long)f->null_count);
    if (f->min) {
        buf_puts(b, ",\"min\":");
        json_string(b, f->min);
    }
    if (f->max) {
        buf_puts(b, ",\"max\":");
        json_string(b, f->max);
    }
    if (f->has_counts)
        buf_printf(b, ",\"num_values\":%lld", (long long)f->num_values);
    if (f->contains_nan >= 0)
        buf_printf(b, ",\"contains_nan\":%s", f->contains_nan ? "true" : "false");
    buf_printf(b, ",\"column_size_bytes\":%lld,\"any_valid\":true}", (long long)f->column_size);
}

void lk_variant_json(tarn_buf *b, const lk_variant_stats *v)
{
    buf_putc(b, '[');
    for (size_t i = 0; i < v->n; i++) {
        if (i)
            buf_putc(b, ',');
        field_json(b, &v->fields[i]);
    }
    buf_putc(b, ']');
}

/* ---- the table-level merge, in SQL ---- */

/* `e ->> key` of the stored field object e */
static void stored(tarn_buf *b, const char *key)
{
    buf_printf(b, "(e ->> '%s')", key);
}

/* the merged bound (want_min: the smaller) as text, NULL when unknown */
static void bound_sql(tarn_buf *b, const lk_variant_field *f, const char *key, const char *val,
                      int want_min)
{
    if (f->has_counts && f->num_values <= f->null_count) {
        stored(b, key); /* no values in this write: the stored bound stays */
        return;
    }
    buf_puts(b, "CASE WHEN TRY_CAST((e ->> 'num_values') AS BIGINT) <= TRY_CAST((e ->> "
                "'null_count') AS BIGINT) THEN ");
    quote_literal(b, val);
    if (!val) {
        buf_puts(b, " ELSE NULL END");
        return;
    }
    buf_puts(b, " WHEN ");
    stored(b, key);
    buf_puts(b, " IS NULL THEN NULL WHEN ");
    if (numeric(f->type)) {
        buf_puts(b, "TRY_CAST(");
        quote_literal(b, val);
        buf_printf(b, " AS %s) %s TRY_CAST(", f->sql_type, want_min ? "<" : ">");
        stored(b, key);
        buf_printf(b, " AS %s)", f->sql_type);
    } else {
        quote_literal(b, val);
        buf_puts(b, want_min ? " < " : " > ");
        stored(b, key);
    }
    buf_puts(b, " THEN ");
    quote_literal(b, val);
    buf_puts(b, " ELSE ");
    stored(b, key);
    buf_puts(b, " END");
}

/* the JSON text of field f merged with the stored object e */
static void merged_field_sql(tarn_buf *b, const lk_variant_field *f)
{
    tarn_buf head = {0};
    buf_puts(&head, "{\"field_name\":");
    json_string(&head, f->path);
    buf_puts(&head, ",\"shredded_type\":");
    json_string(&head, f->type);
    quote_literal(b, buf_cstr(&head));
    buf_free(&head);
    if (f->has_counts)
        buf_printf(b,
                   " || COALESCE(',\"null_count\":' || (TRY_CAST((e ->> 'null_count') AS BIGINT) + "
                   "%lld), '')",
                   (long long)f->null_count);
    const char *keys[2] = {"min", "max"};
    const char *vals[2] = {f->min, f->max};
    for (int k = 0; k < 2; k++) {
        buf_printf(b, " || COALESCE(',\"%s\":' || to_json(", keys[k]);
        bound_sql(b, f, keys[k], vals[k], k == 0);
        buf_puts(b, ")::VARCHAR, '')");
    }
    if (f->has_counts)
        buf_printf(b,
                   " || COALESCE(',\"num_values\":' || (TRY_CAST((e ->> 'num_values') AS BIGINT) "
                   "+ %lld), '')",
                   (long long)f->num_values);
    if (f->contains_nan >= 0)
        buf_printf(b,
                   " || COALESCE(',\"contains_nan\":' || CASE WHEN (e ->> 'contains_nan') IS "
                   "NOT NULL THEN TRY_CAST((e ->> 'contains_nan') AS BOOLEAN) OR %s END, '')",
                   f->contains_nan ? "true" : "false");
    buf_printf(b,
               " || ',\"column_size_bytes\":' || (COALESCE(TRY_CAST((e ->> 'column_size_bytes') "
               "AS BIGINT), 0) + %lld) || ',\"any_valid\":true}'",
               (long long)f->column_size);
}

void lk_variant_merge_sql(tarn_buf *b, const char *col, const lk_variant_stats *add)
{
    if (add->n == 0) {
        buf_puts(b, "NULL");
        return;
    }
    buf_puts(b, "(SELECT CASE WHEN count(*) = 0 THEN NULL ELSE '[' || string_agg(o, ',' ORDER BY "
                "k) || ']' END FROM (");
    for (size_t i = 0; i < add->n; i++) {
        const lk_variant_field *f = &add->fields[i];
        if (i)
            buf_puts(b, " UNION ALL ");
        buf_printf(b, "SELECT %zu AS k, ", i);
        merged_field_sql(b, f);
        buf_printf(b,
                   " AS o FROM (SELECT unnest(json_extract(%s, '$[*]')) AS e) WHERE "
                   "(e ->> 'field_name') = ",
                   col);
        quote_literal(b, f->path);
        buf_puts(b, " AND (e ->> 'shredded_type') = ");
        quote_literal(b, f->type);
    }
    buf_puts(b, "))");
}
