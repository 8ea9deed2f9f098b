/*
 * cron.c — five-field cron expressions (see cron.h).
 *
 * A field becomes a bit set; the next occurrence walks forward day by day
 * (at most ten years of days, which covers a 29 February across a century
 * year) and, on the first matching day, takes the first matching hour and
 * minute, so even a sparse schedule costs a few thousand steps.
 */
#include "util/cron.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef struct {
    const char *name; /* for messages */
    int lo, hi;
    const char *const *names; /* names[i] stands for lo + i (NULL: none) */
} field_kind;

static const char *const MONTH_NAMES[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL",
                                          "AUG", "SEP", "OCT", "NOV", "DEC", NULL};
static const char *const DAY_NAMES[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", NULL};

static const field_kind FIELDS[5] = {
    {"minute", 0, 59, NULL},          {"hour", 0, 23, NULL},
    {"day of month", 1, 31, NULL},    {"month", 1, 12, MONTH_NAMES},
    {"day of week", 0, 7, DAY_NAMES},
};

static int fail(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t whylen, const char *fmt, ...)
{
    if (whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* One value (digits or a name) at *p; advances *p past it. */
static int parse_value(int *out, const char **p, const field_kind *k, char *why, size_t whylen)
{
    const char *s = *p;
    if (isdigit((unsigned char)*s)) {
        long v = 0;
        while (isdigit((unsigned char)*s) && v <= 1000)
            v = v * 10 + (*s++ - '0');
        if (v < k->lo || v > k->hi)
            return fail(why, whylen, "%s %ld is out of range (%d-%d)", k->name, v, k->lo, k->hi);
        *out = (int)v;
        *p = s;
        return 0;
    }
    size_t n = 0;
    while (isalpha((unsigned char)s[n]))
        n++;
    for (int i = 0; k->names && k->names[i]; i++)
        if (n == 3 && strncasecmp(s, k->names[i], 3) == 0) {
            *out = k->lo + i;
            *p = s + 3;
            return 0;
        }
    if (n == 1 && strchr("LW", toupper((unsigned char)*s)))
        return fail(why, whylen, "'%c' in the %s field is not supported (it is not standard cron)",
                    *s, k->name);
    if (*s == '#' || *s == '?')
        return fail(why, whylen, "'%c' in the %s field is not supported (it is not standard cron)",
                    *s, k->name);
    if (n)
        return fail(why, whylen, "'%.*s' is not a %s%s", (int)n, s, k->name,
                    k->names == MONTH_NAMES ? " (JAN-DEC or 1-12)"
                    : k->names == DAY_NAMES ? " (SUN-SAT or 0-7)"
                                            : "");
    if (!*s || *s == ',')
        return fail(why, whylen, "the %s field has an empty item", k->name);
    return fail(why, whylen, "'%c' is not allowed in the %s field", *s, k->name);
}

/* One comma-separated item: `*`, `a`, `a-b`, each optionally `/step`. */
static int parse_item(uint64_t *bits, const char **p, const field_kind *k, char *why, size_t whylen)
{
    int lo = k->lo, hi = k->hi, step = 1, single = 0;
    if (**p == '*') {
        (*p)++;
    } else {
        if (parse_value(&lo, p, k, why, whylen))
            return -1;
        hi = lo;
        single = 1;
        if (**p == '-') {
            (*p)++;
            if (parse_value(&hi, p, k, why, whylen))
                return -1;
            single = 0;
            if (hi < lo)
                return fail(why, whylen, "the %s range %d-%d runs backwards", k->name, lo, hi);
        }
    }
    if (**p == '/') {
        (*p)++;
        if (!isdigit((unsigned char)**p))
            return fail(why, whylen, "the step after '/' in the %s field must be a number",
                        k->name);
        long v = 0;
        while (isdigit((unsigned char)**p) && v <= 1000)
            v = v * 10 + (*(*p)++ - '0');
        if (v == 0 || v > k->hi - k->lo + 1)
            return fail(why, whylen, "the %s step %ld is out of range (1-%d)", k->name, v,
                        k->hi - k->lo + 1);
        step = (int)v;
        if (single) /* `5/10`: from 5 to the end of the field */
            hi = k->hi;
    }
    for (int v = lo; v <= hi; v += step)
        *bits |= (uint64_t)1 << v;
    return 0;
}

static int parse_field(uint64_t *bits, const char *text, const field_kind *k, char *why,
                       size_t whylen)
{
    *bits = 0;
    const char *p = text;
    for (;;) {
        if (parse_item(bits, &p, k, why, whylen))
            return -1;
        if (*p == 0)
            return 0;
        if (*p != ',') {
            /* parse_value() names what is there (`L`, `#`, a stray name) */
            int ignored;
            if (parse_value(&ignored, &p, k, why, whylen) == 0)
                fail(why, whylen, "'%s' is not a valid %s field", text, k->name);
            return -1;
        }
        p++;
    }
}

static const char *shorthand(const char *expr)
{
    static const char *const MAP[][2] = {
        {"@hourly", "0 * * * *"},   {"@daily", "0 0 * * *"},   {"@midnight", "0 0 * * *"},
        {"@weekly", "0 0 * * 0"},   {"@monthly", "0 0 1 * *"}, {"@yearly", "0 0 1 1 *"},
        {"@annually", "0 0 1 1 *"},
    };
    for (size_t i = 0; i < sizeof(MAP) / sizeof(MAP[0]); i++)
        if (strcasecmp(expr, MAP[i][0]) == 0)
            return MAP[i][1];
    return NULL;
}

static int days_in_month(int month, int leap)
{
    static const int D[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && leap ? 29 : D[month - 1];
}

/* With only the day of month restricted, some chosen day must exist in
 * some chosen month (in a leap year at best). */
static int ever_occurs(const cron_spec *c)
{
    if (!c->weekdays_star && !c->days_star)
        return 1; /* either field matching is enough, and every weekday comes */
    if (!c->days_star && c->weekdays_star) {
        for (int m = 1; m <= 12; m++)
            for (int d = 1; (c->months >> m & 1) && d <= days_in_month(m, 1); d++)
                if (c->days >> d & 1)
                    return 1;
        return 0;
    }
    return 1;
}

int cron_parse(cron_spec *out, const char *expr, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    if (expr[0] == '@') {
        const char *s = shorthand(expr);
        if (!s)
            return fail(why, whylen,
                        "'%s' is not a cron shorthand (@hourly, @daily, @weekly, @monthly, "
                        "@yearly)",
                        expr);
        expr = s;
    }
    char copy[256];
    if (strlen(expr) >= sizeof(copy))
        return fail(why, whylen, "the expression is too long");
    strcpy(copy, expr);
    char *fields[6];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
        if (n < 6)
            fields[n++] = t;
        else
            n = 7;
    if (n != 5)
        return fail(why, whylen, "%s fields where cron has five",
                    n == 6  ? "six (seconds are not supported)"
                    : n > 6 ? "more than six"
                            : "too few");
    uint64_t bits[5];
    for (int i = 0; i < 5; i++)
        if (parse_field(&bits[i], fields[i], &FIELDS[i], why, whylen))
            return -1;
    out->minutes = bits[0];
    out->hours = (uint32_t)bits[1];
    out->days = (uint32_t)bits[2];
    out->months = (uint16_t)bits[3];
    out->weekdays = (uint8_t)((bits[4] | (bits[4] >> 7)) & 0x7f); /* 7 is Sunday too */
    out->days_star = fields[2][0] == '*';
    out->weekdays_star = fields[4][0] == '*';
    if (!ever_occurs(out))
        return fail(why, whylen, "day of month '%s' never occurs in month '%s'", fields[2],
                    fields[3]);
    return 0;
}

static int day_matches(const cron_spec *c, const struct tm *tm)
{
    if (!(c->months >> (tm->tm_mon + 1) & 1))
        return 0;
    int dom = c->days >> tm->tm_mday & 1, dow = c->weekdays >> tm->tm_wday & 1;
    if (c->days_star && c->weekdays_star)
        return 1;
    if (c->days_star)
        return dow;
    if (c->weekdays_star)
        return dom;
    return dom || dow;
}

int cron_matches(const cron_spec *c, int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    return day_matches(c, &tm) && (c->hours >> tm.tm_hour & 1) && (c->minutes >> tm.tm_min & 1);
}

/* The first matching (hour, minute) of a matching day at or after
 * from_minute (minutes since midnight); -1 for none. */
static int first_minute(const cron_spec *c, int from_minute)
{
    for (int m = from_minute; m < 24 * 60; m++)
        if ((c->hours >> (m / 60) & 1) && (c->minutes >> (m % 60) & 1))
            return m;
    return -1;
}

int64_t cron_next(const cron_spec *c, int64_t after)
{
    int64_t start = after - (after % 60 + 60) % 60 + 60; /* the next whole minute */
    int64_t day = start - (start % 86400 + 86400) % 86400;
    int from = (int)((start - day) / 60);
    for (int i = 0; i < 3660; i++, day += 86400, from = 0) {
        time_t tt = (time_t)day;
        struct tm tm;
        gmtime_r(&tt, &tm);
        if (!day_matches(c, &tm))
            continue;
        int m = first_minute(c, from);
        if (m >= 0)
            return day + (int64_t)m * 60;
    }
    return -1;
}
