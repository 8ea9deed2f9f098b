/*
 * textmap.c — mapping an error position back through tarn's rewriting,
 * and the excerpt that shows it (see textmap.h).
 */
#include "util/textmap.h"

#include <string.h>

/* Fewest agreeing bytes that make an alignment believable: a short
 * stretch of text tarn added (a quote, a parenthesis, "AS ") can agree
 * with the user's text by chance. */
#define MIN_AGREE 8
/* Agreement is measured up to this many bytes on each side, and texts
 * longer than MAX_ORIG are not searched (a huge VALUES list repeats itself:
 * every alignment would agree at length), so an error never costs more
 * than a few million byte comparisons. */
#define MAX_AGREE 256
#define MAX_ORIG (64 * 1024)

static size_t agree_forward(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && i < MAX_AGREE && a[i] == b[i])
        i++;
    return i;
}

/* Bytes that agree going back from a[-1] and b[-1]. */
static size_t agree_back(const char *a, size_t na, const char *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && i < MAX_AGREE && a[-1 - (long)i] == b[-1 - (long)i])
        i++;
    return i;
}

long textmap_locate(const char *orig, const char *ran, long pos)
{
    size_t no = strlen(orig), nr = strlen(ran);
    if (pos < 0 || (size_t)pos > nr || no == 0)
        return -1;
    if ((size_t)pos == nr) {
        size_t tail = agree_back(orig + no, no, ran + nr, nr);
        return tail >= (no < MIN_AGREE ? no : MIN_AGREE) ? (long)no : -1;
    }
    if (strcmp(orig, ran) == 0)
        return pos;
    if (no > MAX_ORIG)
        return -1;
    size_t p = (size_t)pos, best = 0;
    long at = -1;
    for (size_t u = 0; u < no; u++) {
        if (orig[u] != ran[p])
            continue;
        size_t fwd = agree_forward(orig + u, no - u, ran + p, nr - p);
        size_t back = agree_back(orig + u, u, ran + p, p);
        if (fwd + back > best) {
            best = fwd + back;
            at = (long)u;
        }
    }
    return best >= (no < MIN_AGREE ? no : MIN_AGREE) ? at : -1;
}

/* How much of a long line the excerpt shows on each side of the byte. */
#define EXCERPT_SIDE 60

void textmap_excerpt(tarn_buf *out, const char *text, size_t pos, int first_line)
{
    size_t n = strlen(text);
    if (pos > n)
        pos = n;
    size_t start = pos, end = pos;
    int line = first_line;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    while (end < n && text[end] != '\n')
        end++;
    for (size_t i = 0; i < start; i++)
        line += text[i] == '\n';
    int cut_left = pos - start > EXCERPT_SIDE, cut_right = end - pos > EXCERPT_SIDE;
    size_t from = cut_left ? pos - EXCERPT_SIDE : start, to = cut_right ? pos + EXCERPT_SIDE : end;
    size_t mark = out->len;
    buf_printf(out, "\n\nLINE %d: %s", line, cut_left ? "..." : "");
    size_t lead = out->len - mark - 2; /* the caret's column: after "LINE n: " */
    buf_append(out, text + from, to - from);
    buf_puts(out, cut_right ? "...\n" : "\n");
    for (size_t i = 0; i < lead; i++)
        buf_putc(out, ' ');
    for (size_t i = from; i < pos; i++)
        buf_putc(out, text[i] == '\t' ? '\t' : ' '); /* tabs keep the caret aligned */
    buf_putc(out, '^');
}
