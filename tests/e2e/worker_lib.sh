# tests/e2e/worker_lib.sh — background processes for the tests of `tarn worker` and of the runs
# that follow one (sourced after lib.sh and pg_lib.sh):
#
#   start_worker LOG ARGS...    a `tarn worker ARGS...` in the background, its output in LOG
#   BG+=($!)                    any other background process to stop at the end
#   stop_workers                SIGTERM to each, and wait (also when the script exits)
#   wait_for FILE TEXT SECONDS  until FILE holds TEXT; 1 on timeout
#
# The queue is polled every 50 ms (TARN_QUEUE_POLL_MS), not every second, to keep the tests short.
export TARN_QUEUE_POLL_MS=50
BG=()

start_worker() {
    local log=$1
    shift
    "$TARN" worker "$@" >"$log" 2>&1 </dev/null &
    BG+=($!)
}

stop_workers() {
    local p
    for p in "${BG[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for p in "${BG[@]}"; do wait "$p" 2>/dev/null; done
    BG=()
}
at_exit stop_workers

wait_for() {
    local i
    for i in $(seq 1 $(($3 * 10))); do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
