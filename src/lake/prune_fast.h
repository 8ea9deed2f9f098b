/*
 * prune_fast.h — file pruning decided in C from a column's cached
 * statistics (prune_fast.c), for prune.c: the catalog query it saves
 * costs more than the read of the few files a selective filter leaves.
 * Not part of libtarn's API.
 */
#ifndef TARN_LAKE_PRUNE_FAST_H
#define TARN_LAKE_PRUNE_FAST_H

#include "lake/model.h"
#include "lake/prune_term.h"
#include "lake/scan_int.h"

#include <stdint.h>

/* 1 when term `x` on top-level column `c` can be decided in C: IS [NOT]
 * NULL, or a column type and constants whose order C knows as DuckDB's. */
int pf_term_supported(const lk_prune_term *x, const lk_column *c);
/* 1 when the statistics row of file `file_id` (of `nrows` rows) in `cs`
 * proves that no row of the file satisfies `x` (a supported term). */
int pf_term_excludes(const lk_prune_term *x, const lk_column *c, const scan_colstats *cs,
                     int64_t file_id, int64_t nrows);

#endif
