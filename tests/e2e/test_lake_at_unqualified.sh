#!/usr/bin/env bash
# tests/e2e/test_lake_at_unqualified.sh — AT (VERSION => n) on a table named
# without its lake, after USE: `FROM t AT (…)` reads t at version n (FROM
# is not a table aliased t), also with an alias and in lower case.
#
# Run: `bash tests/e2e/test_lake_at_unqualified.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/'); USE lake;"

q() {
    (cd "$d" && "$TARN" sql --format csv "$ATTACH $1") </dev/null 2>"$d/err" | sed '/^$/d'
}

q "CREATE TABLE t (i INTEGER); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);" >/dev/null
check_eq "FROM t AT (VERSION => 2)" "$(printf 'count_star()\n1')" \
    "$(q "SELECT count(*) FROM t AT (VERSION => 2);")"
check_eq "lower case, ORDER BY after it" "$(printf 'i\n1')" "$(q "from t at (version => 2) ORDER BY i;")"
check_eq "with an alias" "$(printf 'i\n1\n2')" "$(q "SELECT x.i FROM t AS x AT (VERSION => 3) ORDER BY 1;")"
check_eq "in a join" "$(printf 'i,i_1\n1,1')" \
    "$(q "SELECT a.i, b.i FROM t a AT (VERSION => 2) JOIN t AT (VERSION => 2) b ON a.i = b.i;")"
check_eq "no error" "" "$(cat "$d/err")"

finish
