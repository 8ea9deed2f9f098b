#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# tests/e2e/test_lake_maintain.sh — DuckLake maintenance, end to end:
#
#   - a lake of many tiny files (one single-row INSERT each, inlining off,
#     plus deletes, an update and one mostly-deleted file) compacts
#     (`tarn maintain compact`: merge_adjacent_files + rewrite_data_files)
#     to a few files, and every snapshot reads the same rows, row ids and
#     change feed before and after;
#   - ducklake_flush_inlined_data moves inlined rows to Parquet with the
#     same history;
#   - expire + cleanup deletes the files of expired snapshots only: every
#     file the catalog still knows stays, every retained snapshot still
#     reads the same, expired ones no longer read;
#   - orphan cleanup deletes the Parquet file of a crashed write
#     (TARN_CRASH_AT=after-parquet-write), never a live file, and nothing
#     outside the data path (symbolic links, scheduled rows pointing out);
#   - every --dry-run changes nothing (catalog rows and files on disk);
#   - the `tarn maintain` command line: actions, options, exit statuses.
#
# MAINTAIN_FILES sets the number of tiny files (default 300; 100 for the
# sanitizer build).
# Run: `bash tests/e2e/test_lake_maintain.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

# the sanitizer build is several times slower: fewer files keep it in time
case $TARN in
*-san/*) N=${MAINTAIN_FILES:-100} ;;
*) N=${MAINTAIN_FILES:-300} ;;
esac
d=$(mktempdir)
ATTACH="ATTACH 'ducklake:meta.ducklake' AS dl (DATA_PATH 'data/');"

# sql DIR FILE — runs the script FILE with `tarn sql --format csv` in DIR;
# stdout to $d/out, stderr to $d/err, exit status in $rc.
sql() {
    (cd "$1" && "$TARN" sql --format csv -f "$2") </dev/null >"$d/out" 2>"$d/err"
    rc=$?
}

# maintain DIR ARGS... — `tarn maintain ARGS --lake meta.ducklake` in DIR.
maintain() {
    local dir=$1
    shift
    (cd "$dir" && "$TARN" maintain "$@" --lake ducklake:meta.ducklake --data-path data/ \
        --format csv) </dev/null >"$d/out" 2>"$d/err"
    rc=$?
}

# check_rc NAME WANT — the last run exited WANT without a sanitizer report.
check_rc() {
    if grep -qE 'Sanitizer|runtime error:' "$d/err"; then
        fail "$1" "sanitizer report:" "$(head -n 30 "$d/err")"
    elif [ "$rc" -ne "$2" ]; then
        fail "$1" "exit status $rc, expected $2" "$(tail -n 10 "$d/err")"
    else
        ok "$1"
    fi
}

# q DIR SQL — one query's CSV rows (header dropped) on stdout.
q() {
    printf '%s\n%s;\n' "$ATTACH" "$2" >"$d/q.sql"
    sql "$1" "$d/q.sql"
    tail -n +2 "$d/out" | sed '/^$/d'
}

# versions DIR — the snapshot ids of the lake.
versions() {
    q "$1" "SELECT snapshot_id FROM ducklake_snapshots('dl') ORDER BY 1"
}

# history DIR TABLE VERSIONS... — every listed version of TABLE (rows with
# row ids, in order), then its change feed over the whole range.
history() {
    local dir=$1 table=$2
    shift 2
    {
        echo "$ATTACH"
        for v in "$@"; do
            echo "SELECT $v AS version;"
            echo "SELECT rowid, * FROM dl.$table AT (VERSION => $v) ORDER BY ALL;"
        done
    } >"$d/h.sql"
    sql "$dir" "$d/h.sql"
    cat "$d/out"
}

feed() {
    q "$1" "SELECT * FROM ducklake_table_changes('dl', 'main', '$2', $3, $4) ORDER BY ALL"
}

# state DIR — catalog rows (read with plain DuckDB) and files on disk: what
# a dry run must leave untouched.
state() {
    cat >"$d/s.sql" <<'EOF'
ATTACH 'meta.ducklake' AS m (READ_ONLY);
SELECT * FROM m.ducklake_snapshot ORDER BY ALL;
SELECT * FROM m.ducklake_snapshot_changes ORDER BY ALL;
SELECT * FROM m.ducklake_data_file ORDER BY ALL;
SELECT * FROM m.ducklake_delete_file ORDER BY ALL;
SELECT * FROM m.ducklake_file_column_stats ORDER BY ALL;
SELECT * FROM m.ducklake_files_scheduled_for_deletion ORDER BY ALL;
SELECT * FROM m.ducklake_table_stats ORDER BY ALL;
SELECT * FROM m.ducklake_table_column_stats ORDER BY ALL;
SELECT * FROM m.ducklake_inlined_data_tables ORDER BY ALL;
SELECT * FROM m.ducklake_table ORDER BY ALL;
EOF
    sql "$1" "$d/s.sql"
    cat "$d/out"
    (cd "$1" && find data -type f -o -type l | sort)
}

# catalog_files DIR — absolute paths of every file the catalog knows
# (data and delete files of every snapshot, scheduled files).
catalog_files() {
    metaq "$1" "SELECT path FROM m.ducklake_data_file UNION ALL SELECT path FROM m.ducklake_delete_file" |
        sort
}

# metaq DIR SQL — a query over the catalog opened read-only by plain DuckDB
# (attached as m); CSV rows without header.
metaq() {
    printf "ATTACH 'meta.ducklake' AS m (READ_ONLY);\n%s;\n" "$2" >"$d/m.sql"
    sql "$1" "$d/m.sql"
    tail -n +2 "$d/out" | sed '/^$/d'
}

# check_same NAME EXPECTED ACTUAL — check_eq for long texts: the diff is
# cut to its first lines.
check_same() {
    if [ "$2" = "$3" ]; then
        ok "$1"
    else
        fail "$1" "$(diff -u --label expected --label actual <(printf '%s\n' "$2") \
            <(printf '%s\n' "$3") | head -n 40)"
    fi
}

# ---- a lake of many tiny files --------------------------------------------

a=$d/a
mkdir -p "$a"
{
    echo "ATTACH 'ducklake:meta.ducklake' AS dl (DATA_PATH 'data/', DATA_INLINING_ROW_LIMIT 0);"
    echo "CREATE TABLE dl.t (id INTEGER, v VARCHAR);"
    for i in $(seq 1 "$N"); do
        echo "INSERT INTO dl.t VALUES ($i, 'v$i');"
        case $i in
        $((N / 3))) echo "DELETE FROM dl.t WHERE id % 7 = 0;" ;;
        $((N / 2))) echo "UPDATE dl.t SET v = 'updated' WHERE id = 5;" ;;
        $((2 * N / 3)))
            echo "INSERT INTO dl.t SELECT 100000 + i, 'big' FROM range(100) r(i);"
            echo "DELETE FROM dl.t WHERE id BETWEEN 100000 AND 100096;"
            ;;
        esac
    done
} >"$d/load.sql"
sql "$a" "$d/load.sql"
check_rc "load $N single-row inserts (inlining off)" 0
files_before=$(q "$a" "SELECT file_count FROM ducklake_table_info('dl') WHERE table_name = 't'")
if [ "${files_before:-0}" -ge $((N * 3 / 4)) ]; then
    ok "the lake has many tiny files ($files_before)"
else
    fail "the lake has many tiny files" "file_count: $files_before"
fi
mapfile -t va < <(versions "$a")
hist_before=$(history "$a" t "${va[@]}")
last=${va[$((${#va[@]} - 1))]}
feed_before=$(feed "$a" t 0 "$last")

state_before=$(state "$a")
maintain "$a" compact --dry-run
check_rc "compact --dry-run runs" 0
dry_out=$(cat "$d/out")
check_same "compact --dry-run changes nothing" "$state_before" "$(state "$a")"
if grep -q '^merge,main,t,' <<<"$dry_out" && grep -q '^rewrite,main,t,' <<<"$dry_out"; then
    ok "compact --dry-run tells what it would do"
else
    fail "compact --dry-run tells what it would do" "$dry_out"
fi

maintain "$a" compact
check_rc "compact" 0
check_eq "compact does what the dry run said" "$dry_out" "$(cat "$d/out")"
files_after=$(q "$a" "SELECT file_count FROM ducklake_table_info('dl') WHERE table_name = 't'")
if [ "${files_after:-99}" -le 4 ]; then
    ok "compaction leaves a few files ($files_before -> $files_after)"
else
    fail "compaction leaves a few files" "file_count: $files_after"
fi
check_same "every snapshot reads the same after compaction" "$hist_before" \
    "$(history "$a" t "${va[@]}")"
check_same "the change feed is the same after compaction" "$feed_before" "$(feed "$a" t 0 "$last")"
mapfile -t va2 < <(versions "$a")
new_last=${va2[$((${#va2[@]} - 1))]}
check_same "the compaction snapshots read as the last one before them" \
    "$(history "$a" t "$last" | tail -n +3)" "$(history "$a" t "$new_last" | tail -n +3)"
# the first compaction's outputs (merged file, rewritten file) are small
# files again: one more run merges them, and then nothing is left to do
maintain "$a" compact
maintain "$a" compact
check_eq "compaction converges" "step,schema_name,table_name,files_processed,files_created" \
    "$(sed '/^$/d' "$d/out")"
check_same "every snapshot still reads the same" "$hist_before" "$(history "$a" t "${va[@]}")"
mapfile -t va2 < <(versions "$a")

# ---- expire + cleanup -----------------------------------------------------

state_before=$(state "$a")
maintain "$a" expire --older-than '2000-01-01 00:00:00+00' --dry-run
check_eq "expire of nothing expires nothing" "snapshot_id,snapshot_time,schema_version,changes" \
    "$(sed '/^$/d' "$d/out")"
keep=("${va2[@]: -5}") # the last five snapshots stay
expire_list=$(IFS=,; echo "${va2[*]:0:$((${#va2[@]} - 5))}")
maintain "$a" expire --versions "$expire_list" --dry-run
check_rc "expire --dry-run" 0
check_eq "expire --dry-run lists the snapshots" "$((${#va2[@]} - 5))" \
    "$(tail -n +2 "$d/out" | sed '/^$/d' | wc -l)"
check_same "expire --dry-run changes nothing" "$state_before" "$(state "$a")"
hist_keep=$(history "$a" t "${keep[@]}")
maintain "$a" expire --versions "$expire_list"
check_rc "expire" 0
check_eq "the retained snapshots remain" "$(printf '%s\n' "${keep[@]}")" "$(versions "$a")"
printf '%s\n%s\n' "$ATTACH" "SELECT * FROM dl.t AT (VERSION => ${va2[1]});" >"$d/x.sql"
sql "$a" "$d/x.sql"
check_rc "an expired snapshot can no longer be read" 1

state_before=$(state "$a")
maintain "$a" cleanup --all --dry-run
check_rc "cleanup --dry-run" 0
cleanup_dry=$(cat "$d/out")
check_same "cleanup --dry-run changes nothing" "$state_before" "$(state "$a")"
maintain "$a" cleanup --all
check_rc "cleanup --all" 0
check_eq "cleanup does what the dry run said" "$cleanup_dry" "$(cat "$d/out")"
gone=$(tail -n +2 "$d/out" | sed '/^$/d' | cut -d, -f2-)
if [ -n "$gone" ]; then ok "cleanup deleted files"; else fail "cleanup deleted files" "none"; fi
missing=""
while read -r f; do
    [ -e "$f" ] && missing="$missing still there: $f"
done <<<"$gone"
check_eq "the files cleanup reported are gone" "" "$missing"
missing=""
while read -r rel; do
    [ -n "$rel" ] && [ ! -e "$a/data/main/t/$rel" ] && missing="$missing $rel"
done < <(catalog_files "$a")
check_eq "every file the catalog still knows is on disk" "" "$missing"
check_same "the retained snapshots read the same after cleanup" "$hist_keep" \
    "$(history "$a" t "${keep[@]}")"
scheduled=$(metaq "$a" "SELECT count(*) FROM m.ducklake_files_scheduled_for_deletion")
check_eq "no file is left scheduled" "0" "$scheduled"

# ---- orphaned files ---------------------------------------------------------

printf '%s\n%s\n' "$ATTACH" "INSERT INTO dl.t SELECT 500000 + i, 'crash' FROM range(50) r(i);" \
    >"$d/crash.sql"
(cd "$a" && TARN_CRASH_AT=after-parquet-write "$TARN" sql -f "$d/crash.sql") \
    </dev/null >/dev/null 2>&1
crash_rc=$?
check_eq "a write crashes after writing its Parquet file" 99 "$crash_rc"
orphan=$(comm -23 <(cd "$a/data/main/t" && ls | sort) <(catalog_files "$a"))
if [ "$(printf '%s\n' "$orphan" | sed '/^$/d' | wc -l)" -eq 1 ]; then
    ok "the crash left one Parquet file the catalog does not know"
else
    fail "the crash left one Parquet file the catalog does not know" "$orphan"
fi
# things outside the data path that cleanup must never touch
echo outside >"$d/outside.parquet"
ln -s "$d/outside.parquet" "$a/data/main/t/link.parquet"
mkdir -p "$d/elsewhere" && echo keep >"$d/elsewhere/victim.parquet"
cat >"$d/sched.sql" <<EOF
ATTACH 'meta.ducklake' AS m;
INSERT INTO m.ducklake_files_scheduled_for_deletion VALUES (900001, '$d/elsewhere/victim.parquet', false, '2000-01-01'), (900002, '../elsewhere/victim.parquet', true, '2000-01-01');
EOF
sql "$a" "$d/sched.sql"
check_rc "rows scheduling files outside the data path" 0
hist_now=$(history "$a" t "${keep[@]}")
state_before=$(state "$a")
maintain "$a" cleanup --all --dry-run
check_eq "orphan cleanup --dry-run lists the crashed write's file" \
    "kind,path|orphaned,$a/data/main/t/$orphan" "$(sed '/^$/d' "$d/out" | paste -sd'|')"
check_same "orphan cleanup --dry-run changes nothing" "$state_before" "$(state "$a")"
maintain "$a" cleanup --older-than '2000-01-01 00:00:00+00'
check_eq "cleanup keeps files newer than --older-than" "kind,path" "$(sed '/^$/d' "$d/out")"
maintain "$a" cleanup --older-than '1 hour'
check_eq "--older-than takes an age" "kind,path" "$(sed '/^$/d' "$d/out")"
[ -e "$a/data/main/t/$orphan" ] && ok "the young orphan is still there" ||
    fail "the young orphan is still there"
maintain "$a" cleanup --all
check_rc "cleanup --all with an orphan" 0
[ ! -e "$a/data/main/t/$orphan" ] && ok "the crashed write's file is deleted" ||
    fail "the crashed write's file is deleted"
missing=""
while read -r rel; do
    [ -n "$rel" ] && [ ! -e "$a/data/main/t/$rel" ] && missing="$missing $rel"
done < <(catalog_files "$a")
check_eq "no live file is deleted by orphan cleanup" "" "$missing"
[ -e "$d/outside.parquet" ] && [ -L "$a/data/main/t/link.parquet" ] &&
    ok "a symbolic link out of the data path is neither followed nor deleted" ||
    fail "a symbolic link out of the data path is neither followed nor deleted"
[ -e "$d/elsewhere/victim.parquet" ] && ok "scheduled files outside the data path are not deleted" ||
    fail "scheduled files outside the data path are not deleted"
check_same "the table reads the same after orphan cleanup" "$hist_now" \
    "$(history "$a" t "${keep[@]}")"
printf '%s\n%s\n%s\n' "$ATTACH" "INSERT INTO dl.t VALUES (-1, 'after');" \
    "SELECT count(*) FROM dl.t WHERE id < 0 OR v = 'crash';" >"$d/w.sql"
sql "$a" "$d/w.sql"
check_eq "the lake takes writes after maintenance" "1" "$(tail -n 2 "$d/out" | head -n 1)"

# ---- flushing inlined rows ----------------------------------------------------

b=$d/b
mkdir -p "$b"
cat >"$d/b.sql" <<'EOF'
ATTACH 'ducklake:meta.ducklake' AS dl (DATA_PATH 'data/');
CREATE TABLE dl.f (id INTEGER, v VARCHAR);
INSERT INTO dl.f VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO dl.f VALUES (4, 'd');
DELETE FROM dl.f WHERE id = 2;
ALTER TABLE dl.f ADD COLUMN w INTEGER DEFAULT 7;
INSERT INTO dl.f VALUES (5, 'e', 8);
UPDATE dl.f SET v = 'cc' WHERE id = 3;
INSERT INTO dl.f SELECT 100 + i, 'many', i FROM range(30) r(i);
DELETE FROM dl.f WHERE id = 101;
EOF
sql "$b" "$d/b.sql"
check_rc "a lake with inlined rows" 0
mapfile -t vb < <(versions "$b")
lastb=${vb[$((${#vb[@]} - 1))]}
hist_b=$(history "$b" f "${vb[@]}")
feed_b=$(feed "$b" f 0 "$lastb")
state_before=$(state "$b")
maintain "$b" flush --dry-run
check_eq "flush --dry-run tells what it would do" "schema_name,table_name,rows_flushed|main,f,6" \
    "$(sed '/^$/d' "$d/out" | paste -sd'|')"
check_same "flush --dry-run changes nothing" "$state_before" "$(state "$b")"
maintain "$b" flush
check_eq "flush" "schema_name,table_name,rows_flushed|main,f,6" \
    "$(sed '/^$/d' "$d/out" | paste -sd'|')"
check_same "every snapshot reads the same after the flush" "$hist_b" "$(history "$b" f "${vb[@]}")"
check_same "the change feed is the same after the flush" "$feed_b" "$(feed "$b" f 0 "$lastb")"
inlined=$(metaq "$b" "SELECT count(*) FROM m.ducklake_inlined_data_tables")
check_eq "emptied inlined tables of older versions are dropped" "1" "$inlined"
maintain "$b" flush
check_eq "a second flush has nothing to do" "schema_name,table_name,rows_flushed" \
    "$(sed '/^$/d' "$d/out")"

# ---- rewriting files written under older layouts ------------------------------

c=$d/c
mkdir -p "$c"
cat >"$d/cl.sql" <<'EOF'
ATTACH 'ducklake:meta.ducklake' AS dl (DATA_PATH 'data/', DATA_INLINING_ROW_LIMIT 0);
CREATE TABLE dl.r (id INTEGER, v VARCHAR);
INSERT INTO dl.r SELECT i, 'v' || i FROM range(20) t(i);
INSERT INTO dl.r VALUES (100, 'a');
ALTER TABLE dl.r RENAME COLUMN v TO w;
ALTER TABLE dl.r ADD COLUMN z INTEGER DEFAULT 5;
ALTER TABLE dl.r ALTER COLUMN id SET DATA TYPE BIGINT;
INSERT INTO dl.r VALUES (102, 'c', 1);
DELETE FROM dl.r WHERE id < 19;
EOF
sql "$c" "$d/cl.sql"
check_rc "a table whose files predate renames, added columns and a wider type" 0
mapfile -t vc < <(versions "$c")
hist_c=$(history "$c" r "${vc[@]}")
check_eq "rewrite_data_files rewrites the mostly deleted file" "main,r,1,1" \
    "$(q "$c" "SELECT * FROM ducklake_rewrite_data_files('dl', 'r')")"
check_same "every snapshot reads the same after the rewrite" "$hist_c" "$(history "$c" r "${vc[@]}")"
check_eq "the rewritten file reads under the current names" "19,v19,5" \
    "$(q "$c" "SELECT * FROM dl.r WHERE w = 'v19'")"
maintain "$c" compact
check_rc "compaction across schema versions" 0
check_same "every snapshot reads the same after compaction across schema versions" "$hist_c" "$(history "$c" r "${vc[@]}")"

# ---- SQL forms ------------------------------------------------------------------

cat >"$d/call.sql" <<'EOF'
ATTACH 'ducklake:meta.ducklake' AS dl (DATA_PATH 'data/');
INSERT INTO dl.f VALUES (9, 'x', 1);
CALL dl.flush_inlined_data();
CALL ducklake_merge_adjacent_files('dl', 'f');
SELECT count(*) FROM ducklake_expire_snapshots('dl', versions => [1], dry_run => true);
SELECT count(*) FROM dl.f;
EOF
sql "$b" "$d/call.sql"
check_rc "CALL forms of the maintenance functions" 0
check_eq "CALL forms leave the rows alone" "1|1|34" "$(grep -E '^[0-9]+$' "$d/out" | paste -sd'|')"
printf '%s\n%s\n' "$ATTACH" "SELECT * FROM ducklake_cleanup_old_files('dl', cleanup_all => true, older_than => now());" >"$d/e.sql"
sql "$b" "$d/e.sql"
check_rc "cleanup_all and older_than together are refused" 1
printf '%s\n%s\n' "$ATTACH" "SELECT * FROM ducklake_merge_adjacent_files('dl', no_such => 1);" >"$d/e.sql"
sql "$b" "$d/e.sql"
check_rc "an unknown named parameter is refused" 1
printf '%s\n%s\n' "$ATTACH" "SELECT * FROM ducklake_merge_adjacent_files('dl', max_compacted_files => NULL);" >"$d/e.sql"
sql "$b" "$d/e.sql"
check_rc "max_compacted_files => NULL is refused" 1
grep -q "max_compacted_files option must be a non-null integer" "$d/err" && ok "  as a non-null integer" ||
    fail "  as a non-null integer" "$(cat "$d/err")"
# (flush, merge and rewrite join an open transaction: test_lake_txn_maintain.sh)
printf '%s\nBEGIN;\n%s\nCOMMIT;\n' "$ATTACH" "SELECT * FROM ducklake_cleanup_old_files('dl', cleanup_all => true);" >"$d/e.sql"
sql "$b" "$d/e.sql"
check_rc "cleanup inside BEGIN … COMMIT is refused, not half done (it writes outside any snapshot)" 1

# ---- the command line -------------------------------------------------------------

(cd "$b" && "$TARN" maintain) </dev/null >"$d/out" 2>"$d/err"
rc=$?
check_rc "tarn maintain without an action is a usage error" 2
(cd "$b" && "$TARN" maintain vacuum --lake meta.ducklake) </dev/null >"$d/out" 2>"$d/err"
rc=$?
check_rc "an unknown action is a usage error" 2
(cd "$b" && "$TARN" maintain flush) </dev/null >"$d/out" 2>"$d/err"
rc=$?
check_rc "--lake is required" 2
(cd "$b" && "$TARN" maintain expire --lake meta.ducklake) </dev/null >"$d/out" 2>"$d/err"
rc=$?
check_rc "expire needs --versions or --older-than" 2
(cd "$b" && "$TARN" maintain expire --versions 'x' --lake meta.ducklake) </dev/null >"$d/out" 2>"$d/err"
rc=$?
check_rc "--versions takes ids" 2
(cd "$b" && "$TARN" maintain flush --bogus --lake meta.ducklake) </dev/null >"$d/out" 2>"$d/err"
rc=$?
check_rc "an unknown option is a usage error" 2
(cd "$b" && "$TARN" maintain expire --table f --versions 1 --lake meta.ducklake) </dev/null \
    >"$d/out" 2>"$d/err"
rc=$?
check_rc "--table with expire is a usage error" 2
(cd "$b" && "$TARN" maintain flush --lake no-such.ducklake) </dev/null >"$d/out" 2>"$d/err"
rc=$?
check_rc "a missing lake fails (and is not created)" 1
[ ! -e "$b/no-such.ducklake" ] && ok "no lake is created by maintain" ||
    fail "no lake is created by maintain"
(cd "$b" && "$TARN" maintain flush --lake meta.ducklake --data-path elsewhere/) </dev/null \
    >"$d/out" 2>"$d/err"
rc=$?
check_rc "a wrong --data-path fails" 1
(cd "$b" && "$TARN" maintain --help) </dev/null >"$d/out" 2>"$d/err"
rc=$?
check_rc "tarn maintain --help" 0
grep -q 'usage: tarn maintain' "$d/out" && ok "--help prints the usage" ||
    fail "--help prints the usage" "$(head -n 5 "$d/out")"
(cd "$b" && "$TARN" help) </dev/null >"$d/out" 2>"$d/err"
grep -q '^  maintain' "$d/out" && ok "tarn help lists maintain" || fail "tarn help lists maintain"
maintain "$b" compact --table main.f --delete-threshold 0.5
check_rc "compact --table SCHEMA.NAME --delete-threshold" 0
maintain "$b" flush --table f
check_rc "flush --table" 0

finish
