/*
 * cmd_compile.c — `tarn compile MODEL|SELECTOR…`: prints the SQL tarn
 * would run to build each selected model now (materialize/build.h,
 * build_compile), as dbt compile and SQLMesh render do: the query with its
 * lake reads pinned to snapshots and the strategy's statements. Nothing is
 * written: the lake is attached read-only, or, before the first build
 * (no catalog yet), an empty lake in a temporary folder stands in for it
 * so that the output is what a first build runs.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"

#include "materialize/build.h"
#include "project/attach.h"
#include "project/query.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_compile_usage[] =
    "usage: tarn compile MODEL|SELECTOR… [--exclude SEL…] [--partition P | --from A --to B]\n"
    "                    [--full-refresh] [-t TARGET] [-C DIR]\n"
    "\n"
    "Prints the SQL tarn would run to build each selected model now, in build order (as\n"
    "dbt compile / SQLMesh render): BEGIN, the model's setup statements and its query with\n"
    "every lake read pinned AT (VERSION => n), the strategy's statements (the stage, the\n"
    "merge's changed keys, the history's closed and opened versions, each slice of a\n"
    "partitioned model, …), COMMIT. Nothing is built or written.\n"
    "\n"
    "  -s, --select SEL…   dbt's selectors (see `tarn help run`); a bare MODEL is one too\n"
    "  --exclude SEL…      removed from the selection\n"
    "  --partition P       a partitioned model's slice P (default: the current one)\n"
    "  --from A --to B     its slices from A to B\n"
    "  --full-refresh      as `tarn run --full-refresh` would build\n"
    "  -t, --target NAME   config/targets/NAME.sql in place of config/catalog.sql\n"
    "  -C, --project DIR   the project folder (default: the one holding models/, upwards)\n";

/* Runs config/ but its ATTACH statements (run already). */
static int run_config_rest(tarn_project *p, tarn_session *s)
{
    for (size_t i = 0; i < p->nconfig; i++) {
        const config_file *cf = &p->config[i];
        for (size_t j = 0; j < cf->nstmts; j++) {
            char kw[16];
            sql_first_keyword(cf->stmts[j].text, kw, sizeof(kw));
            if (strcmp(kw, "ATTACH") == 0)
                continue;
            int rc = query_exec(s, cf->stmts[j].text, NULL);
            if (rc)
                return tarn_error_prefix(rc, "%s:%d", cf->path, cf->stmts[j].line);
        }
    }
    return 0;
}

/* Before the first build: an empty lake of the project's alias in a
 * temporary folder (*tmp, removed by the caller). */
static int attach_empty_lake(cli_project *cp, char **tmp)
{
    char dir[] = "/tmp/tarn-compile-XXXXXX";
    if (!mkdtemp(dir))
        return tarn_error_set(TARN_ERROR, "cannot make a temporary folder for tarn compile");
    *tmp = xstrdup(dir);
    tarn_buf sql = {0};
    char *uri = xasprintf("ducklake:%s/catalog.ducklake", dir);
    char *data = xasprintf("%s/data/", dir);
    buf_puts(&sql, "ATTACH ");
    quote_literal(&sql, uri);
    buf_puts(&sql, " AS ");
    quote_ident(&sql, cp->p->lake_alias);
    buf_puts(&sql, " (DATA_PATH ");
    quote_literal(&sql, data);
    buf_puts(&sql, ")");
    int rc = query_exec(cp->s, buf_cstr(&sql), NULL);
    buf_free(&sql);
    free(uri);
    free(data);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(path);
}

static int parse(int argc, char **argv, cli_common *common, build_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, cmd_compile_usage))
            return 1;
        if ((m = cli_opt_common(argc, argv, &i, common, CLI_COMMON_POSITIONAL)) != 0) {
            if (m < 0)
                return -1;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--partition", &val)) != 0) {
            if (m < 0)
                return -1;
            o->partition = val;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--from", &val)) != 0) {
            if (m < 0)
                return -1;
            o->from = val;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--to", &val)) != 0) {
            if (m < 0)
                return -1;
            o->to = val;
        } else if (strcmp(a, "--full-refresh") == 0) {
            o->full_refresh = 1;
        } else {
            cli_errorf("unknown option '%s'", a);
            return -1;
        }
    }
    if (!common->select.n) {
        cli_errorf("which model? tarn compile MODEL (or -s SELECTOR)");
        return -1;
    }
    return 0;
}

static int compile_all(cli_project *cp, build_opts *o)
{
    const unsigned char *sel = o->selected;
    int status = CLI_OK;
    size_t n = 0;
    /* Every model counts as selected for the build's checks: a model whose
     * upstream is not built yet compiles as it would build in a run that
     * builds that upstream first (its read then left unpinned). */
    unsigned char *all = xmalloc(cp->p->nmodels ? cp->p->nmodels : 1);
    memset(all, 1, cp->p->nmodels);
    o->selected = all;
    for (size_t k = 0; k < cp->p->nmodels && status == CLI_OK; k++) {
        size_t mi = cp->p->order[k];
        if (!sel[mi])
            continue;
        tarn_buf out = {0};
        if (build_compile(&out, cp->p, cp->s, o, mi) != 0) {
            cli_report(tarn_error_last());
            status = CLI_USAGE;
        } else {
            printf("%s%s", n++ ? "\n" : "", buf_cstr(&out));
        }
        buf_free(&out);
    }
    free(all);
    o->selected = sel;
    return status;
}

int cmd_compile(int argc, char **argv)
{
    cli_common common = {0};
    build_opts o = {.jobs = 1, .config_ran = 1};
    int p = parse(argc, argv, &common, &o);
    if (p != 0) {
        cli_common_free(&common);
        return cli_parse_result(p, "compile");
    }
    cli_project cp;
    int status = cli_project_open_or_free(&cp, &common);
    if (status != CLI_OK)
        return status;
    unsigned char *sel = NULL;
    char *tmp = NULL;
    int rc = cli_common_select(&sel, &common, cp.p);
    cli_common_free(&common);
    if (!rc)
        rc = cli_project_lake_exists(&cp) ? project_attach_read_only(cp.p, cp.s)
                                          : attach_empty_lake(&cp, &tmp);
    if (!rc)
        rc = run_config_rest(cp.p, cp.s);
    if (rc) {
        cli_report(tarn_error_last());
        status = CLI_USAGE;
    } else {
        o.selected = sel;
        status = compile_all(&cp, &o);
    }
    free(sel);
    cli_project_close(&cp);
    if (tmp)
        nftw(tmp, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(tmp);
    return status;
}
