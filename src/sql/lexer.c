/*
 * lexer.c — DuckDB SQL tokenizer, script splitter and statement classifier
 * (see lexer.h).
 *
 * The lexer only has to be right about where tokens begin and end (so that
 * a ';' inside a string, quoted name, comment or dollar quote never ends a
 * statement) and about the decoded text of names and strings; what the
 * tokens mean is DuckDB's business.
 */
#include "sql/lexer.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- character classes ------------------------------------------------ */

static int is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int is_xdigit(unsigned char c)
{
    return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static int is_alpha(unsigned char c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

/* Bytes >= 0x80 belong to UTF-8 characters, which DuckDB accepts in bare
 * names just like letters. */
static int is_ident_start(unsigned char c)
{
    return is_alpha(c) || c == '_' || c >= 0x80;
}

static int is_ident_cont(unsigned char c)
{
    return is_ident_start(c) || is_digit(c) || c == '$';
}

/* Dollar-quote tags and $name parameters: like a name, but never '$'
 * (the '$' ends the tag). */
static int is_tag_cont(unsigned char c)
{
    return is_ident_start(c) || is_digit(c);
}

static size_t span_of(const char *s, int (*pred)(unsigned char))
{
    size_t n = 0;
    while (s[n] && pred((unsigned char)s[n]))
        n++;
    return n;
}

static char ascii_upper(char c)
{
    return (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
}

/* ASCII-only case-insensitive compare of n bytes; locale-independent on
 * purpose, SQL keywords are ASCII. */
static int ascii_ieq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!a[i] || ascii_upper(a[i]) != ascii_upper(b[i]))
            return 0;
    return 1;
}

/* ---- scanner state ----------------------------------------------------- */

typedef struct {
    const char *src;
    size_t pos;      /* next byte to read */
    size_t line_pos; /* newlines before this byte are counted in `line` */
    int line;        /* 1-based line of src[line_pos] */
} lexer;

/* The line of byte `pos`. Positions are asked for in increasing order, so
 * counting resumes where it stopped and the whole scan stays linear. */
static int lexer_line(lexer *lx, size_t pos)
{
    for (; lx->line_pos < pos; lx->line_pos++)
        if (lx->src[lx->line_pos] == '\n')
            lx->line++;
    return lx->line;
}

/* End of the block comment opening at p, or NULL when unterminated.
 * DuckDB (like Postgres) nests block comments, so depth is counted. */
static const char *block_comment_end(const char *p)
{
    int depth = 0;
    while (*p) {
        if (p[0] == '/' && p[1] == '*') {
            depth++;
            p += 2;
        } else if (p[0] == '*' && p[1] == '/') {
            p += 2;
            if (--depth == 0)
                return p;
        } else {
            p++;
        }
    }
    return NULL;
}

/* Skips whitespace and comments. Returns -1, with lx->pos at its opening
 * slash, on an unterminated block comment; the caller decides whether that
 * is an error (sql_first_keyword just gives up). */
static int lexer_skip_trivia(lexer *lx)
{
    const char *s = lx->src;
    for (;;) {
        const char *p = s + lx->pos;
        if (is_space((unsigned char)*p)) {
            lx->pos++;
        } else if (p[0] == '-' && p[1] == '-') {
            lx->pos += strcspn(p, "\n");
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = block_comment_end(p);
            if (!end)
                return -1;
            lx->pos = (size_t)(end - s);
        } else {
            return 0;
        }
    }
}

/* ---- escapes in E'...' strings ----------------------------------------- */

static void utf8_put(tarn_buf *out, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | ((cp >> 18) & 0x07));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    buf_append(out, b, n);
}

static int digit_value(char c)
{
    if (is_digit((unsigned char)c))
        return c - '0';
    return (c | 0x20) - 'a' + 10;
}

/* Reads up to `max` digits of `base` (8 or 16) at s into *val; returns how
 * many were read. */
static size_t escape_digits(const char *s, int base, size_t max, uint32_t *val)
{
    size_t n = 0;
    *val = 0;
    for (; n < max && s[n]; n++) {
        int ok = base == 16 ? is_xdigit((unsigned char)s[n]) : (s[n] >= '0' && s[n] <= '7');
        if (!ok)
            break;
        *val = *val * (uint32_t)base + (uint32_t)digit_value(s[n]);
    }
    return n;
}

/* Numeric escapes (Postgres rules): \ooo octal and \xHH bytes, \uXXXX and
 * \UXXXXXXXX code points. s points at the letter or first octal digit.
 * With no digits the escape is just the letter, as in Postgres. */
static size_t numeric_escape(const char *s, tarn_buf *out)
{
    uint32_t v;
    size_t n;
    if (*s >= '0' && *s <= '7') {
        n = escape_digits(s, 8, 3, &v);
        buf_putc(out, (char)v);
        return n;
    }
    size_t max = *s == 'x' ? 2 : *s == 'u' ? 4 : 8;
    n = escape_digits(s + 1, 16, max, &v);
    if (n == 0)
        buf_putc(out, *s);
    else if (*s == 'x')
        buf_putc(out, (char)v);
    else
        utf8_put(out, v);
    return n + 1;
}

/* Decodes the backslash escape at s ('\\') into out; returns its length.
 * A backslash at the very end consumes just itself, leaving the string
 * unterminated. */
static size_t backslash_escape(const char *s, tarn_buf *out)
{
    static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";
    char c = s[1];
    if (!c)
        return 1;
    const char *simple = strchr(from, c);
    if (simple) {
        buf_putc(out, to[simple - from]);
        return 2;
    }
    if ((c >= '0' && c <= '7') || c == 'x' || c == 'u' || c == 'U')
        return 1 + numeric_escape(s + 1, out);
    buf_putc(out, c); /* \\, \', and any other character stand for themselves */
    return 2;
}

/* ---- tokens ------------------------------------------------------------ */

/* Finishes a token whose text is its source bytes. */
static int lex_simple(lexer *lx, sql_token *t, sql_tok_type type, size_t n)
{
    t->type = type;
    t->text = xstrndup(lx->src + lx->pos, n);
    lx->pos += n;
    return 0;
}

/* Decodes the body of a quoted token starting at s (the opening quote q):
 * a doubled quote stands for one, and with `backslash` \ escapes too.
 * Returns the length including both quotes, or 0 when unterminated. */
static size_t quoted_body(const char *s, int backslash, tarn_buf *out)
{
    char q = s[0];
    size_t i = 1;
    while (s[i]) {
        if (s[i] == q && s[i + 1] == q) {
            buf_putc(out, q);
            i += 2;
        } else if (s[i] == q) {
            return i + 1;
        } else if (backslash && s[i] == '\\') {
            i += backslash_escape(s + i, out);
        } else {
            buf_putc(out, s[i++]);
        }
    }
    return 0;
}

/* '...', "..." and E'...' (prefix 1: the E). */
static int lex_quoted(lexer *lx, sql_token *t, sql_tok_type type, size_t prefix)
{
    tarn_buf text = {0};
    size_t n = quoted_body(lx->src + lx->pos + prefix, prefix == 1, &text);
    if (n == 0) {
        buf_free(&text);
        return tarn_error_set(TARN_EINVALID, "line %d: unterminated %s", t->line,
                              type == SQL_TOK_QIDENT ? "quoted identifier" : "string literal");
    }
    t->type = type;
    t->text = buf_detach(&text);
    lx->pos += prefix + n;
    return 0;
}

/* Length of the "$tag$" (or "$$") opener at s, 0 when s does not open a
 * dollar quote. Tags follow Postgres: a name that contains no '$'. */
static size_t dollar_tag_len(const char *s)
{
    size_t i = 1;
    if (s[i] != '$') {
        if (!is_ident_start((unsigned char)s[i]))
            return 0;
        i += span_of(s + i, is_tag_cont);
        if (s[i] != '$')
            return 0;
    }
    return i + 1;
}

/* $tag$ ... $tag$: the body is taken verbatim up to the same tag. */
static int lex_dollar_quote(lexer *lx, sql_token *t, size_t tag_len)
{
    const char *s = lx->src + lx->pos;
    char *tag = xstrndup(s, tag_len);
    const char *close = strstr(s + tag_len, tag);
    free(tag);
    if (!close)
        return tarn_error_set(TARN_EINVALID, "line %d: unterminated dollar-quoted string", t->line);
    t->type = SQL_TOK_STRING;
    t->text = xstrndup(s + tag_len, (size_t)(close - s) - tag_len);
    lx->pos += (size_t)(close - s) + tag_len;
    return 0;
}

/* '$' starts a positional parameter ($1), a dollar quote ($$, $tag$) or a
 * named parameter ($name, a tag that is not closed by '$'). */
static int lex_dollar(lexer *lx, sql_token *t)
{
    const char *s = lx->src + lx->pos;
    if (is_digit((unsigned char)s[1]))
        return lex_simple(lx, t, SQL_TOK_PARAM, 1 + span_of(s + 1, is_digit));
    size_t tag_len = dollar_tag_len(s);
    if (tag_len)
        return lex_dollar_quote(lx, t, tag_len);
    if (is_ident_start((unsigned char)s[1]))
        return lex_simple(lx, t, SQL_TOK_PARAM, 1 + span_of(s + 1, is_tag_cont));
    return lex_simple(lx, t, SQL_TOK_OP, 1);
}

/* Digits with DuckDB's '_' separators (1_000_000): a '_' counts only when
 * a digit follows it. */
static size_t digits_len(const char *s, int (*digit)(unsigned char))
{
    size_t i = 0;
    while (digit((unsigned char)s[i]) || (s[i] == '_' && digit((unsigned char)s[i + 1])))
        i++;
    return i;
}

/* 42, 4.2, .42, 42., 4.2e-1, 0x2A. */
static size_t number_len(const char *s)
{
    if (s[0] == '0' && (s[1] | 0x20) == 'x' && is_xdigit((unsigned char)s[2]))
        return 2 + digits_len(s + 2, is_xdigit);
    size_t i = digits_len(s, is_digit);
    if (s[i] == '.')
        i += 1 + digits_len(s + i + 1, is_digit);
    if ((s[i] | 0x20) == 'e') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-')
            j++;
        if (is_digit((unsigned char)s[j]))
            i = j + digits_len(s + j, is_digit);
    }
    return i;
}

/* Longest operator at s; anything not listed is a one-byte token. */
static size_t op_len(const char *s)
{
    static const char *const ops[] = {"->>", "::", ":=", "=>", "<>", "!=", "<=", ">=", "==",
                                      "||",  "->", "**", "//", "<<", ">>", "@>", "<@", "&&"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strncmp(s, ops[i], strlen(ops[i])) == 0)
            return strlen(ops[i]);
    return 1;
}

/* Scans the token at lx->pos (no trivia there). t->line is already set. */
static int lexer_scan(lexer *lx, sql_token *t)
{
    const char *s = lx->src + lx->pos;
    unsigned char c = (unsigned char)s[0];
    if (!c)
        return lex_simple(lx, t, SQL_TOK_EOF, 0);
    if (c == '\'' || c == '"')
        return lex_quoted(lx, t, c == '"' ? SQL_TOK_QIDENT : SQL_TOK_STRING, 0);
    if ((c == 'E' || c == 'e') && s[1] == '\'')
        return lex_quoted(lx, t, SQL_TOK_STRING, 1);
    if (c == '$')
        return lex_dollar(lx, t);
    if (is_ident_start(c))
        return lex_simple(lx, t, SQL_TOK_IDENT, span_of(s, is_ident_cont));
    if (is_digit(c) || (c == '.' && is_digit((unsigned char)s[1])))
        return lex_simple(lx, t, SQL_TOK_NUMBER, number_len(s));
    if (c == '?') /* DuckDB also takes ?1 */
        return lex_simple(lx, t, SQL_TOK_PARAM, 1 + span_of(s + 1, is_digit));
    if (c == ';')
        return lex_simple(lx, t, SQL_TOK_SEMI, 1);
    return lex_simple(lx, t, SQL_TOK_OP, op_len(s));
}

static int lexer_next(lexer *lx, sql_token *t)
{
    if (lexer_skip_trivia(lx) < 0)
        return tarn_error_set(TARN_EINVALID, "line %d: unterminated comment",
                              lexer_line(lx, lx->pos));
    t->start = lx->pos;
    t->line = lexer_line(lx, lx->pos);
    int rc = lexer_scan(lx, t);
    t->len = lx->pos - t->start;
    return rc;
}

int sql_tokenize(sql_tokens *out, const char *sql)
{
    lexer lx = {.src = sql, .line = 1};
    size_t cap = 0;
    memset(out, 0, sizeof *out);
    for (;;) {
        if (out->n == cap) {
            cap = cap ? cap * 2 : 16;
            out->toks = xrealloc(out->toks, cap * sizeof *out->toks);
        }
        sql_token *t = &out->toks[out->n];
        memset(t, 0, sizeof *t);
        int rc = lexer_next(&lx, t);
        if (rc < 0) {
            sql_tokens_free(out); /* the failed slot has no text: free(NULL) */
            return rc;
        }
        if (t->type == SQL_TOK_EOF)
            return 0;
        out->n++;
    }
}

void sql_tokens_free(sql_tokens *t)
{
    if (t->toks)
        for (size_t i = 0; i <= t->n; i++)
            free(t->toks[i].text);
    free(t->toks);
    t->toks = NULL;
    t->n = 0;
}

int sql_tok_is_kw(const sql_token *t, const char *kw)
{
    size_t n = strlen(kw);
    return t->type == SQL_TOK_IDENT && strlen(t->text) == n && ascii_ieq(t->text, kw, n);
}

int sql_tok_is_op(const sql_token *t, const char *op)
{
    return t->type == SQL_TOK_OP && strcmp(t->text, op) == 0;
}

int sql_tokens_is_op(const sql_tokens *tk, size_t i, const char *op)
{
    return i < tk->n && sql_tok_is_op(&tk->toks[i], op);
}

size_t sql_tokens_item_end(const sql_tokens *tk, size_t i, size_t to)
{
    int depth = 0;
    for (; i < to; i++) {
        const sql_token *t = &tk->toks[i];
        if (sql_tok_is_op(t, "(") || sql_tok_is_op(t, "[") || sql_tok_is_op(t, "{"))
            depth++;
        else if (sql_tok_is_op(t, ")") || sql_tok_is_op(t, "]") || sql_tok_is_op(t, "}"))
            depth--;
        else if (depth == 0 && sql_tok_is_op(t, ","))
            break;
    }
    return i;
}

size_t sql_tokens_close_paren(const sql_tokens *tk, size_t i)
{
    int depth = 0;
    for (size_t k = i; k < tk->n; k++) {
        if (sql_tok_is_op(&tk->toks[k], "("))
            depth++;
        else if (sql_tok_is_op(&tk->toks[k], ")") && --depth == 0)
            return k;
    }
    return tk->n;
}

/* ---- script splitting -------------------------------------------------- */

/* Adds the statement spanning tokens first..last. The text runs from the
 * first token to the end of the last one: leading comments (file headers,
 * notes about the next statement) and trailing ones are left out, so the
 * text starts on `line` and can be wrapped in (...) without a trailing
 * "--" comment swallowing the closing parenthesis. */
static void script_push(sql_script *s, size_t *cap, const char *src, const sql_token *first,
                        const sql_token *last)
{
    if (s->n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        s->items = xrealloc(s->items, *cap * sizeof *s->items);
    }
    size_t end = last->start + last->len;
    s->items[s->n].text = xstrndup(src + first->start, end - first->start);
    s->items[s->n].line = first->line;
    s->n++;
}

int sql_split(sql_script *out, const char *text)
{
    sql_tokens toks;
    size_t cap = 0, first = 0;
    memset(out, 0, sizeof *out);
    int rc = sql_tokenize(&toks, text);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i <= toks.n; i++) { /* toks[n] is EOF: ends the last statement */
        sql_tok_type type = toks.toks[i].type;
        if (type != SQL_TOK_SEMI && type != SQL_TOK_EOF)
            continue;
        if (i > first) /* no tokens since the last ';' → empty statement */
            script_push(out, &cap, text, &toks.toks[first], &toks.toks[i - 1]);
        first = i + 1;
    }
    sql_tokens_free(&toks);
    return 0;
}

void sql_script_free(sql_script *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i].text);
    free(s->items);
    s->items = NULL;
    s->n = 0;
}

/* ---- first keyword ----------------------------------------------------- */

void sql_first_keyword(const char *stmt, char *buf, size_t n)
{
    lexer lx = {.src = stmt, .line = 1};
    if (n == 0)
        return;
    buf[0] = '\0';
    for (;;) {
        if (lexer_skip_trivia(&lx) < 0)
            return;
        if (stmt[lx.pos] != '(')
            break;
        lx.pos++;
    }
    const char *s = stmt + lx.pos;
    if (!is_ident_start((unsigned char)*s) || ((*s == 'E' || *s == 'e') && s[1] == '\''))
        return; /* not a bare word (E'...' is a string) */
    size_t len = span_of(s, is_ident_cont);
    /* A word that does not fit cannot be a keyword the caller looks for;
     * truncating it could forge one ("SELECTED" → "SELECT"). */
    if (len >= n)
        return;
    for (size_t i = 0; i < len; i++)
        buf[i] = ascii_upper(s[i]);
    buf[len] = '\0';
}

int sql_tokenize_kw(sql_tokens *out, const char *sql, char *kw, size_t n)
{
    int rc = sql_tokenize(out, sql);
    if (!rc)
        sql_first_keyword(sql, kw, n);
    return rc;
}

/* ---- output kind --------------------------------------------------------
 * The golden suite's oracle (ducklake-golden/check.py, classify()) decides
 * from the raw text what each statement prints, and tarn must print the
 * same thing, so this mirrors that Python text-matching rather than the
 * lexer: block comments do not nest, '(' is not skipped, the first word is
 * [A-Za-z_]+, and CREATE ... AS is matched as check.py's _CTAS regex does.
 * Additions the oracle does not make, none of which the cases use:
 * PIVOT / UNPIVOT / EXPLAIN print rows, and TEMP / TEMPORARY tables count. */

/* Python's str.isspace() on ASCII (it also knows Unicode spaces, which no
 * script uses before a keyword). */
static int is_py_space(unsigned char c)
{
    return is_space(c) || (c >= 0x1C && c <= 0x1F);
}

static const char *skip_py_space(const char *s)
{
    while (*s && is_py_space((unsigned char)*s))
        s++;
    return s;
}

/* Where the comment starting at s ends (past its terminator); NULL when
 * unterminated. check.py looks for the star-slash from the opening
 * slash-star itself, so a lone slash right after the opener already closes
 * it: the search starts at s + 1. */
static const char *py_comment_end(const char *s)
{
    const char *end = s[0] == '-' ? strchr(s, '\n') : strstr(s + 1, "*/");
    if (!end)
        return NULL;
    return end + (s[0] == '-' ? 1 : 2);
}

/* check.py's _strip_leading_comments: whitespace, -- lines and unnested
 * block comments. */
static const char *strip_leading_comments(const char *s)
{
    for (s = skip_py_space(s);; s = skip_py_space(s)) {
        if (!(s[0] == '-' && s[1] == '-') && !(s[0] == '/' && s[1] == '*'))
            return s;
        const char *end = py_comment_end(s);
        if (!end)
            return s + strlen(s);
        s = end;
    }
}

static int is_word_char(unsigned char c)
{
    return is_alpha(c) || c == '_';
}

/* Python's \w (for \b): ASCII letters, digits, '_', and -- approximately --
 * every non-ASCII character. */
static int is_py_wordchar(unsigned char c)
{
    return is_word_char(c) || is_digit(c) || c >= 0x80;
}

static int word_in(const char *w, size_t n, const char *const *list)
{
    for (; *list; list++)
        if (strlen(*list) == n && ascii_ieq(w, *list, n))
            return 1;
    return 0;
}

/* Matches `kw` (any case) followed by whitespace (regex KW\s+) at *p and
 * moves past both. */
static int match_kw(const char **p, const char *kw)
{
    size_t n = strlen(kw);
    if (!ascii_ieq(*p, kw, n) || !is_py_space((unsigned char)(*p)[n]))
        return 0;
    *p = skip_py_space(*p + n);
    return 1;
}

/* An optional group of keywords, (?:A\s+B\s+)?: all of them or none. */
static void match_optional(const char **p, const char *const *kws)
{
    const char *q = *p;
    for (; *kws; kws++)
        if (!match_kw(&q, *kws))
            return;
    *p = q;
}

static int is_name_cont(unsigned char c)
{
    return is_word_char(c) || is_digit(c) || c == '$';
}

/* One name part, "(?:[^"]|"")*" or [A-Za-z_][A-Za-z0-9_$]*; returns its
 * end, NULL when there is none. */
static const char *match_name_part(const char *p)
{
    if (*p != '"')
        return is_word_char((unsigned char)*p) ? p + 1 + span_of(p + 1, is_name_cont) : NULL;
    for (p++; *p; p++) {
        if (*p != '"')
            continue;
        if (p[1] != '"')
            return p + 1;
        p++;
    }
    return NULL;
}

/* A possibly qualified name: part (\s*\.\s*part)*. A dangling '.' is left
 * unconsumed; the "\s+AS" that must follow then fails, as in the regex. */
static const char *match_name(const char *p)
{
    p = match_name_part(p);
    while (p) {
        const char *dot = skip_py_space(p);
        const char *next = *dot == '.' ? match_name_part(skip_py_space(dot + 1)) : NULL;
        if (!next)
            return p;
        p = next;
    }
    return NULL;
}

/* CREATE [OR REPLACE] [TEMP|TEMPORARY] TABLE [IF NOT EXISTS] name AS\b */
static int is_ctas(const char *p)
{
    static const char *const or_replace[] = {"OR", "REPLACE", NULL};
    static const char *const if_not_exists[] = {"IF", "NOT", "EXISTS", NULL};
    if (!match_kw(&p, "CREATE"))
        return 0;
    match_optional(&p, or_replace);
    if (!match_kw(&p, "TEMP"))
        match_kw(&p, "TEMPORARY");
    if (!match_kw(&p, "TABLE"))
        return 0;
    match_optional(&p, if_not_exists);
    const char *end = match_name(p);
    if (!end || !is_py_space((unsigned char)*end))
        return 0;
    p = skip_py_space(end);
    return ascii_ieq(p, "AS", 2) && !is_py_wordchar((unsigned char)p[2]);
}

/* MERGE … RETURNING gives rows, a MERGE without it the count of rows it
 * changed. */
static int merge_returns(const char *stmt)
{
    sql_tokens tk;
    if (sql_tokenize(&tk, stmt) != 0) {
        tarn_error_clear();
        return 0;
    }
    int found = 0;
    for (size_t i = 0; i < tk.n && !found; i++)
        found = sql_tok_is_kw(&tk.toks[i], "RETURNING");
    sql_tokens_free(&tk);
    return found;
}

tarn_output_kind sql_output_kind(const char *stmt)
{
    static const char *const rows[] = {"SELECT", "FROM",     "WITH",    "VALUES",
                                       "TABLE",  "DESCRIBE", "SHOW",    "SUMMARIZE",
                                       "PIVOT",  "UNPIVOT",  "EXPLAIN", NULL};
    static const char *const count[] = {"INSERT", "UPDATE", "DELETE", NULL};
    const char *s = strip_leading_comments(stmt);
    size_t n = span_of(s, is_word_char);
    if (word_in(s, n, rows))
        return TARN_OUTPUT_ROWS;
    if (n == 5 && ascii_ieq(s, "MERGE", 5))
        return merge_returns(s) ? TARN_OUTPUT_ROWS : TARN_OUTPUT_COUNT;
    if (word_in(s, n, count) || is_ctas(s))
        return TARN_OUTPUT_COUNT;
    return TARN_OUTPUT_NONE;
}
