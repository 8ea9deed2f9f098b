# tests/e2e/build_lib.sh — helpers for the build tests (tests/e2e/test_build_*.sh), sourced after
# lib.sh:
#
#   d=$(project basic)               # a copy of tests/fixtures/projects/basic in a temp dir
#   run_ok  "name" "$d" run          # tarn -C "$d" run … must exit 0 (output kept in $OUT)
#   run_rc  "name" 1 "$d" run        # … must exit with status 1
#   lakeq "$d" "SELECT …"            # the query's rows as CSV (no header), on the project's lake
#   snapshots "$d"                   # how many snapshots the lake has
#
# The lake of every fixture is lake.ducklake with DATA_PATH lake/, relative to the project folder.
#
# With TARN_TEST_PG_HOST set (test_build_on_pg.sh runs a set of build tests so, on one throwaway
# cluster of pg_lib.sh; the folder of its socket), every project's lake has its catalog in
# PostgreSQL instead: project() gives each copy a new database and rewrites its
# config/catalog.sql to attach it (same alias, same DATA_PATH), and lakeq attaches that.

# _pg_project_db DIR — the PostgreSQL database of project DIR's catalog (PostgreSQL mode).
_pg_project_db() {
    echo "p$(printf '%s' "$1" | md5sum | cut -c1-16)"
}

# lake_attach DIR — the ATTACH of project DIR's lake, as its fixture's config/catalog.sql has it.
lake_attach() {
    if [ -n "${TARN_TEST_PG_HOST:-}" ]; then
        echo "ATTACH 'ducklake:postgres:dbname=$(_pg_project_db "$1") host=$TARN_TEST_PG_HOST user=tarn' AS lake (DATA_PATH 'lake/');"
    else
        echo "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');"
    fi
}

# lake_catalog DIR — write DIR/config/catalog.sql attaching the lake as the fixtures do (in
# PostgreSQL mode: a new database of DIR's), for a test that makes its project itself.
lake_catalog() {
    mkdir -p "$1/config"
    if [ -n "${TARN_TEST_PG_HOST:-}" ]; then
        psql -X -q -h "$TARN_TEST_PG_HOST" -U tarn -d postgres \
            -c "CREATE DATABASE \"$(_pg_project_db "$1")\"" >/dev/null || return 1
    fi
    lake_attach "$1" >"$1/config/catalog.sql"
}

# lake_reset DIR — remove project DIR's lake, catalog and data (the next run starts a new one).
lake_reset() {
    rm -rf "$1/lake" "$1/lake.ducklake"
    if [ -n "${TARN_TEST_PG_HOST:-}" ]; then
        local db
        db=$(_pg_project_db "$1")
        psql -X -q -h "$TARN_TEST_PG_HOST" -U tarn -d postgres -c "DROP DATABASE \"$db\"" \
            -c "CREATE DATABASE \"$db\"" >/dev/null
    fi
}

# project NAME — copy a fixture project into a new temp dir; prints its path.
project() {
    local d
    d=$(mktempdir)
    cp -r "$FIXTURES/projects/$1/." "$d/"
    if [ -n "${TARN_TEST_PG_HOST:-}" ]; then
        psql -X -q -h "$TARN_TEST_PG_HOST" -U tarn -d postgres \
            -c "CREATE DATABASE \"$(_pg_project_db "$d")\"" >/dev/null || return 1
        local cat=$d/config/catalog.sql
        sed "s|'ducklake:lake.ducklake'|'ducklake:postgres:dbname=$(_pg_project_db "$d") host=$TARN_TEST_PG_HOST user=tarn'|" \
            "$cat" >"$cat.new" && mv "$cat.new" "$cat"
    fi
    echo "$d"
}

OUT=""
# run_rc NAME STATUS DIR ARGS... — run `tarn ARGS... -C DIR`; ok if it exits with STATUS.
# stdout is kept in $OUT, stderr in $ERR.
run_rc() {
    local name=$1 want=$2 dir=$3 rc
    shift 3
    local o e
    o=$(mktemp "$_E2E_TMP/o.XXXXXX")
    e=$(mktemp "$_E2E_TMP/e.XXXXXX")
    "$TARN" "$@" -C "$dir" >"$o" 2>"$e" </dev/null
    rc=$?
    OUT=$(cat "$o")
    ERR=$(cat "$e")
    if [ "$rc" -eq "$want" ]; then
        ok "$name"
    else
        fail "$name" "exit status $rc (wanted $want): tarn $* -C $dir" "$(tail -n 20 "$e")" \
            "$(tail -n 5 "$o")"
    fi
}

# run_ok NAME DIR ARGS... — the same, wanting exit status 0.
run_ok() {
    local name=$1
    shift
    run_rc "$name" 0 "$@"
}

# lakeq DIR SQL — run SQL on the project's lake; print the CSV rows without the header.
lakeq() {
    (cd "$1" && "$TARN" sql --format csv -c "$(lake_attach "$1") $2") |
        tail -n +2
}

# snapshots DIR — the number of snapshots of the project's lake.
snapshots() {
    lakeq "$1" "SELECT count(*) FROM ducklake_snapshots('lake')"
}

# contains NAME NEEDLE HAYSTACK — ok if HAYSTACK contains NEEDLE.
contains() {
    case $3 in
    *"$2"*) ok "$1" ;;
    *) fail "$1" "missing: $2" "in: $3" ;;
    esac
}

# lake_dump DIR — every model table's rows, sorted, and nothing about snapshots: two lakes built
# the same way dump the same text.
lake_dump() {
    local t
    for t in $(lakeq "$1" "SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE table_catalog = 'lake' ORDER BY 1"); do
        echo "== $t"
        lakeq "$1" "SELECT * FROM lake.$t ORDER BY ALL"
    done
}
