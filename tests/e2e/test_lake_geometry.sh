#!/usr/bin/env bash
# tests/e2e/test_lake_geometry.sh — GEOMETRY columns in a lake, stored as DuckLake stores them: the
# column type `geometry` (a coordinate reference system is not kept), values in Parquet's native
# geometry type (never inlined into the catalog: a table with a GEOMETRY column, top-level or
# nested, has no inlined-data table and writes every insert to a file), and the statistics of each
# file and of the table as DuckLake's JSON in extra_stats: the bounding box over x/y/z/m (C's %f,
# `null` for a dimension no value had) and the sorted geometry types. A table's box widens with
# each insert and an all-NULL insert leaves it alone; merging files unites their boxes; a table
# that gains a GEOMETRY column stops inlining until the column is dropped; registered files keep
# their footer's box, and GeoParquet 1.0 files are refused. Reads at earlier snapshots see the
# rows of that snapshot.
#
# Run: `bash tests/e2e/test_lake_geometry.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1"; }
catalog() { lake_catalog "$d" "$1"; }
table_id() { lake_table_id "$d" "$1"; }
# the JSON DuckLake writes for a box (8 numbers or null, x/y/z/m min then max) and types
box() {
    printf '{"bbox": {"xmin": %s, "xmax": %s, "ymin": %s, "ymax": %s, "zmin": %s, "zmax": %s, ' \
        "$1" "$2" "$3" "$4" "$5" "$6"
    printf '"mmin": %s, "mmax": %s}, "types": [%s]}' "$7" "$8" "$9"
}
# a CSV field of text with quotes, as tarn sql --format csv writes it
c() { printf '"%s"' "${1//\"/\"\"}"; }
NOBOX=$(box null null null null null null null null '')
P12=$(box 1.000000 1.000000 2.000000 2.000000 null null null null '"point"')
P34=$(box 3.000000 3.000000 4.000000 4.000000 null null null null '"point"')
LZ=$(box 5.000000 10.000000 5.000000 10.000000 5.000000 10.000000 null null '"linestring_z"')
BOTH=$(box 1.000000 10.000000 2.000000 10.000000 5.000000 10.000000 null null \
    '"linestring_z", "point"')

check "a table with GEOMETRY columns" q "CREATE TABLE l.t (id INTEGER, g GEOMETRY('OGC:CRS84'),
                                                       s STRUCT(a GEOMETRY, n INTEGER));"
T=$(table_id t)
check_eq "column types" "column_id,column_type
1,int32
2,geometry
3,struct
4,geometry
5,int32" "$(catalog "SELECT column_id, column_type FROM m.ducklake_column WHERE table_id = $T
                     ORDER BY column_id;")"
check_eq "no inlined-data table" "0" "$(catalog "SELECT count(*) FROM m.ducklake_inlined_data_tables
                                               WHERE table_id = $T;" | sed -n 2p)"

check "a one-row insert" q "INSERT INTO l.t VALUES (1, 'POINT (1 2)', {'a': 'POINT(3 4)', 'n': 1});"
check_eq "it went to a file" "1" "$(catalog "SELECT count(*) FROM m.ducklake_data_file
                                           WHERE table_id = $T;" | sed -n 2p)"
check_eq "native Parquet geometry" "GeometryType(crs=<null>)" \
    "$(q "SELECT DISTINCT logical_type FROM parquet_schema('$d/d/main/t/*.parquet')
          WHERE name = 'g';" | sed -n 2p)"
check "an insert with a Z geometry and NULLs" q "INSERT INTO l.t VALUES
    (2, 'LINESTRING Z (5 5 5, 10 10 10)', NULL), (3, NULL, {'a': NULL, 'n': 2});"
check "an all-NULL insert" q "INSERT INTO l.t VALUES (4, NULL, NULL);"

check_eq "file stats" "data_file_id,column_id,value_count,null_count,min_value,extra_stats
0,2,1,0,,$(c "$P12")
0,4,1,0,,$(c "$P34")
1,2,1,1,,$(c "$LZ")
1,4,0,2,,$(c "$NOBOX")
2,2,0,1,,$(c "$NOBOX")
2,4,0,1,,$(c "$NOBOX")" "$(catalog "SELECT data_file_id, column_id, value_count, null_count, min_value,
                             extra_stats FROM m.ducklake_file_column_stats WHERE table_id = $T
                             AND column_id IN (2, 4) ORDER BY ALL;")"
check_eq "table stats: the union of the files, NULL-only files leave them alone" \
    "column_id,contains_null,min_value,extra_stats
1,false,1,
2,true,,$(c "$BOTH")
4,true,,$(c "$P34")
5,true,1," "$(catalog "SELECT column_id, contains_null, min_value, extra_stats
                      FROM m.ducklake_table_column_stats WHERE table_id = $T ORDER BY ALL;")"

check_eq "the rows read back" "id,g,s
1,POINT (1 2),\"{'a': 'POINT (3 4)', 'n': 1}\"
2,\"LINESTRING Z (5 5 5, 10 10 10)\",
3,,\"{'a': NULL, 'n': 2}\"
4,," "$(q "SELECT * FROM l.t ORDER BY id;")"
check_eq "at the first insert's snapshot" "id,g
1,POINT (1 2)" "$(q "SELECT id, g FROM l.t AT (VERSION => 2);")"
check_eq "at the second insert's snapshot" "3" "$(q "SELECT count(*) FROM l.t AT (VERSION => 3);" |
    sed -n 2p)"
check_eq "geometry functions on the values" "POINT (1 2)" \
    "$(q "SELECT ST_AsText(g) FROM l.t WHERE id = 1;" | sed -n 2p)"

check "UPDATE of a geometry" q "UPDATE l.t SET g = 'POINT (-7 8)' WHERE id = 4;"
check_eq "the updated row" "POINT (-7 8)" "$(q "SELECT g FROM l.t WHERE id = 4;" | sed -n 2p)"
check_eq "the box widened by the update" \
    "$(box -7.000000 10.000000 2.000000 10.000000 5.000000 10.000000 null null \
        '"linestring_z", "point"')" \
    "$(catalog "SELECT extra_stats FROM m.ducklake_table_column_stats WHERE table_id = $T
               AND column_id = 2;" | sed -n 2p | sed 's/^"//; s/"$//; s/""/"/g')"

check "merging the files" q "SELECT * FROM ducklake_merge_adjacent_files('l');"
check_eq "the merged file's box is the union" \
    "$(box -7.000000 10.000000 2.000000 10.000000 5.000000 10.000000 null null \
        '"linestring_z", "point"')" \
    "$(catalog "SELECT extra_stats FROM m.ducklake_file_column_stats f JOIN m.ducklake_data_file
               USING (data_file_id) WHERE f.table_id = $T AND column_id = 2
               AND end_snapshot IS NULL;" | sed -n 2p | sed 's/^"//; s/"$//; s/""/"/g')"
check_eq "rows after the merge" "4" "$(q "SELECT count(*) FROM l.t;" | sed -n 2p)"

# inlining: a GEOMETRY column added to an inlined table stops the inlining, dropping it resumes it
check "an inlined table" q "CREATE TABLE l.i (k INTEGER); INSERT INTO l.i VALUES (1), (2);"
I=$(table_id i)
# the table's schema versions, oldest first: created, ADD COLUMN, DROP COLUMN
sv() { catalog "SELECT schema_version FROM m.ducklake_schema_versions WHERE table_id = $I
                ORDER BY schema_version;" | sed -n "$(($1 + 1))p"; }
inlined() { catalog "SELECT string_agg(table_name, ' ' ORDER BY schema_version)
                     FROM m.ducklake_inlined_data_tables WHERE table_id = $I;" | sed -n 2p; }
check_eq "one inlined-data table" "ducklake_inlined_data_${I}_$(sv 1)" "$(inlined)"
check "ADD COLUMN GEOMETRY" q "ALTER TABLE l.i ADD COLUMN g GEOMETRY;
                               INSERT INTO l.i VALUES (3, 'POINT (0 0)');"
check_eq "no inlined-data table for the new layout" "ducklake_inlined_data_${I}_$(sv 1)" "$(inlined)"
check_eq "the insert went to a file" "1" "$(catalog "SELECT count(*) FROM m.ducklake_data_file
                                                    WHERE table_id = $I;" | sed -n 2p)"
check "DROP COLUMN g" q "ALTER TABLE l.i DROP COLUMN g; INSERT INTO l.i VALUES (4);"
check_eq "a new inlined-data table after the drop" \
    "ducklake_inlined_data_${I}_$(sv 1) ducklake_inlined_data_${I}_$(sv 3)" "$(inlined)"
check_eq "the insert after the drop was inlined" "1" "$(catalog "SELECT count(*) FROM
    m.ducklake_inlined_data_${I}_$(sv 3);" | sed -n 2p)"
check_eq "all rows" "k
1
2
3
4" "$(q "SELECT k FROM l.i ORDER BY k;")"

# registered files: the footer's box; a GeoParquet 1.0 file is refused
check "files outside the lake" q "COPY (SELECT 'POINT (5 6)'::GEOMETRY AS g) TO '$d/native.parquet'
        (FORMAT parquet, GEOPARQUET_VERSION 'NONE');
    COPY (SELECT 'POINT (5 6)'::GEOMETRY AS g) TO '$d/geoparquet.parquet' (FORMAT parquet);
    CREATE TABLE l.r (g GEOMETRY);"
check "a native geometry file is registered" \
    q "CALL ducklake_add_data_files('l', 'r', '$d/native.parquet');"
R=$(table_id r)
check_eq "its box" "$(box 5.000000 5.000000 6.000000 6.000000 null null null null '"point"')" \
    "$(catalog "SELECT extra_stats FROM m.ducklake_file_column_stats WHERE table_id = $R;" |
        sed -n 2p | sed 's/^"//; s/"$//; s/""/"/g')"
out=$(lake_sql "$d" "CALL ducklake_add_data_files('l', 'r', '$d/geoparquet.parquet');" 2>&1)
err=$(tail -n 3 "$d/err")
case $err in
*'Expected type "GEOMETRY" but found type "BLOB". Is this a GeoParquet v1'*) ok "GeoParquet 1.0 refused" ;;
*) fail "GeoParquet 1.0 refused" "$out" "$err" ;;
esac
: >"$d/err"
check_eq "the registered row" "POINT (5 6)" "$(q "SELECT g FROM l.r;" | sed -n 2p)"

check_eq "no errors on stderr" "" "$(cat "$d/err")"
finish
