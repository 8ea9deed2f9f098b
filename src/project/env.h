/*
 * env.h — the variables of a project's config: `.env` plus the process
 * environment, and ${VAR} expansion.
 *
 * `.env` holds NAME=value lines (blank lines and # comments allowed, an
 * optional `export ` prefix, values optionally in '…' or "…"). A variable
 * set in the environment wins over `.env`, so a deployment can override a
 * developer default without editing files. In the config/ files, ${NAME} is
 * replaced by the value, and ${NAME:-default} by the default when NAME is
 * unset; an unset NAME without a default is an error with file:line.
 * Comments are left as they are (a ${NAME} there documents a variable);
 * strings and quoted names are expanded (that is where paths live).
 *
 * A value is a value, never SQL: inside '…' or "…" its quote character is
 * doubled, so it cannot end the string or name; outside quotes it must be
 * a number or a (dotted) name, else it is an error with file:line.
 */
#ifndef TARN_PROJECT_ENV_H
#define TARN_PROJECT_ENV_H

#include "project/diag.h"
#include "util/strlist.h"

typedef struct {
    strlist names;
    strlist values;
} env_vars;

/* Reads `.env` text (from file `path`, for messages); bad lines go to `d`. */
void env_parse(env_vars *out, diag_list *d, const char *path, const char *text);
/* NAME's value: the environment first, then .env; NULL when unset. */
const char *env_lookup(const env_vars *e, const char *name);
/* Expands ${…} in `text` (from `path`); returns the expanded text, or NULL
 * after adding errors to `d`. */
char *env_expand(const env_vars *e, diag_list *d, const char *path, const char *text);
void env_free(env_vars *e);

#endif
