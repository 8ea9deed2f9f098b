/*
 * textmap.h — where a position in a rewritten SQL text came from in the
 * text it was rewritten from, and the excerpt that shows it to the user.
 *
 * tarn rewrites statements by splicing: a build pins each table reference
 * and wraps the query in its strategy's statement, the session turns lake
 * reads into scans and wraps queries to read their rows as text. Between
 * the splices the user's text is kept byte for byte. DuckDB reports an
 * error's position in the text it ran; the user must see it in the text
 * they wrote, or not at all (never tarn's generated SQL).
 */
#ifndef TARN_UTIL_TEXTMAP_H
#define TARN_UTIL_TEXTMAP_H

#include "util/buf.h"

#include <stddef.h>

/* The offset in `orig` of byte `pos` of `ran`, where `ran` is `orig` with
 * spans replaced and text added around it: the alignment of `ran` and
 * `orig` around `pos` that agrees over the most bytes on both sides of it.
 * -1 when `pos` lies in text tarn added (no alignment agrees on at least a
 * few bytes, or on the byte at `pos` itself). A position at the end of
 * `ran` (an error "at end of input") maps to the end of `orig` when their
 * ends agree. A text over 64 KiB (unless `ran` is the same text) maps
 * nowhere: its position would cost too much to find. */
long textmap_locate(const char *orig, const char *ran, long pos);

/* Appends DuckDB's kind of excerpt for byte `pos` of `text`, whose first
 * line is line `first_line` of its file: "\n\nLINE n: <that line>\n" and
 * a caret under the byte. Long lines are cut around the byte. */
void textmap_excerpt(tarn_buf *out, const char *text, size_t pos, int first_line);

#endif
