/*
 * maintain_merge.c — ducklake_merge_adjacent_files (DuckLake §6.3): merges
 * consecutive small live files of a table (same schema version and
 * partition, no deletes of any kind) into one file. Each row keeps its
 * snapshot (embedded column) and its row id (embedded only when the
 * sources' row-id ranges do not follow each other), the new file begins at
 * the first source's snapshot, so every old snapshot still reads the same
 * rows; the sources leave the catalog at once and are scheduled for
 * deletion (token merge_adjacent:T).
 */
#include "duck/duck.h"
#include "lake/maintain_int.h"
#include "lake/settings.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- merge_adjacent_files ---- */

typedef struct {
    int64_t target, min_size, max_size, max_files;
    int64_t compacted; /* files of this table looked at, against max_compacted_files */
} merge_opts;

static int merge_group(const mt_call *c, const lk_table *t, cand *const *src, size_t n,
                       mt_result *res)
{
    int created = 0;
    int rc = mt_write_compacted(c, t, src, n, 0, &created);
    int64_t *ids = xcalloc(n, sizeof(int64_t));
    for (size_t i = 0; i < n; i++)
        ids[i] = src[i]->id;
    if (!rc)
        rc = mt_drop_files_now(c, ids, n);
    free(ids);
    if (!rc) {
        mt_change(c, "merge_adjacent", t->id);
        mt_compact_result(res, c, t, n, created);
    }
    return rc;
}

/* Greedy runs of consecutive files of one group up to the target size. */
static int merge_runs(const mt_call *c, const lk_table *t, cand **g, size_t n, merge_opts *o,
                      mt_result *res)
{
    int rc = 0;
    for (size_t start = 0; !rc && start < n && o->compacted < o->max_files; start++) {
        int64_t total = 0;
        size_t end = start;
        while (end < n && total < o->target && g[end]->size < o->target)
            total += g[end++]->size;
        if (end - start >= 2) {
            rc = merge_group(c, t, g + start, end - start, res);
            start = end - 1;
        }
        o->compacted++;
    }
    return rc;
}

/* A file merges when it is under the target size and has no deletions. */
static int merge_keep(const cand *f, const void *arg)
{
    const merge_opts *o = arg;
    return f->size < o->target && !f->ever_deleted && f->inlined_deleted <= 0;
}

static int merge_table(const mt_call *c, const lk_table *t, merge_opts *o, mt_result *res)
{
    char *filter =
        xasprintf("AND d.file_size_bytes < %lld AND d.file_size_bytes >= %lld",
                  (long long)(o->max_size > 0 ? o->max_size : o->target), (long long)o->min_size);
    mt_groups it;
    int rc = mt_groups_load(&it, c, t, filter);
    free(filter);
    size_t ng = 0;
    while (!rc && o->compacted < o->max_files && mt_groups_next(&it, &ng, merge_keep, o))
        if (ng >= 2)
            rc = merge_runs(c, t, it.g, ng, o, res);
    mt_groups_free(&it);
    return rc;
}

/* Sizes as DuckDB writes them in options: bytes, or with a unit. */
static int64_t parse_size(const char *v, int64_t dflt)
{
    if (!v)
        return dflt;
    char *end = NULL;
    double n = strtod(v, &end);
    while (end && *end == ' ')
        end++;
    if (!end || end == v || n < 0)
        return dflt;
    static const struct {
        const char *unit;
        double mult;
    } UNITS[] = {{"", 1},
                 {"b", 1},
                 {"bytes", 1},
                 {"kb", 1e3},
                 {"mb", 1e6},
                 {"gb", 1e9},
                 {"tb", 1e12},
                 {"kib", 1024.0},
                 {"mib", 1048576.0},
                 {"gib", 1073741824.0},
                 {"tib", 1099511627776.0}};
    for (size_t i = 0; i < sizeof(UNITS) / sizeof(UNITS[0]); i++)
        if (strcasecmp(end, UNITS[i].unit) == 0)
            return (int64_t)llround(n * UNITS[i].mult);
    return dflt;
}

static int nonneg_arg(const mt_call *c, const char *name, int64_t dflt, int64_t *out)
{
    const char *v = lk_args_named(c->a, name);
    *out = dflt;
    if (!v)
        return 0;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (!end || *end || n < 0)
        return tarn_error_set(TARN_EINVALID, "%s must be a non-negative integer", name);
    *out = n;
    return 0;
}

/* A size or count given as NULL is refused, as DuckLake refuses it. */
static int non_null_integer(const mt_call *c, const char *name)
{
    for (size_t i = 0; i < c->a->nnamed; i++)
        if (strcasecmp(c->a->names[i], name) == 0 && !c->a->values[i])
            return tarn_error_set(TARN_EINVALID, "The %s option must be a non-null integer", name);
    return 0;
}

static int merge_options(const mt_call *c, merge_opts *o)
{
    int rc = non_null_integer(c, "min_file_size");
    if (!rc)
        rc = non_null_integer(c, "max_file_size");
    if (!rc)
        rc = non_null_integer(c, "max_compacted_files");
    if (!rc)
        rc = nonneg_arg(c, "min_file_size", 0, &o->min_size);
    if (!rc)
        rc = nonneg_arg(c, "max_file_size", 0, &o->max_size);
    if (!rc)
        rc = nonneg_arg(c, "max_compacted_files", INT64_MAX, &o->max_files);
    if (!rc && lk_args_named(c->a, "max_compacted_files") && o->max_files == 0)
        rc = tarn_error_set(TARN_EINVALID, "The max_compacted_files option must be greater "
                                           "than zero.");
    if (!rc && lk_args_named(c->a, "max_file_size") && o->max_size == 0)
        rc = tarn_error_set(TARN_EINVALID, "The max_file_size option must be greater than zero.");
    if (!rc && o->max_size > 0 && o->min_size >= o->max_size)
        rc = tarn_error_set(TARN_EINVALID, "The min_file_size must be less than max_file_size.");
    return rc;
}

/* A table's target size: the session's ducklake_target_file_size comes
 * before the lake's option. */
static int merge_table_options(const mt_call *c, const lk_table *t, void *st)
{
    merge_opts *o = st;
    o->compacted = 0; /* max_compacted_files holds per table, as in DuckLake */
    o->target = lk_setting_target_file_size(c->con);
    if (o->target < 0) {
        char *v = mt_option(c, "target_file_size", t->schema_id, t->id);
        o->target = parse_size(v, (int64_t)1 << 29);
        free(v);
    }
    return 0;
}

static int merge_table_step(const mt_call *c, const lk_table *t, void *st, mt_result *res)
{
    return merge_table(c, t, st, res);
}

int mt_merge_adjacent(char **out, const mt_call *c)
{
    static const char *const NAMED[] = {
        "schema", "min_file_size", "max_file_size", "max_compacted_files", "dry_run", NULL};
    merge_opts o = {0};
    int rc = mt_check_named(c, NAMED);
    if (!rc)
        rc = merge_options(c, &o);
    if (rc)
        return rc;
    mt_compaction k = {merge_table_options, merge_table_step, &o};
    return mt_compact_tables(out, c, &k);
}
