/*
 * rebase.c — moves a committing transaction onto snapshots committed
 * after the one it began on (see rebase.h and commit.c's header).
 *
 * Reads ducklake_snapshot (the newest counters), ducklake_snapshot_changes
 * (what the newer snapshots changed), ducklake_table_stats (their row
 * counters), ducklake_inlined_data_tables, ducklake_delete_file and
 * ducklake_data_file (the files they deleted from); writes, through the
 * statements lk_rebase_sql returns, this transaction's own rows only
 * (told apart by the catalog's own-rows condition, catdb.h):
 *   - begin_snapshot / end_snapshot: the provisional snapshot id becomes
 *     the one after the newest;
 *   - ducklake_schema_versions.schema_version moves by the schema versions
 *     the others used;
 *   - data and delete file ids move past the others' (the ids of the rows
 *     that carry them as keys are moved in the batch's text, before the
 *     INSERT, as the primary key would refuse the provisional ones);
 *   - row ids of a table both inserted into (row_id_start of its new
 *     files, row_id of its new inlined rows) move past the others' rows.
 *   - new catalog objects (provisional ids, renumber.c) are numbered
 *     past the ones the newer snapshots made (cat_shift), their change
 *     tokens with them (lk_rebase_changes).
 * The table stats the commit writes add this transaction's counts to the
 * newest ones (commit.c). Maintenance that numbers its own files while
 * another transaction added files, or an inlined-data table made for an
 * existing table under a schema version another used, is not moved: its
 * commit fails as a conflict, to be run again.
 */
#include "lake/rebase.h"

#include "lake/catdb.h"
#include "lake/conflict.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Catalog tables with begin_snapshot and end_snapshot (lake.c's DDL). */
static const char *const SNAP_TABLES[] = {
    "ducklake_schema",         "ducklake_table",     "ducklake_view",        "ducklake_tag",
    "ducklake_column_tag",     "ducklake_data_file", "ducklake_delete_file", "ducklake_column",
    "ducklake_partition_info", "ducklake_macro",     "ducklake_sort_info",
};

/* Catalog columns holding a data file id (the keys are moved in text). */
static const char *const FILE_REFS[][2] = {
    {"ducklake_file_column_stats", "data_file_id"},
    {"ducklake_file_partition_value", "data_file_id"},
    {"ducklake_file_variant_stats", "data_file_id"},
    {"ducklake_delete_file", "data_file_id"},
    {"ducklake_files_scheduled_for_deletion", "data_file_id"},
};

int lk_rebase_newest(lk_snap_counters *out, lk_lake *lake, duckdb_connection con)
{
    duck_table t = {0};
    int rc =
        lk_catdb_queryf(&t, &lake->db, con,
                        "SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM "
                        "%s.ducklake_snapshot ORDER BY snapshot_id DESC LIMIT 1",
                        lk_catdb_name(&lake->db));
    if (!rc && t.nrows == 0)
        rc = tarn_error_set(TARN_ENOTFOUND, "the catalog has no snapshot");
    if (!rc) {
        out->snapshot_id = duck_table_int64(&t, 0, 0);
        out->schema_version = duck_table_int64(&t, 0, 1);
        out->next_catalog_id = duck_table_int64(&t, 0, 2);
        out->next_file_id = duck_table_int64(&t, 0, 3);
    }
    duck_table_free(&t);
    return rc;
}

typedef struct {
    lk_lake *lake;
    lk_txn *txn;
} names_ctx;

static const char *schema_name(void *ctx, int64_t id)
{
    names_ctx *c = ctx;
    lk_schema *s = lk_catalog_schema_by_id(&c->lake->cat, id);
    return s ? s->name : NULL;
}

static int64_t schema_id(void *ctx, const char *name)
{
    names_ctx *c = ctx;
    lk_schema *s = lk_catalog_schema(&c->txn->cat, name);
    return s && s->id < c->txn->final_catalog_id ? s->id : -1;
}

/* The newer snapshots' changes_made, comma-joined. */
static int their_changes(char **out, lk_lake *lake, duckdb_connection con, int64_t base)
{
    duck_table t = {0};
    int rc =
        lk_catdb_queryf(&t, &lake->db, con,
                        "SELECT changes_made FROM %s.ducklake_snapshot_changes WHERE snapshot_id "
                        "> %lld ORDER BY snapshot_id",
                        lk_catdb_name(&lake->db), (long long)base);
    tarn_buf b = {0};
    for (size_t r = 0; !rc && r < t.nrows; r++) {
        const char *v = duck_table_get(&t, r, 0);
        if (!v || !*v)
            continue;
        if (b.len)
            buf_putc(&b, ',');
        buf_puts(&b, v);
    }
    duck_table_free(&t);
    *out = buf_detach(&b);
    return rc;
}

static int conflict_error(char *msg)
{
    int rc = tarn_error_set(TARN_ECONFLICT,
                            "TransactionContext Error: Failed to commit: Failed to commit DuckLake "
                            "transaction.\n%s",
                            msg);
    free(msg);
    return rc;
}

/* Whether this transaction made an inlined-data table for a table that
 * was there before it (a new table's are renamed with it: renumber.c). */
static int made_old_inlined(const lk_txn *txn)
{
    for (size_t i = 0; i < txn->meta_ops.n; i++) {
        const char *op = txn->meta_ops.items[i];
        if (op[0] != '+' || strncmp(op + 1, "ducklake_inlined_data_", 22) != 0)
            continue;
        if (strtoll(op + 23, NULL, 10) < txn->final_catalog_id)
            return 1;
    }
    return 0;
}

/* Why this transaction cannot be moved onto `newest`, or NULL. */
static const char *not_movable(const lk_txn *txn, const lk_snap_counters *newest, int64_t our_sv)
{
    if (our_sv > 0 && newest->schema_version != txn->cat.schema_version && made_old_inlined(txn))
        return "it made an inlined-data table under a schema version another transaction used";
    int64_t ours = txn->cat.next_file_id + txn->file_id_bumps - txn->base_file_id;
    int maint = txn->nmaintained || txn->nmfiles || txn->nreplaced_files || txn->replaced_inlined.n;
    if (ours > 0 && newest->next_file_id != txn->base_file_id && (maint || txn->new_maps.n))
        return "it numbered files of its own (maintenance, registered files) while another "
               "transaction added files";
    return NULL;
}

/* The id of an id change token ("inserted_into_table:4"), or -1. */
static int64_t token_id(const char *tok, size_t len)
{
    const char *colon = memchr(tok, ':', len);
    if (!colon || colon + 1 >= tok + len || colon[1] == '"')
        return -1;
    return strtoll(colon + 1, NULL, 10);
}

/* This transaction's change tokens without those of its own new catalog
 * objects: their ids are numbered past the others' at commit, so they
 * never meet another transaction's (whose new objects may hold the same
 * ids now). Pointers into txn->change_tokens. */
static size_t tokens_to_check(const char **out, const lk_txn *txn)
{
    size_t n = 0;
    for (size_t i = 0; i < txn->nchange_tokens; i++) {
        const char *tok = txn->change_tokens[i];
        if (token_id(tok, strlen(tok)) < txn->final_catalog_id)
            out[n++] = tok;
    }
    return n;
}

char *lk_rebase_changes(const lk_rebase *rb, const lk_txn *txn)
{
    if (!rb || !rb->active || !rb->cat_shift || !txn->changes.len)
        return NULL;
    const char *list = txn->changes.ptr;
    tarn_buf b = {0};
    const char *start = list;
    int in_quotes = 0;
    for (const char *p = list;; p++) {
        if (*p && (in_quotes || *p != ',')) {
            if (*p == '"')
                in_quotes = !in_quotes;
            continue;
        }
        size_t len = (size_t)(p - start);
        int64_t id = token_id(start, len);
        if (b.len)
            buf_putc(&b, ',');
        if (id >= txn->final_catalog_id)
            buf_printf(&b, "%.*s%lld", (int)((const char *)memchr(start, ':', len) + 1 - start),
                       start, (long long)(id + rb->cat_shift));
        else
            buf_printf(&b, "%.*s", (int)len, start);
        if (!*p)
            break;
        start = p + 1;
    }
    return buf_detach(&b);
}

/* Row counters: a table this transaction inserted into moves past the
 * rows the newer snapshots gave it; a stats row they made is updated. */
static int plan_rows(lk_rebase *rb, lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    rb->had_stats = xmalloc((txn->ndeltas + 1) * sizeof(int));
    tarn_buf ids = {0};
    for (size_t i = 0; i < txn->ndeltas; i++) {
        rb->had_stats[i] = txn->deltas[i].had_stats_row;
        if (txn->deltas[i].touched)
            buf_printf(&ids, "%s%lld", ids.len ? ", " : "", (long long)txn->deltas[i].table_id);
    }
    if (!ids.len)
        return 0;
    duck_table t = {0};
    int rc =
        lk_catdb_queryf(&t, &lake->db, con,
                        "SELECT table_id, next_row_id FROM %s.ducklake_table_stats WHERE table_id "
                        "IN (%s)",
                        lk_catdb_name(&lake->db), buf_cstr(&ids));
    buf_free(&ids);
    for (size_t r = 0; !rc && r < t.nrows; r++) {
        int64_t tid = duck_table_int64(&t, r, 0), next = duck_table_int64(&t, r, 1);
        for (size_t i = 0; i < txn->ndeltas; i++) {
            lk_table_delta *d = &txn->deltas[i];
            if (d->table_id != tid || !d->touched)
                continue;
            rb->had_stats[i] = 1;
            if (next <= d->base_row_id || d->next_row_id <= d->base_row_id)
                continue;
            rb->row_tables = xrealloc(rb->row_tables, (rb->nrows + 1) * sizeof(int64_t));
            rb->row_shifts = xrealloc(rb->row_shifts, (rb->nrows + 1) * sizeof(int64_t));
            rb->row_bases = xrealloc(rb->row_bases, (rb->nrows + 1) * sizeof(int64_t));
            rb->row_tables[rb->nrows] = tid;
            rb->row_shifts[rb->nrows] = next - d->base_row_id;
            rb->row_bases[rb->nrows++] = d->base_row_id;
        }
    }
    duck_table_free(&t);
    return rc;
}

/* The inlined tables of the changed tables (their rows carry snapshot and
 * row ids), and the inlined-data tables this transaction made that
 * another transaction made first (this one's ducklake_inlined_data_tables
 * row is then a duplicate). */
static int plan_inlined(lk_rebase *rb, lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    for (size_t i = 0; i < txn->ndeltas; i++) {
        if (!txn->deltas[i].touched)
            continue;
        const lk_table *t = lk_catalog_table_by_id(&txn->cat, txn->deltas[i].table_id);
        for (size_t k = 0; t && k < t->ninlined; k++)
            strlist_push(&rb->inlined_tables, t->inlined[k].name);
        char tok[64];
        snprintf(tok, sizeof(tok), "inlined_delete:%lld", (long long)txn->deltas[i].table_id);
        for (size_t k = 0; k < txn->nchange_tokens; k++)
            if (strcmp(txn->change_tokens[k], tok) == 0)
                strlist_push_owned(
                    &rb->inlined_tables,
                    xasprintf("ducklake_inlined_delete_%lld", (long long)txn->deltas[i].table_id));
    }
    tarn_buf names = {0};
    for (size_t i = 0; i < txn->meta_ops.n; i++) {
        const char *op = txn->meta_ops.items[i];
        if (op[0] != '+' || strncmp(op + 1, "ducklake_inlined_data_", 22) != 0)
            continue;
        if (names.len)
            buf_puts(&names, ", ");
        quote_literal(&names, op + 1);
    }
    int rc = 0;
    if (names.len) { /* made here: did another transaction make it first? */
        duck_table t = {0};
        rc = lk_catdb_queryf(&t, &lake->db, con,
                             "SELECT table_name FROM %s.ducklake_inlined_data_tables WHERE "
                             "table_name IN (%s)",
                             lk_catdb_name(&lake->db), buf_cstr(&names));
        for (size_t r = 0; !rc && r < t.nrows; r++)
            strlist_push(&rb->dup_inlined, duck_table_get(&t, r, 0));
        duck_table_free(&t);
    }
    buf_free(&names);
    return rc;
}

int lk_rebase_prepare(lk_rebase *rb, lk_lake *lake, duckdb_connection con,
                      const lk_snap_counters *newest)
{
    lk_txn *txn = lake->txn;
    memset(rb, 0, sizeof(*rb));
    int rc = their_changes(&rb->theirs, lake, con, txn->cat.snapshot_id);
    if (rc)
        return rc;
    names_ctx nc = {lake, txn};
    lk_conflict_info info = {.schema_name = schema_name, .schema_id = schema_id, .ctx = &nc};
    char *msg = NULL;
    const char **ours = xmalloc((txn->nchange_tokens + 1) * sizeof(char *));
    size_t nours = tokens_to_check(ours, txn);
    int conflict = lk_conflict_find(&msg, ours, nours, rb->theirs, &info);
    free(ours);
    if (conflict)
        return conflict_error(msg);
    int64_t our_sv = lk_txn_schema_version(txn) - txn->cat.schema_version;
    const char *why = not_movable(txn, newest, our_sv);
    if (why)
        return conflict_error(xasprintf("Transaction conflict - snapshot %lld was committed "
                                        "meanwhile and this transaction cannot be moved onto it: "
                                        "%s; run it again",
                                        (long long)newest->snapshot_id, why));
    rb->active = 1;
    rb->from_snapshot = txn->snapshot_id;
    rb->to_snapshot = newest->snapshot_id + 1;
    rb->sv_shift = our_sv > 0 ? newest->schema_version - txn->cat.schema_version : 0;
    rb->schema_version = newest->schema_version + our_sv;
    int64_t our_cat = txn->cat.next_catalog_id - txn->final_catalog_id;
    rb->cat_shift = our_cat > 0 ? newest->next_catalog_id - txn->final_catalog_id : 0;
    rb->next_catalog_id = newest->next_catalog_id + our_cat;
    int64_t our_files = txn->cat.next_file_id + txn->file_id_bumps - txn->base_file_id;
    rb->file_shift = newest->next_file_id - txn->base_file_id;
    rb->next_file_id = newest->next_file_id + our_files;
    rc = plan_rows(rb, lake, con);
    if (!rc)
        rc = plan_inlined(rb, lake, con);
    return rc;
}

int64_t lk_rebase_file_id(const lk_rebase *rb, const lk_txn *txn, int64_t id)
{
    if (!rb || !rb->active || id < txn->base_file_id)
        return id;
    for (size_t i = 0; i < txn->file_renum.n; i++)
        if (txn->file_renum.from[i] == id)
            return txn->file_renum.to[i] + rb->file_shift;
    return id + rb->file_shift;
}

char *lk_rebase_rows(const lk_rebase *rb, const lk_txn *txn, const char *table, const char *rows)
{
    if (!rb || !rb->active || rb->file_shift == 0 ||
        (strcmp(table, "ducklake_data_file") != 0 && strcmp(table, "ducklake_delete_file") != 0))
        return NULL;
    /* "(id, …), (id, …)": the first number after each top-level '(' */
    tarn_buf b = {0};
    int depth = 0, quoted = 0;
    for (const char *p = rows; *p; p++) {
        if (quoted) {
            buf_putc(&b, *p);
            if (*p == '\'')
                quoted = 0; /* a doubled '' reopens at once */
            continue;
        }
        if (*p == '\'') {
            quoted = 1;
        } else if (*p == ')') {
            depth--;
        } else if (*p == '(' && depth++ == 0) {
            char *end = NULL;
            long long id = strtoll(p + 1, &end, 10);
            if (end > p + 1) {
                buf_printf(&b, "(%lld", (long long)lk_rebase_file_id(rb, txn, id));
                p = end - 1;
                continue;
            }
        }
        buf_putc(&b, *p);
    }
    return buf_detach(&b);
}

int64_t lk_rebase_next_row_id(const lk_rebase *rb, const lk_table_delta *d)
{
    for (size_t i = 0; rb && rb->active && i < rb->nrows; i++)
        if (rb->row_tables[i] == d->table_id)
            return d->next_row_id + rb->row_shifts[i];
    return d->next_row_id;
}

static int inlined_of(const char *name, int64_t table_id)
{
    char data[64], del[64];
    snprintf(data, sizeof(data), "ducklake_inlined_data_%lld_", (long long)table_id);
    snprintf(del, sizeof(del), "ducklake_inlined_delete_%lld", (long long)table_id);
    return strncmp(name, data, strlen(data)) == 0 || strcmp(name, del) == 0;
}

static void snapshot_sql(strlist *out, const lk_rebase *rb, const char *meta, const char *table,
                         int has_end, const char *own)
{
    long long f = (long long)rb->from_snapshot, t = (long long)rb->to_snapshot;
    tarn_buf b = {0};
    buf_printf(&b, "UPDATE %s.", meta);
    quote_ident(&b, table);
    if (has_end)
        buf_printf(&b,
                   " SET begin_snapshot = CASE WHEN begin_snapshot = %lld THEN %lld ELSE "
                   "begin_snapshot END, end_snapshot = CASE WHEN end_snapshot = %lld THEN %lld "
                   "ELSE end_snapshot END WHERE %s AND (begin_snapshot = %lld OR end_snapshot = "
                   "%lld)",
                   f, t, f, t, own, f, f);
    else
        buf_printf(&b, " SET begin_snapshot = %lld WHERE %s AND begin_snapshot = %lld", t, own, f);
    strlist_push_owned(out, buf_detach(&b));
}

/* Whether the commit batch may write catalog table `table` (a row group
 * of it, a statement naming it: a longer name holding it counts too). */
static int batch_writes(const lk_txn *txn, const char *table)
{
    for (size_t i = 0; i < txn->nstmts; i++) {
        const lk_txn_stmt *st = &txn->stmts[i];
        if ((st->table && strcmp(st->table, table) == 0) || (st->sql && strstr(st->sql, table)) ||
            (st->write && strcmp(st->write->table, table) == 0))
            return 1;
    }
    return 0;
}

void lk_rebase_sql(strlist *out, const lk_rebase *rb, const lk_txn *txn, const char *meta,
                   const char *own)
{
    if (!rb || !rb->active)
        return;
    for (size_t i = 0; i < sizeof(SNAP_TABLES) / sizeof(SNAP_TABLES[0]); i++)
        if (batch_writes(txn, SNAP_TABLES[i]))
            snapshot_sql(out, rb, meta, SNAP_TABLES[i], 1, own);
    if (batch_writes(txn, "ducklake_schema_versions"))
        snapshot_sql(out, rb, meta, "ducklake_schema_versions", 0, own);
    for (size_t i = 0; i < rb->inlined_tables.n; i++) {
        const char *name = rb->inlined_tables.items[i];
        snapshot_sql(out, rb, meta, name, strncmp(name, "ducklake_inlined_data_", 22) == 0, own);
    }
    if (rb->sv_shift)
        strlist_push_owned(out, xasprintf("UPDATE %s.ducklake_schema_versions SET schema_version "
                                          "= schema_version + %lld WHERE %s",
                                          meta, (long long)rb->sv_shift, own));
    if (rb->file_shift) {
        for (size_t i = 0; i < sizeof(FILE_REFS) / sizeof(FILE_REFS[0]); i++) {
            tarn_buf b = {0};
            const char *col = FILE_REFS[i][1];
            buf_printf(&b, "UPDATE %s.%s SET %s = ", meta, FILE_REFS[i][0], col);
            if (txn->file_renum.n)
                buf_puts(&b, "CASE");
            for (size_t k = 0; k < txn->file_renum.n; k++)
                buf_printf(&b, " WHEN %s = %lld THEN %lld", col, (long long)txn->file_renum.from[k],
                           (long long)(txn->file_renum.to[k] + rb->file_shift));
            buf_printf(&b, "%s%s + %lld%s WHERE %s AND %s >= %lld",
                       txn->file_renum.n ? " ELSE " : "", col, (long long)rb->file_shift,
                       txn->file_renum.n ? " END" : "", own, col, (long long)txn->base_file_id);
            strlist_push_owned(out, buf_detach(&b));
        }
    }
    for (size_t i = 0; i < rb->nrows; i++) {
        long long tid = (long long)rb->row_tables[i], sh = (long long)rb->row_shifts[i],
                  base = (long long)rb->row_bases[i];
        strlist_push_owned(out, xasprintf("UPDATE %s.ducklake_data_file SET row_id_start = "
                                          "row_id_start + %lld WHERE %s AND table_id = %lld AND "
                                          "row_id_start >= %lld",
                                          meta, sh, own, tid, base));
        for (size_t k = 0; k < rb->inlined_tables.n; k++) {
            const char *name = rb->inlined_tables.items[k];
            if (!inlined_of(name, rb->row_tables[i]) ||
                strncmp(name, "ducklake_inlined_data_", 22) != 0)
                continue;
            tarn_buf b = {0};
            buf_printf(&b, "UPDATE %s.", meta);
            quote_ident(&b, name);
            buf_printf(&b, " SET row_id = row_id + %lld WHERE %s AND row_id >= %lld", sh, own,
                       base);
            strlist_push_owned(out, buf_detach(&b));
        }
    }
    for (size_t i = 0; i < rb->dup_inlined.n; i++) {
        tarn_buf b = {0};
        buf_printf(&b,
                   "DELETE FROM %s.ducklake_inlined_data_tables WHERE %s AND table_name = ", meta,
                   own);
        quote_literal(&b, rb->dup_inlined.items[i]);
        strlist_push_owned(out, buf_detach(&b));
    }
}

int lk_rebase_check_files(const lk_rebase *rb, lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    const char *own = lk_catdb_own_rows(&lake->db);
    int needs = 0;
    for (size_t i = 0; i < txn->nchange_tokens && !needs; i++)
        needs = strncmp(txn->change_tokens[i], "deleted_from_table:", 19) == 0;
    if (!rb || !rb->active || !needs || !own)
        return 0;
    const char *meta = lk_catdb_name(&lake->db);
    long long base = (long long)txn->cat.snapshot_id;
    int64_t *sets[2] = {NULL, NULL};
    size_t ns[2] = {0, 0};
    int rc = 0;
    for (int side = 0; side < 2 && !rc; side++) {
        const char *who = side == 0 ? "" : "NOT ";
        duck_table t = {0};
        rc = lk_catdb_queryf(
            &t, &lake->db, con,
            "SELECT data_file_id FROM %s.ducklake_delete_file WHERE %s(%s) AND begin_snapshot > "
            "%lld UNION SELECT data_file_id FROM %s.ducklake_data_file WHERE %s(%s) AND "
            "end_snapshot > %lld ORDER BY 1",
            meta, who, own, base, meta, who, own, base);
        for (size_t r = 0; !rc && r < t.nrows; r++) {
            sets[side] = xrealloc(sets[side], (ns[side] + 1) * sizeof(int64_t));
            sets[side][ns[side]++] = duck_table_int64(&t, r, 0);
        }
        duck_table_free(&t);
    }
    if (!rc) {
        lk_conflict_info info = {.our_files = sets[0],
                                 .n_our_files = ns[0],
                                 .their_files = sets[1],
                                 .n_their_files = ns[1]};
        char *msg = NULL;
        if (lk_conflict_find(&msg, (const char *const *)txn->change_tokens, txn->nchange_tokens,
                             rb->theirs, &info))
            rc = conflict_error(msg);
    }
    free(sets[0]);
    free(sets[1]);
    return rc;
}

void lk_rebase_free(lk_rebase *rb)
{
    free(rb->row_tables);
    free(rb->row_shifts);
    free(rb->row_bases);
    free(rb->had_stats);
    free(rb->theirs);
    strlist_free(&rb->inlined_tables);
    strlist_free(&rb->dup_inlined);
    memset(rb, 0, sizeof(*rb));
}
