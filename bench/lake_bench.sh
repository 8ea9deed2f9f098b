#!/usr/bin/env bash
# bench/lake_bench.sh — lake benchmarks as ratios against a baseline measured in the same run.
#
#   bench/lake_bench.sh                 # 10M rows (a few minutes on 2 cores)
#   ROWS=1000000 bench/lake_bench.sh    # quick run
#
# Environment: ROWS (rows of the CTAS table, default 10000000), RUNS (repetitions per side,
# default 3; medians are reported), INSERTS (single-row commits, default 1000), WIDE (extra INTEGER
# columns of the single-row commits' table, default 0: a wide table's commits cost its column
# statistics), TARN (binary, default build/tarn), KEEP_TMP=1 keeps the work directory. See
# bench/README.md.
#
# Prints a table of figures, then one last line of key=value pairs:
#   ctas_ratio=… scan_ratio=… prune_ratio=… commits_per_s=… commits_per_s_parquet=… rss_ratio=… (and a few more)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
ROWS=${ROWS:-10000000}
RUNS=${RUNS:-3}
INSERTS=${INSERTS:-1000}
WIDE=${WIDE:-0}
SRC_TARN=${TARN:-$REPO/build/tarn}

BENCH=lake_bench
. "$REPO/bench/lib.sh"

[[ $ROWS =~ ^[0-9]+$ && $ROWS -ge 100 ]] || die "ROWS must be an integer >= 100"
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 ]] || die "RUNS must be a positive integer"
[[ $INSERTS =~ ^[0-9]+$ && $INSERTS -ge 1 ]] || die "INSERTS must be a positive integer"
[[ $WIDE =~ ^[0-9]+$ ]] || die "WIDE must be a non-negative integer"
[ -x "$SRC_TARN" ] || die "$SRC_TARN not found; run make -j2 first"
[ -f deps/lib/libduckdb.so ] || die "deps/lib/libduckdb.so not found; run scripts/deps.sh"
if [ ! -x /usr/bin/time ]; then
    log "installing the Debian package 'time' for /usr/bin/time -v"
    if [ "$(id -u)" = 0 ]; then apt-get install -y -qq time >/dev/null; else sudo apt-get install -y -qq time >/dev/null; fi ||
        die "/usr/bin/time is missing: install the Debian package 'time'"
fi

mkdir -p bench/out
cc -O2 -std=c17 -Wall -Wextra -isystem deps/include bench/duckdb_baseline.c -o bench/out/duckdb_baseline \
    -Ldeps/lib -lduckdb -Wl,-rpath,"$REPO/deps/lib"
BASELINE=$REPO/bench/out/duckdb_baseline

bench_setup tarn-bench

SELECT_SQL="SELECT range AS id, (range % 1000)::INT AS k, random() AS v, 's' || (range % 10000) AS s, TIMESTAMP '2024-01-01' + INTERVAL (range) SECOND AS ts FROM range($ROWS)"
AGG="count(*), sum(v), min(s), max(ts), count(DISTINCT k)"
MARK="SELECT 'BENCH_MARK ' || epoch_us(get_current_timestamp()) AS m;"
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/')"

# ---------------------------------------------------------------- helpers

# median of the arguments (mean of the two middle values for an even count)
# calc EXPR [FORMAT] — floating-point arithmetic through awk


# run_tarn DIR SCRIPT — runs `tarn sql --format csv -f SCRIPT` in DIR under /usr/bin/time.
# Sets P_WALL (whole-process wall seconds), P_RSS (max RSS, KiB), P_CPU (user + system CPU
# seconds of the process) and MARKS (the BENCH_MARK timestamps the script printed, in µs);
# stdout is kept in $WORK/last.out.
run_tarn() {
    local dir=$1 script=$2 t0 t1
    t0=$EPOCHREALTIME
    if ! (cd "$dir" && /usr/bin/time -f '%M %U %S' -o "$WORK/time.out" "$TARN" sql --format csv -f "$script" \
        >"$WORK/last.out" 2>"$WORK/last.err"); then
        cat "$WORK/last.err" >&2
        die "tarn sql -f $script failed in $dir"
    fi
    t1=$EPOCHREALTIME
    P_WALL=$(calc "$t1 - $t0" %.4f)
    read -r P_RSS cpu_u cpu_s < <(tail -n 1 "$WORK/time.out")
    P_CPU=$(calc "$cpu_u + $cpu_s" %.2f)
    mapfile -t MARKS < <(grep -o 'BENCH_MARK [0-9]*' "$WORK/last.out" | cut -d' ' -f2)
}

# mark_span I J — seconds between MARKS[I] and MARKS[J]
mark_span() { calc "(${MARKS[$2]} - ${MARKS[$1]}) / 1e6" %.4f; }

# run_helper SQL... — the pure-DuckDB process; sets H_TIMES (per statement) and H_RSS (KiB)
run_helper() {
    local out
    out=$(/usr/bin/time -f '%M' -o "$WORK/time.out" "$BASELINE" "$@") || die "duckdb_baseline failed"
    mapfile -t H_TIMES < <(sed -n 's/^elapsed_s=//p' <<<"$out")
    H_RSS=$(tail -n 1 "$WORK/time.out")
}

# first data value of column 1 in the last tarn output that follows header $1
csv_after() { awk -v h="$1" 'f {print; exit} $0 == h {f = 1}' "$WORK/last.out"; }

# ---------------------------------------------------------------- 1 + 4: CTAS vs COPY, time and RSS

log "1. CTAS of $ROWS rows x 5 columns vs DuckDB COPY ... TO parquet ($RUNS runs each)"
mkdir -p "$WORK/copy"
cat >"$WORK/copy.sql" <<EOF
$MARK
COPY ($SELECT_SQL) TO '$WORK/copy/x.parquet' (FORMAT parquet);
$MARK
EOF
cat >"$WORK/ctas.sql" <<EOF
$ATTACH;
$MARK
CREATE TABLE lake.t AS $SELECT_SQL;
$MARK
EOF

declare -a copy_s copy_p copy_rss copy_cpu ctas_s ctas_p ctas_rss ctas_cpu helper_s helper_rss
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < RUNS; r++)); do
    rm -f "$WORK/copy/x.parquet"
    run_tarn "$WORK/copy" "$WORK/copy.sql"
    copy_s+=("$(mark_span 0 1)"); copy_p+=("$P_WALL"); copy_rss+=("$P_RSS"); copy_cpu+=("$P_CPU")

    rm -rf "$WORK/lake" && mkdir -p "$WORK/lake"
    run_tarn "$WORK/lake" "$WORK/ctas.sql"
    ctas_s+=("$(mark_span 0 1)"); ctas_p+=("$P_WALL"); ctas_rss+=("$P_RSS"); ctas_cpu+=("$P_CPU")

    rm -f "$WORK/copy/x.parquet"
    run_helper "COPY ($SELECT_SQL) TO '$WORK/copy/x.parquet' (FORMAT parquet)"
    helper_s+=("$(calc "${H_TIMES[0]}" %.4f)"); helper_rss+=("$H_RSS")
    log "   run $((r + 1)): copy ${copy_s[r]} s, ctas ${ctas_s[r]} s, helper copy ${helper_s[r]} s"
done
copy_bytes=$(stat -c %s "$WORK/copy/x.parquet")
lake_bytes=$(find "$WORK/lake/data" -name '*.parquet' -printf '%s\n' | awk '{s += $1} END {print s + 0}')
lake_files=$(find "$WORK/lake/data" -name '*.parquet' | wc -l)
rm -f "$WORK/copy/x.parquet"

m_copy_s=$(median "${copy_s[@]}"); m_ctas_s=$(median "${ctas_s[@]}"); m_helper_s=$(median "${helper_s[@]}")
m_copy_p=$(median "${copy_p[@]}"); m_ctas_p=$(median "${ctas_p[@]}")
m_copy_cpu=$(median "${copy_cpu[@]}"); m_ctas_cpu=$(median "${ctas_cpu[@]}")
m_copy_rss=$(median "${copy_rss[@]}"); m_ctas_rss=$(median "${ctas_rss[@]}"); m_helper_rss=$(median "${helper_rss[@]}")
ctas_ratio=$(calc "$m_ctas_s / $m_copy_s" %.2f)
ctas_ratio_p=$(calc "$m_ctas_p / $m_copy_p" %.2f)
ctas_ratio_cpu=$(calc "$m_ctas_cpu / $m_copy_cpu" %.2f)
rss_ratio=$(calc "$m_ctas_rss / $m_copy_rss" %.2f)

# ---------------------------------------------------------------- 2: scan with 1% deletes

log "2. aggregate scan after deleting 1% of rows vs read_parquet of the same files"
cat >"$WORK/delete.sql" <<EOF
$ATTACH;
DELETE FROM lake.t WHERE id % 100 = 0;
SELECT data_file FROM ducklake_list_files('lake', 't');
SELECT count(*) AS delete_files FROM ducklake_list_files('lake', 't') WHERE delete_file IS NOT NULL;
EOF
run_tarn "$WORK/lake" "$WORK/delete.sql"
mapfile -t files < <(awk '/^delete_files$/ {exit} f && NF {print} /^data_file$/ {f = 1}' "$WORK/last.out")
[ "${#files[@]}" -gt 0 ] || die "ducklake_list_files returned no files"
delete_files=$(csv_after delete_files)
file_list=$(printf "'%s', " "${files[@]}")
file_list="[${file_list%, }]"

{ echo "$ATTACH;"; echo "$MARK"; for ((r = 0; r < RUNS; r++)); do echo "SELECT $AGG FROM lake.t;"; echo "$MARK"; done; } >"$WORK/scan_lake.sql"
{ echo "$MARK"; for ((r = 0; r < RUNS; r++)); do echo "SELECT $AGG FROM read_parquet($file_list);"; echo "$MARK"; done; } >"$WORK/scan_base.sql"

declare -a scan_lake_s scan_base_s
run_tarn "$WORK/lake" "$WORK/scan_lake.sql"
for ((r = 0; r < RUNS; r++)); do scan_lake_s+=("$(mark_span "$r" $((r + 1)))"); done
lake_result=$(grep -m1 -A1 '^count_star()' "$WORK/last.out" | tail -n 1)
run_tarn "$WORK/lake" "$WORK/scan_base.sql"
for ((r = 0; r < RUNS; r++)); do scan_base_s+=("$(mark_span "$r" $((r + 1)))"); done
base_result=$(grep -m1 -A1 '^count_star()' "$WORK/last.out" | tail -n 1)
expected_rows=$((ROWS - (ROWS + 99) / 100))
[ "${lake_result%%,*}" = "$expected_rows" ] || die "lake scan counted ${lake_result%%,*} rows, expected $expected_rows"
[ "${base_result%%,*}" = "$ROWS" ] || die "read_parquet counted ${base_result%%,*} rows, expected $ROWS"

# whole processes: query, and startup (+ attach) alone
printf '%s;\nSELECT %s FROM lake.t;\n' "$ATTACH" "$AGG" >"$WORK/p_lake.sql"
printf 'SELECT %s FROM read_parquet(%s);\n' "$AGG" "$file_list" >"$WORK/p_base.sql"
printf '%s;\nSELECT 1;\n' "$ATTACH" >"$WORK/p_lake0.sql"
printf 'SELECT 1;\n' >"$WORK/p_base0.sql"
declare -a p_lake p_base p_lake0 p_base0
for ((r = 0; r < RUNS; r++)); do
    run_tarn "$WORK/lake" "$WORK/p_lake.sql"; p_lake+=("$P_WALL")
    run_tarn "$WORK/lake" "$WORK/p_base.sql"; p_base+=("$P_WALL")
    run_tarn "$WORK/lake" "$WORK/p_lake0.sql"; p_lake0+=("$P_WALL")
    run_tarn "$WORK/lake" "$WORK/p_base0.sql"; p_base0+=("$P_WALL")
done
m_scan_lake=$(median "${scan_lake_s[@]}"); m_scan_base=$(median "${scan_base_s[@]}")
m_p_lake=$(median "${p_lake[@]}"); m_p_base=$(median "${p_base[@]}")
m_p_lake0=$(median "${p_lake0[@]}"); m_p_base0=$(median "${p_base0[@]}")
scan_ratio=$(calc "$m_scan_lake / $m_scan_base" %.2f)
scan_ratio_raw=$(calc "$m_p_lake / $m_p_base" %.2f)
# n/a when noise makes the baseline's query time (process minus startup) non-positive
scan_ratio_adj=$(awk -v a="$(calc "$m_p_lake - $m_p_lake0" %.6f)" -v b="$(calc "$m_p_base - $m_p_base0" %.6f)" \
    'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}')

# ---------------------------------------------------------------- 3: single-row commits

# commits DIR ATTACH_OPTIONS — INSERTS autocommit INSERTs in one tarn sql -f script;
# sets C_S (seconds from first to last INSERT), C_FIRST / C_LAST (commits/s over the first and
# the last tenth of the INSERTs, to show a rate that degrades as the table grows), C_FILES (data
# files) and C_SNAPS (snapshots).
# With ATTACH_OPTIONS "duckdb" the table lives in a plain DuckDB database file instead (the
# reference: what one DuckDB commit of the catalog database costs on this disk).
commits() {
    local dir=$1 opts=$2 i db=lake tenth=$(((INSERTS + 9) / 10)) wcols="" wvals=""
    for ((i = 0; i < WIDE; i++)); do
        wcols+=", w$i INTEGER"
        wvals+=", $i"
    done
    rm -rf "$dir" && mkdir -p "$dir"
    {
        if [ "$opts" = duckdb ]; then
            db=db
            echo "ATTACH 'plain.duckdb' AS db;"
        else
            echo "ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/'$opts);"
        fi
        echo "CREATE TABLE $db.small (i INTEGER, s VARCHAR$wcols);"
        echo "$MARK"
        for ((i = 0; i < INSERTS; i++)); do
            echo "INSERT INTO $db.small VALUES ($i, 'x'$wvals);"
            if (((i + 1) % tenth == 0 || i + 1 == INSERTS)); then echo "$MARK"; fi
        done
        echo "SELECT count(*) AS n_rows FROM $db.small;"
        if [ "$db" = lake ]; then
            echo "SELECT count(*) AS n_files FROM ducklake_list_files('lake', 'small');"
            echo "SELECT count(*) AS n_snapshots FROM ducklake_snapshots('lake');"
        fi
    } >"$dir.sql"
    run_tarn "$dir" "$dir.sql"
    local last=$((${#MARKS[@]} - 1))
    C_S=$(mark_span 0 "$last")
    C_FIRST=$(calc "$tenth / $(mark_span 0 1)" %.0f)
    C_LAST=$(calc "($INSERTS - $tenth * ($last - 1)) / $(mark_span $((last - 1)) "$last")" %.0f)
    [ "$(csv_after n_rows)" = "$INSERTS" ] || die "small table has $(csv_after n_rows) rows, expected $INSERTS"
    C_FILES=$(csv_after n_files)
    C_SNAPS=$(csv_after n_snapshots)
}

log "3. $INSERTS single-row autocommit INSERTs, inlined (default) and DATA_INLINING_ROW_LIMIT 0"
commits "$WORK/small_inl" ""
c_inl_s=$C_S; c_inl_first=$C_FIRST; c_inl_last=$C_LAST; c_inl_files=$C_FILES; c_inl_snaps=$C_SNAPS
commits "$WORK/small_pq" ", DATA_INLINING_ROW_LIMIT 0"
c_pq_s=$C_S; c_pq_first=$C_FIRST; c_pq_last=$C_LAST; c_pq_files=$C_FILES; c_pq_snaps=$C_SNAPS
commits "$WORK/small_duckdb" duckdb
c_ref_s=$C_S
commits_per_s=$(calc "$INSERTS / $c_inl_s" %.0f)
commits_per_s_parquet=$(calc "$INSERTS / $c_pq_s" %.0f)
commits_per_s_duckdb=$(calc "$INSERTS / $c_ref_s" %.0f)

# ---------------------------------------------------------------- 5: file pruning

# 100 files of ROWS/100 rows each, ids in disjoint ranges: a filter on id whose per-file min/max
# statistics exclude 90% of the files, against the same aggregate unfiltered
PFILES=100
log "5. aggregate with a filter its file statistics exclude 90% of $PFILES files from vs no filter"
per=$(((ROWS + PFILES - 1) / PFILES))
cut_at=$((per * PFILES * 9 / 10))
{
    echo "$ATTACH;"
    echo "CREATE TABLE lake.p (id BIGINT, k INTEGER, v DOUBLE, s VARCHAR, ts TIMESTAMP);"
    for ((f = 0; f < PFILES; f++)); do
        echo "INSERT INTO lake.p SELECT range AS id, (range % 1000)::INT AS k, random() AS v, 's' || (range % 10000) AS s, TIMESTAMP '2024-01-01' + INTERVAL (range) SECOND AS ts FROM range($((f * per)), $(((f + 1) * per)));"
    done
    echo "SELECT count(*) AS prune_files FROM ducklake_list_files('lake', 'p');"
} >"$WORK/prune_load.sql"
rm -rf "$WORK/prune" && mkdir -p "$WORK/prune"
run_tarn "$WORK/prune" "$WORK/prune_load.sql"
prune_files=$(csv_after prune_files)
[ "$prune_files" = "$PFILES" ] || die "the pruning table has $prune_files files, expected $PFILES"
{
    echo "$ATTACH;"
    echo "$MARK"
    for ((r = 0; r < RUNS; r++)); do
        echo "SELECT $AGG FROM lake.p;"
        echo "$MARK"
        echo "SELECT $AGG FROM lake.p WHERE id >= $cut_at;"
        echo "$MARK"
    done
    echo "EXPLAIN ANALYZE SELECT $AGG FROM lake.p WHERE id >= $cut_at;"
} >"$WORK/prune_scan.sql"
run_tarn "$WORK/prune" "$WORK/prune_scan.sql"
declare -a prune_all_s prune_flt_s
for ((r = 0; r < RUNS; r++)); do
    prune_all_s+=("$(mark_span $((2 * r)) $((2 * r + 1)))")
    prune_flt_s+=("$(mark_span $((2 * r + 1)) $((2 * r + 2)))")
done
prune_read=$(grep -o 'Total Files Read: [0-9]*' "$WORK/last.out" | awk '{n += $4} END {print n + 0}')
m_prune_all=$(median "${prune_all_s[@]}"); m_prune_flt=$(median "${prune_flt_s[@]}")
prune_ratio=$(calc "$m_prune_flt / $m_prune_all" %.2f)

# ---------------------------------------------------------------- report

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
verdict() { awk "BEGIN {print ($1) ? \"ok\" : \"MISS\"}"; }
mib() { calc "$1 / 1024" %.0f; }
# row LABEL [TARN BASELINE RATIO TARGET] — one line of the table
row() { printf '   %-58s %-10s %-10s %-8s %s\n' "$1" "${2:-}" "${3:-}" "${4:-}" "${5:-}" | sed 's/ *$//'; }
head_row() { echo; printf '%-61s %-10s %-10s %-8s %s\n' "$1" "${2-tarn}" "${3-baseline}" "${4-ratio}" "${5-target}" | sed 's/ *$//'; }

echo
echo "tarn lake benchmarks — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, ROWS=$ROWS, RUNS=$RUNS (medians), INSERTS=$INSERTS, WIDE=$WIDE"
if [ "$SRC_TARN" = "$REPO/build/tarn" ]; then
    rev="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$REPO" diff --quiet HEAD -- src include 2>/dev/null || echo ' + uncommitted changes in src/ or include/')"
else
    rev=$SRC_TARN
fi
echo "tarn: $rev (binary of $(date -u -r "$SRC_TARN" '+%Y-%m-%d %H:%M UTC')), DuckDB $("$TARN" sql --format csv -c 'SELECT version() AS v' | grep -v '^v$' | grep -m1 .)"
echo "load average before/after: $load_before / $load_after (other processes make wall times noisy; see the CPU line)"

head_row "1. CTAS of $ROWS rows x 5 columns vs COPY TO parquet"
row "statement wall time (tarn sql for both sides)" "${m_ctas_s}s" "${m_copy_s}s" "$ctas_ratio" "<= 1.05 $(verdict "$ctas_ratio <= 1.05")"
row "whole process (startup, attach, exit included)" "${m_ctas_p}s" "${m_copy_p}s" "$ctas_ratio_p"
row "process CPU, user + system" "${m_ctas_cpu}s" "${m_copy_cpu}s" "$ctas_ratio_cpu"
row "pure-DuckDB C helper COPY (reference)" "" "${m_helper_s}s"
row "bytes written: lake $lake_bytes in $lake_files file(s), COPY $copy_bytes"
row "runs (s): ctas ${ctas_s[*]} | copy ${copy_s[*]} | helper ${helper_s[*]}"

head_row "2. aggregate scan, 1% deleted vs read_parquet, no deletes"
row "the query, timed inside one process ($RUNS runs each)" "${m_scan_lake}s" "${m_scan_base}s" "$scan_ratio" "<= 1.3 $(verdict "$scan_ratio <= 1.3")"
row "whole process, raw" "${m_p_lake}s" "${m_p_base}s" "$scan_ratio_raw"
row "whole process minus startup (${m_p_lake0}s / ${m_p_base0}s)" "$(calc "$m_p_lake - $m_p_lake0" %.4f)s" "$(calc "$m_p_base - $m_p_base0" %.4f)s" "$scan_ratio_adj"
row "${#files[@]} data file(s), $delete_files with a delete file"
row "lake:    $lake_result"
row "parquet: $base_result"
row "runs (s): lake ${scan_lake_s[*]} | parquet ${scan_base_s[*]}"

head_row "3. $INSERTS single-row autocommit INSERTs, one tarn sql -f" seconds commits/s "" target
row "inlined into the catalog (default)" "${c_inl_s}s" "$commits_per_s" "" ">= 200 $(verdict "$commits_per_s >= 200")"
row "DATA_INLINING_ROW_LIMIT 0 (one Parquet file each)" "${c_pq_s}s" "$commits_per_s_parquet" "" ">= 200 $(verdict "$commits_per_s_parquet >= 200")"
row "reference: plain DuckDB table in an attached .duckdb file" "${c_ref_s}s" "$commits_per_s_duckdb"
row "commits/s over the first / last tenth: inlined $c_inl_first / $c_inl_last, parquet $c_pq_first / $c_pq_last"
row "data files / snapshots: inlined $c_inl_files / $c_inl_snaps, parquet $c_pq_files / $c_pq_snaps"

head_row "4. peak RSS of (1)" tarn baseline ratio ""
row "max RSS, CTAS process / COPY process" "$(mib "$m_ctas_rss")MiB" "$(mib "$m_copy_rss")MiB" "$rss_ratio"
row "pure-DuckDB C helper COPY (reference)" "" "$(mib "$m_helper_rss")MiB"

head_row "5. filter excluding 90% of $PFILES files by their statistics vs no filter" filtered unfiltered ratio target
row "the aggregate, timed inside one process ($RUNS runs each)" "${m_prune_flt}s" "${m_prune_all}s" "$prune_ratio" "<= 0.15 $(verdict "$prune_ratio <= 0.15")"
row "files the filtered read opened (EXPLAIN ANALYZE): $prune_read of $prune_files"
row "runs (s): filtered ${prune_flt_s[*]} | unfiltered ${prune_all_s[*]}"

echo
echo "ctas_ratio=$ctas_ratio scan_ratio=$scan_ratio prune_ratio=$prune_ratio prune_files_read=$prune_read commits_per_s=$commits_per_s commits_per_s_parquet=$commits_per_s_parquet rss_ratio=$rss_ratio scan_ratio_process=$scan_ratio_raw scan_ratio_process_adjusted=$scan_ratio_adj ctas_ratio_process=$ctas_ratio_p ctas_ratio_cpu=$ctas_ratio_cpu commits_per_s_duckdb=$commits_per_s_duckdb"
