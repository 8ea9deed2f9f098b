#!/usr/bin/env bash
# tests/e2e/gen_models.sh — the 200-model project that tests/e2e/test_workers.sh builds over
# workers and bench/workers_bench.sh times: 10 layers of 20 models; a model of layer 0 selects a
# range, a model of layer L>0 joins two of layer L-1 (its own index and (i*7+L) % 20), so each
# layer waits on the one before and its 20 models are independent of each other.
#
# Sourced, it defines gen_models; run, it writes one project:
#   . tests/e2e/gen_models.sh; gen_models DIR "ATTACH 'ducklake:…' AS lake (DATA_PATH '…');"
#   bash tests/e2e/gen_models.sh DIR "ATTACH …"

gen_models() { # gen_models DIR ATTACH — config/catalog.sql is ATTACH
    local d=$1 l i
    mkdir -p "$d/config"
    echo "$2" >"$d/config/catalog.sql"
    for l in 0 1 2 3 4 5 6 7 8 9; do
        mkdir -p "$d/models/l$l"
        for i in $(seq 0 19); do
            if [ "$l" = 0 ]; then
                echo "SELECT range AS id, (range * $((i + 3))) % 101 AS v, 'm$i-' || (range % 13) AS tag FROM range($((200 + i * 10)))" >"$d/models/l$l/m$i.sql"
            else
                echo "SELECT x.id, (x.v + coalesce(y.v, 0) + $l) % 997 AS v, x.tag FROM l$((l - 1)).m$i x LEFT JOIN l$((l - 1)).m$(((i * 7 + l) % 20)) y ON x.id = y.id" >"$d/models/l$l/m$i.sql"
            fi
        done
    done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    [ $# -eq 2 ] || {
        echo "usage: gen_models.sh DIR ATTACH" >&2
        exit 2
    }
    gen_models "$1" "$2"
fi
