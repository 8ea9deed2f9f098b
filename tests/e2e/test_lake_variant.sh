#!/usr/bin/env bash
# tests/e2e/test_lake_variant.sh — VARIANT columns in a lake, as DuckLake stores them: the column
# type `variant`; values inlined into the catalog when few (the catalog database is attached at
# DuckDB's latest storage version, which VARIANT columns need) and shredded Parquet otherwise;
# per file, the counts of the variant column and, for each fully shredded sub-field (`root`, an
# object field `"a"`, array elements `element`), a ducklake_file_variant_stats row and an entry of
# the JSON array in extra_stats; per table, only the fields every write had with the same type
# (a field whose type changed, or that a write lacked, is dropped, and with none left extra_stats
# is NULL). Reads at earlier snapshots, DELETE and UPDATE of variant rows work as on any column.
#
# Run: `bash tests/e2e/test_lake_variant.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1"; }
catalog() { lake_catalog "$d" "$1"; }
table_id() { lake_table_id "$d" "$1"; }
fields() { catalog "SELECT data_file_id, variant_path, shredded_type, value_count, null_count,
                    min_value, max_value FROM m.ducklake_file_variant_stats WHERE table_id = $1
                    ORDER BY ALL;"; }
# the table-level extra_stats, its field names and types only
table_fields() { catalog "SELECT array_to_string(list_transform(json_extract(extra_stats,
                          '\$[*]'), x -> (x ->> 'field_name') || ':' || (x ->> 'shredded_type')),
                          ' ')
                          FROM m.ducklake_table_column_stats WHERE table_id = $1
                          AND column_id = $2;" | sed -n 2p; }

check "a VARIANT table (inlined)" q "CREATE TABLE l.small (v VARIANT);
    INSERT INTO l.small VALUES (42), ('hello'), ({'a': 1, 'b': [1, 2]}), (NULL);"
check_eq "variant column type" "variant" "$(catalog "SELECT column_type FROM m.ducklake_column
    WHERE table_id = $(table_id small);" | sed -n 2p)"
check_eq "inlined rows read back" "v,t
42,INT32
hello,VARCHAR
\"{'a': 1, 'b': [1, 2]}\",\"OBJECT(a, b)\"
,VARIANT_NULL" "$(q "SELECT v, variant_typeof(v) AS t FROM l.small;")"
check_eq "no data file" "0" "$(catalog "SELECT count(*) FROM m.ducklake_data_file;" | sed -n 2p)"

check "inlining off" q "CALL l.set_option('data_inlining_row_limit', 0);"
check "a primitive column in a file" q "CREATE TABLE l.p (v VARIANT);
    INSERT INTO l.p VALUES (21::VARIANT), (NULL::VARIANT), (42::VARIANT);"
P=$(table_id p)
check_eq "its file column stats" "value_count,null_count,min_value" "$(catalog "SELECT value_count,
    null_count, min_value FROM m.ducklake_file_column_stats WHERE table_id = $P;" | sed -n 1p)"
PF=$(catalog "SELECT data_file_id FROM m.ducklake_data_file WHERE table_id = $P;" | sed -n 2p)
check_eq "the root field" "data_file_id,variant_path,shredded_type,value_count,null_count,min_value,max_value
$PF,root,int32,2,1,21,42" "$(fields "$P")"
check "a mixed insert" q "INSERT INTO l.p VALUES ('x'::VARIANT), (1::VARIANT);"
check_eq "a file with mixed types has no shredded field" "1" "$(catalog "SELECT count(*) FROM
    m.ducklake_file_variant_stats WHERE table_id = $P;" | sed -n 2p)"
check_eq "and the table keeps none" "" "$(table_fields "$P" 1)"

check "an object column" q "CREATE TABLE l.o (id INTEGER, v VARIANT);
    INSERT INTO l.o VALUES (1, {'a': 42, 'b': true, 'l': ['x', 'y']}::VARIANT),
                           (2, {'a': 21, 'c': 'it''s'}::VARIANT);"
O=$(table_id o)
F=$(catalog "SELECT min(data_file_id) FROM m.ducklake_data_file WHERE table_id = $O;" | sed -n 2p)
check_eq "its fields" "data_file_id,variant_path,shredded_type,value_count,null_count,min_value,max_value
$F,\"\"\"a\"\"\",int32,2,0,21,42
$F,\"\"\"b\"\"\",boolean,1,1,1,1
$F,\"\"\"c\"\"\",varchar,1,1,it's,it's
$F,\"\"\"l\"\".element\",varchar,2,1,x,y" "$(fields "$O")"
check_eq "the table's fields" '"""a"":int32 ""b"":boolean ""c"":varchar ""l"".element:varchar"' \
    "$(table_fields "$O" 2)"
check "a second insert with b of another type, no l" q "INSERT INTO l.o VALUES
    (3, {'a': -5, 'b': 'no', 'c': 'zz'}::VARIANT);"
check_eq "the table keeps a and c, merged" "-5,42,zz,3" "$(catalog "SELECT
    (SELECT x ->> 'min' FROM (SELECT unnest(json_extract(extra_stats, '\$[*]')) AS x)
     WHERE x ->> 'field_name' = '\"a\"'),
    (SELECT x ->> 'max' FROM (SELECT unnest(json_extract(extra_stats, '\$[*]')) AS x)
     WHERE x ->> 'field_name' = '\"a\"'),
    (SELECT x ->> 'max' FROM (SELECT unnest(json_extract(extra_stats, '\$[*]')) AS x)
     WHERE x ->> 'field_name' = '\"c\"'),
    json_array_length(extra_stats) + 1
    FROM m.ducklake_table_column_stats WHERE table_id = $O AND column_id = 2;" | sed -n 2p)"
check_eq "the table's fields after it" '"""a"":int32 ""c"":varchar"' "$(table_fields "$O" 2)"
# DuckDB's writer counts a NULL VARIANT's metadata as a value, so DuckLake merges the file, which
# has no shredded field, and drops them all
check "an insert of a NULL variant" q "INSERT INTO l.o VALUES (4, NULL);"
check_eq "drops the table's fields" "" "$(table_fields "$O" 2)"

check_eq "subfields read back" "id,a,b
1,42,true
2,21,
3,-5,no
4,," "$(q "SELECT id, v.a AS a, v.b AS b FROM l.o ORDER BY id;")"
check_eq "at the first insert's snapshot" "2" "$(q "SELECT count(*) FROM l.o AT (VERSION => \
$(catalog "SELECT begin_snapshot FROM m.ducklake_data_file WHERE data_file_id = $F;" |
    sed -n 2p));" | sed -n 2p)"
check "DELETE by a subfield" q "DELETE FROM l.o WHERE v.a = 21;"
check "UPDATE of a variant" q "UPDATE l.o SET v = (v.a::INTEGER + 100)::VARIANT WHERE id = 1;"
check_eq "after DELETE and UPDATE" "id,v
1,142
3,\"{'a': -5, 'b': no, 'c': zz}\"
4," "$(q "SELECT id, v FROM l.o ORDER BY id;")"

check_eq "no errors on stderr" "" "$(cat "$d/err")"
finish
