/*
 * env.c — .env files and ${VAR} expansion (see env.h).
 */
#include "project/env.h"

#include "util/buf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int name_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static int name_cont(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

void env_parse(env_vars *out, diag_list *d, const char *path, const char *text)
{
    const char *s = text;
    for (int line = 1; *s; line++) {
        char *l = xstrline(&s);
        char *p = l;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strlen(p);
        while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
            p[--n] = 0;
        if (!*p || *p == '#') {
            free(l);
            continue;
        }
        if (strncmp(p, "export ", 7) == 0)
            p += 7;
        char *eq = strchr(p, '=');
        char *name_end = p;
        while (name_cont(*name_end))
            name_end++;
        if (!eq || !name_start(*p) || name_end != eq) {
            diag_add(d, path, line, "write NAME=value (NAME of letters, digits and _)",
                     "not a variable assignment");
            free(l);
            continue;
        }
        *eq = 0;
        char *v = eq + 1;
        size_t vl = strlen(v);
        if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
            v[vl - 1] = 0;
            v++;
        }
        long at = strlist_find(&out->names, p);
        if (at >= 0) {
            free(out->values.items[at]);
            out->values.items[at] = xstrdup(v);
        } else {
            strlist_push(&out->names, p);
            strlist_push(&out->values, v);
        }
        free(l);
    }
}

const char *env_lookup(const env_vars *e, const char *name)
{
    const char *v = getenv(name);
    if (v)
        return v;
    long at = strlist_find(&e->names, name);
    return at >= 0 ? e->values.items[at] : NULL;
}

/* Copies a comment starting at p (-- to the end of the line, or a block
 * comment) unexpanded: a ${NAME} in a comment is documentation. Returns
 * where the comment ends, counting its lines. */
static const char *copy_comment(tarn_buf *b, const char *p, int *line)
{
    const char *end;
    if (p[0] == '-') {
        end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
    } else {
        end = strstr(p + 2, "*/");
        end = end ? end + 2 : p + strlen(p);
    }
    for (const char *q = p; q < end; q++)
        if (*q == '\n')
            (*line)++;
    buf_append(b, p, (size_t)(end - p));
    return end;
}

/* Whether a value may stand outside quotes: one token that cannot start
 * a comment, end a statement or open a string — a number (123, -1.5) or
 * a name (abc, a_1), dotted names included (lake.main). */
static int bare_value_ok(const char *v)
{
    const char *p = v;
    if (*p == '-' || *p == '+')
        p++;
    if (isdigit((unsigned char)*p)) {
        while (isdigit((unsigned char)*p))
            p++;
        if (*p == '.' && isdigit((unsigned char)p[1]))
            for (p++; isdigit((unsigned char)*p);)
                p++;
        return *p == 0;
    }
    if (p != v)
        return 0;
    do {
        if (!name_start(*p))
            return 0;
        while (name_cont(*p))
            p++;
    } while (*p == '.' && *++p);
    return *p == 0;
}

/* Puts a variable's value (or default) where ${…} stood: a value, never
 * SQL. Inside '…' or "…" the quote is doubled, so the value stays inside
 * them; outside quotes it must be a number or a name (bare_value_ok).
 * Returns 0, or -1 after reporting the value. */
static int put_value(tarn_buf *b, diag_list *d, const char *path, int line, const char *name,
                     const char *v, size_t len, char quote)
{
    char *val = xstrndup(v, len);
    int rc = 0;
    if (quote) {
        for (const char *c = val; *c; c++) {
            if (*c == quote)
                buf_putc(b, quote);
            buf_putc(b, *c);
        }
    } else if (bare_value_ok(val)) {
        buf_puts(b, val);
    } else {
        char *fix = xasprintf("write '${%s}' to use it as text (quotes in it are escaped); "
                              "outside quotes a variable must be a number or a name",
                              name);
        diag_add(d, path, line, fix,
                 "${%s} is outside quotes and its value is not a number or a name: a "
                 "variable is a value, never SQL",
                 name);
        free(fix);
        rc = -1;
    }
    free(val);
    return rc;
}

char *env_expand(const env_vars *e, diag_list *d, const char *path, const char *text)
{
    tarn_buf b = {0};
    int line = 1, bad = 0;
    char quote = 0; /* inside '…' or "…": ${} is expanded there, -- is not a comment */
    for (const char *p = text; *p; p++) {
        if (!quote && ((p[0] == '-' && p[1] == '-') || (p[0] == '/' && p[1] == '*'))) {
            p = copy_comment(&b, p, &line) - 1;
            continue;
        }
        if (*p == '\'' || *p == '"') {
            if (!quote)
                quote = *p;
            else if (quote == *p)
                quote = 0; /* a doubled quote closes and reopens: same result */
        }
        if (*p == '\n')
            line++;
        if (p[0] != '$' || p[1] != '{') {
            buf_putc(&b, *p);
            continue;
        }
        const char *n = p + 2, *q = n;
        while (name_cont(*q))
            q++;
        const char *dflt = NULL;
        const char *close = q;
        if (q[0] == ':' && q[1] == '-') {
            dflt = q + 2;
            close = strchr(dflt, '}');
            if (close && memchr(dflt, '\n', (size_t)(close - dflt)))
                close = NULL;
        }
        if (q == n || !name_start(*n) || !close || *close != '}') {
            diag_add(d, path, line,
                     "write ${NAME} or ${NAME:-default}; NAME is letters, digits and _",
                     "malformed variable reference");
            bad = 1;
            buf_putc(&b, *p);
            continue;
        }
        char *name = xstrndup(n, (size_t)(q - n));
        const char *v = env_lookup(e, name);
        if (v) {
            bad |= put_value(&b, d, path, line, name, v, strlen(v), quote) != 0;
        } else if (dflt) {
            bad |= put_value(&b, d, path, line, name, dflt, (size_t)(close - dflt), quote) != 0;
        } else {
            char *fix = xasprintf("set %s in .env or in the environment, or write ${%s:-default}",
                                  name, name);
            diag_add(d, path, line, fix, "${%s} is not set", name);
            free(fix);
            bad = 1;
        }
        free(name);
        p = close;
    }
    if (bad) {
        buf_free(&b);
        return NULL;
    }
    return buf_detach(&b);
}

void env_free(env_vars *e)
{
    strlist_free(&e->names);
    strlist_free(&e->values);
}
