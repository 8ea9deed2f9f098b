/*
 * project_cli.c — shared plumbing of the project commands (see
 * project_cli.h).
 */
#include "cli/project_cli.h"

#include "cli/cli.h"
#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_opt_value(int argc, char **argv, int *i, const char *shrt, const char *lng,
                  const char **val)
{
    const char *a = argv[*i];
    size_t ln = strlen(lng);
    const char *inline_val = NULL;
    if (shrt && strncmp(a, shrt, 2) == 0 && strlen(shrt) == 2)
        inline_val = a[2] ? a + 2 : NULL;
    else if (strncmp(a, lng, ln) == 0 && (a[ln] == '=' || a[ln] == '\0'))
        inline_val = a[ln] == '=' ? a + ln + 1 : NULL;
    else
        return 0;
    if (inline_val) {
        *val = inline_val;
        return 1;
    }
    if (*i + 1 >= argc) {
        cli_errorf("option %s needs a value", a);
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

int cli_opt_int(const char *opt, const char *val, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (errno || !end || *end || v < 1) {
        cli_errorf("%s takes a positive integer, not '%s'", opt, val);
        return -1;
    }
    *out = v;
    return 0;
}

void cli_report(const char *msg)
{
    fflush(stdout);
    const char *s = msg;
    int first = 1;
    while (*s) {
        const char *eol = strchr(s, '\n');
        size_t n = eol ? (size_t)(eol - s) : strlen(s);
        fprintf(stderr, "%s%.*s\n", first ? "tarn: " : "      ", (int)n, s);
        first = 0;
        s = eol ? eol + 1 : s + n;
    }
}

int cli_project_open(cli_project *cp, const char *dir)
{
    memset(cp, 0, sizeof(*cp));
    if (dir && chdir(dir) != 0) {
        cli_errorf("cannot use project folder %s: %s", dir, strerror(errno));
        return CLI_USAGE;
    }
    if (tarn_session_open(&cp->s) != 0) {
        cli_report(tarn_error_last());
        return CLI_USAGE;
    }
    if (project_load(&cp->p, ".", cp->s) != 0) {
        /* Reported, and left in tarn_error_last() for callers that also
         * print it elsewhere (tarn run --json). */
        cli_report(tarn_error_last());
        tarn_session_close(cp->s);
        cp->s = NULL;
        return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_project_attach(cli_project *cp)
{
    for (size_t i = 0; i < cp->p->nconfig; i++) {
        const config_file *cf = &cp->p->config[i];
        for (size_t j = 0; j < cf->nstmts; j++) {
            char kw[16];
            sql_first_keyword(cf->stmts[j].text, kw, sizeof(kw));
            if (strcmp(kw, "ATTACH") != 0)
                continue;
            if (query_exec(cp->s, cf->stmts[j].text, NULL) != 0) {
                char *msg = xasprintf("%s:%d: %s", cf->path, cf->stmts[j].line, tarn_error_last());
                cli_report(msg);
                free(msg);
                tarn_error_clear();
                return CLI_USAGE;
            }
        }
    }
    if (!tarn_session_catalog_name(cp->s, cp->p->lake_alias)) {
        cli_errorf("config/ did not attach lake \"%s\"", cp->p->lake_alias);
        return CLI_USAGE;
    }
    return CLI_OK;
}

void cli_project_close(cli_project *cp)
{
    project_free(cp->p);
    tarn_session_close(cp->s);
    memset(cp, 0, sizeof(*cp));
}
