/*
 * guard.h — what a build refuses to do to a table that holds data (the
 * README's "What tarn refuses to do, and why"). Internal to materialize/.
 *
 * A change of strategy: every build records how it wrote its table
 * (annot_strategy_spec: "merge key=id", "history key=id", "partitioned
 * daily column=ts", … in tarn_model_run.strategy_spec). When a model is
 * now written otherwise and the table has rows, a change that would lose
 * or duplicate some of them — the rows a merge, append or incremental
 * model kept that its query no longer returns, the closed versions of a
 * history table, rows matched by another key, slices of another grain —
 * fails the build before anything is written, saying what would be lost
 * and that `tarn run --full-refresh MODEL` rebuilds the table on purpose.
 * Changes that lose nothing go ahead: from replace (its table is exactly
 * its query's rows) to anything, to manual, merge ↔ incremental with the
 * same key, append → incremental without a key, and any change on an
 * empty table.
 */
#ifndef TARN_MATERIALIZE_GUARD_H
#define TARN_MATERIALIZE_GUARD_H

#include "materialize/change.h"
#include "materialize/spec.h"

/* For `tarn plan`: why model mi would fail before writing, given the
 * last build's records in `cc` and its table's row count in the lake
 * (`s` has lake `lake` attached); NULL when it would not (caller frees). */
char *guard_plan(const change_ctx *cc, tarn_session *s, const char *lake, size_t mi);

#endif
