/*
 * annot_schedule.c — the operational lines (see annot.h): `-- schedule`
 * (a cron expression in UTC) and `-- freshness` (how old the last good
 * build may get), one of the two, say when a model is due; `-- tags`
 * names it for tag:x selectors. Part of the annotation grammar
 * (annot_int.h); the cron grammar is util/cron's.
 */
#include "project/annot_int.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/cron.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char SCHEDULE_FIX[] =
    "write '-- schedule \"<minute> <hour> <day> <month> <weekday>\"' in UTC: minute 0-59, hour "
    "0-23, day 1-31, month 1-12 or JAN-DEC, weekday 0-7 or SUN-SAT (0 and 7 are Sunday); each a "
    "value, a range a-b, '*', a step /n or a list, e.g. -- schedule \"0 6 * * 1-5\"";

/* A model is rebuilt on a cron schedule or when its last good build is
 * older than a freshness, never both: one rule says when it is due. */
static int second_rule(annot_parser *p, const char *kw)
{
    model_annot *a = p->a;
    if (a->schedule_line || a->freshness_line) {
        int first = a->schedule_line ? a->schedule_line : a->freshness_line;
        const char *had = a->schedule_line ? "schedule" : "freshness";
        if (strcmp(had, kw) == 0)
            ERR(p, "a model has one schedule", "second '-- %s' line (the first is line %d)", kw,
                first);
        else
            ERR(p,
                "keep one of the two: a schedule says when to build, a freshness how old the "
                "last build may get",
                "'-- %s' and '-- %s' (line %d) exclude each other", kw, had, first);
        return 1;
    }
    return 0;
}

void annot_parse_schedule(annot_parser *p, const char *rest)
{
    model_annot *a = p->a;
    if (second_rule(p, "schedule"))
        return;
    char *s = annot_trim_dup(rest, strlen(rest));
    size_t l = strlen(s);
    if (l < 2 || s[0] != '"' || s[l - 1] != '"') {
        ERR(p, SCHEDULE_FIX, "the schedule must be a cron expression in double quotes");
        free(s);
        return;
    }
    char *expr = xstrndup(s + 1, l - 2);
    free(s);
    cron_spec spec;
    char why[200];
    if (cron_parse(&spec, expr, why, sizeof(why)) != 0) {
        ERR(p, SCHEDULE_FIX, "\"%s\" is not a valid schedule: %s", expr, why);
        free(expr);
        return;
    }
    a->schedule_line = p->line;
    a->schedule = expr;
}

/* `-- freshness 6h`: minutes (m), hours (h) or days (d), at least a
 * minute and at most a year. */
void annot_parse_freshness(annot_parser *p, const char *rest)
{
    model_annot *a = p->a;
    const char *fix = "write '-- freshness <n><unit>' with unit m (minutes), h (hours) or d "
                      "(days), e.g. -- freshness 6h";
    if (second_rule(p, "freshness"))
        return;
    char *s = annot_trim_dup(rest, strlen(rest));
    char *end = NULL;
    long n = strtol(s, &end, 10);
    long unit = !end || end == s        ? 0
                : strcmp(end, "m") == 0 ? 60
                : strcmp(end, "h") == 0 ? 3600
                : strcmp(end, "d") == 0 ? 86400
                                        : 0;
    if (!unit || !isdigit((unsigned char)s[0]) || n <= 0 || n > 366L * 86400 / unit) {
        ERR(p, fix, "'%s' is not a freshness (a number of minutes, hours or days up to a year)", s);
    } else {
        a->freshness_line = p->line;
        a->freshness_s = n * unit;
    }
    free(s);
}

void annot_parse_tags(annot_parser *p, const char *rest)
{
    strlist w = {0};
    annot_split_words(&w, rest);
    const char *fix = "write '-- tags a,b' (letters, digits, _ and -, commas, no spaces)";
    if (w.n != 1) {
        ERR(p, fix, "'-- tags' takes one comma-separated list");
    } else {
        const char *s = w.items[0];
        for (;;) {
            const char *c = strchr(s, ',');
            size_t n = c ? (size_t)(c - s) : strlen(s);
            char *tag = xstrndup(s, n);
            int ok = n > 0;
            for (size_t i = 0; i < n && ok; i++)
                ok = isalnum((unsigned char)tag[i]) || tag[i] == '_' || tag[i] == '-';
            if (!ok) {
                ERR(p, fix, "'%s' is not a tag", tag);
                free(tag);
                break;
            }
            if (strlist_find(&p->a->tags, tag) < 0)
                strlist_push_owned(&p->a->tags, tag);
            else
                free(tag);
            if (!c)
                break;
            s = c + 1;
        }
    }
    strlist_free(&w);
}
