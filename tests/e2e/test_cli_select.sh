#!/usr/bin/env bash
# test_cli_select.sh — dbt's habits on the project commands: the selector grammar (-s/--select,
# --exclude, +m, m+, 2+m, m+1, @m, tag:, path:, strategy:, globs, unions by space, intersections
# by comma, a no-match error naming the closest model) on run/plan/lineage/show; the project found
# from a subfolder; -C anywhere on the command line; targets (config/targets/NAME.sql in place of
# config/catalog.sql, recorded in the run); maintain and lake on the project's lake.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

p=$(mktempdir)
mkdir -p "$p/config/targets" "$p/models/staging" "$p/models/core" "$p/models/marts"
echo "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');" >"$p/config/catalog.sql"
echo "ATTACH 'ducklake:dev.ducklake' AS lake (DATA_PATH 'dev/');" >"$p/config/targets/dev.sql"
printf -- "-- tags nightly\nSELECT 1 AS id, 'x' AS v\n" >"$p/models/staging/a.sql"
printf -- "SELECT id FROM staging.a\n" >"$p/models/staging/e.sql"
printf -- "-- materialize key=id\n-- tags nightly,finance\nSELECT id, v FROM staging.a\n" >"$p/models/core/b.sql"
printf -- "-- tags finance\nSELECT id FROM core.b\n" >"$p/models/core/c.sql"
printf -- "SELECT id FROM core.c\n" >"$p/models/marts/d.sql"
printf -- "-- materialize append\nSELECT id FROM core.c\n" >"$p/models/marts/f.sql"

# sel NAME WANT ARGS... — the models `tarn plan --json ARGS` selects, in build order
sel() {
    local name=$1 want=$2 got
    shift 2
    got=$("$TARN" plan --json -C "$p" "$@" 2>"$_E2E_TMP/sel.err" | python3 -c '
import json, sys
print(" ".join(m["model"] for m in json.load(sys.stdin)["models"]))' 2>/dev/null)
    check_eq "$name" "$want" "$got"
}
sel "no selector: every model" "staging.a core.b core.c marts.d marts.f staging.e"
sel "+m: and upstream" "staging.a core.b core.c" +core.c
sel "m+: and downstream" "core.b core.c marts.d marts.f" core.b+
sel "1+m: one level up" "core.b core.c" 1+core.c
sel "2+m: two levels up" "staging.a core.b core.c" 2+core.c
sel "m+1: one level down" "core.b core.c" core.b+1
sel "@m: downstream and what they need" "staging.a core.b core.c marts.d marts.f" @core.b
sel "tag:" "core.b core.c" tag:finance
sel "intersection by comma" "core.b" tag:nightly,core.b+
sel "union by space (arguments)" "staging.a marts.d" staging.a marts.d
sel "union by space (one argument)" "staging.a marts.d" 'staging.a marts.d'
sel "path:" "marts.d marts.f" path:marts
sel "path: a file" "marts.f" path:models/marts/f.sql
sel "strategy:" "core.b marts.f" strategy:merge strategy:append
sel "glob" "marts.d marts.f" 'marts.*'
sel "table name" "core.c" c
sel "-s takes several values" "staging.a marts.d" -s staging.a marts.d
sel "--select=" "core.b" --select=core.b
sel "--exclude" "staging.a core.b staging.e" --exclude core.c+
sel "-s with --exclude" "marts.d marts.f" -s core.b+ --exclude tag:finance
sel "--exclude before -s" "marts.d marts.f" --exclude tag:finance -s core.b+

run_rc "a typo is a usage error" 2 "$p" plan core.cc
contains "it names the closest model" "selector 'core.cc' matches no model; did you mean core.c?" "$ERR"
run_rc "a table-name typo" 2 "$p" run -s stagng.a
contains "closest model for it" "did you mean staging.a?" "$ERR"
run_rc "an unknown tag" 2 "$p" plan tag:nope
contains "the tags are listed" "no model has tag 'nope' (the tags: nightly, finance)" "$ERR"
run_rc "an unknown strategy" 2 "$p" plan strategy:histry
contains "the strategies are listed" "no strategy 'histry' (replace, merge, append, history" "$ERR"
run_rc "an empty intersection" 2 "$p" plan tag:finance,path:staging
contains "said as such" "no model matches all" "$ERR"
run_rc "--exclude of everything" 2 "$p" run --exclude '*'
contains "said as such" "--exclude leaves no model selected" "$ERR"
run_rc "@ with +" 2 "$p" plan @core.b+
run_rc "-s without a value" 2 "$p" plan -s
[ ! -e "$p/lake.ducklake" ] && ok "usage errors build nothing" || fail "usage errors build nothing"

# run with selectors builds exactly those; the run record keeps them
run_ok "run -s +core.c" "$p" run -s +core.c
check_eq "only those built" "core.b
core.c
staging.a" "$(lakeq "$p" "SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE table_catalog = 'lake' ORDER BY 1")"
check_eq "run record: selectors and target" "+core.c|default" \
    "$(lakeq "$p" "SELECT selectors || '|' || target FROM __ducklake_metadata_lake.tarn_run")"

# lineage and show take selectors
run_ok "lineage --select" "$p" lineage --format json -s tag:finance
check_eq "lineage of the selection" "core.b core.c" "$(printf '%s' "$OUT" | python3 -c '
import json, sys
print(" ".join(n["name"] for n in json.load(sys.stdin)["nodes"]))')"
run_ok "show -s" "$p" show -s core.b --format csv
check_eq "show -s prints its rows" "id,v
1,x" "$OUT"
run_rc "show of several models" 2 "$p" show tag:finance
contains "names them" "the selector selects 2: core.b, core.c" "$ERR"

# the project from a subfolder, -C before the command and at the end
(cd "$p/models/marts" && "$TARN" run marts.d >/dev/null 2>"$_E2E_TMP/sub.err") &&
    ok "run from a subfolder" || fail "run from a subfolder" "$(cat "$_E2E_TMP/sub.err")"
check_eq "it built into the project's lake" "1" \
    "$(lakeq "$p" "SELECT count(*) FROM lake.marts.d")"
[ ! -e "$p/models/marts/lake.ducklake" ] && ok "no lake in the subfolder" || fail "no lake in the subfolder"
o=$(cd / && "$TARN" -C "$p" plan --json marts.d 2>&1) && ok "tarn -C DIR plan" || fail "tarn -C DIR plan" "$o"
o=$(cd / && "$TARN" plan marts.d -C "$p" 2>&1) && ok "tarn plan … -C DIR" || fail "tarn plan … -C DIR" "$o"
o=$(cd / && "$TARN" plan marts.d 2>&1)
[ $? -eq 2 ] && ok "outside a project: a usage error" || fail "outside a project: a usage error" "$o"
contains "saying so" "is not a tarn project" "$o"

# targets
run_ok "run --target dev" "$p" run --target dev staging.a
[ -e "$p/dev.ducklake" ] && ok "the dev lake was created" || fail "the dev lake was created"
check_eq "production untouched (no staging.e)" "0" \
    "$(lakeq "$p" "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'lake' AND table_name = 'e'")"
devq() { (cd "$p" && "$TARN" sql --format csv -c "ATTACH 'ducklake:dev.ducklake' AS lake (DATA_PATH 'dev/'); $1") | tail -n +2; }
check_eq "the dev run records its target" "dev|staging.a" "$(devq "SELECT r.target || '|' || m.model FROM __ducklake_metadata_lake.tarn_run r JOIN __ducklake_metadata_lake.tarn_model_run m USING (run_id)")"
check_eq "and the snapshot's extra info" "dev" "$(devq "SELECT json_extract_string(commit_extra_info, '$.run_target') FROM ducklake_snapshots('lake') WHERE commit_extra_info IS NOT NULL")"
o=$(cd / && "$TARN" --target dev -C "$p" plan --json 2>&1) && ok "global --target" || fail "global --target" "$o"
check_eq "global --target reads the dev lake" "would skip: unchanged" "$(printf '%s' "$o" | python3 -c '
import json, sys
m = [m for m in json.load(sys.stdin)["models"] if m["model"] == "staging.a"][0]
print(("would run: " if m["would_run"] else "would skip: ") + m["reason"])' 2>&1)"
(cd "$p" && TARN_TARGET=dev "$TARN" history staging.a --format csv >"$_E2E_TMP/h" 2>&1)
check_eq "TARN_TARGET: history of the dev lake" "1" "$(grep -c 'staging.a' "$_E2E_TMP/h")"
run_rc "an unknown target" 2 "$p" run --target prod
contains "lists the targets" "no target 'prod'" "$ERR"
contains "lists the targets (names)" "the targets are: dev" "$ERR"
run_rc "a target name with a slash" 2 "$p" run --target ../x
[ ! -e "$p/prod.ducklake" ] && ok "nothing built for a missing target" || fail "nothing built for a missing target"

# maintain and lake on the project's lake
check_eq "before: every row inlined" "0" \
    "$(lakeq "$p" "SELECT count(*) FROM __ducklake_metadata_lake.ducklake_data_file")"
o=$(cd "$p/models" && "$TARN" maintain flush --format csv 2>&1) && ok "maintain inside a project" ||
    fail "maintain inside a project" "$o"
contains "it flushed the project's lake" "marts,d,1" "$o"
o=$(cd "$p" && "$TARN" maintain flush --target dev --format csv 2>&1)
contains "maintain --target dev flushes the dev lake" "staging,a,1" "$o"
check_eq "the project's lake has data files now (a, b, c, d)" "4" \
    "$(lakeq "$p" "SELECT count(*) FROM __ducklake_metadata_lake.ducklake_data_file")"
o=$(cd / && "$TARN" maintain flush 2>&1)
[ $? -eq 2 ] && ok "maintain outside a project needs --lake" || fail "maintain outside a project needs --lake" "$o"
o=$(cd "$p/models" && "$TARN" lake upgrade --dry-run 2>&1) && ok "lake upgrade inside a project" ||
    fail "lake upgrade inside a project" "$o"
contains "on the project's catalog" '"lake.ducklake" is a DuckLake 1.0 catalog' "$o"

finish
