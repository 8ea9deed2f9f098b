/*
 * addfiles_map.c — how ducklake_add_data_files reads a Parquet file it
 * registers: the file's schema as a tree, its types checked against the
 * table's (DuckLake's DuckLakeParquetTypeChecker: which Parquet types may
 * fill which DuckLake type), and its columns mapped to the table's by name
 * (MapColumns / MapColumn), hive path values filling partition keys and
 * missing columns. The mapping becomes the file's ducklake_column_mapping
 * and ducklake_name_mapping rows (recorded by addfiles.c through
 * namemap.c); nothing here writes a catalog row. Invariants: every table
 * column a file lacks is refused unless allow_missing; every file column
 * the table lacks is refused unless ignore_extra_columns; errors use
 * DuckLake's wording, naming the file and the table.
 */
#include "lake/addfiles.h"

#include "duck/duck.h"
#include "lake/addfiles_int.h"
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

void lk_addfiles_pcol_free(pcol *c)
{
    free(c->name);
    free(c->type);
    free(c->converted);
    free(c->logical);
    for (size_t i = 0; i < c->nchildren; i++)
        lk_addfiles_pcol_free(&c->children[i]);
    free(c->children);
}

void lk_addfiles_map_free(file_map *f)
{
    lk_hive_free(&f->hive);
    free(f->leaves);
    for (size_t i = 0; i < f->npvs; i++)
        free(f->pvs[i].value);
    free(f->pvs);
}

/* Builds the children of `parent` from schema rows starting at *row (the
 * rows are pre-order: a group is followed by its num_children subtrees). */
void lk_addfiles_schema_tree(pcol *parent, int64_t count, const duck_table *r, size_t *row,
                             size_t end, int64_t *next_leaf)
{
    for (int64_t i = 0; i < count && *row < end; i++) {
        parent->children = xrealloc(parent->children, (parent->nchildren + 1) * sizeof(pcol));
        pcol *c = &parent->children[parent->nchildren++];
        memset(c, 0, sizeof(*c));
        size_t k = (*row)++;
        c->name = duck_table_dup(r, k, 1);
        c->type = duck_table_dup(r, k, 2);
        int64_t nchildren = duck_table_int64(r, k, 3);
        c->converted = duck_table_dup(r, k, 4);
        c->scale = duck_table_int64(r, k, 5);
        c->precision = duck_table_int64(r, k, 6);
        c->logical = duck_table_dup(r, k, 7);
        c->leaf = -1;
        if (nchildren <= 0)
            c->leaf = (*next_leaf)++;
        else
            lk_addfiles_schema_tree(c, nchildren, r, row, end, next_leaf);
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
        {"BOOLEAN", "BOOLEAN"}, {"INT32", "INTEGER"},
        {"INT64", "BIGINT"},    {"INT96", "TIMESTAMP"},
        {"FLOAT", "FLOAT"},     {"DOUBLE", "DOUBLE"},
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
        {"int64", I64},
        {"int32", I64 + 2},
        {"int16", I64 + 4},
        {"int8", I64 + 6},
        {"uint64", U64},
        {"uint32", U64 + 1},
        {"uint16", U64 + 2},
        {"uint8", U64 + 3},
        {"float64", F64},
        {"float32", F64 + 1},
        {"timestamp", TS_NS},
        {"timestamp_ns", TS_NS},
        {"timestamp_s", TS_NS + 1},
        {"timestamp_ms", TS_NS + 1},
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
            msg = xasprintf("Expected %s%s, found type %s", ok[1] ? "one of " : "", buf_cstr(&list),
                            src);
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
int lk_addfiles_map_partition_keys(file_map *f)
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

int lk_addfiles_map_columns(lk_nm_entry **out, size_t *nout, file_map *f, pcol *cols, size_t ncols,
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
        rc = lk_addfiles_map_columns(&e->children, &e->nchildren, f, pc->children, pc->nchildren,
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
        rc = map_column(push_entry(&e->children, &e->nchildren), f, elem, &col->children[0], path);
    } else if (col->nchildren && strcmp(col->type, "map") == 0 && pc->nchildren) {
        pcol *rep = &pc->children[0];
        rc = lk_addfiles_map_columns(&e->children, &e->nchildren, f, rep->children, rep->nchildren,
                                     col->children, col->nchildren, path);
    }
    free(path);
    return rc;
}

int lk_addfiles_map_columns(lk_nm_entry **out, size_t *nout, file_map *f, pcol *cols, size_t ncols,
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
