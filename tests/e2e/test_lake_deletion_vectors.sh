#!/usr/bin/env bash
# test_lake_deletion_vectors.sh — a lake whose delete files are DuckLake's
# deletion vectors (WRITE_DELETION_VECTORS: format 'puffin', the file an
# Iceberg v3 deletion-vector-v1 blob of Roaring bitmaps) reads right: the
# positions of array, bitset and run containers are deleted, time travel
# before the delete sees every row, a DELETE and rewrite_data_files on top
# of a vector keep its deletions, and a corrupt vector fails the read
# naming the file. The vectors are written here by an encoder of the
# published format. With WRITE_DELETION_VECTORS tarn writes them: a DELETE's
# delete file is a vector (decoded here by a reader of the format), a later
# DELETE writes a new one of all the file's positions and ends the old one,
# so time travel still sees each snapshot's rows.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
q() { lake_sql "$d" "$1" | grep .; }
raw() { "$TARN" sql --format csv -c "ATTACH 'm.ducklake' AS raw; $1" 2>>"$d/err" | grep .; }

# dv.py OUT POSITIONS_EXPR [runs]: a deletion vector of the positions i in
# range(10000) for which the Python expression holds
cat >dv.py <<'PY'
import struct, sys, zlib
out, expr = sys.argv[1], sys.argv[2]
runs = len(sys.argv) > 3
vals = [i for i in range(10000) if eval(expr)]
conts = {}
for v in vals:
    conts.setdefault(v >> 16, []).append(v & 0xFFFF)
keys = sorted(conts)
def runs_of(xs):
    rs, start, prev = [], xs[0], xs[0]
    for x in xs[1:]:
        if x != prev + 1:
            rs.append((start, prev - start)); start = x
        prev = x
    rs.append((start, prev - start))
    return rs
if runs:
    bm = struct.pack('<I', 12347 | ((len(keys) - 1) << 16)) + bytes([0xFF] * ((len(keys) + 7) // 8))
    bm += b''.join(struct.pack('<HH', k, len(conts[k]) - 1) for k in keys)
    for k in keys:
        rs = runs_of(conts[k])
        bm += struct.pack('<H', len(rs)) + b''.join(struct.pack('<HH', s, l) for s, l in rs)
else:
    datas = []
    for k in keys:
        xs = conts[k]
        if len(xs) > 4096:
            words = [0] * 1024
            for x in xs:
                words[x // 64] |= 1 << (x % 64)
            datas.append(b''.join(struct.pack('<Q', w) for w in words))
        else:
            datas.append(b''.join(struct.pack('<H', x) for x in xs))
    bm = struct.pack('<II', 12346, len(keys))
    bm += b''.join(struct.pack('<HH', k, len(conts[k]) - 1) for k in keys)
    off = len(bm) + 4 * len(keys)
    for data in datas:
        bm += struct.pack('<I', off); off += len(data)
    bm += b''.join(datas)
body = bytes([0xD1, 0xD3, 0x39, 0x64]) + struct.pack('<q', 1) + struct.pack('<i', 0) + bm
open(out, 'wb').write(struct.pack('>I', len(body)) + body + struct.pack('>I', zlib.crc32(body)))
PY

lake_sql "$d" "CREATE TABLE l.t AS SELECT i AS id FROM range(10000) r(i);
DELETE FROM l.t WHERE id % 3 = 0;" >/dev/null
del=$(raw "SELECT path FROM raw.ducklake_delete_file WHERE end_snapshot IS NULL;" | tail -n 1)
dfile=d/main/t/$del
[ -f "$dfile" ] && ok "the delete file is where the catalog says" || fail "the delete file is where the catalog says" "no $dfile"
raw "UPDATE raw.ducklake_delete_file SET format = 'puffin' WHERE end_snapshot IS NULL;" >/dev/null

python3 dv.py "$dfile" "i % 5 == 0"
check_eq "array containers: the vector's positions are deleted" "8000,0" \
    "$(q "SELECT count(id), count(id) FILTER (WHERE id % 5 = 0) FROM l.t;" | tail -n 1)"
check_eq "... and only those" "$(python3 -c 'print(sum(i for i in range(10000) if i % 5))')" \
    "$(q "SELECT sum(id) FROM l.t;" | tail -n 1)"
python3 dv.py "$dfile" "i % 2 == 0"
check_eq "a bitset container (over 4096 positions)" "5000,0" \
    "$(q "SELECT count(id), count(id) FILTER (WHERE id % 2 = 0) FROM l.t;" | tail -n 1)"
python3 dv.py "$dfile" "100 <= i < 2100 or 5000 <= i < 5003" runs
check_eq "run containers" "7997,0" \
    "$(q "SELECT count(id), count(id) FILTER (WHERE id BETWEEN 100 AND 2099 OR id BETWEEN 5000 AND 5002) FROM l.t;" | tail -n 1)"
check_eq "time travel before the delete sees every row" "10000" \
    "$(q "SELECT count(id) FROM l.t AT (VERSION => 1);" | tail -n 1)"
printf 'x' | dd of="$dfile" bs=1 seek=20 conv=notrunc 2>/dev/null
check_fails "a corrupt vector fails the read" lake_sql "$d" "SELECT count(id) FROM l.t;"
check_eq "... naming the file and why" "1" "$(grep -c "$del.*checksum mismatch" "$d/err")"
python3 dv.py "$dfile" "i % 5 == 0"
check "a DELETE on top of a deletion vector" lake_sql "$d" "DELETE FROM l.t WHERE id < 10;"
check_eq "... keeps the vector's deletions and adds its own (a Parquet delete file)" "7992,0,0" \
    "$(q "SELECT count(id), count(id) FILTER (WHERE id % 5 = 0), count(id) FILTER (WHERE id < 10) FROM l.t;" | tail -n 1)"
del2=$(raw "SELECT path FROM raw.ducklake_delete_file WHERE end_snapshot IS NULL;" | tail -n 1)
python3 dv.py "d/main/t/$del2" "i % 5 == 0 or i < 10"
raw "UPDATE raw.ducklake_delete_file SET format = 'puffin' WHERE end_snapshot IS NULL;" >/dev/null
check_eq "the DELETE's file replaced by a vector of the same rows reads the same" "7992,0,0" \
    "$(q "SELECT count(id), count(id) FILTER (WHERE id % 5 = 0), count(id) FILTER (WHERE id < 10) FROM l.t;" | tail -n 1)"
check "rewrite_data_files over a deletion vector" lake_sql "$d" "CALL ducklake_rewrite_data_files('l', 't', delete_threshold => 0);"
check_eq "... writes the live rows only" "7992,0,0" \
    "$(q "SELECT count(id), count(id) FILTER (WHERE id % 5 = 0), count(*) FILTER (WHERE id < 10) FROM l.t;" | tail -n 1)"

# WRITE_DELETION_VECTORS: tarn writes them
cat >undv.py <<'PY'
import struct, sys, zlib
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('>I', b[:4])[0]
body, crc = b[4:4 + n], struct.unpack('>I', b[4 + n:8 + n])[0]
assert body[:4] == bytes([0xD1, 0xD3, 0x39, 0x64]) and zlib.crc32(body) == crc and len(b) == n + 8
p = 12
out = []
for _ in range(struct.unpack('<q', body[4:12])[0]):
    high = struct.unpack('<i', body[p:p + 4])[0]; p += 4
    cookie, size = struct.unpack('<II', body[p:p + 8]); p += 8
    assert cookie == 12346
    heads = [struct.unpack('<HH', body[p + 4 * k:p + 4 * k + 4]) for k in range(size)]
    p += 8 * size
    for key, card in heads:
        card += 1
        if card > 4096:
            for w in range(1024):
                word = struct.unpack('<Q', body[p + 8 * w:p + 8 * w + 8])[0]
                out += [(high << 32) | (key << 16) | (w * 64 + i) for i in range(64) if word >> i & 1]
            p += 8192
        else:
            out += [(high << 32) | (key << 16) | x for x in struct.unpack('<%dH' % card, body[p:p + 2 * card])]
            p += 2 * card
assert p == len(body)
print(len(out), sum(out))
PY
e=$(mktempdir)
w() { (cd "$e" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', WRITE_DELETION_VECTORS true); $1") </dev/null 2>>"$e/err" | grep .; }
wraw() { (cd "$e" && "$TARN" sql --format csv -c "ATTACH 'm.ducklake' AS raw (READ_ONLY); $1") 2>>"$e/err" | grep .; }
w "CREATE TABLE l.t AS SELECT i AS id FROM range(10000) r(i); DELETE FROM l.t WHERE id % 2 = 0 OR id < 7;" >/dev/null
check_eq "WRITE_DELETION_VECTORS: a DELETE writes a deletion vector" "puffin" \
    "$(wraw "SELECT string_agg(format, ',') FROM raw.ducklake_delete_file WHERE end_snapshot IS NULL;" | tail -n 1)"
dv1=$(wraw "SELECT path FROM raw.ducklake_delete_file WHERE end_snapshot IS NULL;" | tail -n 1)
check_eq "... of the deleted positions, in the published format" \
    "$(python3 -c 'ps = [i for i in range(10000) if i % 2 == 0 or i < 7]; print(len(ps), sum(ps))')" \
    "$(python3 undv.py "$e/d/main/t/$dv1")"
check_eq "... and the table reads without them" "4997" "$(w "SELECT count(id) FROM l.t;" | tail -n 1)"
w "DELETE FROM l.t WHERE id < 101;" >/dev/null
check_eq "a second DELETE: a new vector of all the file's positions, the old one ended" "puffin,1" \
    "$(wraw "SELECT string_agg(format, ',') FILTER (WHERE end_snapshot IS NULL), count(*) FILTER (WHERE end_snapshot IS NOT NULL) FROM raw.ducklake_delete_file;" | tail -n 1)"
check_eq "... time travel reads each snapshot's rows" "10000,4997,4950" \
    "$(w "SELECT (SELECT count(id) FROM l.t AT (VERSION => 1)), (SELECT count(id) FROM l.t AT (VERSION => 2)), (SELECT count(id) FROM l.t);" | tail -n 1)"
finish
