/*
 * prune_fast.c — deciding in C, from a column's cached statistics rows
 * (ducklake_file_column_stats, kept by scan_cache.c), whether a file can
 * hold no row matching a prune term (see prune_fast.h). Reads and writes
 * no catalog row itself.
 *
 * The same conditions as prune.c's catalog query, for the columns and
 * constants whose order C knows exactly as DuckDB compares them: integer
 * columns against integer constants, DOUBLE columns against numbers,
 * VARCHAR columns against string literals (byte order), and IS [NOT] NULL
 * on any column. A statistic that is NULL or does not parse decides
 * nothing, as a NULL comparison in SQL is never TRUE.
 */
#include "lake/prune_fast.h"

#include "util/buf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { PF_NONE, PF_INT, PF_DOUBLE, PF_STRING } pf_kind;

static pf_kind kind_of(const char *type)
{
    static const char *const INTS[] = {"int8",  "int16",  "int32", "int64",
                                       "uint8", "uint16", "uint32"};
    for (size_t i = 0; i < sizeof(INTS) / sizeof(INTS[0]); i++)
        if (strcmp(type, INTS[i]) == 0)
            return PF_INT;
    if (strcmp(type, "float64") == 0)
        return PF_DOUBLE;
    return strcmp(type, "varchar") == 0 ? PF_STRING : PF_NONE;
}

/* A value of one kind; s is malloc'd for PF_STRING. */
typedef struct {
    int64_t i;
    double d;
    char *s;
} pf_value;

static int parse_int(const char *t, int64_t *out)
{
    if (!t || !*t)
        return 0;
    char *end;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (errno || *end)
        return 0;
    *out = v;
    return 1;
}

static int parse_double(const char *t, double *out)
{
    if (!t || !*t)
        return 0;
    char *end;
    double v = strtod(t, &end);
    if (*end || isnan(v))
        return 0;
    *out = v;
    return 1;
}

/* A constant: digits with an optional sign (INT), a plain decimal number
 * (DOUBLE: no hex, no inf/nan words), or a whole '…' literal (STRING). */
static int parse_constant(const char *lit, pf_kind k, pf_value *v)
{
    if (k == PF_STRING) {
        size_t n = strlen(lit);
        if (n < 2 || lit[0] != '\'' || lit[n - 1] != '\'')
            return 0;
        char *s = xmalloc(n);
        size_t o = 0;
        for (size_t i = 1; i + 1 < n; i++) {
            if (lit[i] == '\'') {
                if (i + 2 >= n || lit[i + 1] != '\'') { /* a lone quote: not one literal */
                    free(s);
                    return 0;
                }
                i++;
            }
            s[o++] = lit[i];
        }
        s[o] = '\0';
        v->s = s;
        return 1;
    }
    const char *p = lit + (lit[0] == '-' || lit[0] == '+');
    if (!*p)
        return 0;
    for (const char *q = p; *q; q++)
        if (!((*q >= '0' && *q <= '9') ||
              (k == PF_DOUBLE && (*q == '.' || *q == 'e' || *q == 'E' || *q == '-' || *q == '+'))))
            return 0;
    return k == PF_INT ? parse_int(lit, &v->i) : parse_double(lit, &v->d);
}

/* A statistic's text as a value of kind k; 0 when it says nothing. */
static int parse_stat(const char *text, pf_kind k, pf_value *v)
{
    if (!text)
        return 0;
    if (k == PF_STRING) {
        v->s = (char *)text; /* borrowed: never freed */
        return 1;
    }
    return k == PF_INT ? parse_int(text, &v->i) : parse_double(text, &v->d);
}

static int cmp(const pf_value *a, const pf_value *b, pf_kind k)
{
    if (k == PF_STRING)
        return strcmp(a->s, b->s);
    if (k == PF_INT)
        return (a->i > b->i) - (a->i < b->i);
    return (a->d > b->d) - (a->d < b->d);
}

int pf_term_supported(const lk_prune_term *x, const lk_column *c)
{
    if (x->op == LK_PRUNE_IS_NULL || x->op == LK_PRUNE_NOT_NULL)
        return 1;
    pf_kind k = kind_of(c->type);
    if (k == PF_NONE || !x->nvalues)
        return 0;
    for (size_t i = 0; i < x->nvalues; i++) {
        pf_value v = {0};
        int ok = parse_constant(x->values[i], k, &v);
        free(v.s);
        if (!ok)
            return 0;
    }
    return 1;
}

/* Whether the file's range [lo, hi] (either may be unknown) proves term x
 * false for every row: the conditions of prune.c's excluded_sql. */
static int range_excludes(const lk_prune_term *x, pf_kind k, const pf_value *lo, int has_lo,
                          const pf_value *hi, int has_hi, const pf_value *v)
{
#define LO(op, i) (has_lo && cmp(lo, &v[i], k) op 0)
#define HI(op, i) (has_hi && cmp(hi, &v[i], k) op 0)
    switch (x->op) {
    case LK_PRUNE_EQ:
        return LO(>, 0) || HI(<, 0);
    case LK_PRUNE_NE:
        return LO(==, 0) && HI(==, 0);
    case LK_PRUNE_LT:
        return LO(>=, 0);
    case LK_PRUNE_LE:
        return LO(>, 0);
    case LK_PRUNE_GT:
        return HI(<=, 0);
    case LK_PRUNE_GE:
        return HI(<, 0);
    case LK_PRUNE_BETWEEN:
        return HI(<, 0) || LO(>, 1);
    case LK_PRUNE_IN:
        for (size_t i = 0; i < x->nvalues; i++)
            if (!(LO(>, i) || HI(<, i))) /* v[i] may lie in the range */
                return 0;
        return 1;
    default:
        return 0;
    }
#undef LO
#undef HI
}

int pf_term_excludes(const lk_prune_term *x, const lk_column *c, const scan_colstats *cs,
                     int64_t file_id, int64_t nrows)
{
    long row = scan_colstats_find(cs, file_id);
    if (row < 0)
        return 0;
    int64_t nulls = cs->null_counts[row];
    if (x->op == LK_PRUNE_IS_NULL)
        return nulls == 0;
    if (x->op == LK_PRUNE_NOT_NULL)
        return nulls >= 0 && nulls == nrows;
    pf_kind k = kind_of(c->type);
    /* NaN sorts above every number, and the max leaves it out */
    if (k == PF_DOUBLE && cs->nan[row] != 0)
        return 0;
    pf_value lo = {0}, hi = {0};
    int has_lo = parse_stat(cs->mins[row], k, &lo), has_hi = parse_stat(cs->maxs[row], k, &hi);
    pf_value *v = xcalloc(x->nvalues, sizeof(pf_value));
    int ok = 1;
    for (size_t i = 0; i < x->nvalues && ok; i++)
        ok = parse_constant(x->values[i], k, &v[i]);
    int excluded = ok && range_excludes(x, k, &lo, has_lo, &hi, has_hi, v);
    for (size_t i = 0; i < x->nvalues; i++)
        free(v[i].s);
    free(v);
    return excluded;
}
