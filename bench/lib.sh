# bench/lib.sh — what the benchmark scripts share. Source it after setting BENCH (the script's
# name, for messages), REPO (the repository root) and SRC_TARN (the binary to measure):
#
#   die MSG / log MSG         an error (exit 1) / a progress line, on stderr
#   now                       seconds since the epoch, with nanoseconds
#   calc EXPR [FORMAT]        awk arithmetic, printed with FORMAT (default %.3f)
#   median N...               the median of the numbers given
#   bench_setup PREFIX        makes $WORK (/tmp/PREFIX.XXXXXX, removed at exit unless KEEP_TMP=1) and
#                             $TARN, a private copy of $SRC_TARN in it, so that a concurrent rebuild
#                             of build/tarn cannot change the binary mid-run (its RUNPATH is
#                             $ORIGIN/../deps/lib, hence LD_LIBRARY_PATH for the copy)

die() { echo "${BENCH:-bench}: $*" >&2; exit 1; }
log() { echo "# $*" >&2; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"${2:-%.3f}\", $1 }"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

bench_cleanup() { if [ "${KEEP_TMP:-0}" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi; }

bench_setup() {
    WORK=$(mktemp -d "/tmp/$1.XXXXXX")
    trap bench_cleanup EXIT
    mkdir -p "$WORK/bin"
    cp "$SRC_TARN" "$WORK/bin/tarn"
    TARN=$WORK/bin/tarn
    export LD_LIBRARY_PATH=$REPO/deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}
