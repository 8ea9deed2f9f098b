/*
 * partition.c — partition identities and their calendar arithmetic (see
 * partition.h).
 *
 * The civil-date conversions are Howard Hinnant's days_from_civil /
 * civil_from_days algorithms: exact for any date, no time zone, no libc
 * state — the identities must not depend on the machine's TZ.
 */
#include "project/partition.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const grain_names[] = {"", "hourly", "daily", "weekly", "monthly", "dynamic"};

const char *grain_name(part_grain g)
{
    return grain_names[g];
}

int grain_parse(part_grain *out, const char *name)
{
    for (int g = GRAIN_HOURLY; g <= GRAIN_DYNAMIC; g++)
        if (strcmp(name, grain_names[g]) == 0) {
            *out = (part_grain)g;
            return 0;
        }
    return -1;
}

const char *grain_strftime(part_grain g)
{
    switch (g) {
    case GRAIN_HOURLY:
        return "%Y-%m-%dT%H";
    case GRAIN_DAILY:
        return "%Y-%m-%d";
    case GRAIN_WEEKLY:
        return "%G-W%V";
    case GRAIN_MONTHLY:
        return "%Y-%m";
    default:
        return NULL;
    }
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ISO weekday, Monday = 1 … Sunday = 7 (1970-01-01 was a Thursday). */
static int iso_weekday(int64_t days)
{
    int64_t w = (days + 3) % 7;
    if (w < 0)
        w += 7;
    return (int)w + 1;
}

/* Day number of the Monday of ISO week 1 of ISO year `y` (the week that
 * holds January 4th). */
static int64_t iso_week1_monday(int64_t y)
{
    int64_t jan4 = days_from_civil(y, 1, 4);
    return jan4 - (iso_weekday(jan4) - 1);
}

char *partition_format(part_grain g, int64_t t)
{
    int64_t days = floor_div(t, 86400);
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    switch (g) {
    case GRAIN_HOURLY:
        return xasprintf("%04lld-%02u-%02uT%02lld", (long long)y, m, d,
                         (long long)(floor_div(t, 3600) - days * 24));
    case GRAIN_DAILY:
        return xasprintf("%04lld-%02u-%02u", (long long)y, m, d);
    case GRAIN_MONTHLY:
        return xasprintf("%04lld-%02u", (long long)y, m);
    case GRAIN_WEEKLY: {
        /* The ISO year is the year of the week's Thursday. */
        int64_t thursday = days + (4 - iso_weekday(days));
        int64_t iy;
        unsigned im, id;
        civil_from_days(thursday, &iy, &im, &id);
        int64_t week = (thursday - days_from_civil(iy, 1, 1)) / 7 + 1;
        return xasprintf("%04lld-W%02lld", (long long)iy, (long long)week);
    }
    default:
        return xstrdup("");
    }
}

/* Reads exactly `n` digits at *p; -1 when they are not there. */
static long read_digits(const char **p, int n)
{
    long v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *p += n;
    return v;
}

static int expect(const char **p, char c)
{
    if (**p != c)
        return 0;
    (*p)++;
    return 1;
}

static int valid_date(long y, long m, long d)
{
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1)
        return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return d <= mdays[m - 1] + (m == 2 && leap);
}

/* Parses the identity forms; *grain tells which one was found. */
static int parse_identity(int64_t *start, part_grain *grain, const char *s)
{
    const char *p = s;
    long y = read_digits(&p, 4);
    if (y < 0 || !expect(&p, '-'))
        return -1;
    if (*p == 'W') {
        p++;
        long w = read_digits(&p, 2);
        if (w < 1 || *p)
            return -1;
        int64_t mon = iso_week1_monday(y) + (w - 1) * 7;
        /* Week 53 exists only in some years: it must format back. */
        char *back = partition_format(GRAIN_WEEKLY, mon * 86400);
        int same = strcmp(back, s) == 0;
        free(back);
        if (!same)
            return -1;
        *start = mon * 86400;
        *grain = GRAIN_WEEKLY;
        return 0;
    }
    long m = read_digits(&p, 2);
    if (m < 1 || m > 12)
        return -1;
    if (!*p) {
        *start = days_from_civil(y, (unsigned)m, 1) * 86400;
        *grain = GRAIN_MONTHLY;
        return 0;
    }
    long d;
    if (!expect(&p, '-') || (d = read_digits(&p, 2)) < 0 || !valid_date(y, m, d))
        return -1;
    int64_t day = days_from_civil(y, (unsigned)m, (unsigned)d) * 86400;
    if (!*p) {
        *start = day;
        *grain = GRAIN_DAILY;
        return 0;
    }
    long h;
    if (!expect(&p, 'T') || (h = read_digits(&p, 2)) < 0 || h > 23 || *p)
        return -1;
    *start = day + h * 3600;
    *grain = GRAIN_HOURLY;
    return 0;
}

static const char *grain_example(part_grain g)
{
    switch (g) {
    case GRAIN_HOURLY:
        return "YYYY-MM-DDTHH, e.g. 2024-03-05T07";
    case GRAIN_DAILY:
        return "YYYY-MM-DD, e.g. 2024-03-05";
    case GRAIN_WEEKLY:
        return "YYYY-Www (ISO week), e.g. 2024-W10";
    case GRAIN_MONTHLY:
        return "YYYY-MM, e.g. 2024-03";
    default:
        return "a value of the partition column";
    }
}

int partition_parse(int64_t *start, part_grain g, const char *id)
{
    part_grain found;
    if (parse_identity(start, &found, id) != 0 || found != g)
        return tarn_error_set(TARN_EINVALID, "'%s' is not a %s partition: write %s", id,
                              grain_name(g), grain_example(g));
    return 0;
}

int64_t partition_next(part_grain g, int64_t start)
{
    switch (g) {
    case GRAIN_HOURLY:
        return start + 3600;
    case GRAIN_DAILY:
        return start + 86400;
    case GRAIN_WEEKLY:
        return start + 7 * 86400;
    case GRAIN_MONTHLY: {
        int64_t y;
        unsigned m, d;
        civil_from_days(floor_div(start, 86400), &y, &m, &d);
        if (++m > 12) {
            m = 1;
            y++;
        }
        return days_from_civil(y, m, 1) * 86400;
    }
    default:
        return start;
    }
}

int partition_parse_time(int64_t *out, const char *s)
{
    part_grain g;
    if (parse_identity(out, &g, s) == 0)
        return 0;
    /* YYYY-MM-DD[ T]HH:MM[:SS] */
    const char *p = s;
    long y = read_digits(&p, 4), m = -1, d = -1, h = -1, mi = -1, sec = 0;
    if (y >= 0 && expect(&p, '-') && (m = read_digits(&p, 2)) >= 0 && expect(&p, '-') &&
        (d = read_digits(&p, 2)) >= 0 && valid_date(y, m, d) && (*p == ' ' || *p == 'T')) {
        p++;
        if ((h = read_digits(&p, 2)) >= 0 && h < 24 && expect(&p, ':') &&
            (mi = read_digits(&p, 2)) >= 0 && mi < 60) {
            if (*p == ':' && (p++, sec = read_digits(&p, 2)) < 0)
                sec = 99;
            if (!*p && sec < 60) {
                *out =
                    days_from_civil(y, (unsigned)m, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec;
                return 0;
            }
        }
    }
    return tarn_error_set(TARN_EINVALID,
                          "'%s' is not a point in time: write a partition (2024-03-05, "
                          "2024-03-05T07, 2024-W10, 2024-03) or a timestamp (2024-03-05 07:30:00)",
                          s);
}

int partition_range(strlist *out, part_grain g, const char *from, const char *to, size_t max)
{
    int64_t a, b;
    int rc = partition_parse_time(&a, from);
    if (!rc)
        rc = partition_parse_time(&b, to);
    if (rc)
        return rc;
    if (a > b)
        return tarn_error_set(TARN_EINVALID, "--from %s is after --to %s", from, to);
    /* Start at the slice that holds `a`. */
    char *first = partition_format(g, a);
    int64_t t;
    part_grain found;
    parse_identity(&t, &found, first);
    free(first);
    size_t n = 0;
    for (; t <= b; t = partition_next(g, t)) {
        if (++n > max)
            return tarn_error_set(TARN_EINVALID,
                                  "--from %s --to %s spans more than %zu %s partitions", from, to,
                                  max, grain_name(g));
        strlist_push_owned(out, partition_format(g, t));
    }
    return 0;
}
