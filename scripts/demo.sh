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
