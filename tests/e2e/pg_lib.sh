# tests/e2e/pg_lib.sh — a throwaway PostgreSQL cluster for the tests of the PostgreSQL catalog,
# sourced after lib.sh:
#
#   . "$(dirname "$0")/pg_lib.sh"
#   pg_start || { skip "postgres catalog" "$PG_SKIP"; finish; }
#   tarn sql "ATTACH 'ducklake:postgres:$PG_CONNINFO' AS lake (DATA_PATH 'd/')"
#   pg_psql "SELECT count(*) FROM public.ducklake_snapshot"   # unaligned rows, `|` between values
#
# pg_start makes one cluster per test script (initdb costs a few seconds; start it once and give
# each check its own database with pg_createdb): initdb in a new temporary folder, the server
# listening only on a unix socket in that folder (listen_addresses='', so no port can clash with
# another test or a real server), trust authentication for the superuser `tarn`. PostgreSQL
# refuses to run as root: as root (CI) the cluster belongs to the unprivileged user tarn_pg,
# created when missing, and initdb / pg_ctl run through runuser. The server is stopped and its
# folder removed when the script exits (lib.sh's exit hook), also when a check failed.
#
# When PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb) pg_start returns 1 and
# PG_SKIP says why; scripts/deps.sh installs it, so in CI these tests run.
#
# After pg_start: PG_HOST (the socket folder), PG_CONNINFO (libpq's `dbname=lake host=… user=…`),
# PG_BIN. Environment: TARN_PG_BIN overrides the folder of initdb / pg_ctl.

PG_SKIP=""
PG_HOST=""
PG_CONNINFO=""
PG_BIN=""
_PG_DIR=""
_PG_OWNER=""

# _pg_as CMD... — run CMD as the cluster's owner (itself when not root).
_pg_as() {
    if [ -n "$_PG_OWNER" ]; then
        runuser -u "$_PG_OWNER" -- "$@"
    else
        "$@"
    fi
}

_pg_stop() {
    [ -n "$_PG_DIR" ] || return 0
    _pg_as "$PG_BIN/pg_ctl" -D "$_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
    rm -rf "$_PG_DIR"
    _PG_DIR=""
}

# pg_start — start the cluster and create database `lake`; 1 (with PG_SKIP set) when PostgreSQL is
# not installed; a failure to start is a failed check (the tests then cannot run).
pg_start() {
    PG_BIN=${TARN_PG_BIN:-}
    if [ -z "$PG_BIN" ]; then
        local b
        for b in /usr/lib/postgresql/*/bin; do
            [ -x "$b/initdb" ] && PG_BIN=$b
        done
    fi
    if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ] || ! command -v psql >/dev/null; then
        PG_SKIP="PostgreSQL is not installed (scripts/deps.sh installs Debian's postgresql)"
        return 1
    fi
    if [ "$(id -u)" -eq 0 ]; then
        _PG_OWNER=tarn_pg
        if ! id -u "$_PG_OWNER" >/dev/null 2>&1; then
            useradd --system --no-create-home --shell /usr/sbin/nologin "$_PG_OWNER" 2>/dev/null ||
                id -u "$_PG_OWNER" >/dev/null 2>&1 || {
                fail "postgres cluster starts" "cannot create the user $_PG_OWNER to run PostgreSQL"
                return 2
            }
        fi
    fi
    # outside lib.sh's temp folder: the owner must reach it, and a unix socket path is short
    _PG_DIR=$(mktemp -d /tmp/tarn-pg.XXXXXX) || return 2
    [ -n "$_PG_OWNER" ] && chown "$_PG_OWNER" "$_PG_DIR"
    at_exit _pg_stop
    local log=$_PG_DIR/server.log
    if ! _pg_as "$PG_BIN/initdb" -D "$_PG_DIR/data" -U tarn -A trust -E UTF8 --no-sync \
        --no-instructions >"$_PG_DIR/initdb.log" 2>&1; then
        fail "postgres cluster starts" "initdb failed" "$(tail -n 20 "$_PG_DIR/initdb.log")"
        return 2
    fi
    if ! _pg_as "$PG_BIN/pg_ctl" -D "$_PG_DIR/data" -l "$log" -w -t 60 \
        -o "-c listen_addresses='' -k $_PG_DIR -c fsync=off -c synchronous_commit=off" \
        start >/dev/null 2>&1; then
        fail "postgres cluster starts" "pg_ctl start failed" "$(tail -n 20 "$log")"
        return 2
    fi
    PG_HOST=$_PG_DIR
    PG_CONNINFO="dbname=lake host=$PG_HOST user=tarn"
    if ! pg_createdb lake; then
        fail "postgres cluster starts" "createdb lake failed"
        return 2
    fi
    return 0
}

# pg_createdb NAME — a new empty database NAME in the cluster (its conninfo: pg_conninfo NAME).
pg_createdb() {
    psql -X -q -h "$PG_HOST" -U tarn -d postgres -c "CREATE DATABASE \"$1\"" >/dev/null
}

# pg_conninfo NAME — libpq's connection string for database NAME of the cluster.
pg_conninfo() {
    echo "dbname=$1 host=$PG_HOST user=tarn"
}

# pg_psql SQL [DB] — run SQL with psql on database DB (default lake): unaligned rows, values
# separated by `|`, no header; fails (exit 3) on an error.
pg_psql() {
    psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$PG_HOST" -U tarn -d "${2:-lake}" -c "$1"
}
