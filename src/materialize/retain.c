/*
 * retain.c — the expiry plan and pins (see retain.h). Reads the lake's
 * snapshot list (ducklake_snapshots), tarn_model_run, tarn_partition and
 * tarn_pin; writes tarn_pin.
 */
#include "materialize/retain.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

void retain_plan_free(retain_plan *p)
{
    free(p->expire);
    free(p->kept);
    strlist_free(&p->why);
    memset(p, 0, sizeof(*p));
}

int retain_pins_ensure(tarn_session *s, const char *cat)
{
    tarn_buf b = {0};
    buf_puts(&b, "CREATE TABLE IF NOT EXISTS ");
    quote_prefixed(&b, cat, "tarn_pin");
    buf_puts(&b, " (snapshot_id BIGINT NOT NULL, model VARCHAR, note VARCHAR, pinned_at "
                 "TIMESTAMPTZ)");
    int rc = query_exec(s, buf_cstr(&b), NULL);
    buf_free(&b);
    return rc ? tarn_error_prefix(rc, "creating tarn_pin") : 0;
}

/* Whether catalog table `table` exists. */
static int table_exists(tarn_session *s, const char *cat, const char *table)
{
    return query_catalog_columns(s, cat, table, NULL) > 0;
}

/* One CTE's body: head, the table cat.table, tail; when the table does
 * not exist (no build recorded one yet), no rows of the same columns:
 * snapshot_id and the VARCHAR column `col`. */
static void cte_of_table(tarn_buf *b, int exists, const char *head, const char *cat,
                         const char *table, const char *tail, const char *col)
{
    if (exists) {
        buf_puts(b, head);
        quote_prefixed(b, cat, table);
        buf_puts(b, tail);
    } else {
        buf_printf(b, "SELECT NULL::BIGINT AS snapshot_id, NULL::VARCHAR AS %s WHERE false", col);
    }
}

/* The snapshots the rule picks, with why each protected one is kept (NULL:
 * expire it): one query over the snapshot list and the records. */
static void plan_sql(tarn_buf *b, const char *lake, const char *cat, const char *older_than,
                     long keep_last, int has_runs, int has_pins, int has_parts)
{
    buf_puts(b, "WITH snaps AS (SELECT snapshot_id, snapshot_time, row_number() OVER (ORDER BY "
                "snapshot_id DESC) AS from_newest FROM ducklake_snapshots(");
    quote_literal(b, lake);
    buf_puts(b, ")), good AS (");
    cte_of_table(b, has_runs,
                 "SELECT snapshot_id, string_agg(model, ', ' ORDER BY model) AS models FROM "
                 "(SELECT model, snapshot_id, row_number() OVER (PARTITION BY model ORDER BY "
                 "run_id DESC, finished_at DESC) AS rn FROM ",
                 cat, "tarn_model_run",
                 " WHERE status = 'success' AND snapshot_id IS NOT NULL) WHERE rn = 1 GROUP "
                 "BY snapshot_id",
                 "models");
    /* each slice's last good build (tarn_partition keeps it when a later
     * build of the slice failed): `tarn partitions` names it, and it is
     * the only snapshot holding that slice as built then */
    buf_puts(b, "), slices AS (");
    cte_of_table(b, has_parts,
                 "SELECT snapshot_id, model || ' (' || CASE WHEN count(*) > 3 THEN count(*) || "
                 "' slices, ' || min(\"partition\") || ' … ' || max(\"partition\") ELSE "
                 "string_agg(\"partition\", ', ' ORDER BY \"partition\") END || ')' AS what "
                 "FROM ",
                 cat, "tarn_partition",
                 " WHERE snapshot_id IS NOT NULL GROUP BY snapshot_id, model", "what");
    buf_puts(b, "), slice_good AS (SELECT snapshot_id, string_agg(what, ', ' ORDER BY what) AS "
                "slices FROM slices GROUP BY snapshot_id), pins AS (");
    cte_of_table(b, has_pins,
                 "SELECT snapshot_id, string_agg(coalesce(note, model, 'pinned'), '; ') AS "
                 "notes FROM ",
                 cat, "tarn_pin", " GROUP BY snapshot_id", "notes");
    buf_puts(b, ") SELECT s.snapshot_id, CASE WHEN s.from_newest = 1 THEN 'the newest snapshot' "
                "WHEN p.snapshot_id IS NOT NULL THEN 'pinned (' || p.notes || ')' WHEN "
                "g.snapshot_id IS NOT NULL THEN 'last good build of ' || g.models WHEN "
                "sg.snapshot_id IS NOT NULL THEN 'last good build of the slices of ' || sg.slices "
                "END FROM snaps s LEFT JOIN good g USING (snapshot_id) LEFT JOIN slice_good sg "
                "USING (snapshot_id) LEFT JOIN pins p USING (snapshot_id) WHERE true");
    if (older_than) {
        buf_puts(b, " AND s.snapshot_time < COALESCE(TRY_CAST(");
        quote_literal(b, older_than);
        buf_puts(b, " AS TIMESTAMPTZ), now() - TRY_CAST(");
        quote_literal(b, older_than);
        buf_puts(b, " AS INTERVAL))");
    }
    if (keep_last > 0)
        buf_printf(b, " AND s.from_newest > %ld", keep_last);
    buf_puts(b, " ORDER BY s.snapshot_id");
}

int retain_plan_make(retain_plan *out, tarn_session *s, const char *lake, const char *cat,
                     const char *older_than, long keep_last)
{
    memset(out, 0, sizeof(*out));
    if (!older_than && keep_last <= 0)
        return tarn_error_set(TARN_EINVALID, "give --older-than AGE, --keep-last N, or both");
    if (older_than) {
        tarn_buf q = {0};
        buf_puts(&q, "SELECT TRY_CAST(");
        quote_literal(&q, older_than);
        buf_puts(&q, " AS TIMESTAMPTZ) IS NOT NULL OR TRY_CAST(");
        quote_literal(&q, older_than);
        buf_puts(&q, " AS INTERVAL) IS NOT NULL");
        char *ok = NULL;
        int rc = query_string(&ok, s, buf_cstr(&q));
        buf_free(&q);
        int valid = !rc && ok && strcmp(ok, "true") == 0;
        free(ok);
        if (rc)
            return rc;
        if (!valid)
            return tarn_error_set(TARN_EINVALID,
                                  "--older-than '%s' is neither a timestamp ('2026-01-01 "
                                  "00:00:00+00') nor an age ('7 days')",
                                  older_than);
    }
    tarn_buf q = {0};
    plan_sql(&q, lake, cat, older_than, keep_last, table_exists(s, cat, "tarn_model_run"),
             table_exists(s, cat, "tarn_pin"), table_exists(s, cat, "tarn_partition"));
    qrows r;
    int rc = query_rows(&r, s, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    out->expire = xcalloc(r.nrows + 1, sizeof(int64_t));
    out->kept = xcalloc(r.nrows + 1, sizeof(int64_t));
    for (size_t i = 0; i < r.nrows; i++) {
        int64_t id = strtoll(qrows_get(&r, i, 0), NULL, 10);
        const char *why = qrows_get(&r, i, 1);
        if (why) {
            out->kept[out->nkept++] = id;
            strlist_push(&out->why, why);
        } else {
            out->expire[out->nexpire++] = id;
        }
    }
    qrows_free(&r);
    return 0;
}

int retain_pin(tarn_session *s, const char *lake, const char *cat, int64_t snap, const char *model,
               const char *note)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT count(*) FROM ducklake_snapshots(");
    quote_literal(&q, lake);
    buf_printf(&q, ") WHERE snapshot_id = %lld", (long long)snap);
    int64_t n = 0;
    int rc = query_int64(&n, s, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    if (n == 0)
        return tarn_error_set(TARN_EINVALID,
                              "lake \"%s\" has no snapshot %lld (expired, or never made: tarn "
                              "history lists the builds' snapshots)",
                              lake, (long long)snap);
    rc = retain_pins_ensure(s, cat);
    if (rc)
        return rc;
    buf_puts(&q, "INSERT INTO ");
    quote_prefixed(&q, cat, "tarn_pin");
    buf_printf(&q, " (snapshot_id, model, note, pinned_at) VALUES (%lld, ", (long long)snap);
    quote_literal(&q, model);
    buf_puts(&q, ", ");
    quote_literal(&q, note);
    buf_puts(&q, ", now())");
    rc = query_exec(s, buf_cstr(&q), NULL);
    buf_free(&q);
    return rc;
}

int retain_unpin(tarn_session *s, const char *cat, int64_t snap, int *removed)
{
    *removed = 0;
    if (!table_exists(s, cat, "tarn_pin"))
        return 0;
    tarn_buf q = {0};
    buf_puts(&q, "DELETE FROM ");
    quote_prefixed(&q, cat, "tarn_pin");
    buf_printf(&q, " WHERE snapshot_id = %lld", (long long)snap);
    int64_t n = 0;
    int rc = query_exec(s, buf_cstr(&q), &n);
    buf_free(&q);
    *removed = n > 0;
    return rc;
}

int retain_last_good(int64_t *snap, tarn_session *s, const char *cat, const char *model)
{
    *snap = -1;
    if (!table_exists(s, cat, "tarn_model_run"))
        return tarn_error_set(TARN_EINVALID, "%s has no build recorded yet", model);
    tarn_buf q = {0};
    buf_puts(&q, "SELECT snapshot_id FROM ");
    quote_prefixed(&q, cat, "tarn_model_run");
    buf_puts(&q, " WHERE status = 'success' AND snapshot_id IS NOT NULL AND model = ");
    quote_literal(&q, model);
    buf_puts(&q, " ORDER BY run_id DESC, finished_at DESC LIMIT 1");
    qrows r;
    int rc = query_rows(&r, s, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    if (r.nrows && qrows_get(&r, 0, 0))
        *snap = strtoll(qrows_get(&r, 0, 0), NULL, 10);
    qrows_free(&r);
    return *snap < 0 ? tarn_error_set(TARN_EINVALID, "%s has no good build recorded yet", model)
                     : 0;
}
