/*
 * upgrade.c — tarn/upgrade.h: the format version of a catalog file, and its
 * migration to DuckLake 1.0.
 *
 * The catalog is attached in a private DuckDB under an internal name, not
 * opened as a lake: the lake layer refuses every version but 1.0, which is
 * the point here. It reads ducklake_metadata's `version` row, and runs
 * lk_migrate() over the attached file (a dry run needs a read-write
 * attach too: its transaction is rolled back).
 */
#include "tarn/upgrade.h"

#include "duck/duck.h"
#include "lake/migrate.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>

/* The alias the catalog is attached under in the private database. */
#define META_NAME "__tarn_upgrade_meta"

typedef struct {
    duckdb_database db;
    duckdb_connection con;
} private_db;

static int private_open(private_db *p, const char *path)
{
    int rc = duck_open(&p->db);
    if (rc)
        return rc;
    if (duckdb_connect(p->db, &p->con) != DuckDBSuccess) {
        duckdb_close(&p->db);
        return tarn_error_set(TARN_ERROR, "cannot connect to DuckDB");
    }
    tarn_buf b = {0};
    buf_puts(&b, "ATTACH ");
    quote_literal(&b, path);
    buf_puts(&b, " AS " META_NAME);
    rc = duck_exec(p->con, buf_cstr(&b));
    buf_free(&b);
    if (rc) {
        duckdb_disconnect(&p->con);
        duckdb_close(&p->db);
        return tarn_error_prefix(rc, "attaching \"%s\"", path);
    }
    return 0;
}

static void private_close(private_db *p)
{
    duck_exec(p->con, "DETACH " META_NAME);
    duckdb_disconnect(&p->con);
    duckdb_close(&p->db);
}

static int read_version(private_db *p, const char *path, char **out)
{
    int64_t n = 0;
    int rc =
        duck_query_int64(&n, NULL, p->con,
                         "SELECT count(*) FROM duckdb_tables() WHERE database_name = '" META_NAME
                         "' AND table_name = 'ducklake_metadata'");
    if (!rc && n == 0)
        return tarn_error_set(TARN_EINVALID, "\"%s\" is not a DuckLake catalog", path);
    if (!rc)
        rc =
            duck_query_string(out, p->con,
                              "SELECT \"value\" FROM " META_NAME ".ducklake_metadata WHERE \"key\" "
                              "= 'version' LIMIT 1");
    if (!rc && !*out)
        rc = tarn_error_set(TARN_EINVALID, "\"%s\" has no DuckLake version", path);
    return rc ? tarn_error_prefix(rc, "reading the DuckLake version of \"%s\"", path) : 0;
}

int tarn_upgrade_version(char **out, const char *path)
{
    *out = NULL;
    private_db p;
    int rc = private_open(&p, path);
    if (rc)
        return rc;
    rc = read_version(&p, path, out);
    private_close(&p);
    return rc;
}

int tarn_upgrade_run(char **steps, const char *path, const char *from, int apply)
{
    *steps = NULL;
    private_db p;
    int rc = private_open(&p, path);
    if (rc)
        return rc;
    tarn_buf report = {0};
    lk_catdb db;
    lk_catdb_duckdb(&db, META_NAME, NULL);
    rc = lk_migrate(&db, p.con, from, !apply, &report);
    lk_catdb_release(&db);
    private_close(&p);
    if (rc) {
        buf_free(&report);
        return rc;
    }
    *steps = buf_detach(&report);
    return 0;
}
