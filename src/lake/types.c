/*
 * types.c — DuckDB ↔ DuckLake type mapping (see types.h).
 *
 * The scalar names follow the DuckLake spec's type table: int8…int128,
 * uint8…uint128, float32/float64, decimal(P,S), varchar, blob, boolean,
 * date, time, timetz, timestamp (+ _s/_ms/_ns), timestamptz, interval,
 * uuid, json, geometry, variant. The SQL direction uses DuckDB's spelling
 * of the same types.
 *
 * Catalog rows: none (the type names it maps are those ducklake_column
 * stores).
 */
#include "lake/types.h"

#include "tarn/error.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* DuckDB 1.5's C API reports GEOMETRY and VARIANT columns with these type
 * ids, which its duckdb.h does not name yet (later headers call them
 * DUCKDB_TYPE_GEOMETRY and DUCKDB_TYPE_VARIANT). */
#define TYPE_GEOMETRY ((duckdb_type)40)
#define TYPE_VARIANT ((duckdb_type)41)

typedef struct {
    duckdb_type id;
    const char *lake;
    const char *sql;
} type_name;

static const type_name SCALARS[] = {
    {DUCKDB_TYPE_BOOLEAN, "boolean", "BOOLEAN"},
    {DUCKDB_TYPE_TINYINT, "int8", "TINYINT"},
    {DUCKDB_TYPE_SMALLINT, "int16", "SMALLINT"},
    {DUCKDB_TYPE_INTEGER, "int32", "INTEGER"},
    {DUCKDB_TYPE_BIGINT, "int64", "BIGINT"},
    {DUCKDB_TYPE_HUGEINT, "int128", "HUGEINT"},
    {DUCKDB_TYPE_UTINYINT, "uint8", "UTINYINT"},
    {DUCKDB_TYPE_USMALLINT, "uint16", "USMALLINT"},
    {DUCKDB_TYPE_UINTEGER, "uint32", "UINTEGER"},
    {DUCKDB_TYPE_UBIGINT, "uint64", "UBIGINT"},
    {DUCKDB_TYPE_UHUGEINT, "uint128", "UHUGEINT"},
    {DUCKDB_TYPE_FLOAT, "float32", "FLOAT"},
    {DUCKDB_TYPE_DOUBLE, "float64", "DOUBLE"},
    {DUCKDB_TYPE_VARCHAR, "varchar", "VARCHAR"},
    {DUCKDB_TYPE_BLOB, "blob", "BLOB"},
    {DUCKDB_TYPE_DATE, "date", "DATE"},
    {DUCKDB_TYPE_TIME, "time", "TIME"},
    {DUCKDB_TYPE_TIME_TZ, "timetz", "TIMETZ"},
    {DUCKDB_TYPE_TIMESTAMP, "timestamp", "TIMESTAMP"},
    {DUCKDB_TYPE_TIMESTAMP_S, "timestamp_s", "TIMESTAMP_S"},
    {DUCKDB_TYPE_TIMESTAMP_MS, "timestamp_ms", "TIMESTAMP_MS"},
    {DUCKDB_TYPE_TIMESTAMP_NS, "timestamp_ns", "TIMESTAMP_NS"},
    {DUCKDB_TYPE_TIMESTAMP_TZ, "timestamptz", "TIMESTAMPTZ"},
    {DUCKDB_TYPE_INTERVAL, "interval", "INTERVAL"},
    {DUCKDB_TYPE_UUID, "uuid", "UUID"},
    /* a GEOMETRY's coordinate reference system is not kept: DuckLake
     * stores every GEOMETRY as plain `geometry` */
    {TYPE_GEOMETRY, "geometry", "GEOMETRY"},
    {TYPE_VARIANT, "variant", "VARIANT"},
};

#define NSCALARS (sizeof(SCALARS) / sizeof(SCALARS[0]))

int lk_type_is_nested(const char *type)
{
    return strcmp(type, "struct") == 0 || strcmp(type, "list") == 0 || strcmp(type, "map") == 0;
}

static lk_column *add_child(lk_column *col)
{
    col->children = xrealloc(col->children, (col->nchildren + 1) * sizeof(lk_column));
    memset(&col->children[col->nchildren], 0, sizeof(lk_column));
    return &col->children[col->nchildren++];
}

static void init_column(lk_column *col, const char *name, int64_t id)
{
    col->id = id;
    col->name = xstrdup(name);
    col->nulls_allowed = 1;
    col->parent = -1;
    col->default_value = xstrdup("NULL");
    col->default_value_type = xstrdup("literal");
}

static int nested_from_logical(lk_column *col, duckdb_logical_type type, duckdb_type id,
                               int64_t *next_id)
{
    int rc = 0;
    free(col->default_value_type);
    col->default_value_type = xstrdup("");
    if (id == DUCKDB_TYPE_STRUCT) {
        col->type = xstrdup("struct");
        idx_t n = duckdb_struct_type_child_count(type);
        for (idx_t i = 0; i < n && !rc; i++) {
            char *cname = duckdb_struct_type_child_name(type, i);
            duckdb_logical_type ct = duckdb_struct_type_child_type(type, i);
            lk_column *child = add_child(col);
            rc = lk_type_from_logical(child, cname, ct, next_id);
            child->parent = col->id;
            duckdb_destroy_logical_type(&ct);
            duckdb_free(cname);
        }
    } else if (id == DUCKDB_TYPE_LIST) {
        col->type = xstrdup("list");
        duckdb_logical_type ct = duckdb_list_type_child_type(type);
        lk_column *child = add_child(col);
        rc = lk_type_from_logical(child, "element", ct, next_id);
        child->parent = col->id;
        duckdb_destroy_logical_type(&ct);
    } else {
        col->type = xstrdup("map");
        duckdb_logical_type kt = duckdb_map_type_key_type(type);
        duckdb_logical_type vt = duckdb_map_type_value_type(type);
        lk_column *k = add_child(col);
        rc = lk_type_from_logical(k, "key", kt, next_id);
        k->parent = col->id;
        if (!rc) {
            lk_column *v = add_child(col);
            rc = lk_type_from_logical(v, "value", vt, next_id);
            v->parent = col->id;
        }
        duckdb_destroy_logical_type(&kt);
        duckdb_destroy_logical_type(&vt);
    }
    return rc;
}

int lk_type_from_logical(lk_column *col, const char *name, duckdb_logical_type type,
                         int64_t *next_id)
{
    init_column(col, name, (*next_id)++);
    duckdb_type id = duckdb_get_type_id(type);
    if (id == DUCKDB_TYPE_STRUCT || id == DUCKDB_TYPE_LIST || id == DUCKDB_TYPE_MAP)
        return nested_from_logical(col, type, id, next_id);
    if (id == DUCKDB_TYPE_DECIMAL) {
        col->type = xasprintf("decimal(%u,%u)", duckdb_decimal_width(type),
                              duckdb_decimal_scale(type));
        return 0;
    }
    char *alias = duckdb_logical_type_get_alias(type);
    int is_json = alias && strcasecmp(alias, "JSON") == 0;
    if (alias)
        duckdb_free(alias);
    if (is_json) {
        col->type = xstrdup("json");
        return 0;
    }
    for (size_t i = 0; i < NSCALARS; i++) {
        if (SCALARS[i].id == id) {
            col->type = xstrdup(SCALARS[i].lake);
            return 0;
        }
    }
    return tarn_error_set(TARN_EUNSUPPORTED,
                          "column \"%s\": this type cannot be stored in a DuckLake table "
                          "(ENUM, ARRAY, UNION and user types are not supported by the format)",
                          name);
}

int lk_type_inlinable(const lk_column *col)
{
    if (strcmp(col->type, "geometry") == 0)
        return 0;
    for (size_t i = 0; i < col->nchildren; i++)
        if (!lk_type_inlinable(&col->children[i]))
            return 0;
    return 1;
}

/* The names of an inlined-data table's own columns: a table with a
 * column of one of these names does not inline (DuckLake's
 * CanInlineColumns), and DuckLake refuses the name while inlining is on. */
static const char *const RESERVED[] = {"row_id", "begin_snapshot", "end_snapshot",
                                       "_ducklake_internal_row_id",
                                       "_ducklake_internal_snapshot_id"};

int lk_column_name_reserved(const char *name)
{
    for (size_t r = 0; r < sizeof(RESERVED) / sizeof(RESERVED[0]); r++)
        if (strcasecmp(name, RESERVED[r]) == 0)
            return 1;
    return 0;
}

int lk_table_inlinable(const lk_table *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (!lk_type_inlinable(&t->cols[i]) || lk_column_name_reserved(t->cols[i].name))
            return 0;
    return 1;
}

char *lk_type_lake_name(const char *sql)
{
    for (size_t i = 0; i < NSCALARS; i++)
        if (strcasecmp(SCALARS[i].sql, sql) == 0)
            return xstrdup(SCALARS[i].lake);
    unsigned w = 0, s = 0;
    if (sscanf(sql, "DECIMAL(%u,%u)", &w, &s) == 2)
        return xasprintf("decimal(%u,%u)", w, s);
    if (strcasecmp(sql, "JSON") == 0)
        return xstrdup("json");
    if (strcasecmp(sql, "TIMESTAMP WITH TIME ZONE") == 0)
        return xstrdup("timestamptz");
    if (strcasecmp(sql, "TIME WITH TIME ZONE") == 0)
        return xstrdup("timetz");
    return xstrdup("varchar");
}

static const char *scalar_sql(const char *lake)
{
    for (size_t i = 0; i < NSCALARS; i++)
        if (strcasecmp(SCALARS[i].lake, lake) == 0)
            return SCALARS[i].sql;
    if (strcasecmp(lake, "json") == 0)
        return "JSON";
    if (strcasecmp(lake, "timestamp_us") == 0)
        return "TIMESTAMP";
    if (strcasecmp(lake, "time_ns") == 0)
        return "TIME_NS";
    return NULL;
}

/* The first type under `col` (itself included) DuckLake would not parse. */
static const char *unknown_type(const lk_column *col)
{
    const char *ty = col->type;
    if (!ty)
        return "";
    if (strcasecmp(ty, "struct") == 0 || strcasecmp(ty, "list") == 0 ||
        strcasecmp(ty, "map") == 0) {
        for (size_t i = 0; i < col->nchildren; i++) {
            const char *bad = unknown_type(&col->children[i]);
            if (bad)
                return bad;
        }
        return NULL;
    }
    unsigned w = 0, sc = 0;
    char end = 0;
    if (sscanf(ty, "decimal(%u,%u%c", &w, &sc, &end) == 3 && end == ')')
        return NULL;
    if (scalar_sql(ty) || strcasecmp(ty, "unknown") == 0 || strcasecmp(ty, "decimal") == 0)
        return NULL;
    return ty;
}

int lk_table_check_types(const lk_table *t)
{
    for (size_t i = 0; i < t->ncols; i++) {
        const char *bad = unknown_type(&t->cols[i]);
        if (bad)
            return tarn_error_set(TARN_EINVALID,
                                  "Invalid Input Error: Failed to parse DuckLake type - "
                                  "unsupported type '%s'",
                                  bad);
    }
    return 0;
}

void lk_type_to_sql(tarn_buf *b, const lk_column *col)
{
    if (strcmp(col->type, "struct") == 0) {
        buf_puts(b, "STRUCT(");
        for (size_t i = 0; i < col->nchildren; i++) {
            if (i)
                buf_puts(b, ", ");
            quote_ident(b, col->children[i].name);
            buf_putc(b, ' ');
            lk_type_to_sql(b, &col->children[i]);
        }
        buf_putc(b, ')');
    } else if (strcmp(col->type, "list") == 0) {
        lk_type_to_sql(b, &col->children[0]);
        buf_puts(b, "[]");
    } else if (strcmp(col->type, "map") == 0) {
        buf_puts(b, "MAP(");
        lk_type_to_sql(b, &col->children[0]);
        buf_puts(b, ", ");
        lk_type_to_sql(b, &col->children[1]);
        buf_putc(b, ')');
    } else if (strncasecmp(col->type, "decimal", 7) == 0) {
        buf_puts(b, "DECIMAL");
        buf_puts(b, col->type + 7);
    } else {
        const char *s = scalar_sql(col->type);
        buf_puts(b, s ? s : "VARCHAR");
    }
}

/* DuckLake's PostgreSQL column types for inlined data
 * (PostgresMetadataManager::GetColumnType): what PostgreSQL holds
 * natively keeps its type; VARCHAR and BLOB are bytea (a NUL byte fits),
 * nested values, the wide integers and the dates and timestamps (whose
 * ranges are wider than PostgreSQL's) are their text. */
static const struct {
    const char *lake, *pg;
} PG_TYPES[] = {
    {"int8", "SMALLINT"},        {"uint8", "INTEGER"},       {"uint16", "INTEGER"},
    {"uint32", "BIGINT"},        {"float32", "REAL"},        {"float64", "DOUBLE PRECISION"},
    {"varchar", "BYTEA"},        {"blob", "BYTEA"},          {"json", "BYTEA"},
    {"uint64", "VARCHAR"},       {"int128", "VARCHAR"},      {"uint128", "VARCHAR"},
    {"date", "VARCHAR"},         {"timestamp", "VARCHAR"},   {"timestamp_us", "VARCHAR"},
    {"timestamptz", "VARCHAR"},  {"timestamp_s", "VARCHAR"}, {"timestamp_ms", "VARCHAR"},
    {"timestamp_ns", "VARCHAR"}, {"variant", "VARCHAR"},     {"geometry", "VARCHAR"},
};

void lk_type_to_pg_sql(tarn_buf *b, const lk_column *col)
{
    if (lk_type_is_nested(col->type)) {
        buf_puts(b, "VARCHAR");
        return;
    }
    for (size_t i = 0; i < sizeof(PG_TYPES) / sizeof(PG_TYPES[0]); i++)
        if (strcasecmp(col->type, PG_TYPES[i].lake) == 0) {
            buf_puts(b, PG_TYPES[i].pg);
            return;
        }
    lk_type_to_sql(b, col);
}

int lk_type_pg_is_bytea(const lk_column *col)
{
    return strcasecmp(col->type, "varchar") == 0 || strcasecmp(col->type, "json") == 0;
}

void lk_type_field_ids(tarn_buf *b, const lk_column *col)
{
    quote_ident(b, col->name);
    if (col->nchildren == 0) {
        buf_printf(b, ": %lld", (long long)col->id);
        return;
    }
    buf_printf(b, ": {__duckdb_field_id: %lld", (long long)col->id);
    for (size_t i = 0; i < col->nchildren; i++) {
        buf_puts(b, ", ");
        lk_type_field_ids(b, &col->children[i]);
    }
    buf_putc(b, '}');
}

int lk_table_has_nested(const lk_table *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (lk_type_is_nested(t->cols[i].type))
            return 1;
    return 0;
}

int lk_column_same_tree(const lk_column *a, const lk_column *b)
{
    if (a->id != b->id || strcmp(a->name, b->name) != 0 || strcmp(a->type, b->type) != 0 ||
        a->nchildren != b->nchildren)
        return 0;
    for (size_t i = 0; i < a->nchildren; i++)
        if (!lk_column_same_tree(&a->children[i], &b->children[i]))
            return 0;
    return 1;
}
