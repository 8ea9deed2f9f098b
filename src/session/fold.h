/*
 * fold.h — COUNT(*), MIN and MAX of a lake table answered from its
 * statistics (fold.c).
 */
#ifndef TARN_SESSION_FOLD_H
#define TARN_SESSION_FOLD_H

#include "sql/lexer.h"
#include "tarn/session.h"

/* When statement `sql` (tokens tk) only asks one lake table, as the
 * session reads it now, for COUNT(*), MIN(col) and MAX(col) that its
 * catalog statistics answer exactly, *out gets the statement answering
 * it with constants (an EXPLAIN kept in front) and 1 is returned; else 0
 * (*out NULL): the statement reads the table's files. */
int session_fold_aggregates(char **out, tarn_session *s, const sql_tokens *tk, const char *sql);

#endif
