/*
 * murmur3.c — MurmurHash3 x86 32-bit (Austin Appleby's public-domain
 * hash), the hash DuckLake's bucket(N) partition transform and Iceberg's
 * bucket transform use, with seed 0.
 *
 * The algorithm, over the input bytes:
 *   h = seed
 *   for each whole 4-byte block, read as a little-endian uint32 k:
 *       k *= 0xcc9e2d51; k = rotl32(k, 15); k *= 0x1b873593;
 *       h ^= k; h = rotl32(h, 13); h = h * 5 + 0xe6546b64;
 *   the 1-3 bytes left over (byte i at bit 8*i) form one more k, mixed
 *   into h the same way but without the rotate / multiply-add of h;
 *   h ^= length in bytes;
 *   finalization ("fmix32"), which makes every input bit affect every
 *   output bit: h ^= h >> 16; h *= 0x85ebca6b; h ^= h >> 13;
 *   h *= 0xc2b2ae35; h ^= h >> 16.
 * All arithmetic is modulo 2^32; the result is the uint32 read as int32.
 *
 * A value is hashed by a byte form fixed per type (DuckLake's rule, the
 * same as Iceberg's where Iceberg has the type): integers, booleans, dates,
 * times, timestamps and short DECIMALs as a 64-bit little-endian integer;
 * floating point as the bits of the double; strings and blobs as their
 * bytes. The bucket of a hash is (hash & INT32_MAX) % N, never negative.
 *
 * Catalog rows: none.
 */
#include "lake/murmur3.h"

#include <string.h>

static uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

static uint32_t mix_block(uint32_t k)
{
    k *= 0xcc9e2d51u;
    k = rotl32(k, 15);
    return k * 0x1b873593u;
}

static uint32_t fmix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

int32_t lk_murmur3_32(const void *data, size_t len, uint32_t seed)
{
    const unsigned char *p = data;
    uint32_t h = seed;
    size_t nblocks = len / 4;
    for (size_t i = 0; i < nblocks; i++, p += 4) {
        uint32_t k =
            (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        h ^= mix_block(k);
        h = rotl32(h, 13);
        h = h * 5 + 0xe6546b64u;
    }
    uint32_t k = 0;
    switch (len & 3) {
    case 3:
        k ^= (uint32_t)p[2] << 16;
        /* fall through */
    case 2:
        k ^= (uint32_t)p[1] << 8;
        /* fall through */
    case 1:
        k ^= (uint32_t)p[0];
        h ^= mix_block(k);
        break;
    default:
        break;
    }
    h ^= (uint32_t)len;
    uint32_t r = fmix32(h);
    int32_t out;
    memcpy(&out, &r, sizeof(out));
    return out;
}

int32_t lk_murmur3_long(int64_t v)
{
    uint64_t u = (uint64_t)v;
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(u >> (8 * i));
    return lk_murmur3_32(b, sizeof(b), 0);
}

int32_t lk_murmur3_double(double v)
{
    if (v == 0.0)
        v = 0.0; /* -0.0 hashes as 0.0 */
    int64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return lk_murmur3_long(bits);
}

int32_t lk_murmur3_bucket(int32_t hash, int32_t n)
{
    return (hash & INT32_MAX) % n;
}
