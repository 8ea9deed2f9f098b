#!/usr/bin/env bash
# tests/e2e/test_lake_commit_message.sh — commit messages and the lake option
# require_commit_message, as DuckLake has them:
#   - ducklake_set_commit_message inside BEGIN … COMMIT gives the snapshot its author,
#     message and extra info (the last call wins);
#   - with require_commit_message true, a statement outside BEGIN and a COMMIT without
#     a message are refused with DuckLake's error and write no snapshot and no rows;
#   - setting the option back to false needs no message.
#
# Run: `bash tests/e2e/test_lake_commit_message.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
MSG='Invalid Configuration Error: Commit Information for the snapshot is required but has not been provided. '

err() { lake_err "$d" "$1"; }
snaps() { lake_catalog "$d" "SELECT count(*) FROM m.ducklake_snapshot;" | sed -n 2p; }
rows() { lake_sql "$d" "SELECT count(*) FROM l.t;" | sed -n 2p; }

lake_sql "$d" "CREATE TABLE l.t (i INTEGER);
BEGIN; INSERT INTO l.t VALUES (1); CALL l.set_commit_message('ann', 'first try');
CALL l.set_commit_message('bob', 'one row', extra_info => '{\"k\": 1}'); COMMIT;" >/dev/null
check_eq "the last set_commit_message of a transaction is its snapshot's" 'bob,one row,"{""k"": 1}"' \
    "$(lake_catalog "$d" "SELECT author, commit_message, commit_extra_info FROM m.ducklake_snapshot_changes ORDER BY snapshot_id DESC LIMIT 1;" | sed -n 2p)"

lake_sql "$d" "CALL l.set_option('require_commit_message', true);" >/dev/null
n=$(snaps)
check_eq "required: a statement outside BEGIN is refused with DuckLake's error" "$MSG" \
    "$(err "INSERT INTO l.t VALUES (2);")"
check_eq "required: a COMMIT without a message is refused" "$MSG" \
    "$(err "BEGIN; INSERT INTO l.t VALUES (2); COMMIT;")"
check_eq "DDL too" "$MSG" "$(err "CREATE TABLE l.u (i INTEGER);")"
check_eq "the refused commits wrote no snapshot" "$n" "$(snaps)"
check_eq "and no rows" "1" "$(rows)"
check_eq "the error tells how to provide the message" "1" \
    "$(grep -c "CALL ducklake.set_commit_message('author_name', 'commit_message');" "$d/err")"

lake_sql "$d" "BEGIN; INSERT INTO l.t VALUES (3); CALL l.set_commit_message('cy', 'with one'); COMMIT;" >/dev/null
check_eq "required: a transaction with a message commits" "2" "$(rows)"

: >"$d/err"
lake_sql "$d" "CALL l.set_option('require_commit_message', false); INSERT INTO l.t VALUES (4);" >/dev/null
check_eq "setting it back to false needs no message" "" "$(cat "$d/err")"
check_eq "then statements commit without one" "3" "$(rows)"

finish
