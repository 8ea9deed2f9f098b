/*
 * render.c — the three result formats of `tarn sql` (see render.h).
 *
 * The sink callbacks copy a statement's columns, rows and count into the
 * renderer; render_finish / render_error then print them in one go with
 * the format's printer. Collecting first costs memory proportional to the
 * result, which is fine for an interactive/scripting tool and is what
 * makes the output exact when a statement fails part-way.
 */
#include "cli/render.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/strlist.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct render {
    render_format fmt;
    FILE *out;
    tarn_sink sink;
    int stmt;
    tarn_output_kind kind;
    int have_cols; /* begin() was called for this statement */
    size_t ncols;
    char **names;
    char **cells; /* nrows * ncols, row-major; NULL is SQL NULL */
    size_t nrows, cap_rows;
    int have_count;
    int64_t count;
    int created; /* render_set_created */
    tarn_session *session; /* render_use_session */
    int json_typed;        /* cells are JSON text */
    size_t width;          /* table width limit, 0 = none */
    char *label;           /* render_set_label */
};

/* ---- collecting ------------------------------------------------------ */

static void sink_begin(void *ctx, size_t ncols, const char *const *names)
{
    render_begin(ctx, ncols, names);
}

static void sink_row(void *ctx, const char *const *cells)
{
    render_row(ctx, cells);
}

static void sink_end(void *ctx)
{
    render_end(ctx);
}

static void sink_count(void *ctx, int64_t n)
{
    render_count(ctx, n);
}

static void result_clear(render *r)
{
    strv_free(r->names, r->ncols);
    strv_free(r->cells, r->nrows * r->ncols);
    r->names = r->cells = NULL;
    r->ncols = r->nrows = r->cap_rows = 0;
    r->have_cols = r->have_count = 0;
    r->count = 0;
}

static void sink_kind(void *ctx, tarn_output_kind kind)
{
    ((render *)ctx)->kind = kind;
}

int render_format_parse(render_format *out, const char *name)
{
    static const char *const names[] = {"table", "csv", "json", "line", "json-typed"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (render_format)i;
            return 0;
        }
    }
    return tarn_error_set(
        TARN_EINVALID, "unknown format '%s' (expected table, csv, json, json-typed or line)", name);
}

render *render_new(render_format fmt, FILE *out)
{
    render *r = xcalloc(1, sizeof(*r));
    r->out = out;
    render_set_format(r, fmt);
    r->sink = (tarn_sink){sink_begin, sink_row, sink_end, sink_count, sink_kind, r};
    return r;
}

void render_use_session(render *r, tarn_session *s)
{
    r->session = s;
    render_set_format(r, render_get_format(r));
}

void render_set_format(render *r, render_format fmt)
{
    /* the typed form is JSON output whose cells the session hands over as
     * JSON text: everything else about it is RENDER_JSON's */
    r->json_typed = fmt == RENDER_JSON_TYPED;
    r->fmt = r->json_typed ? RENDER_JSON : fmt;
    if (r->session)
        tarn_session_set_json_cells(r->session, r->json_typed);
}

render_format render_get_format(const render *r)
{
    return r->json_typed ? RENDER_JSON_TYPED : r->fmt;
}

void render_set_width(render *r, size_t width)
{
    r->width = width;
}

size_t render_terminal_width(FILE *f)
{
    if (!isatty(fileno(f)))
        return 0;
    const char *env = getenv("COLUMNS");
    long n = env ? strtol(env, NULL, 10) : 0;
    if (n > 0)
        return (size_t)n;
    struct winsize ws;
    if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 0;
}

void render_free(render *r)
{
    if (!r)
        return;
    result_clear(r);
    free(r->label);
    free(r);
}

void render_set_label(render *r, const char *label)
{
    free(r->label);
    r->label = label ? xstrdup(label) : NULL;
}

void render_start(render *r, int stmt, tarn_output_kind kind)
{
    result_clear(r);
    render_set_label(r, NULL);
    r->stmt = stmt;
    r->kind = kind;
    r->created = 0;
}

void render_set_created(render *r)
{
    r->created = 1;
}

const tarn_sink *render_sink(render *r)
{
    return &r->sink;
}

void render_begin(render *r, size_t ncols, const char *const *names)
{
    result_clear(r); /* a second result set replaces the first */
    r->have_cols = 1;
    r->ncols = ncols;
    r->names = xcalloc(ncols, sizeof(char *));
    for (size_t i = 0; i < ncols; i++)
        r->names[i] = xstrdup(names[i] ? names[i] : "");
}

void render_row(render *r, const char *const *cells)
{
    if (!r->have_cols)
        return; /* rows without columns cannot be printed; session bug */
    if (r->nrows == r->cap_rows) {
        r->cap_rows = r->cap_rows ? 2 * r->cap_rows : 64;
        r->cells = xrealloc(r->cells, r->cap_rows * r->ncols * sizeof(char *));
    }
    char **dst = r->cells + r->nrows * r->ncols;
    for (size_t i = 0; i < r->ncols; i++)
        dst[i] = cells[i] ? xstrdup(cells[i]) : NULL;
    r->nrows++;
}

void render_end(render *r)
{
    /* Nothing to do: printing waits for render_finish, which also covers
     * sessions that never call end(). */
}

void render_count(render *r, int64_t n)
{
    r->have_count = 1;
    r->count = n;
}

static const char *cell_at(const render *r, size_t row, size_t col)
{
    return r->cells[row * r->ncols + col];
}

/* ---- UTF-8 ----------------------------------------------------------- */

#define UTF8_BAD UINT32_MAX

/* Decodes one code point from s (n > 0 bytes left). Returns the bytes
 * used (at least 1); *cp is UTF8_BAD for an invalid or truncated
 * sequence, which then counts as one byte. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len;
    uint32_t c, min;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    } else if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2, c = s[0] & 0x1F, min = 0x80;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3, c = s[0] & 0x0F, min = 0x800;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4, c = s[0] & 0x07, min = 0x10000;
    } else {
        *cp = UTF8_BAD;
        return 1;
    }
    if (len > n)
        len = 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            len = 0;
            break;
        }
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (len == 0 || c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        *cp = UTF8_BAD;
        return 1;
    }
    *cp = c;
    return len;
}

/* Terminal columns taken by a code point: 0 for combining marks, 2 for
 * the common East Asian wide / emoji blocks, else 1. A small table rather
 * than wcwidth(), which depends on the user's locale being UTF-8. */
static size_t codepoint_width(uint32_t c)
{
    if ((c >= 0x0300 && c <= 0x036F) || (c >= 0x200B && c <= 0x200F) || c == 0xFE0F)
        return 0;
    if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF && c != 0x303F) ||
        (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
        (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
        (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
        (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD))
        return 2;
    return 1;
}

static size_t utf8_width(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_decode((const unsigned char *)s + i, n - i, &cp);
        w += cp == UTF8_BAD ? 1 : codepoint_width(cp);
    }
    return w;
}

/* ---- CSV: the golden format ------------------------------------------ */

static void csv_field(FILE *out, const char *s)
{
    if (!s)
        return; /* SQL NULL: empty and unquoted, unlike '' */
    if (*s && !strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void csv_line(FILE *out, char *const *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', out);
        csv_field(out, fields[i]);
    }
    fputc('\n', out);
}

static void csv_rows(render *r)
{
    csv_line(r->out, r->names, r->ncols);
    for (size_t i = 0; i < r->nrows; i++)
        csv_line(r->out, r->cells + i * r->ncols, r->ncols);
    fputc('\n', r->out);
}

static void csv_count(render *r, int64_t n)
{
    fprintf(r->out, "Count\n%" PRId64 "\n\n", n);
}

/* ---- JSON lines ------------------------------------------------------ */

/* A JSON string for s; jansson rejects invalid UTF-8, which a BLOB-ish
 * VARCHAR could in principle carry, so bad bytes become U+FFFD. */
static json_t *json_text(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    tarn_buf b = {0};
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (cp == UTF8_BAD)
            buf_puts(&b, "\xEF\xBF\xBD");
        else
            buf_append(&b, s + i, len);
        i += len;
    }
    j = json_string(buf_cstr(&b));
    buf_free(&b);
    return j;
}

/* A typed cell: DuckDB's to_json text, parsed; what JSON has no spelling
 * for (Infinity, NaN) or jansson cannot hold (a HUGEINT past int64) stays
 * its text, as a string. */
static json_t *json_typed(const char *s)
{
    json_t *j = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    return j ? j : json_text(s);
}

static json_t *json_cells(char *const *cells, size_t n, int typed)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, !cells[i] ? json_null()
                                 : typed   ? json_typed(cells[i])
                                           : json_text(cells[i]));
    return a;
}

static json_t *json_result(const render *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "statement", json_integer(r->stmt));
    return o;
}

/* Writes the object as one line and releases it. */
static void json_emit(render *r, json_t *o)
{
    json_dumpf(o, r->out, JSON_PRESERVE_ORDER);
    fputc('\n', r->out);
    json_decref(o);
}

static void json_rows(render *r)
{
    json_t *o = json_result(r);
    json_t *rows = json_array();
    for (size_t i = 0; i < r->nrows; i++)
        json_array_append_new(rows, json_cells(r->cells + i * r->ncols, r->ncols, r->json_typed));
    json_object_set_new(o, "columns", json_cells(r->names, r->ncols, 0));
    json_object_set_new(o, "rows", rows);
    json_emit(r, o);
}

static void json_count(render *r, int64_t n)
{
    json_t *o = json_result(r);
    json_object_set_new(o, "count", json_integer(n));
    json_emit(r, o);
}

static void json_none(render *r)
{
    json_t *o = json_result(r);
    json_object_set_new(o, "ok", json_true());
    json_emit(r, o);
}

static void json_error(render *r, const char *msg)
{
    json_t *o = json_result(r);
    json_object_set_new(o, "error", json_text(msg ? msg : ""));
    json_emit(r, o);
}

/* ---- aligned table --------------------------------------------------- */

/* The text of a table cell: NULL is spelled out so that it differs from
 * the empty string. */
static const char *table_text(const char *s)
{
    return s ? s : "NULL";
}

/* Line `i` of a possibly multi-line value (NULL past the last line);
 * *len excludes the '\n' and a CR before it. */
static const char *text_line(const char *s, size_t i, size_t *len)
{
    for (; i > 0; i--) {
        s = strchr(s, '\n');
        if (!s)
            return NULL;
        s++;
    }
    const char *nl = strchr(s, '\n');
    *len = nl ? (size_t)(nl - s) : strlen(s);
    if (nl && *len > 0 && s[*len - 1] == '\r')
        (*len)--;
    return s;
}

static size_t text_nlines(const char *s)
{
    size_t n = 1;
    for (; (s = strchr(s, '\n')); s++)
        n++;
    return n;
}

static size_t text_width(const char *s)
{
    size_t w = 0, len;
    const char *line;
    for (size_t i = 0; (line = text_line(s, i, &len)); i++) {
        size_t lw = utf8_width(line, len);
        if (lw > w)
            w = lw;
    }
    return w;
}

/* A number as DuckDB prints one: sign, digits, fraction, exponent. Such
 * columns are right-aligned, as people expect numbers to be. */
static int looks_numeric(const char *s)
{
    int digits = 0;
    if (*s == '-' || *s == '+')
        s++;
    for (; (*s >= '0' && *s <= '9') || *s == '.'; s++)
        digits += *s != '.';
    if (digits && (*s == 'e' || *s == 'E')) {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return digits > 0 && *s == '\0';
}

typedef struct {
    size_t width;
    int right; /* right-align (numeric column) */
} table_col;

/* Narrows the widest columns until the table fits r->width (each column
 * keeps at least 5 characters, or its width when less). */
static void table_fit(const render *r, table_col *cols)
{
    if (!r->width || !r->ncols)
        return;
    for (;;) {
        size_t total = r->ncols - 1, widest = 0;
        for (size_t c = 0; c < r->ncols; c++) {
            total += cols[c].width + 2;
            if (cols[c].width > cols[widest].width)
                widest = c;
        }
        if (total <= r->width || cols[widest].width <= 5)
            return;
        cols[widest].width--;
    }
}

static void table_measure(const render *r, table_col *cols)
{
    for (size_t c = 0; c < r->ncols; c++) {
        size_t nonnull = 0, numeric = 0;
        cols[c].width = text_width(r->names[c]);
        for (size_t i = 0; i < r->nrows; i++) {
            const char *v = cell_at(r, i, c);
            size_t w = text_width(table_text(v));
            if (w > cols[c].width)
                cols[c].width = w;
            nonnull += v != NULL;
            numeric += v && looks_numeric(v);
        }
        cols[c].right = nonnull > 0 && numeric == nonnull;
    }
    table_fit(r, cols);
}

static void pad(tarn_buf *b, size_t n)
{
    while (n--)
        buf_putc(b, ' ');
}

/* Appends `len` bytes of s with control characters (tabs, stray CRs)
 * shown as spaces, which would otherwise break the alignment. */
static void put_visible(tarn_buf *b, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        buf_putc(b, (unsigned char)s[i] < 0x20 || s[i] == 0x7F ? ' ' : s[i]);
}

/* How many bytes of s (len bytes) fit in `width` display columns. */
static size_t prefix_fitting(const char *s, size_t len, size_t width)
{
    size_t i = 0, w = 0;
    while (i < len) {
        uint32_t cp;
        size_t n = utf8_decode((const unsigned char *)s + i, len - i, &cp);
        size_t cw = utf8_width(s + i, n);
        if (w + cw > width)
            break;
        w += cw;
        i += n;
    }
    return i;
}

/* One cell of one physical line. align: -1 left, 0 centre, 1 right. A
 * value wider than its column (cut to fit the terminal) ends in '…'. */
static void table_cell(tarn_buf *b, const char *s, size_t len, size_t width, int align)
{
    if (utf8_width(s, len) > width) {
        size_t keep = prefix_fitting(s, len, width ? width - 1 : 0);
        tarn_buf cut = {0};
        buf_append(&cut, s, keep);
        buf_puts(&cut, "\xE2\x80\xA6");
        table_cell(b, cut.ptr, cut.len, width, -1);
        buf_free(&cut);
        return;
    }
    size_t gap = width - utf8_width(s, len);
    size_t left = align > 0 ? gap : align == 0 ? gap / 2 : 0;
    buf_putc(b, ' ');
    pad(b, left);
    put_visible(b, s, len);
    pad(b, gap - left);
    buf_putc(b, ' ');
}

/* Writes the line, minus the padding at its end. */
static void table_flush_line(render *r, tarn_buf *b)
{
    while (b->len > 0 && b->ptr[b->len - 1] == ' ')
        b->len--;
    buf_putc(b, '\n');
    fwrite(b->ptr, 1, b->len, r->out);
    buf_clear(b);
}

/* One logical row, which spans several lines when a value has newlines. */
static void table_row(render *r, tarn_buf *b, char *const *vals, const table_col *cols, int header)
{
    size_t height = 1;
    for (size_t c = 0; c < r->ncols; c++) {
        size_t h = text_nlines(header ? vals[c] : table_text(vals[c]));
        if (h > height)
            height = h;
    }
    for (size_t l = 0; l < height; l++) {
        for (size_t c = 0; c < r->ncols; c++) {
            size_t len = 0;
            const char *line = text_line(header ? vals[c] : table_text(vals[c]), l, &len);
            if (c)
                buf_putc(b, '|');
            table_cell(b, line ? line : "", line ? len : 0, cols[c].width,
                       header ? 0 : cols[c].right ? 1 : -1);
        }
        table_flush_line(r, b);
    }
}

static void table_separator(render *r, tarn_buf *b, const table_col *cols)
{
    for (size_t c = 0; c < r->ncols; c++) {
        if (c)
            buf_putc(b, '+');
        for (size_t i = 0; i < cols[c].width + 2; i++)
            buf_putc(b, '-');
    }
    table_flush_line(r, b);
}

static void table_rows(render *r)
{
    table_col *cols = xcalloc(r->ncols, sizeof(*cols));
    tarn_buf b = {0};
    table_measure(r, cols);
    if (r->ncols > 0) {
        table_row(r, &b, r->names, cols, 1);
        table_separator(r, &b, cols);
        for (size_t i = 0; i < r->nrows; i++)
            table_row(r, &b, r->cells + i * r->ncols, cols, 0);
    }
    fprintf(r->out, "(%zu row%s)\n\n", r->nrows, r->nrows == 1 ? "" : "s");
    buf_free(&b);
    free(cols);
}

static void table_count(render *r, int64_t n)
{
    if (r->label)
        fprintf(r->out, "%s\n", r->label);
    fprintf(r->out, "%" PRId64 " row%s affected\n\n", n, n == 1 ? "" : "s");
}

/* ---- line mode (duckdb -line) ---------------------------------------- */

static void line_rows(render *r)
{
    size_t w = 0;
    for (size_t c = 0; c < r->ncols; c++)
        if (text_width(r->names[c]) > w)
            w = text_width(r->names[c]);
    for (size_t i = 0; i < r->nrows; i++) {
        if (i)
            fputc('\n', r->out);
        for (size_t c = 0; c < r->ncols; c++) {
            size_t nw = text_width(r->names[c]);
            fprintf(r->out, "%*s%s = %s\n", (int)(w - nw), "", r->names[c],
                    table_text(cell_at(r, i, c)));
        }
    }
    fputc('\n', r->out);
}

/* ---- dispatch -------------------------------------------------------- */

static void print_rows(render *r)
{
    switch (r->fmt) {
    case RENDER_TABLE: table_rows(r); break;
    case RENDER_CSV: csv_rows(r); break;
    case RENDER_JSON:
    case RENDER_JSON_TYPED:
        json_rows(r);
        break; /* (r->fmt is never the latter) */
    case RENDER_LINE:
        line_rows(r);
        break;
    }
}

static void print_count(render *r, int64_t n)
{
    switch (r->fmt) {
    case RENDER_TABLE: table_count(r, n); break;
    case RENDER_CSV: csv_count(r, n); break;
    case RENDER_JSON:
    case RENDER_JSON_TYPED:
        json_count(r, n);
        break;
    case RENDER_LINE:
        table_count(r, n);
        break;
    }
}

static void print_none(render *r)
{
    if (r->fmt != RENDER_JSON)
        return;
    if (!r->created) {
        json_none(r);
        return;
    }
    static const char *const count[] = {"Count"};
    render_begin(r, 1, count);
    json_rows(r);
}

void render_finish(render *r)
{
    if (r->kind == TARN_OUTPUT_ROWS && r->have_cols)
        print_rows(r);
    else if (r->kind == TARN_OUTPUT_COUNT)
        print_count(r, r->have_count ? r->count : 0);
    else
        print_none(r); /* includes a ROWS statement that sent no columns */
    result_clear(r);
}

void render_error(render *r, const char *msg)
{
    if (r->fmt == RENDER_CSV)
        fputs("#error\n\n", r->out);
    else if (r->fmt == RENDER_JSON)
        json_error(r, msg);
    result_clear(r);
}
