/*
 * dvec.c — reading the deletion vectors DuckLake writes with
 * WRITE_DELETION_VECTORS (see dvec.h): a delete file whose ducklake_delete_file
 * format is 'puffin' holds one Iceberg v3 deletion-vector-v1 blob, the
 * whole file:
 *   length   uint32 big-endian: the bytes from the magic to the CRC, exclusive
 *   magic    D1 D3 39 64
 *   count    int64 little-endian: the 32-bit bitmaps that follow
 *   count ×  key int32 little-endian (a position's high 32 bits), then one
 *            Roaring bitmap in its portable serialization (the low 32 bits)
 *   crc      uint32 big-endian: CRC-32 of magic … last bitmap
 * Pure C, no catalog rows: delmask.c reads the file and calls this.
 */
#include "lake/dvec.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COOKIE_RUNS = 12347, COOKIE_NO_RUNS = 12346, NO_OFFSET_THRESHOLD = 4, ARRAY_MAX = 4096 };

static const unsigned char MAGIC[4] = {0xD1, 0xD3, 0x39, 0x64};

typedef struct {
    const unsigned char *p, *end;
} reader;

static int need(const reader *r, size_t n)
{
    return (size_t)(r->end - r->p) >= n;
}

static uint16_t le16(reader *r)
{
    uint16_t v = (uint16_t)(r->p[0] | (r->p[1] << 8));
    r->p += 2;
    return v;
}

static uint32_t le32(reader *r)
{
    uint32_t v = (uint32_t)r->p[0] | ((uint32_t)r->p[1] << 8) | ((uint32_t)r->p[2] << 16) |
                 ((uint32_t)r->p[3] << 24);
    r->p += 4;
    return v;
}

static uint32_t be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

uint32_t lk_dvec_crc32(const unsigned char *p, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xFFFFFFFFu;
}

/* One container's values (high 16 bits `key`) into add(). */
static int container(reader *r, int64_t base, int is_run, uint32_t card, lk_dvec_add_fn add,
                     void *ctx)
{
    if (is_run) {
        if (!need(r, 2))
            return -1;
        uint16_t nruns = le16(r);
        if (!need(r, (size_t)nruns * 4))
            return -1;
        for (uint16_t i = 0; i < nruns; i++) {
            uint32_t start = le16(r), len = le16(r);
            for (uint32_t v = start; v <= start + len && v <= 0xFFFF; v++)
                add(ctx, base | v);
        }
    } else if (card > ARRAY_MAX) {
        if (!need(r, 8192))
            return -1;
        for (uint32_t w = 0; w < 1024; w++) {
            uint32_t lo = le32(r), hi = le32(r);
            uint64_t word = ((uint64_t)hi << 32) | lo;
            for (int b = 0; word && b < 64; b++, word >>= 1)
                if (word & 1)
                    add(ctx, base | (int64_t)(w * 64 + (uint32_t)b));
        }
    } else {
        if (!need(r, (size_t)card * 2))
            return -1;
        for (uint32_t i = 0; i < card; i++)
            add(ctx, base | le16(r));
    }
    return 0;
}

/* One portable Roaring bitmap, its values ORed with `high` << 32. */
static int bitmap(reader *r, int64_t high, lk_dvec_add_fn add, void *ctx)
{
    if (!need(r, 4))
        return -1;
    uint32_t cookie = le32(r);
    int has_runs = (cookie & 0xFFFF) == COOKIE_RUNS;
    uint32_t size;
    if (has_runs) {
        size = (cookie >> 16) + 1;
    } else if (cookie == COOKIE_NO_RUNS && need(r, 4)) {
        size = le32(r);
    } else {
        return -1;
    }
    if (size > 65536)
        return -1;
    const unsigned char *runs = NULL;
    if (has_runs) {
        if (!need(r, (size + 7) / 8))
            return -1;
        runs = r->p;
        r->p += (size + 7) / 8;
    }
    if (!need(r, (size_t)size * 4))
        return -1;
    reader head = {r->p, r->p + (size_t)size * 4};
    r->p += (size_t)size * 4;
    if (!has_runs || size >= NO_OFFSET_THRESHOLD) { /* offsets: the data follows in order */
        if (!need(r, (size_t)size * 4))
            return -1;
        r->p += (size_t)size * 4;
    }
    for (uint32_t k = 0; k < size; k++) {
        uint32_t key = le16(&head), card = (uint32_t)le16(&head) + 1;
        int is_run = runs && (runs[k / 8] >> (k % 8)) & 1;
        if (container(r, (high << 32) | ((int64_t)key << 16), is_run, card, add, ctx))
            return -1;
    }
    return 0;
}

int lk_dvec_is(const unsigned char *data, size_t len)
{
    return len >= 8 && memcmp(data + 4, MAGIC, 4) == 0;
}

int lk_dvec_parse(const unsigned char *data, size_t len, lk_dvec_add_fn add, void *ctx)
{
    if (!lk_dvec_is(data, len) || len < 20)
        return tarn_error_set(TARN_ERROR, "not a deletion vector (deletion-vector-v1 blob)");
    uint32_t body = be32(data);
    if ((size_t)body + 8 != len)
        return tarn_error_set(TARN_ERROR,
                              "deletion vector length %u does not match the file's "
                              "%zu bytes",
                              body, len);
    const unsigned char *start = data + 4, *crc_at = data + 4 + body;
    if (lk_dvec_crc32(start, body) != be32(crc_at))
        return tarn_error_set(TARN_ERROR, "deletion vector checksum mismatch: the file is corrupt");
    reader r = {start + 4, crc_at};
    if (!need(&r, 8))
        return tarn_error_set(TARN_ERROR, "deletion vector truncated");
    uint32_t lo = le32(&r), hi = le32(&r);
    uint64_t count = ((uint64_t)hi << 32) | lo;
    for (uint64_t i = 0; i < count; i++) {
        if (!need(&r, 4))
            return tarn_error_set(TARN_ERROR, "deletion vector truncated");
        int32_t key = (int32_t)le32(&r);
        if (key < 0 || bitmap(&r, key, add, ctx))
            return tarn_error_set(TARN_ERROR, "deletion vector bitmap %llu is corrupt",
                                  (unsigned long long)i);
    }
    if (r.p != r.end)
        return tarn_error_set(TARN_ERROR, "deletion vector has trailing bytes");
    return 0;
}

/* ---- writing ---- */

static void put16(tarn_buf *b, uint32_t v)
{
    unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    buf_append(b, (const char *)x, 2);
}

static void put32(tarn_buf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    buf_append(b, (const char *)x, 4);
}

static void put32be(tarn_buf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    buf_append(b, (const char *)x, 4);
}

/* One portable Roaring bitmap (no run containers) of the low 32 bits of
 * pos[from, to), all with the same high 32 bits, ascending. */
static void put_bitmap(tarn_buf *b, const int64_t *pos, size_t from, size_t to)
{
    size_t ncont = 0;
    for (size_t i = from; i < to; i++)
        if (i == from || (pos[i] >> 16) != (pos[i - 1] >> 16))
            ncont++;
    put32(b, COOKIE_NO_RUNS);
    put32(b, (uint32_t)ncont);
    size_t *starts = xmalloc((ncont + 1) * sizeof(size_t));
    size_t k = 0;
    for (size_t i = from; i < to; i++)
        if (i == from || (pos[i] >> 16) != (pos[i - 1] >> 16))
            starts[k++] = i;
    starts[ncont] = to;
    for (k = 0; k < ncont; k++) { /* key, cardinality - 1 */
        put16(b, (uint32_t)((pos[starts[k]] >> 16) & 0xFFFF));
        put16(b, (uint32_t)(starts[k + 1] - starts[k] - 1));
    }
    uint32_t off = (uint32_t)(8 + 8 * ncont);
    for (k = 0; k < ncont; k++) { /* where each container's data begins */
        put32(b, off);
        size_t card = starts[k + 1] - starts[k];
        off += card > ARRAY_MAX ? 8192 : (uint32_t)(2 * card);
    }
    for (k = 0; k < ncont; k++) {
        size_t card = starts[k + 1] - starts[k];
        if (card > ARRAY_MAX) {
            uint64_t *words = xcalloc(1024, sizeof(uint64_t));
            for (size_t i = starts[k]; i < starts[k + 1]; i++)
                words[(pos[i] & 0xFFFF) / 64] |= (uint64_t)1 << ((pos[i] & 0xFFFF) % 64);
            for (size_t w = 0; w < 1024; w++) {
                put32(b, (uint32_t)words[w]);
                put32(b, (uint32_t)(words[w] >> 32));
            }
            free(words);
        } else {
            for (size_t i = starts[k]; i < starts[k + 1]; i++)
                put16(b, (uint32_t)(pos[i] & 0xFFFF));
        }
    }
    free(starts);
}

void lk_dvec_encode(tarn_buf *out, const int64_t *pos, size_t n)
{
    tarn_buf body = {0};
    buf_append(&body, (const char *)MAGIC, 4);
    size_t nmaps = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || (pos[i] >> 32) != (pos[i - 1] >> 32))
            nmaps++;
    put32(&body, (uint32_t)nmaps);
    put32(&body, 0);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && (pos[j] >> 32) == (pos[i] >> 32))
            j++;
        put32(&body, (uint32_t)(pos[i] >> 32));
        put_bitmap(&body, pos, i, j);
        i = j;
    }
    put32be(out, (uint32_t)body.len);
    buf_append(out, body.ptr, body.len);
    put32be(out, lk_dvec_crc32((const unsigned char *)body.ptr, body.len));
    buf_free(&body);
}

int lk_dvec_read_file(const char *path, int *is_dv, lk_dvec_add_fn add, void *ctx)
{
    *is_dv = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0; /* not a local file: the caller reads it as Parquet */
    unsigned char head[8];
    size_t got = fread(head, 1, sizeof(head), f);
    /* a Parquet file starts with PAR1, a deletion vector with its length */
    if (got < sizeof(head) || memcmp(head, "PAR1", 4) == 0 || !lk_dvec_is(head, got) ||
        fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return 0;
    }
    long size = ftell(f);
    unsigned char *data = size > 0 ? malloc((size_t)size) : NULL;
    int rc = 0;
    if (!data || fseek(f, 0, SEEK_SET) != 0 || fread(data, 1, (size_t)size, f) != (size_t)size)
        rc = tarn_error_set(TARN_ERROR, "cannot read deletion vector %s", path);
    else
        rc = lk_dvec_parse(data, (size_t)size, add, ctx);
    if (rc)
        tarn_error_prefix(rc, "%s", path);
    *is_dv = 1;
    free(data);
    fclose(f);
    return rc;
}
