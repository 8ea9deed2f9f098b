#!/usr/bin/env bash
# tests/e2e/test_source_layers.sh — the layers of the source tree depend one way.
#
# Each folder of src/ is a layer; a file may include headers of its own layer and of the layers
# below it, never of a layer above (ARCHITECTURE.md draws them):
#
#   util < duck < sql < lake < session < project < materialize < sched < web < cli
#
# The public headers of include/tarn/ belong to a layer too: tarn/error.h, tarn/output.h and tarn/version.h are
# util's (every layer reports errors through the one; the lexer and the session share the other;
# the version is a constant), tarn/session.h and tarn/upgrade.h are session's (the API the layers
# above use).
# One check per layer, listing every offending #include with file and line. A folder of src/ that
# is missing from the order above fails too, so a new layer must be placed on purpose.
. "$(dirname "$0")/lib.sh"

ORDER=(util duck sql lake session project materialize sched web cli)

rank_of() {
    local i
    for i in "${!ORDER[@]}"; do
        [ "${ORDER[$i]}" = "$1" ] && { echo "$i"; return; }
    done
    echo -1
}

# The layer of an included path: its folder, or for a public header the layer it belongs to.
layer_of_include() {
    case $1 in
    tarn/error.h | tarn/output.h | tarn/version.h) echo util ;;
    tarn/session.h | tarn/upgrade.h) echo session ;;
    tarn/*) echo "?" ;;
    */*) echo "${1%%/*}" ;;
    *) echo "" ;; # a header beside the file (no folder): same layer
    esac
}

for dir in "$REPO"/src/*/; do
    layer=$(basename "$dir")
    mine=$(rank_of "$layer")
    if [ "$mine" -lt 0 ]; then
        fail "layer $layer" "src/$layer is not in the layer order of $0: place it"
        continue
    fi
    bad=""
    while IFS= read -r hit; do
        [ -n "$hit" ] || continue
        file=${hit%%:*}
        rest=${hit#*:}
        line=${rest%%:*}
        inc=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"${rest#*:}")
        to=$(layer_of_include "$inc")
        [ -n "$to" ] || continue
        theirs=$(rank_of "$to")
        if [ "$to" = "?" ] || [ "$theirs" -lt 0 ]; then
            bad+="${file#"$REPO"/}:$line includes \"$inc\", of no known layer"$'\n'
        elif [ "$theirs" -gt "$mine" ]; then
            bad+="${file#"$REPO"/}:$line includes \"$inc\" ($to is above $layer)"$'\n'
        fi
    done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$dir"*.[ch] 2>/dev/null)
    if [ -z "$bad" ]; then
        ok "layer $layer includes only its own layer and those below"
    else
        fail "layer $layer includes only its own layer and those below" "$bad"
    fi
done

# The public headers include nothing above their own layer.
for h in "$REPO"/include/tarn/*.h; do
    name=tarn/$(basename "$h")
    layer=$(layer_of_include "$name")
    mine=$(rank_of "$layer")
    bad=$(grep -n '#include "' "$h" | while IFS= read -r l; do
        inc=$(sed -n 's/.*#include "\([^"]*\)".*/\1/p' <<<"$l")
        to=$(layer_of_include "$inc")
        [ -z "$to" ] && continue
        [ "$(rank_of "$to")" -gt "$mine" ] && echo "$name:${l%%:*} includes \"$inc\""
    done)
    [ -z "$bad" ] && ok "$name includes nothing above $layer" || fail "$name includes nothing above $layer" "$bad"
done

# Inside a folder, files depend one way too: no include cycle (include_cycles.py says how they
# are found). A folder whose cycle cannot be broken at once may be listed in PENDING_CYCLES until
# it is; the list must only shrink: a folder listed without a cycle fails. None is listed today.
PENDING_CYCLES=()
for dir in "$REPO"/src/*/; do
    layer=$(basename "$dir")
    found=$(python3 "$REPO/tests/e2e/include_cycles.py" "$dir")
    pending=0
    for p in "${PENDING_CYCLES[@]}"; do [ "$p" = "$layer" ] && pending=1; done
    if [ "$pending" = 1 ]; then
        [ -n "$found" ] && ok "layer $layer: include cycles still pending ($(wc -l <<<"$found"))" ||
            fail "layer $layer: include cycles still pending" "none left: remove $layer from PENDING_CYCLES"
    else
        [ -z "$found" ] && ok "layer $layer: no include cycle inside it" ||
            fail "layer $layer: no include cycle inside it" "$found"
    fi
done
probe_dir=$(mktempdir)/lake
mkdir -p "$probe_dir"
printf '#include "lake/b.h"\n' >"$probe_dir/a.c"
printf '#include "lake/a.h"\n' >"$probe_dir/b.c"
[ -n "$(python3 "$REPO/tests/e2e/include_cycles.py" "$probe_dir")" ] &&
    ok "an include cycle is recognised as one" || fail "an include cycle is recognised as one"

# The DuckLake catalog is lake/'s alone: no file above it names a catalog table in SQL (the
# catalog's tables are qualified by the catalog's name, "%s.ducklake_…") or reaches for the
# name itself (lk_lake.meta). Above lake/, catalog facts come from lake/ functions.
# A catalog table's name as a string of its own (handed to a quoting helper) counts too.
CATALOG_TABLES='snapshot|snapshot_changes|schema|table|view|column|data_file|delete_file|partition_info|partition_column|file_partition_value|file_column_stats|table_stats|table_column_stats|metadata|tag|column_tag|inlined_data_tables|column_mapping|name_mapping|files_scheduled_for_deletion|macro|macro_impl|macro_parameters|sort_info|sort_expression|schema_versions|file_variant_stats'
catalog_sql() {
    grep -rnE '%s\.(\\")?ducklake_|->meta\b|"ducklake_('"$CATALOG_TABLES"')"' "$@" 2>/dev/null |
        grep -v '^[^:]*:[0-9]*:[[:space:]]*/\?\*'
}
outside=$(find "$REPO/src" -name '*.[ch]' ! -path "$REPO/src/lake/*" | sort)
bad=$(catalog_sql $outside | sed "s|$REPO/||")
[ -z "$bad" ] && ok "no file above lake/ names a catalog table" ||
    fail "no file above lake/ names a catalog table" "$bad"
probe_sql=$(mktempdir)/probe_sql.c
printf 'q = xasprintf("SELECT 1 FROM %%s.ducklake_snapshot", l->meta);\n' >"$probe_sql"
[ -n "$(catalog_sql "$probe_sql")" ] && ok "SQL naming a catalog table is recognised as such" ||
    fail "SQL naming a catalog table is recognised as such"
printf 'quote_qualified(&q, cat, NULL, "ducklake_partition_info");\n' >"$probe_sql"
[ -n "$(catalog_sql "$probe_sql")" ] && ok "a catalog table's name handed to a quoting helper is recognised" ||
    fail "a catalog table's name handed to a quoting helper is recognised"

# The check itself can fail: a file of util/ that included a lake header would be reported.
probe=$(mktempdir)/probe.c
printf '#include "lake/lake.h"\n' >"$probe"
inc=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$probe")
[ "$(rank_of "$(layer_of_include "$inc")")" -gt "$(rank_of util)" ] &&
    ok "an upward include is recognised as one" || fail "an upward include is recognised as one"

finish
