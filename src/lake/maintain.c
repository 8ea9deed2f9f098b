/*
 * maintain.c — DuckLake's maintenance functions (see maintain.h): finding
 * the lake and the function, the helpers every function shares (named
 * arguments, catalog options, typed result rows, the transaction a
 * rewriting function commits, the tables it applies to). The functions
 * themselves live in maintain_flush.c, maintain_merge.c and
 * maintain_expire.c; the file writing they share in maintain_files.c.
 *
 * Catalog rows read: ducklake_metadata (the lake's options, by scope),
 * ducklake_snapshot; the rows each function changes are listed in its own
 * file.
 */
#include "lake/maintain.h"

#include "duck/duck.h"
#include "lake/catdb.h"
#include "lake/maintain_int.h"
#include "lake/statement.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef int (*mt_fn)(char **out, const mt_call *c);

static const struct {
    const char *name;
    mt_fn run;
} FUNCTIONS[] = {
    {"ducklake_flush_inlined_data", mt_flush_inlined},
    {"ducklake_merge_adjacent_files", mt_merge_adjacent},
    {"ducklake_rewrite_data_files", mt_rewrite_files},
    {"ducklake_expire_snapshots", mt_expire_snapshots},
    {"ducklake_cleanup_old_files", mt_cleanup_old_files},
    {"ducklake_delete_orphaned_files", mt_delete_orphans},
};

int lk_maintain_is_function(const char *fn)
{
    for (size_t k = 0; k < sizeof(FUNCTIONS) / sizeof(FUNCTIONS[0]); k++)
        if (strcasecmp(FUNCTIONS[k].name, fn) == 0)
            return 1;
    return 0;
}

int lk_maintain_run(char **out, lk_lake *l, duckdb_connection con, int explicit_txn, const char *fn,
                    const lk_args *a)
{
    *out = NULL;
    size_t k = 0, n = sizeof(FUNCTIONS) / sizeof(FUNCTIONS[0]);
    while (k < n && strcasecmp(FUNCTIONS[k].name, fn) != 0)
        k++;
    if (k == n) {
        tarn_error_clear();
        return TARN_ENOTFOUND;
    }
    mt_call c = {con, explicit_txn, l, a, FUNCTIONS[k].name, 0};
    int rc = FUNCTIONS[k].run(out, &c);
    /* maintenance creates and drops catalog tables, and expires or
     * rewrites snapshots */
    lk_lake_caches_forget(l);
    if (rc) {
        free(*out);
        *out = NULL;
        if (!strstr(tarn_error_last(), fn))
            tarn_error_prefix(rc, "%s", fn);
    }
    return rc;
}

/* CHECKPOINT: DuckLake's maintenance functions in DuckLake's order (flush
 * first, since it makes files to compact; expiry before compaction, which
 * it gives more to do; the deleting functions last), each committing on
 * its own. Inside BEGIN … COMMIT DuckLake runs them on a connection of its
 * own, beside the transaction; tarn's lake has one transaction, so the
 * rewriting steps (flush, merge, rewrite) become part of it, over the
 * committed rows only (the transaction's own rows stay as they are, as in
 * DuckLake), and the steps that cannot be rolled back (expiry, cleanup,
 * orphans) wait for a CHECKPOINT outside one. */
int lk_maintain_checkpoint(lk_lake *l, duckdb_connection con, int explicit_txn)
{
    static const char *const STEPS[] = {
        "ducklake_flush_inlined_data",   "ducklake_expire_snapshots",
        "ducklake_merge_adjacent_files", "ducklake_rewrite_data_files",
        "ducklake_cleanup_old_files",    "ducklake_delete_orphaned_files",
    };
    char *pos[1] = {l->alias};
    lk_args a = {.pos = pos, .npos = 1};
    int rc = 0;
    for (size_t s = 0; !rc && s < sizeof(STEPS) / sizeof(STEPS[0]); s++) {
        size_t k = 0;
        while (strcmp(FUNCTIONS[k].name, STEPS[s]) != 0)
            k++;
        if (explicit_txn && s != 0 && s != 2 && s != 3)
            continue;
        mt_call c = {con, explicit_txn, l, &a, FUNCTIONS[k].name, 1};
        char *out = NULL;
        rc = FUNCTIONS[k].run(&out, &c);
        free(out);
        lk_lake_caches_forget(l);
        if (rc && !strstr(tarn_error_last(), STEPS[s]))
            tarn_error_prefix(rc, "%s", STEPS[s]);
    }
    return rc;
}

/* DuckLake's CHECKPOINT beside a transaction rewrites even a table the
 * transaction deleted from, and the transaction's COMMIT then fails on the
 * conflict. tarn leaves such a table alone (a rewrite inside the
 * transaction would lose its pending deletions), and where DuckLake's
 * flush would have moved inlined rows the transaction deleted (DuckLake:
 * "attempting to delete from table … but another transaction has flushed
 * the inlined data"), the COMMIT fails the same way. Where DuckLake's
 * merge or rewrite would conflict, tarn leaves the table uncompacted and
 * the transaction commits. */
int mt_checkpoint_skips(const mt_call *c, const lk_table *t, int flushes)
{
    lk_lake *l = c->lake;
    if (!c->checkpoint || !c->explicit_txn || lk_txn_created_table(l, l->txn, t) ||
        !lk_txn_table_deleted(l, c->con, t->id))
        return 0;
    if (flushes && !l->txn->conflict && lk_txn_table_inline_deleted(l, c->con, t->id))
        l->txn->conflict =
            xasprintf("Transaction conflict - attempting to delete from table \"%s\" - but "
                      "CHECKPOINT flushed its inlined data in this transaction",
                      t->name);
    return 1;
}

/* The first snapshot still in the lake at or after `snap` (expiring
 * snapshots leaves files and inlined rows that began in one of them);
 * `snap` when there is none. */
static int64_t remaining_snapshot(const mt_call *c, int64_t snap)
{
    duck_table r;
    int rc =
        lk_catdb_queryf(&r, &c->lake->db, c->con,
                        "SELECT min(snapshot_id) FROM %s.ducklake_snapshot WHERE snapshot_id >= "
                        "%lld",
                        c->lake->meta, (long long)snap);
    if (rc) {
        tarn_error_clear();
        return snap;
    }
    if (r.nrows && duck_table_get(&r, 0, 0))
        snap = duck_table_int64(&r, 0, 0);
    duck_table_free(&r);
    return snap;
}

int mt_catalog_load(lk_catalog *out, const mt_call *c, int64_t snap)
{
    return lk_catalog_load(out, &c->lake->db, c->con, remaining_snapshot(c, snap));
}

/* ---- arguments and options ---- */

int mt_check_named(const mt_call *c, const char *const *names)
{
    for (size_t i = 0; i < c->a->nnamed; i++) {
        size_t k = 0;
        while (names[k] && strcasecmp(names[k], c->a->names[i]) != 0)
            k++;
        if (!names[k])
            return tarn_error_set(TARN_EINVALID, "unsupported named parameter \"%s\"",
                                  c->a->names[i]);
    }
    return 0;
}

int mt_non_null(const mt_call *c, const char *name)
{
    for (size_t i = 0; i < c->a->nnamed; i++)
        if (strcasecmp(c->a->names[i], name) == 0 && !c->a->values[i])
            return tarn_error_set(TARN_EINVALID, "The %s option must not be NULL", name);
    return 0;
}

int mt_bool(const mt_call *c, const char *name, int dflt)
{
    const char *v = lk_args_named(c->a, name);
    if (!v)
        return dflt;
    return strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0;
}

char *mt_option(const mt_call *c, const char *key, int64_t schema_id, int64_t table_id)
{
    tarn_buf b = {0};
    buf_printf(&b, "SELECT \"value\" FROM %s.ducklake_metadata WHERE \"key\" = ", c->lake->meta);
    quote_literal(&b, key);
    buf_printf(&b,
               " AND ((\"scope\" = 'table' AND scope_id = %lld) OR (\"scope\" = 'schema' AND "
               "scope_id = %lld) OR \"scope\" IS NULL) ORDER BY CASE \"scope\" WHEN 'table' THEN "
               "0 WHEN 'schema' THEN 1 ELSE 2 END LIMIT 1",
               (long long)table_id, (long long)schema_id);
    char *v = NULL;
    if (lk_catdb_query_string(&v, &c->lake->db, c->con, buf_cstr(&b)) != 0) {
        tarn_error_clear();
        v = NULL;
    }
    buf_free(&b);
    return v;
}

int mt_auto_compact(const mt_call *c, const lk_table *t)
{
    char *v = mt_option(c, "auto_compact", t->schema_id, t->id);
    int yes = !v || strcmp(v, "true") == 0;
    free(v);
    return yes;
}

/* ---- results ---- */

void mt_result_row(mt_result *r, const char *const *literals)
{
    buf_puts(&r->values, r->nrows++ ? ", (" : "(");
    for (size_t i = 0; i < r->ncols; i++) {
        if (i)
            buf_puts(&r->values, ", ");
        buf_puts(&r->values, literals[i]);
    }
    buf_putc(&r->values, ')');
}

char *mt_result_sql(mt_result *r)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT ");
    for (size_t i = 0; i < r->ncols; i++) {
        if (i)
            buf_puts(&b, ", ");
        if (r->nrows)
            buf_printf(&b, "CAST(c%zu AS %s) AS ", i, r->types[i]);
        else
            buf_printf(&b, "NULL::%s AS ", r->types[i]);
        quote_ident(&b, r->names[i]);
    }
    if (r->nrows) {
        buf_printf(&b, " FROM (VALUES %s) v(", buf_cstr(&r->values));
        for (size_t i = 0; i < r->ncols; i++)
            buf_printf(&b, "%sc%zu", i ? ", " : "", i);
        buf_putc(&b, ')');
    } else {
        buf_puts(&b, " LIMIT 0");
    }
    buf_free(&r->values);
    return buf_detach(&b);
}

char *mt_lit(const char *s)
{
    tarn_buf b = {0};
    quote_literal(&b, s);
    return buf_detach(&b);
}

char *mt_int(int64_t v)
{
    return xasprintf("%lld", (long long)v);
}

/* ---- the transaction of a rewriting function ---- */

int mt_write_begin(const mt_call *c)
{
    /* dry_run rolls its transaction back: inside BEGIN … COMMIT that would
     * be the user's */
    if (c->explicit_txn && mt_bool(c, "dry_run", 0))
        return tarn_error_set(TARN_EUNSUPPORTED,
                              "dry_run => true cannot be used inside BEGIN … COMMIT");
    return lk_statement_begin(c->lake, c->con, c->explicit_txn);
}

int mt_table_begin(const mt_call *c, const lk_table *t, size_t *mark)
{
    lk_txn *txn = c->lake->txn;
    *mark = txn->nstmts;
    if (!c->explicit_txn)
        return 0;
    /* the function replaces the committed files and inlined rows; the
     * transaction's pending deletions of them would be lost (its new rows
     * stay its own, as in DuckLake); a table the transaction created has
     * no committed rows, so nothing to replace */
    if (!lk_txn_created_table(c->lake, txn, t) && lk_txn_table_deleted(c->lake, c->con, t->id))
        return tarn_error_set(TARN_EUNSUPPORTED,
                              "cannot run on table %s inside a transaction that already deleted "
                              "or updated its rows: run it before them or after COMMIT",
                              t->name);
    return 0;
}

void mt_table_end(const mt_call *c, const lk_table *t, size_t mark)
{
    lk_txn *txn = c->lake->txn;
    if (c->explicit_txn && txn->nstmts > mark)
        lk_ids_add(&txn->maintained, &txn->nmaintained, t->id);
}

int mt_write_end(const mt_call *c, int rc)
{
    /* dry_run (a tarn extension for these functions): do all the work,
     * report it, then roll back, which also deletes the files written */
    if (!rc && mt_bool(c, "dry_run", 0) && c->lake->txn) {
        lk_write_cleanup(c->lake, c->con);
        lk_lake_rollback(c->lake, c->con);
        return 0;
    }
    return lk_statement_end(c->lake, c->con, c->explicit_txn, rc);
}

int mt_no_open_txn(const mt_call *c)
{
    /* these write the catalog (or delete files) outside any snapshot, so
     * they cannot be part of a transaction tarn may still roll back */
    if (c->lake->txn || c->explicit_txn)
        return tarn_error_set(TARN_EUNSUPPORTED,
                              "cannot run inside BEGIN … COMMIT in tarn: run it on its own");
    if (c->lake->read_only)
        return tarn_error_set(TARN_EINVALID, "lake \"%s\" is attached read-only", c->lake->alias);
    return 0;
}

/* ---- the tables a function applies to ---- */

int mt_tables(const mt_call *c, const char *schema, const char *table, const lk_table ***out,
              size_t *n)
{
    lk_catalog *cat = (lk_catalog *)lk_txn_catalog(c->lake);
    *out = NULL;
    *n = 0;
    lk_schema *sc = NULL;
    if (schema || table) {
        sc = lk_catalog_schema(cat, schema ? schema : "main");
        if (!sc)
            return tarn_error_set(TARN_ENOTFOUND, "Schema with name %s does not exist",
                                  schema ? schema : "main");
    }
    if (table) {
        const lk_table *t = lk_catalog_table(cat, sc->id, table);
        if (!t)
            return tarn_error_set(TARN_ENOTFOUND, "Table with name %s does not exist", table);
        *out = xmalloc(sizeof(lk_table *));
        (*out)[(*n)++] = t;
        return 0;
    }
    *out = xcalloc(cat->ntables ? cat->ntables : 1, sizeof(lk_table *));
    for (size_t i = 0; i < cat->ntables; i++)
        if (!sc || cat->tables[i].schema_id == sc->id)
            (*out)[(*n)++] = &cat->tables[i];
    return 0;
}
