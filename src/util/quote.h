/*
 * quote.h — the one place identifiers and literals are quoted for SQL.
 *
 * Every name or value that tarn splices into SQL text goes through these:
 * identifiers become "..." with inner quotes doubled, literals '...' with
 * inner quotes doubled. Nothing else in tarn builds quoted text by hand.
 */
#ifndef TARN_QUOTE_H
#define TARN_QUOTE_H

#include "util/buf.h"

/* Appends `name` as a double-quoted SQL identifier. */
void quote_ident(tarn_buf *b, const char *name);
/* Appends `s` as a single-quoted SQL string literal; NULL appends NULL. */
void quote_literal(tarn_buf *b, const char *s);
/* The inverse of quote_literal for text that is exactly one '...' literal
 * (surrounding blanks allowed): *out (malloc'd) gets its value and 1 is
 * returned; 0 for anything else (an expression, E'…', a NULL). */
int quote_unliteral(char **out, const char *sql);
/* Appends "a"."b" (schema-qualified), or "c"."a"."b" when catalog is set. */
void quote_qualified(tarn_buf *b, const char *catalog, const char *schema, const char *name);
/* Appends `prefix` (SQL already: quoted identifiers joined by dots, such as
 * "catalog"."schema"), a dot and the quoted name. */
void quote_prefixed(tarn_buf *b, const char *prefix, const char *name);
/* n identifiers / string literals separated by ", ": column lists and
 * IN (…) lists. */
void quote_ident_list(tarn_buf *b, char *const *items, size_t n);
void quote_literal_list(tarn_buf *b, char *const *items, size_t n);
/* Appends `s` in DuckLake's changes_made/column_aliases form: "..." with "" escaping. */
#define quote_changes_name quote_ident

/* Returns 1 when `name` may be used verbatim as a file-system path segment
 * (only [A-Za-z0-9_-], not empty) — DuckLake's rule for schema/table dirs. */
int quote_is_plain_path_segment(const char *name);

#endif
