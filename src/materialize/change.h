/*
 * change.h — change detection: whether a model must be built, and why
 * (design §5). Internal to build/.
 *
 * A model is skipped when everything its build depends on is as it was at
 * its last successful build, as recorded in the lake (tarn_model_run):
 *
 *   - its model hash (normalized SQL + write-affecting annotations);
 *   - its config hash: the config/ statements that reach it (those that
 *     create a name its SQL mentions — a macro, a source view, an attached
 *     database — followed transitively, plus every statement that defines
 *     no name and is not known to be harmless), and its data tests;
 *   - the version of every lake table it read (the last snapshot that
 *     changed that table: inserted, deleted, altered or created it);
 *   - the files its SQL and those config statements name (size and
 *     modification time; the contents' MD5 for files up to 1 MB);
 *   - its own table's version: a table dropped or changed outside tarn
 *     is rebuilt.
 *
 * Some models always run: with --force, time-partitioned models (the
 * current slice, or the requested ones), --partition on a dynamic model,
 * incremental models, manual models (tarn cannot know what their script
 * depends on or does), and models whose SQL calls a non-deterministic
 * function (now(), random(), …) or reads something tarn cannot version
 * (a lake view, a DuckDB table config/ does not define, a remote file it
 * cannot stat).
 */
#ifndef TARN_MATERIALIZE_CHANGE_H
#define TARN_MATERIALIZE_CHANGE_H

#include "materialize/build.h"
#include "materialize/change_state.h"

/* Run reasons the build acts on (model_build.c, runner.c). */
#define REASON_FULL_REBUILD "sql changed (full rebuild)"
#define REASON_UPSTREAM "upstream changed: "
#define REASON_APPEND_CHANGED                                                                      \
    "sql changed (appending with the new SQL; the rows appended before stay)"

/* Loads what change detection needs for the selected models: their config
 * hashes and file fingerprints, the lake's table versions and the records
 * of their last successful builds. `cat` may be NULL (no lake yet: every
 * model runs for the first time). */
int change_load(change_ctx *cc, tarn_project *p, tarn_session *s, const char *lake, const char *cat,
                const unsigned char *sel);
void change_free(change_ctx *cc);

/* The strategy spec of model mi's last successful build, or NULL: its
 * annot_strategy_spec, or for a build recorded by an older tarn its
 * label (then *label_only is set: compare annot_strategy_label). */
const char *change_last_spec(const change_ctx *cc, size_t mi, int *label_only);
/* Whether model mi is written otherwise than at its last successful
 * build; *was gets that build's spec (or label). */
int change_strategy_changed(const change_ctx *cc, size_t mi, const char **was);

/* Whether model mi, built for `reason`, would be skipped as unchanged but
 * for new versions of lake tables it read at its last successful build
 * (its SQL, config, files and own table as they were then). */
int change_only_upstream(const change_ctx *cc, size_t mi, const char *reason);

/* What the run warns about model mi (caller frees), or NULL: an append
 * model whose result changes on every run; a read of a retired model's
 * table. */
char *change_warning(const change_ctx *cc, size_t mi);

/* When lake table schema.table was built by a model the project has no
 * more (its file removed or renamed; the table is still there): "last
 * built by run N from PATH". NULL otherwise. */
const char *change_retired(const change_ctx *cc, const char *schema, const char *table);

/* Why model `mi` must be built (caller frees), or NULL to skip it as
 * unchanged. `will_run` (optional, for `tarn plan`): per model, 1 when it
 * would be built before `mi` in the same run, so that reading it counts as
 * an upstream change. */
char *change_reason(const change_ctx *cc, size_t mi, const build_opts *o,
                    const unsigned char *will_run);
#endif
