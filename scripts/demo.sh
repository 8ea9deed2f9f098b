#!/usr/bin/env bash
# demo.sh — set everything up on a fresh machine and run tarn on a small real example:
# installs the dependencies, builds tarn, then runs examples/quickstart.sql with `tarn sql`, which
# creates a DuckLake lake in demo/ (wiped first; git ignores it), writes a few snapshots and reads
# the table now and at earlier versions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/deps.sh
make -j2
rm -rf demo
mkdir -p demo
echo "+ build/tarn sql -f examples/quickstart.sql" >&2
build/tarn sql -f examples/quickstart.sql
echo >&2
echo "The lake is in demo/: its catalog is demo/meta.ducklake, its data path demo/data/." >&2

# The example project (examples/shop): copied to demo/shop, built twice — the second run skips the
# unchanged models and rebuilds the requested partitions and the mart that reads them, each build
# one new snapshot — then the second run's snapshots, the history (with why each model ran) and
# the daily revenue mart.
echo >&2
rm -rf demo/shop
cp -r examples/shop demo/shop
echo "+ build/tarn run -C demo/shop --from 2024-06-01 --to 2024-06-07   # first run" >&2
build/tarn run -C demo/shop --from 2024-06-01 --to 2024-06-07
first=$(cd demo/shop && ../../build/tarn sql --format csv \
    -c "ATTACH 'ducklake:lake.ducklake' AS lake; SELECT max(snapshot_id) FROM ducklake_snapshots('lake')" | sed -n 2p)
echo "+ build/tarn run -C demo/shop --from 2024-06-01 --to 2024-06-07   # second run" >&2
build/tarn run -C demo/shop --from 2024-06-01 --to 2024-06-07
echo "+ the second run's snapshots (ducklake_snapshots after snapshot $first)" >&2
(cd demo/shop && ../../build/tarn sql -c "ATTACH 'ducklake:lake.ducklake' AS lake;
    SELECT snapshot_id, commit_message,
           commit_extra_info::JSON->>'rows_written' AS rows_written,
           commit_extra_info::JSON->>'partitions' AS partitions,
           commit_extra_info::JSON->>'upstream' AS upstream
    FROM ducklake_snapshots('lake') WHERE snapshot_id > $first ORDER BY snapshot_id")
echo "+ build/tarn history -C demo/shop --limit 6" >&2
build/tarn history -C demo/shop --limit 6
echo "+ build/tarn show -C demo/shop marts.revenue_daily --limit 5" >&2
build/tarn show -C demo/shop marts.revenue_daily --limit 5
