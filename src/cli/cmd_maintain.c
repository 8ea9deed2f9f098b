/*
 * cmd_maintain.c — `tarn maintain`: DuckLake maintenance of one lake from
 * the command line. Each action attaches the lake in a tarn session and
 * runs the matching ducklake_* function(s) as SQL, printing what was (or,
 * with --dry-run, would be) done as one table:
 *
 *   expire   ducklake_expire_snapshots
 *   cleanup  ducklake_cleanup_old_files + ducklake_delete_orphaned_files
 *   compact  ducklake_merge_adjacent_files, then ducklake_rewrite_data_files
 *   flush    ducklake_flush_inlined_data
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/render.h"

#include "tarn/error.h"
#include "tarn/session.h"
#include "util/buf.h"
#include "util/quote.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char cmd_maintain_usage[] =
    "usage: tarn maintain expire|cleanup|compact|flush [--lake 'ducklake:PATH'] [OPTIONS]\n"
    "\n"
    "       tarn maintain expire [-C DIR] [--older-than AGE] [--keep-last N] [--dry-run]\n"
    "\n"
    "  expire    forget snapshots (--versions or --older-than; never the newest):\n"
    "            files only they used are scheduled for deletion. Without --lake,\n"
    "            the project's lake, keeping the snapshot of every model's last\n"
    "            good build and every pinned one (tarn pin); --keep-last N keeps\n"
    "            the newest N too\n"
    "  cleanup   delete the files scheduled for deletion and orphaned Parquet files\n"
    "            (left by writes that never committed) older than --older-than,\n"
    "            or every one with --all (default: older than the lake's\n"
    "            delete_older_than option, 2 days)\n"
    "  compact   merge adjacent small files, then rewrite files whose rows are\n"
    "            mostly deleted\n"
    "  flush     move inlined rows into Parquet files\n"
    "\n"
    "  --lake 'ducklake:PATH'  the lake's catalog file (must exist); default: the\n"
    "                          lake of the project tarn runs in (config/catalog.sql)\n"
    "  -C, --project DIR       that project's folder\n"
    "  -q, --quiet             expire: no line per kept snapshot, no summary\n"
    "  -t, --target NAME       that project's target (config/targets/NAME.sql)\n"
    "  --data-path DIR         its data path, as given when it was attached\n"
    "  --dry-run               show what would be done, change nothing\n"
    "  --older-than TS         a timestamp ('2026-01-01 00:00:00+00') or an\n"
    "                          age ('2 days')\n"
    "  --versions 1,2          snapshot ids (expire)\n"
    "  --all                   every scheduled or orphaned file, whatever its age\n"
    "  --table [SCHEMA.]NAME   only this table (compact, flush)\n"
    "  --delete-threshold D    share of deleted rows that makes compact rewrite a\n"
    "                          file (0..1; default: the lake's option, or 0.95)\n"
    "  --format FORMAT         table (default), csv or json\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error.\n";

typedef struct {
    cli_common common; /* -C, --target: the project whose lake it is */
    const char *alias; /* the lake's name in the session */
    const char *action, *lake, *data_path, *older_than, *versions, *table, *threshold;
    int dry_run, all;
    render_format format;
} maint_opts;

static int parse_one(maint_opts *o, int argc, char **argv, int *i)
{
    const struct {
        const char *name;
        const char **slot;
    } VALUED[] = {
        {"--lake", &o->lake},
        {"--data-path", &o->data_path},
        {"--older-than", &o->older_than},
        {"--versions", &o->versions},
        {"--table", &o->table},
        {"--delete-threshold", &o->threshold},
    };
    const char *a = argv[*i], *val = NULL;
    int c = cli_opt_common(argc, argv, i, &o->common, 0);
    if (c != 0)
        return c < 0 ? -1 : 0;
    if (strcmp(a, "--dry-run") == 0)
        return o->dry_run = 1, 0;
    if (strcmp(a, "--all") == 0)
        return o->all = 1, 0;
    for (size_t k = 0; k < sizeof(VALUED) / sizeof(VALUED[0]); k++) {
        int m = cli_opt_value(argc, argv, i, NULL, VALUED[k].name, &val);
        if (m < 0)
            return -1;
        if (m > 0) {
            *VALUED[k].slot = val;
            return 0;
        }
    }
    int m = cli_opt_format(argc, argv, i, &o->format);
    if (m != 0)
        return m < 0 ? -1 : 0;
    if (a[0] != '-' && !o->action)
        return o->action = a, 0;
    cli_errorf(a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
    return -1;
}

static int valid_versions(const char *v)
{
    int digits = 0;
    for (const char *p = v; *p; p++) {
        if (isdigit((unsigned char)*p))
            digits++;
        else if (*p != ',' && *p != ' ')
            return 0;
    }
    return digits > 0;
}

/* Returns 1 for --help, 0 when fine, -1 on a usage error (reported). */
static int parse(maint_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
        if (parse_one(o, argc, argv, &i) < 0)
            return -1;
    }
    static const char *const ACTIONS[] = {"expire", "cleanup", "compact", "flush"};
    int known = 0;
    for (size_t k = 0; o->action && k < 4; k++)
        known |= strcmp(o->action, ACTIONS[k]) == 0;
    if (!known) {
        cli_errorf(o->action ? "unknown action '%s'" : "an action is needed%s",
                   o->action ? o->action : "");
        return -1;
    }
    if (strcmp(o->action, "expire") == 0 && !o->versions == !o->older_than) {
        cli_errorf("expire needs either --versions or --older-than");
        return -1;
    }
    if (o->versions && !valid_versions(o->versions)) {
        cli_errorf("--versions takes snapshot ids separated by commas, e.g. 1,2");
        return -1;
    }
    if (o->table && strcmp(o->action, "compact") != 0 && strcmp(o->action, "flush") != 0) {
        cli_errorf("--table applies to compact and flush only");
        return -1;
    }
    if (o->threshold && strcmp(o->action, "compact") != 0) {
        cli_errorf("--delete-threshold applies to compact only");
        return -1;
    }
    if (o->versions && strcmp(o->action, "expire") != 0) {
        cli_errorf("--versions applies to expire only");
        return -1;
    }
    if (o->all && o->older_than) {
        cli_errorf("--all and --older-than exclude each other");
        return -1;
    }
    return 0;
}

static void named_text(tarn_buf *b, const char *name, const char *value)
{
    buf_printf(b, ", %s => ", name);
    quote_literal(b, value);
}

/* The table's name and schema arguments for compact/flush. */
static void table_args(tarn_buf *b, const maint_opts *o, const char *schema_kw,
                       const char *table_kw)
{
    if (!o->table)
        return;
    const char *dot = strchr(o->table, '.');
    char *schema = dot ? xstrndup(o->table, (size_t)(dot - o->table)) : NULL;
    const char *name = dot ? dot + 1 : o->table;
    if (table_kw) {
        named_text(b, table_kw, name);
    } else {
        buf_puts(b, ", ");
        quote_literal(b, name);
    }
    if (schema)
        named_text(b, schema_kw, schema);
    free(schema);
}

/* older_than => a timestamp, or an age ('2 days') counted back from now */
static void older_than_arg(tarn_buf *b, const char *v)
{
    buf_puts(b, ", older_than => COALESCE(TRY_CAST(");
    quote_literal(b, v);
    buf_puts(b, " AS TIMESTAMPTZ), now() - TRY_CAST(");
    quote_literal(b, v);
    buf_puts(b, " AS INTERVAL))");
}

static void age_args(tarn_buf *b, const maint_opts *o)
{
    if (o->all)
        buf_puts(b, ", cleanup_all => true");
    if (o->older_than)
        older_than_arg(b, o->older_than);
    buf_printf(b, ", dry_run => %s", o->dry_run ? "true" : "false");
}

/* The one statement an action runs (after the ATTACH). */
static char *action_sql(const maint_opts *o)
{
    tarn_buf b = {0};
    if (strcmp(o->action, "expire") == 0) {
        buf_puts(&b, "SELECT snapshot_id, snapshot_time, schema_version, changes FROM "
                     "ducklake_expire_snapshots(");
        quote_literal(&b, o->alias);
        if (o->versions)
            buf_printf(&b, ", versions => [%s]", o->versions);
        else
            older_than_arg(&b, o->older_than);
        buf_printf(&b, ", dry_run => %s) ORDER BY snapshot_id", o->dry_run ? "true" : "false");
    } else if (strcmp(o->action, "cleanup") == 0) {
        buf_puts(&b, "SELECT 'scheduled' AS kind, path FROM ducklake_cleanup_old_files(");
        quote_literal(&b, o->alias);
        age_args(&b, o);
        buf_puts(&b, ") UNION ALL SELECT 'orphaned', path FROM "
                     "ducklake_delete_orphaned_files(");
        quote_literal(&b, o->alias);
        age_args(&b, o);
        buf_puts(&b, ") ORDER BY kind DESC, path");
    } else if (strcmp(o->action, "compact") == 0) {
        const char *dry = o->dry_run ? ", dry_run => true" : "";
        buf_puts(&b, "SELECT 'merge' AS step, * FROM ducklake_merge_adjacent_files(");
        quote_literal(&b, o->alias);
        table_args(&b, o, "schema", NULL);
        buf_printf(&b, "%s) UNION ALL SELECT 'rewrite', * FROM ducklake_rewrite_data_files(", dry);
        quote_literal(&b, o->alias);
        table_args(&b, o, "schema", NULL);
        if (o->threshold) {
            buf_puts(&b, ", delete_threshold => CAST(");
            quote_literal(&b, o->threshold);
            buf_puts(&b, " AS DOUBLE)");
        }
        buf_printf(&b, "%s) ORDER BY step, schema_name, table_name", dry);
    } else {
        buf_puts(&b, "SELECT * FROM ducklake_flush_inlined_data(");
        quote_literal(&b, o->alias);
        table_args(&b, o, "schema_name", "table_name");
        buf_printf(&b, "%s) ORDER BY ALL", o->dry_run ? ", dry_run => true" : "");
    }
    return buf_detach(&b);
}

/* Runs one statement; 0 or the session's error (reported). */
static int run(tarn_session *s, render *r, int n, const char *sql, tarn_output_kind kind)
{
    render_start(r, n, kind);
    if (tarn_session_exec(s, sql, render_sink(r)) == 0) {
        render_finish(r);
        return 0;
    }
    char *msg = xstrdup(tarn_error_last());
    tarn_error_clear();
    render_error(r, msg);
    cli_errorf("%s", msg);
    free(msg);
    return -1;
}

static char *attach_sql(const maint_opts *o)
{
    tarn_buf b = {0};
    buf_puts(&b, "ATTACH ");
    const char *path = strncmp(o->lake, "ducklake:", 9) == 0 ? o->lake + 9 : o->lake;
    char *uri = xasprintf("ducklake:%s", path);
    quote_literal(&b, uri);
    free(uri);
    buf_puts(&b, " AS lake");
    if (o->data_path) {
        buf_puts(&b, " (DATA_PATH ");
        quote_literal(&b, o->data_path);
        buf_putc(&b, ')');
    }
    return buf_detach(&b);
}

/* Attaches the project's lake (config/'s ATTACH, writable) when no
 * --lake is given: the lake of the project tarn is run in. */
static int project_lake(maint_opts *o, cli_project *cp)
{
    if (cli_project_chdir(o->common.dir) != CLI_OK)
        return CLI_USAGE;
    if (!cli_in_project()) {
        cli_errorf("--lake 'ducklake:PATH' is needed (or run it inside a project, or give "
                   "-C DIR)");
        return CLI_USAGE;
    }
    int rc = cli_project_open_common(cp, &o->common);
    if (rc != CLI_OK)
        return rc;
    if (!cli_project_lake_exists(cp)) {
        cli_errorf("no lake at '%s' (the project's lake \"%s\" has not been built)",
                   cp->p->lake_path, cp->p->lake_alias);
        return CLI_FAILED;
    }
    rc = cli_project_attach_mode(cp, 0);
    if (rc != CLI_OK)
        return CLI_FAILED;
    o->alias = cp->p->lake_alias;
    return CLI_OK;
}

/* Whether argv names no --lake: a project's expiry (cmd_expire.c). */
static int project_expire(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "expire") != 0)
        return 0;
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--lake") == 0 || strncmp(argv[i], "--lake=", 7) == 0 ||
            strcmp(argv[i], "--versions") == 0 || strcmp(argv[i], "-h") == 0 ||
            strcmp(argv[i], "--help") == 0)
            return 0;
    return 1;
}

int cmd_maintain(int argc, char **argv)
{
    if (project_expire(argc, argv))
        return cmd_maintain_expire_project(argc, argv);
    maint_opts o = {0};
    int p = parse(&o, argc, argv);
    if (p != 0) {
        cli_common_free(&o.common);
        fputs(cmd_maintain_usage, p > 0 ? stdout : stderr);
        return p > 0 ? CLI_OK : CLI_USAGE;
    }
    cli_project cp = {0};
    tarn_session *s = NULL;
    int rc = 0;
    render *r = render_new(o.format, stdout);
    if (!o.lake) {
        int st = project_lake(&o, &cp);
        cli_common_free(&o.common);
        if (st != CLI_OK) {
            render_free(r);
            cli_project_close(&cp);
            return st;
        }
        s = cp.s;
    } else {
        cli_common_free(&o.common);
        o.alias = "lake";
        const char *path = strncmp(o.lake, "ducklake:", 9) == 0 ? o.lake + 9 : o.lake;
        struct stat st;
        if (stat(path, &st) != 0) {
            /* ATTACH would create a new, empty lake there */
            cli_errorf("no lake at '%s'", path);
            render_free(r);
            return CLI_FAILED;
        }
        if (tarn_session_open(&s) != 0) {
            cli_errorf("%s", tarn_error_last());
            render_free(r);
            return CLI_FAILED;
        }
        char *attach = attach_sql(&o);
        rc = run(s, r, 1, attach, TARN_OUTPUT_NONE);
        free(attach);
    }
    char *sql = action_sql(&o);
    if (rc == 0)
        rc = run(s, r, o.lake ? 2 : 1, sql, TARN_OUTPUT_ROWS);
    free(sql);
    render_free(r);
    if (o.lake)
        tarn_session_close(s);
    else
        cli_project_close(&cp);
    return rc == 0 ? CLI_OK : CLI_FAILED;
}
