/*
 * geostats.h — the statistics DuckLake keeps for a GEOMETRY column: a
 * bounding box over x, y, z and m and the set of geometry types seen
 * ("point", "linestring_z", …), stored as the JSON text of the
 * extra_stats column of ducklake_file_column_stats and
 * ducklake_table_column_stats:
 *
 *   {"bbox": {"xmin": 1.000000, "xmax": …, "mmax": null}, "types": ["point"]}
 *
 * Numbers are printed as C's "%f" (DuckLake uses std::to_string), a
 * dimension no value had as null, the types sorted and unique. DuckDB's
 * Parquet writer reports the figures of a written file (RETURN_STATS keys
 * bbox_xmin … bbox_mmax and geo_types); several files of one commit merge
 * by widening the box and uniting the types.
 */
#ifndef TARN_LAKE_GEOSTATS_H
#define TARN_LAKE_GEOSTATS_H

#include "util/buf.h"

#include <stddef.h>

typedef struct {
    double lo[4], hi[4]; /* x, y, z, m; lo > hi: no value had the dimension */
    char **types;        /* sorted, unique */
    size_t ntypes;
} lk_geo_stats;

/* An empty box and no types. */
void lk_geo_init(lk_geo_stats *g);
void lk_geo_free(lk_geo_stats *g);
void lk_geo_copy(lk_geo_stats *dst, const lk_geo_stats *src);

/* Takes one RETURN_STATS entry of a geometry column (bbox_xmin, …,
 * geo_types as DuckDB renders a list: "[point, linestring_z]"); returns 0
 * when `key` is not a geometry statistic. */
int lk_geo_set(lk_geo_stats *g, const char *key, const char *value);

/* Widens `g` by `add`'s box and adds its types. */
void lk_geo_merge(lk_geo_stats *g, const lk_geo_stats *add);

/* Appends the extra_stats JSON text. */
void lk_geo_json(tarn_buf *b, const lk_geo_stats *g);

/* Appends a SQL expression over the stored text `col` (an extra_stats
 * column, NULL or geometry JSON) that is that text widened by `g`, in
 * the same format: the table-level merge, done where the stored text is. */
void lk_geo_merge_sql(tarn_buf *b, const char *col, const lk_geo_stats *g);

#endif
