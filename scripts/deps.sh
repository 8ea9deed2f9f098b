#!/usr/bin/env bash
# deps.sh — install everything tarn needs to build and test, on a fresh Debian 12.
#
# Debian packages come from apt-get (skipped when already present, so the
# script is cheap to re-run). The DuckDB C library is not packaged by Debian:
# it comes from the npm registry by exact version, checked by SHA-256, and is
# unpacked into deps/ (which git ignores). tarn finds it there through rpath.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PKGS="build-essential pkg-config python3 libjansson-dev libedit-dev libssl-dev libcmocka-dev"
missing=""
for p in $APT_PKGS; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi

BINDINGS=@duckdb/node-bindings-linux-x64@1.5.6-r.1
BINDINGS_TGZ=duckdb-node-bindings-linux-x64-1.5.6-r.1.tgz
BINDINGS_SHA=1b9f82478539bb9a1d1df44bd103121a12ae52142c07158dc52b97d2ec1d69ff
LIB_SHA=3f4962cdd266eab2b479a5b5a4a6d063d279b2954ae814ed00385d553b747633
HEADER=duckdb@1.4.4
HEADER_TGZ=duckdb-1.4.4.tgz
HEADER_SHA=5bb967dcbcd517670ba5f169f238fb9d6787e53752c60ebe24386169d76941ed

if [ -f deps/lib/libduckdb.so ] && [ -f deps/include/duckdb.h ] &&
   echo "$LIB_SHA  deps/lib/libduckdb.so" | sha256sum -c --quiet - 2>/dev/null; then
    exit 0
fi
mkdir -p deps/dl deps/lib deps/include
(cd deps/dl && [ -f "$BINDINGS_TGZ" ] || npm pack --silent "$BINDINGS" >/dev/null)
(cd deps/dl && [ -f "$HEADER_TGZ" ] || npm pack --silent "$HEADER" >/dev/null)
echo "$BINDINGS_SHA  deps/dl/$BINDINGS_TGZ" | sha256sum -c --quiet -
echo "$HEADER_SHA  deps/dl/$HEADER_TGZ" | sha256sum -c --quiet -
tar -xzf "deps/dl/$BINDINGS_TGZ" -C deps/dl package/libduckdb.so
tar -xzf "deps/dl/$HEADER_TGZ" -C deps/dl package/src/duckdb/src/include/duckdb.h
mv deps/dl/package/libduckdb.so deps/lib/libduckdb.so
mv deps/dl/package/src/duckdb/src/include/duckdb.h deps/include/duckdb.h
echo "$LIB_SHA  deps/lib/libduckdb.so" | sha256sum -c --quiet -
echo "deps: libduckdb 1.5.6 and duckdb.h 1.4.4 installed in deps/"
