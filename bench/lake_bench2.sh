#!/usr/bin/env bash
# bench/lake_bench2.sh — lake benchmarks, part 2: compaction of many small appends, and pruning
# of a partitioned table. Figures are ratios against a baseline measured in the same run.
#
#   bench/lake_bench2.sh                          # 2,000 appends, 10M partitioned rows
#   APPENDS=500 ROWS=1000000 bench/lake_bench2.sh # quick run
#
# 5. APPENDS autocommit INSERTs of APPEND_ROWS rows each into a lake attached with
#    DATA_INLINING_ROW_LIMIT 0 (one Parquet file per INSERT), then
#    CALL ducklake_merge_adjacent_files('lake') and CALL ducklake_cleanup_old_files('lake',
#    cleanup_all => true). Reported: build time and commit rate, file count before / after, the
#    aggregate scan before / after (ratio), and a check that the scan and a time-travel read AT
#    the snapshot of the middle INSERT give the same result before and after compaction.
# 6. ROWS rows partitioned by an identity column p with 100 values (SET PARTITIONED BY (p)
#    before the INSERT): the aggregate WHERE p = 42 against the same aggregate over the whole
#    table (ratio), the same pair over read_parquet of the table's files, and the number of files
#    each lake query reads (EXPLAIN ANALYZE, "Total Files Read").
#
# Environment: APPENDS (default 2000), APPEND_ROWS (default 5), ROWS (default 10000000), RUNS
# (repetitions of each timed query, median reported, default 3), PART (5, 6 or all), TARN
# (binary, default build/tarn), KEEP_TMP=1 keeps the work directory. See bench/README.md.
#
# The last line is key=value pairs: appends_per_s, files_before, files_after, compact_scan_ratio
# (scan before / after compaction), merge_s, partitioned_insert_ratio (the partitioned INSERT /
# DuckDB's COPY … PARTITION_BY), pruned_ratio (WHERE p = 42 / full scan),
# pruned_ratio_parquet (the same over read_parquet), pruned_vs_parquet (lake filtered /
# read_parquet filtered), files_read_filtered, files_read_full.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
APPENDS=${APPENDS:-2000}
APPEND_ROWS=${APPEND_ROWS:-5}
ROWS=${ROWS:-10000000}
RUNS=${RUNS:-3}
PART=${PART:-all}
SRC_TARN=${TARN:-$REPO/build/tarn}

BENCH=lake_bench2
. "$REPO/bench/lib.sh"

[[ $APPENDS =~ ^[0-9]+$ && $APPENDS -ge 10 ]] || die "APPENDS must be an integer >= 10"
[[ $APPEND_ROWS =~ ^[0-9]+$ && $APPEND_ROWS -ge 1 ]] || die "APPEND_ROWS must be a positive integer"
[[ $ROWS =~ ^[0-9]+$ && $ROWS -ge 1000 ]] || die "ROWS must be an integer >= 1000"
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 ]] || die "RUNS must be a positive integer"
[[ $PART =~ ^(5|6|all)$ ]] || die "PART must be 5, 6 or all"
[ -x "$SRC_TARN" ] || die "$SRC_TARN not found; run make -j2 first"
[ -f deps/lib/libduckdb.so ] || die "deps/lib/libduckdb.so not found; run scripts/deps.sh"

bench_setup tarn-bench2

MARK="SELECT 'BENCH_MARK ' || epoch_us(get_current_timestamp()) AS m;"

# run_tarn DIR SCRIPT — `tarn sql --format csv -f SCRIPT` in DIR; stdout in $WORK/last.out,
# MARKS = the BENCH_MARK timestamps it printed (µs), P_WALL = whole-process seconds.
run_tarn() {
    local dir=$1 script=$2 t0
    t0=$EPOCHREALTIME
    (cd "$dir" && "$TARN" sql --format csv -f "$script" >"$WORK/last.out" 2>"$WORK/last.err") || {
        cat "$WORK/last.err" >&2
        die "tarn sql -f $script failed in $dir"
    }
    P_WALL=$(calc "$EPOCHREALTIME - $t0" %.4f)
    mapfile -t MARKS < <(grep -o 'BENCH_MARK [0-9]*' "$WORK/last.out" | cut -d' ' -f2)
}
mark_span() { calc "(${MARKS[$2]} - ${MARKS[$1]}) / 1e6" %.4f; }
# the line after the first line equal to $1 in the last output (a one-row CSV result)
csv_after() { awk -v h="$1" 'f {print; exit} $0 == h {f = 1}' "$WORK/last.out"; }
# the result line of the Nth (1-based) query whose header is $1
csv_nth() { awk -v h="$1" -v n="$2" 'f {print; exit} $0 == h && ++c == n {f = 1}' "$WORK/last.out"; }

# timed_queries DIR PRELUDE QUERY… — each QUERY RUNS times in one process after PRELUDE, each run
# between marks; sets T_MED[i] (median seconds of query i) and T_RUNS[i] (the runs).
timed_queries() {
    local dir=$1 prelude=$2 i r script=$WORK/timed.sql
    shift 2
    local queries=("$@")
    {
        echo "$prelude"
        echo "$MARK"
        for ((i = 0; i < ${#queries[@]}; i++)); do
            for ((r = 0; r < RUNS; r++)); do echo "${queries[i]};"; echo "$MARK"; done
        done
    } >"$script"
    run_tarn "$dir" "$script"
    T_MED=() T_RUNS=()
    for ((i = 0; i < ${#queries[@]}; i++)); do
        local runs=()
        for ((r = 0; r < RUNS; r++)); do runs+=("$(mark_span $((i * RUNS + r)) $((i * RUNS + r + 1)))"); done
        T_MED+=("$(median "${runs[@]}")")
        T_RUNS+=("${runs[*]}")
    done
}

# files_read DIR PRELUDE QUERY — the "Total Files Read" of every scan in EXPLAIN ANALYZE QUERY,
# summed (the JSON form: the text form cuts wide plans)
files_read() {
    printf '%s\nEXPLAIN (ANALYZE, FORMAT json) %s;\n' "$2" "$3" >"$WORK/explain.sql"
    run_tarn "$1" "$WORK/explain.sql"
    awk -F'"+' '/"Total Files Read"/ {s += $4} END {print s + 0}' "$WORK/last.out"
}

# file_list DIR ATTACH TABLE — a DuckDB list literal of the table's data files
file_list() {
    printf "%s;\nSELECT data_file FROM ducklake_list_files('lake', '%s');\n" "$2" "$3" >"$WORK/list.sql"
    run_tarn "$1" "$WORK/list.sql"
    awk "NR > 1 && NF {printf \"%s'%s'\", (n++ ? \", \" : \"[\"), \$0} END {print \"]\"}" "$WORK/last.out"
}

parquet_on_disk() { find "$1" -name '*.parquet' | wc -l; }

appends_per_s=NA files_before=NA files_after=NA compact_scan_ratio=NA merge_s=NA
insert_ratio=NA pruned_ratio=NA pruned_ratio_parquet=NA pruned_vs_parquet=NA files_read_filtered=NA files_read_full=NA
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
REPORT=$WORK/report.txt
: >"$REPORT"
row() { printf '   %-74s %s\n' "$1" "${2:-}" | sed 's/ *$//' >>"$REPORT"; }
head_row() { printf '\n%s\n' "$1" >>"$REPORT"; }

# ---------------------------------------------------------------- 5: many small appends, compaction

if [ "$PART" = all ] || [ "$PART" = 5 ]; then
    log "5. $APPENDS autocommit INSERTs of $APPEND_ROWS rows (DATA_INLINING_ROW_LIMIT 0), then merge_adjacent_files"
    D=$WORK/appends
    mkdir -p "$D"
    A_ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/', DATA_INLINING_ROW_LIMIT 0)"
    tenth=$(((APPENDS + 9) / 10))
    mid=$((APPENDS / 2))
    {
        echo "$A_ATTACH;"
        echo "CREATE TABLE lake.a (id BIGINT, k INTEGER, v DECIMAL(18, 2), s VARCHAR);"
        echo "$MARK"
        for ((i = 0; i < APPENDS; i++)); do
            vals=""
            for ((j = 0; j < APPEND_ROWS; j++)); do
                id=$((i * APPEND_ROWS + j))
                vals+="${vals:+, }($id, $((id % 97)), $((id % 1000)).$((id % 100)), 's$((id % 313))')"
            done
            echo "INSERT INTO lake.a VALUES $vals;"
            if (((i + 1) % tenth == 0 || i + 1 == APPENDS)); then echo "$MARK"; fi
            # the snapshot of the middle INSERT, read back AT it before and after compaction
            if ((i + 1 == mid)); then echo "SELECT id AS mid_snapshot FROM ducklake_current_snapshot('lake');"; fi
        done
        echo "SELECT count(*) AS n_files FROM ducklake_list_files('lake', 'a');"
    } >"$WORK/appends.sql"
    run_tarn "$D" "$WORK/appends.sql"
    last=$((${#MARKS[@]} - 1))
    build_s=$(mark_span 0 "$last")
    rate_first=$(calc "$tenth / $(mark_span 0 1)" %.0f)
    rate_last=$(calc "($APPENDS - $tenth * $((last - 1))) / $(mark_span $((last - 1)) "$last")" %.0f)
    tenths=()
    for ((t = 1; t <= last; t++)); do tenths+=("$(mark_span $((t - 1)) "$t")"); done
    appends_per_s=$(calc "$APPENDS / $build_s" %.0f)
    files_before=$(csv_after n_files)
    mid_snapshot=$(csv_after mid_snapshot)
    disk_before=$(parquet_on_disk "$D/data")
    [[ $mid_snapshot =~ ^[0-9]+$ ]] || die "no snapshot id for the middle INSERT"

    SEL_A="SELECT count(*), sum(id), sum(k), sum(v), min(s), max(s), count(DISTINCT s) FROM"
    AGG_A="$SEL_A lake.a"
    AGG_AT="$AGG_A AT (VERSION => $mid_snapshot)"
    a_files=$(file_list "$D" "$A_ATTACH" a)
    AGG_PQ="$SEL_A read_parquet($a_files)"
    timed_queries "$D" "$A_ATTACH;" "$AGG_A" "$AGG_PQ"
    scan_before=${T_MED[0]} scan_before_runs=${T_RUNS[0]} scan_pq=${T_MED[1]}
    res_before=$(csv_nth 'count_star(),sum(id),sum(k),sum(v),min(s),max(s),count(DISTINCT s)' 1)
    res_pq=$(csv_nth 'count_star(),sum(id),sum(k),sum(v),min(s),max(s),count(DISTINCT s)' $((RUNS + 1)))
    timed_queries "$D" "$A_ATTACH;" "$AGG_AT"
    scan_at_before=${T_MED[0]}
    res_at_before=$(csv_after 'count_star(),sum(id),sum(k),sum(v),min(s),max(s),count(DISTINCT s)')
    [ "${res_before%%,*}" = $((APPENDS * APPEND_ROWS)) ] || die "scan counted ${res_before%%,*} rows"
    [ "${res_at_before%%,*}" = $((mid * APPEND_ROWS)) ] || die "scan AT the middle snapshot counted ${res_at_before%%,*} rows"
    [ "$res_pq" = "$res_before" ] || die "read_parquet of the files gives $res_pq, the lake $res_before"

    {
        echo "$A_ATTACH;"
        echo "$MARK"
        echo "CALL ducklake_merge_adjacent_files('lake');"
        echo "$MARK"
        echo "SELECT count(*) AS n_files FROM ducklake_list_files('lake', 'a');"
        echo "SELECT count(*) AS disk_files FROM glob('data/**/*.parquet');"
        echo "$MARK"
        echo "CALL ducklake_cleanup_old_files('lake', cleanup_all => true);"
        echo "$MARK"
    } >"$WORK/merge.sql"
    run_tarn "$D" "$WORK/merge.sql"
    merge_s=$(mark_span 0 1)
    cleanup_s=$(mark_span 2 3)
    files_after=$(csv_after n_files)
    disk_merged=$(csv_after disk_files)
    disk_after=$(parquet_on_disk "$D/data")

    timed_queries "$D" "$A_ATTACH;" "$AGG_A"
    scan_after=${T_MED[0]} scan_after_runs=${T_RUNS[0]}
    res_after=$(csv_after 'count_star(),sum(id),sum(k),sum(v),min(s),max(s),count(DISTINCT s)')
    timed_queries "$D" "$A_ATTACH;" "$AGG_AT"
    scan_at_after=${T_MED[0]}
    res_at_after=$(csv_after 'count_star(),sum(id),sum(k),sum(v),min(s),max(s),count(DISTINCT s)')
    compact_scan_ratio=$(calc "$scan_before / $scan_after" %.1f)
    same=$([ "$res_before" = "$res_after" ] && echo identical || echo DIFFERENT)
    same_at=$([ "$res_at_before" = "$res_at_after" ] && echo identical || echo DIFFERENT)

    head_row "5. $APPENDS autocommit INSERTs of $APPEND_ROWS rows, DATA_INLINING_ROW_LIMIT 0, then compaction"
    row "build: $APPENDS INSERTs (one snapshot and one Parquet file each)" "${build_s}s, $appends_per_s commits/s"
    row "commits/s over the first / last tenth of the INSERTs" "$rate_first / $rate_last"
    row "seconds per tenth of the INSERTs: ${tenths[*]}"
    row "data files: catalog before / after merge" "$files_before / $files_after"
    row "Parquet files on disk: before merge / after merge / after cleanup" "$disk_before / $disk_merged / $disk_after"
    row "ducklake_merge_adjacent_files / ducklake_cleanup_old_files" "${merge_s}s / ${cleanup_s}s"
    row "aggregate scan before compaction ($files_before files)" "${scan_before}s (runs $scan_before_runs)"
    row "aggregate scan after compaction ($files_after file(s))" "${scan_after}s (runs $scan_after_runs)"
    row "ratio before / after" "$compact_scan_ratio"
    row "baseline: read_parquet of the $files_before files before compaction" "${scan_pq}s (lake / read_parquet $(calc "$scan_before / $scan_pq" %.2f))"
    row "scan AT (VERSION => $mid_snapshot) before / after" "${scan_at_before}s / ${scan_at_after}s"
    row "result now, before and after: $same" "$res_after"
    row "result AT the middle snapshot, before and after: $same_at" "$res_at_after"
    [ "$same" = identical ] && [ "$same_at" = identical ] ||
        die "compaction changed a result: now $res_before -> $res_after, AT $res_at_before -> $res_at_after"
fi

# ---------------------------------------------------------------- 6: partition pruning

if [ "$PART" = all ] || [ "$PART" = 6 ]; then
    log "6. $ROWS rows partitioned by p (100 values): WHERE p = 42 vs a full scan"
    D=$WORK/part
    mkdir -p "$D"
    P_ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/')"
    cat >"$WORK/part.sql" <<EOF
$P_ATTACH;
CREATE TABLE lake.p (id BIGINT, p INTEGER, v DOUBLE, s VARCHAR);
ALTER TABLE lake.p SET PARTITIONED BY (p);
$MARK
INSERT INTO lake.p SELECT range, (range % 100)::INT, (range % 997) * 0.5, 's' || (range % 10000) FROM range($ROWS);
$MARK
SELECT count(*) AS n_files FROM ducklake_list_files('lake', 'p');
EOF
    run_tarn "$D" "$WORK/part.sql"
    insert_s=$(mark_span 0 1)
    p_files=$(csv_after n_files)
    # baseline for the write: DuckDB's own partitioned COPY of the same rows
    cat >"$WORK/pcopy.sql" <<EOF
$MARK
COPY (SELECT range AS id, (range % 100)::INT AS p, (range % 997) * 0.5 AS v, 's' || (range % 10000) AS s FROM range($ROWS)) TO 'pcopy' (FORMAT parquet, PARTITION_BY (p));
$MARK
EOF
    run_tarn "$D" "$WORK/pcopy.sql"
    pcopy_s=$(mark_span 0 1)
    rm -rf "$D/pcopy"
    insert_ratio=$(calc "$insert_s / $pcopy_s" %.1f)

    SEL_P="SELECT count(*), sum(v), min(s), max(id) FROM"
    AGG_P="$SEL_P lake.p"
    list=$(file_list "$D" "$P_ATTACH" p)
    AGG_PQ="$SEL_P read_parquet($list)"
    AGG_HIVE="$SEL_P read_parquet('data/main/p/*/*.parquet', hive_partitioning = true)"
    timed_queries "$D" "$P_ATTACH;" "$AGG_P" "$AGG_P WHERE p = 42" "$AGG_PQ" "$AGG_PQ WHERE p = 42" \
        "$AGG_HIVE WHERE p = 42"
    full_s=${T_MED[0]} filt_s=${T_MED[1]} pq_full_s=${T_MED[2]} pq_filt_s=${T_MED[3]} hive_filt_s=${T_MED[4]}
    hdr='count_star(),sum(v),min(s),max(id)'
    res_full=$(csv_nth "$hdr" 1) res_filt=$(csv_nth "$hdr" $((RUNS + 1)))
    res_pq_full=$(csv_nth "$hdr" $((2 * RUNS + 1))) res_pq_filt=$(csv_nth "$hdr" $((3 * RUNS + 1)))
    res_hive=$(csv_nth "$hdr" $((4 * RUNS + 1)))
    [ "${res_full%%,*}" = "$ROWS" ] || die "full scan counted ${res_full%%,*} rows"
    [ "$res_full" = "$res_pq_full" ] || die "full scan: lake $res_full, read_parquet $res_pq_full"
    [ "$res_filt" = "$res_pq_filt" ] && [ "$res_filt" = "$res_hive" ] ||
        die "WHERE p = 42: lake $res_filt, read_parquet $res_pq_filt, hive $res_hive"
    files_read_filtered=$(files_read "$D" "$P_ATTACH;" "$AGG_P WHERE p = 42")
    files_read_full=$(files_read "$D" "$P_ATTACH;" "$AGG_P")
    files_read_pq=$(files_read "$D" "$P_ATTACH;" "$AGG_PQ WHERE p = 42")
    pruned_ratio=$(calc "$filt_s / $full_s" %.3f)
    pruned_ratio_parquet=$(calc "$pq_filt_s / $pq_full_s" %.3f)
    pruned_vs_parquet=$(calc "$filt_s / $pq_filt_s" %.2f)

    head_row "6. $ROWS rows, SET PARTITIONED BY (p), 100 values of p; SELECT count(*), sum(v), min(s), max(id)"
    row "INSERT … SELECT of $ROWS rows into 100 partitions" "${insert_s}s, $p_files data files"
    row "baseline: COPY (same SELECT) TO dir (FORMAT parquet, PARTITION_BY (p))" "${pcopy_s}s (INSERT / COPY $insert_ratio)"
    row "lake: full scan / WHERE p = 42" "${full_s}s / ${filt_s}s"
    row "ratio filtered / full (1/100 of the rows)" "$pruned_ratio"
    row "read_parquet of the same files: full / WHERE p = 42" "${pq_full_s}s / ${pq_filt_s}s, ratio $pruned_ratio_parquet"
    row "read_parquet('data/main/p/*/*.parquet', hive_partitioning) WHERE p = 42" "${hive_filt_s}s"
    row "lake filtered / read_parquet filtered" "$pruned_vs_parquet"
    row "files read (EXPLAIN ANALYZE): lake filtered / lake full / read_parquet filtered" "$files_read_filtered / $files_read_full / $files_read_pq"
    row "results: full $res_full | p = 42 $res_filt"
fi

# ---------------------------------------------------------------- report

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "tarn lake benchmarks, part 2 — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, APPENDS=$APPENDS x $APPEND_ROWS rows, ROWS=$ROWS, RUNS=$RUNS (medians)"
if [ "$SRC_TARN" = "$REPO/build/tarn" ]; then
    rev="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$REPO" diff --quiet HEAD -- src include 2>/dev/null || echo ' + uncommitted changes in src/ or include/')"
else
    rev=$SRC_TARN
fi
echo "tarn: $rev, load average before/after: $load_before / $load_after"
cat "$REPORT"
echo
echo "appends_per_s=$appends_per_s files_before=$files_before files_after=$files_after compact_scan_ratio=$compact_scan_ratio merge_s=$merge_s partitioned_insert_ratio=$insert_ratio pruned_ratio=$pruned_ratio pruned_ratio_parquet=$pruned_ratio_parquet pruned_vs_parquet=$pruned_vs_parquet files_read_filtered=$files_read_filtered files_read_full=$files_read_full"
