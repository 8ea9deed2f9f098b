/*
 * scan_cache.c — the per-lake cache of what scans read from the catalog
 * (see scan.h), so that a build's views and pinned reads cost no catalog
 * query.
 *
 * What is cached (lake->scans):
 *  - per table, its committed data files with their delete files and
 *    identity partition values, as read at snapshot `valid_from`. Every
 *    commit through this lake that changes the table drops the entry, so
 *    it holds for any snapshot from valid_from to the lake's current one:
 *    the table's view after a commit and the pinned reads AT (VERSION =>
 *    n), valid_from <= n, use it. A transaction's own pending files and
 *    deletions never enter it (lk_scan_sql adds them to what it looks up).
 *    With it, once asked for by file pruning (prune.c), the
 *    ducklake_file_column_stats rows of a column: a file's statistics never
 *    change, and the entry goes with the files.
 *  - per inlined table (ducklake_inlined_data_<tid>_<sv>), the names its
 *    columns had (they never change for a schema version), whether any of
 *    its rows was ended (deleted or updated), and whether it is known to
 *    be empty (only the session's own view skips an empty one).
 *
 * Who fills it: lk_scan_sql stores what it reads at the lake's snapshot
 * (committed_input, inlined_names_read, any_ended in scan.c);
 * lk_scan_prefill reads every table's at once when the views are all
 * built (attaching a lake, lk_lake_refresh_views); lk_scan_cache_commit
 * records what a commit that only added files leaves.
 *
 * Who invalidates it: lk_scan_cache_commit (txn.c, after a successful
 * commit) drops what the commit changed; lk_scan_cache_forget, through
 * lk_lake_caches_forget, drops everything when the catalog may have
 * changed in ways a commit's record does not say: a commit that renumbered
 * ids, maintenance functions, lk_lake_reload, another process's commit
 * seen when a transaction begins, and detaching the lake.
 */
#include "lake/scan.h"

#include "duck/duck.h"
#include "lake/catdb.h"
#include "lake/renumber.h"
#include "lake/scan_int.h"
#include "lake/txn.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* Appends deep copies of `n` files to `in`. */
static void copy_files(scan_input *in, const scan_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const scan_file *src = &files[i];
        scan_file *f = scan_push_file(in);
        *f = *src;
        f->path = xstrdup(src->path);
        f->del_path = dup_or_null(src->del_path);
        f->pconst = dup_or_null(src->pconst);
        f->pk_cols = src->npk ? xmalloc(src->npk * sizeof(int64_t)) : NULL;
        f->pk_vals = src->npk ? xmalloc(src->npk * sizeof(char *)) : NULL;
        for (size_t k = 0; k < src->npk; k++) {
            f->pk_cols[k] = src->pk_cols[k];
            f->pk_vals[k] = dup_or_null(src->pk_vals[k]);
        }
    }
}

/* ---- the per-lake cache of tables' committed files ----
 *
 * An entry is a table's committed data files (with their delete files and
 * partition values) as read at snapshot `valid_from`; it stays true up to
 * the lake's current snapshot because every commit that changes the table
 * drops it (lk_scan_cache_commit). A table's view after a commit and the
 * pinned reads AT (VERSION => n) of it, valid_from <= n, then cost no
 * catalog query: a build reads each upstream at the snapshot that built it. */
typedef struct {
    int64_t table_id, valid_from;
    scan_input in;
    scan_colstats **stats; /* the columns read for file pruning (prune.c); each
                              its own allocation: prune.c holds several at once */
    size_t nstats;
} scan_entry;

struct lk_scan_cache {
    scan_entry *entries;
    size_t n;
    inlined_info *inl;
    size_t ninl;
};

static struct lk_scan_cache *cache_of(lk_lake *lake)
{
    if (!lake->scans)
        lake->scans = xcalloc(1, sizeof(struct lk_scan_cache));
    return lake->scans;
}

static void inlined_info_free(inlined_info *x)
{
    for (size_t k = 0; k < x->n; k++)
        free(x->names[k]);
    free(x->names);
    free(x->ids);
    free(x->name);
}

/* The entry of inlined table `name` (made when `add`), or NULL. */
inlined_info *scan_inlined_find(lk_lake *lake, const char *name, int add)
{
    struct lk_scan_cache *c = add ? cache_of(lake) : lake->scans;
    for (size_t i = 0; c && i < c->ninl; i++)
        if (strcmp(c->inl[i].name, name) == 0)
            return &c->inl[i];
    if (!add)
        return NULL;
    c->inl = xrealloc(c->inl, (c->ninl + 1) * sizeof(inlined_info));
    inlined_info *x = &c->inl[c->ninl++];
    memset(x, 0, sizeof(*x));
    x->name = xstrdup(name);
    return x;
}

void scan_inlined_set_names(inlined_info *x, const int64_t *ids, char *const *names, size_t n)
{
    for (size_t k = 0; k < x->n; k++)
        free(x->names[k]);
    x->ids = xrealloc(x->ids, (n ? n : 1) * sizeof(int64_t));
    x->names = xrealloc(x->names, (n ? n : 1) * sizeof(char *));
    for (size_t k = 0; k < n; k++) {
        x->ids[k] = ids[k];
        x->names[k] = xstrdup(names[k]);
    }
    x->n = n;
    x->have_names = 1;
}

static void colstats_free(scan_colstats *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        free(cs->mins[i]);
        free(cs->maxs[i]);
    }
    free(cs->file_ids);
    free(cs->mins);
    free(cs->maxs);
    free(cs->null_counts);
    free(cs->nan);
}

static void entry_free(scan_entry *e)
{
    scan_input_free(&e->in);
    for (size_t i = 0; i < e->nstats; i++) {
        colstats_free(e->stats[i]);
        free(e->stats[i]);
    }
    free(e->stats);
}

static scan_entry *cache_find(lk_lake *lake, int64_t table_id)
{
    struct lk_scan_cache *c = lake->scans;
    for (size_t i = 0; c && i < c->n; i++)
        if (c->entries[i].table_id == table_id)
            return &c->entries[i];
    return NULL;
}

void lk_scan_cache_drop(lk_lake *lake, int64_t table_id)
{
    scan_entry *e = cache_find(lake, table_id);
    if (!e)
        return;
    struct lk_scan_cache *c = lake->scans;
    entry_free(e);
    *e = c->entries[--c->n];
}

void lk_scan_cache_forget(lk_lake *lake)
{
    struct lk_scan_cache *c = lake->scans;
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        entry_free(&c->entries[i]);
    for (size_t i = 0; i < c->ninl; i++)
        inlined_info_free(&c->inl[i]);
    free(c->entries);
    free(c->inl);
    free(c);
    lake->scans = NULL;
}

void scan_cache_store(lk_lake *lake, int64_t table_id, int64_t snapshot, const scan_input *in)
{
    lk_scan_cache_drop(lake, table_id);
    struct lk_scan_cache *c = cache_of(lake);
    c->entries = xrealloc(c->entries, (c->n + 1) * sizeof(scan_entry));
    scan_entry *e = &c->entries[c->n++];
    memset(e, 0, sizeof(*e));
    e->table_id = table_id;
    e->valid_from = snapshot;
    e->in.any_partitioned = in->any_partitioned;
    copy_files(&e->in, in->files, in->n);
}

/* The committed files of table `id` at snapshot s, when the cache knows
 * them: s must lie between the entry's snapshot and the lake's. */
int scan_cache_lookup(scan_input *in, lk_lake *lake, int64_t id, int64_t s)
{
    scan_entry *e = cache_find(lake, id);
    if (!e || s < e->valid_from || s > lake->cat.snapshot_id)
        return 0;
    in->any_partitioned = e->in.any_partitioned;
    copy_files(in, e->in.files, e->in.n);
    return 1;
}

/* Reads column `column_id`'s statistics rows of table `table_id` into cs. */
static int colstats_read(scan_colstats *cs, lk_lake *lake, duckdb_connection con, int64_t table_id,
                         int64_t column_id)
{
    duck_table r;
    int rc = lk_catdb_queryf(&r, &lake->db, con,
                             "SELECT data_file_id, min_value, max_value, null_count, contains_nan "
                             "FROM %s.ducklake_file_column_stats WHERE table_id = %lld AND "
                             "column_id = %lld ORDER BY data_file_id",
                             lk_catdb_name(&lake->db), (long long)table_id, (long long)column_id);
    if (rc)
        return rc;
    size_t n = r.nrows ? r.nrows : 1;
    cs->column_id = column_id;
    cs->n = r.nrows;
    cs->file_ids = xmalloc(n * sizeof(int64_t));
    cs->mins = xmalloc(n * sizeof(char *));
    cs->maxs = xmalloc(n * sizeof(char *));
    cs->null_counts = xmalloc(n * sizeof(int64_t));
    cs->nan = xmalloc(n);
    for (size_t i = 0; i < r.nrows; i++) {
        const char *nc = duck_table_get(&r, i, 3), *nan = duck_table_get(&r, i, 4);
        cs->file_ids[i] = duck_table_int64(&r, i, 0);
        cs->mins[i] = dup_or_null(duck_table_get(&r, i, 1));
        cs->maxs[i] = dup_or_null(duck_table_get(&r, i, 2));
        cs->null_counts[i] = nc ? strtoll(nc, NULL, 10) : -1;
        cs->nan[i] = nan ? strcmp(nan, "true") == 0 : -1;
    }
    duck_table_free(&r);
    return 0;
}

const scan_colstats *scan_cache_colstats(lk_lake *lake, duckdb_connection con, int64_t table_id,
                                         int64_t column_id, int64_t s)
{
    scan_entry *e = cache_find(lake, table_id);
    if (!e || s < e->valid_from || s > lake->cat.snapshot_id)
        return NULL;
    for (size_t i = 0; i < e->nstats; i++)
        if (e->stats[i]->column_id == column_id)
            return e->stats[i];
    scan_colstats *cs = xcalloc(1, sizeof(*cs));
    if (colstats_read(cs, lake, con, table_id, column_id)) {
        tarn_error_clear();
        free(cs);
        return NULL;
    }
    e->stats = xrealloc(e->stats, (e->nstats + 1) * sizeof(*e->stats));
    e->stats[e->nstats++] = cs;
    return cs;
}

long scan_colstats_find(const scan_colstats *cs, int64_t file_id)
{
    size_t lo = 0, hi = cs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cs->file_ids[mid] < file_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cs->n && cs->file_ids[lo] == file_id ? (long)lo : -1;
}

/* The tables a commit may have changed: its deltas, the tables whose views
 * showed its pending state, those named by id in its changes, and those it
 * created or renamed (their catalog row begins at the new snapshot). */
static void drop_committed_tables(lk_lake *lake, const lk_txn *txn)
{
    for (size_t i = 0; i < txn->ndeltas; i++)
        lk_scan_cache_drop(lake, txn->deltas[i].table_id);
    for (size_t i = 0; i < txn->ntouched; i++)
        lk_scan_cache_drop(lake, txn->touched[i]);
    for (size_t i = 0; i < txn->nchange_tokens; i++) {
        const char *colon = strchr(txn->change_tokens[i], ':');
        if (colon && colon[1] != '"')
            lk_scan_cache_drop(lake, strtoll(colon + 1, NULL, 10));
    }
    for (size_t i = 0; i < txn->cat.ntables; i++)
        if (txn->cat.tables[i].begin >= txn->snapshot_id)
            lk_scan_cache_drop(lake, txn->cat.tables[i].id);
}

static int schema_changed_by(const lk_txn *txn, int64_t table_id)
{
    for (size_t i = 0; i < txn->nschema_changed; i++)
        if (txn->schema_changed[i] == table_id)
            return 1;
    return 0;
}

/* Whether the transaction inlined rows into table `table_id`. */
static int inlined_into(const lk_txn *txn, int64_t table_id)
{
    for (size_t i = 0; i < txn->ndeltas; i++)
        if (txn->deltas[i].table_id == table_id && txn->deltas[i].inlined)
            return 1;
    return 0;
}

/* The inlined tables of tables the commit inlined rows into are no
 * longer known empty. */
static void forget_empty(lk_lake *lake, const lk_txn *txn)
{
    struct lk_scan_cache *c = lake->scans;
    for (size_t i = 0; c && i < c->ninl; i++) {
        int64_t tid = strtoll(c->inl[i].name + strlen("ducklake_inlined_data_"), NULL, 10);
        if (c->inl[i].empty && inlined_into(txn, tid))
            c->inl[i].empty = 0;
    }
}

/* An inlined table the commit created: none of its rows is ended (a row is
 * ended only by a later snapshot than the one that wrote it), and its
 * columns were named as the committed table's are now — unless the same
 * transaction went on to change an older table's schema. */
/* Notes inlined table `name`, made by the commit for table t (whose rows
 * the commit's deltas name table_id). */
static void note_made_inlined(lk_lake *lake, const lk_txn *txn, const lk_table *t, int64_t table_id,
                              const char *name)
{
    inlined_info *x = scan_inlined_find(lake, name, 1);
    x->have_ended = 1;
    x->ended = 0;
    x->empty = !inlined_into(txn, table_id);
    /* (lake->cat is still the catalog before the commit) */
    if (!lk_txn_created_table(lake, txn, t) && schema_changed_by(txn, t->id))
        return;
    int64_t *ids = xcalloc(t->ncols ? t->ncols : 1, sizeof(int64_t));
    char **names = xcalloc(t->ncols ? t->ncols : 1, sizeof(char *));
    for (size_t c = 0; c < t->ncols; c++) {
        ids[c] = t->cols[c].id;
        names[c] = t->cols[c].name;
    }
    scan_inlined_set_names(x, ids, names, t->ncols);
    free(ids);
    free(names);
}

static void note_new_inlined(lk_lake *lake, const lk_txn *txn, const char *name)
{
    for (size_t i = 0; i < txn->cat.ntables; i++) {
        const lk_table *t = &txn->cat.tables[i];
        for (size_t k = 0; k < t->ninlined; k++)
            if (strcmp(t->inlined[k].name, name) == 0) {
                note_made_inlined(lake, txn, t, t->id, name);
                return;
            }
    }
}

static int made_here(const lk_txn *txn, const char *name)
{
    for (size_t i = 0; i < txn->meta_ops.n; i++)
        if (txn->meta_ops.items[i][0] == '+' && strcmp(txn->meta_ops.items[i] + 1, name) == 0)
            return 1;
    return 0;
}

void lk_scan_cache_note_renumbered(lk_lake *lake, const lk_txn *txn)
{
    for (size_t i = 0; i < txn->cat.ntables; i++) {
        const lk_table *t = &txn->cat.tables[i];
        int64_t to = lk_renumber_id(txn, t->id);
        if (to == t->id)
            continue;
        to += txn->cat_shift;
        for (size_t k = 0; k < t->ninlined; k++) {
            if (!made_here(txn, t->inlined[k].name))
                continue;
            char *name = lk_renumber_inlined_name(txn, t, k, txn->cat_shift, txn->sv_shift);
            note_made_inlined(lake, txn, t, to, name);
            free(name);
        }
    }
}

/* Whether every change of the commit only adds: files and inlined rows
 * to tables, new tables and schemas, dropped tables (CREATE OR REPLACE). */
static int commit_only_adds(const lk_txn *txn)
{
    static const char *const ADDS[] = {"created_schema:", "created_table:", "dropped_table:",
                                       "inserted_into_table:", "inlined_insert:"};
    if (txn->has_deletes || txn->renum.n || txn->nmfiles || txn->nreplaced_files)
        return 0;
    for (size_t i = 0; i < txn->nchange_tokens; i++) {
        int ok = 0;
        for (size_t k = 0; k < sizeof(ADDS) / sizeof(ADDS[0]) && !ok; k++)
            ok = strncmp(txn->change_tokens[i], ADDS[k], strlen(ADDS[k])) == 0;
        if (!ok)
            return 0;
    }
    return 1;
}

/* The committed files of table `t` after a commit that only added to it:
 * those before (known to the cache, or none for a new table) and the
 * files the transaction wrote, as the catalog now lists them. 0 when
 * they are not known that way. */
static int files_after_commit(scan_input *out, lk_lake *lake, const lk_txn *txn, const lk_table *t)
{
    if (t->nkeys || (!lk_txn_created_table(lake, txn, t) &&
                     (txn->cat.snapshot_id != lake->cat.snapshot_id ||
                      !scan_cache_lookup(out, lake, t->id, lake->cat.snapshot_id))))
        return 0;
    scan_add_pending_files(out, txn, t->id, 1);
    return 1;
}

/* Drops the entries of the tables the commit changed; those it only added
 * files to get what they hold now (known before their entries go): their
 * views are rebuilt next, without a catalog query. */
static void update_tables(lk_lake *lake, const lk_txn *txn)
{
    size_t nafter = 0;
    int64_t *after_ids = NULL;
    scan_input *after = NULL;
    for (size_t i = 0; commit_only_adds(txn) && i < txn->ndeltas; i++) {
        const lk_table *t = lk_catalog_table_by_id(&txn->cat, txn->deltas[i].table_id);
        scan_input in = {0};
        if (!t || !files_after_commit(&in, lake, txn, t)) {
            scan_input_free(&in);
            continue;
        }
        after = xrealloc(after, (nafter + 1) * sizeof(scan_input));
        after_ids = xrealloc(after_ids, (nafter + 1) * sizeof(int64_t));
        after[nafter] = in;
        after_ids[nafter++] = t->id;
    }
    drop_committed_tables(lake, txn);
    for (size_t i = 0; i < nafter; i++) {
        scan_cache_store(lake, after_ids[i], txn->snapshot_id, &after[i]);
        scan_input_free(&after[i]);
    }
    free(after);
    free(after_ids);
}

/* Deletions and flushes end inlined rows: whether any was ended is asked
 * again. */
static void forget_ended(lk_lake *lake, const lk_txn *txn)
{
    struct lk_scan_cache *c = lake->scans;
    int ends = txn->has_deletes;
    for (size_t i = 0; i < txn->nchange_tokens; i++)
        ends |= strncmp(txn->change_tokens[i], "inlined_delete:", 15) == 0 ||
                strncmp(txn->change_tokens[i], "inline_flush:", 13) == 0 ||
                strncmp(txn->change_tokens[i], "deleted_from_table:", 19) == 0;
    for (size_t i = 0; ends && c && i < c->ninl; i++)
        c->inl[i].have_ended = 0;
}

/* The inlined tables the commit dropped or made. */
static void update_inlined_tables(lk_lake *lake, const lk_txn *txn)
{
    for (size_t i = 0; i < txn->meta_ops.n; i++) {
        const char *op = txn->meta_ops.items[i];
        if (strncmp(op + 1, "ducklake_inlined_data_", 22) != 0)
            continue;
        inlined_info *x = scan_inlined_find(lake, op + 1, 0);
        if (x) /* dropped or made again: forget what was known */
            x->have_names = x->have_ended = 0;
        if (op[0] == '+')
            note_new_inlined(lake, txn, op + 1);
    }
}

void lk_scan_cache_commit(lk_lake *lake, const lk_txn *txn)
{
    update_tables(lake, txn);
    forget_ended(lake, txn);
    forget_empty(lake, txn);
    update_inlined_tables(lake, txn);
}

/* ---- prefilling the cache: every table's view from a few queries ---- */

/* The committed tables of `cat` the cache does not know (at the lake's
 * snapshot); NULL when there are too few to be worth a bulk read. */
static const lk_table **unknown_tables(size_t *n, lk_lake *lake, const lk_catalog *cat)
{
    const lk_table **ts = xcalloc(cat->ntables ? cat->ntables : 1, sizeof(*ts));
    *n = 0;
    for (size_t i = 0; i < cat->ntables; i++) {
        const lk_table *t = &cat->tables[i];
        scan_entry *e = cache_find(lake, t->id);
        if (t->begin <= lake->cat.snapshot_id && (!e || e->valid_from > lake->cat.snapshot_id))
            ts[(*n)++] = t;
    }
    if (*n < 4) {
        free(ts);
        *n = 0;
        return NULL;
    }
    return ts;
}

static int cmp_table_id(const void *a, const void *b)
{
    int64_t x = (*(const lk_table *const *)a)->id, y = (*(const lk_table *const *)b)->id;
    return x < y ? -1 : x > y;
}

/* The files of the tables `ts` (sorted by id) from one query over every
 * table, and their partition values from one more when some are
 * partitioned; each table's entry is stored. */
static int prefill_files(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                         const lk_table **ts, size_t n)
{
    int64_t s = lake->cat.snapshot_id;
    duck_table r, pv = {0};
    int rc = scan_query_files(&r, lake, con, -1, s);
    if (rc)
        return rc;
    int have_pv = 0;
    size_t row = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        while (row < r.nrows && duck_table_int64(&r, row, 0) < ts[i]->id)
            row++;
        size_t end = row;
        while (end < r.nrows && duck_table_int64(&r, end, 0) == ts[i]->id)
            end++;
        scan_input in = {0};
        char *dir = lk_lake_table_dir(lake, cat, ts[i]);
        scan_add_file_rows(&in, &r, row, end, dir);
        free(dir);
        if (in.any_partitioned && !have_pv) {
            rc = scan_query_partition_values(&pv, lake, con, -1);
            have_pv = rc == 0;
        }
        if (in.any_partitioned && have_pv)
            scan_apply_partition_values(&in, ts[i], &pv);
        if (!rc)
            scan_cache_store(lake, ts[i]->id, s, &in);
        scan_input_free(&in);
        row = end;
    }
    if (have_pv)
        duck_table_free(&pv);
    duck_table_free(&r);
    return rc;
}

/* The inlined tables of `ts` that exist and whose column names or ended
 * rows the cache does not know. */
static const lk_inlined **unknown_inlined(size_t *n, const lk_table ***owners, lk_lake *lake,
                                          duckdb_connection con, const lk_table **ts, size_t nts)
{
    size_t cap = 0;
    const lk_inlined **out = NULL;
    *n = 0;
    for (size_t i = 0; i < nts; i++)
        cap += ts[i]->ninlined;
    out = xcalloc(cap ? cap : 1, sizeof(*out));
    *owners = xcalloc(cap ? cap : 1, sizeof(**owners));
    for (size_t i = 0; i < nts; i++)
        for (size_t k = 0; k < ts[i]->ninlined; k++) {
            const lk_inlined *inl = &ts[i]->inlined[k];
            inlined_info *x = scan_inlined_find(lake, inl->name, 0);
            if ((x && x->have_names && x->have_ended) ||
                !lk_lake_meta_table_exists(lake, con, inl->name))
                continue;
            (*owners)[*n] = ts[i];
            out[(*n)++] = inl;
        }
    return out;
}

/* Column names (by id) of the inlined tables `inl` of tables `owner`, in
 * one query (see inlined_names_read). */
static int prefill_inlined_names(lk_lake *lake, duckdb_connection con, const lk_inlined **inl,
                                 const lk_table **owner, size_t n)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT i.name, c.column_id, c.column_name FROM (VALUES ");
    for (size_t i = 0; i < n; i++) {
        buf_puts(&b, i ? ", (" : "(");
        quote_literal(&b, inl[i]->name);
        buf_printf(&b, ", %lld::BIGINT, %lld::BIGINT, %lld::BIGINT)", (long long)owner[i]->id,
                   (long long)inl[i]->schema_version, (long long)owner[i]->begin);
    }
    buf_printf(&b,
               ") i(name, table_id, sv, tbegin) JOIN %s.ducklake_column c ON c.table_id = "
               "i.table_id AND c.parent_column IS NULL, LATERAL (SELECT COALESCE((SELECT "
               "max(begin_snapshot) FROM %s.ducklake_schema_versions v WHERE v.table_id = "
               "i.table_id AND v.schema_version <= i.sv), i.tbegin) AS s) v WHERE v.s >= "
               "c.begin_snapshot AND (v.s < c.end_snapshot OR c.end_snapshot IS NULL) ORDER BY "
               "i.name",
               lake->meta, lake->meta);
    duck_table r;
    int rc = lk_catdb_query(&r, &lake->db, con, buf_cstr(&b));
    buf_free(&b);
    for (size_t row = 0; !rc && row < r.nrows;) {
        size_t end = row;
        while (end < r.nrows && strcmp(duck_table_get(&r, end, 0), duck_table_get(&r, row, 0)) == 0)
            end++;
        int64_t *ids = xcalloc(end - row, sizeof(int64_t));
        char **names = xcalloc(end - row, sizeof(char *));
        for (size_t k = row; k < end; k++) {
            ids[k - row] = duck_table_int64(&r, k, 1);
            names[k - row] = (char *)duck_table_get(&r, k, 2);
        }
        scan_inlined_set_names(scan_inlined_find(lake, duck_table_get(&r, row, 0), 1), ids, names,
                               end - row);
        free(ids);
        free(names);
        row = end;
    }
    if (!rc)
        duck_table_free(&r);
    return rc;
}

/* Whether each of the inlined tables `inl` has an ended row, in one query. */
static int prefill_inlined_ended(lk_lake *lake, duckdb_connection con, const lk_inlined **inl,
                                 size_t n)
{
    tarn_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        buf_puts(&b, i ? " UNION ALL SELECT " : "SELECT ");
        quote_literal(&b, inl[i]->name);
        buf_printf(&b, " AS name, EXISTS (SELECT 1 FROM %s.", lake->meta);
        quote_ident(&b, inl[i]->name);
        buf_puts(&b, " WHERE end_snapshot IS NOT NULL) AS ended");
    }
    duck_table r;
    int rc = lk_catdb_query(&r, &lake->db, con, buf_cstr(&b));
    buf_free(&b);
    for (size_t row = 0; !rc && row < r.nrows; row++) {
        inlined_info *x = scan_inlined_find(lake, duck_table_get(&r, row, 0), 1);
        x->have_ended = 1;
        x->ended = strcmp(duck_table_get(&r, row, 1), "true") == 0;
    }
    if (!rc)
        duck_table_free(&r);
    return rc;
}

int lk_scan_prefill(lk_lake *lake, duckdb_connection con, const lk_catalog *cat)
{
    if (lake->txn && lake->txn->cat.snapshot_id != lake->cat.snapshot_id)
        return 0; /* another process committed: the tables' own reads */
    size_t n = 0;
    const lk_table **ts = unknown_tables(&n, lake, cat);
    if (!ts)
        return 0;
    qsort(ts, n, sizeof(*ts), cmp_table_id);
    int rc = prefill_files(lake, con, cat, ts, n);
    const lk_table **owners = NULL;
    size_t ninl = 0;
    const lk_inlined **inl = rc ? NULL : unknown_inlined(&ninl, &owners, lake, con, ts, n);
    if (!rc && ninl)
        rc = prefill_inlined_names(lake, con, inl, owners, ninl);
    if (!rc && ninl)
        rc = prefill_inlined_ended(lake, con, inl, ninl);
    free(inl);
    free(owners);
    free(ts);
    if (rc) /* the views read what they need one by one */
        tarn_error_clear();
    return 0;
}
