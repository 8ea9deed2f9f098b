/*
 * maintain_rewrite.c — ducklake_rewrite_data_files (DuckLake §6.4):
 * rewrites the live files whose share of deleted rows reaches a threshold
 * into one file per schema version and partition, without those rows and
 * with row ids embedded. That is a new version of the data: the new file
 * begins at the commit's snapshot, the old file and its delete file end
 * there and stay for time travel until expired (token rewrite_delete:T).
 * A table the rewrite leaves without deletions gets exact statistics
 * again (maintain_restats.c), as in DuckLake.
 */
#include "duck/duck.h"
#include "lake/maintain_int.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* ---- rewrite_data_files ---- */

static int delete_threshold(const mt_call *c, const lk_table *t, double *out)
{
    const char *v = lk_args_named(c->a, "delete_threshold");
    char *opt = v ? NULL : mt_option(c, "rewrite_delete_threshold", t->schema_id, t->id);
    const char *s = v ? v : opt;
    *out = 0.95;
    if (s) {
        char *end = NULL;
        *out = strtod(s, &end);
        if (!end || end == s || *end)
            *out = -1;
    }
    free(opt);
    if (*out < 0 || *out > 1)
        return tarn_error_set(TARN_EINVALID, "The delete_threshold option must be between 0 and 1");
    return 0;
}

static int rewrite_group(const mt_call *c, const lk_table *t, cand *const *src, size_t n,
                         mt_result *res)
{
    lk_txn *txn = c->lake->txn;
    int created = 0;
    int rc = mt_write_compacted(c, t, src, n, 1, &created);
    for (size_t i = 0; !rc && i < n; i++) {
        if (src[i]->del_id >= 0)
            lk_txn_sql(txn,
                       "UPDATE %s.ducklake_delete_file SET end_snapshot = %lld WHERE "
                       "delete_file_id = %lld",
                       c->lake->meta, (long long)txn->snapshot_id, (long long)src[i]->del_id);
        lk_txn_sql(txn,
                   "UPDATE %s.ducklake_data_file SET end_snapshot = %lld WHERE data_file_id "
                   "= %lld",
                   c->lake->meta, (long long)txn->snapshot_id, (long long)src[i]->id);
    }
    if (!rc) {
        mt_change(c, "rewrite_delete", t->id);
        mt_compact_result(res, c, t, n, created);
    }
    return rc;
}

/* A file is rewritten when at least `threshold` of its rows are deleted. */
static int rewrite_keep(const cand *f, const void *arg)
{
    double threshold = *(const double *)arg;
    int64_t deleted = f->del_count + f->inlined_deleted;
    double ratio = f->record_count > 0 ? (double)deleted / (double)f->record_count : 0;
    return deleted > 0 && ratio >= threshold;
}

static int rewrite_table(const mt_call *c, const lk_table *t, double threshold, mt_result *res)
{
    mt_groups it;
    int rc = mt_groups_load(&it, c, t, "");
    int rewrote = 0;
    size_t ng = 0;
    while (!rc && mt_groups_next(&it, &ng, rewrite_keep, &threshold))
        if (ng) {
            rc = rewrite_group(c, t, it.g, ng, res);
            rewrote = 1;
        }
    if (!rc && rewrote)
        rc = mt_restats(c, t);
    mt_groups_free(&it);
    return rc;
}

static int rewrite_table_options(const mt_call *c, const lk_table *t, void *st)
{
    return delete_threshold(c, t, st);
}

static int rewrite_table_step(const mt_call *c, const lk_table *t, void *st, mt_result *res)
{
    return rewrite_table(c, t, *(double *)st, res);
}

int mt_rewrite_files(char **out, const mt_call *c)
{
    static const char *const NAMED[] = {"schema", "delete_threshold", "dry_run", NULL};
    int rc = mt_check_named(c, NAMED);
    if (rc)
        return rc;
    double threshold = 0;
    mt_compaction k = {rewrite_table_options, rewrite_table_step, &threshold};
    return mt_compact_tables(out, c, &k);
}
