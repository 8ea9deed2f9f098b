/*
 * error.h — tarn's one error-reporting path.
 *
 * Every libtarn function that can fail returns an int: 0 on success, a
 * negative TARN_E* code on failure, and leaves a human message in a
 * thread-local slot read with tarn_error_last(). Callers that add context
 * prefix the message with tarn_error_prefix(), so the text that reaches the
 * user reads outermost-first ("INSERT INTO lake.t: Conversion Error: ...").
 */
#ifndef TARN_ERROR_H
#define TARN_ERROR_H

enum {
    TARN_OK = 0,
    TARN_ERROR = -1,        /* generic failure, message says why */
    TARN_ENOTFOUND = -2,    /* a named object does not exist */
    TARN_EUNSUPPORTED = -3, /* valid SQL tarn does not implement yet */
    TARN_EINVALID = -4,     /* bad input from the user */
    TARN_ECONFLICT = -5,    /* concurrent writer / lock */
    TARN_ELOST = -6,        /* the connection to a catalog database was lost (the server or
                               the network dropped it): a commit in flight may or may not
                               have landed */
};

/* Sets the thread's last error (printf-style) and returns `code`. */
int tarn_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes the current message with printf-style context; returns `code`. */
int tarn_error_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The thread's last error message ("" when none). Owned by tarn; valid
 * until the next tarn call on this thread. */
const char *tarn_error_last(void);

/* The code passed to the last tarn_error_set (TARN_OK when cleared). */
int tarn_error_code(void);

void tarn_error_clear(void);

/* Where in a SQL text the current error points (DuckDB's error position):
 * set after tarn_error_set, kept by tarn_error_prefix, cleared by the next
 * tarn_error_set. `sql` is copied. A layer that rewrote a statement before
 * running it maps the position back to the text it was given (textmap.h). */
void tarn_error_set_position(const char *sql, long pos);

/* The position of the current error in *sql, or -1 (and *sql NULL) when it
 * has none. *sql is owned by the slot. */
long tarn_error_position(const char **sql);

/* The current error, taken out of the slot (which is left clear), to be put
 * back with tarn_error_restore: cleanup that runs after a failure (a
 * rollback, dropping scratch tables) may fail or clear errors itself, and
 * the message the user sees must be the one that stopped the statement. */
typedef struct {
    char *msg;
    int code;
    char *sql;
    long pos;
} tarn_error_saved;
tarn_error_saved tarn_error_save(void);
void tarn_error_restore(tarn_error_saved *saved);

/* Replaces every occurrence of `from` in the current message by `to` (to
 * speak of the user's objects rather than tarn's internal ones). */
void tarn_error_replace(const char *from, const char *to);

#endif
