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
            lk_txn_sql(txn, "UPDATE %s.ducklake_delete_file SET end_snapshot = %lld WHERE "
                            "delete_file_id = %lld",
                       c->lake->meta, (long long)txn->snapshot_id, (long long)src[i]->del_id);
        lk_txn_sql(txn, "UPDATE %s.ducklake_data_file SET end_snapshot = %lld WHERE data_file_id "
                        "= %lld",
                   c->lake->meta, (long long)txn->snapshot_id, (long long)src[i]->id);
    }
    if (!rc) {
        mt_change(c, "rewrite_delete", t->id);
        mt_compact_result(res, c, t, n, created);
    }
    return rc;
}

static int rewrite_table(const mt_call *c, const lk_table *t, double threshold, mt_result *res)
{
    cand_list l = {0};
    int rc = mt_load_cands(c, t, "", &l);
    cand **g = xcalloc(l.n ? l.n : 1, sizeof(cand *));
    char *done = xcalloc(l.n ? l.n : 1, 1);
    int rewrote = 0;
    for (size_t i = 0; !rc && i < l.n; i++) {
        if (done[i])
            continue;
        size_t ng = 0;
        for (size_t k = i; k < l.n; k++) {
            cand *f = &l.v[k];
            if (done[k] || strcmp(f->group, l.v[i].group) != 0)
                continue;
            done[k] = 1;
            int64_t deleted = f->del_count + f->inlined_deleted;
            double ratio = f->record_count > 0 ? (double)deleted / (double)f->record_count : 0;
            if (deleted > 0 && ratio >= threshold)
                g[ng++] = f;
        }
        if (ng) {
            rc = rewrite_group(c, t, g, ng, res);
            rewrote = 1;
        }
    }
    if (!rc && rewrote)
        rc = mt_restats(c, t);
    free(done);
    free(g);
    mt_cands_free(&l);
    return rc;
}

int mt_rewrite_files(char **out, const mt_call *c)
{
    static const char *const NAMED[] = {"schema", "delete_threshold", "dry_run", NULL};
    int rc = mt_check_named(c, NAMED);
    if (!rc)
        rc = mt_write_begin(c);
    if (rc)
        return rc;
    mt_result res = {4, MT_COMPACT_NAMES, MT_COMPACT_TYPES, {0}, 0};
    const lk_table **tables = NULL;
    size_t n = 0;
    rc = mt_tables(c, lk_args_named(c->a, "schema"), mt_table_arg(c), &tables, &n);
    for (size_t i = 0; !rc && i < n; i++) {
        double threshold = 0;
        if (!mt_auto_compact(c, tables[i]) || mt_checkpoint_skips(c, tables[i], 0))
            continue;
        size_t mark = 0;
        rc = delete_threshold(c, tables[i], &threshold);
        if (!rc)
            rc = mt_table_begin(c, tables[i], &mark);
        if (!rc)
            rc = rewrite_table(c, tables[i], threshold, &res);
        mt_table_end(c, tables[i], mark);
    }
    free(tables);
    rc = mt_write_end(c, rc);
    *out = mt_result_sql(&res);
    return rc;
}
