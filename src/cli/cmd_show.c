/*
 * cmd_show.c — `tarn show MODEL [--at N]`: the rows of a model's table,
 * now or at snapshot N (DuckLake time travel).
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/render.h"

#include "project/query.h"
#include "project/select.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_show_usage[] =
    "usage: tarn show MODEL|-s SELECTOR [--at SNAPSHOT] [--limit N] [--format table|csv|json] [-C "
    "DIR]\n"
    "\n"
    "Prints the rows of MODEL's table in the lake, now or as it was at\n"
    "snapshot SNAPSHOT (see `tarn history` for the snapshot of each build).\n"
    "\n"
    "  --at SNAPSHOT       read the table AT (VERSION => SNAPSHOT)\n"
    "  --limit N           at most N rows (default 50)\n"
    "  --format FORMAT     table (default), csv or json\n"
    "  -C, --project DIR   the project folder (default: the current one)\n";

/* Whether model m's table is in the lake now; -1 when that cannot be
 * read. */
static int table_built(cli_project *cp, const tarn_model *m)
{
    int yes = 0;
    if (tarn_session_table_exists(cp->s, cp->p->lake_alias, m->schema, m->table, &yes)) {
        tarn_error_clear();
        return -1;
    }
    return yes;
}

/* Runs the catalog probe in *q (freed): 0 with its rows in *r; -1 when
 * the read fails (the error cleared: the read of the rows will say what
 * is wrong). */
static int lake_probe(qrows *r, cli_project *cp, tarn_buf *q)
{
    int rc = query_rows(r, cp->s, buf_cstr(q));
    buf_free(q);
    if (rc)
        tarn_error_clear();
    return rc ? -1 : 0;
}

/* With --at: whether the lake has snapshot `at` (else the error names
 * its oldest and latest). */
static int snapshot_check(cli_project *cp, const tarn_model *m, long at)
{
    const char *alias = cp->p->lake_alias;
    tarn_buf q = {0};
    buf_printf(&q,
               "SELECT count(*) FILTER (WHERE snapshot_id = %ld), min(snapshot_id), "
               "max(snapshot_id) FROM ducklake_snapshots(",
               at);
    quote_literal(&q, alias);
    buf_puts(&q, ")");
    qrows r;
    if (lake_probe(&r, cp, &q) != 0)
        return CLI_OK;
    int found = strcmp(qrows_get(&r, 0, 0), "0") != 0;
    if (!found)
        cli_errorf(
            "lake \"%s\" has no snapshot %ld: its oldest is %s, its latest %s (`tarn history "
            "%s` lists the snapshots of its builds)",
            alias, at, qrows_get(&r, 0, 1), qrows_get(&r, 0, 2), m->name);
    qrows_free(&r);
    return found ? CLI_OK : CLI_FAILED;
}

/* With --at: the snapshot is one the lake has, and model m's table was
 * there then; else the error says which snapshots there are, or when the
 * table was first made (DuckLake's own message names neither). Read as
 * DuckLake offers it: the table AT the snapshot, ducklake_snapshots'
 * tables_created. */
static int at_check(cli_project *cp, const tarn_model *m, long at)
{
    const char *alias = cp->p->lake_alias;
    if (snapshot_check(cp, m, at) != CLI_OK)
        return CLI_FAILED;
    /* the table at that snapshot: a read of none of its rows */
    tarn_buf q = {0};
    buf_puts(&q, "SELECT * FROM ");
    quote_qualified(&q, alias, m->schema, m->table);
    buf_printf(&q, " AT (VERSION => %ld) LIMIT 0", at);
    int there = query_exec(cp->s, buf_cstr(&q), NULL) == 0;
    buf_clear(&q);
    tarn_error_clear();
    if (there) {
        buf_free(&q);
        return CLI_OK;
    }
    /* when it was made after: the snapshot whose changes created it */
    char *name = xasprintf("%s.%s", m->schema, m->table);
    buf_printf(&q, "SELECT min(snapshot_id) FROM ducklake_snapshots(");
    quote_literal(&q, alias);
    buf_printf(&q,
               ") WHERE snapshot_id > %ld AND list_contains(list_transform("
               "changes['tables_created'], x -> lower(x)), lower(",
               at);
    quote_literal(&q, name);
    buf_puts(&q, "))");
    free(name);
    qrows r;
    if (lake_probe(&r, cp, &q) != 0)
        return CLI_OK;
    const char *later = r.nrows ? qrows_get(&r, 0, 0) : NULL;
    if (later)
        cli_errorf("%s was not in lake \"%s\" at snapshot %ld: its table was made at snapshot %s "
                   "(`tarn history %s` lists its builds)",
                   m->name, alias, at, later, m->name);
    else
        cli_errorf("%s was not in lake \"%s\" at snapshot %ld, nor after it (`tarn history %s` "
                   "lists its builds)",
                   m->name, alias, at, m->name);
    qrows_free(&r);
    return CLI_FAILED;
}

/* The one model the selectors select; NULL (reported) when they select
 * none or several. */
static const tarn_model *show_model(cli_project *cp, const cli_common *c)
{
    unsigned char *sel = NULL;
    if (cli_common_select(&sel, c, cp->p) != 0) {
        cli_report(tarn_error_last());
        return NULL;
    }
    const tarn_model *m = NULL;
    tarn_buf names = {0};
    size_t count = 0;
    for (size_t i = 0; i < cp->p->nmodels; i++)
        if (sel[i]) {
            m = &cp->p->models[i];
            buf_printf(&names, "%s%s", count++ ? ", " : "", m->name);
        }
    free(sel);
    if (count > 1) {
        cli_errorf("show prints one model's rows; the selector selects %zu: %s", count,
                   buf_cstr(&names));
        m = NULL;
    }
    buf_free(&names);
    return m;
}

int cmd_show(int argc, char **argv)
{
    cli_common common = {0};
    long limit = 50, at = -1;
    render_format fmt = RENDER_TABLE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, cmd_show_usage)) {
            cli_common_free(&common);
            return CLI_OK;
        }
        if ((m = cli_opt_common(argc, argv, &i, &common, CLI_COMMON_POSITIONAL)) != 0) {
            if (m < 0)
                goto usage;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--limit", &val)) != 0) {
            if (m < 0 || cli_opt_int("--limit", val, &limit) < 0)
                goto usage;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--at", &val)) != 0) {
            if (m < 0)
                goto usage;
            if (strcmp(val, "0") == 0)
                at = 0;
            else if (cli_opt_int("--at", val, &at) < 0)
                goto usage;
        } else if ((m = cli_opt_format(argc, argv, &i, &fmt)) != 0) {
            if (m < 0)
                goto usage;
        } else {
            cli_errorf("unknown option '%s'", a);
            goto usage;
        }
    }
    if (!common.select.n) {
        cli_errorf("which model? tarn show MODEL");
        goto usage;
    }
    cli_project cp;
    int status = cli_project_open_or_free(&cp, &common);
    if (status != CLI_OK)
        return status;
    const tarn_model *m = show_model(&cp, &common);
    cli_common_free(&common);
    if (!m) {
        cli_project_close(&cp);
        return CLI_USAGE;
    }
    if (!cli_project_lake_exists(&cp)) {
        cli_errorf("%s has not been built: lake \"%s\" has no catalog yet (%s); build it with "
                   "`tarn run %s`",
                   m->name, cp.p->lake_alias, cp.p->lake_path, m->name);
        status = CLI_FAILED;
    } else {
        status = cli_project_attach(&cp);
    }
    if (status == CLI_OK && at >= 0)
        status = at_check(&cp, m, at);
    if (status == CLI_OK && at < 0 && table_built(&cp, m) == 0) {
        cli_errorf("%s has not been built: the lake has no table %s.%s yet (build it with "
                   "`tarn run %s`)",
                   m->name, m->schema, m->table, m->name);
        status = CLI_FAILED;
    } else if (status == CLI_OK) {
        tarn_buf sql = {0};
        buf_puts(&sql, "SELECT * FROM ");
        quote_qualified(&sql, cp.p->lake_alias, m->schema, m->table);
        if (at >= 0)
            buf_printf(&sql, " AT (VERSION => %ld)", at);
        buf_printf(&sql, " LIMIT %ld", limit);
        status = cli_project_print(&cp, buf_cstr(&sql), fmt);
        buf_free(&sql);
    }
    cli_project_close(&cp);
    return status;
usage:
    cli_common_free(&common);
    fputs("Try 'tarn show --help'.\n", stderr);
    return CLI_USAGE;
}
