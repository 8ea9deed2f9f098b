/*
 * addfiles.c — ducklake_add_data_files (see addfiles.h), following
 * DuckLake's src/functions/ducklake_add_data_files.cpp.
 *
 * Catalog rows it records, per file with rows: ducklake_data_file (the
 * file where it is, its footer's row count, sizes, mapping_id, the
 * table's partition spec), ducklake_file_column_stats (one row per mapped
 * leaf column, from the footer's row-group statistics, and per hive
 * column from its path value), ducklake_file_partition_value (a
 * partitioned table), and the table-level stats through the transaction's
 * delta; per new mapping ducklake_column_mapping / ducklake_name_mapping
 * (namemap.c). A file without rows only adds its mapping, as in DuckLake.
 */
#include "lake/addfiles.h"

#include "duck/duck.h"
#include "lake/colstats.h"
#include "lake/hive.h"
#include "lake/namemap.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* One element of a file's Parquet schema (parquet_schema()). */
typedef struct pcol {
    char *name, *type, *converted, *logical;
    int64_t scale, precision; /* -1: not set */
    int64_t leaf;             /* leaf column index (parquet_metadata's column_id), -1 for groups */
    struct pcol *children;
    size_t nchildren;
} pcol;

/* A mapped leaf of the file and the table column it fills. */
typedef struct {
    int64_t leaf;
    const lk_column *col;
} leaf_target;

/* A value a file takes from its hive path for a partition key or column. */
typedef struct {
    int64_t column_id;
    char *value; /* canonical text of the typed value; NULL: SQL NULL */
    int bucket;  /* a bucket key: no statistics from it */
} path_value;

/* The file being mapped. */
typedef struct {
    duckdb_connection con;
    const lk_add_files_opts *o;
    const lk_table *t;
    const char *filename;
    int64_t rows;
    lk_hive hive;
    leaf_target *leaves;
    size_t nleaves;
    path_value *pvs;
    size_t npvs;
} file_map;

static void pcol_free(pcol *c)
{
    free(c->name);
    free(c->type);
    free(c->converted);
    free(c->logical);
    for (size_t i = 0; i < c->nchildren; i++)
        pcol_free(&c->children[i]);
    free(c->children);
}

static void file_map_free(file_map *f)
{
    lk_hive_free(&f->hive);
    free(f->leaves);
    for (size_t i = 0; i < f->npvs; i++)
        free(f->pvs[i].value);
    free(f->pvs);
}

static char *dup_cell(const duck_table *r, size_t row, size_t col)
{
    const char *v = duck_table_get(r, row, col);
    return v ? xstrdup(v) : NULL;
}

static int64_t int_cell(const duck_table *r, size_t row, size_t col)
{
    const char *v = duck_table_get(r, row, col);
    return v ? strtoll(v, NULL, 10) : -1;
}

/* Builds the children of `parent` from schema rows starting at *row (the
 * rows are pre-order: a group is followed by its num_children subtrees). */
static void build_children(pcol *parent, int64_t count, const duck_table *r, size_t *row,
                           size_t end, int64_t *next_leaf)
{
    for (int64_t i = 0; i < count && *row < end; i++) {
        parent->children = xrealloc(parent->children, (parent->nchildren + 1) * sizeof(pcol));
        pcol *c = &parent->children[parent->nchildren++];
        memset(c, 0, sizeof(*c));
        size_t k = (*row)++;
        c->name = dup_cell(r, k, 1);
        c->type = dup_cell(r, k, 2);
        int64_t nchildren = int_cell(r, k, 3);
        c->converted = dup_cell(r, k, 4);
        c->scale = int_cell(r, k, 5);
        c->precision = int_cell(r, k, 6);
        c->logical = dup_cell(r, k, 7);
        c->leaf = -1;
        if (nchildren <= 0)
            c->leaf = (*next_leaf)++;
        else
            build_children(c, nchildren, r, row, end, next_leaf);
        if (!c->name)
            c->name = xstrdup("");
    }
}

/* ---- type checks (DuckLakeParquetTypeChecker) ---- */

static int is(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

static int starts(const char *a, const char *prefix)
{
    return a && strncmp(a, prefix, strlen(prefix)) == 0;
}

/* The DuckDB type DuckLake derives for a schema element, as DuckDB prints
 * it; NULL (with an error set) for an unknown physical type. */
static char *derive_type(const pcol *c)
{
    static const char *const CONVERTED[][2] = {
        {"INT_8", "TINYINT"},
        {"INT_16", "SMALLINT"},
        {"INT_32", "INTEGER"},
        {"INT_64", "BIGINT"},
        {"UINT_8", "UTINYINT"},
        {"UINT_16", "USMALLINT"},
        {"UINT_32", "UINTEGER"},
        {"UINT_64", "UBIGINT"},
        {"DATE", "DATE"},
        {"TIMESTAMP_MICROS", "TIMESTAMP"},
        {"TIMESTAMP_MILLIS", "TIMESTAMP"},
        {"UTF8", "VARCHAR"},
        {"ENUM", "VARCHAR"},
        {"TIME_MILLIS", "TIME"},
        {"TIME_MICROS", "TIME"},
        {"INTERVAL", "INTERVAL"},
        {"JSON", "JSON"},
    };
    static const char *const PHYSICAL[][2] = {
        {"BOOLEAN", "BOOLEAN"}, {"INT32", "INTEGER"},   {"INT64", "BIGINT"},
        {"INT96", "TIMESTAMP"}, {"FLOAT", "FLOAT"},     {"DOUBLE", "DOUBLE"},
        {"BYTE_ARRAY", "BLOB"}, {"FIXED_LEN_BYTE_ARRAY", "BLOB"},
    };
    if (c->nchildren)
        return xstrdup(is(c->converted, "LIST")  ? "LIST"
                       : is(c->converted, "MAP") ? "MAP"
                                                 : "STRUCT");
    const char *lt = c->logical;
    if (is(lt, "TimeType(isAdjustedToUTC=0, unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds(), "
               "NANOS=<null>))"))
        return xstrdup("TIME");
    if (is(lt, "TimestampType(isAdjustedToUTC=0, unit=TimeUnit(MILLIS=<null>, "
               "MICROS=MicroSeconds(), NANOS=<null>))"))
        return xstrdup("TIMESTAMP");
    if (is(lt, "TimestampType(isAdjustedToUTC=0, unit=TimeUnit(MILLIS=MilliSeconds(), "
               "MICROS=<null>, NANOS=<null>))"))
        return xstrdup("TIMESTAMP_MS");
    if (is(lt, "TimestampType(isAdjustedToUTC=0, unit=TimeUnit(MILLIS=<null>, MICROS=<null>, "
               "NANOS=NanoSeconds()))"))
        return xstrdup("TIMESTAMP_NS");
    if (starts(lt, "TimestampType(isAdjustedToUTC=1"))
        return xstrdup("TIMESTAMP WITH TIME ZONE");
    if (starts(lt, "UUIDType()"))
        return xstrdup("UUID");
    if (starts(lt, "Geometry"))
        return xstrdup("GEOMETRY");
    if (is(c->converted, "DECIMAL")) {
        if (c->scale < 0 || c->precision < 0) {
            tarn_error_set(TARN_EINVALID, "Invalid Input Error: DECIMAL requires valid "
                                          "precision/scale");
            return NULL;
        }
        return xasprintf("DECIMAL(%lld,%lld)", (long long)c->precision, (long long)c->scale);
    }
    for (size_t i = 0; c->converted && i < sizeof(CONVERTED) / sizeof(CONVERTED[0]); i++)
        if (is(c->converted, CONVERTED[i][0]))
            return xstrdup(CONVERTED[i][1]);
    for (size_t i = 0; c->type && i < sizeof(PHYSICAL) / sizeof(PHYSICAL[0]); i++)
        if (is(c->type, PHYSICAL[i][0]))
            return xstrdup(PHYSICAL[i][1]);
    tarn_error_set(TARN_EINVALID, "Invalid Input Error: Unrecognized type %s for parquet file",
                   c->type ? c->type : "");
    return NULL;
}

/* The table column's type as DuckDB prints it (for messages). */
static char *display_type(const lk_column *c)
{
    if (strcmp(c->type, "timestamptz") == 0)
        return xstrdup("TIMESTAMP WITH TIME ZONE");
    if (strcmp(c->type, "timetz") == 0)
        return xstrdup("TIME WITH TIME ZONE");
    tarn_buf b = {0};
    lk_type_to_sql(&b, c);
    return buf_detach(&b);
}

/* The source types a column of DuckLake type `type` accepts, most
 * preferred first, as DuckLake lists them (NULL-terminated); NULL for the
 * types checked otherwise. */
static const char *const *accepted_types(const char *type)
{
    static const char *const I64[] = {"BIGINT",   "UINTEGER", "INTEGER", "USMALLINT",
                                      "SMALLINT", "UTINYINT", "TINYINT", NULL};
    static const char *const U64[] = {"UBIGINT", "UINTEGER", "USMALLINT", "UTINYINT", NULL};
    static const char *const F64[] = {"DOUBLE", "FLOAT", NULL};
    static const char *const TS_NS[] = {"TIMESTAMP_NS", "TIMESTAMP", "TIMESTAMP_MS", "TIMESTAMP_S",
                                        NULL};
    static const struct {
        const char *type;
        const char *const *list;
    } T[] = {
        {"int64", I64},         {"int32", I64 + 2},     {"int16", I64 + 4},
        {"int8", I64 + 6},      {"uint64", U64},        {"uint32", U64 + 1},
        {"uint16", U64 + 2},    {"uint8", U64 + 3},     {"float64", F64},
        {"float32", F64 + 1},   {"timestamp", TS_NS},   {"timestamp_ns", TS_NS},
        {"timestamp_s", TS_NS + 1}, {"timestamp_ms", TS_NS + 1},
    };
    for (size_t i = 0; i < sizeof(T) / sizeof(T[0]); i++)
        if (strcmp(type, T[i].type) == 0)
            return T[i].list;
    return NULL;
}

static int type_fail(file_map *f, const pcol *pc, const char *prefix, const char *failure)
{
    return tarn_error_set(TARN_EINVALID,
                          "Invalid Input Error: Failed to map column \"%s%s%s\" from file \"%s\" "
                          "to the column in table \"%s\"\n* %s",
                          prefix, *prefix ? "." : "", pc->name, f->filename, f->t->name, failure);
}

/* DuckLake's CheckMatchingType: may the file's column `pc` fill `col`? */
static int check_type(file_map *f, const pcol *pc, const lk_column *col, const char *prefix)
{
    char *src = derive_type(pc);
    if (!src)
        return TARN_EINVALID;
    char *msg = NULL;
    const char *const *ok = accepted_types(col->type);
    if (strcmp(col->type, "json") == 0) {
        if (strcmp(src, "JSON") != 0)
            msg = xasprintf("Expected type \"JSON\" but found type \"%s\"", src);
    } else if (strcmp(col->type, "geometry") == 0) {
        if (strcmp(src, "GEOMETRY") != 0)
            msg = xasprintf("Expected type \"GEOMETRY\" but found type \"%s\". Is this a "
                            "GeoParquet v1.*.* file? DuckLake only supports GEOMETRY types "
                            "stored in native Parquet(V3) format, not GeoParquet(v1.*.*)",
                            src);
    } else if (ok) {
        int found = 0;
        tarn_buf list = {0};
        for (size_t i = 0; ok[i]; i++) {
            found |= strcmp(src, ok[i]) == 0;
            buf_printf(&list, "%s%s", i ? ", " : "", ok[i]);
        }
        if (!found)
            msg = xasprintf("Expected %s%s, found type %s", ok[1] ? "one of " : "",
                            buf_cstr(&list), src);
        buf_free(&list);
    } else if (lk_type_is_nested(col->type)) {
        const char *want = strcmp(col->type, "struct") == 0 ? "STRUCT"
                           : strcmp(col->type, "list") == 0 ? "LIST"
                                                            : "MAP";
        if (strcmp(src, want) != 0) {
            char *tt = display_type(col);
            msg = xasprintf("Expected type \"%s\" but found type \"%s\"", tt, src);
            free(tt);
        }
    } else if (strncmp(col->type, "decimal", 7) == 0) {
        int tp = 0, ts = 0, sp = 0, ss = 0;
        sscanf(col->type, "decimal(%d,%d)", &tp, &ts);
        if (sscanf(src, "DECIMAL(%d,%d)", &sp, &ss) != 2)
            msg = xasprintf("Expected type \"DECIMAL\" but found type \"%s\"", src);
        else if (ss > ts || sp > tp)
            msg = xasprintf("Incompatible decimal precision/scale - found precision %d, scale "
                            "%d - but table is defined with precision %d, scale %d",
                            sp, ss, tp, ts);
    } else {
        char *tt = display_type(col);
        if (strcmp(src, tt) != 0)
            msg = xasprintf("Expected %s, found type %s", tt, src);
        free(tt);
    }
    int rc = msg ? type_fail(f, pc, prefix, msg) : 0;
    free(msg);
    free(src);
    return rc;
}

/* ---- hive values ---- */

/* The typed value of hive text `raw` for a key of SQL type `sql_type`
 * (DuckDB's HivePartitioning::GetValue): *out its canonical text, NULL
 * for SQL NULL. `name` is the key (for the message). */
static int hive_cast(char **out, file_map *f, const char *raw, const char *lake_type,
                     const char *sql_type, const char *name)
{
    *out = NULL;
    if (lk_hive_is_null(raw, lake_type))
        return 0;
    char *u = lk_hive_unescape(raw);
    if (strcmp(lake_type, "varchar") == 0) {
        *out = u;
        return 0;
    }
    tarn_buf b = {0};
    buf_puts(&b, "SELECT CAST(TRY_CAST(");
    quote_literal(&b, u);
    buf_printf(&b, " AS %s) AS VARCHAR)", sql_type);
    char *v = NULL;
    int rc = duck_query_string(&v, f->con, buf_cstr(&b));
    buf_free(&b);
    if (!rc && !v) {
        char *upper = xstrdup(name);
        for (char *p = upper; *p; p++)
            if (*p >= 'a' && *p <= 'z')
                *p = (char)(*p - 'a' + 'A');
        rc = tarn_error_set(TARN_EINVALID,
                            "Invalid Input Error: Unable to cast '%s' (from hive partition "
                            "column '%s') to: '%s'",
                            u, upper, sql_type);
        free(upper);
    }
    free(u);
    *out = v;
    return rc;
}

static void push_pv(file_map *f, int64_t column_id, char *value, int bucket)
{
    f->pvs = xrealloc(f->pvs, (f->npvs + 1) * sizeof(path_value));
    f->pvs[f->npvs++] = (path_value){column_id, value, bucket};
}

/* A table column read from the hive path (DuckLake's MapHiveColumn). */
static int map_hive_column(lk_nm_entry *e, file_map *f, const lk_column *col, const char *raw)
{
    char *tt = display_type(col);
    int rc = 0;
    if (lk_type_is_nested(col->type))
        rc = tarn_error_set(TARN_EINVALID,
                            "Invalid Input Error: Type \"%s\" is not supported for hive "
                            "partitioning",
                            tt);
    char *value = NULL;
    if (!rc) {
        tarn_buf sql = {0};
        lk_type_to_sql(&sql, col);
        rc = hive_cast(&value, f, raw, col->type, buf_cstr(&sql), col->name);
        buf_free(&sql);
    }
    free(tt);
    if (rc)
        return rc;
    push_pv(f, col->id, value, 0);
    e->source = xstrdup(col->name);
    e->target = col->id;
    e->hive = 1;
    return 0;
}

/* The hive key names of the table's non-identity partition keys
 * (year, month, day, hour, bucket; a repeated name gets _column), and the
 * values the file's path gives them. */
static int map_partition_keys(file_map *f)
{
    char **used = xcalloc(f->t->nkeys + 1, sizeof(char *));
    size_t nused = 0;
    int rc = 0;
    for (size_t k = 0; k < f->t->nkeys && !rc; k++) {
        const lk_partkey *pk = &f->t->keys[k];
        if (strcmp(pk->transform, "identity") == 0)
            continue;
        const lk_column *c = lk_table_column(f->t, pk->column_id);
        if (!c)
            continue;
        size_t plen = strcspn(pk->transform, "(");
        char *name = xasprintf("%.*s", (int)plen, pk->transform);
        for (size_t i = 0; i < nused; i++)
            if (strcasecmp(used[i], name) == 0) {
                char *longer = xasprintf("%s_%s", name, c->name);
                free(name);
                name = longer;
                break;
            }
        used[nused++] = name;
        const char *raw = lk_hive_get(&f->hive, name);
        if (!raw)
            continue;
        int bucket = strncmp(pk->transform, "bucket", 6) == 0;
        char *value = NULL;
        rc = hive_cast(&value, f, raw, bucket ? "int32" : "int64", bucket ? "INTEGER" : "BIGINT",
                       name);
        if (!rc)
            push_pv(f, c->id, value, bucket);
    }
    for (size_t i = 0; i < nused; i++)
        free(used[i]);
    free(used);
    return rc;
}

/* ---- column mapping (MapColumns / MapColumn) ---- */

static int map_columns(lk_nm_entry **out, size_t *nout, file_map *f, pcol *cols, size_t ncols,
                       const lk_column *fields, size_t nfields, const char *prefix);

static lk_nm_entry *push_entry(lk_nm_entry **out, size_t *nout)
{
    *out = xrealloc(*out, (*nout + 1) * sizeof(lk_nm_entry));
    memset(&(*out)[*nout], 0, sizeof(lk_nm_entry));
    return &(*out)[(*nout)++];
}

/* Maps file column `pc` onto table column `col`: checks the type, then
 * the children (struct fields by name; a list's element and a map's key
 * and value through Parquet's repeated group). */
static int map_column(lk_nm_entry *e, file_map *f, pcol *pc, const lk_column *col,
                      const char *prefix)
{
    int rc = check_type(f, pc, col, prefix);
    if (rc)
        return rc;
    char *path = *prefix ? xasprintf("%s.%s", prefix, pc->name) : xstrdup(pc->name);
    e->source = xstrdup(pc->name);
    e->target = col->id;
    if (pc->leaf >= 0) {
        f->leaves = xrealloc(f->leaves, (f->nleaves + 1) * sizeof(leaf_target));
        f->leaves[f->nleaves++] = (leaf_target){pc->leaf, col};
    }
    if (col->nchildren && strcmp(col->type, "struct") == 0) {
        rc = map_columns(&e->children, &e->nchildren, f, pc->children, pc->nchildren,
                         col->children, col->nchildren, path);
    } else if (col->nchildren && strcmp(col->type, "list") == 0 && pc->nchildren) {
        pcol *rep = &pc->children[0];
        pcol *elem = rep;
        if (strcmp(rep->name, "array") != 0 && rep->nchildren) {
            /* the repeated group's child is the element, mapped as "list" */
            elem = &rep->children[0];
            free(elem->name);
            elem->name = xstrdup("list");
        }
        rc = map_column(push_entry(&e->children, &e->nchildren), f, elem, &col->children[0],
                        path);
    } else if (col->nchildren && strcmp(col->type, "map") == 0 && pc->nchildren) {
        pcol *rep = &pc->children[0];
        rc = map_columns(&e->children, &e->nchildren, f, rep->children, rep->nchildren,
                         col->children, col->nchildren, path);
    }
    free(path);
    return rc;
}

static int map_columns(lk_nm_entry **out, size_t *nout, file_map *f, pcol *cols, size_t ncols,
                       const lk_column *fields, size_t nfields, const char *prefix)
{
    char *used = xcalloc(nfields + 1, 1);
    int rc = 0;
    const char *dot = *prefix ? "." : "";
    for (size_t i = 0; i < ncols && !rc; i++) {
        size_t k = 0;
        while (k < nfields && (used[k] || strcasecmp(fields[k].name, cols[i].name) != 0))
            k++;
        if (k == nfields) {
            if (f->o->ignore_extra_columns)
                continue;
            rc = tarn_error_set(TARN_EINVALID,
                                "Invalid Input Error: Column \"%s%s%s\" exists in file \"%s\" but "
                                "was not found in table \"%s\"\n* Set ignore_extra_columns => "
                                "true to add the file anyway",
                                prefix, dot, cols[i].name, f->filename, f->t->name);
            break;
        }
        used[k] = 1;
        const char *raw = lk_hive_get(&f->hive, cols[i].name);
        if (raw)
            rc = map_hive_column(push_entry(out, nout), f, &fields[k], raw);
        else
            rc = map_column(push_entry(out, nout), f, &cols[i], &fields[k], prefix);
    }
    for (size_t k = 0; k < nfields && !rc; k++) {
        if (used[k])
            continue;
        const char *raw = lk_hive_get(&f->hive, fields[k].name);
        if (raw)
            rc = map_hive_column(push_entry(out, nout), f, &fields[k], raw);
        else if (!f->o->allow_missing)
            rc = tarn_error_set(TARN_EINVALID,
                                "Invalid Input Error: Column \"%s%s%s\" exists in table \"%s\" "
                                "but was not found in file \"%s\"\n* Set allow_missing => true to "
                                "allow missing fields and columns",
                                prefix, dot, fields[k].name, f->t->name, f->filename);
    }
    free(used);
    return rc;
}

/* ---- statistics ---- */

static int numeric_type(const char *t)
{
    return strncmp(t, "int", 3) == 0 || strncmp(t, "uint", 4) == 0 ||
           strncmp(t, "float", 5) == 0 || strncmp(t, "decimal", 7) == 0;
}

/* One leaf's statistics over its row groups (rows [from, to) of the
 * parquet_metadata result: column_id, min, max, null_count, num_values,
 * total_compressed_size), as DuckLake aggregates them. */
typedef struct {
    int have_nulls, have_values;
    int64_t nulls, values, size;
    char *min, *max;
    int has_geo; /* a GEOMETRY leaf: its box and types over the row groups */
    lk_geo_stats geo;
} leaf_stats;

/* The names of the geometry figures of the parquet_metadata result, in
 * its column order after total_compressed_size. */
static const char *const GEO_KEYS[] = {"bbox_xmin", "bbox_xmax", "bbox_ymin",
                                       "bbox_ymax", "bbox_zmin", "bbox_zmax",
                                       "bbox_mmin", "bbox_mmax", "geo_types"};
#define NGEO_KEYS (sizeof(GEO_KEYS) / sizeof(GEO_KEYS[0]))

/* Widens s->geo by the row group in row k of the metadata result. */
static void geo_row_group(leaf_stats *s, const duck_table *r, size_t k)
{
    lk_geo_stats g;
    lk_geo_init(&g);
    for (size_t i = 0; i < NGEO_KEYS; i++)
        lk_geo_set(&g, GEO_KEYS[i], duck_table_get(r, k, 7 + i));
    lk_geo_merge(&s->geo, &g);
    lk_geo_free(&g);
}

static int typed_bound(char **out, file_map *f, const lk_column *col, const duck_table *r,
                       const size_t *rows, size_t n, size_t cell, int want_min)
{
    tarn_buf b = {0};
    buf_printf(&b, "SELECT %s(v, CAST(v AS ", want_min ? "arg_min" : "arg_max");
    lk_type_to_sql(&b, col);
    buf_puts(&b, ")) FROM (VALUES ");
    for (size_t i = 0; i < n; i++) {
        buf_puts(&b, i ? ", (" : "(");
        quote_literal(&b, duck_table_get(r, rows[i], cell));
        buf_putc(&b, ')');
    }
    buf_puts(&b, ") x(v)");
    int rc = duck_query_string(out, f->con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static int leaf_aggregate(leaf_stats *s, file_map *f, const lk_column *col, const duck_table *r,
                          const size_t *rows, size_t n)
{
    memset(s, 0, sizeof(*s));
    s->have_nulls = s->have_values = 1;
    lk_geo_init(&s->geo);
    s->has_geo = strcmp(col->type, "geometry") == 0;
    int all_min = 1, all_max = 1;
    for (size_t i = 0; i < n; i++) {
        size_t k = rows[i];
        int64_t nulls = int_cell(r, k, 4), values = int_cell(r, k, 5), size = int_cell(r, k, 6);
        s->have_nulls &= nulls >= 0;
        s->nulls += nulls;
        s->have_values &= values >= 0;
        s->values += values;
        s->size += size > 0 ? size : 0;
        all_min &= duck_table_get(r, k, 2) != NULL;
        all_max &= duck_table_get(r, k, 3) != NULL;
        if (s->has_geo)
            geo_row_group(s, r, k);
    }
    int rc = 0;
    if (n == 1 || !numeric_type(col->type)) {
        for (size_t i = 0; i < n; i++) {
            const char *mn = duck_table_get(r, rows[i], 2), *mx = duck_table_get(r, rows[i], 3);
            if (all_min && (!s->min || strcmp(mn, s->min) < 0)) {
                free(s->min);
                s->min = xstrdup(mn);
            }
            if (all_max && (!s->max || strcmp(mx, s->max) > 0)) {
                free(s->max);
                s->max = xstrdup(mx);
            }
        }
    } else {
        if (all_min)
            rc = typed_bound(&s->min, f, col, r, rows, n, 2, 1);
        if (!rc && all_max)
            rc = typed_bound(&s->max, f, col, r, rows, n, 3, 0);
    }
    return rc;
}

/* One ducklake_file_column_stats row and the leaf's table-level share. */
static void stats_row(lk_txn *txn, int64_t file_id, int64_t table_id, int64_t column_id,
                      const leaf_stats *s, lk_leaf_stats *l)
{
    int counts = s->have_nulls && s->have_values && s->nulls <= s->values;
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, %lld, %lld, %lld, ", (long long)file_id, (long long)table_id,
               (long long)column_id, (long long)s->size);
    if (counts)
        buf_printf(&b, "%lld, %lld, ", (long long)(s->values - s->nulls), (long long)s->nulls);
    else
        buf_puts(&b, "NULL, NULL, ");
    quote_literal(&b, s->min);
    buf_puts(&b, ", ");
    quote_literal(&b, s->max);
    buf_puts(&b, ", NULL, ");
    if (s->has_geo) {
        tarn_buf j = {0};
        lk_geo_json(&j, &s->geo);
        quote_literal(&b, buf_cstr(&j));
        buf_free(&j);
    } else {
        buf_puts(&b, "NULL");
    }
    buf_putc(&b, ')');
    lk_txn_row(txn, "ducklake_file_column_stats", "%s", buf_cstr(&b));
    buf_free(&b);
    if (l && l->geo && s->has_geo) {
        lk_geo_free(l->geo);
        lk_geo_copy(l->geo, &s->geo);
    }
    if (l) {
        l->null_count = counts ? s->nulls : 0;
        l->value_count = counts ? s->values - s->nulls : 0;
        l->column_size = s->size;
        l->contains_nan = -1;
        l->min = s->min ? xstrdup(s->min) : NULL;
        l->max = s->max ? xstrdup(s->max) : NULL;
    }
}

static lk_leaf_stats *leaf_of(lk_stats_set *st, int64_t column_id, int *keep)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->leaves[i].col_id == column_id) {
            keep[i] = 1;
            return &st->leaves[i];
        }
    return NULL;
}

/* The file's column stats rows, in column id order, and their fold into
 * the table's stats of this commit. */
static int record_stats(lk_lake *lake, file_map *f, int64_t file_id, const duck_table *meta,
                        size_t from, size_t to, lk_table_delta *d)
{
    lk_txn *txn = lake->txn;
    lk_stats_set st;
    lk_stats_init(&st, f->t);
    int *keep = xcalloc(st.n + 1, sizeof(int));
    size_t *rows = xcalloc(to - from + 1, sizeof(size_t));
    int64_t max_id = lk_table_max_column_id(f->t);
    int rc = 0;
    for (int64_t id = 0; id <= max_id && !rc; id++) {
        for (size_t i = 0; i < f->nleaves && !rc; i++) {
            if (f->leaves[i].col->id != id || f->leaves[i].col->nchildren)
                continue;
            size_t n = 0;
            for (size_t k = from; k < to; k++)
                if (int_cell(meta, k, 1) == f->leaves[i].leaf)
                    rows[n++] = k;
            if (!n)
                continue;
            leaf_stats s;
            rc = leaf_aggregate(&s, f, f->leaves[i].col, meta, rows, n);
            if (!rc)
                stats_row(txn, file_id, f->t->id, id, &s, leaf_of(&st, id, keep));
            free(s.min);
            free(s.max);
            lk_geo_free(&s.geo);
        }
        for (size_t i = 0; i < f->npvs && !rc; i++) {
            if (f->pvs[i].column_id != id || f->pvs[i].bucket)
                continue;
            leaf_stats s = {.have_nulls = 1,
                            .have_values = 1,
                            .nulls = f->pvs[i].value ? 0 : f->rows,
                            .values = f->rows,
                            .min = f->pvs[i].value,
                            .max = f->pvs[i].value};
            stats_row(txn, file_id, f->t->id, id, &s, leaf_of(&st, id, keep));
        }
    }
    lk_stats_keep(&st, keep);
    if (!rc)
        rc = lk_stats_accumulate(&d->stats, &st, f->con);
    lk_stats_free(&st);
    free(keep);
    free(rows);
    return rc;
}

/* ---- registering ---- */

/* Pre-order numbering, as DuckLake writes a mapping's entries. */
static void entry_rows(lk_txn *txn, const lk_nm_entry *e, int64_t id, int64_t parent,
                       int64_t *next)
{
    int64_t column_id = (*next)++;
    tarn_buf b = {0};
    quote_literal(&b, e->source);
    char *par = parent >= 0 ? xasprintf("%lld", (long long)parent) : xstrdup("NULL");
    lk_txn_row(txn, "ducklake_name_mapping", "(%lld, %lld, %s, %lld, %s, %s)", (long long)id,
               (long long)column_id, buf_cstr(&b), (long long)e->target, par,
               e->hive ? "true" : "false");
    free(par);
    buf_free(&b);
    for (size_t i = 0; i < e->nchildren; i++)
        entry_rows(txn, &e->children[i], id, column_id, next);
}

/* Records mapping `m`'s ducklake_column_mapping and ducklake_name_mapping
 * rows (under m->id). */
static void namemap_record(lk_txn *txn, const lk_namemap *m)
{
    lk_txn_row(txn, "ducklake_column_mapping", "(%lld, %lld, 'map_by_name')", (long long)m->id,
               (long long)m->table_id);
    int64_t next = 0;
    for (size_t i = 0; i < m->ncols; i++)
        entry_rows(txn, &m->cols[i], m->id, -1, &next);
}


/* The id of a mapping equal to `m` (the catalog's, then this
 * transaction's), or a new one: DuckLake's AddNameMap. */
static int64_t mapping_id(lk_lake *lake, const lk_namemap_set *committed, lk_namemap *m)
{
    lk_txn *txn = lake->txn;
    for (size_t i = 0; i < committed->n; i++)
        if (lk_namemap_compatible(&committed->maps[i], m))
            return committed->maps[i].id;
    for (size_t i = 0; i < txn->new_maps.n; i++)
        if (lk_namemap_compatible(&txn->new_maps.maps[i], m))
            return txn->new_maps.maps[i].id;
    m->id = txn->base_file_id + (int64_t)txn->new_maps.n;
    lk_namemap_set_add(&txn->new_maps, m);
    namemap_record(txn, m);
    return m->id;
}

/* DuckLake's partition check: a file of a partitioned table must give a
 * value for every key of its spec, and nothing else. */
static int check_partition(const file_map *f)
{
    int bad = f->npvs != f->t->nkeys;
    for (size_t i = 0; i < f->npvs && !bad; i++) {
        int found = 0;
        for (size_t k = 0; k < f->t->nkeys; k++)
            found |= f->t->keys[k].column_id == f->pvs[i].column_id;
        bad = !found;
    }
    if (bad)
        return tarn_error_set(TARN_EINVALID,
                              "Invalid Input Error: File \"%s\" contains an invalid partition "
                              "value for the table configuration.",
                              f->filename);
    return 0;
}

/* The path as stored: relative to the table's directory when under it. */
static void stored_path(char **path, int *relative, lk_lake *lake, const file_map *f)
{
    char *dir = lk_lake_table_dir(lake, &lake->txn->cat, f->t);
    char *abs = NULL;
    if (f->filename[0] != '/' && !strstr(f->filename, "://")) {
        char cwd[4096];
        if (getcwd(cwd, sizeof(cwd)))
            abs = xasprintf("%s/%s", cwd, f->filename);
    }
    const char *full = abs ? abs : f->filename;
    size_t n = strlen(dir);
    *relative = strncmp(full, dir, n) == 0;
    *path = xstrdup(*relative ? full + n : f->filename);
    free(abs);
    free(dir);
}

static void register_file(lk_lake *lake, const file_map *f, int64_t file_id, int64_t map_id,
                          const duck_table *fm, size_t row, lk_table_delta *d)
{
    lk_txn *txn = lake->txn;
    char *path = NULL;
    int relative = 0;
    stored_path(&path, &relative, lake, f);
    int64_t size = int_cell(fm, row, 2), footer = int_cell(fm, row, 3);
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, %lld, %lld, NULL, NULL, ", (long long)file_id, (long long)f->t->id,
               (long long)txn->snapshot_id);
    quote_literal(&b, path);
    buf_printf(&b, ", %s, 'parquet', %lld, %lld, %lld, %lld, ", relative ? "true" : "false",
               (long long)f->rows, (long long)size, (long long)footer,
               (long long)d->next_row_id);
    if (f->t->nkeys)
        buf_printf(&b, "%lld", (long long)f->t->partition_id);
    else
        buf_puts(&b, "NULL");
    buf_printf(&b, ", NULL, %lld, NULL)", (long long)map_id);
    lk_txn_row(txn, "ducklake_data_file", "%s", buf_cstr(&b));
    buf_free(&b);
    txn->files = xrealloc(txn->files, (txn->nfiles + 1) * sizeof(lk_pending_file));
    lk_pending_file *p = &txn->files[txn->nfiles++];
    memset(p, 0, sizeof(*p));
    p->table_id = f->t->id;
    p->file_id = file_id;
    p->path = path;
    p->abs_path = xstrdup(f->filename);
    p->record_count = f->rows;
    p->file_size = size;
    p->footer_size = footer;
    p->row_id_start = d->next_row_id;
    p->has_mapping = 1;
    p->mapping_id = map_id;
}

/* DuckLake writes one partition value per path value, under the key index
 * of the last key of the spec on the same column. */
static void record_partition_values(lk_txn *txn, const file_map *f, int64_t file_id)
{
    for (size_t i = 0; i < f->npvs; i++) {
        size_t index = 0;
        for (size_t k = 0; k < f->t->nkeys; k++)
            if (f->t->keys[k].column_id == f->pvs[i].column_id)
                index = k;
        tarn_buf b = {0};
        quote_literal(&b, f->pvs[i].value);
        lk_txn_row(txn, "ducklake_file_partition_value", "(%lld, %lld, %zu, %s)",
                   (long long)file_id, (long long)f->t->id, index, buf_cstr(&b));
        buf_free(&b);
    }
}

/* Maps one file (schema rows [s0, s1), stats rows [m0, m1)) and adds it. */
static int add_file(lk_lake *lake, file_map *f, const lk_namemap_set *committed,
                    const duck_table *fm, size_t row, const duck_table *schema, size_t s0,
                    size_t s1, const duck_table *meta, size_t m0, size_t m1)
{
    lk_txn *txn = lake->txn;
    if (f->o->hive != 0)
        lk_hive_parse(&f->hive, f->filename);
    pcol root = {0};
    int64_t next_leaf = 0;
    size_t at = s0 + 1; /* the first element is the schema's root */
    build_children(&root, s1 > s0 ? int_cell(schema, s0, 3) : 0, schema, &at, s1, &next_leaf);
    lk_namemap m = {0};
    m.table_id = f->t->id;
    int rc = map_partition_keys(f);
    if (!rc)
        rc = map_columns(&m.cols, &m.ncols, f, root.children, root.nchildren, f->t->cols,
                         f->t->ncols, "");
    if (!rc && f->t->nkeys)
        rc = check_partition(f);
    if (!rc) {
        int64_t map_id = mapping_id(lake, committed, &m);
        if (f->rows > 0) {
            lk_table_delta *d = lk_txn_delta(lake, f->con, f->t->id);
            int64_t file_id = lk_txn_new_file_id(txn);
            rc = record_stats(lake, f, file_id, meta, m0, m1, d);
            if (!rc) {
                register_file(lake, f, file_id, map_id, fm, row, d);
                if (f->t->nkeys)
                    record_partition_values(txn, f, file_id);
                d->next_row_id += f->rows;
                d->added_records += f->rows;
                d->added_bytes += int_cell(fm, row, 2);
                d->got_file = 1;
                d->touched = 1;
                char *tok = xasprintf("inserted_into_table:%lld", (long long)f->t->id);
                lk_txn_change(txn, tok);
                free(tok);
                lk_txn_view_dirty(txn, f->t->id);
            }
        }
    }
    lk_namemap_free(&m);
    pcol_free(&root);
    return rc;
}

/* The first row at or after `from` of result `r` (sorted by its first
 * column, the file name) for file `name`, and the end of its run. */
static void rows_of(const duck_table *r, const char *name, size_t *from, size_t *to)
{
    size_t i = 0;
    while (i < r->nrows && strcmp(duck_table_get(r, i, 0), name) != 0)
        i++;
    *from = i;
    while (i < r->nrows && strcmp(duck_table_get(r, i, 0), name) == 0)
        i++;
    *to = i;
}

static int footer_query(duck_table *r, duckdb_connection con, const char *fmt, const char *glob)
{
    tarn_buf g = {0};
    quote_literal(&g, glob);
    char *sql = xasprintf(fmt, buf_cstr(&g));
    buf_free(&g);
    int rc = duck_table_query(r, con, sql);
    free(sql);
    if (rc) {
        /* DuckDB's message, without the position in tarn's query */
        char *msg = xstrdup(tarn_error_last());
        char *line = strstr(msg, "\nLINE ");
        while (line && line > msg && line[-1] == '\n')
            line--;
        if (line)
            *line = 0;
        rc = tarn_error_set(rc, "Invalid Input Error: Failed to add data files to DuckLake: %s",
                            msg);
        free(msg);
    }
    return rc;
}

static int add_glob(lk_lake *lake, duckdb_connection con, const lk_add_files_opts *o,
                    const lk_table *t, const char *glob, const lk_namemap_set *committed,
                    strlist *seen)
{
    duck_table fm = {0}, schema = {0}, meta = {0};
    int rc = footer_query(&fm, con,
                          "SELECT file_name, num_rows, file_size_bytes, footer_size FROM "
                          "parquet_file_metadata(%s)",
                          glob);
    if (!rc)
        rc = footer_query(&schema, con,
                          "SELECT file_name, name, \"type\", num_children, converted_type, "
                          "\"scale\", \"precision\", logical_type FROM parquet_schema(%s) ORDER "
                          "BY file_name, column_id",
                          glob);
    if (!rc)
        rc = footer_query(&meta, con,
                          "SELECT file_name, column_id, COALESCE(stats_min, stats_min_value), "
                          "COALESCE(stats_max, stats_max_value), stats_null_count, num_values, "
                          "total_compressed_size, geo_bbox.xmin, geo_bbox.xmax, geo_bbox.ymin, "
                          "geo_bbox.ymax, geo_bbox.zmin, geo_bbox.zmax, geo_bbox.mmin, "
                          "geo_bbox.mmax, geo_types::VARCHAR FROM parquet_metadata(%s) ORDER BY "
                          "file_name, "
                          "row_group_id, column_id",
                          glob);
    for (size_t i = 0; !rc && i < fm.nrows; i++) {
        const char *name = duck_table_get(&fm, i, 0);
        if (strlist_find(seen, name) >= 0)
            continue; /* overlapping globs: each file once */
        strlist_push(seen, name);
        file_map f = {0};
        f.con = con;
        f.o = o;
        f.t = t;
        f.filename = name;
        f.rows = int_cell(&fm, i, 1);
        size_t s0, s1, m0, m1;
        rows_of(&schema, name, &s0, &s1);
        rows_of(&meta, name, &m0, &m1);
        rc = add_file(lake, &f, committed, &fm, i, &schema, s0, s1, &meta, m0, m1);
        file_map_free(&f);
    }
    if (fm.ncols)
        duck_table_free(&fm);
    if (schema.ncols)
        duck_table_free(&schema);
    if (meta.ncols)
        duck_table_free(&meta);
    return rc;
}

int lk_add_data_files(lk_lake *lake, duckdb_connection con, const lk_add_files_opts *o)
{
    lk_catalog *cat = &lake->txn->cat;
    lk_schema *sc = lk_catalog_schema(cat, o->schema);
    const lk_table *t = sc ? lk_catalog_table(cat, sc->id, o->table) : NULL;
    if (!t) {
        /* DuckDB's hint: the table in another schema */
        for (size_t i = 0; i < cat->nschemas; i++) {
            lk_schema *other = &cat->schemas[i];
            if (lk_catalog_table(cat, other->id, o->table))
                return tarn_error_set(TARN_ENOTFOUND,
                                      "Catalog Error: Table with name %s does not exist!\nDid you "
                                      "mean \"%s.%s\"?",
                                      o->table, other->name, o->table);
        }
        return tarn_error_set(TARN_ENOTFOUND, "Catalog Error: Table with name %s does not exist!",
                              o->table);
    }
    lk_namemap_set committed = {0};
    int rc = 0;
    if (lk_catalog_table_by_id(&lake->cat, t->id))
        rc = lk_namemap_load(&committed, con, lake->meta, t->id, NULL, 0);
    strlist seen = {0};
    for (size_t i = 0; i < o->nglobs && !rc; i++)
        rc = add_glob(lake, con, o, t, o->globs[i], &committed, &seen);
    strlist_free(&seen);
    lk_namemap_set_free(&committed);
    return rc;
}
