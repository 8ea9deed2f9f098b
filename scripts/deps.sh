#!/usr/bin/env bash
# deps.sh — install everything tarn needs to build and test, on a fresh Debian 12.
#
# Debian packages come from apt-get (skipped when already present, so the
# script is cheap to re-run). The DuckDB C library is not packaged by Debian:
# it comes from the npm registry by exact version, checked by SHA-256, and is
# unpacked into deps/ (which git ignores). tarn finds it there through rpath.
# The web view's graph layout library (dagre) comes the same way, into
# deps/web/ (the build embeds it in the binary: never loaded from a CDN);
# the browser test's puppeteer-core is installed by `npm ci` from the
# lockfile in scripts/web-test/ (every package checked by its integrity
# hash) into deps/web-test/. Each step is skipped when its files are there.
# libpq-dev is the PostgreSQL catalog backend's client library (linked);
# postgresql gives the tests a throwaway cluster (tests/e2e/pg_lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PKGS="build-essential pkg-config python3 libjansson-dev libedit-dev libssl-dev libcmocka-dev libmicrohttpd-dev chromium tmux postgresql libpq-dev"
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

duckdb_ok() {
    [ -f deps/lib/libduckdb.so ] && [ -f deps/include/duckdb.h ] &&
        echo "$LIB_SHA  deps/lib/libduckdb.so" | sha256sum -c --quiet - 2>/dev/null
}
if ! duckdb_ok; then
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
fi

# dagre (with graphlib bundled in dist/dagre.min.js) for the web view's graph
DAGRE=@dagrejs/dagre@3.1.3
DAGRE_TGZ=dagrejs-dagre-3.1.3.tgz
DAGRE_SHA=12441833c8af49e5a241d94bfd53159875965876b3f4f3214abafe1ed6a9ee4c
if [ ! -f deps/web/dagre-3.1.3.min.js ]; then
    mkdir -p deps/dl deps/web
    (cd deps/dl && [ -f "$DAGRE_TGZ" ] || npm pack --silent "$DAGRE" >/dev/null)
    echo "$DAGRE_SHA  deps/dl/$DAGRE_TGZ" | sha256sum -c --quiet -
    tar -xzf "deps/dl/$DAGRE_TGZ" -C deps/dl package/dist/dagre.min.js package/LICENSE
    mv deps/dl/package/LICENSE deps/web/dagre-3.1.3.LICENSE
    mv deps/dl/package/dist/dagre.min.js deps/web/dagre-3.1.3.min.js
    echo "deps: dagre 3.1.3 installed in deps/web/"
fi

# puppeteer-core for the browser test, pinned by scripts/web-test/package-lock.json
if ! cmp -s scripts/web-test/package-lock.json deps/web-test/package-lock.json ||
   [ ! -f deps/web-test/node_modules/puppeteer-core/package.json ]; then
    rm -rf deps/web-test.tmp
    mkdir -p deps/web-test.tmp
    cp scripts/web-test/package.json scripts/web-test/package-lock.json deps/web-test.tmp/
    (cd deps/web-test.tmp && npm ci --ignore-scripts --no-audit --no-fund --silent)
    rm -rf deps/web-test
    mv deps/web-test.tmp deps/web-test
    echo "deps: puppeteer-core installed in deps/web-test/"
fi
