#!/usr/bin/env bash
# tests/e2e/test_lake_nan_stats.sh — the statistics rows of floating-point columns, as DuckLake
# writes them:
#   - ducklake_file_column_stats.contains_nan is true for a DOUBLE / REAL column of a file that
#     holds a NaN, false for one that does not, and NULL for other types; a file whose only value
#     is NaN has no min / max;
#   - ducklake_table_column_stats.contains_nan turns true with the first NaN and stays so; a
#     write of unknown bounds (NaN only) makes the table's bounds unknown until the next known
#     ones replace them;
#   - a filter on the column still finds the NaN row (its file is not pruned away).
#
# Run: `bash tests/e2e/test_lake_nan_stats.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
(cd "$d" && "$TARN" sql -c "ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'd/', DATA_INLINING_ROW_LIMIT 0);
CREATE TABLE lake.f (i INT, d DOUBLE, r REAL);
INSERT INTO lake.f VALUES (1, 1.5, 2.5);
INSERT INTO lake.f VALUES (2, 'nan'::DOUBLE, 3.0);
INSERT INTO lake.f VALUES (3, 4.0, 'nan'::REAL);") </dev/null >/dev/null 2>"$d/err"
cat_q() { (cd "$d" && "$TARN" sql --format csv -c "ATTACH 'm.ducklake' AS m (READ_ONLY); $1") </dev/null 2>>"$d/err" | tail -n +2; }
check_eq "per file: NaN true / false for floating-point columns, NULL for others; a NaN-only file has no bounds" \
    "0,1,,1,1
0,2,false,1.5,1.5
0,3,false,2.5,2.5
1,1,,2,2
1,2,true,,
1,3,false,3.0,3.0
2,1,,3,3
2,2,false,4.0,4.0
2,3,true,," \
    "$(cat_q "SELECT data_file_id, column_id, contains_nan, min_value, max_value FROM m.ducklake_file_column_stats ORDER BY 1, 2")"
check_eq "per table: NaN once seen stays; unknown bounds are replaced by the next known ones" \
    "1,false,,1,3
2,false,true,4.0,4.0
3,false,true,," \
    "$(cat_q "SELECT column_id, contains_null, contains_nan, min_value, max_value FROM m.ducklake_table_column_stats ORDER BY 1")"
check_eq "a filter still finds the NaN rows" "2|3" \
    "$( (cd "$d" && "$TARN" sql --format csv -c "ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'd/'); SELECT string_agg(i::VARCHAR, '|' ORDER BY i) FROM lake.f WHERE isnan(d) OR isnan(r)") </dev/null 2>>"$d/err" | tail -n +2)"

finish
